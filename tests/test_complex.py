"""complex64 and complex128 tensors against torch: promotion, creation, printing, elementwise
ops with broadcasting and number operands, the parts as views, sum/mean/var/cumsum, products,
autograd with torch's convention for complex gradients (the rotary-embedding pattern of LLaMA
included), serialization, the same bits at any thread count, and torch's errors for what complex
numbers do not have."""
import io
import warnings

import numpy as np
import pytest
from conftest import at_thread_counts
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitensor as jt

torch = pytest.importorskip("torch")

COMPLEX = ["complex64", "complex128"]
_TOL = {"complex64": 2e-5, "complex128": 1e-12}


def _values(rng, shape, dtype="complex64"):
    return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype)


def _pair(values, requires_grad=False):
    return torch.tensor(values, requires_grad=requires_grad), \
        jt.tensor(values, requires_grad=requires_grad)


def _same(mine, theirs, tol):
    theirs = theirs.detach().resolve_conj() if isinstance(theirs, torch.Tensor) else theirs
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.numpy(), rtol=tol, atol=tol)


# -- dtypes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("a", [d.name for d in jt.dtypes.ALL if d not in jt.dtypes.BAREBONES])
def test_promotion_matches_torch(a):  # (uint16/32/64: tests/test_unsigned.py)
    for b in jt.dtypes.ALL:
        if b not in jt.dtypes.BAREBONES:
            mine = jt.promote_types(getattr(jt, a), b)
            assert mine.name == str(torch.promote_types(getattr(torch, a),
                                                        getattr(torch, b.name))).split(".")[-1]


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "bool", "complex64",
                                  "complex128"])
@pytest.mark.parametrize("scalar", [1j, 2.5, 3, True])
def test_result_type_of_numbers_matches_torch(name, scalar):
    t = torch.ones(2, dtype=getattr(torch, name))
    assert jt.result_type(jt.ones(2, dtype=getattr(jt, name)), scalar).name == \
        str(torch.result_type(t, scalar)).split(".")[-1]


def test_dtype_names_and_properties():
    assert jt.cfloat is jt.complex64 and jt.cdouble is jt.complex128
    assert jt.complex64.is_complex and not jt.complex64.is_floating_point
    assert jt.complex64.to_real() is jt.float32 and jt.float64.to_complex() is jt.complex128
    assert jt.finfo(jt.complex64).eps == jt.finfo(jt.float32).eps
    assert jt.tensor([1j]).is_complex() and not jt.ones(1).is_complex()


# -- creation and printing ------------------------------------------------------------------------
def test_creation_matches_torch():
    for make in (lambda m: m.tensor([1 + 2j, 3]), lambda m: m.full((2,), 1j),
                 lambda m: m.zeros(2, dtype=m.complex128), lambda m: m.ones(2, dtype=m.cfloat),
                 lambda m: m.tensor(np.array([1j], np.complex128)),
                 lambda m: m.tensor([1.0, 2.0], dtype=m.complex64),
                 lambda m: m.eye(2, dtype=m.complex64)):
        _same(make(jt), make(torch), 0)
    with pytest.raises(RuntimeError, match="cannot be converted to type float32"):
        jt.zeros(2).fill_(1j)
    jt.set_default_dtype(jt.float64)
    assert jt.tensor([1j]).dtype is jt.complex128


@pytest.mark.parametrize("name", COMPLEX)
def test_random_parts_have_torch_moments(name):
    jt.manual_seed(0)
    z = jt.randn(200_000, dtype=getattr(jt, name))
    assert z.dtype.name == name
    for part in (z.real, z.imag):  # each part of variance 1/2, as torch's
        assert abs(part.mean().item()) < 0.01 and abs(part.var().item() - 0.5) < 0.01
    u = jt.rand(100_000, dtype=getattr(jt, name))
    assert 0 <= u.real.min().item() and u.imag.max().item() < 1
    assert abs(u.imag.mean().item() - 0.5) < 0.01


def test_random_draws_same_bits_at_any_thread_count():
    def draw():
        jt.manual_seed(7)
        return jt.randn(300_000, dtype=jt.complex64).numpy()
    first, *rest = at_thread_counts(draw)
    for other in rest:
        np.testing.assert_array_equal(first, other)


@pytest.mark.parametrize("values", [[1 + 2j, 3 - 1j], [[1e-5 + 2j, 3 - 1000j]], 1 + 2j,
                                    [-1.13120436 + 2.4717j, 10.852 - 16.9j], [0j, -0.0 - 1j]])
@pytest.mark.parametrize("name", COMPLEX)
def test_repr_matches_torch(values, name):
    mine = repr(jt.tensor(values, dtype=getattr(jt, name)))
    assert mine.replace("jitensor.", "torch.") == \
        repr(torch.tensor(values, dtype=getattr(torch, name)))


