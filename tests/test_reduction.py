"""Reductions, softmax and cumsum: NumPy as the oracle over every CPU dtype (with torch's dtype
rules for the expected dtype), hypothesis over shapes / dims / keepdim / strided views, torch as
a second oracle for values, dtypes and the (values, indices) named tuples, torch's errors, the
accuracy of float sums, numerically stable softmax, and the parallel kernels on larger inputs."""
import math
import pickle
import warnings

import numpy as np
import pytest
from conftest import (
    CPU_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    assert_tensor,
    at_thread_counts,
    dtype_id,
    run_python,
)
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
from jitensor.kernels.cpu import reduction as cpu_reduction
from jitensor.kernels.cpu.kernels import PARALLEL_MIN

NON_BOOL = INT_DTYPES + FLOAT_DTYPES


def sample(dtype, shape, seed=0):
    """Values that sum and multiply without overflow or rounding in any dtype."""
    rng = np.random.default_rng(seed)
    if dtype is jt.bool:
        return rng.random(shape) < 0.6
    if dtype is jt.uint8:
        return rng.integers(0, 4, shape).astype(np.uint8)
    if dtype.is_floating_point:
        return (rng.standard_normal(shape) * 3).astype(dtype.np)
    return rng.integers(-3, 4, shape).astype(dtype.np)


def sum_dtype(dtype):
    return dtype if dtype.is_floating_point else jt.int64


