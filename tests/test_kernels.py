"""The CPU backend: stride coalescing into 4-D views, the fill/copy launchers on every layout, the
parallel threshold, `empty` never running a kernel (instrumented), the debug-empty poison, the
on-disk kernel cache across processes, and a light `import jitensor`."""
import json
import operator
import os

import numba
import numpy as np
import pytest
from conftest import CPU_DTYPES, assert_tensor, dtype_id, run_python
from hypothesis import given
from hypothesis import strategies as st
from numba import carray, cfunc, njit
from numpy.lib.stride_tricks import as_strided

import jitensor as jt
import jitensor.kernels.cpu as cpu
from jitensor.kernels.cpu import kernels, strided
from jitensor.kernels.cpu.vector import as_pointer

P = kernels.PARALLEL_MIN
M = kernels.MOVE_PARALLEL_MIN  # flat fills and copies go parallel from here


# -- strided.coalesce / as_4d ----------------------------------------------------------------------
@pytest.mark.parametrize("shape, strides, expected", [
    ((2, 3, 4), [(48, 16, 4)], ([24], [[4]])),                    # contiguous: one dim
    ((1, 3, 1), [(12, 4, 4)], ([3], [[4]])),                      # size-1 dims dropped
    ((1, 1), [(8, 8)], ([1], [[0]])),                             # nothing left: one element
    ((), [()], ([1], [[0]])),                                     # 0-d
    ((4, 3), [(48, 16)], ([12], [[16]])),                         # a[:, ::2] of (4, 6) f64: uniform
    ((4, 3), [(40, 16)], ([4, 3], [[40, 16]])),                   # a[:, ::2] of (4, 5) f64: a gap
    ((4, 3), [(4, 16)], ([4, 3], [[4, 16]])),                     # transposed
    ((2, 3), [(12, 4), (0, 4)], ([2, 3], [[12, 4], [0, 4]])),     # broadcast source blocks merging
    ((2, 3), [(12, 4), (0, 0)], ([6], [[4], [0]])),               # a broadcast scalar merges
    ((2, 3, 4), [(96, 32, 4), (48, 16, 4)], ([6, 4], [[32, 4], [16, 4]])),  # both allow
    ((0, 3), [(12, 4)], ([0], [[4]])),                            # empty
])
def test_coalesce_examples(shape, strides, expected):
    got_shape, got_strides = strided.coalesce(shape, *strides)
    assert list(got_shape) == expected[0]
    assert [list(s) for s in got_strides] == expected[1]


@st.composite
def strided_arrays(draw, max_ndim=6):
    ndim = draw(st.integers(0, max_ndim))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    base = np.arange(int(np.prod(shape)),
                     dtype=draw(st.sampled_from([np.int8, np.int32, np.float64])))
    base = base.reshape(shape)
    slices = tuple(slice(draw(st.integers(0, 1)), None, draw(st.integers(1, 3))) for _ in shape)
    view = base[slices] if ndim else base[...]  # base[()] would be a NumPy scalar
    return view.transpose(draw(st.permutations(range(ndim))))


def _same_elements(view, shape, strides):
    rebuilt = as_strided(view, shape, strides)
    np.testing.assert_array_equal(rebuilt.ravel(), view.ravel())


@given(strided_arrays())
def test_coalesce_preserves_c_order(view):
    shape, (strides,) = strided.coalesce(view.shape, view.strides)
    assert len(shape) == len(strides) >= 1
    assert int(np.prod(shape)) == view.size
    assert shape == [1] or 1 not in shape  # size-1 dims are gone
    assert len(shape) <= max(view.ndim, 1)
    _same_elements(view, shape, strides)
    # nothing left to merge: no adjacent pair steps as one block
    for i in range(len(shape) - 1):
        assert view.size == 0 or strides[i] != shape[i + 1] * strides[i + 1]


