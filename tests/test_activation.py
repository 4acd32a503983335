"""nn.functional's pointwise activations (ops/activation.py): values against NumPy formulas in
float64 (the oracle everywhere) and against torch where it is installed, dtypes and shapes,
gradients (first order against torch and finite differences, second order against torch),
in-place forms, modules and their reprs, bad input. CUDA runs of the same ops are in
test_cuda.py."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitensor as jt
from jitensor import nn
from jitensor.nn import functional as F

_erf = np.vectorize(math.erf, otypes=[np.float64])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _elu(x, alpha, scale=1.0, input_scale=1.0):
    return np.where(x > 0, scale * x, scale * alpha * np.expm1(np.minimum(x, 0) * input_scale))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0, x * beta) / beta)


def _hardsigmoid(x):
    return np.clip(x / 6 + 0.5, 0, 1)


# name -> (keyword arguments, NumPy formula in float64)
CASES = {
    "gelu": ({}, lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": ({"approximate": "tanh"}, lambda x: 0.5 * x * (1 + np.tanh(
        math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    "silu": ({}, lambda x: x / (1 + np.exp(-x))),
    "mish": ({}, lambda x: x * np.tanh(_softplus(x))),
    "softplus": ({}, _softplus),
    "softplus_beta": ({"beta": 2.0, "threshold": 5.0}, lambda x: _softplus(x, 2.0, 5.0)),
    "leaky_relu": ({}, lambda x: np.where(x > 0, x, 0.01 * x)),
    "leaky_relu_slope": ({"negative_slope": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x)),
    "elu": ({"alpha": 0.5}, lambda x: _elu(x, 0.5)),
    "selu": ({}, lambda x: _elu(x, SELU_ALPHA, SELU_SCALE)),
    "celu": ({"alpha": 2.0}, lambda x: _elu(x, 2.0, 1.0, 0.5)),
    "logsigmoid": ({}, lambda x: -np.logaddexp(0, -x)),
    "hardsigmoid": ({}, _hardsigmoid),
    "hardswish": ({}, lambda x: x * _hardsigmoid(x)),
    "hardtanh": ({"min_val": -0.5, "max_val": 2.0}, lambda x: np.clip(x, -0.5, 2.0)),
    "relu6": ({}, lambda x: np.clip(x, 0, 6)),
    "threshold": ({"threshold": 1.0, "value": -7.0},
                  lambda x: np.where((x > 1.0) | np.isnan(x), x, -7.0)),
}
SECOND_ORDER = {"gelu", "gelu_tanh", "silu", "mish", "softplus", "softplus_beta", "leaky_relu",
                "leaky_relu_slope", "elu", "selu", "celu", "logsigmoid"}  # (torch has no more)
EDGES = np.array([-30.0, -6.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.3, 1.0, 3.0, 5.0, 6.0, 25.0,
                  np.inf, -np.inf, np.nan])


def _fn(name):
    return getattr(F, name.split("_")[0] if name.split("_")[0] in
                   ("gelu", "softplus", "elu") else name.replace("_slope", ""))


def run(name, x):
    kwargs, _ = CASES[name]
    return _fn(name)(x, **kwargs)


def expected(name, x):
    with np.errstate(all="ignore"):
        return CASES[name][1](np.asarray(x, np.float64))


# float32 atol: gelu's 1 + erf(x / sqrt 2) cancels for x < -4 (as in torch, the same formula)
TOL = {jt.float32: dict(rtol=3e-6, atol=5e-7), jt.float64: dict(rtol=1e-12, atol=1e-300)}
# against torch's float32: its gelu(-3) is 6e-7 off the float64 value (ours 1e-10)
TORCH_TOL = dict(rtol=3e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64], ids=str)
@pytest.mark.parametrize("name", CASES)
def test_values_at_the_edges_match_numpy(name, dtype):
    x = EDGES.astype(dtype.np)
    out = run(name, jt.tensor(x))
    assert out.dtype is dtype and out.shape == x.shape
    np.testing.assert_allclose(out.numpy(), expected(name, x), **TOL[dtype])


@settings(deadline=None, max_examples=25)
@given(data=st.data(), name=st.sampled_from(sorted(CASES)),
       dtype=st.sampled_from([jt.float32, jt.float64]))
def test_values_match_numpy_on_any_shape_and_layout(data, name, dtype):
    x = data.draw(hnp.arrays(dtype.np, hnp.array_shapes(max_dims=4, max_side=6),
                             elements=st.floats(-40, 40, width=dtype.itemsize * 8)))
    t = jt.tensor(x)
    if x.ndim >= 2 and data.draw(st.booleans()):  # a non-contiguous view
        t, x = t.transpose(0, -1), x.swapaxes(0, -1)
    out = run(name, t)
    assert out.dtype is dtype and out.shape == x.shape
    tol = dict(TOL[dtype])
    if name == "gelu_tanh" and x.size:
        # 1 + tanh(u) cancels for u << 0: an absolute error of a few ulps of |x| / 2 in any
        # float64 evaluation (torch's gives jitensor's bits there: gelu_tanh(-5.25))
        tol["atol"] = max(tol["atol"], 4 * np.finfo(np.float64).eps * float(np.abs(x).max()))
    np.testing.assert_allclose(out.numpy(), expected(name, x), **tol)


def test_a_large_input_runs_the_parallel_kernels():
    x = np.linspace(-8, 8, 1 << 17, dtype=np.float32).reshape(256, 512)
    for name in CASES:
        np.testing.assert_allclose(run(name, jt.tensor(x)[:, ::2]).numpy(),
                                   expected(name, x[:, ::2]), **TOL[jt.float32])


def test_float32_erf_is_within_two_ulp():
    """erf's float32 rational function (kernels/scalar/libm.py), used by gelu, over a dense
    grid and tiny arguments."""
    x = np.concatenate([np.linspace(-5, 5, 200_001, dtype=np.float32),
                        np.geomspace(1e-38, 1, 2000).astype(np.float32)])
    want = _erf(x.astype(np.float64))
    ulp = np.abs(jt.tensor(x).erf().numpy() - want) / np.spacing(np.abs(want).astype(np.float32))
    assert ulp.max() <= 2.0
    special = jt.tensor([np.nan, np.inf, -np.inf, -0.0]).erf().numpy()
    assert np.isnan(special[0]) and list(special[1:3]) == [1.0, -1.0] and np.signbit(special[3])


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    x = EDGES[:-3].astype(np.float32)  # (torch's float32 gelu of inf is NaN; ours is inf)
    kwargs, _ = CASES[name]
    fn = getattr(torch.nn.functional, _fn(name).__name__)
    want = fn(torch.from_numpy(x), **kwargs)
    got = run(name, jt.tensor(x)).numpy()
    np.testing.assert_allclose(got, want.numpy(), **TORCH_TOL)
    # -0.0 stays -0.0 as in torch's scalar path (one element): the signs of its vectorised
    # zeros vary with the CPU (its AVX2 gelu of -0.0 and of -30 is +0.0)
    minus_zero = np.array([-0.0], np.float32)
    assert np.signbit(run(name, jt.tensor(minus_zero)).numpy()) == \
        np.signbit(fn(torch.from_numpy(minus_zero), **kwargs).numpy())


GRAD_POINTS = np.array([-7.0, -3.5, -2.9, -1.0, -0.2, 0.4, 1.5, 2.9, 3.5, 7.0, 30.0])


@pytest.mark.parametrize("name", CASES)
def test_gradients_match_torch_and_finite_differences(name):
    x = jt.tensor(GRAD_POINTS, requires_grad=True)
    assert jt.autograd.gradcheck(lambda t: run(name, t), (x,))
    torch = pytest.importorskip("torch")
    kwargs, _ = CASES[name]
    fn = getattr(torch.nn.functional, _fn(name).__name__)
    tx = torch.tensor(GRAD_POINTS, requires_grad=True)
    second = name in SECOND_ORDER
    (g,) = jt.autograd.grad((run(name, x) ** 2).sum(), x, create_graph=second)
    (tg,) = torch.autograd.grad((fn(tx, **kwargs) ** 2).sum(), tx, create_graph=second)
    # (rtol: torch's float64 hardsigmoid gradient takes 1/6 in float32)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-7)
    if second:
        (gg,) = jt.autograd.grad(g.sum(), x)
        (tgg,) = torch.autograd.grad(tg.sum(), tx)
        np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-10, atol=1e-12)


def test_threshold_passes_the_gradient_of_nan_as_torch():
    x = jt.tensor([np.nan, 0.5, 2.0], dtype=jt.float64, requires_grad=True)
    for create_graph in (False, True):  # the fused kernel and the composed formula
        (g,) = jt.autograd.grad(F.threshold(x, 1.0, -5.0).sum(), x, create_graph=create_graph)
        assert g.tolist() == [1.0, 0.0, 1.0]


def test_expm1_keeps_the_sign_of_zero():
    for dtype in (jt.float32, jt.float64):
        out = jt.tensor([-0.0, 0.0, -1e-30, 1e-30], dtype=dtype).expm1().numpy()
        assert list(np.signbit(out)) == [True, False, True, False]
        assert out[2] == np.float32(-1e-30) if dtype is jt.float32 else out[2] == -1e-30
    assert np.signbit(F.elu(jt.tensor([-0.0])).numpy()).all()


def test_gradients_at_the_kinks_follow_torch():
    """Where a piecewise activation switches, the gradient is torch's one-sided choice."""
    x = jt.tensor([-3.0, 0.0, 3.0, 6.0], dtype=jt.float64, requires_grad=True)
    for fn, want in ((F.hardswish, [0, 0.5, 1, 1]), (F.hardsigmoid, [0, 1 / 6, 0, 0]),
                     (F.relu6, [0, 0, 1, 0]), (F.leaky_relu, [0.01, 0.01, 1, 1]),
                     (lambda t: F.threshold(t, 0.0, 1.0), [0, 0, 1, 1]),
                     (F.elu, [math.exp(-3), 1, 1, 1])):
        (g,) = jt.autograd.grad(fn(x).sum(), x)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)


