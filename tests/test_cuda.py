"""CUDA tensors: every op family against the CPU backend and NumPy as oracles.

Without a GPU these run in numba's CUDA simulator (tests/conftest.py sets
NUMBA_ENABLE_CUDASIM), which runs one Python thread per GPU thread: shapes stay tiny. On a GPU
the same tests run unchanged on the device."""
import os

import numpy as np
import pytest

import jitensor as jt

# slow: the simulator runs each GPU thread as Python
pytestmark = [pytest.mark.cuda, pytest.mark.slow,
              pytest.mark.skipif(not jt.cuda.is_available(),
                                 reason="no CUDA: numba-cuda is not installed")]

RNG = np.random.default_rng(0)


def cuda(a, dtype=None):
    return jt.tensor(a, dtype=dtype, device="cuda")


def check(got, want, rtol=1e-6, atol=1e-6):
    """`got` is a CUDA tensor with `want`'s dtype, shape and values (`want`: a CPU tensor or
    a NumPy array)."""
    assert got.device.type == "cuda"
    want_np = want.numpy() if isinstance(want, jt.Tensor) else np.asarray(want)
    host = got.cpu().numpy()
    assert host.dtype == want_np.dtype and host.shape == want_np.shape
    if host.dtype.kind == "f":
        np.testing.assert_allclose(host, want_np, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(host, want_np)


# -- creation and transfers ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [jt.bool, jt.uint8, jt.int32, jt.int64, jt.float16,
                                   jt.float32, jt.float64])
def test_fills(dtype):
    for fn, want in ((jt.zeros, 0), (jt.ones, 1)):
        t = fn(2, 3, dtype=dtype, device="cuda")
        assert t.dtype is dtype and t.device == jt.device("cuda:0") and t.is_cuda
        check(t, np.full((2, 3), want, dtype.np))
    check(jt.full((3,), 7 if dtype is not jt.bool else True, dtype=dtype, device="cuda"),
          np.full(3, 7 if dtype is not jt.bool else True, dtype.np))


@pytest.mark.parametrize("dtype", [jt.bool, jt.int8, jt.int16, jt.float16, jt.int32,
                                   jt.float32, jt.int64, jt.float64])
def test_fills_of_views_touch_only_the_view(dtype):
    """Dense views fill through the driver's memset (a 1-, 2- or 4-byte word, at the view's
    offset), others through the fill kernel; nothing outside the view changes."""
    value = True if dtype is jt.bool else -3
    t = jt.zeros(4, 6, dtype=dtype, device="cuda")
    want = np.zeros((4, 6), dtype.np)
    t[1:3] = value  # contiguous, offset: memset
    want[1:3] = value
    t[:, 5] = value  # strided: the kernel
    want[:, 5] = value
    check(t, want)


def test_empty_runs_no_kernel_and_has_its_shape():
    from jitensor.kernels.cuda import driver
    before = len(driver.SIGNATURES)
    t = jt.empty(4, 5, device="cuda")
    assert t.shape == (4, 5) and t.dtype is jt.float32 and t.is_cuda
    assert len(driver.SIGNATURES) == before or not driver.SIM


def test_generators_match_the_cpu():
    check(jt.arange(1, 11, 3, device="cuda"), jt.arange(1, 11, 3))
    check(jt.arange(0, 1, 0.25, device="cuda"), jt.arange(0, 1, 0.25))
    check(jt.linspace(-1, 1, 5, device="cuda"), jt.linspace(-1, 1, 5))
    check(jt.eye(3, 4, device="cuda"), jt.eye(3, 4))
    for fn in (jt.rand, jt.randn):
        jt.manual_seed(3)
        a = fn(7, device="cuda")
        jt.manual_seed(3)
        check(a, fn(7), rtol=1e-5)  # one counter-based stream on both devices
    jt.manual_seed(3)
    a = jt.randint(0, 10, (6,), device="cuda")
    jt.manual_seed(3)
    check(a, jt.randint(0, 10, (6,)))


def test_round_trips_and_views_to_the_host():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    t = cuda(a)
    check(t, a)
    check(t.T, a.T)  # a non-contiguous view copies through a dense buffer
    check(t[:, 1::2], a[:, 1::2])
    assert t.to("cpu").device == jt.device("cpu") and t.cpu().is_cpu
    assert jt.tensor(a).cuda().is_cuda and jt.tensor(a).to(t).is_cuda
    check(t.to(jt.float64), a.astype(np.float64))
    assert t.tolist() == a.tolist() and cuda([2.5]).item() == 2.5
    h = cuda(np.arange(4, dtype=np.float16))
    assert h.dtype is jt.float16
    check(h * 2, np.arange(4, dtype=np.float16) * 2)


_UNREADABLE = """
import ctypes, numpy as np
from jitensor.kernels.cuda.memory import DeviceArray
# memory at 16 KiB is never mapped (below Linux's mmap_min_addr): a read there is a segfault,
# as a host read of a device address is on a GPU machine
a = DeviceArray.__new__(DeviceArray, (2, 3, 5), np.float32,
                        buffer=(ctypes.c_uint8 * (1 << 20)).from_address(1 << 14))
t = a.transpose(1, 0, 2)
assert a.reshape(6, 5).shape == (6, 5) and a.ravel().shape == (30,)
assert t.reshape(3, 2, 5).shape == (3, 2, 5) and np.reshape(a, (30,)).shape == (30,)
for fn in (lambda: t.reshape(3, 10), lambda: t.ravel(), lambda: t.flatten()):
    try:
        fn()
    except (ValueError, TypeError):
        pass
    else:
        raise AssertionError("a reshape that needs a copy must raise")
print("ok")
"""