@given(strided_arrays(), st.data())
def test_coalesce_two_operands(view, data):
    other = np.broadcast_to(np.zeros((), np.float32), view.shape) if data.draw(st.booleans()) \
        else np.zeros(view.shape, np.int16)
    shape, (s1, s2) = strided.coalesce(view.shape, view.strides, other.strides)
    assert int(np.prod(shape)) == view.size
    _same_elements(view, shape, s1)
    _same_elements(other, shape, s2)


@given(strided_arrays(), st.booleans())
def test_as_4d_views_cover_the_array_in_order(view, with_second):
    arrays = (view, np.ascontiguousarray(view) * 2) if with_second else (view,)
    slabs = strided.as_4d(*arrays)
    assert len(slabs) >= 1 or view.size == 0  # nothing to visit in an empty array
    for slab in slabs:
        assert len(slab) == len(arrays)
        assert all(v.ndim == 4 for v in slab)
        assert len({v.shape for v in slab}) == 1
    for k, a in enumerate(arrays):
        flat = np.concatenate([slab[k].ravel() for slab in slabs]) if view.size else np.zeros(0)
        np.testing.assert_array_equal(flat, a.ravel())
        if view.size:
            assert all(np.shares_memory(slab[k], a) for slab in slabs)


def test_as_4d_more_than_four_unmergeable_dims():
    base = np.arange(3 ** 6, dtype=np.int32).reshape((3,) * 6)
    view = base[(slice(None, None, 2),) * 6]  # six dims of 2, none mergeable
    shape, _ = strided.coalesce(view.shape, view.strides)
    assert len(shape) == 6
    slabs = strided.as_4d(view)
    assert len(slabs) == 4  # one slab per index of the two leading dims
    assert all(s[0].shape == (2, 2, 2, 2) for s in slabs)
    np.testing.assert_array_equal(np.concatenate([s[0].ravel() for s in slabs]), view.ravel())
    # and the launchers write every element of such a view, nothing else
    expected = base.copy()
    expected[(slice(None, None, 2),) * 6] = -1
    jt.from_numpy(view).fill_(-1)
    np.testing.assert_array_equal(base, expected)
    src = np.arange(64, dtype=np.float64).reshape((2,) * 6)
    jt.from_numpy(view).copy_(jt.tensor(src))
    expected[(slice(None, None, 2),) * 6] = src.astype(np.int32)
    np.testing.assert_array_equal(base, expected)


def test_as_4d_pads_to_four_dims():
    a = np.zeros((3, 5), np.float32)[:, ::2]
    (view,), = strided.as_4d(a)
    assert view.shape == (1, 1, 3, 3) and view.ndim == 4


# -- launchers on every layout ---------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_fill_launcher_on_layouts(d):
    value = {0: True, 1: 9, 2: 2.5}[d.category]
    for make in (lambda b: b, lambda b: b[:, ::2], lambda b: b.T, lambda b: b[1:, 1:3],
                 lambda b: b[:0]):
        base = np.zeros((4, 6), d.np)
        view = make(base)
        cpu.fill(view, value)
        expected = np.zeros((4, 6), d.np)
        make(expected)[...] = value
        np.testing.assert_array_equal(base, expected)


# 5 layouts each compile
@pytest.mark.parametrize("d", [jt.bool, jt.int8, jt.float64], ids=dtype_id)
def test_copy_launcher_on_layouts(d):
    src_base = (np.arange(24) % 7).astype(d.np).reshape(4, 6)
    for make in (lambda b: b, lambda b: b[:, ::2], lambda b: b.T, lambda b: b[1:, 1:3]):
        out_base = np.zeros((4, 6), d.np)
        out = make(out_base)
        src = make(src_base)
        cpu.copy(out, np.ascontiguousarray(src))
        np.testing.assert_array_equal(out, src)
        out_base[...] = 0
        cpu.copy(make(out_base), np.ascontiguousarray(src).T.copy().T)  # a strided source too
        np.testing.assert_array_equal(make(out_base), src)


