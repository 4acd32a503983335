"""Shared fixtures and helpers for the jitensor test suite.

NumPy is the oracle everywhere; torch is a second oracle where it is installed (tests that need
it call ``pytest.importorskip("torch")``, so they skip cleanly without it)."""
import ast
import dataclasses
import dis
import functools
import glob
import inspect
import os
import pickle
import subprocess
import sys
import types
import warnings
from pathlib import Path

# Without a GPU the CUDA tests run in numba's simulator (set before numba is imported); on a
# machine with one, the same tests run on the GPU.
if not glob.glob("/dev/nvidia[0-9]*"):
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# Parallel kernels' OpenMP threads wait passively (set before the first kernel loads the OpenMP
# runtime; subprocesses and notebooks inherit it). Under pytest-xdist, two workers with a thread
# per core each share the cores, and a spinning thread takes the core of the thread it waits
# for: two pytest runs of test_nn_init.py and test_reduction.py at once took 40-66 s spinning
# (one parametrization of trunc_normal_ 46 s, 0.3 s alone), 16-19 s passive.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Numba's disk cache under pytest-xdist: the workers share each kernel's cache directory
# (__pycache__ next to its source). Numba writes each file atomically, but a save is three steps
# -- read the index, write the index, write the data file -- and two processes saving two new
# signatures of one kernel at once pick the same data file number: the index can then name, for
# one signature, the machine code of the other, which a later process would load and run. A
# save takes an exclusive lock on the directory and a load a shared one, so each sees whole
# saves only. (numba-cuda keeps its own copy of the class, used on a GPU; patched once loaded.)
def _lock_cache_files(cls):
    import fcntl
    if getattr(cls, "_jitensor_tests_locked", False):
        return

    def locked(method, mode):
        @functools.wraps(method)
        def under_lock(self, *args, **kwargs):
            try:
                fd = os.open(self._cache_path, os.O_RDONLY)
            except OSError:  # no directory yet: nothing to race over
                return method(self, *args, **kwargs)
            try:
                fcntl.flock(fd, mode)
                return method(self, *args, **kwargs)
            finally:
                os.close(fd)  # and with it the lock
        return under_lock

    cls.save = locked(cls.save, fcntl.LOCK_EX)
    cls.load = locked(cls.load, fcntl.LOCK_SH)
    cls._jitensor_tests_locked = True


import numba.core.caching  # noqa: E402 (after the simulator switch above)

_lock_cache_files(numba.core.caching.IndexDataCacheFile)  # before jitensor decorates kernels

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import jitensor as jt  # noqa: E402 (its kernels must see the locked cache files)
from jitensor import _format  # noqa: E402

# Hypothesis profiles. The first call of a kernel signature compiles it (or loads it from the
# on-disk cache), which can take far longer than hypothesis's default deadline: no deadline in
# any. `dev` (the default) draws few examples for a fast edit-test loop; `ci` (when CI=true, as
# CI sets it) draws the suite's usual count; `thorough` is for a long hunt. HYPOTHESIS_PROFILE
# picks one by name. Tests with their own max_examples keep it under `ci` and `thorough`, and
# draw at most a quarter of it (and no fewer than the profile's count) under `dev`.
_PROFILE_EXAMPLES = {"dev": 10, "ci": 40, "thorough": 400}
for _name, _examples in _PROFILE_EXAMPLES.items():
    settings.register_profile(_name, deadline=None, max_examples=_examples,
                              suppress_health_check=[HealthCheck.too_slow])
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if IN_CI else "dev")
settings.load_profile(HYPOTHESIS_PROFILE)

REPO = Path(__file__).resolve().parents[1]

# Every dtype kernels compute in, and the two that compute in float32 on the CPU.
CPU_DTYPES = [jt.bool, jt.uint8, jt.int8, jt.int16, jt.int32, jt.int64, jt.float32, jt.float64]
ALL_DTYPES = CPU_DTYPES + [jt.float16, jt.bfloat16]
INT_DTYPES = [jt.uint8, jt.int8, jt.int16, jt.int32, jt.int64]
FLOAT_DTYPES = [jt.float32, jt.float64]


