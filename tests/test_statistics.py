"""ops/statistics.py against torch: values, dtypes and shapes of order statistics, counting,
binning, searching, moments, integration, scans and index helpers; gradients in float64;
torch's errors; hypothesis over shapes and dims where it is cheap; one tiny CUDA test per
group (the simulator in CI)."""
import math
import pickle
import warnings

import numpy as np
import pytest
from conftest import assert_grads_match_torch
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")
NAN = math.nan
FEW = settings(max_examples=20, deadline=None)


def same(mine, theirs, rtol=1e-6, atol=1e-7, exact=False):
    """mine (a jt.Tensor, or a tuple of them) has theirs' (torch) dtype, shape and values
    (NaN equal to NaN; exact: bit-for-bit)."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(mine, tuple) and len(mine) == len(theirs)
        for m, t in zip(mine, theirs, strict=False):
            same(m, t, rtol, atol, exact)
        return
    assert isinstance(mine, jt.Tensor), type(mine)
    want = theirs.detach().numpy()
    got = mine.detach().cpu().numpy()
    assert mine.dtype.name == str(theirs.dtype).replace("torch.", ""), (mine.dtype, theirs.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact or want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def both(a, dtype=None):
    """(jt tensor, torch tensor) of the same NumPy data."""
    a = np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)
    return jt.tensor(a), torch.tensor(a)


def agree(name, *args, **kw):
    """jt.<name> and torch.<name> of the same arguments agree (NumPy arrays among the
    arguments become a tensor of each library)."""
    def convert(lib, a):
        return lib.tensor(a) if isinstance(a, np.ndarray) else a
    same(getattr(jt, name)(*[convert(jt, a) for a in args], **kw),
         getattr(torch, name)(*[convert(torch, a) for a in args], **kw))


def grads_match(fn_jt, fn_torch, arrays, rtol=1e-10, atol=1e-12, seed=0):
    """fn of float64 leaves: forward and input gradients (a random upstream one) as torch's."""
    mine = [jt.tensor(np.asarray(a, np.float64), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(np.asarray(a, np.float64), requires_grad=True) for a in arrays]
    out, want = fn_jt(*mine), fn_torch(*theirs)
    same(out, want, rtol, atol)
    assert_grads_match_torch(torch, np.random.default_rng(seed), out, want, mine, theirs, rtol,
                             atol)


@st.composite
def shaped(draw, max_dims=3, max_side=4, nan=True, distinct=False):
    """(array, dim): float64 data of a drawn shape (some NaN with `nan`; a permutation of
    distinct values with `distinct`) and a dim of it."""
    shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=1, max_size=max_dims)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    size = int(np.prod(shape))
    if distinct:
        a = rng.permutation(size).astype(np.float64)
    else:
        a = rng.integers(0, 4, size).astype(np.float64)  # few values: many ties
    if nan and draw(st.booleans()):
        a[rng.random(size) < 0.3] = NAN
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return a.reshape(shape), dim


# -- median, nanmedian, kthvalue, mode, msort -----------------------------------------------------
@FEW
@given(shaped(), st.booleans())
def test_median_nanmedian_values_follow_torch(case, keepdim):
    a, dim = case
    j, t = both(a)
    same(jt.median(j), torch.median(t), exact=True)
    same(jt.nanmedian(j), torch.nanmedian(t), exact=True)
    for name in ("median", "nanmedian"):
        got, want = getattr(jt, name)(j, dim, keepdim), getattr(torch, name)(t, dim, keepdim)
        same(got.values, want.values, exact=True)
        assert got.indices.dtype is jt.int64 and got.indices.shape == tuple(want.indices.shape)
        # the index holds the value (among ties torch's quickselect may pick another one)
        d = dim % a.ndim
        picked = jt.gather(j, d, got.indices if keepdim else got.indices.unsqueeze(d))
        same(picked if keepdim else picked.squeeze(d), want.values, exact=True)


@FEW
@given(shaped(distinct=True), st.booleans(), st.data())
def test_order_statistics_of_distinct_values_match_torch_indices(case, keepdim, data):
    a, dim = case
    j, t = both(a)
    agree("median", a, dim, keepdim)  # (the first NaN, as torch's)
    # nanmedian of an all-NaN slice: torch's index is whichever NaN its quickselect leaves
    # first (unspecified, as among ties); elsewhere the index of the median
    got, want = jt.nanmedian(j, dim, keepdim), torch.nanmedian(t, dim, keepdim)
    same(got.values, want.values, exact=True)
    assert got.indices.dtype is jt.int64 and got.indices.shape == tuple(want.indices.shape)
    all_nan = np.isnan(a).all(axis=dim, keepdims=keepdim)
    np.testing.assert_array_equal(np.where(all_nan, 0, got.indices.numpy()),
                                  np.where(all_nan, 0, want.indices.numpy()))
    d = dim % a.ndim
    picked = jt.gather(j, d, got.indices if keepdim else got.indices.unsqueeze(d))
    same(picked if keepdim else picked.squeeze(d), want.values, exact=True)
    # (kthvalue: among NaNs, torch's quickselect's index is unspecified)
    j, t = both(np.where(np.isnan(a), -np.arange(a.size).reshape(a.shape) - 1.0, a))
    k = data.draw(st.integers(1, a.shape[dim]))
    same(tuple(jt.kthvalue(j, k, dim, keepdim)), tuple(torch.kthvalue(t, k, dim, keepdim)))
    same(tuple(j.kthvalue(k, dim)), tuple(t.kthvalue(k, dim)))