def test_device_array_metadata_never_reads_the_elements():
    """Reshapes of a DeviceArray are views or errors, never copies: setting .shape where no
    view would do made NumPy copy, reading device memory on the host (a segfault on the
    H200). Run in a child over unmapped memory, so a read crashes it rather than the suite."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _UNREADABLE], capture_output=True, text=True,
                       env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_host_reads_raise_as_torch():
    t = jt.ones(2, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        t.numpy()
    with pytest.raises(TypeError, match="cpu"):
        np.asarray(t)
    with pytest.raises(TypeError, match="device memory"):
        t._data.item()  # the buffer itself refuses host reads


def test_repr_shows_the_device():
    assert repr(cuda([1.0, 2.0])) == "tensor([1., 2.], device='cuda:0')"


def test_mixing_devices_names_both():
    with pytest.raises(RuntimeError, match="cuda:0.*cpu|cpu.*cuda:0"):
        jt.ones(2, device="cuda") + jt.ones(2)


# -- elementwise -----------------------------------------------------------------------------------
UNARY = ["neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
         "tanh", "sigmoid", "relu", "floor", "ceil", "round", "trunc", "reciprocal", "square",
         "isnan", "isinf", "isfinite", "logical_not"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_match_the_cpu(name):
    a = np.array([[-2.5, -0.5, 0.0], [0.5, 1.5, np.nan]], np.float32)
    fn = getattr(jt, name)
    check(fn(cuda(a)), fn(jt.tensor(a)), rtol=2e-6)


BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum", "minimum",
          "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("dtype", [jt.float32, jt.int32])
@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_broadcast_and_match_the_cpu(name, dtype):
    a = np.array([[3, -7, 8], [5, 2, -1]]).astype(dtype.np)
    b = np.array([2, 3, -4]).astype(dtype.np)
    fn = getattr(jt, name)
    check(fn(cuda(a), cuda(b)), fn(jt.tensor(a), jt.tensor(b)), rtol=1e-6)
    check(fn(cuda(a), 2), fn(jt.tensor(a), 2))  # a Python scalar operand


MATH = ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log2",
        "log10", "exp2", "erf", "erfc"]
MATH2 = ["hypot", "copysign", "logaddexp", "logaddexp2", "fmax", "fmin", "xlogy"]


@pytest.mark.parametrize("dtype", [jt.float32, jt.float16])
def test_math_functions_match_the_cpu(dtype):
    """The "math" families on dense and broadcast (strided) operands; float16 computes in
    float32 and is compared with the CPU's float32 result rounded to half."""
    a = np.array([[-0.9, 0.0, 0.5], [1.5, np.nan, -np.inf]], np.float32)
    b = np.array([2.0, -0.0, np.nan], np.float32)
    tol = dict(rtol=2e-6, atol=0) if dtype is jt.float32 else dict(rtol=1e-3, atol=1e-3)
    ca, cb = cuda(a, dtype), cuda(b, dtype)
    a, b = (x.astype(dtype.np).astype(np.float32) for x in (a, b))  # the values on the device

    def want(result):
        return result.numpy().astype(dtype.np)
    for name in MATH:
        fn = getattr(jt, name)
        check(fn(ca), want(fn(jt.tensor(a))), **tol)
    for name in MATH2:
        fn = getattr(jt, name)
        check(fn(ca, cb), want(fn(jt.tensor(a), jt.tensor(b))), **tol)  # b broadcast
        check(fn(ca, 0.5), want(fn(jt.tensor(a), 0.5)), **tol)
    check(jt.fmax(cuda([1, 5], jt.int32), cuda([3, 2], jt.int32)),
          np.array([3, 5], np.int32))
    t = cuda(a)
    t.arcsin_()
    check(t, jt.asin(jt.tensor(a)))
    with pytest.raises(NotImplementedError, match="hypot"):
        jt.hypot(cuda([1, 2]), cuda([3, 4]))


ACTIVATIONS = {"gelu": {}, "gelu_tanh": {"approximate": "tanh"}, "silu": {}, "mish": {},
               "softplus": {"beta": 2.0, "threshold": 3.0}, "leaky_relu": {"negative_slope": 0.2},
               "elu": {"alpha": 0.5}, "selu": {}, "celu": {"alpha": 2.0}, "logsigmoid": {},
               "hardsigmoid": {}, "hardswish": {}, "hardtanh": {"min_val": -0.5},
               "relu6": {}, "threshold": {"threshold": 0.5, "value": -2.0}}


@pytest.mark.parametrize("dtype", [jt.float32, jt.float16])
def test_activations_match_the_cpu(dtype):
    """The "activation" family on dense and strided operands, with gradients on the device;
    float16 computes in float32 (compared with the CPU's float32 rounded to half)."""
    from jitensor.nn import functional as F
    a = np.array([[-4.0, -1.0, -0.0], [0.7, 2.5, np.nan], [8.0, -np.inf, np.inf]], np.float32)
    tol = dict(rtol=2e-6, atol=1e-6) if dtype is jt.float32 else dict(rtol=1e-3, atol=1e-3)
    ca = cuda(a, dtype)
    a = a.astype(dtype.np).astype(np.float32)
    for name, kwargs in ACTIVATIONS.items():
        fn = getattr(F, name.split("_tanh")[0])
        want = fn(jt.tensor(a), **kwargs).numpy().astype(dtype.np)
        check(fn(ca, **kwargs), want, **tol)
        check(fn(ca.t(), **kwargs), want.T, **tol)  # strided
        x = cuda(a[:2, :2], dtype).requires_grad_()
        fn(x, **kwargs).sum().backward()
        xc = jt.tensor(a[:2, :2], requires_grad=True)
        fn(xc, **kwargs).sum().backward()
        check(x.grad, xc.grad.numpy().astype(dtype.np), **tol)
    t = cuda(a)
    assert F.leaky_relu(t, 0.1, inplace=True) is t
    check(t, F.leaky_relu(jt.tensor(a), 0.1))


def test_isclose_allclose_and_equal():
    a, b = cuda([1.0, np.inf, np.nan, 1.1]), cuda([1.0 + 1e-7, np.inf, np.nan, 1.0])
    check(jt.isclose(a, b), np.array([True, True, False, False]))
    check(jt.isclose(a, b, equal_nan=True), np.array([True, True, True, False]))
    assert jt.allclose(a[:2], b[:2]) and not jt.allclose(a, b)
    assert jt.equal(a[:2], cuda([1.0, np.inf])) and not jt.equal(a, a)
    with pytest.raises(RuntimeError, match="cuda:0.*cpu|cpu.*cuda:0"):
        jt.isclose(a, jt.tensor([1.0, 2.0, 3.0, 4.0]))


COMPOSITES = {  # built from other ops: they must run on the device and keep it
    "tril": lambda a: a.tril(-1), "triu": lambda a: a.triu(1), "diagonal": lambda a: a.diagonal(1),
    "diag": lambda a: jt.diag(a), "diag_of_vector": lambda a: jt.diag(a[0], -1),
    "trace": lambda a: a[:, :3].trace(), "repeat": lambda a: a.repeat(2, 1),
    "tile": lambda a: jt.tile(a, (2,)), "roll": lambda a: a.roll((1, -1), (0, 1)),
    "norm": lambda a: a.norm(), "norm_inf_dim": lambda a: a.norm(float("inf"), 0),
    "lerp": lambda a: jt.lerp(a, a * 2, a.sigmoid()), "addcdiv": lambda a: a.addcdiv(a, a.exp()),
}


@pytest.mark.parametrize("name", COMPOSITES)
def test_composite_ops_match_the_cpu(name):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    check(COMPOSITES[name](cuda(a)), COMPOSITES[name](jt.tensor(a)), rtol=1e-5)


def test_zero_dim_tensors_stay_zero_dim_on_the_device():
    """np.ascontiguousarray made the host copy of a 0-d tensor 1-d."""
    for t in (jt.tensor(2.5).cuda(), jt.tensor(2.5, device="cuda"), jt.tensor(2.5).to("cuda")):
        assert t.shape == () and t.item() == 2.5
    assert jt.tensor(3.0, device="cuda").sort().values.shape == ()


