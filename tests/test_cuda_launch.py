"""The launch path a GPU takes (driver.launch outside the simulator), with the driver stood in:
kernels are not compiled or run, but every argument must reach cuda.core as the signature
they were compiled for expects it (a Pointer as its address, an exact int; a bool as NumPy's
one byte; ...). Runs without a GPU, and unchanged on one."""
import numpy as np
import pytest
from numba import types

import jitensor as jt

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not jt.cuda.is_available(),
                                                   reason="no CUDA: numba-cuda is not installed")]


@pytest.fixture
def gpu_path(monkeypatch):
    """gpu_path(): from now on CUDA ops launch through the GPU's path; returns the list of
    (kernel, argument types, arguments, grid, block) each launch hands to cuda.core. Inputs
    are made before (allocation and copies still go through the simulator, where there is
    one)."""
    from numba.np.numpy_support import as_dtype

    from jitensor.kernels.cuda import driver
    holder = pytest.importorskip("cuda.core._kernel_arg_handler").ParamHolder
    calls = []

    def core_launch(stream, config, kernel, *args):
        fn, argtypes = kernel
        assert len(args) == len(argtypes)
        for t, a in zip(argtypes, args, strict=False):
            if isinstance(t, types.CPointer):
                assert type(a) is int and a > 0  # cuda.core converts int subclasses slowly
            elif t == types.boolean:
                assert type(a) is np.bool_
            elif t == types.int64 and type(a) is not np.int64:
                assert type(a) is int
            elif t == types.float64 and type(a) is not np.float64:
                assert type(a) is float
            else:
                assert type(a) is as_dtype(t).type
        holder(args)  # what cuda.core's launch builds from them
        calls.append((fn, argtypes, args, *config, stream))

    def start(blocks=8):
        """First leave `blocks` free 512-byte blocks in the pool, enough for the small buffers
        the ops allocate (the stood-in driver allocates nothing)."""
        held = [jt.empty(1, device="cuda") for _ in range(blocks)]
        del held
        driver.init()  # the context and the default stream, before the driver is stood in
        monkeypatch.setattr(driver, "SIM", False)
        monkeypatch.setattr(driver, "_compiled", {})
        monkeypatch.setattr(driver, "_cufunc", lambda kernel, argtypes: (kernel, argtypes))
        monkeypatch.setattr(driver, "_config", lambda grid, block: (grid, block))
        monkeypatch.setattr(driver, "_core_launch", core_launch)
        monkeypatch.setitem(driver._state, "sms", 132)
        return calls
    return start


def test_small_ops_pass_their_buffers_addresses(gpu_path):
    x = jt.ones(2, 4, device="cuda")
    y = jt.ones(2, 4, device="cuda")
    i = jt.ones(2, 3, dtype=jt.int64, device="cuda")
    launches = gpu_path()
    x + y  # the fast path's 128-bit kernel
    x * 2.0  # a Python scalar
    i + i  # the dense kernel
    x.exp()  # the unary fast path
    _ = -i
    (fn, argtypes, args, grid, block, stream), *rest = launches
    assert fn.__name__ == "arith_vec4" and x.data_ptr() in args and y.data_ptr() in args
    assert (grid, block) == (1, 256)
    assert [c[0].__name__ for c in rest] == ["arith_vec4", "arith_dense", "unary_vec4",
                                             "unary_dense"]


def test_views_fills_and_reductions_marshal_every_argument(gpu_path):
    x = jt.arange(24.0, device="cuda").reshape(4, 6)
    launches = gpu_path()
    x[:, ::2] + 1.0  # the strided 4-D kernel
    x[:, ::2].fill_(1.5)  # strided: the fill kernel, with its bool `dense` flag
    x.sum()
    x.sum(0)
    names = [c[0].__name__ for c in launches]
    assert names[:2] == ["arith", "fill"] and len(names) >= 4
    assert types.boolean in launches[1][1]


def test_launches_and_copies_go_on_the_current_stream(gpu_path, monkeypatch):
    from cuda.bindings import driver as cu

    from jitensor.kernels.cuda import driver
    x = jt.ones(2, 4, device="cuda")
    s = jt.cuda.Stream()
    with jt.cuda.stream(s):  # blocks for s's own pool, which the stood-in driver cannot make
        del [jt.empty(1, device="cuda") for _ in range(4)][:]
    launches = gpu_path()
    copies = []
    for name in ("cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemsetD32Async"):
        monkeypatch.setattr(cu, name, lambda *args, name=name: copies.append((name, int(args[-1])))
                            or (cu.CUresult.CUDA_SUCCESS,))
    x + x
    with jt.cuda.stream(s):
        x + x
        jt.zeros(3, device="cuda")
        jt.tensor([1.0, 2.0], device="cuda")
        x.cpu()
    x.cpu()
    default = driver.init()["default"]
    assert [c[-1] for c in launches] == [default, s._core]
    h, d = s.cuda_stream, int(default.handle)
    assert copies == [("cuMemsetD32Async", h), ("cuMemcpyHtoDAsync", h),
                      ("cuMemcpyDtoHAsync", h), ("cuMemcpyDtoHAsync", d)]


def test_only_whole_fresh_allocations_take_the_fresh_path():
    """memory.fresh names the arrays the small-op paths launch without layout tests: a view
    of any kind (even one that covers the whole block) must not pass."""
    from jitensor.kernels.cuda import memory
    a = jt.empty(2, 4, device="cuda")._data
    assert memory.fresh(a) is memory.block(a) and memory.fresh(a).pointer.dtype == a.dtype
    for view in (a[1:], a[:, ::2], a.T, a.reshape(8), a.view(np.int32), a[...],
                 np.lib.stride_tricks.as_strided(a, (2, 4), a.strides)):
        assert memory.fresh(view) is None
    assert memory.fresh(np.float32(1)) is None and memory.fresh(2.0) is None
