"""Shared fixtures and helpers for the jitensor test suite.

NumPy is the oracle everywhere; torch is a second oracle where it is installed (tests that need
it call ``pytest.importorskip("torch")``, so they skip cleanly without it)."""
import dataclasses
import glob
import os
import subprocess
import sys
from pathlib import Path

# Without a GPU the CUDA tests run in numba's simulator (set before numba is imported); on a
# machine with one, the same tests run on the GPU.
if not glob.glob("/dev/nvidia[0-9]*"):
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import jitensor as jt
from jitensor import _format

# The first call of a kernel signature compiles it (or loads it from the on-disk cache), which
# can take far longer than hypothesis's default deadline: no deadline, a modest example count.
settings.register_profile("default", deadline=None, max_examples=40,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", deadline=None, max_examples=400,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

REPO = Path(__file__).resolve().parents[1]

# Every dtype with CPU kernels, and float16 (CUDA only).
CPU_DTYPES = [jt.bool, jt.uint8, jt.int8, jt.int16, jt.int32, jt.int64, jt.float32, jt.float64]
ALL_DTYPES = CPU_DTYPES + [jt.float16]
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
    torch = sys.modules.get("torch")
    torch_default = torch.get_default_dtype() if torch is not None else None
    yield
    jt.set_default_dtype(saved_default)
    jt.set_debug_empty(saved_debug)
    for field in dataclasses.fields(saved_print):
        setattr(_format.PRINT_OPTS, field.name, getattr(saved_print, field.name))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_default_dtype(torch_default if torch_default is not None else torch.float32)
        torch.set_printoptions(profile="default")


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
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("JITENSOR_DEBUG_EMPTY", None)
    if extra_env:
        env.update(extra_env)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=str(REPO))
    assert proc.returncode == 0, f"subprocess failed:\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
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
    for a, b in zip(mine, theirs):
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