# (dst, src) dtype pairs for copies into strided views: every same-dtype copy and a conversion of
# each kind. Strided copies compile one 4-D kernel per pair and layout, so the tests share this
# short list rather than the full 8 x 8 product (which the 1-d conversion tests cover).
COPY_PAIRS = [(d, d) for d in CPU_DTYPES] + [
    (jt.int32, jt.float64), (jt.float32, jt.int64), (jt.float64, jt.bool), (jt.bool, jt.float32),
    (jt.int8, jt.uint8), (jt.uint8, jt.int16), (jt.int64, jt.float32), (jt.float32, jt.float64),
]


def dtype_id(d):
    return d.name


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Every test starts with the documented defaults and cannot leak global state: the default
    dtype, the debug-empty switch, the print options and (when loaded) torch's default dtype."""
    saved_default = jt.get_default_dtype()
    saved_debug = jt.get_debug_empty()
    saved_print = dataclasses.replace(_format.PRINT_OPTS)
    jt.set_default_dtype(jt.float32)
    jt.set_debug_empty(False)
    # (`loaded`, not `torch`: a test using this fixture does not need torch; see the markers)
    loaded = sys.modules.get("torch")
    torch_default = loaded.get_default_dtype() if loaded is not None else None
    yield
    jt.set_default_dtype(saved_default)
    jt.set_debug_empty(saved_debug)
    for field in dataclasses.fields(saved_print):
        setattr(_format.PRINT_OPTS, field.name, getattr(saved_print, field.name))
    loaded = sys.modules.get("torch")
    if loaded is not None:
        loaded.set_default_dtype(torch_default if torch_default is not None else loaded.float32)
        loaded.set_printoptions(profile="default")


def to_torch_dtype(d):
    """The torch dtype of the same name as jt dtype `d`."""
    import torch
    return getattr(torch, d.name)


def assert_tensor(t, expected, dtype=None):
    """`t` is a CPU jt.Tensor with `expected`'s shape and values (NaN equal to NaN) and dtype
    `dtype` (default: the jt dtype of expected's NumPy dtype)."""
    expected = np.asarray(expected)
    assert isinstance(t, jt.Tensor)
    if dtype is None:
        dtype = jt.dtypes.to_dtype(expected.dtype)
    assert t.dtype is dtype, (t.dtype, dtype)
    assert isinstance(t.shape, jt.Size)
    assert tuple(t.shape) == expected.shape, (t.shape, expected.shape)
    got = t.numpy() if not t.requires_grad else t.detach().numpy()
    assert got.dtype == dtype.np
    np.testing.assert_array_equal(got, expected.astype(dtype.np, copy=False), strict=False)


def run_python(code, extra_env=None, timeout=120):
    """Run `code` in a fresh interpreter that imports jitensor from this checkout; return its
    stdout stripped, failing the test with stderr on a non-zero exit."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                     else "")
    env.pop("JITENSOR_DEBUG_EMPTY", None)
    if extra_env:
        env.update(extra_env)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=str(REPO), check=False)
    assert proc.returncode == 0, \
        f"subprocess failed:\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout.strip()


def leaf(data, dtype=jt.float64):
    """A leaf tensor that requires grad, from data read as float64."""
    return jt.tensor(np.asarray(data, dtype=np.float64), dtype=dtype, requires_grad=True)


def assert_grads_match_torch(torch, rng, out, theirs_out, mine, theirs, rtol, atol):
    """Backpropagate one random upstream gradient through jitensor's `out` and torch's
    `theirs_out`, then compare the gradients of the inputs `mine` and `theirs`."""
    g = rng.standard_normal(tuple(theirs_out.shape))
    out.backward(jt.tensor(g))
    theirs_out.backward(torch.tensor(g))
    for a, b in zip(mine, theirs, strict=False):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)


def grad_checked(t):
    """t.grad as NumPy, after checking it exists with t's shape and dtype."""
    assert t.grad is not None
    assert tuple(t.grad.shape) == tuple(t.shape) and t.grad.dtype is t.dtype
    return t.grad.numpy()


def at_thread_counts(fn):
    """[fn() with one Numba thread, fn() with all of them] (one result when there is one)."""
    import numba
    threads = numba.get_num_threads()
    results = []
    try:
        for n in sorted({1, threads}):
            numba.set_num_threads(n)
            results.append(fn())
    finally:
        numba.set_num_threads(threads)
    return results