INPLACE = {"silu": {}, "mish": {}, "leaky_relu": {"negative_slope": 0.2},
           "elu": {"alpha": 0.5}, "selu": {}, "celu": {"alpha": 2.0}, "hardsigmoid": {},
           "hardswish": {}, "hardtanh": {"min_val": -0.5, "max_val": 2.0}, "relu6": {},
           "threshold": {"threshold": 0.3, "value": -7.0}}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_forms_write_into_the_input(name):
    fn, kwargs = getattr(F, name), INPLACE[name]
    x = np.array([-4.0, -1.0, 0.5, 2.5, 7.0], np.float32)
    t = jt.tensor(x)
    assert fn(t, inplace=True, **kwargs) is t
    np.testing.assert_allclose(t.numpy(), fn(jt.tensor(x), **kwargs).numpy())
    underscore = getattr(F, name + "_", None)  # torch's F.elu_, F.leaky_relu_, ...
    if underscore is not None:
        u = jt.tensor(x)
        assert underscore(u, **kwargs) is u
        np.testing.assert_allclose(u.numpy(), t.numpy())
    # under autograd: a non-leaf is rebased, its gradient that of the out-of-place op
    a = jt.tensor(x.astype(np.float64), requires_grad=True)
    b = a * 1
    fn(b, inplace=True, **kwargs)
    b.sum().backward()
    a2 = jt.tensor(x.astype(np.float64), requires_grad=True)
    fn(a2, **kwargs).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), a2.grad.numpy())
    with pytest.raises(RuntimeError, match="leaf Variable"):
        fn(jt.tensor(x, requires_grad=True), inplace=True, **kwargs)


