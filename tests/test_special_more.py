"""The rest of torch.special against torch: the Bessel functions of the second kind, the
modified and spherical ones, Airy's Ai, the orthogonal polynomials of (input, n), and the
regularized incomplete gamma functions (gammainc, gammaincc; torch.igamma, igammac and their
Tensor methods).

Each is a row of the op table with its scalar definition in kernels/scalar/special.py. Values:
float64 against torch's float64; the functions computed in float64 (Bessel, Airy, incomplete
gamma) give float32 results that are the float64 ones rounded, compared with torch's float64
results rounded; the polynomials and spherical_bessel_j0 compute in the argument's type as torch
does, compared with torch in that type. One float64, one float32 and one int64 case per function
keeps the kernels compiled few."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

INF, NAN = math.inf, math.nan
RNG = np.random.default_rng(7)

# -- functions of one tensor -------------------------------------------------------------------
BESSEL = ["airy_ai", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
          "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
          "scaled_modified_bessel_k1", "spherical_bessel_j0"]
IN_OWN_TYPE = {"spherical_bessel_j0"}  # computed in the argument's type, as torch
# 0, -0, +-inf, NaN, the algorithms' cut-offs (Airy's +-2.09 and 103.892, 2, 5, 8), tiny and
# large arguments, negatives (NaN for y and k), then random ones
EDGES = [0.0, -0.0, INF, -INF, NAN, 1e-300, 1e-8, 0.3, 0.5, 1.0, 2.0, 2.09, 2.1, 4.99, 5.0,
         5.01, 8.0, 8.01, 25.0, 90.0, 103.89, 103.9, 700.0, 1e5, 1e300, -1e-8, -0.3, -1.0, -2.0,
         -2.09, -2.1, -5.0, -8.5, -30.0, -1e4]
POINTS = np.concatenate([EDGES, RNG.uniform(-12, 12, 200), np.exp(RNG.uniform(-6, 5, 100))])


def _close(got, want, rtol, atol):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", [jt.float64, jt.float32])
@pytest.mark.parametrize("name", BESSEL)
def test_bessel_family_matches_torch(name, dtype):
    with np.errstate(over="ignore"):
        values = POINTS.astype(dtype.np)
    got = getattr(jt.special, name)(jt.tensor(values))
    tfn = getattr(torch.special, name)
    want = tfn(torch.from_numpy(values))
    assert got.dtype is dtype and want.dtype == getattr(torch, dtype.name)
    assert tuple(got.shape) == tuple(want.shape)
    if dtype is jt.float64:
        # near the zeros of y0 and y1 the last bits of log and exp decide: atol
        _close(got.numpy(), want.numpy(), rtol=2e-14, atol=1e-15)
    elif name in IN_OWN_TYPE:
        _close(got.numpy(), want.numpy(), rtol=2.4e-7, atol=0)
    else:  # torch's float64 values rounded: within an ulp either way
        rounded = tfn(torch.from_numpy(values.astype(np.float64))).float().numpy()
        _close(got.numpy(), rounded, rtol=2.4e-7, atol=1e-44)


@given(st.sampled_from(BESSEL),
       st.lists(st.floats(-200, 200, allow_nan=False), min_size=1, max_size=20))
def test_bessel_family_hypothesis(name, xs):
    x = np.array(xs, dtype=np.float64)
    got = getattr(jt.special, name)(jt.tensor(x)).numpy()
    _close(got, getattr(torch.special, name)(torch.from_numpy(x)).numpy(), 2e-14, 1e-15)


def test_bessel_special_values():
    """Poles, domains and limits: y0, y1 are -inf at +-0 and NaN below; k0, k1 inf at +-0, NaN
    below, 0 at inf; j0's spherical form 1 at 0 and 0 at +-inf; Ai NaN at +-inf, 0 beyond
    103.892."""
    s = jt.special
    x = jt.tensor([0.0, -0.0, -1.0, INF, NAN], dtype=jt.float64)

    def values(name):
        return getattr(s, name)(x).tolist()

    for name, want in (("bessel_y0", [-INF, -INF, NAN, NAN, NAN]),
                       ("bessel_y1", [-INF, -INF, NAN, NAN, NAN]),
                       ("modified_bessel_k0", [INF, INF, NAN, 0.0, NAN]),
                       ("scaled_modified_bessel_k1", [INF, INF, NAN, 0.0, NAN]),
                       ("spherical_bessel_j0", [1.0, 1.0, math.sin(1.0), 0.0, NAN]),
                       ("airy_ai", [0.355028053887817239260, 0.355028053887817239260, None, NAN,
                                    NAN])):
        got = values(name)
        for g, w in zip(got, want, strict=True):
            assert w is None or (math.isnan(g) if math.isnan(w) else g == w), (name, got)
    assert s.airy_ai(jt.tensor([103.9, 104.0])).tolist() == [0.0, 0.0]


def test_integer_inputs_give_the_default_float_dtype():
    x = jt.tensor([0, 1, 3, -2])
    for name in ("airy_ai", "bessel_y0", "modified_bessel_k1", "spherical_bessel_j0"):
        got, want = getattr(jt.special, name)(x), getattr(torch.special, name)(torch.tensor(
            [0, 1, 3, -2]))
        assert got.dtype is jt.float32 and want.dtype == torch.float32
        _close(got.numpy(), want.numpy(), rtol=2.4e-7, atol=1e-44)


# -- orthogonal polynomials ----------------------------------------------------------------------
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]
# x at the closed forms' points (+-1, 0, 0.5, 1), inside and outside [-1, 1], large, infinite;
# n from each branch's cut-offs (4, 6, 8), past hermite's limits (128 in float32, 512), negative,
# non-integer (truncated toward 0), and what x86's cast to int64 makes 0 (NaN, inf, 1e30)
X_POLY = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.3, 0.25, 0.75, 0.999, 1.001, 2.0, -2.0, 10.0, -3.5,
          1e10, INF, -INF] + list(RNG.uniform(-1.5, 1.5, 12))
N_POLY = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 20.0, 50.0, 100.0, 129.0,
          600.0, -1.0, -0.5, 0.9, 2.7, -2.7, NAN, INF, -INF, 1e30, -1e30]


@pytest.mark.parametrize("dtype", [jt.float64, jt.float32])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(name, dtype):
    """torch computes them in the argument's type, with fused multiply-adds where the CPU has
    them; so do these (bit for bit here, within a few ulp where libm's cos or acos differ)."""
    xx, nn = (a.ravel().astype(dtype.np) for a in np.meshgrid(X_POLY, N_POLY))
    got = getattr(jt.special, name)(jt.tensor(xx), jt.tensor(nn))
    want = getattr(torch.special, name)(torch.from_numpy(xx), torch.from_numpy(nn))
    assert got.dtype is dtype and want.dtype == getattr(torch, dtype.name)
    rtol = 1e-12 if dtype is jt.float64 else 4e-6
    _close(got.numpy(), want.numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_of_nan_is_nan(name):
    """Degree 0 is 1 and negative degrees 0, as torch; above, NaN (torch's recurrences return a
    variable they never set when x is NaN: NaN or whatever the register held)."""
    n = jt.tensor([0.0, -1.0, 1.0, 2.0, 3.0, 7.0, 12.0], dtype=jt.float64)
    got = getattr(jt.special, name)(jt.full((7,), NAN, dtype=jt.float64), n).tolist()
    assert got[:2] == [1.0, 0.0] and all(math.isnan(v) for v in got[2:])


@given(st.sampled_from(POLYNOMIALS),
       st.lists(st.tuples(st.floats(-3, 3), st.integers(-2, 40)), min_size=1, max_size=20))
def test_polynomials_hypothesis(name, pairs):
    x = np.array([p[0] for p in pairs], dtype=np.float64)
    n = np.array([p[1] for p in pairs], dtype=np.float64)
    got = getattr(jt.special, name)(jt.tensor(x), jt.tensor(n)).numpy()
    want = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(n)).numpy()
    _close(got, want, rtol=1e-12, atol=1e-12)


def test_polynomial_n_broadcasts_and_may_be_a_number():
    x = np.array([[-0.7], [0.2], [1.3]])
    n = np.array([0.0, 1.0, 5.0, 11.0])
    got = jt.special.legendre_polynomial_p(jt.tensor(x), jt.tensor(n))
    want = torch.special.legendre_polynomial_p(torch.from_numpy(x), torch.from_numpy(n))
    assert tuple(got.shape) == (3, 4)
    _close(got.numpy(), want.numpy(), rtol=1e-13, atol=0)
    for n in (3, 3.9, -1):  # a Python number: truncated, as a tensor of x's dtype
        got = jt.special.hermite_polynomial_he(jt.tensor(x), n)
        assert got.dtype is jt.float64
        _close(got.numpy(), torch.special.hermite_polynomial_he(torch.from_numpy(x), n).numpy(),
               rtol=1e-13, atol=0)
    got = jt.special.chebyshev_polynomial_t(0.5, jt.tensor([[2], [3]]))  # x a number
    want = torch.special.chebyshev_polynomial_t(0.5, torch.tensor([[2], [3]]))
    assert got.dtype is jt.float32 and want.dtype == torch.float32
    _close(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


def test_polynomial_dtypes_promote_as_torch():
    """float32 x with int64 n stays float32; int64 x and n give the default float dtype; a
    float64 n promotes a float32 x."""
    x, tx = jt.tensor([0.3, -1.2, 2.0]), torch.tensor([0.3, -1.2, 2.0])
    i, ti = jt.tensor([4, 2, 7]), torch.tensor([4, 2, 7])
    for a, b, ta, tb in ((x, i, tx, ti), (i, i, ti, ti), (x, i.double(), tx, ti.double())):
        got = jt.special.laguerre_polynomial_l(a, b)
        want = torch.special.laguerre_polynomial_l(ta, tb)
        assert got.dtype.name == str(want.dtype).removeprefix("torch."), (a.dtype, b.dtype)
        _close(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_hermite_limits_follow_the_dtype():
    """torch gives NaN beyond n = 128 in float32 and n = 512 in float64."""
    for dtype, limit in ((jt.float32, 128), (jt.float64, 512)):
        n = np.array([limit, limit + 1], dtype=dtype.np)
        x = np.array([1e-3, 1e-3], dtype=dtype.np)
        got = jt.special.hermite_polynomial_he(jt.tensor(x), jt.tensor(n)).numpy()
        want = torch.special.hermite_polynomial_he(torch.from_numpy(x), torch.from_numpy(n))
        _close(got, want.numpy(), rtol=1e-5, atol=0)
        assert math.isnan(got[1])
    assert math.isfinite(jt.special.hermite_polynomial_he(jt.tensor([1e-3], dtype=jt.float64),
                                                          129).item())


# -- the regularized incomplete gamma functions ------------------------------------------------
A_EDGES = [0.0, 1e-10, 0.5, 1.0, 2.0, 25.0, 150.0, 250.0, 1000.0, 1e5, INF, NAN, -1.0]
X_EDGES = [0.0, 1e-10, 0.3, 0.5, 0.7, 1.0, 1.1, 1.5, 24.0, 160.0, 240.0, 1010.0, 1e5, INF, NAN,
           -1.0]


def _igamma_grid():
    a = np.concatenate([A_EDGES, np.exp(RNG.uniform(-4, 7, 30))])
    x = np.concatenate([X_EDGES, np.exp(RNG.uniform(-4, 7, 30))])
    return [m.ravel() for m in np.meshgrid(a, x)]


@pytest.mark.parametrize("dtype", [jt.float64, jt.float32])
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_matches_torch(name, dtype):
    """Every branch: the boundary values, the series, the continued fraction, Temme's expansion
    (a > 20 and x near a). float64: within 1e-11 relative (x^a e^-x / Gamma(a) through lgamma,
    whose last bits differ from the C library's, amplified where a log x - x - lgamma(a) is
    large)."""
    a, x = (v.astype(dtype.np) for v in _igamma_grid())
    got = getattr(jt.special, name)(jt.tensor(a), jt.tensor(x))
    tfn = getattr(torch.special, name)
    assert got.dtype is dtype and tfn(torch.from_numpy(a), torch.from_numpy(x)).dtype == \
        getattr(torch, dtype.name)
    want = tfn(torch.from_numpy(a.astype(np.float64)), torch.from_numpy(x.astype(np.float64)))
    if dtype is jt.float64:
        _close(got.numpy(), want.numpy(), rtol=1e-11, atol=1e-300)
    else:
        _close(got.numpy(), want.float().numpy(), rtol=2.4e-7, atol=1e-44)


@given(st.lists(st.tuples(st.floats(0, 300), st.floats(0, 400)), min_size=1, max_size=20))
def test_incomplete_gamma_hypothesis(pairs):
    a = np.array([p[0] for p in pairs])
    x = np.array([p[1] for p in pairs])
    for name in ("gammainc", "gammaincc"):
        got = getattr(jt.special, name)(jt.tensor(a), jt.tensor(x)).numpy()
        want = getattr(torch.special, name)(torch.from_numpy(a), torch.from_numpy(x)).numpy()
        _close(got, want, rtol=1e-11, atol=1e-300)


def test_boundary_values_are_torchs():
    """SciPy's boundary values, in torch's order of checks (so igamma(inf, NaN) is 0 and
    igamma(NaN, inf) 1)."""
    a = [0.0, 0.0, 2.0, INF, INF, NAN, INF, 1.0, -1.0]
    x = [3.0, 0.0, 0.0, 5.0, INF, INF, NAN, -1.0, 1.0]
    ta, tx = torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)
    for fn, tfn in ((jt.igamma, torch.igamma), (jt.igammac, torch.igammac)):
        got = fn(jt.tensor(a, dtype=jt.float64), jt.tensor(x, dtype=jt.float64))
        _close(got.numpy(), tfn(ta, tx).numpy(), rtol=0, atol=0)


def test_igamma_names_methods_and_out():
    """torch.igamma/igammac are the top-level names (torch.special's gammainc/gammaincc), with
    Tensor methods, in-place forms and out=."""
    assert jt.special.gammainc is jt.igamma and jt.special.gammaincc is jt.igammac
    for name in ("igamma", "igammac", "igamma_", "igammac_"):
        assert hasattr(jt.Tensor, name) and hasattr(torch.Tensor, name)
    a = jt.tensor([0.5, 2.0, 7.5], dtype=jt.float64)
    x = jt.tensor([[0.3], [4.0]], dtype=jt.float64)
    ta, tx = torch.from_numpy(a.numpy()), torch.from_numpy(x.numpy())
    _close(a.igamma(x).numpy(), ta.igamma(tx).numpy(), 1e-14, 0)
    out = jt.empty(2, 3, dtype=jt.float64)
    assert jt.special.gammaincc(a, x, out=out) is out
    _close(out.numpy(), torch.special.gammaincc(ta, tx).numpy(), 1e-14, 0)
    b = jt.tensor([1.5, 3.0], dtype=jt.float64)
    y = jt.tensor([2.0, 2.0], dtype=jt.float64)
    assert b.igammac_(y) is b
    _close(b.numpy(), torch.igammac(torch.tensor([1.5, 3.0], dtype=torch.float64),
                                    torch.tensor([2.0, 2.0], dtype=torch.float64)).numpy(),
           1e-14, 0)


def test_igamma_dtypes_follow_torch():
    """Floating operands only (an integer operand promotes with a float one), as torch."""
    x = jt.tensor([0.5, 2.0])
    got = jt.special.gammainc(jt.tensor([1, 2]), x)
    want = torch.special.gammainc(torch.tensor([1, 2]), torch.tensor([0.5, 2.0]))
    assert got.dtype is jt.float32 and want.dtype == torch.float32
    _close(got.numpy(), want.numpy(), rtol=2.4e-7, atol=0)
    assert jt.special.gammainc(x, x.double()).dtype is jt.float64
    with pytest.raises(NotImplementedError, match="igamma"):
        jt.igamma(jt.tensor([1, 2]), jt.tensor([1, 2]))
    with pytest.raises(NotImplementedError):
        torch.igamma(torch.tensor([1, 2]), torch.tensor([1, 2]))


def test_igamma_gradient_is_torchs():
    """d/dx igamma(a, x) = x^(a-1) e^-x / Gamma(a) (negated for igammac); a has none, as in
    torch (NotImplementedError)."""
    a = [0.5, 2.0, 7.5]
    x = [0.3, 4.0, 6.0]
    for name in ("gammainc", "gammaincc"):
        jx = jt.tensor(x, dtype=jt.float64, requires_grad=True)
        tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        (g,) = jt.autograd.grad(getattr(jt.special, name)(jt.tensor(a, dtype=jt.float64),
                                                          jx).sum(), jx)
        (tg,) = torch.autograd.grad(getattr(torch.special, name)(
            torch.tensor(a, dtype=torch.float64), tx).sum(), tx)
        _close(g.numpy(), tg.numpy(), 1e-12, 0)
        ja = jt.tensor(a, dtype=jt.float64, requires_grad=True)
        with pytest.raises(NotImplementedError, match="derivative for 'igamma"):
            getattr(jt.special, name)(ja, jt.tensor(x, dtype=jt.float64)).sum().backward()
        ta = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        with pytest.raises(NotImplementedError, match="derivative for 'igamma"):
            getattr(torch.special, name)(ta, torch.tensor(x, dtype=torch.float64)).sum(
                ).backward()


# -- what all of them share ----------------------------------------------------------------------
def test_no_derivatives_as_in_torch():
    """The Bessel functions and polynomials are not differentiable in torch: their results do
    not require grad (backward then raises as torch's does)."""
    x = jt.tensor([0.5, 1.5], dtype=jt.float64, requires_grad=True)
    tx = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    for name in BESSEL:
        assert not getattr(jt.special, name)(x).requires_grad, name
        assert not getattr(torch.special, name)(tx).requires_grad, name
    n = jt.tensor([2.0, 3.0], dtype=jt.float64, requires_grad=True)
    for name in POLYNOMIALS:
        assert not getattr(jt.special, name)(x, n).requires_grad, name
        assert not getattr(torch.special, name)(tx, 3).requires_grad, name
    with pytest.raises(RuntimeError, match="does not require grad"):
        jt.special.airy_ai(x).sum().backward()


def test_out_and_number_arguments():
    x = jt.tensor([0.5, 1.5, 3.0], dtype=jt.float64)
    out = jt.empty(3, dtype=jt.float64)
    assert jt.special.bessel_y1(x, out=out) is out
    _close(out.numpy(), torch.special.bessel_y1(torch.from_numpy(x.numpy())).numpy(), 1e-15, 0)
    assert jt.special.chebyshev_polynomial_u(x, 4, out=out) is out
    _close(out.numpy(), torch.special.chebyshev_polynomial_u(torch.from_numpy(x.numpy()),
                                                             4).numpy(), 1e-15, 0)
    with pytest.raises(TypeError, match="must be Tensor"):  # as torch's
        jt.special.modified_bessel_k0(2.0)
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.special.modified_bessel_k0(2.0)


def test_not_tensor_methods_nor_top_level():
    """As in torch, the torch.special-only functions are neither Tensor methods nor top-level
    names (igamma and igammac are both)."""
    for name in BESSEL + POLYNOMIALS:
        assert not hasattr(jt.Tensor, name) and not hasattr(torch.Tensor, name), name
        assert not hasattr(jt, name) and not hasattr(torch, name), name


def test_the_namespace_is_all_of_torch_special():
    names = {n for n in dir(torch.special) if not n.startswith("_")} - {
        "Tensor", "torch", "common_args", "multi_dim_common"}
    assert names <= set(jt.special.__all__)
    assert all(callable(getattr(jt.special, n)) for n in jt.special.__all__)


@pytest.mark.cuda
@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
@pytest.mark.parametrize("name", ["airy_ai", "bessel_y0", "modified_bessel_k1",
                                  "scaled_modified_bessel_k0", "spherical_bessel_j0",
                                  "chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
                                  "hermite_polynomial_h", "laguerre_polynomial_l", "gammainc",
                                  "gammaincc"])
def test_cuda_matches_the_cpu(name):
    fn = getattr(jt.special, name)
    args = [jt.tensor([0.1, 0.6, 2.5, 30.0], dtype=jt.float64)]
    if name not in BESSEL:
        args.append(jt.tensor([3.0, 12.0, 0.5, 29.0], dtype=jt.float64))
    got = fn(*(a.to("cuda") for a in args))
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), fn(*args).numpy(), rtol=1e-13)
