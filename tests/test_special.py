"""jitensor.special against torch.special: values, dtypes, gradients, both devices.

Each function is a row of the op table (one kernel per device); its scalar definition is tested
over every branch in tests/test_special_scalar.py. Here: the ops as torch users call them."""
import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

POINTS = [-3.7, -1.2, -0.4, 0.0, 0.3, 0.9, 1.5, 2.5, 7.5, 12.0]
UNARY = ["bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfcx", "exp2", "expit",
         "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "ndtr", "psi", "sinc"]
# arguments inside each function's domain (elsewhere both give NaN, compared as such)
DOMAIN = {"ndtri": [0.001, 0.1, 0.5, 0.9, 0.999], "erfinv": [-0.99, -0.5, 0.0, 0.3, 0.999],
          "logit": [0.01, 0.2, 0.5, 0.9]}
# float64 tolerances: the algorithms are torch's (Cephes); lgamma near its zeros and digamma
# near its root differ in the last digits (tests/test_special_scalar.py has the ulp budgets)
RTOL = {"gammaln": 1e-12, "psi": 1e-12, "digamma": 1e-12, "ndtr": 1e-12}  # (ndtr: Cephes'
# erfc form in the lower tail, torch's erf form differs by a few ulp there)


def _both(values, dtype):
    return jt.tensor(values, dtype=dtype), torch.tensor(values, dtype=getattr(torch, dtype.name))


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
@pytest.mark.parametrize("name", UNARY + list(DOMAIN))
def test_unary_matches_torch(name, dtype):
    """float32 against torch's float64 values rounded: jitensor computes the Cephes functions
    in float64 for float32 (torch's own float32 kernels are off by up to ~1e-4 relative in
    ndtr's and log_ndtr's tails)."""
    x, tx = _both(DOMAIN.get(name, POINTS), dtype)
    got = getattr(jt.special, name)(x)
    want = getattr(torch.special, name)(tx.double()).to(tx.dtype)
    assert got.dtype is dtype and tuple(got.shape) == tuple(want.shape)
    assert getattr(torch.special, name)(tx).dtype == want.dtype
    rtol = RTOL.get(name, 1e-13) if dtype is jt.float64 else 2e-6
    # sinc computes in float32 for float32, as torch: pi x rounds (sinc(12) is 2.5e-9)
    atol = 1e-300 if dtype is jt.float64 else 1e-8 if name == "sinc" else 1e-30
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", ["i0e", "ndtr", "entr", "sinc", "bessel_j0"])
def test_integer_inputs_give_the_default_float_dtype(name):
    got = getattr(jt.special, name)(jt.tensor([0, 1, 3]))
    want = getattr(torch.special, name)(torch.tensor([0, 1, 3]))
    assert got.dtype is jt.float32 and want.dtype is torch.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_binary_functions_broadcast_as_torch():
    x, tx = _both([[0.0], [0.5], [2.0]], jt.float64)
    y, ty = _both([-1.0, -0.5, 0.0, 3.0], jt.float64)
    got = jt.special.xlog1py(x, y)
    np.testing.assert_allclose(got.numpy(), torch.special.xlog1py(tx, ty).numpy(), rtol=1e-15,
                               equal_nan=True)
    s, ts = _both([2.0, 3.5], jt.float64)
    q, tq = _both([[1.0], [2.5], [-1.5]], jt.float64)
    np.testing.assert_allclose(jt.special.zeta(s, q).numpy(), torch.special.zeta(ts, tq).numpy(),
                               rtol=1e-14, equal_nan=True)
    assert jt.special.zeta(2.0, q).shape == (3, 1)


@pytest.mark.parametrize("name", ["digamma", "erfinv", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri",
                                  "log_ndtr", "erfcx", "entr", "sinc", "gammaln"])
def test_gradients_match_torch(name):
    values = DOMAIN.get(name, [0.0 if name in ("i1", "i1e", "sinc") else 0.2, 0.7, 1.9, 3.1])
    x = jt.tensor(values, dtype=jt.float64, requires_grad=True)
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (g,) = jt.autograd.grad(getattr(jt.special, name)(x).sum(), x)
    (tg,) = torch.autograd.grad(getattr(torch.special, name)(tx).sum(), tx)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-9)


