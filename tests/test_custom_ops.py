"""User-written ops (`@jt.elementwise`, `@jt.reduction`): NumPy as the oracle over dtypes,
broadcasting, layouts, out= and errors; gradients against finite differences and torch; the
disk cache across processes. The ops live in custom_ops_module.py, at module level, as a
user's would."""
import math

import numpy as np
import pytest
from conftest import CPU_DTYPES, FLOAT_DTYPES, dtype_id, run_python
from custom_ops_module import (
    gelu,
    largest,
    low_bit,
    mad,
    no_derivative,
    positive,
    smooth_max,
    sum_of_squares,
)
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitensor as jt
from jitensor.custom import fingerprint
from jitensor.kernels.cpu.kernels import PARALLEL_MIN
from jitensor.kernels.kernel_cache import sources_hash
from jitensor.kernels.scalar import libm

C = 0.7978845608


def np_gelu(x):
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + np.tanh(C * (x + 0.044715 * x ** 3)))


def sample(shape, dtype, seed=0):
    """Values of `dtype` small enough that x * y + y stays exact in every integer dtype."""
    rng = np.random.default_rng(seed)
    if dtype is jt.bool:
        return rng.random(shape) < 0.5
    if dtype.is_floating_point:
        return rng.standard_normal(shape).astype(dtype.np)
    return rng.integers(0, 10, shape).astype(dtype.np)


# -- elementwise: dtypes -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_integer_preserving_body_keeps_the_promoted_dtype(dtype):
    x, y = sample((3, 4), dtype), sample((3, 4), dtype, 1)
    got = mad(jt.tensor(x), jt.tensor(y))
    assert got.dtype is dtype
    np.testing.assert_allclose(got.numpy(), (x * y + y).astype(dtype.np), rtol=1e-6)


@pytest.mark.parametrize("a, b", [(jt.int8, jt.uint8), (jt.int32, jt.float32),
                                  (jt.bool, jt.int64), (jt.float32, jt.float64)], ids=str)
def test_mixed_dtypes_promote_as_torch(a, b):
    x, y = sample((5,), a), sample((5,), b, 1)
    got = mad(jt.tensor(x), jt.tensor(y))
    expected = jt.result_type(jt.tensor(x), jt.tensor(y))
    assert got.dtype is expected
    np.testing.assert_allclose(got.numpy(), (x.astype(expected.np) * y + y).astype(expected.np),
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", [jt.bool, jt.uint8, jt.int32, jt.int64], ids=dtype_id)
def test_float_body_on_integers_runs_in_the_default_float_dtype(dtype):
    x = sample((7,), dtype)
    got = gelu(jt.tensor(x))
    assert got.dtype is jt.float32
    np.testing.assert_allclose(got.numpy(), np_gelu(x), rtol=1e-5, atol=1e-6)
    jt.set_default_dtype(jt.float64)
    assert gelu(jt.tensor(x)).dtype is jt.float64


def test_bool_body_gives_bool():
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    got = positive(jt.tensor(x))
    assert got.dtype is jt.bool and got.tolist() == [False, False, True]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_gelu_matches_numpy_and_keeps_float32(dtype):
    x = np.linspace(-12, 12, 1001).astype(dtype.np)
    got = gelu(jt.tensor(x))
    assert got.dtype is dtype
    np.testing.assert_allclose(got.numpy(), np_gelu(x), rtol=2e-6 if dtype is jt.float32 else
                               1e-13, atol=1e-7 if dtype is jt.float32 else 1e-15)


def test_float32_exp_and_tanh_are_close_to_libm():
    @jt.elementwise
    def both(x):
        return math.tanh(x) + 4.0 * np.exp(0.125 * x)
    x = np.linspace(-30, 30, 20001).astype(np.float32)
    expected = np.tanh(x.astype(np.float64)) + 4 * np.exp(0.125 * x.astype(np.float64))
    np.testing.assert_allclose(both(jt.tensor(x)).numpy(), expected, rtol=3e-7, atol=3e-7)


def test_python_scalars_are_weak_operands():
    x = jt.tensor([1.0, 2.0])
    assert mad(x, 3).dtype is jt.float32 and mad(x, 3).tolist() == [6.0, 9.0]
    assert mad(2.5, jt.tensor([1, 2])).dtype is jt.float32
    assert mad(jt.tensor([1, 2], dtype=jt.int8), 3).dtype is jt.int8


# -- elementwise: shapes and layouts ---------------------------------------------------------
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=5))
def test_broadcasting_matches_numpy(shapes):
    (sa, sb), result = shapes
    x, y = sample(sa, jt.float64), sample(sb, jt.float64, 1)
    got = mad(jt.tensor(x), jt.tensor(y))
    assert tuple(got.shape) == result
    np.testing.assert_allclose(got.numpy(), x * y + y, rtol=1e-15)