@pytest.mark.parametrize("dtype", [jt.float32, jt.float16, jt.int64, jt.bool])
def test_sort_and_topk_match_the_cpu(dtype):
    """The bitonic network: rows that are and are not powers of two, ties and NaN."""
    x = np.array([[2, 0, np.nan, 1, 0], [1, 1, 3, np.nan, -1], [0, 2, 2, 0, 1]], np.float32)
    if dtype is not jt.float32 and dtype is not jt.float16:
        x = np.nan_to_num(x, nan=4)
    a = cuda(x.astype(dtype.np))
    want = jt.tensor(x.astype(np.float32 if dtype is jt.float16 else dtype.np))
    for dim in (0, 1):
        for descending in (False, True):
            got, ref = a.sort(dim, descending), want.sort(dim, descending)
            check(got.values, ref.values.numpy().astype(dtype.np))
            check(got.indices, ref.indices)
    check(a.topk(2).indices, want.topk(2).indices)


def test_bitwise_where_clamp_and_promotion():
    a, b = np.array([5, 3, 12], np.int64), np.array([3, 6, 10], np.int64)
    check(cuda(a) & cuda(b), a & b)
    check(cuda(a) | cuda(b), a | b)
    check(cuda(a) ^ cuda(b), a ^ b)
    check(~cuda(a), ~a)
    check(~cuda([True, False]), np.array([False, True]))
    cond = cuda([True, False, True])
    check(jt.where(cond, cuda(a), cuda(b)), np.where([True, False, True], a, b))
    check(jt.clamp(cuda([-2.0, 0.5, 3.0]), -1, 1), np.array([-1, 0.5, 1], np.float32))
    check(cuda([1, 2], jt.int32) + cuda([0.5, 0.5]), np.array([1.5, 2.5], np.float32))
    check(cuda([1, 2], jt.int64) / 2, np.array([0.5, 1.0], np.float32))


def test_in_place_out_and_strided_operands():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    t = cuda(a)
    t += 1
    t.mul_(2)
    check(t, (a + 1) * 2)
    out = jt.empty(4, 3, device="cuda")
    jt.add(t.T, cuda(a).T, out=out)
    check(out, ((a + 1) * 2 + a).T)
    v = cuda(a)
    v[1:, ::2] *= 0  # through a strided view, into the base
    want = a.copy()
    want[1:, ::2] = 0
    check(v, want)


def test_integer_division_by_zero_raises_and_writes_nothing():
    t = cuda([4, 5], jt.int64)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        t //= cuda([1, 0], jt.int64)
    check(t, np.array([4, 5]))


# -- reductions, softmax ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin",
                                  "var", "std", "logsumexp", "all", "any"])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 2)])
def test_reductions_match_the_cpu(name, dim):
    a = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    a[0, 1, 2] = a[0, 1, 4]  # a tie: argmax/argmin keep the first index
    fn = getattr(jt, name)
    if dim is None and name in ("logsumexp",):
        dim = (0, 1, 2)
    if isinstance(dim, tuple) and name in ("argmax", "argmin", "prod"):
        return
    args = {} if dim is None else {"dim": dim}
    check(fn(cuda(a), **args), fn(jt.tensor(a), **args), rtol=1e-5)
    if dim is not None:
        check(fn(cuda(a), keepdim=True, **args), fn(jt.tensor(a), keepdim=True, **args),
              rtol=1e-5)


def test_max_min_with_dim_and_integer_sums():
    a = np.array([[1, 9, 9], [4, -2, 0]], np.int32)
    values, indices = jt.max(cuda(a), dim=1)
    check(values, np.array([9, 4], np.int32))
    check(indices, np.array([1, 0]))
    check(jt.min(cuda(a), dim=0).values, a.min(0))
    check(cuda(a).sum(), np.array(a.sum(), np.int64))  # int sums accumulate in int64
    check(cuda([np.nan, 1.0]).max(), np.array(np.nan, np.float32))
    check(cuda(a).T.cumsum(dim=0), np.cumsum(a.T, 0).astype(np.int64))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "argmax", "argmin", "var",
                                  "logsumexp", "all", "any"])
@pytest.mark.parametrize("shape, dim", [((37,), 0), ((2, 41), 1), ((29, 6), 0), ((6, 29), 0)])
def test_few_long_reductions_are_split_and_merged(name, shape, dim):
    """Few long rows (a full reduction) or few long columns: the GPU would idle, so each is
    split into parts whose states a second kernel merges, in order."""
    a = (RNG.integers(0, 5, shape) - 2).astype(np.float32)  # ties across parts
    if name == "prod":
        a = np.where(a == 0, 1, a) / 2 + 0.75
    fn = getattr(jt, name)
    check(fn(cuda(a), dim=dim), fn(jt.tensor(a), dim=dim), rtol=1e-5)
    check(fn(cuda(a)) if name != "logsumexp" else fn(cuda(a), dim=tuple(range(a.ndim))),
          fn(jt.tensor(a)) if name != "logsumexp" else fn(jt.tensor(a), dim=tuple(range(a.ndim))),
          rtol=1e-5)
    a.reshape(-1)[-3] = np.nan  # NaN in the last part propagates through the merge
    check(fn(cuda(a), dim=dim), fn(jt.tensor(a), dim=dim), rtol=1e-5)


@pytest.mark.parametrize("name", ["sum", "amax", "argmin", "var", "logsumexp", "any"])
def test_many_short_rows_run_one_thread_each(name):
    a = (RNG.integers(0, 3, (9, 2)) - 1).astype(np.float32)
    fn = getattr(jt, name)
    check(fn(cuda(a), dim=1), fn(jt.tensor(a), dim=1), rtol=1e-5)
    check(fn(cuda(a).T, dim=0), fn(jt.tensor(a).T, dim=0), rtol=1e-5)


def test_split_integer_and_bool_reductions():
    a = np.arange(-20, 21, dtype=np.int32)
    check(cuda(a).sum(), np.array(a.sum(), np.int64))
    check(cuda(a).max(dim=0).indices, np.array(40))
    check(cuda(a > 19).any(), np.array(True))
    check(cuda(a > -21).all(), np.array(True))


@pytest.mark.parametrize("dim", [-1, 0])
def test_softmax_and_log_softmax(dim):
    a = RNG.standard_normal((3, 4)).astype(np.float32) * 10
    for fn in (jt.softmax, jt.log_softmax):
        check(fn(cuda(a), dim=dim), fn(jt.tensor(a), dim=dim), rtol=1e-5, atol=1e-6)
    check(jt.softmax(cuda(a), dim=dim, dtype=jt.float64), jt.softmax(jt.tensor(a), dim=dim,
                                                                      dtype=jt.float64))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(5, 3), (4,), (2, 3, 2, 2)])