@FEW
@given(shaped(nan=False), st.booleans())
def test_mode_follows_torch(case, keepdim):
    a, dim = case
    j, t = both(a.astype(np.int64))
    same(tuple(jt.mode(j, dim, keepdim)), tuple(torch.mode(t, dim, keepdim)))
    j, t = both(a)
    same(tuple(j.mode(dim, keepdim)), tuple(t.mode(dim, keepdim)))


def test_order_statistics_edge_cases():
    j, t = both([3.0, NAN, 1.0, NAN, 2.0])
    for name in ("median", "nanmedian"):
        same(tuple(getattr(jt, name)(j, 0)), tuple(getattr(torch, name)(t, 0)))
        same(getattr(j, name)(), getattr(t, name)())
    agree("nanmedian", np.array([NAN, NAN]), 0)
    same(jt.median(jt.tensor([], dtype=jt.float32)), torch.median(torch.tensor([])))
    same(jt.median(jt.tensor([3, 1, 2])), torch.median(torch.tensor([3, 1, 2])))
    same(tuple(jt.median(jt.tensor(3.0), 0, True)), tuple(torch.median(torch.tensor(3.0), 0, True)))
    same(tuple(jt.median(jt.zeros(0, 2), 1)), tuple(torch.median(torch.zeros(0, 2), 1)))
    agree("kthvalue", np.array([1.0, NAN, 2.0]), 3)
    agree("mode", np.array([True, False, True]))
    agree("mode", np.array([2.0, 1.0, 2.0, 1.0, 3.0]))
    same(tuple(jt.mode(jt.tensor(4))), tuple(torch.mode(torch.tensor(4))))
    for fn in (jt.msort, jt.Tensor.msort):
        same(fn(jt.tensor([[3, 1], [1, 2]])), torch.msort(torch.tensor([[3, 1], [1, 2]])))
    same(jt.msort(jt.tensor(3)), torch.msort(torch.tensor(3)))
    # out= pairs: exact dtypes, both checked before either is written
    values, indices = jt.zeros(()), jt.zeros((), dtype=jt.int64)
    got = jt.median(jt.tensor([1.0, 5.0, 2.0]), 0, out=(values, indices))
    assert got.values is values and values.item() == 2.0 and indices.item() == 2
    with pytest.raises(RuntimeError, match="dtype int64"):
        jt.mode(jt.tensor([1.0, 2.0]), out=(values, jt.zeros((), dtype=jt.int32)))
    assert values.item() == 2.0


def test_order_statistic_errors():
    with pytest.raises(IndexError, match="non-zero size"):
        jt.median(jt.zeros(0, 2), 0)
    with pytest.raises(IndexError, match="non-zero size"):
        jt.mode(jt.tensor([]), 0)
    with pytest.raises(RuntimeError, match="k out of range for dimension 0"):
        jt.kthvalue(jt.tensor([1.0, 2.0]), 3)
    with pytest.raises(RuntimeError, match="k out of range"):
        jt.kthvalue(jt.tensor([1.0, 2.0]), 0)
    for shape, dim in (((0,), 0), ((2, 0), 1)):  # an empty dim is torch's IndexError, not k's
        with pytest.raises(IndexError, match=f"reduction dim {dim} to have non-zero size"):
            jt.kthvalue(jt.zeros(shape), 1, dim)
        with pytest.raises(IndexError, match=f"reduction dim {dim} to have non-zero size"):
            torch.kthvalue(torch.zeros(shape), 1, dim)
    with pytest.raises(NotImplementedError, match="Bool"):
        jt.median(jt.tensor([True, False]))
    with pytest.raises(TypeError, match="keepdim needs a dim"):
        jt.median(jt.tensor([1.0]), keepdim=True)
    with pytest.raises(IndexError, match="Dimension out of range"):
        jt.median(jt.tensor([1.0]), 2)
    with pytest.raises(RuntimeError, match="empty int64"):
        jt.median(jt.tensor([], dtype=jt.int64))
    with pytest.raises(TypeError, match="'input' must be Tensor"):
        jt.median([1.0, 2.0])


def test_order_statistic_gradients_match_torch():
    rng = np.random.default_rng(0)
    a = rng.permutation(12).reshape(3, 4) * 0.5
    grads_match(lambda x: jt.median(x, 1).values, lambda x: torch.median(x, 1).values, [a])
    grads_match(lambda x: jt.nanmedian(x, 0, True)[0], lambda x: torch.nanmedian(x, 0, True)[0],
                [a])
    grads_match(lambda x: jt.kthvalue(x, 3, 1).values, lambda x: torch.kthvalue(x, 3, 1).values,
                [a])
    ties = np.array([[1.0, 2.0, 2.0, 1.0, 2.0], [3.0, 3.0, 1.0, 0.0, 1.0]])
    grads_match(lambda x: jt.mode(x, 1).values, lambda x: torch.mode(x, 1).values, [ties])
    # the whole-tensor form shares the gradient among equal elements (NaNs where it is NaN)
    for data in ([1.0, 2.0, 2.0, 3.0], [1.0, NAN, 3.0, NAN], [[2.0, 2.0], [2.0, 7.0]]):
        grads_match(jt.median, torch.median, [data])
        grads_match(jt.nanmedian, torch.nanmedian, [data])
    grads_match(lambda x: jt.msort(x), lambda x: torch.msort(x), [a])