def close(t, expected, dtype, rtol=None):
    """t has dtype `dtype`, expected's shape, and its values within float tolerance."""
    expected = np.asarray(expected)
    assert isinstance(t, jt.Tensor) and t.dtype is dtype, (t.dtype, dtype)
    assert tuple(t.shape) == expected.shape, (tuple(t.shape), expected.shape)
    if dtype.is_floating_point:
        rtol = rtol or (2e-6 if dtype is jt.float32 else 1e-12)
        np.testing.assert_allclose(t.numpy(), expected, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(t.numpy(), expected.astype(dtype.np))


# -- the whole-tensor small-op path ----------------------------------------------------------------
def planned(op, data):
    """op over every dim of the NumPy array `data` by the general route (frames planned, then
    _launch), bypassing the dense shortcuts the small-op paths take."""
    out = np.empty((), data.dtype)
    flat, (slabs, shape, ss, os) = cpu_reduction._reduce_plan(data, out, tuple(range(data.ndim)),
                                                              False)
    for so, oo in slabs:
        cpu_reduction._launch(op, flat, so, shape, ss, out.reshape(-1), cpu_reduction._NO_INDEX,
                              oo, os, 0.0)
    return out


@given(shape=st.lists(st.integers(1, 6), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from(FLOAT_DTYPES), view=st.sampled_from(["dense", "T", "step"]),
       nan=st.booleans())
def test_whole_tensor_reductions_match_the_general_path(shape, dtype, view, nan):
    """x.sum(), x.mean(), x.max(), x.min() take a short path for whole floating tensors: the
    same bits as the general, planned route, whatever the layout, and NumPy's values."""
    from jitensor.kernels.scalar import reduction as codes
    a = np.array(sample(dtype, shape, seed=len(shape)))
    if nan and a.size:
        a.reshape(-1)[a.size // 2] = np.nan
    x = jt.from_numpy(a)
    x = {"dense": x, "T": x.T, "step": x[..., ::2] if x.ndim else x}[view]
    ref = x.numpy()
    for name, op, fn in (("sum", codes.SUM, np.sum), ("mean", codes.MEAN, np.mean),
                         ("max", codes.MAX, np.max), ("min", codes.MIN, np.min)):
        got = getattr(x, name)()
        assert got.shape == () and got.dtype is dtype
        assert got.numpy().tobytes() == planned(op, x._data).tobytes(), name
        # (atol: float32 accumulation, as torch's, of terms that cancel, e.g. 4 terms near 1
        # summing to -0.04 came 2.4e-7 off the float64 value)
        scale = np.nansum(np.abs(ref.astype(np.float64)))
        np.testing.assert_allclose(got.numpy(), fn(ref.astype(np.float64)),
                                   rtol=2e-6 if dtype is jt.float32 else 1e-12,
                                   atol=1e-6 * scale if dtype is jt.float32 else 0,
                                   equal_nan=True)


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64, jt.int32, jt.bool], ids=dtype_id)
@pytest.mark.parametrize("rows, n", [(5, 7), (5, 8), (5, 64), (5, 129), (3, 4096), (4096, 17)])
def test_dense_rows_match_the_strided_route(dtype, rows, n):
    """Contiguous rows run a loop specialised per op (the commonest reduction, x.sum(-1)): every
    op gives the bits the general row code gives the same rows with their elements spaced out
    (gathered first), with NaNs and ties where argmax/argmin must find the first; 4096 x 17 runs the
    parallel kernels. Sums and means are also checked against float64 NumPy."""
    a = sample(dtype, (rows, n), seed=n)
    if dtype.is_floating_point and n > 1:
        a[1, n // 2] = np.nan
        a[2, :] = a[2, 0]  # ties: the first index wins
    x = jt.from_numpy(a)
    spaced = np.zeros((rows, 2 * n), a.dtype)
    spaced[:, ::2] = a
    strided = jt.from_numpy(spaced)[:, ::2]  # elements 2 apart: the general rows, gathered
    calls = [lambda t: t.any(-1), lambda t: t.all(-1), lambda t: t.sum(-1),
             lambda t: t.amax(-1), lambda t: t.amin(-1), lambda t: t.prod(-1)]
    if dtype is not jt.bool:
        calls += [lambda t: t.argmax(-1), lambda t: t.argmin(-1)]
    if dtype.is_floating_point:
        calls += [lambda t: t.mean(-1), lambda t: t.var(-1), lambda t: t.std(-1),
                  lambda t: t.logsumexp(-1)]
    for call in calls:
        got, ref = call(x), call(strided)
        assert got.dtype is ref.dtype and got.numpy().tobytes() == ref.numpy().tobytes()
    if dtype is not jt.bool:
        np.testing.assert_array_equal(x.argmax(-1).numpy(), np.argmax(a, -1))
    if dtype.is_floating_point:
        np.testing.assert_allclose(x.mean(-1).numpy(), a.astype(np.float64).mean(-1),
                                   rtol=1e-6 if dtype is jt.float32 else 1e-14, atol=1e-6)


def test_whole_tensor_reductions_of_large_and_empty_tensors():
    big = np.random.default_rng(1).standard_normal(PARALLEL_MIN * 3).astype(np.float32)
    close(jt.from_numpy(big).sum(), big.astype(np.float64).sum(), jt.float32, rtol=1e-5)
    close(jt.from_numpy(big).max(), big.max(), jt.float32)
    assert jt.zeros(0).sum().item() == 0 and math.isnan(jt.zeros(0).mean().item())
    with pytest.raises(RuntimeError):
        jt.zeros(0).max()
    if jt.cuda.is_available():  # a CUDA float16 tensor's CPU copy sums in float32
        assert jt.ones(3, dtype=jt.float16, device="cuda").cpu().sum().item() == 3


# -- every op over every CPU dtype ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_sum_prod_dtypes(dtype):
    a = sample(dtype, (4, 5))
    x = jt.from_numpy(a)
    wide = a.astype(np.float64 if dtype.is_floating_point else np.int64)
    close(x.sum(), wide.sum(), sum_dtype(dtype))
    close(jt.sum(x, 1), wide.sum(1), sum_dtype(dtype))
    close(x.sum((0, 1), keepdim=True), wide.sum((0, 1), keepdims=True), sum_dtype(dtype))
    close(x.prod(0), wide.prod(0), sum_dtype(dtype))
    close(jt.prod(x), wide.prod(), sum_dtype(dtype))


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_mean_needs_float(dtype):
    a = sample(dtype, (3, 4))
    x = jt.from_numpy(a)
    if dtype.is_floating_point:
        close(x.mean(), a.astype(np.float64).mean(), dtype)
        close(x.mean(0), a.astype(np.float64).mean(0), dtype)
    else:
        with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
            x.mean()
    close(x.mean(1, dtype=jt.float64), a.astype(np.float64).mean(1), jt.float64)


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_max_min_amax_amin_keep_the_dtype(dtype):
    a = sample(dtype, (4, 6), seed=1)
    x = jt.from_numpy(a)
    assert_tensor(x.max(), a.max())
    assert_tensor(x.min(), a.min())
    assert_tensor(jt.amax(x, 0), a.max(0))
    assert_tensor(jt.amin(x, (0, 1), keepdim=True), a.min((0, 1), keepdims=True))
    values, indices = x.max(1)
    assert_tensor(values, a.max(1))
    assert_tensor(indices, a.argmax(1))
    values, indices = jt.min(x, 0, keepdim=True)
    assert_tensor(values, a.min(0, keepdims=True))
    assert_tensor(indices, a.argmin(0)[None])


@pytest.mark.parametrize("dtype", NON_BOOL, ids=dtype_id)
def test_argmax_argmin(dtype):
    a = sample(dtype, (5, 7), seed=2)
    x = jt.from_numpy(a)
    assert_tensor(x.argmax(), np.int64(a.argmax()))
    assert_tensor(jt.argmin(x), np.int64(a.argmin()))
    assert_tensor(x.argmax(0), a.argmax(0))
    assert_tensor(x.argmin(dim=-1, keepdim=True), a.argmin(1)[:, None])
    assert_tensor(jt.argmax(x, None, keepdim=True), np.full((1, 1), a.argmax()))


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_all_any(dtype):
    a = sample(dtype, (4, 5), seed=3)
    x = jt.from_numpy(a)
    result = jt.uint8 if dtype is jt.uint8 else jt.bool  # torch keeps uint8 for uint8 input
    close(x.all(), a.all(), result)
    close(jt.any(x), a.any(), result)
    close(x.all(1), a.all(1), result)
    close(x.any((0, 1), keepdim=True), a.any((0, 1), keepdims=True), result)
    close(x.all(()), a != 0, result)  # dim=(): no reduction, as torch


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_var_std_need_float(dtype):
    a = sample(dtype, (4, 6), seed=4)
    x = jt.from_numpy(a)
    if not dtype.is_floating_point:
        with pytest.raises(RuntimeError, match="std and var only support floating point"):
            x.var()
        with pytest.raises(RuntimeError, match="std and var only support floating point"):
            jt.std(x, 0)
        return
    wide = a.astype(np.float64)
    close(x.var(), wide.var(ddof=1), dtype)
    close(x.std(1), wide.std(1, ddof=1), dtype)
    close(jt.var(x, 0, unbiased=False), wide.var(0), dtype)
    close(x.var(False), wide.var(), dtype)
    close(x.var(0, True, True), wide.var(0, ddof=1, keepdims=True), dtype)
    close(jt.std(x, (0, 1), correction=2), wide.std(ddof=2), dtype)
    close(x.var(1, correction=0.5), wide.var(1, ddof=0.5), dtype)


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_logsumexp(dtype):
    a = sample(dtype, (3, 5), seed=5)
    x = jt.from_numpy(a)
    result = dtype if dtype.is_floating_point else jt.float32  # the default dtype
    wide = a.astype(np.float64)
    close(x.logsumexp(1), np.log(np.exp(wide).sum(1)), result)
    close(jt.logsumexp(x, (0, 1), keepdim=True), np.log(np.exp(wide).sum(keepdims=True)), result)


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_cumsum(dtype):
    a = sample(dtype, (3, 6), seed=6)
    x = jt.from_numpy(a)
    wide = a.astype(np.float64 if dtype.is_floating_point else np.int64)
    close(x.cumsum(1), wide.cumsum(1), sum_dtype(dtype))
    close(jt.cumsum(x, 0), wide.cumsum(0), sum_dtype(dtype))
    close(x.cumsum(-1, dtype=jt.float64), wide.cumsum(1), jt.float64)


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_softmax_dtypes(dtype):
    a = sample(dtype, (3, 4), seed=7)
    x = jt.from_numpy(a)
    wide = a.astype(np.float64)
    e = np.exp(wide - wide.max(1, keepdims=True))
    if dtype.is_floating_point:
        close(x.softmax(1), e / e.sum(1, keepdims=True), dtype)
        close(jt.log_softmax(x, -1), np.log(e / e.sum(1, keepdims=True)), dtype)
    else:  # torch: not implemented for integer input without dtype=
        with pytest.raises(NotImplementedError, match="dtype=jitensor.float32"):
            jt.softmax(x, 1)
        with pytest.raises(NotImplementedError):
            x.log_softmax(1)
    close(jt.softmax(x, 1, dtype=jt.float64), e / e.sum(1, keepdims=True), jt.float64)


# -- shapes, dims, keepdim, layouts (hypothesis) ---------------------------------------------------
@st.composite
def arrays(draw, dtype=np.float64, min_side=0):
    """A NumPy array of 0-4 dims, possibly a transposed / sliced / broadcast view, with a NaN
    in it now and then (floats)."""
    ndim = draw(st.integers(0, 4))
    shape = draw(st.lists(st.integers(min_side, 5), min_size=ndim, max_size=ndim))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kind = draw(st.sampled_from(["contiguous", "transposed", "sliced", "broadcast"]))
    if kind == "sliced":
        base = rng.standard_normal([2 * n + 1 for n in shape]).astype(dtype)
        a = base[tuple(slice(1, None, 2) for _ in shape)] if ndim else base
    elif kind == "broadcast" and ndim:
        a = np.broadcast_to(rng.standard_normal([1] + shape[1:]).astype(dtype), shape)
    else:
        a = rng.standard_normal(shape).astype(dtype)
        if kind == "transposed":
            a = a.transpose(draw(st.permutations(range(ndim)))).copy().transpose(
                draw(st.permutations(range(ndim))))
    if np.dtype(dtype).kind == "f" and a.size and a.flags.writeable and draw(st.booleans()):
        a.flat[draw(st.integers(0, a.size - 1))] = np.nan
    return a


@st.composite
def arrays_and_dims(draw, dtype=np.float64, min_side=0):
    a = draw(arrays(dtype, min_side))
    nd = max(a.ndim, 1)
    dims = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
    dims = [d - nd if draw(st.booleans()) else d for d in dims]  # negative dims too
    return a, tuple(dims), draw(st.booleans())


def np_dims(a, dims):
    return None if a.ndim == 0 else tuple(d % a.ndim for d in dims) or None


@given(arrays_and_dims())
def test_sum_mean_amax_over_any_dims(case):
    a, dims, keepdim = case
    x = jt.from_numpy(a)
    axis = np_dims(a, dims)
    close(x.sum(dims, keepdim), a.sum(axis, keepdims=keepdim), jt.float64)
    if a.size:
        close(x.mean(dims, keepdim), a.mean(axis, keepdims=keepdim), jt.float64)
    nonempty = all(a.shape[d] for d in (axis or range(a.ndim)))
    if a.size and nonempty:
        close(jt.amax(x, dims, keepdim), a.max(axis, keepdims=keepdim), jt.float64)
        close(jt.amin(x, dims, keepdim), a.min(axis, keepdims=keepdim), jt.float64)


@given(arrays_and_dims(min_side=1))
def test_var_logsumexp_over_any_dims(case):
    a, dims, keepdim = case
    x = jt.from_numpy(a)
    axis = np_dims(a, dims)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dof <= 0 warns, as torch, and gives inf/nan
        expected = a.var(axis, ddof=1, keepdims=keepdim) if a.size > 1 else np.full(
            np.sum(a, axis, keepdims=keepdim).shape, np.nan)
        close(x.var(dims, keepdim=keepdim), expected, jt.float64, rtol=1e-9)
    if isinstance(dims, (tuple, list)) and not dims and not keepdim and a.ndim:
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            jt.logsumexp(x, dims, keepdim)  # as torch (tests/test_malformed.py)
        return
    lse = np.log(np.exp(a).sum(axis, keepdims=keepdim))
    close(jt.logsumexp(x, dims, keepdim), lse, jt.float64, rtol=1e-12)


@given(arrays_and_dims(dtype=np.int16))
def test_integer_sum_all_any_over_any_dims(case):
    a, dims, keepdim = case
    x = jt.from_numpy(a)
    axis = np_dims(a, dims)
    close(x.sum(dims, keepdim), a.sum(axis, keepdims=keepdim, dtype=np.int64), jt.int64)
    positive = jt.from_numpy(np.asarray(a > 0))
    close(positive.all(dims or None, keepdim), (a > 0).all(axis, keepdims=keepdim), jt.bool)
    close(positive.any(dims or None, keepdim), (a > 0).any(axis, keepdims=keepdim), jt.bool)


@given(arrays(min_side=1), st.data())
def test_max_argmax_along_one_dim(a, data):  # NumPy's max and argmax treat NaN as torch does
    x = jt.from_numpy(a)
    d = data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    keepdim = data.draw(st.booleans())
    values, indices = x.max(d, keepdim)
    if a.ndim == 0:
        assert_tensor(values, a)
        assert_tensor(indices, np.int64(0))
        return
    assert_tensor(values, a.max(d, keepdims=keepdim))
    assert_tensor(indices, np.expand_dims(a.argmax(d), d) if keepdim else a.argmax(d))
    assert_tensor(jt.argmin(x, d, keepdim), np.expand_dims(a.argmin(d), d) if keepdim
                  else a.argmin(d))
    assert_tensor(x.argmax(), np.int64(a.argmax()))  # the index into the flattened input


@given(arrays(), st.data())
def test_softmax_cumsum_along_any_dim(a, data):
    x = jt.from_numpy(a)
    d = data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    axis = d % a.ndim if a.ndim else None
    close(x.cumsum(d), np.cumsum(a, axis).reshape(a.shape), jt.float64)
    e = np.exp(a - (a.max(axis, keepdims=True) if a.size else 0))
    sm = e / e.sum(axis, keepdims=True)
    close(x.softmax(d), sm, jt.float64, rtol=1e-12)
    close(x.log_softmax(d), np.log(sm), jt.float64, rtol=1e-12)


# -- NaN, infinities, empty ranges -------------------------------------------------------------
def test_nan_propagates_as_in_torch():
    nan = float("nan")
    x = jt.tensor([[1.0, nan, 3.0, nan], [2.0, 5.0, -1.0, 0.0]])
    assert np.isnan(x.sum().item()) and np.isnan(x.mean().item())
    close(x.sum(1), [nan, 6.0], jt.float32)
    close(x.amax(1), [nan, 5.0], jt.float32)
    close(x.amin(1), [nan, -1.0], jt.float32)
    values, indices = x.max(1)
    close(values, [nan, 5.0], jt.float32)
    assert indices.tolist() == [1, 1]  # the first NaN
    assert x.argmin(1).tolist() == [1, 2]
    assert x.argmax().item() == 1
    assert np.isnan(x.var(1)[0].item()) and np.isnan(x.logsumexp(1)[0].item())
    assert np.isnan(x.softmax(1)[0]).all() and not np.isnan(x.softmax(1)[1]).any()
    big = np.full(5000, 1.0, np.float32)
    big[4321] = nan  # a NaN in a later block of a long row
    assert jt.from_numpy(big).argmax().item() == 4321
    assert np.isnan(jt.from_numpy(big).max().item())


@pytest.mark.parametrize("n", [5000, 300001])  # several blocks; several parallel parts
def test_argmax_first_index_across_blocks(n):
    a = np.zeros(n, np.float32)
    a[[7, 4100, n - 2]] = 3.0  # ties in different blocks (and parts): the first wins
    a[[9, 4500]] = -2.0
    x = jt.from_numpy(a)
    assert x.argmax().item() == 7 and x.argmin().item() == 9
    assert x.max(0).indices.item() == 7
    assert jt.from_numpy(np.full(n, -np.inf, np.float32)).argmax().item() == 0
    assert jt.from_numpy(np.full(n, np.iinfo(np.int64).min)).argmax().item() == 0
    assert jt.from_numpy(np.ones(n, np.int8)).argmin().item() == 0
    rows = np.zeros((3, n // 3), np.float64)
    rows[:, -1] = rows[:, 2] = 1.0
    assert jt.from_numpy(rows).argmax(1).tolist() == [2, 2, 2]


def test_infinities():
    inf = float("inf")
    for n in (10, 5000, 300000):  # one block, several, parallel parts
        a = np.ones(n)
        a[n // 2] = inf
        assert jt.from_numpy(a).sum().item() == inf and jt.from_numpy(a).mean().item() == inf
        a[n // 3] = -inf
        assert np.isnan(jt.from_numpy(a).sum().item())
        col = np.ones((n, 20), np.float32)
        col[n // 2, 3] = inf
        assert jt.from_numpy(col).sum(0)[3].item() == inf
    close(jt.tensor([-inf, -inf]).logsumexp(0), -inf, jt.float32)
    close(jt.tensor([inf, 1.0]).logsumexp(0), inf, jt.float32)
    close(jt.tensor([-inf, 0.0]).softmax(0), [0.0, 1.0], jt.float32)  # masked entries
    assert np.isnan(jt.tensor([-inf, -inf]).softmax(0).numpy()).all()  # torch: nan
    assert jt.tensor([-inf, -inf, 1.0]).argmax().item() == 2
    assert jt.tensor([-inf, -inf]).argmax().item() == 0


def test_empty_reductions_as_torch():
    e = jt.zeros(0, 3)
    close(e.sum(), 0.0, jt.float32)
    close(e.sum(0), [0.0, 0.0, 0.0], jt.float32)
    close(e.prod(0), [1.0, 1.0, 1.0], jt.float32)
    assert np.isnan(e.mean().item())
    close(e.all(), True, jt.bool)
    close(e.any(0), [False] * 3, jt.bool)
    close(e.logsumexp(0), [-np.inf] * 3, jt.float32)
    close(e.amax(1), np.zeros(0), jt.float32)
    assert tuple(e.max(1).indices.shape) == (0,)
    close(e.cumsum(0), np.zeros((0, 3)), jt.float32)
    close(e.softmax(1), np.zeros((0, 3)), jt.float32)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert np.isnan(e.var().item())
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        e.max()
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        e.max(0)
    with pytest.raises(IndexError, match="amax\\(\\): Expected reduction dim 0"):
        e.amax(0)
    with pytest.raises(IndexError, match="argmax\\(\\): Expected reduction dim"):
        e.argmax()


def test_zero_dim_tensors():
    x = jt.tensor(5.0)
    close(x.sum(0), 5.0, jt.float32)
    close(x.sum(-1, keepdim=True), 5.0, jt.float32)
    values, indices = x.max(0)
    close(values, 5.0, jt.float32)
    assert indices.item() == 0 and indices.dtype is jt.int64
    close(x.softmax(0), 1.0, jt.float32)
    close(x.cumsum(-1), 5.0, jt.float32)
    close(x.logsumexp(0), 5.0, jt.float32)
    with pytest.warns(UserWarning):
        assert np.isnan(x.var().item())
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        x.sum(1)


# -- torch as a second oracle ------------------------------------------------------------------
def to_torch(torch, a):
    return torch.from_numpy(np.ascontiguousarray(a))


def same(torch, t, r, tol=1e-6):
    assert str(t.dtype).split(".")[1] == str(r.dtype).split(".")[1]
    assert tuple(t.shape) == tuple(r.shape)
    np.testing.assert_allclose(t.numpy().astype(np.float64), r.numpy().astype(np.float64),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [jt.int32, jt.float32, jt.float64, jt.bool], ids=dtype_id)
def test_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    a = sample(dtype, (3, 4, 5), seed=8)
    x, r = jt.from_numpy(a), to_torch(torch, a)
    for name, args, kwargs in [("sum", (), {}), ("sum", ((0, 2),), {"keepdim": True}),
                               ("prod", (1,), {}), ("amax", (-1,), {}), ("amin", ((0, 1),), {}),
                               ("all", (1,), {}), ("any", (), {}), ("cumsum", (2,), {}),
                               ("logsumexp", ((1, 2),), {}), ("max", (), {}), ("min", (), {})]:
        same(torch, getattr(x, name)(*args, **kwargs), getattr(r, name)(*args, **kwargs))
    if dtype.is_floating_point:
        for name, args, kwargs in [("mean", (1,), {}), ("var", (0,), {"correction": 0}),
                                   ("std", ((1, 2),), {"keepdim": True}),
                                   ("softmax", (0,), {}), ("log_softmax", (2,), {})]:
            same(torch, getattr(x, name)(*args, **kwargs), getattr(r, name)(*args, **kwargs))
    if dtype is not jt.bool:
        same(torch, x.argmax(1), r.argmax(1))
        same(torch, x.argmin(), r.argmin())


def test_named_tuples_like_torch():
    torch = pytest.importorskip("torch")
    a = sample(jt.float32, (3, 4), seed=9)
    got, ref = jt.from_numpy(a).max(1, keepdim=True), to_torch(torch, a).max(1, keepdim=True)
    assert type(got) is jt.return_types.max and type(got).__name__ == type(ref).__name__
    assert type(got).__module__ == "jitensor.return_types"
    assert len(got) == 2 and got[0] is got.values and got[1] is got.indices
    same(torch, got.values, ref.values)
    same(torch, got.indices, ref.indices)
    values, indices = jt.from_numpy(a).min(dim=0)
    assert type(jt.from_numpy(a).min(0)) is jt.return_types.min
    same(torch, values, to_torch(torch, a).min(dim=0).values)
    same(torch, indices, to_torch(torch, a).min(dim=0).indices)
    assert repr(got).startswith("jitensor.return_types.max(\nvalues=tensor(")
    again = pickle.loads(pickle.dumps(got))
    assert type(again) is jt.return_types.max and again.indices.tolist() == got.indices.tolist()


def test_softmax_matches_torch_and_survives_large_values():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    for shape, dim in [((64, 300), -1), ((40, 70), 0), ((5, 33, 6), 1), ((3000,), 0)]:
        a = (rng.standard_normal(shape) * 4).astype(np.float32)
        x, r = jt.from_numpy(a), to_torch(torch, a)
        s = x.softmax(dim)
        same(torch, s, r.softmax(dim), tol=1e-6)
        np.testing.assert_allclose(s.numpy().sum(dim), 1.0, atol=1e-5)
        same(torch, x.log_softmax(dim), r.log_softmax(dim), tol=2e-5)
    a = np.array([[1e4, 0.0, -1e4], [1e4, 1e4 - 1, 3.0]], np.float32)
    s = jt.from_numpy(a).softmax(1)
    assert np.isfinite(s.numpy()).all()
    same(torch, s, to_torch(torch, a).softmax(1))
    same(torch, jt.from_numpy(a).log_softmax(1), to_torch(torch, a).log_softmax(1))
    close(jt.from_numpy(a).logsumexp(1), to_torch(torch, a).logsumexp(1).numpy(), jt.float32)


def test_vectorisable_exp_is_accurate():
    """The CPU kernels' exp (elementwise, softmax, logsumexp): within 2 ulp over the normal
    range, correctly small in the denormals, inf past the largest float, exact specials."""
    from numba import njit

    from jitensor.kernels.scalar.libm import exp

    @njit
    def apply(a, out):
        for i in range(a.size):
            out[i] = exp(a[i])

    def run(x):
        got = np.empty_like(x)
        apply(x, got)
        return got

    for dtype, lo, hi, tiny, top in [(np.float32, -87.3, 88.72, -103.9, 88.73),
                                      (np.float64, -708.3, 709.78, -745.1, 709.79)]:
        x = np.linspace(lo, hi, 100001).astype(dtype)
        exact = np.exp(x.astype(np.longdouble))
        assert np.max(np.abs(run(x) / exact - 1)) < 2 * np.finfo(dtype).eps
        denormal = np.linspace(tiny, lo, 10001).astype(dtype)  # results below the normals
        step = np.finfo(dtype).smallest_subnormal
        assert np.max(np.abs(run(denormal) - np.exp(denormal.astype(np.longdouble)))) <= step
        special = np.array([np.nan, np.inf, -np.inf, 0.0, tiny - 1, top, -1e30, 1e30], dtype)
        np.testing.assert_array_equal(run(special), [np.nan, np.inf, 0, 1, 0, np.inf, 0, np.inf])


# -- accuracy ------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [(1 << 20) + 7, 3 << 20])
def test_float32_sum_at_least_as_accurate_as_numpy(n):
    rng = np.random.default_rng(11)
    a = (rng.random(n) * 1000 + 0.5).astype(np.float32)  # one sign: no cancellation to hide in
    exact = a.astype(np.float64).sum()
    ours = abs(float(jt.from_numpy(a).sum().item()) - exact)
    numpy_error = abs(float(a.sum()) - exact)
    assert ours <= numpy_error
    assert ours <= exact * 2 ** -24  # correctly rounded to float32 or one step off
    m = a[: 1 << 20].reshape(1024, 1024)  # a columns sum and a mean
    np.testing.assert_allclose(jt.from_numpy(m).sum(0).numpy(), m.astype(np.float64).sum(0),
                               rtol=2 ** -23)
    assert abs(jt.from_numpy(a).mean().item() - a.astype(np.float64).mean()) <= \
        abs(float(a.mean()) - a.astype(np.float64).mean())


def test_float64_sum_at_least_as_accurate_as_numpy():
    rng = np.random.default_rng(12)
    for a in (rng.random(1 << 21) + 1e6, rng.standard_normal(3 << 20), rng.random(5000)):
        exact = math.fsum(a)
        assert abs(jt.from_numpy(a).sum().item() - exact) <= abs(a.sum() - exact)


def test_var_is_stable_with_a_large_offset():
    a = (np.arange(100000) % 7 + 1e8).astype(np.float64)
    np.testing.assert_allclose(jt.from_numpy(a).var().item(), np.var(a - 1e8, ddof=1), rtol=1e-9)


# -- the kernels' paths: parallel, columns, strided, broadcast, fallback copies -----------------
@pytest.mark.parametrize("op", ["sum", "amax", "argmax", "var", "logsumexp", "all"])
def test_large_inputs_take_the_parallel_kernels(op):
    rng = np.random.default_rng(13)
    a = rng.standard_normal((3, 70000)).astype(np.float32)  # few long rows: split into parts
    cases = [(a, 1), (a, None), (a.T, 0), (rng.standard_normal((512, 256)).astype(np.float32), 0),
             (rng.standard_normal((512, 256)).astype(np.float32)[:, ::2], 1)]
    for arr, dim in cases:
        x = jt.from_numpy(arr)
        wide = arr.astype(np.float64)
        if op == "sum":
            close(x.sum(dim), wide.sum(dim), jt.float32, rtol=1e-5)
        elif op == "amax":
            close(x.amax(() if dim is None else dim), wide.max(dim), jt.float32)
        elif op == "argmax":
            assert_tensor(x.argmax(dim), np.asarray(arr.argmax(dim), np.int64))
        elif op == "var":
            close(x.var(dim), wide.var(dim, ddof=1), jt.float32, rtol=1e-5)
        elif op == "logsumexp":
            close(x.logsumexp(dim if dim is not None else (0, 1)),
                  np.log(np.exp(wide).sum(dim)), jt.float32, rtol=1e-5)
        else:
            close((x > -3).all(dim), (arr > -3).all(dim), jt.bool)


def test_large_softmax_and_cumsum():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(14)
    a = rng.standard_normal((300, 400)).astype(np.float32)
    assert a.size >= PARALLEL_MIN
    for view in (a, a.T, a[:, ::3]):
        for dim in (0, 1):
            same(torch, jt.from_numpy(view).softmax(dim), to_torch(torch, view).softmax(dim))
            close(jt.from_numpy(view).cumsum(dim), np.cumsum(view.astype(np.float64), dim),
                  jt.float32, rtol=1e-4)


def test_broadcast_and_irregular_layouts():
    rng = np.random.default_rng(15)
    b = np.broadcast_to(rng.standard_normal((1, 5, 1)), (4, 5, 6))  # stride-0 dims, read-only
    x = jt.from_numpy(b)
    close(x.sum(), b.sum(), jt.float64)
    close(x.sum((0, 2)), b.sum((0, 2)), jt.float64)
    close(x.amax(1), b.max(1), jt.float64)
    close(x.softmax(0), np.full(b.shape, 0.25), jt.float64)
    c = rng.standard_normal((2, 3, 4, 5, 6))[:, :, ::2, :, ::3]  # three reduced groups
    close(jt.from_numpy(c).sum((0, 2, 4)), c.sum((0, 2, 4)), jt.float64)
    close(jt.from_numpy(c).var((1, 3)), c.var((1, 3), ddof=1), jt.float64)
    assert_tensor(jt.from_numpy(c).argmax(), np.int64(c.argmax()))
    d = rng.standard_normal((3, 4, 5, 6, 7)).transpose(4, 1, 3, 0, 2)  # more kept dims than 2
    close(jt.from_numpy(d).sum(1), d.sum(1), jt.float64)
    close(jt.from_numpy(d).logsumexp(3), np.log(np.exp(d).sum(3)), jt.float64)


def test_reductions_do_not_copy_the_input(monkeypatch):
    copies = []
    monkeypatch.setattr(cpu_reduction, "_copy", lambda *a: copies.append(a))
    a = np.random.default_rng(16).standard_normal((6, 8, 10))
    for view in (a, a.transpose(2, 0, 1), a[:, ::2, 1:]):
        for dims in ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2), None):
            close(jt.from_numpy(view).sum(dims), view.sum(dims), jt.float64)
        s = jt.from_numpy(view).softmax(1)
        close(s.sum(1), np.ones(s.shape[:1] + s.shape[2:]), jt.float64)
    assert not copies


# -- out= ----------------------------------------------------------------------------------------
def test_out_argument():
    x = jt.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    out = jt.empty(2)
    assert jt.sum(x, 1, out=out) is out
    close(out, [9.0, 12.0], jt.float32)
    wide = jt.empty(2, dtype=jt.float64)
    close(jt.mean(x, 1, out=wide), [3.0, 4.0], jt.float64)
    as_int = jt.empty(2, dtype=jt.int64)
    halves = jt.tensor([[1.5, 5.5, 3.5], [4.5, 2.5, 6.5]])
    close(jt.sum(halves, 1, out=as_int), [9, 12], jt.int64)  # torch sums in out's dtype
    values, indices = jt.empty(2), jt.empty(2, dtype=jt.int64)
    got = jt.max(x, 1, out=(values, indices))
    assert got.values is values and got.indices is indices and indices.tolist() == [1, 2]
    idx = jt.empty(2, dtype=jt.int64)
    assert jt.argmax(x, 1, out=idx) is idx and idx.tolist() == [1, 2]
    c = jt.empty(2, 3, dtype=jt.float64)
    close(jt.cumsum(x, 1, out=c), np.cumsum(x.numpy(), 1), jt.float64)
    same_memory = x.clone()
    jt.cumsum(same_memory, 1, out=same_memory)  # out aliasing the input is fine
    close(same_memory, np.cumsum(x.numpy(), 1), jt.float32)


@pytest.mark.parametrize("call, error, message", [
    (lambda x, o: jt.sum(x, 1, out=o(3)), RuntimeError, "out= has shape"),
    (lambda x, o: jt.mean(x, 1, out=o(2, dtype=jt.int64)), RuntimeError, "can't be cast"),
    (lambda x, o: jt.sum(x, 1, dtype=jt.float64, out=o(2)), RuntimeError, "dtype float64"),
    (lambda x, o: jt.amax(x, 1, out=o(2, dtype=jt.float64)), RuntimeError, "dtype float32"),
    (lambda x, o: jt.argmax(x, 1, out=o(2, dtype=jt.int32)), RuntimeError, "dtype int64"),
    (lambda x, o: jt.all(x, 1, out=o(2)), RuntimeError, "bool tensor"),
    (lambda x, o: jt.max(x, 1, out=(o(2), o(2, dtype=jt.int32))), RuntimeError, "int64"),
    (lambda x, o: jt.max(x, 1, out=(o(2, dtype=jt.float64), o(2, dtype=jt.int64))),
     RuntimeError, "float32"),
    (lambda x, o: jt.logsumexp(x, 1, out=o(2, dtype=jt.int64)), RuntimeError, "floating point"),
])
def test_bad_out_raises_and_leaves_out_unchanged(call, error, message):
    x = jt.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    made = []

    def make(*size, dtype=jt.float32):
        made.append(jt.full(size, 7, dtype=dtype))
        return made[-1]

    with pytest.raises(error, match=message):
        call(x, make)
    for t in made:
        assert (t.numpy() == 7).all()
    assert x.tolist() == [[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]


# -- errors --------------------------------------------------------------------------------------
# (call(module, x), exception, message, whether torch raises the same exception type); calls
# name dtypes through the module, so each runs against jitensor and torch alike.
ERRORS = [
    (lambda m, x: x.sum(2), IndexError, r"Dimension out of range \(expected to be in range of "
                                        r"\[-2, 1\], but got 2\)", True),
    (lambda m, x: x.sum((0, -3)), IndexError, r"range of \[-2, 1\], but got -3", True),
    (lambda m, x: x.argmax(5), IndexError, "but got 5", True),
    (lambda m, x: x.cumsum(2), IndexError, "but got 2", True),
    (lambda m, x: x.softmax(-3), IndexError, "but got -3", True),
    (lambda m, x: x.max(2), IndexError, "but got 2", True),
    (lambda m, x: x.sum((0, 0)), RuntimeError, "appears multiple times", True),
    (lambda m, x: x.amax((1, -1)), RuntimeError, "appears multiple times", True),
    (lambda m, x: x.sum(1.0), TypeError, "must be an int or a tuple of ints, not float", True),
    (lambda m, x: x.argmax((0,)), TypeError, "must be int, not tuple", True),
    (lambda m, x: x.prod((0, 1)), TypeError, "must be int, not tuple", True),
    (lambda m, x: x.long().mean(), RuntimeError, "could not infer output dtype", True),
    (lambda m, x: x.mean(dtype=m.int64), RuntimeError, "Optional dtype must be either", True),
    (lambda m, x: (x > 0).argmax(), RuntimeError, "does not support bool input", True),
    (lambda m, x: x.max(keepdim=True), TypeError, "need a dim", True),
    (lambda m, x: x.softmax(None), TypeError, "pass dim=-1", True),
    (lambda m, x: m.logsumexp(x, None), TypeError, "not None", True),
    (lambda m, x: x.long().var(), RuntimeError, "only support floating point", True),
    (lambda m, x: x.var(0, True, correction=1), TypeError, "not both", True),
    (lambda m, x: m.softmax(x, 0, dtype=m.int32), NotImplementedError, "int32", True),
    (lambda m, x: m.cumsum(x, 0, dtype=m.bool), NotImplementedError, "bool", True),
    (lambda m, x: m.sum([1, 2]), TypeError, "must be Tensor, not list", True),
]


@pytest.mark.parametrize("call, error, message, torch_too", ERRORS)
def test_errors_as_torch(call, error, message, torch_too):
    x = jt.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    with pytest.raises(error, match=message):
        call(jt, x)
    assert x.tolist() == [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]
    if torch_too:
        torch = pytest.importorskip("torch")
        with pytest.raises(error):
            call(torch, torch.tensor(x.tolist()))


def test_argument_forms_accepted_as_torch():
    x = jt.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    close(x.sum([0, 1]), 21.0, jt.float32)
    close(x.sum([]), 21.0, jt.float32)
    close(jt.sum(x, None, True), [[21.0]], jt.float32)
    close(x.sum(np.int64(1)), [9.0, 12.0], jt.float32)
    close(x.mean(None, True), [[3.5]], jt.float32)
    close(jt.prod(x, 0, True), [[4.0, 10.0, 18.0]], jt.float32)
    close(x.std(dim=None, correction=0), np.std(x.numpy()), jt.float32)
    close(x.amax(dim=[0]), [4.0, 5.0, 6.0], jt.float32)
    values, indices = jt.max(x, dim=1, keepdim=False)
    close(values, [5.0, 6.0], jt.float32)


def test_kernels_load_from_the_cache_in_a_new_process():
    code = ("import numpy as np, jitensor as jt\n"
            "from jitensor.kernels.cpu import reduction as r\n"
            "x = jt.from_numpy(np.ones((3, 4), np.float32))\n"
            "x.sum(1), x.T.sum(1)  # small dense rows; strided ones\n"
            "for k in (r.reduce_dense, r.reduce_frame):\n"
            "    print(sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))\n"
            "print(*[f.cache_hits for f in r._COMPILED.values()])  # the cfuncs they call")
    run_python(code)  # compile (or load) once
    *drivers, function = run_python(code).splitlines()
    for line in drivers:
        hits, misses = map(int, line.split())
        assert hits >= 1 and misses == 0
    assert function.split() == ["1"]  # one rows function, loaded


# -- norm --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("p", ["fro", 2, 1, 0, math.inf, -math.inf, 3, 0.5])
def test_vector_norms_match_numpy(p, dtype):
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(dtype.np)
    x[1, 2] = 0
    order = 2 if p == "fro" else p
    for dim, keepdim in ((None, False), (1, False), (0, True), ((0, 1), False)):
        got = jt.norm(jt.tensor(x), p, dim, keepdim)
        axis = tuple(range(x.ndim)) if dim is None else dim
        flat = x.reshape(-1) if dim is None or dim == (0, 1) else None
        want = np.linalg.norm(flat, order) if flat is not None else \
            np.linalg.norm(x, order, axis=axis, keepdims=keepdim)
        assert got.dtype is dtype and tuple(got.shape) == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dtype is jt.float32 else 1e-12)


def test_norm_dtype_and_errors():
    assert jt.tensor([3, 4]).norm(dtype=jt.float64).item() == 5.0
    with pytest.raises(RuntimeError, match=r"floating point.*\.float\(\)"):
        jt.tensor([3, 4]).norm()
    with pytest.raises(ValueError, match="nuc"):
        jt.ones(2, 2).norm("nuc")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_sums_with_infinities_are_infinite_not_nan(dtype):
    """A float32 sum's float64 total split into value and error: inf - inf must not make it
    NaN (it did)."""
    for data, want in (([np.inf, 1.0], np.inf), ([1.0, -np.inf], -np.inf),
                       ([np.inf, -np.inf], np.nan)):
        for n in (1, 3000):  # the small-op path and the blocked one
            x = jt.tensor(data * n, dtype=dtype)
            np.testing.assert_array_equal(x.sum().numpy(), want)
            columns = np.sum(np.array(data * n).reshape(n, 2), 0).astype(dtype.np)
            np.testing.assert_array_equal(x.reshape(n, 2).sum(0).numpy(), columns)
    big = jt.norm(jt.tensor([1e30, 1e30], dtype=dtype)).item()  # squares overflow float32
    assert big == (np.inf if dtype is jt.float32 else pytest.approx(1e30 * 2 ** 0.5))


def test_variance_with_an_infinity_is_nan():
    """The merge of two partial moments whose means differ by an infinity (was inf)."""
    x = np.tile([[1.0], [np.inf]], (1, 16))
    for dtype in (jt.float32, jt.float64):
        t = jt.tensor(x, dtype=dtype)
        assert np.isnan(t.var(0).numpy()).all() and np.isnan(t.std(0).numpy()).all()
        assert np.isnan(t.T.var(1).numpy()).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_backward_matches_torch_at_any_thread_count(name, dtype):
    """softmax's and log_softmax's backward along the last dim is one pass over each row
    (kernels/cpu/reduction.softmax_grad; 4x5x4000 takes the parallel build); along another dim
    it is composed from ops. Both give torch's gradients, the kernel the same bits at any
    thread count."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    for shape, dim in (((300, 70), -1), ((4, 5, 4000), 2), ((6, 7), 0), ((3, 1), -1)):
        x, g = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
        want = torch.tensor(x, requires_grad=True)
        getattr(torch, name)(want, dim).backward(torch.tensor(g))

        def grad(x=x, g=g, dim=dim):
            mine = jt.tensor(x, requires_grad=True)
            getattr(jt, name)(mine, dim).backward(jt.tensor(g))
            return mine.grad.numpy()
        first, *rest = at_thread_counts(grad)
        assert first.dtype == dtype
        np.testing.assert_allclose(first, want.grad.numpy(), **tol)
        for other in rest:
            np.testing.assert_array_equal(first, other)


def test_int64_sums_keep_every_bit():
    # (the fold's last step once made every integer sum a float64: 53 bits; sums wrap)
    for values in ([2**53 + 1, 0], [2**53 + 1] * 300, [2**62, 2**62, 2**62, 5],
                   [-(2**63) + 10, 6, -2, 14]):
        exact = (sum(values) + 2**63) % 2**64 - 2**63
        x = jt.tensor(values)
        assert x.sum().item() == exact and x.sum(0, dtype=jt.int64).item() == exact
        pairs = [(values[i] + values[i + 1] + 2**63) % 2**64 - 2**63
                 for i in range(0, len(values), 2)]
        assert x.view(-1, 2).sum(1).tolist() == pairs
        assert x.view(-1, 2).t().sum(0).tolist() == pairs