def test_copy_launcher_handles_overlap():
    a = np.arange(9, dtype=np.float64).reshape(3, 3)
    cpu.copy(a, a.T)
    np.testing.assert_array_equal(a, np.arange(9.0).reshape(3, 3).T)
    b = np.arange(8, dtype=np.int32)
    cpu.copy(b[1:], b[:-1])
    np.testing.assert_array_equal(b, [0, 0, 1, 2, 3, 4, 5, 6])


@pytest.mark.parametrize("n", [P - 1, P, P + 1, 3 * P + 5, M - 1, M], ids=lambda n: f"P{n - P:+d}")
def test_parallel_threshold_fill_and_copy(n):
    for d in (jt.float32, jt.int8, jt.bool):
        z = jt.zeros(n, dtype=d)
        assert_tensor(z, np.zeros(n, d.np), d)
        o = jt.ones(n, dtype=d)
        assert_tensor(o, np.ones(n, d.np), d)
    t = jt.arange(n)
    assert_tensor(t, np.arange(n), jt.int64)
    assert_tensor(t.to(jt.float64), np.arange(n, dtype=np.float64), jt.float64)
    base = np.zeros((2, 2 * n), np.float32)
    jt.from_numpy(base[:, ::2]).fill_(3.0)  # the parallel branch of fill_4d
    assert np.all(base[:, ::2] == 3.0) and np.all(base[:, 1::2] == 0.0)
    jt.from_numpy(base[:, 1::2]).copy_(jt.from_numpy(base[:, ::2]))  # and of copy_4d
    assert np.all(base == 3.0)


def test_4d_kernels_build_once_per_dtype_mix():
    """C, F, strided, broadcast and read-only sources of one dtype pair share copy_4d's build
    for a C-contiguous out (strided.AnyLayout): Numba's dispatcher compiled one for each."""
    base = np.arange(120, dtype=np.int16).reshape(2, 3, 4, 5)
    sources = [base.transpose(3, 2, 1, 0), np.asfortranarray(base), base[:, :, ::2],
               np.broadcast_to(base[:, :1], base.shape), base.transpose(1, 0, 2, 3)]
    sources[-1].flags.writeable = False
    before = len(kernels.copy_4d.plain.signatures)  # (small: copy_4d's plain twin runs them)
    for src in sources:
        out = np.empty(src.shape, np.float32)
        cpu.copy(out, src)
        np.testing.assert_array_equal(out, src.astype(np.float32))
    assert len(kernels.copy_4d.plain.signatures) - before <= 1