# -- quantile, nanquantile ------------------------------------------------------------------------
@FEW
@given(shaped(), st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]))
def test_quantile_follows_torch(case, keepdim, over_all, vector_q, interpolation):
    a, dim = case
    j, t = both(a)
    q = [0.0, 0.1, 0.25, 0.5, 2 / 3, 1.0] if vector_q else 0.4
    qj, qt = (jt.tensor(q, dtype=jt.float64), torch.tensor(q, dtype=torch.float64)) \
        if vector_q else (q, q)
    dim = None if over_all else dim
    for name in ("quantile", "nanquantile"):
        same(getattr(jt, name)(j, qj, dim, keepdim, interpolation=interpolation),
             getattr(torch, name)(t, qt, dim, keepdim, interpolation=interpolation),
             rtol=1e-12, atol=1e-12)


def test_quantile_forms_and_errors():
    j, t = both(np.array([[1.0, 5.0, 2.0, NAN], [4.0, 3.0, 2.0, 1.0]], np.float32))
    same(j.quantile(0.5, dim=1), t.quantile(0.5, dim=1))
    same(j.nanquantile(jt.tensor(0.5), dim=1, keepdim=True),
         t.nanquantile(torch.tensor(0.5), dim=1, keepdim=True))
    same(jt.quantile(j, 0.5, keepdim=True), torch.quantile(t, 0.5, keepdim=True))
    same(jt.quantile(jt.tensor(3.0), 0.5), torch.quantile(torch.tensor(3.0), 0.5))
    same(jt.quantile(jt.tensor([math.inf, math.inf]), 0.5),
         torch.quantile(torch.tensor([math.inf, math.inf]), 0.5))
    agree("nanquantile", np.array([NAN, NAN]), 0.3)
    out = jt.zeros(2)
    assert jt.quantile(j, 0.5, 1, out=out) is out
    cases = [((jt.tensor([1, 2]), 0.5), RuntimeError, "float or double"),
             ((jt.tensor([1.0, 2.0]), 1.5), RuntimeError, r"range \[0, 1\] but got 1.5"),
             ((jt.tensor([1.0, 2.0]), jt.tensor([0.5], dtype=jt.float64)), RuntimeError,
              "same dtype"),
             ((jt.tensor([1.0, 2.0]), jt.tensor([NAN])), RuntimeError, "q values must be"),
             ((jt.tensor([1.0, 2.0]), jt.tensor([[0.5]])), RuntimeError, "scalar or 1D"),
             ((jt.tensor([], dtype=jt.float32), 0.5), RuntimeError, "non-empty")]
    for args, error, message in cases:
        with pytest.raises(error, match=message):
            jt.quantile(*args)
    with pytest.raises(RuntimeError, match="interpolation must be one of"):
        jt.quantile(j, 0.5, interpolation="cubic")


def test_quantile_gradient_matches_torch():
    a = np.random.default_rng(1).standard_normal((3, 5))
    for mode in ("linear", "midpoint", "nearest"):
        grads_match(lambda x, m=mode: jt.quantile(x, jt.tensor([0.3, 0.5, 0.9], dtype=jt.float64),
                                                  dim=1, interpolation=m),
                    lambda x, m=mode: torch.quantile(
                        x, torch.tensor([0.3, 0.5, 0.9], dtype=torch.float64), dim=1,
                        interpolation=m), [a])
    a[0, 1] = NAN
    grads_match(lambda x: jt.nanquantile(x, 0.4), lambda x: torch.nanquantile(x, 0.4), [a])


# -- unique, unique_consecutive -------------------------------------------------------------------
@FEW
@given(shaped(), st.booleans(), st.booleans(), st.booleans())
def test_unique_follows_torch(case, inverse, counts, along):
    a, dim = case
    j, t = both(np.nan_to_num(a, nan=9).astype(np.int64) if along else a)
    dim = dim if along else None
    mine = jt.unique(j, return_inverse=inverse, return_counts=counts, dim=dim)
    theirs = torch.unique(t, return_inverse=inverse, return_counts=counts, dim=dim)
    if inverse and not along and np.isnan(a).any():
        # each NaN is its own unique value; which of the NaN slots a NaN gets follows from
        # how torch's sort leaves equal-comparing keys (jitensor's: in the input's order), so
        # compare the slots the NaNs take as a set
        nans, got, want = np.isnan(a), mine[1].numpy(), theirs[1].numpy()
        assert mine[1].dtype is jt.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got[~nans], want[~nans])
        assert sorted(got[nans]) == sorted(want[nans])
        mine, theirs = mine[:1] + mine[2:], theirs[:1] + theirs[2:]
    same(mine, theirs)
    same(j.unique_consecutive(return_inverse=inverse, return_counts=counts, dim=dim),
         t.unique_consecutive(return_inverse=inverse, return_counts=counts, dim=dim))