def test_dtypes_integers_and_bools():
    ints = jt.tensor([-2, 0, 3, 9])
    for name in ("gelu", "silu", "mish", "softplus", "leaky_relu", "elu", "selu", "celu",
                 "logsigmoid", "hardsigmoid", "hardswish"):
        with pytest.raises(NotImplementedError, match=f"{name}.*int64.*float"):
            getattr(F, name)(ints)
    # threshold and hardtanh keep integer dtypes, taking the parameters truncated (as torch)
    out = F.threshold(ints, 2.5, 7.9)
    assert out.dtype is jt.int64 and out.tolist() == [7, 7, 3, 9]
    out = F.hardtanh(ints, -0.5, 2.5)
    assert out.dtype is jt.int64 and out.tolist() == [0, 0, 2, 2]
    assert F.relu6(ints).tolist() == [0, 0, 3, 6]
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        F.relu6(jt.tensor([True]))
    with pytest.raises(NotImplementedError, match="threshold.*bool"):
        F.threshold(jt.tensor([True]), 0, 0)
    assert F.gelu(jt.zeros(0, 3)).shape == (0, 3)
    assert F.silu(jt.tensor(2.0)).shape == () and F.silu(jt.tensor(2.0)).dtype is jt.float32


def test_bad_arguments_raise_clear_errors_and_write_nothing():
    t = jt.tensor([1.0, -2.0])
    with pytest.raises(RuntimeError, match="approximate.*'none' or 'tanh'.*'exact'"):
        F.gelu(t, approximate="exact")
    with pytest.raises(TypeError, match="approximate.*str, not NoneType"):
        F.gelu(t, approximate=None)
    with pytest.raises(TypeError):
        F.gelu(t, "tanh")  # keyword-only, as in torch
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(t, alpha=0.0)
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(t, alpha=0.0, inplace=True)
    with pytest.raises(ValueError, match=r"min_val \(2.0\) cannot be greater than max_val"):
        F.hardtanh(t, 2.0, 1.0, inplace=True)
    with pytest.raises(ValueError, match="min_val"):
        nn.Hardtanh(2.0, 1.0)
    with pytest.raises(TypeError, match=r"gelu\(\): argument 'input'.*must be Tensor, not list"):
        F.gelu([1.0])
    with pytest.raises(NotImplementedError, match="silu"):
        F.silu(jt.tensor([1, 2]), inplace=True)
    assert t.tolist() == [1.0, -2.0]  # nothing was written by the refused in-place calls