def test_class_losses_and_their_gradients_match_the_cpu(reduction, shape):
    """cross_entropy and nll_loss: one kernel each way (classes contiguous, or strided by the
    spatial size), with weights, ignored targets and label smoothing."""
    from jitensor.nn import functional as F
    d = 0 if len(shape) == 1 else 1
    t = RNG.integers(0, shape[d], shape[:d] + shape[d + 1:])
    t.reshape(-1)[::3] = 1
    x = (RNG.standard_normal(shape) * 3).astype(np.float32)
    w = np.linspace(0.5, 2.0, shape[d]).astype(np.float32)
    for options in (dict(), dict(weight=w, ignore_index=1, label_smoothing=0.3)):
        results = []
        for device in ("cuda", "cpu"):
            a = jt.tensor(x, device=device, requires_grad=True)
            kw = dict(options, reduction=reduction)
            if "weight" in kw:
                kw["weight"] = jt.tensor(w, device=device)
            ce = F.cross_entropy(a, jt.tensor(t, device=device), **kw)
            kw.pop("label_smoothing", None)
            nll = F.nll_loss(a, jt.tensor(t, device=device), **kw)
            (ce.sum() + 2 * nll.sum()).backward()
            results.append((ce.detach(), nll.detach(), a.grad))
        for got, want in zip(*results, strict=False):
            check(got, want, rtol=1e-5, atol=1e-6)


def test_class_losses_in_float16_and_their_errors():
    from jitensor.nn import functional as F
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    t = jt.tensor([0, 3, 2])
    got = F.cross_entropy(cuda(x, jt.float16), t.cuda(), reduction="none")
    assert got.dtype is jt.float16
    check(got.float(), F.cross_entropy(jt.tensor(x), t, reduction="none"), rtol=2e-3, atol=2e-3)
    with pytest.raises(IndexError, match="target 9 is out of bounds for 4 classes"):
        F.cross_entropy(cuda(x), cuda([0, 9, 7]))  # the first, whichever thread wrote the flag
    big = cuda(x + 1e5, jt.float32).requires_grad_()
    F.cross_entropy(big, t.cuda()).backward()  # the max kept apart: no float32 rounding of lse
    host = big.detach().cpu().requires_grad_()
    F.cross_entropy(host, t).backward()
    check(big.grad, host.grad, rtol=1e-5, atol=1e-7)
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        F.cross_entropy(cuda(x), t)
    none = jt.zeros(0, dtype=jt.int64, device="cuda")
    assert np.isnan(F.cross_entropy(jt.zeros(0, 4, device="cuda"), none).item())  # 0 / 0
    assert F.cross_entropy(jt.zeros(0, 4, device="cuda"), none, reduction="sum").item() == 0


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits", "kl_div", "l1_loss"])
def test_pointwise_losses_and_their_gradients_match_the_cpu(name):
    """One "loss" launch forward and one "loss_grad" launch for the input's gradient, on
    dense, broadcast (pos_weight) and strided operands; the target's gradient composed."""
    from jitensor.nn import functional as F
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y = RNG.random((3, 4)).astype(np.float32)
    if name == "binary_cross_entropy":
        x = 1 / (1 + np.exp(-x))
    elif name == "kl_div":
        x = np.log(RNG.random((3, 4)) + 0.01).astype(np.float32)
    pw = RNG.uniform(0.5, 2, 4).astype(np.float32)
    for reduction in ("none", "sum") if name == "kl_div" else ("none", "mean", "sum"):
        results = []
        for device in ("cuda", "cpu"):
            a = jt.tensor(x, device=device, requires_grad=True)
            b = jt.tensor(y, device=device, requires_grad=True)
            kw = dict(pos_weight=jt.tensor(pw, device=device)) \
                if name == "binary_cross_entropy_with_logits" else {}
            loss = getattr(F, name)(a, b, reduction=reduction, **kw)
            strided = getattr(F, name)(a.detach().T, b.detach().T, reduction="none", **(
                {} if not kw else dict(pos_weight=kw["pos_weight"][:3])))
            loss.sum().backward()
            results.append((loss.detach(), strided, a.grad, b.grad))
        for got, want in zip(*results, strict=False):
            check(got, want, rtol=1e-5, atol=1e-6)


def test_composed_functional_helpers_match_the_cpu():
    """pad (each mode), one_hot, cosine_similarity and scaled_dot_product_attention are built
    from ops, so they run on the device as they are."""
    from jitensor.nn import functional as F
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    results = []
    for device in ("cuda", "cpu"):
        a = jt.tensor(x, device=device, requires_grad=True)
        outs = [F.pad(a, (1, 2, 1, 0), mode) for mode in ("constant", "reflect", "replicate",
                                                          "circular")]
        outs.append(F.scaled_dot_product_attention(a, a, a, is_causal=True))
        outs.append(F.cosine_similarity(a, a.flip(-1), dim=-1))
        sum(o.sum() for o in outs).backward()
        outs.append(F.one_hot(jt.tensor([2, 0], device=device), 4))
        results.append([o.detach() for o in outs] + [a.grad])
    for got, want in zip(*results, strict=False):
        check(got, want, rtol=1e-5, atol=1e-5)


def test_convolutions_poolings_and_batch_norm_match_the_cpu():
    """Composed from gathers, matmuls and reductions: they run on the device as they are."""
    from jitensor.nn import functional as F
    x = RNG.standard_normal((1, 2, 4, 3)).astype(np.float32)
    w = RNG.standard_normal((2, 1, 2, 2)).astype(np.float32)
    results = []
    for device in ("cuda", "cpu"):
        a = jt.tensor(x, device=device, requires_grad=True)
        b = jt.tensor(w, device=device, requires_grad=True)
        stats = [jt.zeros(2, device=device), jt.ones(2, device=device)]
        values, where = F.max_pool2d(a, 2, 1, 1, return_indices=True)
        outs = [F.conv2d(a, b, padding=1, groups=2), values, F.avg_pool2d(a, 2, 1, 1),
                F.adaptive_avg_pool2d(a, (2, 1)), F.batch_norm(a, *stats, training=True)]
        sum(o.sum() for o in outs).backward()
        results.append([o.detach() for o in outs] + [where, a.grad, b.grad] + stats)
    for got, want in zip(*results, strict=False):
        check(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [jt.float16, jt.float32, jt.float64, jt.int64])
