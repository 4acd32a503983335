"""matmul / mm / bmm / mv / dot / outer against NumPy (np.matmul on the host copies; its integer
products wrap exactly as torch's do) and torch, on every CPU dtype and on views of any layout."""
import numpy as np
import pytest
from conftest import (
    CPU_DTYPES,
    INT_DTYPES,
    assert_tensor,
    at_thread_counts,
    dtype_id,
    run_python,
    to_torch_dtype,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numba import types

import jitensor as jt
from jitensor.kernels.cpu import linalg as cpu_linalg
from jitensor.tensor import _wrap

PRODUCT_DTYPES = [d for d in CPU_DTYPES if d is not jt.bool]  # torch: no bool products
RNG = np.random.default_rng(1234)


def _values(shape, dtype, rng=RNG):
    """Random host values: integers over the whole range of the dtype (so that products wrap),
    floats in [-1, 1)."""
    if dtype is jt.bool:
        return rng.random(shape) < 0.5
    if dtype.is_floating_point:
        return (2 * rng.random(shape) - 1).astype(dtype.np)
    info = np.iinfo(dtype.np)
    return rng.integers(info.min, info.max, shape, dtype=dtype.np, endpoint=True)


def _layout(host, kind):
    """A NumPy array of `host`'s shape in the layout `kind`, sharing no memory with `host`: 'c'
    contiguous, 't' the last two dims stored transposed, 's' every other element of a wider
    buffer, 'b' the first slice broadcast (stride 0) along the first dim. The values equal
    `host`'s except for 'b'; tests compare against the view's own values."""
    if kind == "t" and host.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(host, -1, -2))
        return np.swapaxes(base, -1, -2)
    if kind == "s" and host.ndim >= 1:
        base = np.zeros(host.shape[:-1] + (2 * host.shape[-1],), host.dtype)
        base[..., ::2] = host
        return base[..., ::2]
    if kind == "b" and host.ndim >= 1 and host.shape[0] > 1:
        row = host[:1].copy()
        return np.broadcast_to(row, host.shape)
    return host.copy()


def _expected(a, b):
    """np.matmul on host copies (floats in float64; `_check`'s tolerance covers the rounding)."""
    if a.dtype.kind == "f":
        return np.matmul(a.astype(np.float64), b.astype(np.float64))
    return np.matmul(a, b)


def _assert_close(got, expected, dtype, k):
    """Equal integers; floats within a rounding error that grows with the depth k."""
    if dtype.is_floating_point:
        tol = (1e-5 if dtype is jt.float32 else 1e-12) * max(k, 1)
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, expected)


def _check(result, a, b, dtype):
    expected = _expected(a, b)
    assert isinstance(result, jt.Tensor) and result.dtype is dtype
    assert tuple(result.shape) == expected.shape
    _assert_close(result.numpy(), expected.astype(dtype.np), dtype, a.shape[-1])