def test_binary_gradients_match_torch():
    x = jt.tensor([0.0, 0.5, 2.0], dtype=jt.float64, requires_grad=True)
    y = jt.tensor([-1.0, 0.5, 3.0], dtype=jt.float64, requires_grad=True)
    tx, ty = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, y))
    got = jt.autograd.grad(jt.special.xlog1py(x, y).sum(), (x, y))
    want = torch.autograd.grad(torch.special.xlog1py(tx, ty).sum(), (tx, ty))
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, equal_nan=True)
    q = jt.tensor([1.5, 2.0], dtype=jt.float64, requires_grad=True)
    tq = torch.tensor([1.5, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = jt.autograd.grad(jt.special.zeta(3.0, q).sum(), q)
    (tg,) = torch.autograd.grad(torch.special.zeta(3.0, tq).sum(), tq)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)
    s = jt.tensor([3.0], dtype=jt.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="zeta"):
        jt.autograd.grad(jt.special.zeta(s, q).sum(), s)


def test_second_derivatives_run_through_the_expressions():
    x = jt.tensor([0.4, 1.3], dtype=jt.float64, requires_grad=True)
    (g,) = jt.autograd.grad(jt.lgamma(x).sum(), x, create_graph=True)
    (gg,) = jt.autograd.grad(g.sum(), x)
    tx = torch.tensor([0.4, 1.3], dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.lgamma(tx).sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-8)


def test_bessel_j_is_not_differentiable_as_in_torch():
    x = jt.tensor([0.5, 1.0], requires_grad=True)
    assert not jt.special.bessel_j0(x).requires_grad
    assert not torch.special.bessel_j0(torch.tensor([0.5], requires_grad=True)).requires_grad


def test_tensor_methods_follow_torch():
    """Tensor has the methods torch's Tensor has (lgamma, i0, sinc, ... and their in-place
    forms), not the torch.special-only functions."""
    x = jt.tensor([0.5, 1.5])
    for name in ("lgamma", "digamma", "erfinv", "i0", "sinc", "xlogy"):
        assert hasattr(jt.Tensor, name) == hasattr(torch.Tensor, name), name
    for name in ("lgamma_", "digamma_", "erfinv_", "i0_", "sinc_"):
        y = x.clone()
        getattr(y, name)()
        np.testing.assert_allclose(y.numpy(), getattr(jt, name[:-1])(x).numpy())
    for name in ("ndtr", "i0e", "erfcx", "entr", "bessel_j0", "xlog1py", "zeta"):
        assert not hasattr(jt.Tensor, name) and not hasattr(torch.Tensor, name)
        assert not hasattr(jt, name)


def test_the_namespace_is_torch_special():
    names = {n for n in dir(torch.special) if not n.startswith("_")} - {
        "Tensor", "torch", "common_args", "multi_dim_common"}
    have = set(jt.special.__all__)
    assert have <= names
    for name in names - have:  # the rest raise naming what is missing
        with pytest.raises(AttributeError, match=f"special.{name} is not implemented"):
            getattr(jt.special, name)
    assert len(have) >= 32


@pytest.mark.cuda
@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
@pytest.mark.parametrize("name", ["lgamma", "digamma", "i0e", "i1", "ndtr", "ndtri", "erfcx",
                                  "bessel_j1", "xlog1py", "zeta"])
def test_cuda_matches_the_cpu(name):
    fn = getattr(jt.special, name)
    args = [jt.tensor([0.1, 0.6, 2.5], dtype=jt.float64)]
    if name in ("xlog1py", "zeta"):
        args.append(jt.tensor([1.5, 2.0, 0.5], dtype=jt.float64))
    got = fn(*(a.to("cuda") for a in args))
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), fn(*args).numpy(), rtol=1e-13)