def test_max_pooling_kernels_match_the_cpu(dtype):
    """Values, indices (ties and a NaN) and the gradient with padding, dilation and ceil_mode,
    and for float64 the backward's own derivative; float16 against the CPU's float32 (its
    gradients add up in float32)."""
    from jitensor.nn import functional as F
    x = RNG.integers(-2, 3, (2, 2, 5, 4)).astype(np.float64)
    if dtype.is_floating_point:
        x[0, 1, 2, 2] = np.nan
    args = dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2),
                ceil_mode=True)
    floating, host = dtype.is_floating_point, jt.float32 if dtype is jt.float16 else dtype
    results = []
    for device, kind in (("cuda", dtype), ("cpu", host)):
        a = jt.tensor(x, dtype=kind, device=device, requires_grad=floating)
        values, where = F.max_pool2d(a, return_indices=True, **args)
        outs = [values, where]
        if floating:
            twice = kind is jt.float64
            g = jt.tensor(np.arange(values.numel()).reshape(values.shape) % 5, dtype=kind,
                          device=device, requires_grad=twice)
            first, = jt.autograd.grad(values, a, g, create_graph=twice)
            outs.append(first)
            if twice:  # the backward's own derivative, by its gradient: a gather
                (first * first).sum().backward()
                outs.append(g.grad)
        results.append([o.detach() for o in outs])
    for got, want in zip(*results, strict=False):  # (small integers: exact in float16 too)
        check(got.float() if got.dtype is jt.float16 else got, want)


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64, jt.int64])
def test_convolution_kernels_match_the_cpu(dtype):
    """The forward and both gradients (and a second derivative) with stride, padding, dilation,
    groups and bias; the batch is unfolded in several chunks (the simulator's CHUNK is small)."""
    from jitensor.nn import functional as F
    x = RNG.integers(-3, 4, (3, 4, 5, 4))
    w, b = RNG.integers(-3, 4, (6, 2, 3, 2)), RNG.integers(-3, 4, 6)
    args = dict(stride=(2, 1), padding=(2, 1), dilation=(1, 2), groups=2)
    results = []
    for device in ("cuda", "cpu"):
        a, c, d = (jt.tensor(v, dtype=dtype, device=device) for v in (x, w, b))
        outs = [F.conv2d(a, c, d, **args), F.conv2d(a, c, padding="same", groups=2)]
        if dtype.is_floating_point:
            for t in (a, c, d):
                t.requires_grad_()
            y = F.conv2d(a, c, d, **args)
            gx, gw = jt.autograd.grad((y * y).sum(), (a, c), create_graph=True)
            outs += [gx.detach(), gw.detach(), *jt.autograd.grad(gx.sum() + gw.sum(), (a, c, d))]
        results.append(outs)
    for got, want in zip(*results, strict=False):
        check(got, want, rtol=1e-9 if dtype is jt.float64 else 1e-5, atol=1e-4)