MODULES = [("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()), ("SiLU", (True,)), ("Mish", ()),
           ("Softplus", (2.0, 10.0)), ("LeakyReLU", (0.2,)), ("LeakyReLU", (0.1, True)),
           ("ELU", (0.5,)), ("SELU", ()), ("CELU", (2.0,)), ("CELU", (2.0, True)),
           ("LogSigmoid", ()), ("Hardsigmoid", ()), ("Hardsigmoid", (True,)), ("Hardswish", ()),
           ("Hardswish", (True,)), ("Hardtanh", (-2.0, 2.0)), ("Hardtanh", (-2.0, 2.0, True)),
           ("ReLU6", ()), ("ReLU6", (True,)), ("Threshold", (0.1, 20.0))]


def _bases(cls, module):
    """The public Module classes that cls derives from (ReLU6: Hardtanh)."""
    return [c.__name__ for c in cls.__mro__[1:]
            if issubclass(c, module) and c is not module and not c.__name__.startswith("_")]


@pytest.mark.parametrize("name, args", MODULES)
def test_modules_match_torch_values_and_repr(name, args):
    torch = pytest.importorskip("torch")
    x = np.linspace(-5, 5, 12).reshape(3, 4).astype(np.float32)
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert _bases(type(ours), nn.Module) == _bases(type(theirs), torch.nn.Module)  # isinstance
    np.testing.assert_allclose(ours(jt.tensor(x)).numpy(),
                               theirs(torch.from_numpy(x.copy())).numpy(), **TORCH_TOL)


@pytest.mark.parametrize("name", CASES)
def test_fused_and_recorded_backward_agree(name):
    """Backward runs one kernel; with create_graph=True the rule composes the same formula
    from ops instead (so it can be differentiated again): both give the same gradient."""
    x = jt.tensor(np.concatenate([GRAD_POINTS, -GRAD_POINTS, [0.0, 1.0]]), requires_grad=True)
    loss = (run(name, x) * jt.linspace(-2, 3, x.shape[0], dtype=jt.float64)).sum()
    (fused,) = jt.autograd.grad(loss, x, retain_graph=True)
    (recorded,) = jt.autograd.grad(loss, x, create_graph=True)
    assert fused.dtype is recorded.dtype is jt.float64
    np.testing.assert_allclose(fused.numpy(), recorded.detach().numpy(), rtol=1e-12, atol=1e-15)
    xf = jt.tensor(x.detach().numpy().astype(np.float32), requires_grad=True)
    (g32,) = jt.autograd.grad(run(name, xf).sum(), xf)  # float32 kernels too
    assert g32.dtype is jt.float32
    (g64,) = jt.autograd.grad(run(name, x).sum(), x)
    np.testing.assert_allclose(g32.numpy(), g64.numpy(), rtol=2e-6, atol=1e-6)