def test_python_conversions():
    z = jt.tensor([1 + 2j, 3j])
    assert z[0].item() == 1 + 2j and complex(z[1]) == 3j and z.tolist() == [1 + 2j, 3j]
    assert z.numpy().dtype == np.complex64
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        real = z.float()
    np.testing.assert_array_equal(real.numpy(), [1, 0])


# -- elementwise ----------------------------------------------------------------------------------
UNARY = ["neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "square", "sigmoid", "sin", "cos",
         "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
         "exp2", "expm1", "log2", "log10", "log1p", "abs", "angle", "conj", "sgn", "isnan",
         "isfinite", "isinf", "isreal"]
BINARY = ["add", "sub", "mul", "div", "pow", "eq", "ne"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("name", COMPLEX)
def test_unary_matches_torch(op, name):
    values = _values(np.random.default_rng(1), (3, 4), name)
    values[0, :3] = [0, np.inf + 1j, np.nan]
    t, j = _pair(values)
    with np.errstate(all="ignore"):
        _same(getattr(jt, op)(j), getattr(torch, op)(t), _TOL[name] * 10)


@settings(max_examples=20, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       op=st.sampled_from(BINARY), name=st.sampled_from(COMPLEX),
       other=st.sampled_from(["complex", "float32", "float64", "int64", "number", "cnumber"]))
@example(shapes=hnp.BroadcastableShapes(input_shapes=((), (1,)), result_shape=(1,)), op="div",
         name="complex128", other="float32")  # (a complex64 result: its tolerance)
def test_binary_broadcasts_and_promotes_as_torch(shapes, op, name, other):
    rng = np.random.default_rng(2)
    a = _values(rng, shapes.input_shapes[0], name)
    if other == "complex":
        b = _values(rng, shapes.input_shapes[1], name)
    elif other in ("number", "cnumber"):
        b = 1.5 if other == "number" else 0.5 - 2j
    else:
        b = np.asarray(rng.standard_normal(shapes.input_shapes[1]) * 3, other)
    ta, ja = _pair(a)
    tb, jb = (b, b) if not isinstance(b, np.ndarray) else _pair(b)
    theirs = getattr(torch, op)(ta, tb)
    # (the result's precision: a 0-d complex128 with float32 dims gives complex64)
    tol = _TOL.get(str(theirs.dtype).split(".")[-1], _TOL[name]) * 10
    _same(getattr(jt, op)(ja, jb), theirs, tol)
    if isinstance(b, np.ndarray):
        _same(getattr(jt, op)(jb, ja), getattr(torch, op)(tb, ta), tol)
    else:  # a number on the left: the operators
        _same(b - ja, b - ta, tol)
        _same(b / ja, b / ta, tol)


def test_in_place_and_out():
    rng = np.random.default_rng(3)
    a, b = _values(rng, (2, 3)), _values(rng, (3,))
    t, j = _pair(a)
    t.mul_(torch.tensor(b)).add_(1j, alpha=2)
    j.mul_(jt.tensor(b)).add_(1j, alpha=2)
    _same(j, t, 1e-5)
    out = jt.empty(2, 3, dtype=jt.complex64)
    assert jt.exp(jt.tensor(a), out=out) is out
    _same(out, torch.exp(torch.tensor(a)), 1e-5)
    view = jt.zeros(3, 2, dtype=jt.complex64).T  # a strided target
    jt.mul(jt.tensor(a), 2, out=view)
    _same(view, torch.tensor(a) * 2, 0)
    with pytest.raises(RuntimeError, match="can't be cast"):
        jt.ones(3).add_(jt.tensor(b))


def test_ops_complex_numbers_lack_raise_naming_them():
    z = jt.tensor([1 + 1j, 2j])
    for call, name in ((lambda: z < z, "lt"), (lambda: jt.maximum(z, z), "maximum"),
                       (lambda: z.floor(), "floor"), (lambda: z.max(), "max"),
                       (lambda: z.prod(), "prod"), (lambda: z.sort(), "sort"),
                       (lambda: z.softmax(0), "softmax")):
        with pytest.raises(RuntimeError, match=name):
            call()


# -- the parts as views ----------------------------------------------------------------------------
def test_views_share_memory_as_torch():
    values = _values(np.random.default_rng(4), (2, 3))
    t, j = _pair(values)
    for view in (lambda m, z: m.view_as_real(z), lambda m, z: z.real, lambda m, z: z.imag,
                 lambda m, z: m.view_as_real(z.T), lambda m, z: z[:, 1].imag):
        _same(view(jt, j), view(torch, t), 0)
    j.real.mul_(2)
    jt.view_as_real(j)[0, 0, 1] = 7
    t.real.mul_(2)
    torch.view_as_real(t)[0, 0, 1] = 7
    _same(j, t, 0)
    pairs = np.random.default_rng(5).standard_normal((4, 3, 2)).astype(np.float32)
    tp, jp = _pair(pairs)
    _same(jt.view_as_complex(jp), torch.view_as_complex(tp), 0)
    _same(jt.view_as_complex(jp[::2]), torch.view_as_complex(tp[::2]), 0)
    jt.view_as_complex(jp)[1, 1] = 5j
    assert jp[1, 1].tolist() == [0, 5]


@pytest.mark.parametrize("call", [
    lambda m: m.view_as_complex(m.ones(3)),
    lambda m: m.view_as_complex(m.ones(2, 3)),
    lambda m: m.view_as_complex(m.ones(2, 2).T),
    lambda m: m.view_as_complex(m.ones(3, 2)[:, :1].expand(3, 2)),
    lambda m: m.view_as_complex(m.ones(5)[1:].reshape(2, 2)),
    lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int32)),
    lambda m: m.view_as_complex(m.ones((), dtype=m.float32)),
    lambda m: m.view_as_real(m.ones(2)),
    lambda m: m.ones(2).imag,
    lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
])
def test_view_errors_match_torch(call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as mine:
        call(jt)
    assert type(mine.value) is type(theirs.value)


def test_complex_and_polar_match_torch():
    rng = np.random.default_rng(6)
    for dt in ("float32", "float64"):
        re, im = rng.standard_normal((2, 1, 3)).astype(dt), rng.standard_normal(4).astype(dt)
        _same(jt.complex(jt.tensor(re), jt.tensor(im[:3])),
              torch.complex(torch.tensor(re), torch.tensor(im[:3])), 0)
        r, theta = np.abs(re), rng.standard_normal((2, 1, 3)).astype(dt)
        _same(jt.polar(jt.tensor(r), jt.tensor(theta)),
              torch.polar(torch.tensor(r), torch.tensor(theta)), _TOL["complex64"])
    assert jt.ones(2).real.dtype is jt.float32 and jt.conj(jt.ones(2)).dtype is jt.float32


# -- reductions and products -------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda m, z: z.sum(), lambda m, z: z.sum(1), lambda m, z: z.sum((0, 2), keepdim=True),
    lambda m, z: z.mean(-1), lambda m, z: z.var(1), lambda m, z: z.std(),
    lambda m, z: z.cumsum(1), lambda m, z: z[0, 0, 0].cumsum(0), lambda m, z: z.norm(),
    lambda m, z: m.linalg.vector_norm(z, 1), lambda m, z: m.linalg.matrix_norm(z),
    lambda m, z: m.linalg.matrix_norm(z, -1),
    lambda m, z: z[0] @ z[1].T, lambda m, z: z @ z[0, 0],
    lambda m, z: m.einsum("abc,abd->cd", z, z),
    lambda m, z: m.vdot(z[0, 0], z[1, 1]), lambda m, z: m.dot(z[0, 0], z[1, 1]),
    lambda m, z: m.where(z.real > 0, z, 1j), lambda m, z: z.T.contiguous(),
    lambda m, z: m.cat([z, z.conj()], 1), lambda m, z: z[..., m.tensor([2, 0])],
    lambda m, z: m.isclose(z, z + 1e-7), lambda m, z: m.ones(2, 3).type_as(z),
    lambda m, z: m.ones(3).mean(dtype=m.complex64),
])
@pytest.mark.parametrize("name", COMPLEX)
def test_composed_ops_match_torch(call, name):
    t, j = _pair(_values(np.random.default_rng(7), (2, 3, 4), name))
    _same(call(jt, j), call(torch, t), _TOL[name] * 10)