def test_unique_edge_cases():
    j, t = both([2.0, NAN, 1.0, NAN, 2.0])
    same(jt.unique(j, return_inverse=True, return_counts=True),
         torch.unique(t, return_inverse=True, return_counts=True))  # each NaN apart
    same(jt.unique(jt.tensor([3, 1, 2, 1]), sorted=False),
         torch.unique(torch.tensor([3, 1, 2, 1]), sorted=False))
    same(jt.unique(jt.tensor(5), return_inverse=True, return_counts=True),
         torch.unique(torch.tensor(5), return_inverse=True, return_counts=True))
    same(jt.unique(jt.tensor([], dtype=jt.int64), return_inverse=True, return_counts=True),
         torch.unique(torch.tensor([], dtype=torch.int64), return_inverse=True,
                      return_counts=True))
    same(jt.unique(jt.zeros(0, 3), dim=0, return_counts=True),
         torch.unique(torch.zeros(0, 3), dim=0, return_counts=True))
    same(jt.unique(jt.tensor([True, False, True])), torch.unique(torch.tensor([True, False, True])))
    same(jt.unique_consecutive(jt.tensor([[1, 2], [1, 2], [3, 3], [1, 2]]), dim=0,
                               return_inverse=True, return_counts=True),
         torch.unique_consecutive(torch.tensor([[1, 2], [1, 2], [3, 3], [1, 2]]), dim=0,
                                  return_inverse=True, return_counts=True))
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        jt.unique(jt.zeros(2, 0), dim=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        jt.unique(jt.tensor([[1, 2]]), dim=2)
    for lib in (jt, torch):  # a 0-d tensor has no dim to take slices along
        for fn in (lib.unique, lib.unique_consecutive):
            with pytest.raises(IndexError, match="specified as 0 but tensor has no dimensions"):
                fn(lib.tensor(3.0), dim=0)


# -- bincount, histc, histogram -------------------------------------------------------------------
def test_bincount_dtypes_and_errors():
    x = [0, 1, 1, 3, 7]
    for dtype in (np.int64, np.uint8, np.int32):
        j, t = both(x, dtype)
        same(jt.bincount(j), torch.bincount(t))
        same(j.bincount(minlength=10), t.bincount(minlength=10))
    j, t = both(x)
    for w in ([1.0, 2.0, 3.0, 4.0, 5.0], np.arange(5.0), [1, 2, 3, 4, 5]):
        wj, wt = both(np.asarray(w, np.float32) if isinstance(w, list) and
                      isinstance(w[0], float) else w)
        same(jt.bincount(j, wj), torch.bincount(t, wt))
    agree("bincount", np.zeros(0, np.int64))
    with pytest.raises(RuntimeError, match="non-negative integral"):
        jt.bincount(jt.tensor([-1, 1]))
    with pytest.raises(RuntimeError, match="non-negative integral"):
        jt.bincount(jt.tensor([[1]]))
    with pytest.raises(NotImplementedError, match="float32"):
        jt.bincount(jt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        jt.bincount(jt.tensor([1]), minlength=-1)
    with pytest.raises(RuntimeError, match="same length as input"):
        jt.bincount(jt.tensor([1, 2]), weights=jt.tensor([1.0]))


@FEW
@given(st.integers(1, 40), st.integers(1, 9), st.integers(0, 2 ** 32 - 1), st.booleans())
def test_histc_and_histogram_follow_torch(n, bins, seed, explicit):
    rng = np.random.default_rng(seed)
    # values on a grid of quarters: many land exactly on bin edges
    a = (rng.integers(-8, 9, n) / 4).astype(np.float32)
    j, t = both(a)
    lo, hi = (-1.0, 1.5) if explicit else (0, 0)
    same(jt.histc(j, bins, lo, hi), torch.histc(t, bins, lo, hi), exact=True)
    kw = {"range": (lo, hi)} if explicit else {}
    same(tuple(jt.histogram(j, bins, **kw)), tuple(torch.histogram(t, bins, **kw)), exact=True)
    w = rng.random(n).astype(np.float32)
    same(tuple(j.histogram(bins, weight=jt.tensor(w), density=True, **kw)),
         tuple(t.histogram(bins, weight=torch.tensor(w), density=True, **kw)))
    edges = np.sort(rng.integers(-6, 7, bins + 1) / 4).astype(np.float32)
    same(tuple(jt.histogram(j, jt.tensor(edges))), tuple(torch.histogram(t, torch.tensor(edges))),
         exact=True)


def test_histc_histogram_edges_and_errors():
    for data in ([1.0, 1.0], [], [[1.0, 2.0], [3.0, 4.0]]):
        j, t = both(np.asarray(data, np.float32))
        same(jt.histc(j, bins=4), torch.histc(t, bins=4))
        same(tuple(jt.histogram(j, 4)), tuple(torch.histogram(t, 4)))
    j, t = both(np.array([1.0, 2.0, NAN, 1.5], np.float64))
    same(jt.histc(j, 3, min=0, max=3), torch.histc(t, 3, min=0, max=3))  # NaN: not counted
    j, t = both(np.array([1.0, 2.0, 3.0, 1.5], np.float64))
    same(j.histc(3, 1, 1), t.histc(3, 1, 1))  # min == max: the data's range
    out = jt.zeros(3, dtype=jt.float64)
    assert jt.histc(j, 3, 0, 3, out=out) is out
    with pytest.raises(NotImplementedError, match="int64"):
        jt.histc(jt.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="bins must be > 0, but got 0"):
        jt.histc(jt.tensor([1.0]), bins=0)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        jt.histc(jt.tensor([1.0]), min=2, max=1)
    with pytest.raises(RuntimeError, match="not finite"):
        jt.histc(jt.tensor([1.0, math.inf]))
    with pytest.raises(RuntimeError, match="not finite"):
        jt.histogram(jt.tensor([1.0, NAN]), 2)
    with pytest.raises(RuntimeError, match="min should not exceed max"):
        jt.histogram(jt.tensor([1.0]), 2, range=(2.0, 1.0))
    with pytest.raises(RuntimeError, match="one dimension"):
        jt.histogram(jt.tensor([1.0]), jt.tensor([[1.0, 2.0]]))
    with pytest.raises(RuntimeError, match="same dtype"):
        jt.histogram(jt.tensor([1.0]), jt.tensor([1.0, 2.0], dtype=jt.float64))
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        jt.histogram(jt.tensor([1.0]), jt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="weight must have input's dtype"):
        jt.histogram(jt.tensor([1.0, 2.0]), 2, weight=jt.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="weight must have input's shape"):
        jt.histogram(jt.tensor([1.0, 2.0]), 2, weight=jt.tensor([1.0]))
    result = jt.histogram(jt.tensor([1.0, 2.0]), 2)
    assert type(result) is jt.return_types.histogram and result.hist is result[0]
    assert result.bin_edges is result[1]


# -- searchsorted, bucketize, isin ----------------------------------------------------------------
@FEW
@given(st.integers(0, 9), st.lists(st.integers(1, 3), min_size=1, max_size=3), st.booleans(),
       st.booleans(), st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_searchsorted_follows_torch(n, value_shape, right, batched, floats, seed):
    rng = np.random.default_rng(seed)
    lead = tuple(value_shape[:-1]) if batched else ()
    seq = np.sort(rng.integers(0, 6, lead + (n,)), axis=-1)  # duplicates included
    values = rng.integers(-1, 8, lead + (value_shape[-1],) if batched else tuple(value_shape))
    if floats:
        seq, values = seq.astype(np.float32), values.astype(np.float32)
        if values.size:
            values.flat[0] = NAN
    (sj, st_), (vj, vt) = both(seq), both(values)
    same(jt.searchsorted(sj, vj, right=right), torch.searchsorted(st_, vt, right=right))
    same(jt.searchsorted(sj, vj, side="right" if right else "left", out_int32=True),
         torch.searchsorted(st_, vt, side="right" if right else "left", out_int32=True))
    # an unsorted sequence searched through its sorter
    shuffled = np.ascontiguousarray(rng.permuted(seq, axis=-1))
    order = np.argsort(shuffled, axis=-1, kind="stable")
    same(jt.searchsorted(jt.tensor(shuffled), vj, right=right, sorter=jt.tensor(order)),
         torch.searchsorted(torch.tensor(shuffled), vt, right=right, sorter=torch.tensor(order)))
    if not batched:
        same(jt.bucketize(vj, sj, right=right), torch.bucketize(vt, st_, right=right))


def test_searchsorted_forms_and_errors():
    s, ts = both([1, 3, 5, 7])
    same(jt.searchsorted(s, 3), torch.searchsorted(ts, 3))
    same(jt.searchsorted(s, 3.5), torch.searchsorted(ts, 3.5))
    same(jt.searchsorted(s, jt.tensor([3.0])), torch.searchsorted(ts, torch.tensor([3.0])))
    same(jt.bucketize(3, s, right=True), torch.bucketize(3, ts, right=True))
    same(jt.searchsorted(jt.tensor([1.0, NAN]), jt.tensor([NAN, 2.0])),
         torch.searchsorted(torch.tensor([1.0, NAN]), torch.tensor([NAN, 2.0])))
    same(jt.searchsorted(s, jt.tensor([[]], dtype=jt.int64)),
         torch.searchsorted(ts, torch.tensor([[]], dtype=torch.int64)))
    out = jt.zeros(2, dtype=jt.int64)
    assert jt.searchsorted(s, jt.tensor([0, 9]), out=out) is out and out.tolist() == [0, 4]
    errors = [(lambda: jt.searchsorted(s, jt.tensor([3]), side="left", right=True), "opposites"),
              (lambda: jt.searchsorted(s, jt.tensor([3]), side="foo"), "'left' or 'right'"),
              (lambda: jt.searchsorted(jt.tensor([[1, 2], [3, 4]]), jt.tensor([3])),
               "first N-1 dimensions"),
              (lambda: jt.searchsorted(jt.tensor([[1, 2]]), 3), "scalar only"),
              (lambda: jt.searchsorted(jt.tensor(1), jt.tensor([3])), "positive dimension"),
              (lambda: jt.searchsorted(s, jt.tensor([3]), sorter=jt.tensor([0, 1, 2])),
               "same size"),
              (lambda: jt.searchsorted(s, jt.tensor([3]), sorter=jt.tensor([0, 1, 2, 9])),
               "sorter index out of range"),
              (lambda: jt.searchsorted(s, jt.tensor([3]),
                                       sorter=jt.tensor([0, 1, 2, 3], dtype=jt.int32)),
               "long dtype"),
              (lambda: jt.searchsorted(s, jt.tensor([3]), out=jt.zeros(1, dtype=jt.int32)),
               "out_int32"),
              (lambda: jt.bucketize(jt.tensor([1]), jt.tensor([[1, 3]])), "must be 1 dimension")]
    for fn, message in errors:
        with pytest.raises(RuntimeError, match=message):
            fn()


def test_isin_follows_torch():
    cases = [(([1, 2, 3], [2, 5]), {}), (([1, 2, 3], [2, 5]), {"invert": True}),
             (([1.0, NAN, -0.0], [NAN, 0.0]), {}), (([1, 2], [2.5, 1.0]), {}),
             (([[1, 2], [3, 4]], [4, 1, 1]), {"assume_unique": False}),
             (([1, 2], []), {})]
    for (e, te), kw in cases:
        (ej, et), (tj, tt) = both(e), both(np.asarray(te, np.float32) if te == [] else te)
        same(jt.isin(ej, tj, **kw), torch.isin(et, tt, **kw))
    same(jt.isin(jt.tensor([1, 2, 3]), 2), torch.isin(torch.tensor([1, 2, 3]), 2))
    same(jt.isin(2, jt.tensor([1, 2])), torch.isin(2, torch.tensor([1, 2])))
    same(jt.isin(jt.tensor([1, 2], dtype=jt.uint8), jt.tensor([-255, 2])),
         torch.isin(torch.tensor([1, 2], dtype=torch.uint8), torch.tensor([-255, 2])))
    with pytest.raises(TypeError, match="at least one"):
        jt.isin(1, 2)


# -- cov, corrcoef --------------------------------------------------------------------------------
def test_cov_corrcoef_follow_torch():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 6))
    f, w = rng.integers(0, 4, 6), rng.random(6)
    for data in (a, a[0], a.astype(np.float32), rng.integers(0, 9, (2, 5))):
        j, t = both(data)
        same(jt.cov(j), torch.cov(t), rtol=1e-5)
        same(j.corrcoef(), t.corrcoef(), rtol=1e-5)
        same(j.cov(correction=0), t.cov(correction=0), rtol=1e-5)
    j, t = both(a)
    for kw in ({"fweights": f}, {"aweights": w}, {"fweights": f, "aweights": w},
               {"fweights": f, "aweights": w.astype(np.float32), "correction": 2}):
        same(jt.cov(j, **{k: jt.tensor(v) if not isinstance(v, int) else v
                          for k, v in kw.items()}),
             torch.cov(t, **{k: torch.tensor(v) if not isinstance(v, int) else v
                             for k, v in kw.items()}), rtol=1e-10)
    same(jt.cov(jt.tensor([[1.0, 2.0, 4.0]]),
                aweights=jt.tensor([0.5, 1.0, 2.0], dtype=jt.float64)),
         torch.cov(torch.tensor([[1.0, 2.0, 4.0]]),
                   aweights=torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)))
    same(jt.corrcoef(jt.tensor([1.0, 1.0])), torch.corrcoef(torch.tensor([1.0, 1.0])))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        got = jt.cov(jt.tensor([1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(got, torch.cov(torch.tensor([1.0])))
    errors = [({"input": jt.zeros(1, 1, 1)}, "two or fewer dimensions"),
              ({"input": jt.tensor([True, False])}, "bool dtype"),
              ({"fweights": jt.tensor([1.0, 2.0])}, "integral dtype"),
              ({"fweights": jt.tensor([1, -2])}, "fweights cannot be negative"),
              ({"aweights": jt.tensor([1, 2])}, "floating point dtype"),
              ({"aweights": jt.tensor([1.0, 2.0, 3.0])}, "3 != 2"),
              ({"aweights": jt.tensor([0.0, 0.0])}, "weights sum to zero")]
    for kw, message in errors:
        x = kw.pop("input", jt.tensor([1.0, 2.0]))
        with pytest.raises(RuntimeError, match=message):
            jt.cov(x, **kw)


def test_cov_corrcoef_gradients_match_torch():
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((3, 5)), rng.random(5) + 0.1
    grads_match(lambda x: jt.cov(x, fweights=jt.tensor([1, 2, 1, 3, 1]),
                                 aweights=jt.tensor(w)),
                lambda x: torch.cov(x, fweights=torch.tensor([1, 2, 1, 3, 1]),
                                    aweights=torch.tensor(w)), [a])
    grads_match(jt.corrcoef, torch.corrcoef, [a])


# -- trapezoid, trapz, cumulative_trapezoid -------------------------------------------------------
def test_trapezoid_family_follows_torch():
    rng = np.random.default_rng(4)
    y = rng.standard_normal((2, 3, 4))
    x1, xn = np.cumsum(rng.random(3)), np.cumsum(rng.random((2, 3, 4)), axis=1)
    (yj, yt), (x1j, x1t), (xnj, xnt) = both(y), both(x1), both(xn)
    for name in ("trapezoid", "trapz", "cumulative_trapezoid"):
        fj, ft = getattr(jt, name), getattr(torch, name)
        same(fj(yj), ft(yt), rtol=1e-12)
        same(fj(yj, dx=0.5, dim=0), ft(yt, dx=0.5, dim=0), rtol=1e-12)
        same(fj(yj, x1j, dim=1), ft(yt, x1t, dim=1), rtol=1e-12)
        same(fj(yj, xnj, dim=1), ft(yt, xnt, dim=1), rtol=1e-12)
        same(fj(yj, xnj[0, :, 0].reshape(3, 1), dim=1), ft(yt, xnt[0, :, 0].reshape(3, 1), dim=1),
             rtol=1e-12)
        for data in ([1, 2, 3], [1.0], np.zeros(0, np.int64)):
            j, t = both(data)
            same(fj(j), ft(t))
            same(fj(j, dx=2), ft(t, dx=2))
        same(fj(jt.tensor([1, 2, 3]), jt.tensor([0, 1, 3])),
             ft(torch.tensor([1, 2, 3]), torch.tensor([0, 1, 3])))
    with pytest.raises(RuntimeError, match="one `x` value for each sample point"):
        jt.trapezoid(jt.tensor([1.0, 2.0]), jt.tensor([0.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="bool"):
        jt.trapezoid(jt.tensor([True, False]))
    with pytest.raises(TypeError, match="not both"):
        jt.trapezoid(jt.tensor([1.0, 2.0]), jt.tensor([0.0, 2.0]), dx=2)
    with pytest.raises(IndexError, match="no dimensions"):
        jt.trapezoid(jt.tensor(1.0))
    grads_match(lambda y, x: jt.trapezoid(y, x, dim=1), lambda y, x: torch.trapezoid(y, x, dim=1),
                [y, x1])
    grads_match(lambda y: jt.cumulative_trapezoid(y, dx=0.3), lambda y:
                torch.cumulative_trapezoid(y, dx=0.3), [y])


# -- cummax, cummin, cumprod, logcumsumexp --------------------------------------------------------
@FEW
@given(shaped(max_side=6))
def test_scans_follow_torch(case):
    a, dim = case
    j, t = both(a)
    for name in ("cummax", "cummin"):
        same(tuple(getattr(jt, name)(j, dim)), tuple(getattr(torch, name)(t, dim)), exact=True)
        i = a.astype(np.int64) if not np.isnan(a).any() else np.zeros(1, np.int64)
        agree(name, i, -1)
    same(j.cumprod(dim), t.cumprod(dim), rtol=1e-14)
    same(j.logcumsumexp(dim), t.logcumsumexp(dim), rtol=1e-14)


def test_scan_forms_dtypes_and_errors():
    c = [1.0, 3.0, 3.0, NAN, 2.0, NAN, 5.0]
    same(tuple(jt.cummax(jt.tensor(c), 0)), tuple(torch.cummax(torch.tensor(c), 0)))
    same(tuple(jt.cummin(jt.tensor([3, 1, 1, 2, 0]), 0)),
         tuple(torch.cummin(torch.tensor([3, 1, 1, 2, 0]), 0)))
    same(tuple(jt.cummax(jt.tensor(2.0), 0)), tuple(torch.cummax(torch.tensor(2.0), 0)))
    same(tuple(jt.cummax(jt.tensor([True, False, True]), 0)),
         tuple(torch.cummax(torch.tensor([True, False, True]), 0)))
    same(tuple(jt.cummax(jt.zeros(0, 2), 0)), tuple(torch.cummax(torch.zeros(0, 2), 0)))
    for data, kw in (([1, 2, 3], {}), ([True, True], {}), ([1, 2], {"dtype": jt.float32}),
                     ([], {}), (2.5, {})):
        tkw = {"dtype": torch.float32} if kw else {}
        j, t = both(np.asarray(data, np.int8 if kw else None))
        same(jt.cumprod(j, 0, **kw), torch.cumprod(t, 0, **tkw))
    int8 = jt.tensor([100, 3, 2], dtype=jt.int8)
    same(jt.cumprod(int8, 0), torch.cumprod(torch.tensor([100, 3, 2], dtype=torch.int8), 0))
    out = jt.zeros(3)
    assert jt.cumprod(jt.tensor([1, 2, 3]), 0, out=out) is out and out.tolist() == [1, 2, 6]
    x = jt.tensor([1.0, 2.0, 3.0])
    assert x.cumprod_(0) is x and x.tolist() == [1.0, 2.0, 6.0]
    same(jt.logcumsumexp(jt.tensor([-math.inf, -math.inf, 1.0, math.inf, 2.0]), 0),
         torch.logcumsumexp(torch.tensor([-math.inf, -math.inf, 1.0, math.inf, 2.0]), 0))
    same(jt.logcumsumexp(jt.tensor(2.0), 0), torch.logcumsumexp(torch.tensor(2.0), 0))
    values, indices = jt.zeros(2), jt.zeros(2, dtype=jt.int64)
    got = jt.cummax(jt.tensor([1.0, 0.0]), 0, out=(values, indices))
    assert got.values is values and indices.tolist() == [0, 0]
    with pytest.raises(NotImplementedError, match="int64"):
        jt.logcumsumexp(jt.tensor([1, 2]), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        jt.cummax(jt.tensor([1.0]), 1)


def test_scan_gradients_match_torch():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 7))
    a[1, 2] = 0.0  # products through a zero
    a[2, 3:5] = a[2, 2]  # ties
    grads_match(lambda x: jt.cumprod(x, 1), lambda x: torch.cumprod(x, 1), [a])
    grads_match(lambda x: jt.logcumsumexp(x, 1), lambda x: torch.logcumsumexp(x, 1), [a])
    grads_match(lambda x: jt.cummax(x, 1).values, lambda x: torch.cummax(x, 1).values, [a])
    grads_match(lambda x: jt.cummin(x, 0)[0], lambda x: torch.cummin(x, 0)[0], [a])
    x = jt.tensor(a, requires_grad=True)
    y = x.clone()
    y.cumprod_(1)
    y.sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    torch.cumprod(xt, 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


# -- vander, combinations, unravel_index, argwhere ------------------------------------------------
def test_vander_combinations_unravel_argwhere_follow_torch():
    for data, kw in (([1, 2, 3], {}), ([1.0, 2.0], {"N": 3, "increasing": True}),
                     ([True, False], {"N": 2}), ([1, 2], {"N": 0}), ([2.0, 3.0], {"N": 1})):
        j, t = both(np.asarray(data, np.int8) if isinstance(data[0], int) and
                    not isinstance(data[0], bool) else data)
        same(jt.vander(j, **kw), torch.vander(t, **kw))
    for r, repl in ((2, False), (2, True), (3, False), (0, False), (1, True), (4, False)):
        same(jt.combinations(jt.tensor([1, 2, 3]), r, repl),
             torch.combinations(torch.tensor([1, 2, 3]), r, repl))
    same(jt.combinations(jt.tensor([], dtype=jt.int64)),
         torch.combinations(torch.tensor([], dtype=torch.int64)))
    for idx, shape in (([4, -1, 7], (2, 3)), (5, 3), ([[1, 2]], [2, 1, 3]), ([1], ())):
        for dtype in (jt.int64, jt.int32):
            got = jt.unravel_index(jt.tensor(idx, dtype=dtype), shape)
            want = torch.unravel_index(torch.tensor(idx, dtype=getattr(torch, dtype.name)), shape)
            same(got, want)
    for data in ([[0, 1], [2, 0]], 3, 0, [[[0.0, NAN]]]):
        j, t = both(data)
        same(jt.argwhere(j), torch.argwhere(t))
        same(j.argwhere(), t.argwhere())
    # (torch's own vander cannot backpropagate: it writes its result in place)
    grads_match(lambda x: jt.vander(x, 4),
                lambda x: (x.unsqueeze(1) ** torch.arange(4.0, dtype=torch.float64)).flip(1),
                [[0.5, -2.0, 3.0]])
    grads_match(lambda x: jt.combinations(x, 2, True), lambda x: torch.combinations(x, 2, True),
                [[0.5, -2.0, 3.0]])
    errors = [(lambda: jt.vander(jt.tensor([[1]])), RuntimeError, "one-dimensional"),
              (lambda: jt.vander(jt.tensor([1]), -1), RuntimeError, "non-negative"),
              (lambda: jt.combinations(jt.tensor([[1, 2]])), RuntimeError, "1D vector"),
              (lambda: jt.combinations(jt.tensor([1, 2]), -1), RuntimeError, "non-negative"),
              (lambda: jt.unravel_index(jt.tensor([1.0]), (2, 3)), TypeError, "integer dtype"),
              (lambda: jt.unravel_index(jt.tensor([1]), (2, -3)), ValueError, "negative"),
              (lambda: jt.unravel_index(jt.tensor([1]), (2, 3.0)), TypeError, "only contain ints")]
    for fn, error, message in errors:
        with pytest.raises(error, match=message):
            fn()


# -- return types, methods ------------------------------------------------------------------------
def test_return_types_and_methods():
    for name in ("median", "nanmedian", "mode", "kthvalue", "cummax", "cummin"):
        cls = getattr(jt.return_types, name)
        assert cls._fields == ("values", "indices") and cls.__module__ == "jitensor.return_types"
        pair = cls(jt.tensor([1.0]), jt.tensor([0]))
        back = pickle.loads(pickle.dumps(pair))
        assert type(back) is cls and back.values.tolist() == [1.0]
    assert jt.return_types.histogram._fields == ("hist", "bin_edges")
    assert repr(jt.kthvalue(jt.tensor([2.0, 1.0]), 1)).startswith("jitensor.return_types.kthvalue(")
    for name in ("median", "nanmedian", "quantile", "nanquantile", "mode", "kthvalue", "msort",
                 "unique", "unique_consecutive", "bincount", "histc", "histogram", "cov",
                 "corrcoef", "argwhere", "cummax", "cummin", "cumprod", "cumprod_",
                 "logcumsumexp"):
        assert hasattr(torch.Tensor, name) and callable(getattr(jt.Tensor, name)), name
    for name in jt.ops.statistics.__all__:
        assert getattr(jt, name) is getattr(jt.ops.statistics, name) and hasattr(torch, name)


# -- CUDA (tiny: the simulator in CI) -------------------------------------------------------------
@needs_cuda
def test_order_statistics_on_cuda():
    x = jt.tensor([[3.0, NAN, 1.0, 2.0], [4.0, 1.0, 0.0, 2.0]])
    c = x.to("cuda")
    for fn in (lambda m, t: m.median(t, 1), lambda m, t: m.nanmedian(t),
               lambda m, t: m.kthvalue(t, 2), lambda m, t: m.mode(t, 0),
               lambda m, t: m.quantile(t, 0.3, dim=1), lambda m, t: m.msort(t)):
        got, want = fn(jt, c), fn(jt, x)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=False):
            assert g.device.type == "cuda"
            np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())


@needs_cuda
def test_counting_and_searching_on_cuda():
    i = jt.tensor([3, 1, 2, 1, 3, 3])
    c = i.to("cuda")
    for fn in (lambda t: jt.unique(t, return_inverse=True, return_counts=True),
               lambda t: jt.unique_consecutive(t, return_counts=True), jt.bincount,
               lambda t: jt.histc(t.float(), 3), lambda t: jt.histogram(t.float(), 3),
               lambda t: jt.isin(t, jt.tensor([1, 5], device=t.device)),
               lambda t: jt.searchsorted(jt.tensor([1, 2, 2, 4], device=t.device), t),
               lambda t: jt.bucketize(t, jt.tensor([1, 3], device=t.device), right=True),
               jt.argwhere):
        got, want = fn(c), fn(i)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=False):
            assert g.device.type == "cuda"
            np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())


@needs_cuda
def test_moments_scans_and_helpers_on_cuda():
    x = jt.tensor([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]], dtype=jt.float64)
    c = x.to("cuda").requires_grad_()
    for fn in (jt.cov, jt.corrcoef, jt.trapezoid, lambda t: jt.cumulative_trapezoid(t, dx=2),
               lambda t: jt.cummax(t, 1)[0], lambda t: jt.cummin(t, 0)[1],
               lambda t: jt.cumprod(t, 1), lambda t: jt.logcumsumexp(t, 1),
               lambda t: jt.vander(t[0]), lambda t: jt.combinations(t[0]),
               lambda t: jt.unravel_index(jt.tensor([4, 5], device=t.device), (2, 3))[1]):
        got, want = fn(c), fn(x)
        np.testing.assert_allclose(got.detach().cpu().numpy(), want.numpy(), rtol=1e-12)
    jt.cumprod(c, 1).sum().backward()
    xt = torch.tensor(x.numpy(), requires_grad=True)
    torch.cumprod(xt, 1).sum().backward()
    np.testing.assert_allclose(c.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-12)


def test_searchsorted_many_values_in_parallel():
    """Enough values for the kernel's parallel loop (it once wrote garbage there), one thread
    and all of them, against NumPy; a sorter and right=True too."""
    from conftest import at_thread_counts
    rng = np.random.default_rng(0)
    seq = np.sort(rng.standard_normal(1000))
    values = rng.standard_normal(20000)
    order = rng.permutation(1000)
    for got in at_thread_counts(lambda: jt.searchsorted(jt.tensor(seq), jt.tensor(values))):
        np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq, values))
    got = jt.searchsorted(jt.tensor(seq[order]), jt.tensor(values), right=True,
                          sorter=jt.tensor(np.argsort(seq[order])))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq, values, side="right"))