@pytest.mark.parametrize("layout", ["dense", "broadcast", "transposed"])
def test_large_operands_run_the_parallel_kernel(layout):
    side = 400  # 160000 elements: above PARALLEL_MIN
    assert side * side >= PARALLEL_MIN
    x = sample((side, side), jt.float32)
    y = {"dense": sample((side, side), jt.float32, 1), "broadcast": sample((side, 1), jt.float32),
         "transposed": sample((side, side), jt.float32, 2).T}[layout]
    jx, jy = jt.tensor(x), jt.from_numpy(y) if layout == "transposed" else jt.tensor(y)
    np.testing.assert_allclose(mad(jx, jy).numpy(), x * y + y, rtol=1e-6)


def test_zero_size_and_zero_dim():
    assert mad(jt.ones(0, 3), jt.ones(3)).shape == (0, 3)
    got = gelu(jt.tensor(1.0))
    assert got.shape == () and math.isclose(got.item(), np_gelu(1.0), rel_tol=1e-6)


# -- elementwise: out= ------------------------------------------------------------------------
def test_out_is_written_and_returned():
    x = sample((4, 3), jt.float32)
    out = jt.empty(4, 3, dtype=jt.float64)  # a wider out: the result is cast, as in torch
    assert mad(jt.tensor(x), 2.0, out=out) is out
    np.testing.assert_allclose(out.numpy(), x * 2 + 2, rtol=1e-6)


def test_out_in_place_and_overlapping():
    x = jt.arange(6.0)
    mad(x, 1.0, out=x)  # exactly an input: fine
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    y = jt.arange(6.0)
    mad(y[:5], 2.0, out=y[1:])  # overlapping: through a temporary
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_out_errors():
    x = jt.ones(3)
    with pytest.raises(RuntimeError, match="can't be cast"):
        gelu(x, out=jt.empty(3, dtype=jt.int32))
    with pytest.raises(RuntimeError, match="shape"):
        gelu(x, out=jt.empty(4))


# -- errors -----------------------------------------------------------------------------------
def test_call_errors():
    with pytest.raises(TypeError, match="takes 2 arguments"):
        mad(jt.ones(2))
    with pytest.raises(TypeError, match="at least one tensor"):
        mad(1.0, 2.0)
    with pytest.raises(RuntimeError, match="size of tensor"):
        mad(jt.ones(2), jt.ones(3))


def test_body_that_does_not_compile_for_a_dtype_names_op_dtype_and_numba_message():
    assert low_bit(jt.tensor([2, 3])).tolist() == [0, 1]
    with pytest.raises(RuntimeError) as info:
        low_bit(jt.tensor([2.0, 3.0]))
    message = str(info.value)
    assert "low_bit" in message and "float32" in message
    assert "No implementation of function" in message  # Numba's own words


def test_decoration_errors():
    with pytest.raises(TypeError, match="positional"):
        jt.elementwise(lambda *xs: xs[0])
    with pytest.raises(TypeError, match="2 inputs"):
        mad.derivative(lambda x: x)
    with pytest.raises(TypeError, match="acc, x"):
        jt.reduction(lambda x: x)

    @jt.elementwise
    def pair(x):
        return x, x
    with pytest.raises(RuntimeError, match="one number"):
        pair(jt.ones(2))


# -- autograd ---------------------------------------------------------------------------------
def test_gradcheck_one_input():
    x = jt.tensor(np.linspace(-3, 3, 13), dtype=jt.float64, requires_grad=True)
    assert jt.autograd.gradcheck(gelu, (x,))


def test_gradcheck_two_inputs_broadcast():
    x = jt.tensor(sample((3, 1), jt.float64), requires_grad=True)
    y = jt.tensor(sample((4,), jt.float64, 1), requires_grad=True)
    assert jt.autograd.gradcheck(smooth_max, (x, y))
    smooth_max(x, y).sum().backward()
    assert x.grad.shape == (3, 1) and y.grad.shape == (4,)


def test_gradient_only_for_inputs_that_require_it():
    x = jt.tensor([0.5, 1.0], requires_grad=True)
    smooth_max(x, jt.tensor([1.0, 2.0])).sum().backward()
    assert x.grad.shape == (2,)
    assert gelu(x).grad_fn.name() == "GeluBackward0"


def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    x = np.linspace(-5, 5, 101)  # float64: the two derivative formulas round differently
    jx = jt.tensor(x, requires_grad=True)
    (gelu(jx) * jt.arange(101.0, dtype=jt.float64)).sum().backward()
    tx = torch.tensor(x, requires_grad=True)
    (torch.nn.functional.gelu(tx, approximate="tanh") * torch.arange(101.0)).sum().backward()
    np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_autograd_errors():
    x = jt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        no_derivative(x).sum().backward()
    with pytest.raises(RuntimeError, match="out="):
        gelu(x, out=jt.empty(3))
    (g,) = jt.autograd.grad(gelu(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="double backward"):
        g.sum().backward()
    with jt.no_grad():
        assert not gelu(x).requires_grad


# -- reductions -------------------------------------------------------------------------------
DIMS = [None, 0, 1, -1, (0, 2), (1, 2), ()]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_reduction_over_dims_matches_numpy(dim, keepdim):
    x = sample((3, 4, 5), jt.int64)
    axis = None if dim is None or dim == () else dim
    np.testing.assert_array_equal(sum_of_squares(jt.tensor(x), dim, keepdim).numpy(),
                                  (x * x).sum(axis=axis, keepdims=keepdim))
    np.testing.assert_array_equal(largest(jt.tensor(x), dim, keepdim).numpy(),
                                  x.max(axis=axis, keepdims=keepdim))


@given(x=hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6),
                    elements=st.integers(-100, 100)), data=st.data())