# -- autograd -------------------------------------------------------------------------------------
def _rope(m, xq, freqs):
    """LLaMA's rotary embedding: pairs of features as complex numbers, turned by angles."""
    fc = m.polar(m.ones_like(freqs), freqs)
    xc = m.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return m.view_as_real(xc * fc).flatten(-2)


LOSSES = {
    "mul_abs": (lambda m, a, b: (a * b).abs().sum(), "zz"),
    "div_real": (lambda m, a, b: (a / b).real.sum(), "zz"),
    "exp_imag": (lambda m, a, b: (a.exp() * b).imag.sum(), "zz"),
    "log_parts": (lambda m, a, b: m.view_as_real(a.log() + b).pow(2).sum(), "zz"),
    "sqrt_tanh_sigmoid": (lambda m, a, b: (a.sqrt() * b.tanh() + m.sigmoid(a)).abs().sum(),
                          "zz"),
    "pow": (lambda m, a, b: (a ** 3 + a ** b).real.sum(), "zz"),
    "angle_conj": (lambda m, a, b: (a.angle() * (a.conj() * b).real).sum(), "zz"),
    "polar": (lambda m, r, t: (m.polar(r.abs(), t) * 2j).imag.sum(), "xx"),
    "complex": (lambda m, r, t: (m.complex(r, t) ** 2).real.sum(), "xx"),
    "real_times_complex": (lambda m, r, a: (r * a).abs().sum(), "xz"),
    "matmul": (lambda m, a, b: (a.reshape(2, 6) @ b.reshape(6, 2)).abs().sum(), "zz"),
    "sum_mean": (lambda m, a, b: (a.sum(0) * b.mean()).abs().sum(), "zz"),
    "to_complex": (lambda m, r, a: (r.to(m.complex64) * (1 + 2j) * a).abs().sum(), "xz"),
    "where_sgn": (lambda m, a, b: m.where(a.real > 0, a.sgn(), b).abs().sum(), "zz"),
    "rope": (lambda m, x, f: _rope(m, x.reshape(3, 4), f[:2]).pow(2).sum() +
             _rope(m, x.reshape(3, 4), f[:2])[0, 1], "xx"),
    "in_place_view": (lambda m, a, b: (lambda c: (c.real.mul_(3), c.abs().sum())[1])(a * b),
                      "zz"),
}