def test_twins_run_small_work_plain_and_large_work_parallel(monkeypatch):
    """A Twins kernel runs work below PARALLEL_MIN through its plain twin (compiled without
    the thread pool: not `parallel`, no thread test) and the rest through the parallel
    kernel, so that most signatures never compile the parallel build."""
    for twins, name in ((kernels.fill_4d, "fill_4d"), (kernels.copy_4d, "copy_4d")):
        twin = twins.plain
        assert twin.py_func.__name__ == name + "_plain"
        assert not twin.targetoptions.get("parallel")
        assert twin.py_func.__globals__["serial"] is not kernels.serial
        monkeypatch.setattr(twins, "_plain", _Counter(twin))
        monkeypatch.setattr(twins, "parallel", _Counter(twins.parallel))
    n = kernels.PARALLEL_MIN
    for rows in (n // 64 - 1, n // 64 + 1):  # rows of 64 strided elements
        base = np.zeros((rows, 128), np.int16)
        cpu.fill(base[:, ::2], 7)
        assert (base[:, ::2] == 7).all() and not base[:, 1::2].any()
        out = np.empty((64, rows), np.int32)  # (a converting copy: the same dtype's is NumPy's)
        cpu.copy(out, base[:, ::2].T)
        np.testing.assert_array_equal(out, base[:, ::2].T)
    for twins in (kernels.fill_4d, kernels.copy_4d):
        assert twins.plain.calls == 1 and twins.parallel.calls == 1


FLAG = None  # the global the Specialised functions below branch on
_specialised = kernels.Specialised(globals(), ("FLAG",), lambda flag: "_on" if flag else "_off")


@_specialised()
def _plus(x):
    if FLAG:
        return x + 1
    return x + "one"  # does not type for an int: compiled only where FLAG is false


@_specialised(njit)
def _specialised_kernel(x):
    return _plus(x)


def test_specialised_copies_compile_only_the_branches_of_their_constants():
    """kernels.Specialised: each build's copies see its constants as globals, so Numba prunes
    the branches they rule out before typing (here one that cannot type); the copies call each
    other's copies and carry the build's suffix (their cache files' name)."""
    on = _specialised.build(True)
    assert on["_specialised_kernel"](41) == 42
    assert on["_specialised_kernel"].py_func.__name__ == "_specialised_kernel_on"
    assert _specialised.build(True) is on  # made once
    with pytest.raises(numba.core.errors.TypingError):
        _specialised.build(False)["_specialised_kernel"](41)


def _tasks_worker(context, first, step):
    """Writes each task's `first` at its index of the array at context[0] (context[1] long)."""
    c = carray(as_pointer(context, np.int64(0)), 2)
    out = carray(as_pointer(c[0], np.int64(0)), c[1])
    for task in range(first, out.size, step):
        out[task] = first


def test_run_tasks_runs_every_task_once_on_any_number_of_threads():
    """kernels.run_tasks: a worker's tasks first, first + step, ... over `workers` threads (one:
    on the caller's, through the serial driver), its arguments packed by `context`."""
    worker = cfunc(kernels.WORKER)(_tasks_worker)
    for workers in (1, 2, 3):
        out = np.full(10, -1, np.int64)
        kernels.run_tasks(worker.address, kernels.context(out), workers)
        np.testing.assert_array_equal(out, np.arange(10) % workers)
    a = np.zeros((2, 3), np.float32)
    packed = kernels.context(a, 7, True)
    assert packed.dtype == np.int64
    assert packed.tolist() == [a.__array_interface__["data"][0], 2, 3, 7, 1]


def test_kernels_are_cached_parallel_dispatchers():
    for name in ("fill_flat_parallel", "fill_4d", "copy_flat_parallel", "copy_4d", "arange",
                 "linspace", "eye", "uniform", "normal", "randint"):
        k = getattr(kernels, name)
        parallel = k.targetoptions.get("parallel")  # prange_only(): a dict, emptied by Numba
        assert parallel is not None and parallel is not False, name
        assert k._cache.__class__.__name__ != "NullCache", f"{name} has no on-disk cache"


# -- empty never fills: instrumentation ------------------------------------------------------------
class _Counter:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


KERNEL_NAMES = [n for n in dir(kernels) if hasattr(getattr(kernels, n), "py_func")]


@pytest.fixture
def counted(monkeypatch):
    """Counting wrappers around every @njit kernel and the CPU `fill` and `copy` launchers (the
    module attributes that `backend(device).fill` and the fast paths reach)."""
    counters = {}
    for name in KERNEL_NAMES:
        counters[name] = _Counter(getattr(kernels, name))
        monkeypatch.setattr(kernels, name, counters[name])
    for name in ("fill", "copy"):
        counters["launcher." + name] = _Counter(getattr(cpu, name))
        monkeypatch.setattr(cpu, name, counters["launcher." + name])

    def calls(reset=True):
        got = {k: c.calls for k, c in counters.items() if c.calls}
        if reset:
            for c in counters.values():
                c.calls = 0
        return got
    calls()
    return calls


def test_instrumentation_sees_kernels(counted):
    assert {"fill_flat", "fill_4d", "copy_flat", "copy_4d"} <= set(KERNEL_NAMES)
    jt.zeros(3)
    assert counted() == {"launcher.fill": 1, "fill_flat": 1}


def test_flat_fill_and_copy_go_parallel_from_move_parallel_min(counted):
    """Below MOVE_PARALLEL_MIN the plain kernels, compiled without a prange loop (most buffers are
    small, and a parallel kernel's every signature compiles its loop twice); from it on, the
    parallel ones. Both give the bits NumPy does (test_parallel_threshold_fill_and_copy)."""
    assert not kernels.fill_flat.fn.targetoptions.get("parallel")
    assert not kernels.copy_flat.fn.targetoptions.get("parallel")
    for n, kind in ((M - 1, ""), (M, "_parallel")):
        jt.zeros(n).to(jt.float64)
        got = counted()
        assert got.get("fill_flat" + kind) == 1 and got.get("copy_flat" + kind) == 1, got


EMPTY_CALLS = {
    "empty": lambda: jt.empty(2, 3),
    "empty-tuple": lambda: jt.empty((2, 3)),
    "empty-Size": lambda: jt.empty(jt.Size([2, 3])),
    "empty-dtype": lambda: jt.empty(2, 3, dtype=jt.int8),
    "empty-bool": lambda: jt.empty(4, dtype=jt.bool),
    "empty-0d": lambda: jt.empty(()),
    "empty-zero-size": lambda: jt.empty(0, 5),
    "empty-big": lambda: jt.empty(M + 1),
    "empty-out": lambda: jt.empty(2, 3, out=jt.empty(2, 3)),
    "empty-requires-grad": lambda: jt.empty(3, requires_grad=True),
    "empty-memory-format": lambda: jt.empty(3, memory_format=jt.contiguous_format),
    "empty_like": lambda: jt.empty_like(jt.empty(2, 3)),
    "empty_like-dtype": lambda: jt.empty_like(jt.empty(2, 3), dtype=jt.float64),
    "empty_like-view": lambda: jt.empty_like(jt.from_numpy(np.zeros((4, 6), np.float32)[:, ::2])),
    "empty_like-contiguous": lambda: jt.empty_like(jt.from_numpy(np.zeros((4, 6))).__getitem__(
        (slice(None), slice(None, None, 2))), memory_format=jt.contiguous_format),
    "new_empty": lambda: jt.empty(1, dtype=jt.int16).new_empty(2, 3),
    "new_empty-tuple": lambda: jt.empty(1).new_empty((5,)),
    "Tensor(2, 3)": lambda: jt.Tensor(2, 3),
    "Tensor()": lambda: jt.Tensor(),
}


@pytest.mark.parametrize("name", list(EMPTY_CALLS))
def test_empty_runs_no_kernel(counted, name):
    t = EMPTY_CALLS[name]()
    assert isinstance(t, jt.Tensor)
    assert counted() == {}


FILL_CALLS = {
    "zeros": lambda: jt.zeros(2, 3),
    "zeros-dtype": lambda: jt.zeros((2, 3), dtype=jt.int8),
    "zeros-big": lambda: jt.zeros(M + 1),
    "ones": lambda: jt.ones(2, 3),
    "ones-dtype": lambda: jt.ones(2, dtype=jt.bool),
    "full": lambda: jt.full((2, 3), 7.0),
    "full-int": lambda: jt.full((2, 3), 7),
    "zeros_like": lambda: jt.zeros_like(jt.empty(2, 3)),
    "ones_like": lambda: jt.ones_like(jt.empty(2, 3)),
    "full_like": lambda: jt.full_like(jt.empty(2, 3), 1.5),
    "new_zeros": lambda: jt.empty(1).new_zeros(2),
    "new_ones": lambda: jt.empty(1).new_ones(2),
    "new_full": lambda: jt.empty(1).new_full((2,), 4.0),
    "zeros-out": lambda: jt.zeros(2, out=jt.empty(2)),
}


@pytest.mark.parametrize("name", list(FILL_CALLS))
def test_fill_routines_run_the_fill_kernel_once(counted, name):
    setup = counted  # the inner jt.empty(...) runs no kernel, as proven above
    FILL_CALLS[name]()
    kernel = "fill_flat_parallel" if name.endswith("-big") else "fill_flat"
    assert setup() == {"launcher.fill": 1, kernel: 1}


def test_fill_on_a_view_uses_the_4d_kernel(counted):
    jt.from_numpy(np.zeros((4, 6), np.float32)[:, ::2]).fill_(1.0)
    got = counted()
    assert got["launcher.fill"] == 1 and got["fill_4d"] >= 1 and "fill_flat" not in got


def test_debug_empty_fills_once(counted):
    jt.set_debug_empty(True)
    jt.empty(2, 3)
    assert counted() == {"launcher.fill": 1, "fill_flat": 1}
    src = jt.from_numpy(np.zeros((2, 3), np.float32))
    jt.empty_like(src)
    assert counted() == {"launcher.fill": 1, "fill_flat": 1}
    jt.set_debug_empty(False)
    jt.empty(2, 3)
    assert counted() == {}


# -- debug-empty poison ----------------------------------------------------------------------------
def poison(d):
    if d.is_floating_point:
        return np.nan
    return True if d is jt.bool else np.iinfo(d.np).max


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_debug_empty_poisons_every_empty_routine(d):
    assert jt.get_debug_empty() is False
    jt.set_debug_empty(True)
    assert jt.get_debug_empty() is True
    src = jt.zeros(2, 3, dtype=d)
    made = [jt.empty(2, 3, dtype=d), jt.empty_like(src), src.new_empty(2, 3),
            jt.empty_like(jt.from_numpy(np.zeros((2, 6), d.np)[:, ::2]))]
    if d is jt.float32:
        made += [jt.empty(2, 3), jt.Tensor(2, 3), jt.empty((2, 3))]
    for t in made:
        assert_tensor(t, np.full((2, 3), poison(d), d.np), d)
    jt.set_debug_empty(0)
    assert jt.get_debug_empty() is False


def test_debug_empty_from_the_environment():
    code = ("import json, jitensor as jt\n"
            "out = {'on': jt.get_debug_empty()}\n"
            "for name in ('float32', 'float64', 'int8', 'uint8', 'int64', 'bool'):\n"
            "    out[name] = jt.empty(3, dtype=name).tolist()\n"
            "out['default'] = jt.empty(2).tolist()\n"
            "print(json.dumps(out))")
    got = json.loads(run_python(code, {"JITENSOR_DEBUG_EMPTY": "1"}).replace("NaN", '"nan"'))
    assert got["on"] is True
    assert got["float32"] == got["float64"] == ["nan"] * 3 and got["default"] == ["nan"] * 2
    assert got["int8"] == [127] * 3 and got["uint8"] == [255] * 3
    assert got["int64"] == [2 ** 63 - 1] * 3 and got["bool"] == [True] * 3
    off = run_python("import jitensor as jt; print(jt.get_debug_empty())",
                     {"JITENSOR_DEBUG_EMPTY": "0"})
    assert off == "False"
    assert run_python("import jitensor as jt; print(jt.get_debug_empty())") == "False"


# -- on-disk kernel cache across processes ---------------------------------------------------------
_CACHE_PROBE = """
import jitensor as jt
from jitensor.kernels.cpu import kernels
for d in (jt.float32, jt.float64, jt.int64, jt.bool, jt.uint8):
    jt.zeros(5, dtype=d)
s = kernels.fill_flat.stats
print(sum(s.cache_hits.values()), sum(s.cache_misses.values()), s.cache_path)
"""


def _probe_cache(env=None):
    hits, misses, path = run_python(_CACHE_PROBE, env).split()
    return int(hits), int(misses), path


def test_second_process_loads_fill_kernels_from_disk_cache(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    hits1, misses1, path1 = _probe_cache(env)
    assert misses1 >= 5 and hits1 == 0  # an empty cache: everything compiled and saved
    assert path1.startswith(str(tmp_path))
    assert any(tmp_path.rglob("*.nbi")) and any(tmp_path.rglob("*.nbc"))
    hits2, misses2, path2 = _probe_cache(env)
    assert misses2 == 0, "the second process recompiled instead of loading the cache"
    assert hits2 >= 5 and path2 == path1


def test_default_cache_location_is_reused():
    _probe_cache()  # warm whichever cache directory Numba picks for the package
    hits, misses, _ = _probe_cache()
    assert hits >= 5 and misses == 0


def test_a_code_edit_of_a_kernel_dependency_recompiles_the_kernels(tmp_path):
    """Numba keys a kernel on its own file only; jitensor adds the code of every module the
    kernel's file imports (kernels/kernel_cache.py), so a code edit of a helper file
    (kernels/scalar/creation.py: the fill kernels' values) makes the next process recompile,
    and an edit of a module outside the kernels' imports does not."""
    import shutil
    import subprocess
    import sys

    from conftest import REPO
    shutil.copytree(REPO / "jitensor", tmp_path / "src" / "jitensor",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "src"),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def probe():
        out = subprocess.run([sys.executable, "-c", _CACHE_PROBE], capture_output=True,
                             text=True, env=env, cwd=str(tmp_path), timeout=300)
        assert out.returncode == 0, out.stderr
        hits, misses, path = out.stdout.split()
        assert path.startswith(str(tmp_path / "cache"))
        return int(hits), int(misses)

    def append(relative):
        with open(tmp_path / "src" / "jitensor" / relative, "a") as f:
            f.write("\nEDITED = 1\n")
    probe()
    assert probe()[1] == 0
    append("kernels/scalar/creation.py")
    hits, misses = probe()
    assert hits == 0 and misses >= 5, "a stale kernel was loaded after its helper changed"
    append("_format.py")
    assert probe()[1] == 0


@pytest.mark.parametrize("module", ["numba.core.caching", "numba.cuda.core.caching"])
def test_the_locators_stamp_backend_files_with_every_backend_source(module):
    """numba's (the CPU's, stamped at import) and numba-cuda's (stamped when the CUDA backend
    loads; here by hand, as the simulator caches nothing) cache locators."""
    from jitensor.kernels import kernel_cache
    caching = pytest.importorskip(module)
    saved = list(caching.CacheImpl._locator_classes)
    try:
        kernel_cache.stamp(caching.CacheImpl)
        kernel_cache.stamp(caching.CacheImpl)  # idempotent
        # (and the read-only fallback at the end: tests/test_cache_damage.py)
        assert [c.__name__ for c in caching.CacheImpl._locator_classes][:-1] == \
            ["Stamped" + c.__name__.removeprefix("Stamped") for c in saved
             if c.__name__ != "ReadOnlyFallback"]
        for cls in caching.CacheImpl._locator_classes:
            inside = cls.from_function(kernel_cache._stamped, kernel_cache.__file__)
            if inside is not None:  # the first locator that serves the file
                break
        assert inside.get_source_stamp() == kernel_cache.sources_hash(kernel_cache.__file__)
        plain = cls.__mro__[1].from_function(_probe_cache, __file__)  # numba's own stamp
        assert cls.from_function(_probe_cache, __file__).get_source_stamp() == \
            plain.get_source_stamp()
    finally:
        caching.CacheImpl._locator_classes[:] = saved


# -- import stays light ----------------------------------------------------------------------------
def test_import_does_not_load_numba_cuda():
    assert run_python("import jitensor, sys; print('numba.cuda' in sys.modules)") == "False"


def test_import_loads_no_gpu_backend_or_torch():
    code = ("import jitensor, sys; jitensor.zeros(2, 3); jitensor.tensor([1]).tolist(); "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('numba.cuda') "
            "or m == 'jitensor.kernels.cuda'))")
    assert run_python(code) == "[]"


def test_import_leaves_the_collector_as_it_found_it_and_its_objects_frozen():
    # the import runs with the cyclic collector off and freezes what it made; a collector the
    # program had turned off stays off, and one that was on is on again
    code = "import gc; {}; import jitensor; print(gc.isenabled(), gc.get_freeze_count() > 1e5)"
    assert run_python(code.format("gc.enable()")) == "True True"
    assert run_python(code.format("gc.disable()")) == "False True"


@pytest.mark.parametrize("shape, perm", [((1024, 600), (1, 0)), ((3, 700, 300), (0, 2, 1)),
                                         ((70, 90, 100), (2, 1, 0)), ((40, 33), (1, 0))])
def test_transposed_copies_large_and_small(shape, perm):
    # above 2 MiB a transposed read runs the tiled kernel, below it the plain one
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    t = jt.from_numpy(a).permute(*perm)
    np.testing.assert_array_equal(t.contiguous().numpy(), np.ascontiguousarray(a.transpose(perm)))


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_a_child_forked_after_import_runs_parallel_kernels():
    # import warms Numba up with a serial kernel: a parallel one would start GNU OpenMP, and a
    # child forked after that (multiprocessing, data loader workers) aborts in its first one
    code = """
import os
import jitensor as jt
pid = os.fork()
if pid == 0:
    os._exit(0 if (jt.ones(1 << 17) * 2).sum().item() == 2 * (1 << 17) else 1)
print(os.waitpid(pid, 0)[1])
"""
    assert run_python(code) == "0"


def test_any_layout_serves_every_layout_mix_from_one_build():
    # strided.any_layout: the elementwise 4-D kernels take every array typed layout "A" (the
    # operands read-only), so operands in C, F and A layouts, broadcast, strided, writeable or
    # not, share one compiled build
    from jitensor.kernels.cpu import elementwise
    x = np.arange(2 * 3 * 80, dtype=np.float64).reshape(2, 3, 80)
    wide = np.arange(2 * 3 * 160, dtype=np.float64).reshape(2, 3, 160)
    mixes = [(x, x[:, :1]), (x, np.asfortranarray(x)), (wide[:, :, ::2], x[:1]),
             (np.asfortranarray(x), wide[:, :, 1::2])]
    builds = None
    for a, b in mixes:
        want = a + b
        for out in (jt.empty(80, 3, 2, dtype=jt.float64).permute(2, 1, 0),  # F, A, C
                    jt.empty(2, 3, 160, dtype=jt.float64)[:, :, ::2],
                    jt.empty(2, 3, 80, dtype=jt.float64)):
            jt.add(jt.from_numpy(a), jt.from_numpy(b), out=out)
            np.testing.assert_array_equal(out.numpy(), want)
            if builds is None:  # after the first call: the others compile no other build
                builds = len(elementwise.four_d.signatures)
    assert len(elementwise.four_d.signatures) == builds, elementwise.four_d.signatures
    # every build of the 4-D driver is all "A" with out alone writable (any_layout's), or all
    # "C" (the dense path's reshape of contiguous operands to (1, 1, 1, n))
    arrays = [[t for t in sig if hasattr(t, "layout")] for sig in elementwise.four_d.signatures]
    general = [ts for ts in arrays if any(t.layout != "C" for t in ts)]
    assert general and all(t.layout == "A" and t.mutable == (k == 0)
                           for ts in general for k, t in enumerate(ts))


def test_four_d_serves_every_op_through_its_row_function():
    # one build of the parallel 4-D driver runs add, sub and mul (their row functions, cfuncs
    # of the op's loop alone, are what compiles per op), broadcast, strided and in parallel
    from jitensor.kernels.cpu import elementwise
    x = np.arange(300 * 400, dtype=np.float32).reshape(300, 400) / 7
    y = np.linspace(-1, 1, 400, dtype=np.float32)
    before = len(elementwise.four_d.signatures)
    for name, op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul)):
        for a, b in ((x, y), (x[:, ::2], y[::2])):
            got = getattr(jt, name)(jt.from_numpy(a), jt.from_numpy(b)).numpy()
            np.testing.assert_array_equal(got, op(a, b))
    assert len(elementwise.four_d.signatures) - before <= 1