def test_reduction_hypothesis(x, data):
    dims = data.draw(st.lists(st.integers(0, x.ndim - 1), unique=True, min_size=1))
    t = jt.tensor(x)
    if data.draw(st.booleans()):  # a strided view
        x, t = x.T, t.permute(*reversed(range(x.ndim)))
    np.testing.assert_array_equal(sum_of_squares(t, tuple(dims)).numpy(),
                                  (x * x).sum(axis=tuple(dims)))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_large_reductions_rows_and_columns(dim):
    x = sample((600, 200), jt.float32)
    got = sum_of_squares(jt.tensor(x), dim)
    assert got.dtype is jt.float32
    np.testing.assert_allclose(got.numpy(), (x.astype(np.float64) ** 2).sum(axis=dim),
                               rtol=2e-5)
    np.testing.assert_array_equal(largest(jt.tensor(x), dim).numpy(), x.max(axis=dim))


def test_reduction_dtypes_out_and_empty():
    x = jt.tensor([[1, 2], [3, 4]], dtype=jt.int32)
    assert sum_of_squares(x).dtype is jt.int32
    got = sum_of_squares(x, 1, dtype=jt.float64)
    assert got.dtype is jt.float64 and got.tolist() == [5.0, 25.0]
    out = jt.empty(2, dtype=jt.int64)
    assert sum_of_squares(x, 0, out=out) is out and out.tolist() == [10, 20]
    assert sum_of_squares(jt.ones(0, 3), 0).tolist() == [0.0, 0.0, 0.0]  # the identity
    assert sum_of_squares(jt.tensor(3.0)).item() == 9.0 and largest(jt.tensor(3.0), 0).shape == ()
    with pytest.raises(IndexError, match="non-zero size"):
        largest(jt.ones(0, 3), 0)


def test_reduction_identity_must_fit_the_dtype():
    @jt.reduction(identity=-math.inf)
    def top(acc, x):
        return max(acc, x)
    assert top(jt.tensor([1.0, 3.0])).item() == 3.0
    with pytest.raises(RuntimeError, match="identity"):
        top(jt.tensor([1, 3]))


# -- the disk cache ---------------------------------------------------------------------------
def test_fingerprint_follows_code_and_globals():
    def f(x):
        return x * C
    key = fingerprint(f)
    assert key == fingerprint(f) and "C=float:0.7978845608" in key
    assert fingerprint(gelu.scalar) != fingerprint(gelu.grad)
    assert fingerprint(lambda x: math.sin(x)) != fingerprint(lambda x: math.cos(x))
    k = 2.0
    assert fingerprint(lambda x: x * k) is None  # a closure: compiled in memory
    # jitensor's own modules count by their code (libm.tanh itself is a closure)
    key = fingerprint(lambda x: libm.tanh(x))
    assert key is not None and sources_hash(libm.__file__) in key


def test_closures_work_without_the_disk_cache():
    k = 3.0

    @jt.elementwise
    def scaled(x):
        return x * k
    assert scaled._map.spec.key() is None
    assert scaled(jt.tensor([1.0, 2.0])).tolist() == [3.0, 6.0]


_CACHE_CHECK = """
import sys
sys.path.insert(0, "tests")
import jitensor as jt
from jitensor.kernels.cpu import custom
from custom_ops_module import gelu, mad, sum_of_squares
x = jt.linspace(-2, 2, 7, requires_grad=True)
gelu(x).sum().backward()
mad(jt.ones(2, 3, dtype=jt.int32), jt.ones(3, dtype=jt.int32))
sum_of_squares(jt.ones(3, 4), 1)
mods = [custom.kernels(s) for s in (gelu._map.spec, gelu._partial(0).spec, mad._map.spec,
                                    sum_of_squares._map.spec)]
kernels = [getattr(m, k) for m in mods for k in ("result", "flat", "nd", "rows", "columns")
           if hasattr(m, k)]
print(sum(sum(k.stats.cache_hits.values()) for k in kernels),
      sum(sum(k.stats.cache_misses.values()) for k in kernels))
"""


def test_second_process_loads_user_kernels_from_disk_cache(tmp_path):
    env = {"JITENSOR_KERNEL_DIR": str(tmp_path)}
    hits, misses = map(int, run_python(_CACHE_CHECK, env).split())
    assert misses > 0
    hits, misses = map(int, run_python(_CACHE_CHECK, env).split())
    assert misses == 0 and hits >= 6
    names = sorted(p.name for p in tmp_path.glob("*.py"))
    assert any(n.startswith("custom_ops_module_gelu_") for n in names), names