# -- every shape rule of matmul, on every dtype ---------------------------------------------------
SHAPES = [
    ((4,), (4,)),                    # vector . vector -> 0-d
    ((3, 4), (4, 5)),                # matrix @ matrix
    ((4,), (4, 5)),                  # row vector @ matrix -> (5,)
    ((3, 4), (4,)),                  # matrix @ column -> (3,)
    ((2, 3, 4), (2, 4, 5)),          # batched
    ((2, 1, 3, 4), (5, 4, 6)),       # broadcast batch -> (2, 5, 3, 6)
    ((2, 3, 4), (4, 5)),             # batch @ matrix (torch folds it into one product)
    ((3, 4), (2, 4, 5)),             # matrix @ batch
    ((4,), (2, 4, 5)),               # vector @ batch -> (2, 5)
    ((2, 3, 4), (4,)),               # batch @ vector -> (2, 3)
    ((1, 3, 4), (2, 1, 4, 2)),       # broadcast on both sides
    ((3, 0), (0, 4)),                # empty sum -> zeros
    ((0, 3), (3, 4)), ((3, 4), (4, 0)), ((0, 2, 3), (3, 4)), ((0,), (0,)),
    ((67, 130), (130, 261)),         # several row, column and depth tiles, odd sizes
    ((1, 300), (300, 9)), ((9, 300), (300, 1)),
    ((600, 7), (7,)), ((7,), (7, 600)),  # matrix-vector products over several row blocks
]


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("sa, sb", SHAPES, ids=str)
def test_matmul_matches_numpy(dtype, sa, sb):
    a, b = _values(sa, dtype), _values(sb, dtype)
    _check(jt.matmul(jt.from_numpy(a), jt.from_numpy(b)), a, b, dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
def test_integer_products_wrap_in_the_dtype(dtype):
    info = np.iinfo(dtype.np)
    a = np.full((2, 3), info.max, dtype.np)
    got = jt.matmul(jt.from_numpy(a), jt.from_numpy(a.T.copy())).numpy()
    assert got.dtype == dtype.np
    np.testing.assert_array_equal(got, np.matmul(a, a.T))  # max * max * 3, modulo 2**bits


def test_int8_matmul_stays_int8_and_wraps_like_torch():
    torch = pytest.importorskip("torch")
    x = np.full((2, 3), 100, np.int8)
    got = jt.from_numpy(x) @ jt.from_numpy(x.T.copy())
    want = torch.from_numpy(x) @ torch.from_numpy(x.T.copy())
    assert got.dtype is jt.int8 and got.tolist() == want.tolist() == [[48, 48], [48, 48]]


# -- hypothesis: shapes, broadcast batches and layouts --------------------------------------------
@st.composite
def matmul_operands(draw):
    """Two shapes torch's matmul accepts, with broadcast batch dims."""
    m, k, n = (draw(st.integers(0, 6)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))

    def batch_of():
        dims = batch[len(batch) - draw(st.integers(0, len(batch))):]
        return [d if draw(st.booleans()) else 1 for d in dims]

    sa = tuple(batch_of()) + (m, k) if draw(st.integers(0, 3)) else (k,)
    sb = tuple(batch_of()) + (k, n) if draw(st.integers(0, 3)) else (k,)
    return sa, sb


LAYOUTS = st.sampled_from("ctsb")


@given(matmul_operands(), st.sampled_from(PRODUCT_DTYPES), LAYOUTS, LAYOUTS)
def test_matmul_shapes_and_layouts(shapes, dtype, la, lb):
    sa, sb = shapes
    a, b = _values(sa, dtype), _values(sb, dtype)
    va, vb = _layout(a, la), _layout(b, lb)
    ta, tb = jt.from_numpy(va), jt.from_numpy(vb)
    _check(jt.matmul(ta, tb), np.array(va), np.array(vb), dtype)
    np.testing.assert_array_equal(ta.numpy(), va)  # inputs untouched


@settings(max_examples=20)
@given(st.integers(1, 70), st.integers(1, 300), st.integers(1, 300),
       st.sampled_from([jt.int64, jt.int16, jt.float32]), LAYOUTS, LAYOUTS)
def test_large_products_cross_tile_edges(m, k, n, dtype, la, lb):
    a, b = _values((m, k), dtype), _values((k, n), dtype)
    va, vb = _layout(a, la), _layout(b, lb)
    _check(jt.from_numpy(va) @ jt.from_numpy(vb), np.array(va), np.array(vb), dtype)


@pytest.mark.parametrize("dtype", [jt.float32, jt.int32], ids=dtype_id)
def test_views_of_batched_stacks(dtype):
    """Every other matrix of a stack, transposed matrices of a sliced stack, and a stack whose
    batch dim is not the outermost: all multiply without the caller copying."""
    base = _values((6, 5, 7), dtype)
    for view in (base[::2], base.transpose(0, 2, 1)[1:4], base.transpose(1, 0, 2)[:3]):
        rhs = _values((view.shape[0], view.shape[2], 4), dtype)
        _check(jt.from_numpy(view) @ jt.from_numpy(rhs), view, rhs, dtype)


# -- torch as the second oracle ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", PRODUCT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("sa, sb", SHAPES, ids=str)
def test_matmul_matches_torch(dtype, sa, sb):
    torch = pytest.importorskip("torch")
    a, b = _values(sa, dtype), _values(sb, dtype)
    got = jt.matmul(jt.from_numpy(a), jt.from_numpy(b))
    want = torch.matmul(torch.from_numpy(a), torch.from_numpy(b))
    assert tuple(got.shape) == tuple(want.shape)
    assert want.dtype == to_torch_dtype(got.dtype)
    _assert_close(got.numpy(), want.numpy(), dtype, sa[-1])


@pytest.mark.parametrize("fn, sa, sb", [
    ("mm", (3, 4), (4, 5)), ("bmm", (2, 3, 4), (2, 4, 5)), ("mv", (3, 4), (4,)),
    ("dot", (4,), (4,)), ("outer", (3,), (4,)), ("ger", (3,), (4,)),
])
@pytest.mark.parametrize("dtype", [jt.float64, jt.int64, jt.uint8], ids=dtype_id)
def test_named_products_match_torch(fn, sa, sb, dtype):
    torch = pytest.importorskip("torch")
    a, b = _values(sa, dtype), _values(sb, dtype)
    got = getattr(jt, fn)(jt.from_numpy(a), jt.from_numpy(b))
    want = getattr(torch, fn)(torch.from_numpy(a), torch.from_numpy(b))
    assert tuple(got.shape) == tuple(want.shape) and want.dtype == to_torch_dtype(got.dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    method = getattr(jt.from_numpy(a), fn)(jt.from_numpy(b))
    np.testing.assert_array_equal(method.numpy(), got.numpy())


# -- bool: torch implements no bool product on the CPU ------------------------------------------
@pytest.mark.parametrize("fn, sa, sb", [
    ("matmul", (2, 3), (3, 2)), ("mm", (2, 3), (3, 2)), ("bmm", (1, 2, 3), (1, 3, 2)),
    ("mv", (2, 3), (3,)), ("dot", (3,), (3,)), ("matmul", (3,), (3,)), ("dot", (0,), (0,)),
])
def test_bool_products_are_not_implemented_like_torch(fn, sa, sb):
    torch = pytest.importorskip("torch")
    a, b = np.ones(sa, bool), np.ones(sb, bool)
    with pytest.raises(NotImplementedError):
        getattr(torch, fn)(torch.from_numpy(a), torch.from_numpy(b))
    with pytest.raises(NotImplementedError, match="Bool.*int\\(\\) or .float\\(\\)"):
        getattr(jt, fn)(jt.from_numpy(a), jt.from_numpy(b))


@pytest.mark.parametrize("sa, sb", [((2, 0), (0, 3)), ((0, 2), (2, 3)), ((3, 2, 0), (3, 0, 4))])
def test_bool_products_that_multiply_nothing_answer_like_torch(sa, sb):
    torch = pytest.importorskip("torch")
    got = jt.matmul(jt.ones(sa, dtype=jt.bool), jt.ones(sb, dtype=jt.bool))
    want = torch.matmul(torch.ones(sa, dtype=torch.bool), torch.ones(sb, dtype=torch.bool))
    assert_tensor(got, want.numpy(), jt.bool)


# -- outer: an elementwise product, with promotion ----------------------------------------------
@pytest.mark.parametrize("da, db", [(jt.int8, jt.uint8), (jt.int8, jt.int8), (jt.bool, jt.bool),
                                    (jt.float32, jt.float64), (jt.int64, jt.float32),
                                    (jt.bool, jt.int16), (jt.uint8, jt.uint8)])
def test_outer_promotes_like_torch(da, db):
    torch = pytest.importorskip("torch")
    a, b = _values((5,), da), _values((4,), db)
    got = jt.outer(jt.from_numpy(a), jt.from_numpy(b))
    want = torch.outer(torch.from_numpy(a), torch.from_numpy(b))
    assert want.dtype == to_torch_dtype(got.dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_outer_large_runs_the_parallel_branch():
    a, b = _values((300,), jt.int32), _values((400,), jt.int32)
    assert_tensor(jt.outer(jt.from_numpy(a), jt.from_numpy(b)), np.multiply.outer(a, b))


def test_outer_out_casts_the_result_like_torch():
    a = jt.tensor([100, 3], dtype=jt.int8)
    out = jt.zeros(2, 2, dtype=jt.int64)
    assert jt.outer(a, a, out=out) is out
    assert out.tolist() == [[16, 44], [44, 9]]  # the int8 products wrap before the cast
    strided = jt.zeros(2, 4)
    jt.outer(jt.tensor([1.0, 2.0]), jt.tensor([3.0, 4.0]), out=strided[:, ::2])
    assert strided.tolist() == [[3, 0, 4, 0], [6, 0, 8, 0]]


# -- out= ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [jt.float32, jt.int64], ids=dtype_id)
def test_out_receives_the_product(dtype):
    a, b = _values((2, 3, 4), dtype), _values((4, 5), dtype)
    out = jt.empty(2, 3, 5, dtype=dtype)
    assert jt.matmul(jt.from_numpy(a), jt.from_numpy(b), out=out) is out
    _check(out, a, b, dtype)


def test_out_may_be_a_strided_view():
    a, b = _values((3, 4), jt.float64), _values((4, 5), jt.float64)
    base = jt.zeros(3, 10, dtype=jt.float64)
    jt.mm(jt.from_numpy(a), jt.from_numpy(b), out=base[:, ::2])
    _check(base[:, ::2], a, b, jt.float64)
    assert (base.numpy()[:, 1::2] == 0).all()


@pytest.mark.parametrize("dtype", [jt.float32, jt.int32], ids=dtype_id)
def test_out_may_alias_an_input(dtype):
    a, b = _values((4, 4), dtype), _values((4, 4), dtype)
    ta = jt.from_numpy(a.copy())
    jt.matmul(ta, jt.from_numpy(b), out=ta)
    _check(ta, a, b, dtype)  # torch reads overwritten values here; the product is read first


def test_out_for_each_named_product():
    x = jt.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = jt.tensor([1.0, 1.0])
    for fn, args, shape in [("mm", (x, x), (2, 2)), ("mv", (x, v), (2,)), ("dot", (v, v), ()),
                            ("bmm", (x[None], x[None]), (1, 2, 2)), ("outer", (v, v), (2, 2))]:
        out = jt.empty(shape)
        assert getattr(jt, fn)(*args, out=out) is out
        assert out.tolist() == getattr(jt, fn)(*args).tolist()


@pytest.mark.parametrize("out, match", [
    (lambda: jt.empty(2, 5, dtype=jt.float64), "dtype float32, but got float64"),
    (lambda: jt.empty(2, 4), r"shape \(2, 4\) but the result has shape \(2, 5\)"),
    (lambda: np.empty((2, 5), np.float32), "must be a Tensor"),
])
def test_bad_out_raises_and_writes_nothing(out, match):
    a, b = jt.ones(2, 3), jt.ones(3, 5)
    out = out()
    before = np.array(out, copy=True)
    with pytest.raises((RuntimeError, TypeError), match=match):
        jt.matmul(a, b, out=out)
    np.testing.assert_array_equal(np.asarray(out), before, strict=False)


def test_product_out_refuses_another_dtype_like_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="dtype"):
        torch.mm(torch.ones(2, 3), torch.ones(3, 2), out=torch.empty(2, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="expected out tensor to have dtype float32"):
        jt.mm(jt.ones(2, 3), jt.ones(3, 2), out=jt.empty(2, 2, dtype=jt.float64))


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fn, sa, sb, match", [
    ("mm", (2, 3), (4, 5), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("matmul", (2, 3), (4, 5), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("matmul", (2, 2, 3), (4, 5),
     r"shapes \(2, 2, 3\) and \(4, 5\) cannot be multiplied: the last dim of the first \(3\) "
     r"must equal the second-to-last dim of the second \(4\); transpose or reshape"),
    ("matmul", (3,), (4,), r"shapes \(3,\) and \(4,\) cannot be multiplied: the only dim"),
    ("matmul", (3, 2, 3), (2, 3, 5), r"batch dims \(3,\) of shape \(3, 2, 3\) and \(2,\) of shape"),
    ("matmul", (), (3,), "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    ("matmul", (3,), (), "need to be at least 1D, but they are 1D and 0D"),
    ("mm", (3,), (3, 4), r"argument 'input' must be a matrix \(2-D\), but got a 1-D tensor"),
    ("mm", (2, 3), (1, 3, 4), "argument 'mat2' must be a matrix"),
    ("bmm", (3, 4), (2, 4, 5), r"argument 'input' must be a batch of matrices \(3-D\)"),
    ("bmm", (2, 3, 4), (3, 4, 5), "must hold the same number of matrices"),
    ("bmm", (2, 3, 4), (2, 5, 5), "cannot be multiplied"),
    ("mv", (2, 3), (4,), r"size mismatch, got mat \(2x3\) and vec \(4\)"),
    ("mv", (2, 3), (3, 1), "argument 'vec' must be a vector"),
    ("dot", (3, 1), (3,), "1D tensors expected, but got 2D and 1D tensors"),
    ("dot", (3,), (4,), "inconsistent tensor size"),
    ("outer", (3, 1), (4,), "argument 'input' must be a vector"),
])
def test_shape_errors_match_torch(fn, sa, sb, match):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        getattr(torch, fn)(torch.ones(sa), torch.ones(sb))
    a, b = jt.ones(sa), jt.ones(sb)
    with pytest.raises(RuntimeError, match=match):
        getattr(jt, fn)(a, b)


def test_mv_of_a_0d_input_raises_index_error_like_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(IndexError):
        torch.mv(torch.tensor(1.0), torch.ones(3))
    with pytest.raises(IndexError, match="'input' must be a matrix"):
        jt.mv(jt.tensor(1.0), jt.ones(3))


@pytest.mark.parametrize("fn, sa, sb", [("matmul", (2, 3), (3, 2)), ("mm", (2, 3), (3, 2)),
                                        ("bmm", (1, 2, 3), (1, 3, 2)), ("mv", (2, 3), (3,)),
                                        ("dot", (3,), (3,)), ("matmul", (2, 2, 3), (3,))])
def test_dtype_mismatch_raises_like_torch(fn, sa, sb):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        getattr(torch, fn)(torch.ones(sa), torch.ones(sb, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=r"same dtype, but got: float32 != float64; .*"
                                           r"\.to\(jitensor\.float64\)"):
        getattr(jt, fn)(jt.ones(sa), jt.ones(sb, dtype=jt.float64))
    with pytest.raises(RuntimeError, match="int32 != int64"):
        getattr(jt, fn)(jt.ones(sa, dtype=jt.int32), jt.ones(sb, dtype=jt.int64))


def test_device_mismatch_names_both_devices():
    a = jt.ones(2, 3)
    other = _wrap(np.ones((3, 2), np.float32), jt.float32, jt.device("cuda:0"))
    for fn in ("matmul", "mm"):
        with pytest.raises(RuntimeError, match="cpu and cuda:0"):
            getattr(jt, fn)(a, other)
    with pytest.raises(RuntimeError, match="cpu and cuda:0"):
        jt.outer(jt.ones(2), _wrap(np.ones(3, np.float32), jt.float32, jt.device("cuda:0")))


def test_non_tensor_arguments_raise_type_error_like_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError):
        torch.matmul(torch.ones(3), [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"'other' \(position 2\) must be Tensor, not list"):
        jt.matmul(jt.ones(3), [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="unsupported operand"):
        jt.ones(3) @ 2
    with pytest.raises(TypeError, match="unsupported operand"):
        [1.0, 2.0, 3.0] @ jt.ones(3)


def test_errors_leave_inputs_and_out_unchanged():
    a, b = jt.ones(2, 3), jt.ones(4, 5)
    out = jt.full((2, 5), 7.0)
    with pytest.raises(RuntimeError):
        jt.matmul(a, b, out=out)
    assert (out.numpy() == 7).all() and (a.numpy() == 1).all() and (b.numpy() == 1).all()
    bad = jt.full((2, 2), 7, dtype=jt.bool)
    with pytest.raises(NotImplementedError):
        jt.matmul(jt.ones(2, 3, dtype=jt.bool), jt.ones(3, 2, dtype=jt.bool), out=bad)
    assert bad.numpy().all()


@pytest.mark.parametrize("dtype", [jt.float64, jt.int16], ids=dtype_id)
def test_read_only_inputs_compile_nothing_new_and_read_only_out_raises(dtype):
    a, b = _values((2, 3, 4), dtype), _values((4, 5), dtype)
    a.flags.writeable = False
    frozen_b = np.broadcast_to(b, (2, 4, 5))  # NumPy makes broadcast views read-only
    _check(jt.from_numpy(a) @ jt.from_numpy(frozen_b), a, frozen_b, dtype)
    _check(jt.from_numpy(a[0, 0]) @ jt.from_numpy(frozen_b[0]), a[0, 0], frozen_b[0], dtype)
    assert_tensor(jt.outer(jt.from_numpy(a[0, 0]), jt.from_numpy(b[0])),
                  np.multiply.outer(a[0, 0], b[0]), dtype)
    for kernel in (cpu_linalg.gemm_blas, cpu_linalg.gemm_blas_serial, cpu_linalg.gemm_tiled,
                   cpu_linalg.gemv_tiled, cpu_linalg.outer_kernel):
        for signature in kernel.signatures:
            assert all(arg.mutable for arg in signature if isinstance(arg, types.Array))
    frozen_out = np.zeros((2, 3, 5), dtype.np)
    frozen_out.flags.writeable = False
    with pytest.raises(RuntimeError, match="read-only"):
        jt.matmul(jt.from_numpy(a), jt.from_numpy(b), out=jt.from_numpy(frozen_out))
    assert not frozen_out.any()


# -- operators ------------------------------------------------------------------------------
def test_matmul_operators():
    a, b = _values((3, 4), jt.float64), _values((4, 2), jt.float64)
    ta, tb = jt.from_numpy(a), jt.from_numpy(b)
    _check(ta @ tb, a, b, jt.float64)
    _check(tb.__rmatmul__(ta), a, b, jt.float64)
    _check(ta.matmul(tb), a, b, jt.float64)
    assert tb.__rmatmul__(3) is NotImplemented


def test_imatmul_rebinds_to_a_new_tensor_like_torch():
    torch = pytest.importorskip("torch")
    assert not hasattr(torch.Tensor, "__imatmul__")
    assert not hasattr(jt.Tensor, "__imatmul__")
    x = jt.ones(2, 3)
    y = x
    x @= jt.ones(3, 4)  # Python falls back to x = x @ other: any result shape, a new object
    assert x is not y and tuple(x.shape) == (2, 4) and tuple(y.shape) == (2, 3)
    assert (x.numpy() == 3).all() and (y.numpy() == 1).all()


# -- kernels --------------------------------------------------------------------------------
def test_integer_kernels_run_serial_and_parallel_alike():
    a = np.zeros((1, 70, 92), np.int32)  # rows padded to a multiple of 2, depth of 4
    b = np.zeros((1, 92, 300), np.int32)
    a[:, :, :90], b[:, :90] = _values((1, 70, 90), jt.int32), _values((1, 90, 300), jt.int32)
    at = np.ascontiguousarray(a[0, :, :90].T)[None]
    index = np.zeros(1, np.int64)
    for workers in (1, 3):
        out = np.empty((1, 70, 300), np.int32)
        cpu_linalg.gemm_tiled(out, a, b, index, index, workers)
        np.testing.assert_array_equal(out, np.matmul(a, b))
        col = np.empty((1, 70), np.int32)
        cpu_linalg.gemv_tiled(col, at, True, np.ascontiguousarray(b[:, :90, 0]), index, index,
                              workers)
        np.testing.assert_array_equal(col[0], a[0, :, :90] @ b[0, :90, 0])


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64], ids=dtype_id)
@pytest.mark.parametrize("sa, sb", SHAPES, ids=str)
def test_float_products_without_openblas_run_the_tiled_kernels(monkeypatch, dtype, sa, sb):
    monkeypatch.setattr(cpu_linalg.blas, "AVAILABLE", False)  # a NumPy built on another BLAS
    kernels = cpu_linalg.gemm_blas, cpu_linalg.gemm_blas_serial
    calls = [(k.stats.cache_hits.copy(), k.signatures[:]) for k in kernels]
    test_matmul_matches_numpy(dtype, sa, sb)
    assert [(k.stats.cache_hits, k.signatures) for k in kernels] == calls


@pytest.mark.skipif(not cpu_linalg.blas.AVAILABLE, reason="this NumPy ships no OpenBLAS")
def test_float_products_call_blas_without_scipy():
    # With SciPy importable Numba imports scipy.linalg at start-up (0.12-0.17 s); nothing in
    # jitensor needs it: float products reach NumPy's OpenBLAS directly.
    code = """
import sys
class NoScipy:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "scipy":
            raise ImportError(name)
sys.meta_path.insert(0, NoScipy())
import jitensor as jt
print((jt.ones(3, 4, dtype=jt.float64) @ jt.ones(4, 2, dtype=jt.float64)).tolist())
"""
    assert run_python(code).strip() == str([[4.0, 4.0]] * 3)


def test_second_process_loads_matmul_kernels_from_disk_cache():
    code = """
import jitensor as jt
from jitensor.kernels.cpu import linalg
for d in (jt.float32, jt.int64):
    jt.ones(3, 4, dtype=d) @ jt.ones(4, 5, dtype=d)
    jt.ones(4, dtype=d) @ jt.ones(4, dtype=d)
s = [linalg.gemm_blas_serial.stats] + [b.stats for b in linalg.gemm_tiled.builds]
print(sum(sum(x.cache_hits.values()) for x in s), sum(sum(x.cache_misses.values()) for x in s))
"""
    run_python(code)  # fills the default cache if this checkout's cache is cold
    hits, misses = map(int, run_python(code).split())
    assert misses == 0 and hits >= 2


@settings(deadline=None, max_examples=25)
@given(st.integers(1, 3), st.integers(1, 300), st.integers(1, 300), st.integers(1, 200),
       st.sampled_from([np.float32, np.float64]))
@example(1, 1024, 512, 256, np.float32)  # in BLAS_PARTS slabs
@example(1, 512, 128, 64, np.float32)  # tiny k and n: 4 slabs
@example(1, 64, 128, 128, np.float32)  # 2 slabs of columns
def test_blas_products_are_the_same_bits_at_any_thread_count(batch, m, n, k, dtype):
    """OpenBLAS's result for a row depends on where it falls in a call's micro-tiles: the
    split of a product into BLAS calls must not follow the thread count."""
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    a = jt.tensor(rng.standard_normal((batch, m, k)).astype(dtype))
    b = jt.tensor(rng.standard_normal((k, n)).astype(dtype))
    first, *rest = at_thread_counts(lambda: (a @ b).numpy().copy())
    for other in rest:
        np.testing.assert_array_equal(first, other)


@pytest.mark.parametrize("case", [("inv", (2, 3, 6), None, {}),
                                  ("inv", (6, 2, 3), None, {"ind": 1}),
                                  ("solve", (6, 2, 3), (6,), {}),
                                  ("solve", (2, 3, 6), (2, 3), {}),
                                  ("solve", (6, 2, 3), (2, 3), {"dims": (0,)})])
def test_tensorinv_and_tensorsolve_match_torch_with_gradients(case):
    torch = pytest.importorskip("torch")
    kind, a_shape, b_shape, kwargs = case
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(a_shape) + 3 * np.eye(6).reshape(a_shape)]
    if b_shape:
        arrays.append(rng.standard_normal(b_shape))
    results = []
    for lib in (jt, torch):
        args = [lib.tensor(a, requires_grad=True) for a in arrays]
        fn = lib.linalg.tensorinv if kind == "inv" else lib.linalg.tensorsolve
        out = fn(*args, **kwargs)
        (out * out).sum().backward()
        results.append([out.detach().numpy()] + [a.grad.numpy() for a in args])
    for mine, theirs in zip(*results, strict=True):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-9)


def test_tensorinv_and_tensorsolve_errors_and_out_as_torch():
    torch = pytest.importorskip("torch")
    for call in (lambda m: m.linalg.tensorinv(m.ones(2, 3, 5)),
                 lambda m: m.linalg.tensorinv(m.ones(4, 4), ind=0),
                 lambda m: m.linalg.tensorsolve(m.ones(6, 2, 3), m.ones(5)),
                 lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 3), dims=(0,))):
        with pytest.raises(RuntimeError) as theirs:
            call(torch)
        with pytest.raises(RuntimeError) as mine:
            call(jt)
        assert str(mine.value) == str(theirs.value)
    out = jt.empty(6, 2, 3, dtype=jt.float64)
    a = jt.eye(6, dtype=jt.float64).reshape(2, 3, 6) * 2
    assert jt.linalg.tensorinv(a, out=out) is out and jt.allclose(out.reshape(6, 6),
                                                                   jt.eye(6).double() / 2)