def test_convolution_in_float16_matches_float32():
    from jitensor.nn import functional as F
    x, w = (RNG.standard_normal(s).astype(np.float16) for s in ((2, 2, 4, 4), (3, 2, 3, 3)))
    got = F.conv2d(cuda(x), cuda(w), padding=1)
    assert got.dtype is jt.float16
    want = F.conv2d(jt.tensor(x.astype(np.float32)), jt.tensor(w.astype(np.float32)), padding=1)
    check(got.float(), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
def test_batch_norm_kernels_match_the_cpu(dtype):
    """Training-mode batch_norm (one kernel forward, one backward; and composed for a second
    derivative) with and without affine params, and the running statistics."""
    from jitensor.nn import functional as F
    x = RNG.standard_normal((3, 2, 2, 3)) * 2 + 5
    w, b = RNG.standard_normal(2), RNG.standard_normal(2)
    results = []
    for device in ("cuda", "cpu"):
        a, c, d = (jt.tensor(v, dtype=dtype, device=device, requires_grad=True)
                   for v in (x, w, b))
        stats = [jt.zeros(2, dtype=dtype, device=device), jt.ones(2, dtype=dtype, device=device)]
        y = F.batch_norm(a, *stats, c, d, training=True)
        grads = jt.autograd.grad((y * y.detach()).sum(), (a, c, d))
        plain = F.batch_norm(a[:, :, 0], None, None, training=True)
        gx, = jt.autograd.grad((plain * plain).sum(), (a,), create_graph=True)
        results.append([y.detach(), *grads, *stats, plain.detach(), gx.detach(),
                        *jt.autograd.grad(gx.square().sum(), (a,))])
    for got, want in zip(*results, strict=False):
        check(got, want, rtol=1e-9 if dtype is jt.float64 else 1e-4, atol=1e-5)


def test_multihead_attention_matches_the_cpu():
    from jitensor import nn
    jt.manual_seed(0)
    host = nn.MultiheadAttention(4, 2, batch_first=True)
    device = nn.MultiheadAttention(4, 2, batch_first=True).cuda()
    device.load_state_dict(host.state_dict())
    x = RNG.standard_normal((1, 3, 4)).astype(np.float32)
    mask = np.triu(np.ones((3, 3), bool), 1)
    results = []
    for m, where in ((device, "cuda"), (host, "cpu")):
        a = jt.tensor(x, device=where, requires_grad=True)
        out, weights = m(a, a, a, attn_mask=jt.tensor(mask, device=where))
        (out.sum() + weights.sum()).backward()
        results.append([out.detach(), weights.detach(), a.grad, m.in_proj_weight.grad])
    for got, want in zip(*results, strict=False):
        check(got, want, rtol=1e-5, atol=1e-5)


def test_pointwise_losses_in_float16_and_their_errors():
    from jitensor.nn import functional as F
    x = RNG.standard_normal(5).astype(np.float16).astype(np.float32)
    y = RNG.random(5).astype(np.float16).astype(np.float32)
    got = F.binary_cross_entropy_with_logits(cuda(x, jt.float16), cuda(y, jt.float16),
                                             reduction="none")
    assert got.dtype is jt.float16
    check(got.float(), F.binary_cross_entropy_with_logits(jt.tensor(x), jt.tensor(y),
                                                          reduction="none"), rtol=2e-3, atol=2e-3)
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        F.huber_loss(cuda(x), jt.tensor(y))
    # no range check on the GPU (it would wait for the device): out-of-range input gives NaN
    assert np.isnan(F.binary_cross_entropy(cuda([2.0]), cuda([1.0])).item())


@pytest.mark.parametrize("shape, k", [((3, 5), 1), ((2, 2, 3), 2), ((7,), 1)])
def test_norms_and_their_gradients_match_the_cpu(shape, k):
    """layer_norm and rms_norm: a block a row forward and for the input's gradient, the
    weight's and bias's summed over runs of rows; with and without the affine parameters, on
    rows far from 0, and strided input."""
    from jitensor.nn import functional as F
    x = (RNG.standard_normal(shape) * 3 + 50).astype(np.float32)
    p = [RNG.standard_normal(shape[-k:]).astype(np.float32) for _ in range(2)]
    g = RNG.standard_normal(shape).astype(np.float32)
    for centred in (True, False):
        for affine in (True, False):
            results = []
            for device in ("cuda", "cpu"):
                a = jt.tensor(x, device=device, requires_grad=True)
                w, b = (jt.tensor(q, device=device, requires_grad=True) if affine else None
                        for q in p)
                y = F.layer_norm(a, shape[-k:], w, b) if centred else \
                    F.rms_norm(a, shape[-k:], w)
                y.backward(jt.tensor(g, device=device))
                grads = [t.grad for t in (a, w, b) if t is not None and t.grad is not None]
                results.append([y.detach()] + grads)
            assert len(results[0]) == len(results[1])
            for got, want in zip(*results, strict=False):
                check(got, want, rtol=1e-4, atol=1e-4)
    strided = cuda(x.reshape(shape[0], -1).T.copy()).T  # (rows, n) seen through a transpose
    check(F.layer_norm(strided, strided.shape[-1:]),
          F.layer_norm(jt.tensor(x.reshape(shape[0], -1)), strided.shape[-1:]), rtol=1e-4,
          atol=1e-4)


def test_norms_in_float16_empty_and_their_errors():
    from jitensor.nn import functional as F
    x = RNG.standard_normal((3, 4)).astype(np.float16).astype(np.float32)  # (float16 values)
    for fn in (lambda t: F.layer_norm(t, 4), lambda t: F.rms_norm(t, 4, eps=1e-5)):
        h = cuda(x, jt.float16).requires_grad_()
        got = fn(h)  # computed in float64, stored as float16
        assert got.dtype is jt.float16
        got.float().sum().backward()
        host = jt.tensor(x, requires_grad=True)
        fn(host).sum().backward()
        check(got.detach().float(), fn(host).detach(), rtol=2e-3, atol=2e-3)
        check(h.grad.float(), host.grad, rtol=2e-3, atol=2e-3)
    # float32 params of a float16 input are converted (torch's mixed types); rms_norm's eps
    # defaults to float32's, the type torch computes half in
    w = jt.tensor([0.5, 1.0, 2.0, 1.5], device="cuda", requires_grad=True)
    h = cuda(x, jt.float16).requires_grad_()
    got = F.layer_norm(h, 4, w, jt.zeros(4, device="cuda"))
    assert got.dtype is jt.float16
    got.float().sum().backward()
    assert w.grad.dtype is jt.float32 and h.grad.dtype is jt.float16
    w16 = w.detach().half().float().cpu()  # (the weight as converted)
    check(got.detach().float(), F.layer_norm(jt.tensor(x), 4, w16), rtol=2e-3, atol=2e-3)
    tiny = cuda(np.full((1, 8), 1e-3), jt.float16)
    v = np.float64(np.float16(1e-3))
    want = np.full((1, 8), v / np.sqrt(v * v + np.finfo(np.float32).eps), np.float32)
    check(F.rms_norm(tiny, 8).float(), want, rtol=2e-3)  # 0.945 (torch's); float16's eps: 0.032
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        F.layer_norm(cuda(x), 4, jt.ones(4))
    w = jt.ones(4, device="cuda", requires_grad=True)
    b = jt.zeros(4, device="cuda", requires_grad=True)
    F.layer_norm(jt.zeros(0, 4, device="cuda", requires_grad=True), 4, w, b).sum().backward()
    check(w.grad, np.zeros(4, np.float32))
    check(b.grad, np.zeros(4, np.float32))
    assert tuple(F.rms_norm(jt.zeros(2, 0, device="cuda"), 0).shape) == (2, 0)


# -- matmul ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [jt.float32, jt.float64, jt.int64])
def test_matmul_forms(dtype):
    a = RNG.integers(-3, 4, (2, 3, 4)).astype(dtype.np)
    b = RNG.integers(-3, 4, (4, 5)).astype(dtype.np)
    v = RNG.integers(-3, 4, 4).astype(dtype.np)
    check(cuda(a) @ cuda(b), a @ b)
    check(cuda(a[0]).T @ cuda(a[1]), a[0].T @ a[1])
    check(jt.mv(cuda(a[0]), cuda(v)), a[0] @ v)
    check(jt.dot(cuda(v), cuda(v)), np.array(v @ v))
    check(jt.outer(cuda(v), cuda(v)), np.outer(v, v))
    check(jt.bmm(cuda(a), cuda(a).transpose(1, 2)), a @ a.transpose(0, 2, 1))


def test_matmul_float16_and_shape_error():
    a = RNG.standard_normal((3, 4)).astype(np.float16)
    check(cuda(a) @ cuda(a).T, (a.astype(np.float32) @ a.T.astype(np.float32)).astype(np.float16),
          rtol=2e-3, atol=2e-3)
    with pytest.raises(RuntimeError, match=r"\(3x4 and 3x4\)"):
        cuda(a) @ cuda(a)


# -- views, shape ops and indexing ----------------------------------------------------------------
def test_views_share_memory_and_shape_ops():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = cuda(a)
    v = t.view(6, 4)
    v[0, 0] = 100
    assert t[0, 0, 0].item() == 100
    a[0, 0, 0] = 100
    check(t.permute(2, 0, 1).contiguous(), a.transpose(2, 0, 1))
    check(t.flip(1), a[:, ::-1])
    check(jt.cat([t, t], dim=1), np.concatenate([a, a], 1))
    check(jt.stack([t[0], t[1]]), a)
    check(t.expand(2, 2, 3, 4) + 0, np.broadcast_to(a, (2, 2, 3, 4)))
    check(t.reshape(4, 6), a.reshape(4, 6))
    check(t.T.reshape(-1), a.T.reshape(-1))  # not viewable: a device copy


def test_advanced_indexing_and_gather():
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    t = cuda(a)
    check(t[cuda([2, 0, 2])], a[[2, 0, 2]])
    check(t[:, [4, 1]], a[:, [4, 1]])
    mask = a % 3 == 0
    check(t[cuda(mask)], a[mask])
    check(jt.index_select(t, 1, cuda([0, 3])), a[:, [0, 3]])
    idx = np.array([[0, 4], [2, 2], [1, 0], [3, 3]])
    check(jt.gather(t, 1, cuda(idx)), np.take_along_axis(a, idx, 1))
    check(jt.nonzero(cuda([0, 3, 0, 5])), np.array([[1], [3]]))
    check(t.masked_fill(cuda(mask), -1.0), np.where(mask, -1, a).astype(np.float32))
    u = cuda(a)
    u[cuda([1, 3])] = 0.0
    b = a.copy()
    b[[1, 3]] = 0
    check(u, b)
    with pytest.raises(IndexError):
        t[cuda([7])]
    with pytest.raises(RuntimeError, match="out of bounds|index 9"):
        jt.gather(t, 1, cuda([[9]]))


# -- autograd on the device ---------------------------------------------------------------------
def test_backward_runs_on_the_device():
    w = jt.tensor(RNG.standard_normal((3, 2)).astype(np.float32), device="cuda",
                  requires_grad=True)
    x = cuda(RNG.standard_normal((4, 3)).astype(np.float32))
    loss = jt.log_softmax(x @ w, dim=1)[:, 0].sum()
    loss.backward()
    assert w.grad.is_cuda
    wc = w.detach().cpu().requires_grad_()
    jt.log_softmax(x.cpu() @ wc, dim=1)[:, 0].sum().backward()
    check(w.grad, wc.grad, rtol=1e-5)


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64, jt.float16])
def test_gradients_of_repeated_indices_add_up_on_the_device(dtype):
    """The backward of gathers adds into repeated positions with atomic adds (float16 in a
    float32 buffer)."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = cuda(a, dtype).requires_grad_()
    idx = cuda([2, 0, 2, 2], jt.int64)
    (x[:, idx] * cuda([1.0, 2.0, 3.0, 4.0], dtype)).sum().backward()
    check(x.grad, np.array([[2, 0, 8], [2, 0, 8]], dtype.np))
    g = cuda(a, dtype).requires_grad_()
    g.gather(1, cuda([[0, 0], [2, 2]], jt.int64)).sum().backward()
    check(g.grad, np.array([[2, 0, 0], [0, 0, 2]], dtype.np))


@pytest.mark.parametrize("dtype", [jt.float32, jt.int64])
def test_scatter_and_index_ops_match_the_cpu(dtype):
    x = np.arange(12).reshape(3, 4).astype(dtype.np)
    src = (np.arange(8).reshape(2, 4) * 10).astype(dtype.np)
    index = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
    for ns_x, ns in ((cuda(x), cuda), (jt.tensor(x), jt.tensor)):
        got = [ns_x.scatter_add(0, ns(index), ns(src)), ns_x.scatter(0, ns(index), ns(src)),
               ns_x.scatter(1, ns(index[:, :1].copy()), 5),
               ns_x.index_add(0, ns([2, 2]), ns(src), alpha=3),
               ns_x.index_copy(1, ns([3, 0]), ns(src.T[:3].copy())),
               ns_x.index_fill(1, ns([1]), -1)]
        if ns is cuda:
            on_device = got
    for d, c in zip(on_device, got, strict=False):
        check(d, c)
    t = cuda(x)
    t.index_add_(0, cuda([0]), cuda(src[:1]))
    check(t, x + np.vstack([src[:1], np.zeros((2, 4), dtype.np)]))


@pytest.mark.parametrize("dtype", [jt.float16, jt.float32, jt.float64], ids=str)
def test_vector_index_embedding_and_their_gradients(dtype):
    """x[index], index_select and nn.Embedding on the device against the CPU: values, and
    gradients added up over repeated rows by the take_add kernel (float16 through float32
    atomics; its CPU reference is float32)."""
    from jitensor import nn
    a = np.arange(12).reshape(4, 3)
    idx = [3, -1, 0, 3]
    results = []
    for device, kind in (("cuda", dtype), ("cpu", jt.float32 if dtype is jt.float16 else dtype)):
        x = jt.tensor(a, dtype=kind, device=device, requires_grad=True)
        y = x[jt.tensor(idx, device=device)] * 2 + jt.index_select(x, 1, jt.tensor(
            [2, 0, 2], device=device)).sum()
        y.sum().backward()
        emb = nn.Embedding.from_pretrained(jt.tensor(a, dtype=kind, device=device),
                                           freeze=False, padding_idx=0)
        emb(jt.tensor([[1, 0], [1, 3]], device=device)).sum().backward()
        results.append((y.detach(), x.grad, emb.weight.grad))
    for got, want in zip(*results, strict=False):
        check(got.float() if dtype is jt.float16 else got, want)


def test_inplace_on_views_and_version_counters():
    """In-place writes through views rewrite the base's history on the device as on the CPU,
    and device views share their storage's version counter."""
    a = RNG.standard_normal((2, 3))
    results = []
    for device in ("cpu", "cuda"):
        x = jt.tensor(a, requires_grad=True, device=device)
        w = jt.tensor([0.5, -2.0], device=device, requires_grad=True)
        y = x * 2
        y[:, 0] *= w
        y.t()[2].add_(w)
        v = y[1]
        y.mul_(x)  # v is taken again from y's new history
        (v.sum() + (y * y).sum()).backward()
        results.append((y.detach(), x.grad, w.grad))
        z = (x * 1)[0].exp()  # saves its result: written through an alias below
        z.detach()[1:].zero_()
        assert z._version == 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
    for want, got in zip(*results, strict=False):
        check(got, want.numpy(), rtol=1e-12, atol=1e-12)