def linalg_errors_match_torch(call):
    """`call(torch.linalg, torch)` raises, and `call(jt.linalg, jt)` raises the same type with
    the same message."""
    import torch
    with pytest.raises(Exception) as theirs:
        call(torch.linalg, torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(jt.linalg, jt)
    assert str(ours.value) == str(theirs.value)


# -- markers, xdist and the kernel cache -------------------------------------------------------
# The markers (registered in pyproject.toml, run with --strict-markers):
#   cuda       CUDA tests (numba's simulator, or a GPU); skipped without numba-cuda. Tests that
#              carry the suite's `skipif(not jt.cuda.is_available(), reason="no CUDA ...")`
#              get it here, as do tests marked `cuda` get that skip.
#   torch      needs torch as an oracle: given here to each test that reaches torch (a
#              module-level importorskip("torch"), or `torch` / importorskip("torch") in the
#              test, its fixtures or the helpers it calls in its module and this file).
#   subprocess starts Python processes (run_python, subprocess): given here likewise.
#   notebooks  the notebooks nbmake collects from notebooks/ (given here).
#   slow       left out by `pytest -m "not slow"`: notebooks, subprocess and CUDA tests (given
#              here: the simulator runs each GPU thread as Python), and what modules mark.
_TESTS = Path(__file__).resolve().parent


# -- CUDA kernel signatures (tests/test_cuda_ptx.py) -------------------------------------------
# test_cuda_ptx.py compiles to PTX every kernel signature the CUDA tests launch. What this process
# ran is tracked here, so that it can reuse the signatures when every CUDA test of the suite ran
# in it before (it is moved last; under `-n` all CUDA tests share one worker, see the end of this
# file), and otherwise runs the CUDA tests itself in a child pytest that hands them back.
PTX_TEST = "tests/test_cuda_ptx.py"
SIGNATURES_ENV = "JITENSOR_TESTS_SIGNATURES"  # a child pytest writes its signatures there
_seen = {"files": set(), "cuda_deselected": False, "cuda_ran": set()}


def _is_ours(fn):
    """Whether `fn` is a plain function written in tests/ (whose code is worth reading)."""
    code = getattr(fn, "__code__", None)
    return code is not None and Path(code.co_filename).parent == _TESTS


def _code_names(code, names):
    """Add to `names` the names the code refers to (globals, attributes, imports), and
    "importorskip:MODULE" for each importorskip("MODULE") call, nested code included."""
    names.update(code.co_names)
    previous = None
    for op in dis.get_instructions(code):
        if previous == "importorskip" and op.opname == "LOAD_CONST" and isinstance(op.argval, str):
            names.add(f"importorskip:{op.argval}")
        previous = op.argval
        if isinstance(op.argval, types.CodeType):
            _code_names(op.argval, names)


def _source(fn):
    """The test's own function behind pytest's and hypothesis's wrappers."""
    fn = inspect.unwrap(fn)
    return getattr(getattr(fn, "hypothesis", None), "inner_test", None) or fn


@functools.cache
def _refs(fn):
    """The names (see _code_names) the code of `fn` refers to, with those of the functions of
    tests/ it refers to by a global name (helpers, case tables' functions), transitively."""
    names, seen, todo = set(), set(), [fn]
    while todo:
        f = _source(todo.pop())
        if f in seen or not _is_ours(f):
            continue
        seen.add(f)
        own = set()
        _code_names(f.__code__, own)
        names |= own
        for name in own:
            value = f.__globals__.get(name)
            if isinstance(value, types.FunctionType):
                todo.append(value)
            elif isinstance(value, type) and value.__module__ == f.__module__:
                todo.extend(v for v in vars(value).values() if isinstance(v, types.FunctionType))
    return frozenset(names)


@functools.cache
def _module_imports_torch(path):
    """Whether the module at `path` calls importorskip("torch") at its top level."""
    for stmt in ast.parse(Path(path).read_text()).body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(stmt):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "importorskip"
                    and node.args and getattr(node.args[0], "value", None) == "torch"):
                return True
    return False