@pytest.mark.parametrize("loss", list(LOSSES))
def test_gradients_match_torch(loss):
    fn, kinds = LOSSES[loss]
    rng = np.random.default_rng(8)
    values = [_values(rng, 12) if k == "z" else rng.standard_normal(12).astype(np.float32)
              for k in kinds]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    mine = [jt.tensor(v, requires_grad=True) for v in values]
    fn(torch, *theirs).backward()
    fn(jt, *mine).backward()
    for a, b in zip(mine, theirs, strict=True):
        _same(a.grad, b.grad, 1e-4)


def test_gradients_under_the_profiler_and_with_autograd_grad():
    z = jt.tensor([1j, 2, -1 + 1j], requires_grad=True)
    with jt.profiler.profile():
        (z * z).abs().sum().backward()
    t = torch.tensor([1j, 2, -1 + 1j], requires_grad=True)
    (t * t).abs().sum().backward()
    _same(z.grad, t.grad, 1e-6)
    (g,) = jt.autograd.grad((z.exp() * z).real.sum(), z)
    (h,) = torch.autograd.grad((t.exp() * t).real.sum(), t)
    _same(g, h, 1e-6)


def test_backward_of_a_complex_output_needs_a_gradient():
    z = jt.tensor([1j], requires_grad=True)
    with pytest.raises(RuntimeError):
        (z * 2).sum().backward()
    (z * 2).sum().backward(jt.tensor(1 + 1j))
    np.testing.assert_allclose(z.grad.numpy(), [2 + 2j])


# -- serialization -------------------------------------------------------------------------------
def test_save_load_round_trips_and_reads_torch_files(tmp_path):
    z = jt.tensor([[1 + 2j, 3j]], dtype=jt.complex128)
    buf = io.BytesIO()
    jt.save({"z": z}, buf)
    buf.seek(0)
    assert torch.load(buf)["z"].dtype is torch.complex128
    path = tmp_path / "t.pt"
    torch.save(torch.tensor([1 - 1j, 2j]), path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = jt.load(path)
    _same(loaded, torch.tensor([1 - 1j, 2j]), 0)


@pytest.mark.cuda
def test_cuda_refuses_complex_tensors_naming_the_fix():
    for make in (lambda: jt.ones(2, dtype=jt.complex64, device="cuda"),
                 lambda: jt.tensor([1j]).cuda(),
                 lambda: jt.tensor([1j], device="cuda")):
        with pytest.raises(TypeError, match="complex tensors .* live on the CPU only"):
            make()


@pytest.mark.parametrize("name", ["mH", "H", "adjoint"])
def test_conjugate_transposes_conjugate(name):
    values = _values(np.random.default_rng(5), (3, 3), "complex128")
    t, j = _pair(values)
    mine = getattr(j, name)() if name == "adjoint" else getattr(j, name)
    theirs = getattr(t, name)() if name == "adjoint" else getattr(t, name)
    _same(mine, theirs, 0)
    real = jt.arange(4.0).reshape(2, 2)  # (a real tensor: the plain transpose)
    assert jt.equal(real.adjoint() if name == "adjoint" else getattr(real, name), real.t())