def test_accumulate_in_every_dtype():
    from jitensor.kernels.cuda import indexing
    for dtype in (jt.int8, jt.int32, jt.int64):
        out = cuda([1, 2, 3], dtype)
        indexing.accumulate(out._data, cuda([0, 2, 2, 0, 0], jt.int64)._data,
                            cuda([5, 1, 1, 1, 1], dtype)._data)
        check(out, np.array([8, 2, 5], dtype.np))


# -- memory and interop ---------------------------------------------------------------------
def test_memory_returns_to_its_level_and_cache_empties():
    base = jt.cuda.memory_allocated()
    t = jt.empty(1000, device="cuda")
    assert jt.cuda.memory_allocated() == base + 4096  # 4000 bytes in 512-byte blocks
    view = t[10:20]
    del t
    assert jt.cuda.memory_allocated() == base + 4096  # a view keeps its block
    del view
    assert jt.cuda.memory_allocated() == base
    assert jt.cuda.memory_reserved() >= 4096
    jt.cuda.empty_cache()
    assert jt.cuda.memory_reserved() == jt.cuda.memory_allocated()
    assert jt.cuda.max_memory_allocated() >= base + 4096


def test_products_keep_their_small_index_maps_on_the_device(monkeypatch):
    """A product's index map (which matrix of each operand) is copied to the device once and
    kept: later products of the same batch shape copy nothing to the device."""
    from jitensor.kernels import cuda as backend
    monkeypatch.setattr(backend.linalg, "_maps", {})  # none kept yet, whatever ran before
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    x = cuda(a)
    x @ x.mT  # keeps the maps of this batch shape
    copies = []
    real = backend.from_numpy
    monkeypatch.setattr(backend, "from_numpy", lambda h: copies.append(h) or real(h))
    check(x @ x.mT, a @ a.transpose(0, 2, 1), rtol=1e-5)
    assert not copies
    b = RNG.standard_normal((5, 1, 3, 4)).astype(np.float32)  # a new broadcast: new maps
    check(cuda(b) @ x.mT, b @ a.transpose(0, 2, 1), rtol=1e-5)
    assert len(copies) == 3  # b itself, and the two maps


def test_out_of_memory_names_the_size_and_the_fix():
    before = jt.cuda.memory_allocated()
    with pytest.raises(jt.cuda.OutOfMemoryError,
                       match=r"Tried to allocate 4\.00 TiB.*empty_cache"):
        jt.empty(1 << 40, device="cuda")
    assert jt.cuda.memory_allocated() == before  # the failed block is not counted as freed
    jt.ones(3, device="cuda")  # still usable afterwards


def test_cuda_array_interface_and_dlpack():
    t = cuda(np.arange(6, dtype=np.float32).reshape(2, 3))
    face = t.__cuda_array_interface__
    assert face["shape"] == (2, 3) and face["typestr"] == "<f4" and face["strides"] is None
    assert face["data"][0] == t.data_ptr() and t.T.__cuda_array_interface__["strides"] == (4, 12)
    assert not hasattr(jt.ones(2), "__cuda_array_interface__")
    host = np.arange(3.0)
    shared = jt.from_dlpack(host)  # CPU: zero-copy both ways
    shared[0] = 5
    assert host[0] == 5 and np.from_dlpack(shared)[0] == 5


def test_device_api():
    assert jt.cuda.device_count() >= 1 and jt.cuda.current_device() == 0
    with jt.cuda.device(0):
        assert jt.zeros(1, device="cuda").device == jt.device("cuda:0")
    jt.cuda.synchronize()
    s = jt.cuda.current_stream()
    s.synchronize()
    assert isinstance(jt.cuda.get_device_name(), str)