def _item_refs(item):
    """The names (see _refs) of a test function item, its fixtures' functions and the
    functions among its parameters included."""
    fns = [item.function]
    callspec = getattr(item, "callspec", None)
    for value in (callspec.params.values() if callspec is not None else ()):  # case tables
        fns.extend(v for v in (value if isinstance(value, (tuple, list)) else (value,))
                   if isinstance(v, types.FunctionType))
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        fns.extend(d.func for d in defs)
    names = set()
    for fn in fns:
        names |= _refs(_source(fn))
    return names


def _needs_torch(item, names):
    return ("torch" in names or "importorskip:torch" in names
            or "torch" in getattr(item, "fixturenames", ())
            or _module_imports_torch(item.module.__file__))


def _scale_examples(test):
    """Under the `dev` profile, a hypothesis test with its own max_examples draws a quarter of
    them (no fewer than the profile's count); once per test function."""
    own = getattr(test, "_hypothesis_internal_use_settings", None)
    if HYPOTHESIS_PROFILE != "dev" or own is None or getattr(test, "_dev_scaled", False):
        return
    floor = settings.get_profile("dev").max_examples
    if own.max_examples > floor:
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=max(floor, own.max_examples // 4))
    test._dev_scaled = True


_CUDA_SKIP = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")
_SUBPROCESS_NAMES = {"run_python", "subprocess"}


@pytest.hookimpl(tryfirst=True)  # before -m deselects and xdist groups by these marks
def pytest_collection_modifyitems(config, items):
    _seen["files"].update(Path(str(item.path)) for item in items)
    ptx = [item for item in items if item.nodeid.startswith(PTX_TEST)]
    items[:] = [item for item in items if not item.nodeid.startswith(PTX_TEST)] + ptx
    for item in items:
        _mark(item)
    path = getattr(config, "workerinput", {}).get(_CUDA_IDS)
    if path:  # an xdist worker: tell the controller's scheduler which tests are CUDA tests
        with open(f"{path}.{os.getpid()}", "w") as f:
            f.write("\n".join(i.nodeid for i in items if i.get_closest_marker("cuda")))
        os.replace(f"{path}.{os.getpid()}", path)


def _mark(item):
    if type(item).__name__ == "NotebookItem":  # nbmake: a fresh kernel per notebook
        for mark in ("notebooks", "subprocess", "slow"):
            item.add_marker(mark)
        return
    if not hasattr(item, "function"):
        return
    _scale_examples(getattr(item.obj, "__func__", item.obj))
    names = _item_refs(item)
    if _needs_torch(item, names):
        item.add_marker("torch")
    if names & _SUBPROCESS_NAMES:
        item.add_marker("subprocess")
        item.add_marker("slow")
    cuda_skip = any(m.kwargs.get("reason", "").startswith("no CUDA")
                    for m in item.iter_markers("skipif"))
    if cuda_skip and item.get_closest_marker("cuda") is None:
        item.add_marker("cuda")
    elif item.get_closest_marker("cuda") is not None and not cuda_skip:
        item.add_marker(_CUDA_SKIP)
    if item.get_closest_marker("cuda") is not None:
        item.add_marker("slow")  # the simulator runs each GPU thread as Python


def pytest_runtest_setup(item):
    cuda_caching = sys.modules.get("numba.cuda.core.caching")  # once the CUDA backend loaded
    if cuda_caching is not None:
        _lock_cache_files(cuda_caching.IndexDataCacheFile)
    simulator = sys.modules.get("numba.cuda.simulator.kernel")  # once the simulator loaded
    if simulator is not None and simulator.BlockManager.run is not _run_block:
        simulator.BlockManager.run = _run_block


# -- numba-cuda's simulator: waiting for a block's threads ----------------------------------------
# The simulator runs each CUDA thread of a block as a Python thread, and its BlockManager.run
# polled them in a loop that never released the GIL: each thread got to run only when the
# interpreter's switch interval (5 ms) took the GIL from the poller, so a block of n threads took
# at least n * 5 ms. 119 of test_cuda.py's 129 s went there. This is the same loop, with the same
# syncthreads and exception handling, that waits on a running thread (releasing the GIL) instead
# of spinning.
def _run_block(self, grid_point, *args):
    simulator = sys.modules["numba.cuda.simulator.kernel"]

    def target():
        self._f(*args)

    threads = [simulator.BlockThread(target, self, grid_point, point, self._debug)
               for point in np.ndindex(*self._block_dim)]
    for t in threads:
        t.start()
    live, blocked = set(threads), set()
    while live:
        for t in live:
            if t.syncthreads_blocked:
                blocked.add(t)
            elif t.exception:  # abort the others, which may wait in syncthreads, and raise
                for other in threads:
                    other.abort = True
                    other.syncthreads_blocked = False
                    other.syncthreads_event.set()
                raise t.exception[0].with_traceback(t.exception[1])
        if live == blocked:  # every live thread waits at the barrier: release them
            for t in blocked:
                t.syncthreads_blocked = False
                t.syncthreads_event.set()
            blocked = set()
        else:
            next(iter(live - blocked)).join(0.0005)
        live = {t for t in live if t.is_alive()}
    for t in threads:  # an exception set just before its thread ended
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


def _launched():
    driver = sys.modules.get("jitensor.kernels.cuda.driver")
    return driver.SIGNATURES if driver is not None else set()


def pytest_deselected(items):
    if any(item.get_closest_marker("cuda") is not None for item in items):
        _seen["cuda_deselected"] = True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = len(_launched())
    try:
        return (yield)
    finally:
        if item.get_closest_marker("cuda") is not None:
            _seen["cuda_ran"].add(item.nodeid)
        elif len(_launched()) > before:
            # test_cuda_ptx.py's child pytest runs only `-m cuda`: it would miss these
            warnings.warn(pytest.PytestWarning(
                f"{item.nodeid} launched CUDA kernels but is not marked cuda"), stacklevel=1)


def every_cuda_test_ran_here(session):
    """Whether this process collected every test module, deselected no CUDA test and ran every
    CUDA test it collected (test_cuda_ptx.py's own excepted): then the signatures launched
    here are all the CUDA tests launch."""
    if _seen["cuda_deselected"] or not set(_TESTS.glob("test_*.py")) <= _seen["files"]:
        return False
    wanted = {item.nodeid for item in session.items
              if item.get_closest_marker("cuda") is not None and PTX_TEST not in item.nodeid}
    return wanted <= _seen["cuda_ran"]


def pytest_sessionfinish(session):
    path = os.environ.get(SIGNATURES_ENV)
    if path:  # a child pytest of test_cuda_ptx.py: hand back what its CUDA tests launched
        with open(path, "wb") as f:
            pickle.dump(sorted(_launched(), key=str), f)


# -- pytest-xdist: whole modules per worker, and the CUDA tests as one more --------------------
# `-n` runs with pyproject's `--dist loadfile`: a worker takes a whole module at a time, so the
# kernels a module compiles are compiled by one worker, once. Here the CUDA tests (marker
# `cuda`, from any module) are one more unit, so that test_cuda_ptx.py, last in it, can reuse
# the kernel signatures they launched. (xdist's own `loadgroup` would do this with xdist_group
# marks, but it stopped grouping under pytest 9.2: pytest-xdist#1386.) The controller does not
# collect: each worker writes the CUDA tests' node ids to a file the controller names.
_CUDA_IDS = "jitensor_cuda_ids"


def _cuda_ids_file():
    """The file the workers write for this controller process."""
    import tempfile
    return os.path.join(tempfile.gettempdir(), f"jitensor-tests-cuda-ids-{os.getpid()}")


def pytest_configure_node(node):
    if node.config.getvalue("dist") == "loadfile":
        node.workerinput[_CUDA_IDS] = _cuda_ids_file()


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ModulesAndCuda(LoadFileScheduling):
        cuda_ids = None

        def _split_scope(self, nodeid):
            if self.cuda_ids is None:  # every worker has collected by now
                try:
                    with open(_cuda_ids_file()) as f:
                        self.cuda_ids = set(f.read().splitlines())
                    os.unlink(_cuda_ids_file())
                except OSError:  # then whole modules only; test_cuda_ptx.py runs its own
                    self.cuda_ids = set()
            return "cuda" if nodeid in self.cuda_ids else super()._split_scope(nodeid)

    return ModulesAndCuda(config, log)