def test_devices_other_than_cuda0_are_refused_not_misplaced(monkeypatch):
    import jitensor.cuda as jc
    monkeypatch.setattr(jc, "_probe", lambda: (2, ""))  # a machine with two GPUs
    for call in (lambda: jt.zeros(2, device="cuda:1"), lambda: jt.cuda.set_device(1),
                 lambda: jt.cuda.device(1).__enter__(), lambda: jt.cuda.Stream(device=1),
                 lambda: jt.cuda.memory_allocated(1), lambda: jt.cuda.synchronize("cuda:1"),
                 lambda: jt.cuda.get_device_name(1), lambda: jt.cuda.current_stream(1)):
        with pytest.raises(RuntimeError, match="CUDA_VISIBLE_DEVICES=1 and use cuda:0"):
            call()
    assert jt.cuda.current_device() == 0
    for index in (None, -1):  # no change, as in torch
        with jt.cuda.device(index):
            assert jt.cuda.current_device() == 0
    assert jt.cuda.memory_allocated("cuda:0") == jt.cuda.memory_allocated()
    with pytest.raises(RuntimeError, match="invalid device ordinal: cuda:2"):
        jt.zeros(2, device="cuda:2")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_optimizer_steps_match_the_cpu(name):
    w0 = RNG.standard_normal((3, 2)).astype(np.float32)
    params = []
    for device in ("cuda", "cpu"):
        w = jt.tensor(w0, device=device, requires_grad=True)
        opt = getattr(jt.optim, name)([w], lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
        for _ in range(2):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        params.append(w.detach())
    check(params[0], params[1], rtol=1e-5)


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (5, 9, 3), (9, 4, 17), (16, 16, 16)])
def test_float32_tiled_matmul_edges(m, k, n):
    """Sizes off the tile grid (partial tiles in m, n and k) and batched broadcasting."""
    a = RNG.standard_normal((2, m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    check(cuda(a) @ cuda(b), a @ b, rtol=1e-5, atol=1e-5)
    check(cuda(b).T @ cuda(a[0]).T, b.T @ a[0].T, rtol=1e-5, atol=1e-5)


# -- user-written kernels (jitensor/custom.py) ---------------------------------------------
def test_user_elementwise_ops_on_the_device():
    from custom_ops_module import gelu, low_bit, mad, positive
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    check(gelu(cuda(x)), gelu(jt.tensor(x)), rtol=1e-5)
    check(gelu(cuda(x).T), gelu(jt.tensor(x).T), rtol=1e-5)  # strided
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    check(mad(cuda(i), cuda([1, 2, 3], jt.int32)), mad(jt.tensor(i), jt.tensor([1, 2, 3],
                                                                               dtype=jt.int32)))
    check(mad(cuda(i), 2), mad(jt.tensor(i), 2))
    check(positive(cuda(x)), x > 0)
    out = jt.empty(3, 4, device="cuda")
    gelu(cuda(x), out=out)
    check(out, gelu(jt.tensor(x)), rtol=1e-5)
    with pytest.raises(RuntimeError, match="low_bit"):
        low_bit(cuda(x))


def test_user_reductions_and_gradients_on_the_device():
    from custom_ops_module import gelu, largest, sum_of_squares
    x = RNG.standard_normal((3, 4, 2)).astype(np.float32)
    for dim in (None, 1, (0, 2)):
        args = {} if dim is None else {"dim": dim}
        check(sum_of_squares(cuda(x), **args), sum_of_squares(jt.tensor(x), **args), rtol=1e-5)
        check(largest(cuda(x), **args), largest(jt.tensor(x), **args))
    w = jt.tensor(x, device="cuda", requires_grad=True)
    gelu(w).sum().backward()
    wc = jt.tensor(x, requires_grad=True)
    gelu(wc).sum().backward()
    check(w.grad, wc.grad, rtol=1e-5)


def test_compiled_chains_fuse_on_the_device():
    from custom_ops_module import chain, fused_chain
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y = RNG.standard_normal(4).astype(np.float32)
    xs = [jt.tensor(x, device=d, requires_grad=True) for d in ("cuda", "cpu")]
    ys = [jt.tensor(y, device=d, requires_grad=True) for d in ("cuda", "cpu")]
    fused, eager = fused_chain(xs[0], ys[0]), chain(xs[1], ys[1])
    assert fused.device.type == "cuda" and type(fused.grad_fn).__name__ == "FusedBackward0"
    check(fused.detach(), eager.detach(), rtol=1e-6)
    fused.sum().backward()
    eager.sum().backward()
    check(xs[0].grad, xs[1].grad, rtol=1e-5, atol=1e-7)
    check(ys[0].grad, ys[1].grad, rtol=1e-5, atol=1e-7)


def test_save_and_load_keep_the_device(tmp_path):
    t = cuda(np.arange(6, dtype=np.float32).reshape(2, 3))
    jt.save({"w": t, "b": t[0]}, tmp_path / "s.jt")
    back = jt.load(tmp_path / "s.jt")
    assert back["w"].is_cuda
    check(back["w"], t.cpu())
    on_cpu = jt.load(tmp_path / "s.jt", map_location="cpu")
    assert on_cpu["b"].is_cpu and on_cpu["b"].tolist() == [0.0, 1.0, 2.0]
    check(jt.load(tmp_path / "s.jt", map_location="cuda:0")["b"], t[0].cpu())


def test_overlapping_in_place_reads_a_snapshot():
    a = np.arange(6, dtype=np.float32)
    t = cuda(a)
    t[1:] += t[:-1]  # the output overlaps the input shifted by one element
    want = a.copy()
    want[1:] += a[:-1]
    check(t, want)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "argmin", "var"])
def test_reductions_over_leading_dims_and_float16(name):
    a = RNG.standard_normal((7, 6)).astype(np.float32)
    fn = getattr(jt, name)
    check(fn(cuda(a), dim=0), fn(jt.tensor(a), dim=0), rtol=1e-5)  # one thread per column
    h = a.astype(np.float16)
    got = fn(cuda(h), dim=1)
    want = fn(jt.tensor(h.astype(np.float32)), dim=1)  # float16 accumulates wider
    if name != "argmin":
        assert got.dtype is jt.float16
        got = got.to(jt.float32)
    check(got, want, rtol=2e-3, atol=2e-3)
    if name == "sum":
        check(jt.softmax(cuda(h), dim=1).float(), jt.softmax(jt.tensor(a), dim=1), rtol=2e-3,
              atol=2e-3)


def test_float32_vector_path_and_its_fallbacks():
    """Dense float32 of a length divisible by 4 takes 128-bit accesses; an odd length, an
    offset view or another dtype takes the one-element loop: all give the same values."""
    a = RNG.standard_normal(24).astype(np.float32)
    b = RNG.standard_normal(24).astype(np.float32)
    for lo, hi in ((0, 24), (0, 23), (4, 24), (1, 21)):
        x, y = cuda(a)[lo:hi], cuda(b)[lo:hi]
        check(x + y, a[lo:hi] + b[lo:hi])
        check(x * 3, a[lo:hi] * 3)
        check(jt.exp(x), np.exp(a[lo:hi]), rtol=2e-6)
        check(jt.clamp(x, -0.5, 0.5), np.clip(a[lo:hi], -0.5, 0.5))
