"""The ops composed from other ops -- addmm, addmv, addr, baddbmm, addbmm, inner, tensordot,
vdot, kron, cross, cdist, dist (ops/linalg.py) and nansum, nanmean, var_mean, std_mean,
count_nonzero, aminmax, diff (ops/reduction.py) -- against torch: values, dtypes and shapes over
drawn shapes and dtypes, gradients, torch's errors, out= (an empty one resized, dtype-checked), the
in-place
forms, NaN handling, and a few on CUDA."""
import math
import warnings

import numpy as np
import pytest
from conftest import dtype_id, to_torch_dtype
from hypothesis import assume, given
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")

FLOATS = [jt.float32, jt.float64]
NUMERIC = FLOATS + [jt.int64]
SEEDS = st.integers(0, 2**16)


def values(shape, dtype, rng):
    """Floats from a normal distribution; small integers (so products need no wrap-around);
    bools at random."""
    if dtype is jt.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.is_floating_point:
        return np.asarray(rng.standard_normal(shape), dtype.np)
    return np.asarray(rng.integers(-3, 4, shape), dtype.np)


def pair(a):
    """The same values as a jitensor tensor and a torch tensor."""
    return jt.from_numpy(a.copy()), torch.from_numpy(a.copy())


def check(got, want, rtol=None):
    """`got` (a CPU jitensor tensor) has torch's `want`'s dtype, shape and values (NaN equal)."""
    assert isinstance(got, jt.Tensor)
    assert to_torch_dtype(got.dtype) == want.dtype, (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape), (tuple(got.shape), tuple(want.shape))
    expected = want.detach().numpy()
    if got.dtype.is_floating_point:
        tol = rtol or (2e-5 if got.dtype is jt.float32 else 1e-11)
        np.testing.assert_allclose(got.detach().numpy(), expected, rtol=tol, atol=tol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got.numpy(), expected)


def both(fn, arrays, **kwargs):
    """(jitensor's result, torch's result) of the function named `fn` on `arrays`."""
    jts, tts = zip(*(pair(a) for a in arrays), strict=False) if arrays else ((), ())
    return getattr(jt, fn)(*jts, **kwargs), getattr(torch, fn)(*tts, **kwargs)


# -- addmm, addmv, addr, baddbmm, addbmm ---------------------------------------------------------
def blas_shapes(fn, b, n, k, m):
    """(input, first, second) shapes of `fn` for batch b, result rows n, depth k, columns m."""
    return {"addmm": ((n, m), (n, k), (k, m)), "addmv": ((n,), (n, k), (k,)),
            "addr": ((n, m), (n,), (m,)), "baddbmm": ((b, n, m), (b, n, k), (b, k, m)),
            "addbmm": ((n, m), (b, n, k), (b, k, m))}[fn]


def broadcast_input(shape, how):
    """An input shape that broadcasts to `shape`: all of it, its last dims, 1s, or none (0-d)."""
    return {"full": shape, "trailing": shape[1:], "ones": (1,) * len(shape), "scalar": ()}[how]


BLAS = ["addmm", "addmv", "addr", "baddbmm", "addbmm"]


@given(fn=st.sampled_from(BLAS), dtype=st.sampled_from(NUMERIC),
       sizes=st.tuples(*[st.integers(0, 4)] * 4),
       how=st.sampled_from(["full", "trailing", "ones", "scalar"]),
       beta=st.sampled_from([0, 1, 2, -1]), alpha=st.sampled_from([0, 1, 3, -1]),
       fraction=st.sampled_from([0.0, 0.5]), seed=SEEDS)
def test_blas_forms_match_torch(fn, dtype, sizes, how, beta, alpha, fraction, seed):
    """beta * input + alpha * product for every shape and dtype torch takes, the input
    broadcast; floats also with fractional scalars."""
    _, n, k, _ = sizes
    # torch's addmv returns a smaller input as it is (not broadcast) when mat is empty
    assume(not (fn == "addmv" and how != "full" and 0 in (n, k)))
    rng = np.random.default_rng(seed)
    if dtype.is_floating_point:
        beta, alpha = beta + fraction, alpha - fraction
    sa, s1, s2 = blas_shapes(fn, *sizes)
    arrays = [values(broadcast_input(sa, how), dtype, rng), values(s1, dtype, rng),
              values(s2, dtype, rng)]
    check(*both(fn, arrays, beta=beta, alpha=alpha))


@given(fn=st.sampled_from(BLAS), sizes=st.tuples(*[st.integers(1, 3)] * 4),
       special=st.sampled_from([math.nan, math.inf]))
def test_zero_beta_ignores_nan_and_inf_in_input(fn, sizes, special):
    """beta = 0 drops input, as BLAS does; alpha = 0 drops the product where torch's kernel is
    BLAS's (addmm, addmv, addbmm) and multiplies it by 0 (NaN from inf) where it is not."""
    rng = np.random.default_rng(0)
    sa, s1, s2 = blas_shapes(fn, *sizes)
    a, m1, m2 = (values(s, jt.float64, rng) for s in (sa, s1, s2))
    check(*both(fn, [np.full(sa, special), m1, m2], beta=0))
    check(*both(fn, [a, np.full(s1, special), m2], alpha=0))


@pytest.mark.parametrize("fn", BLAS)
def test_integer_input_with_float_scalars_truncates_or_raises_like_torch(fn):
    """torch truncates a float beta or alpha for integer tensors, except addr, which refuses."""
    rng = np.random.default_rng(1)
    arrays = [values(s, jt.int64, rng) for s in blas_shapes(fn, 2, 2, 3, 2)]
    for kwargs in ({"beta": 0.5}, {"alpha": 2.5}):
        if fn == "addr":
            with pytest.raises(RuntimeError):
                getattr(torch, fn)(*(torch.from_numpy(a) for a in arrays), **kwargs)
            with pytest.raises(RuntimeError, match=f"argument {next(iter(kwargs))} must not be"):
                getattr(jt, fn)(*(jt.from_numpy(a) for a in arrays), **kwargs)
        else:
            check(*both(fn, arrays, **kwargs))


@given(da=st.sampled_from([jt.bool, jt.int16, jt.float32]),
       dv=st.sampled_from([jt.bool, jt.int64, jt.float64]), seed=SEEDS)
def test_addr_promotes_like_torch(da, dv, seed):
    rng = np.random.default_rng(seed)
    arrays = [values((2, 3), da, rng), values((2,), dv, rng), values((3,), dv, rng)]
    result = jt.promote_types(da, dv)
    alpha = True if result is jt.bool else -1  # (torch takes a bool scalar for bool results only)
    check(*both("addr", arrays, beta=0.5 if result.is_floating_point else 2, alpha=alpha))


@pytest.mark.parametrize("fn", BLAS)
@pytest.mark.parametrize("dtype", [jt.float64, jt.int64], ids=dtype_id)
def test_in_place_forms_match_torch(fn, dtype):
    rng = np.random.default_rng(2)
    sa, s1, s2 = blas_shapes(fn, 2, 3, 4, 2)
    a, m1, m2 = (values(s, dtype, rng) for s in (sa, s1, s2))
    (ja, ta), (j1, t1), (j2, t2) = pair(a), pair(m1), pair(m2)
    got = getattr(ja, fn + "_")(j1, j2, beta=2, alpha=-1)
    getattr(ta, fn + "_")(t1, t2, beta=2, alpha=-1)
    assert got is ja
    check(ja, ta)
    small = jt.ones(1, dtype=dtype)
    if fn != "addbmm":  # (torch's addbmm_ resizes a smaller self instead)
        with pytest.raises(RuntimeError):
            getattr(torch.ones(1, dtype=to_torch_dtype(dtype)), fn + "_")(t1, t2)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        getattr(small, fn + "_")(j1, j2)
    assert small.tolist() == [1]


# -- inner, tensordot, vdot, kron -----------------------------------------------------------------
@st.composite
def contraction(draw):
    """Shapes of a and b and tensordot dims (an int, or a pair of lists in any order), with a
    contracted dim of size 1 against any size now and then (torch sums it first)."""
    ndim_a, ndim_b = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    shape_a = [draw(st.integers(0, 3)) for _ in range(ndim_a)]
    shape_b = [draw(st.integers(0, 3)) for _ in range(ndim_b)]
    count = draw(st.integers(0, min(ndim_a, ndim_b)))
    if draw(st.booleans()):
        for i in range(count):
            shape_b[i] = shape_a[ndim_a - count + i]
        return tuple(shape_a), tuple(shape_b), count
    dims_a = draw(st.permutations(range(ndim_a)))[:count]
    dims_b = draw(st.permutations(range(ndim_b)))[:count]
    for da, db in zip(dims_a, dims_b, strict=False):
        shape_b[db] = shape_a[da] if draw(st.integers(0, 3)) else 1
    dims_a = [d - ndim_a if draw(st.booleans()) else d for d in dims_a]
    return tuple(shape_a), tuple(shape_b), (list(dims_a), list(dims_b))


@given(contraction(), st.sampled_from(NUMERIC), SEEDS)
def test_tensordot_matches_torch(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    sa, sb, dims = shapes
    check(*both("tensordot", [values(sa, dtype, rng), values(sb, dtype, rng)], dims=dims))


def test_tensordot_dims_as_a_tensor():
    rng = np.random.default_rng(3)
    a, b = values((2, 3, 4), jt.float64, rng), values((4, 3, 2), jt.float64, rng)
    (ja, ta), (jb, tb) = pair(a), pair(b)
    for dims in ([[1, 2], [1, 0]], 1):
        check(jt.tensordot(ja, jb, dims=jt.tensor(dims)),
              torch.tensordot(ta, tb, dims=torch.tensor(dims)))


@given(st.lists(st.integers(1, 3), max_size=3), st.lists(st.integers(1, 3), max_size=3),
       st.integers(0, 3), st.sampled_from(NUMERIC), SEEDS)
def test_inner_matches_torch(lead_a, lead_b, k, dtype, seed):
    """Over the last dims; a 0-d operand (an empty lead and k = 0 here) multiplies."""
    rng = np.random.default_rng(seed)
    sa, sb = tuple(lead_a) + (k,), tuple(lead_b) + (k,)
    if not k:
        sa = ()
    check(*both("inner", [values(sa, dtype, rng), values(sb, dtype, rng)]))


@given(st.integers(0, 5), st.sampled_from(NUMERIC), SEEDS)
def test_vdot_matches_torch(n, dtype, seed):
    rng = np.random.default_rng(seed)
    check(*both("vdot", [values((n,), dtype, rng), values((n,), dtype, rng)]))


@given(st.lists(st.integers(1, 3), max_size=3), st.lists(st.integers(1, 3), max_size=3),
       st.sampled_from(NUMERIC + [jt.bool]), SEEDS)
def test_kron_matches_torch(sa, sb, dtype, seed):
    """Blocks of input[i] * other, the shapes aligned at the right."""
    rng = np.random.default_rng(seed)
    check(*both("kron", [values(tuple(sa), dtype, rng), values(tuple(sb), dtype, rng)]))


@pytest.mark.parametrize("da, db", [(jt.bool, jt.int16), (jt.int64, jt.float32),
                                    (jt.float32, jt.float64)], ids=str)
def test_kron_promotes_like_torch(da, db):
    rng = np.random.default_rng(9)
    check(*both("kron", [values((2, 1), da, rng), values((2,), db, rng)]))


# -- cross ------------------------------------------------------------------------------------
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.integers(0, 3), st.booleans(),
       st.sampled_from([jt.float32, jt.float64, jt.int64]), SEEDS)
def test_cross_matches_torch(shape, where, broadcast, dtype, seed):
    rng = np.random.default_rng(seed)
    where = min(where, len(shape))
    sa = shape[:where] + [3] + shape[where:]
    sb = [1 if broadcast and i != where else n for i, n in enumerate(sa)]
    a, b = values(tuple(sa), dtype, rng), values(tuple(sb), dtype, rng)
    check(*both("cross", [a, b], dim=where - len(sa)))
    if sb[sa.index(3)] == 3:  # (else both refuse the default dim, input's first of size 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (both deprecate the default dim)
            check(*both("cross", [a, b]))


def test_cross_without_dim_warns_and_takes_the_first_dim_of_size_3():
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        got = jt.cross(jt.tensor([[1.0, 0, 0]] * 3).T, jt.tensor([[0.0, 1, 0]] * 3).T)
    assert got.tolist() == [[0, 0, 0], [0, 0, 0], [1, 1, 1]]


# -- cdist, dist ------------------------------------------------------------------------------
PS = [0, 1, 2, 0.5, 3, math.inf]


@given(st.lists(st.integers(1, 2), max_size=2), st.booleans(), st.integers(0, 5),
       st.integers(0, 5), st.integers(0, 4), st.sampled_from(PS), st.sampled_from(FLOATS),
       st.booleans(), SEEDS)
def test_cdist_matches_torch(batch, broadcast, rows1, rows2, cols, p, dtype, repeat, seed):
    """Every p over broadcast batches; `repeat` makes x2's rows x1's (zero distances)."""
    if p == math.inf and not cols:
        cols = 1  # (no difference to take the largest of: jitensor's amax raises)
    rng = np.random.default_rng(seed)
    b2 = [1] * len(batch) if broadcast else batch
    x1 = values(tuple(batch) + (rows1, cols), dtype, rng)
    x2 = x1[..., :1, :].repeat(rows2, -2) if repeat and rows1 else \
        values(tuple(b2) + (rows2, cols), dtype, rng)
    check(*both("cdist", [x1, x2], p=p), rtol=1e-4 if dtype is jt.float32 else None)


@pytest.mark.parametrize("rows", [25, 30])
def test_cdist_euclidean_modes_as_torch(rows):
    """p = 2 is torch's matrix product |a|^2 + |b|^2 - 2 a.b for more than 25 rows in the
    default compute_mode, or always with "use_mm_for_euclid_dist" (its values, cancellation
    included, and its gradients), and the direct differences with "donot_use_mm_..."."""
    rng = np.random.default_rng(4)
    x1 = values((rows, 3), jt.float64, rng)
    x2 = np.concatenate([x1 + 1e-3, values((4, 3), jt.float64, rng), x1[:2]])
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                 "donot_use_mm_for_euclid_dist"):
        j1, j2 = (jt.tensor(x, requires_grad=True) for x in (x1, x2))
        t1, t2 = (torch.tensor(x, requires_grad=True) for x in (x1, x2))
        got, want = jt.cdist(j1, j2, compute_mode=mode), torch.cdist(t1, t2, compute_mode=mode)
        # where a distance is 0 the product's cancellation leaves a root of a few ulp of
        # |a|^2 + |b|^2, whose rounding follows the summation order (torch's BLAS's or ours)
        assert got.dtype is jt.float64 and tuple(got.shape) == tuple(want.shape)
        squares = (x1 ** 2).sum(1).max() + (x2 ** 2).sum(1).max()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-8,
                                   atol=math.sqrt(16 * np.finfo(np.float64).eps * squares))
        got.sum().backward()
        want.sum().backward()
        check(j1.grad, t1.grad, rtol=1e-6)
        check(j2.grad, t2.grad, rtol=1e-6)
    ones = jt.ones(rows, 2, dtype=jt.float64, requires_grad=True)  # squares exactly 0
    zero = jt.cdist(ones, jt.ones(1, 2, dtype=jt.float64))
    zero.sum().backward()
    assert not zero.detach().numpy().any() and not ones.grad.numpy().any()  # torch's 0s
    x1 = x1.astype(np.float32)  # the direct differences keep small distances' digits
    direct = torch.cdist(torch.from_numpy(x1), torch.from_numpy(x1 + np.float32(1e-3)),
                         compute_mode="donot_use_mm_for_euclid_dist")
    check(jt.cdist(jt.from_numpy(x1), jt.from_numpy(x1 + np.float32(1e-3)),
                   compute_mode="donot_use_mm_for_euclid_dist"), direct, 1e-6)


def test_cdist_takes_the_differences_a_few_rows_at_a_time(monkeypatch):
    """The direct differences are formed in chunks of x1's rows (bounded memory): the same
    values whatever the chunk."""
    from jitensor.ops import linalg
    rng = np.random.default_rng(5)
    x1, x2 = values((2, 7, 3), jt.float64, rng), values((5, 3), jt.float64, rng)
    whole = jt.cdist(jt.from_numpy(x1), jt.from_numpy(x2), p=1)
    monkeypatch.setattr(linalg, "CDIST_CHUNK", 20)  # 2 rows of 2 x 5 x 3 differences
    chunked = jt.cdist(jt.from_numpy(x1), jt.from_numpy(x2), p=1)
    assert chunked.shape == (2, 7, 5)
    assert chunked.numpy().tobytes() == whole.numpy().tobytes()


@given(st.lists(st.integers(1, 3), max_size=3), st.booleans(),
       st.sampled_from(PS + [-math.inf, -1, True]), st.sampled_from(FLOATS), SEEDS)
def test_dist_matches_torch(shape, broadcast, p, dtype, seed):
    rng = np.random.default_rng(seed)
    other = [1 if broadcast else n for n in shape[1:]]
    check(*both("dist", [values(tuple(shape), dtype, rng), values(tuple(other), dtype, rng)],
                p=p))


def test_dist_of_empty_tensors_is_zero():
    check(*both("dist", [np.ones((2, 0)), np.ones((2, 0))], p=3))


def test_dist_promotes_like_torch():
    check(*both("dist", [np.ones(3, np.float32), np.zeros(3, np.int64)]))
    check(*both("dist", [np.ones(3, np.float32), np.zeros(3, np.float64)], p=1))


# -- nansum, nanmean ----------------------------------------------------------------------------
@st.composite
def reduction_case(draw, dtypes=FLOATS):
    """A tensor (with NaNs at random when floating) and a dim: None, an int, or a tuple."""
    dtype = draw(st.sampled_from(dtypes))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    rng = np.random.default_rng(draw(SEEDS))
    a = values(shape, dtype, rng)
    if dtype.is_floating_point:
        a[rng.random(shape) < draw(st.sampled_from([0, 0.3, 1]))] = np.nan
    dims = st.sampled_from([d for d in range(-len(shape), len(shape))] or [0])
    dim = draw(st.one_of(st.none(), dims, st.lists(dims, unique_by=lambda d: d % max(
        len(shape), 1), max_size=len(shape)).map(tuple)))
    return a, dim


@given(reduction_case(NUMERIC + [jt.bool]), st.booleans(), st.sampled_from([None, jt.float64]))
def test_nansum_matches_torch(case, keepdim, dtype):
    a, dim = case
    torch_dtype = None if dtype is None else to_torch_dtype(dtype)
    got = jt.nansum(jt.from_numpy(a.copy()), dim, keepdim, dtype=dtype)
    check(got, torch.nansum(torch.from_numpy(a.copy()), dim, keepdim, dtype=torch_dtype))


@given(reduction_case(), st.booleans(), st.sampled_from([None, jt.float64]))
def test_nanmean_matches_torch(case, keepdim, dtype):
    """The mean of the non-NaN elements, NaN where there are none."""
    a, dim = case
    torch_dtype = None if dtype is None else to_torch_dtype(dtype)
    got = jt.nanmean(jt.from_numpy(a.copy()), dim, keepdim, dtype=dtype)
    check(got, torch.nanmean(torch.from_numpy(a.copy()), dim, keepdim, dtype=torch_dtype))


def test_nan_reductions_skip_nan_and_inf_stays():
    x = jt.tensor([[1.0, math.nan, 2.0], [math.nan, math.nan, math.nan], [math.inf, 1, math.nan]])
    assert x.nansum(1).tolist() == [3.0, 0.0, math.inf]
    mean = x.nanmean(1).tolist()
    assert mean[0] == 1.5 and math.isnan(mean[1]) and mean[2] == math.inf
    assert jt.nansum(jt.tensor([1, 2], dtype=jt.int8)).dtype is jt.int64


# -- var_mean, std_mean, count_nonzero, aminmax, diff ---------------------------------------------
@given(reduction_case(), st.booleans(), st.sampled_from([None, 0, 1, 2]),
       st.sampled_from(["var_mean", "std_mean"]))
def test_var_mean_and_std_mean_match_torch(case, keepdim, correction, fn):
    a, dim = case
    a = np.asarray(np.nan_to_num(a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degrees of freedom <= 0 (both warn)
        got = getattr(jt, fn)(jt.from_numpy(a.copy()), dim, keepdim=keepdim,
                              correction=correction)
        want = getattr(torch, fn)(torch.from_numpy(a.copy()), dim, keepdim=keepdim,
                                  correction=correction)
    assert type(got) is tuple and len(got) == 2
    for g, w in zip(got, want, strict=False):
        check(g, w)


def test_var_mean_legacy_unbiased_forms():
    a = np.arange(6.0).reshape(2, 3)
    for args in ((1, False), (False,), (1, True, True)):
        for g, w in zip(jt.var_mean(jt.from_numpy(a), *args), torch.var_mean(torch.from_numpy(a),
                                                                              *args), strict=False):
            check(g, w)


@given(reduction_case(NUMERIC + [jt.bool]))
def test_count_nonzero_matches_torch(case):
    """NaN counts as non-zero."""
    a, dim = case
    check(*both("count_nonzero", [a], dim=dim))


@given(reduction_case(NUMERIC + [jt.bool]), st.booleans(), st.integers(-3, 3))
def test_aminmax_matches_torch(case, keepdim, dim):
    a, _ = case
    calls = [{"keepdim": keepdim}] if a.size else []  # (of nothing: an error, as torch's)
    dim %= max(a.ndim, 1)
    if not a.ndim or a.shape[dim]:
        calls.append({"dim": dim, "keepdim": keepdim})
    for kwargs in calls:
        got, want = both("aminmax", [a], **kwargs)
        assert type(got) is jt.return_types.aminmax
        check(got.min, want.min)
        check(got.max, want.max)


@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.integers(0, 5),
       st.integers(-3, 2), st.integers(0, 2), st.integers(0, 2),
       st.sampled_from(NUMERIC + [jt.uint8, jt.bool]), SEEDS)
def test_diff_matches_torch(shape, n, dim, before, after, dtype, seed):
    """n-th differences along dim, after prepend and append (bool: xor; uint8 wraps)."""
    rng = np.random.default_rng(seed)
    dim %= len(shape)
    a = values(tuple(shape), dtype, rng)
    edges = {}
    for name, size in (("prepend", before), ("append", after)):
        if size:
            edge = list(shape)
            edge[dim] = size
            edges[name] = pair(values(tuple(edge), dtype, rng))
    got = jt.diff(jt.from_numpy(a.copy()), n, dim, **{k: v[0] for k, v in edges.items()})
    want = torch.diff(torch.from_numpy(a.copy()), n, dim, **{k: v[1] for k, v in edges.items()})
    check(got, want)


# -- gradients ----------------------------------------------------------------------------------
def _with_nan(a):
    a = a.copy()
    a.reshape(-1)[::3] = np.nan
    return a


# name, input shapes, keyword arguments, a transform of the first input's values
GRADIENTS = [
    ("addmm", [(3, 4), (3, 2), (2, 4)], {"beta": 0.5, "alpha": -2}, None),
    ("addmm", [(4,), (3, 2), (2, 4)], {}, None),
    ("addmm", [(3, 4), (3, 2), (2, 4)], {"beta": 0}, _with_nan),
    ("addmv", [(3,), (3, 2), (2,)], {"beta": 2, "alpha": 0.5}, None),
    ("addr", [(3, 1), (3,), (4,)], {"beta": -1, "alpha": 3}, None),
    ("baddbmm", [(2, 3, 4), (2, 3, 2), (2, 2, 4)], {"beta": 0.5, "alpha": 2}, None),
    ("addbmm", [(3, 4), (5, 3, 2), (5, 2, 4)], {"beta": 0.5, "alpha": 2}, None),
    ("inner", [(2, 3), (4, 3)], {}, None),
    ("inner", [(), (4, 3)], {}, None),
    ("tensordot", [(2, 3, 4), (4, 3, 5)], {"dims": ([1, 2], [1, 0])}, None),
    ("tensordot", [(2, 1), (3, 4)], {"dims": ([1], [0])}, None),
    ("vdot", [(5,), (5,)], {}, None),
    ("kron", [(2, 3), (3,)], {}, None),
    ("cross", [(4, 3), (1, 3)], {"dim": 1}, None),
    *[("cdist", [(2, 4, 3), (5, 3)], {"p": p}, None) for p in PS],
    # (torch's backward of dist with p=0 fails: "Expected a proper Tensor but got None")
    *[("dist", [(3, 4), (4,)], {"p": p}, None) for p in PS[1:] + [-math.inf, -1]],
    ("nansum", [(3, 4)], {"dim": 1}, _with_nan),
    ("nanmean", [(3, 4)], {"dim": (0, 1), "keepdim": True}, _with_nan),
    ("var_mean", [(3, 4)], {"dim": 1, "correction": 0}, None),
    ("std_mean", [(3, 4)], {"dim": 0}, None),
    ("aminmax", [(3, 4)], {"dim": 1}, None),
    ("aminmax", [(3, 4)], {}, None),
    ("diff", [(3, 4)], {"n": 2, "dim": 0}, None),
]


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


@pytest.mark.parametrize("fn, shapes, kwargs, transform", GRADIENTS,
                         ids=[f"{g[0]}-{i}" for i, g in enumerate(GRADIENTS)])
def test_gradients_match_torch(fn, shapes, kwargs, transform):
    """float64 inputs that require grad, a random upstream gradient for every output."""
    rng = np.random.default_rng(5)
    arrays = [values(s, jt.float64, rng) for s in shapes]
    if transform is not None:
        arrays[0] = transform(arrays[0])
    jts = [jt.tensor(a, requires_grad=True) for a in arrays]
    tts = [torch.tensor(a, requires_grad=True) for a in arrays]
    got, want = _outputs(getattr(jt, fn)(*jts, **kwargs)), _outputs(getattr(torch, fn)(*tts,
                                                                                        **kwargs))
    upstream = [values(tuple(w.shape), jt.float64, rng) for w in want]
    sum(jt.sum(g * jt.tensor(u)) for g, u in zip(got, upstream, strict=False)).backward()
    sum((w * torch.tensor(u)).sum() for w, u in zip(want, upstream, strict=False)).backward()
    for j, t in zip(jts, tts, strict=False):
        check(j.grad, t.grad)


def test_cdist_and_dist_gradients_are_zero_at_zero_distance():
    """(No ties of the largest difference for p = inf: torch's cdist gives each the whole
    gradient, jitensor's shares it out, as torch's dist and norm do.)"""
    x = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, -0.5]])
    for p in PS:
        jx, tx = jt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        jt.cdist(jx, jx, p=p).sum().backward()
        torch.cdist(tx, tx, p=p).sum().backward()
        check(jx.grad, tx.grad)
    z = jt.zeros(3, dtype=jt.float64, requires_grad=True)
    jt.dist(z, jt.zeros(3, dtype=jt.float64)).backward()
    assert z.grad.tolist() == [0, 0, 0]


def test_in_place_form_differentiates_through_the_composed_op():
    rng = np.random.default_rng(6)
    a, m1, m2 = (values(s, jt.float64, rng) for s in ((3, 4), (3, 2), (2, 4)))
    jts = [jt.tensor(x, requires_grad=True) for x in (a, m1, m2)]
    tts = [torch.tensor(x, requires_grad=True) for x in (a, m1, m2)]
    (jts[0] * 1).addmm_(jts[1], jts[2], beta=3).sum().backward()
    (tts[0] * 1).addmm_(tts[1], tts[2], beta=3).sum().backward()
    for j, t in zip(jts, tts, strict=False):
        check(j.grad, t.grad)


# -- errors -------------------------------------------------------------------------------------
def ones(m, *shape, dtype=None):
    return m.ones(*shape, dtype=dtype if dtype is None else getattr(m, dtype))


# (a call on module m -- jitensor or torch --, the error type both raise, jitensor's message)
ERRORS = [
    (lambda m: m.addmm(ones(m, 2, 4), ones(m, 3), ones(m, 3, 4)), RuntimeError, "mat1.*matrix"),
    (lambda m: m.addmm(ones(m, 2, 4), ones(m, 2, 3), ones(m, 4, 4)), RuntimeError,
     r"cannot be multiplied \(2x3 and 4x4\)"),
    (lambda m: m.addmm(ones(m, 3), ones(m, 2, 3), ones(m, 3, 4)), RuntimeError,
     "expanded size of the tensor"),
    (lambda m: m.addmm(ones(m, 1, 2, 4), ones(m, 2, 3), ones(m, 3, 4)), RuntimeError,
     "number of sizes provided"),
    (lambda m: m.addmm(ones(m, 2, 4, dtype="float64"), ones(m, 2, 3), ones(m, 3, 4)),
     RuntimeError, "same dtype"),
    (lambda m: m.addmm(ones(m, 2, 4, dtype="bool"), ones(m, 2, 3, dtype="bool"),
                       ones(m, 3, 4, dtype="bool")), NotImplementedError, "'Bool'"),
    (lambda m: m.addmm(ones(m, 2, 4, dtype="int8"), ones(m, 2, 3, dtype="int8"),
                       ones(m, 3, 4, dtype="int8"), beta=300), RuntimeError,
     "cannot be converted to type int8"),
    (lambda m: m.addmv(ones(m, 2, 1), ones(m, 2, 3), ones(m, 3)), RuntimeError,
     "vector \\+ matrix @ vector expected, got 2, 2, 1"),
    (lambda m: m.addmv(ones(m, 7), ones(m, 2, 3), ones(m, 3)), RuntimeError,
     r"size mismatch, got input \(7\), mat \(2x3\), vec \(3\)"),
    (lambda m: m.addmv(ones(m, 2), ones(m, 2, 3), ones(m, 3, dtype="float64")), RuntimeError,
     "same dtype"),
    (lambda m: m.addr(ones(m, 2, 3), ones(m, 2, 1), ones(m, 3)), RuntimeError,
     "Expected 1-D argument vec1, but got 2-D"),
    (lambda m: m.addr(ones(m, 2, 3, dtype="int64"), ones(m, 2, dtype="int64"),
                      ones(m, 3, dtype="int64"), beta=0.0), RuntimeError,
     "argument beta must not be a floating point number"),
    (lambda m: m.addr(ones(m, 2, 3), ones(m, 2), ones(m, 3), alpha=True), RuntimeError,
     "Boolean alpha only supported for Boolean results"),
    (lambda m: m.baddbmm(ones(m, 2, 2, 4), ones(m, 2, 2, 3), ones(m, 3, 3, 4)), RuntimeError,
     r"first two dimensions of batch2 tensor to be: \[2, 3\] but got: \[3, 3\]"),
    (lambda m: m.baddbmm(ones(m, 2, 2, 4), ones(m, 1, 2, 2, 3), ones(m, 2, 3, 4)), RuntimeError,
     "batch1 must be a 3D tensor"),
    (lambda m: m.addbmm(ones(m, 2, 4), ones(m, 2, 2, 3), ones(m, 3, 3, 4)), RuntimeError,
     "must have same number of batches, got 2 and 3"),
    (lambda m: m.addbmm(ones(m, 2, 4), ones(m, 2, 2, 3), ones(m, 2, 4, 4)), RuntimeError,
     r"Incompatible matrix sizes for bmm \(2x3 and 4x4\)"),
    (lambda m: m.inner(ones(m, 2, 3), ones(m, 4)), RuntimeError,
     r"last dimension must match on both input tensors but got shapes \[2, 3\] and \[4\]"),
    (lambda m: m.inner(ones(m, 3), ones(m, 3, dtype="float64")), RuntimeError, "same dtype"),
    (lambda m: m.tensordot(ones(m, 2, 3), ones(m, 3, 4), dims=-1), RuntimeError,
     "expects dims >= 0, but got dims=-1"),
    (lambda m: m.tensordot(ones(m, 2, 3), ones(m, 3, 4), dims=3), RuntimeError,
     "expects dims < ndim_a or ndim_b"),
    (lambda m: m.tensordot(ones(m, 2, 3), ones(m, 4, 4), dims=1), RuntimeError,
     ("contracted dimensions need to match, but first has size 3 in dim -1 and second has size "
      "4 in dim 0")),
    (lambda m: m.tensordot(ones(m, 2, 3, 5), ones(m, 5, 4), dims=([1, 2], [0])), RuntimeError,
     "both dimension lists should have same length"),
    (lambda m: m.tensordot(ones(m, 2, 3, 5), ones(m, 5, 3, 3), dims=([1, 1], [2, 1])),
     RuntimeError, "appears multiple times in the list of dims"),
    (lambda m: m.tensordot(ones(m, 2, 3), ones(m, 3, 4), dims=([2], [0])), IndexError,
     "Dimension out of range"),
    (lambda m: m.tensordot(ones(m, 2, 3), ones(m, 3, 4), dims="a"), RuntimeError,
     "expects dims to be int or"),
    (lambda m: m.tensordot(ones(m, 2, 3), ones(m, 3, 4), dims=(1, 0)), TypeError, "dims"),
    (lambda m: m.tensordot(ones(m, 2, 3, dtype="bool"), ones(m, 3, 4, dtype="bool"), dims=1),
     NotImplementedError, "'Bool'"),
    (lambda m: m.vdot(ones(m, 3, 1), ones(m, 3)), RuntimeError, "1D tensors expected"),
    (lambda m: m.vdot(ones(m, 3), ones(m, 4)), RuntimeError, "inconsistent tensor size"),
    (lambda m: m.vdot(ones(m, 3), ones(m, 3, dtype="float64")), RuntimeError, "same dtype"),
    (lambda m: m.cross(ones(m, 2, 4), ones(m, 2, 4)), RuntimeError, "no dimension of size 3"),
    (lambda m: m.cross(ones(m, 2, 4), ones(m, 2, 4), dim=1), RuntimeError,
     "dimension 1 must have length 3. Got 4 and 4"),
    (lambda m: m.cross(ones(m, 3, 1, 3), ones(m, 1, 3, 3)), RuntimeError,
     "dimension 0 must have length 3. Got 3 and 1"),
    (lambda m: m.cross(ones(m, 2, 3), ones(m, 3), dim=1), RuntimeError,
     "same number of dimensions"),
    (lambda m: m.cross(ones(m, 3), ones(m, 3), dim=2), IndexError, "Dimension out of range"),
    (lambda m: m.cross(ones(m, 3), ones(m, 3, dtype="float64"), dim=0), RuntimeError,
     "same dtype"),
    (lambda m: m.cross(ones(m, 3, dtype="bool"), ones(m, 3, dtype="bool"), dim=0),
     NotImplementedError, "'Bool'"),
    (lambda m: m.cdist(ones(m, 3), ones(m, 4, 3)), RuntimeError, "at least 2D tensors, X1 got: 1D"),
    (lambda m: m.cdist(ones(m, 2, 3), ones(m, 4, 2)), RuntimeError,
     "must have the same number of columns. X1: 3 X2: 2"),
    (lambda m: m.cdist(ones(m, 2, 3), ones(m, 4, 3, dtype="int64")), RuntimeError,
     "only supports floating-point dtypes, X2 got: int64|Long"),
    (lambda m: m.cdist(ones(m, 2, 3), ones(m, 4, 3, dtype="float64")), RuntimeError,
     "same dtype"),
    (lambda m: m.cdist(ones(m, 2, 3), ones(m, 4, 3), p=-1), RuntimeError,
     "only supports non-negative p values"),
    (lambda m: m.cdist(ones(m, 2, 3), ones(m, 4, 3), compute_mode="x"), ValueError,
     "x is not a valid value for compute_mode"),
    (lambda m: m.cdist(ones(m, 2, 2, 3), ones(m, 3, 4, 3)), RuntimeError,
     "must match the size of tensor b"),
    (lambda m: m.dist(ones(m, 3, dtype="int64"), ones(m, 3, dtype="int64")), RuntimeError,
     "input dtype should be"),
    (lambda m: m.dist(ones(m, 2, 3), ones(m, 4)), RuntimeError, "must match the size"),
    (lambda m: m.nanmean(ones(m, 3, dtype="int64")), RuntimeError,
     "expected input to have floating point or complex dtype but got Long"),
    (lambda m: m.nanmean(ones(m, 3), dtype=m.int64), RuntimeError, "could not infer output dtype"),
    (lambda m: m.nansum(ones(m, 2, 3), (0, 0)), RuntimeError, "appears multiple times"),
    (lambda m: m.var_mean(ones(m, 3, dtype="int64")), RuntimeError,
     "only support floating point and complex dtypes"),
    (lambda m: m.std_mean(ones(m, 3), 0, unbiased=True, correction=1), TypeError, ""),
    (lambda m: m.count_nonzero(ones(m, 2, 3), (1, 1)), RuntimeError, "appears multiple times"),
    (lambda m: m.aminmax(ones(m, 0)), RuntimeError,
     "cannot compute aminmax over an empty dimension as the operation has no identity"),
    (lambda m: m.aminmax(ones(m, 2, 0), dim=1), IndexError,
     "Expected reduction dim 1 to have non-zero size"),
    (lambda m: m.aminmax(ones(m, 2, 3), dim=(0, 1)), TypeError, "'dim' must be int, not tuple"),
    (lambda m: m.aminmax(ones(m, 2, 3), 1), TypeError, ""),
    (lambda m: m.aminmax(ones(m, 2, 3), out=ones(m)), TypeError, "'out' must be"),
    (lambda m: m.diff(m.tensor(1.0)), RuntimeError, "at least one-dimensional"),
    (lambda m: m.diff(ones(m, 3), n=-1), RuntimeError, "order must be non-negative but got -1"),
    (lambda m: m.diff(ones(m, 3), n=1.0), TypeError, "argument 'n' must be int, not float"),
    (lambda m: m.diff(ones(m, 2, 3), prepend=ones(m, 1)), RuntimeError,
     "prepend or append to be the same dimension as input"),
    (lambda m: m.diff(ones(m, 2, 3), append=ones(m, 3, 1)), RuntimeError,
     r"input.size\(0\) = 2, but got tensor.size\(0\) = 3"),
    (lambda m: m.diff(ones(m, 2, 3), prepend=0), TypeError, "'prepend' must be Tensor, not int"),
    (lambda m: m.diff(ones(m, 2, 3), dim=2), IndexError, "Dimension out of range"),
]


@pytest.mark.parametrize("call, error, match", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_torch(call, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (cross without dim)
        with pytest.raises(error):
            call(torch)
        with pytest.raises(error, match=match):
            call(jt)


# -- out= -------------------------------------------------------------------------------------
def out_cases():
    """(name, arguments, keyword arguments, whether out must have the result's dtype)."""
    rng = np.random.default_rng(7)

    def f(*shape):
        return values(shape, jt.float32, rng)
    return [
        ("addmm", [f(2, 4), f(2, 3), f(3, 4)], {"beta": 2}, True),
        ("addmv", [f(2), f(2, 3), f(3)], {}, True),
        ("addr", [f(2, 3), f(2), f(3)], {}, False),
        ("baddbmm", [f(2, 2, 4), f(2, 2, 3), f(2, 3, 4)], {}, True),
        ("addbmm", [f(2, 4), f(5, 2, 3), f(5, 3, 4)], {}, True),
        ("inner", [f(2, 3), f(4, 3)], {}, True),
        ("tensordot", [f(2, 3), f(3, 4)], {"dims": 1}, True),
        ("vdot", [f(3), f(3)], {}, True),
        ("kron", [f(2), f(3)], {}, False),
        ("cross", [f(2, 3), f(2, 3)], {"dim": 1}, True),
        ("nansum", [f(2, 3)], {"dim": 1}, False),
        ("nanmean", [f(2, 3)], {"dim": 1}, False),
        ("diff", [f(2, 3)], {}, False),
        ("lerp", [f(2, 3), f(2, 3)], {"weight": 0.3}, False),
        ("addcmul", [f(2, 3), f(2, 3), f(2, 3)], {"value": 0.5}, False),
        ("addcdiv", [f(2, 3), f(2, 3), f(2, 3) + 4], {}, False),
        ("diag", [f(2, 3)], {"diagonal": 1}, True),
        ("tril", [f(3, 3)], {}, True),
        ("triu", [f(2, 3)], {"diagonal": -1}, True),
        ("softmax", [f(2, 3)], {"dim": 1}, True),
        ("log_softmax", [f(2, 3)], {"dim": 0}, True),
        ("renorm", [f(3, 3)], {"p": 2, "dim": 0, "maxnorm": 1.0}, True),
        ("narrow_copy", [f(3, 4)], {"dim": 1, "start": 1, "length": 2}, True),
        ("matrix_power", [f(3, 3)], {"n": 2}, True),
        ("masked_select", [f(2, 3), f(2, 3) > 0], {}, True),
        ("take_along_dim", [f(2, 3), np.array([[0, 2, 1], [1, 0, 0]])], {"dim": 1}, True),
    ]


@pytest.mark.parametrize("case", out_cases(), ids=lambda c: c[0])
def test_out_is_resized_and_dtype_checked_like_torch(case):
    """An empty out is resized silently, as torch's; one with elements must have the result's
    shape (torch resizes it with a deprecation warning, which would detach a view from its
    base here) and is left as it was otherwise."""
    fn, arrays, kwargs, exact = case
    want = getattr(torch, fn)(*(torch.from_numpy(a) for a in arrays), **kwargs)
    args = [jt.from_numpy(a) for a in arrays]
    before = jt.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(jt, fn)(*args, **kwargs, out=before)
    assert got is before
    check(before, want)
    other = jt.full((5,), 7.0)
    with pytest.raises(RuntimeError, match="pass an out tensor of that shape"):
        getattr(jt, fn)(*args, **kwargs, out=other)
    assert other.tolist() == [7.0] * 5
    wide = jt.empty(tuple(want.shape), dtype=jt.float64)
    if exact:
        with pytest.raises(RuntimeError):
            getattr(torch, fn)(*(torch.from_numpy(a) for a in arrays), **kwargs,
                               out=torch.empty(tuple(want.shape), dtype=torch.float64))
        with pytest.raises(RuntimeError, match="out tensor to have dtype float32"):
            getattr(jt, fn)(*args, **kwargs, out=wide)
    else:  # computed in float32, then cast: jitensor's float32 result, widened exactly
        getattr(jt, fn)(*args, **kwargs, out=wide)
        check(wide, want.double(), rtol=1e-6)
        np.testing.assert_array_equal(wide.numpy(), before.numpy().astype(np.float64))
    narrow_out = jt.zeros(tuple(want.shape), dtype=jt.int64)
    match = "out tensor to have dtype" if exact else "can't be cast to the desired output type"
    with pytest.raises(RuntimeError, match=match):
        getattr(jt, fn)(*args, **kwargs, out=narrow_out)
    assert not narrow_out.numpy().any()


def test_out_aliasing_an_input_and_out_with_grad():
    a = jt.ones(2, 2)
    jt.addmm(a, a, a, out=a)
    assert a.tolist() == [[3, 3], [3, 3]]
    x = jt.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        jt.addmm(x, x, x, out=jt.empty(2, 2))
    with jt.no_grad():
        out = jt.empty(2, 2)
        assert jt.addmm(x, x, x, out=out) is out


def test_aminmax_out_pair():
    x = jt.tensor([[3.0, 1.0], [0.0, 5.0]])
    lo, hi = jt.empty(0), jt.empty(2)
    got = jt.aminmax(x, dim=1, out=(lo, hi))
    assert type(got) is jt.return_types.aminmax and got.min is lo and got.max is hi
    assert lo.tolist() == [1, 0] and hi.tolist() == [3, 5]
    with pytest.raises(RuntimeError, match="out tensor to have dtype float32"):
        jt.aminmax(x, dim=1, out=(jt.empty(2, dtype=jt.float64), jt.empty(2)))


@pytest.mark.parametrize("fn", ["sort", "topk"])
def test_sort_and_topk_out_pairs(fn):
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], np.float32)
    args = (2,) if fn == "topk" else ()
    want = getattr(torch, fn)(torch.from_numpy(x), *args)
    values, indices = jt.empty(0), jt.empty(0, dtype=jt.int64)
    got = getattr(jt, fn)(jt.from_numpy(x), *args, out=(values, indices))
    assert type(got) is getattr(jt.return_types, fn)
    assert got.values is values and got.indices is indices
    check(values, want.values)
    check(indices, want.indices)
    with pytest.raises(RuntimeError, match="out tensor to have dtype int64"):
        getattr(jt, fn)(jt.from_numpy(x), *args, out=(jt.empty(0), jt.empty(0)))


def test_nonzero_out():
    x = jt.tensor([[0.0, 1.0], [2.0, 0.0]])
    out = jt.empty(0, dtype=jt.int64)
    assert jt.nonzero(x, out=out) is out and out.tolist() == [[0, 1], [1, 0]]
    with pytest.raises(RuntimeError, match="out tensor to have dtype int64"):
        jt.nonzero(x, out=jt.empty(0))
    with pytest.raises(RuntimeError, match="as_tuple=True does not take out="):
        jt.nonzero(x, out=out, as_tuple=True)


# -- the API: methods where torch has them -------------------------------------------------------
NAMES = ["addmm", "addmv", "addr", "baddbmm", "addbmm", "inner", "tensordot", "vdot", "kron",
         "cross", "cdist", "dist", "nansum", "nanmean", "var_mean", "std_mean", "count_nonzero",
         "aminmax", "diff"]


@pytest.mark.parametrize("name", NAMES)
def test_functions_and_methods_exist_where_torch_has_them(name):
    assert callable(getattr(jt, name)) and name in jt.__all__
    for method in (name, name + "_"):
        assert hasattr(jt.Tensor, method) == hasattr(torch.Tensor, method), method


def test_methods_match_the_functions():
    x = jt.tensor([[1.0, math.nan, 3.0], [4.0, 5.0, 6.0]])
    assert x.nansum().item() == 19 and x.count_nonzero().item() == 6
    assert x.aminmax(dim=0).max.tolist()[::2] == [4, 6]
    assert x.diff(dim=0).tolist()[0][0] == 3
    v = jt.tensor([1.0, 2.0, 3.0])
    assert v.inner(v).item() == v.vdot(v).item() == 14
    assert v.cross(jt.tensor([0.0, 0.0, 1.0]), dim=0).tolist() == [2, -1, 0]
    assert v.dist(jt.zeros(3), p=1).item() == 6 and v.kron(v).shape == (9,)
    assert jt.zeros(3, 3).addr(v, v).tolist() == jt.outer(v, v).tolist()


# -- CUDA ---------------------------------------------------------------------------------------
@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
def test_composed_ops_run_on_cuda():
    """Tiny shapes (the simulator runs a Python thread per GPU thread): the same values as on
    the CPU, and a gradient."""
    rng = np.random.default_rng(8)
    a, m1, m2 = (values(s, jt.float32, rng) for s in ((2, 2), (2, 3), (3, 2)))
    x = _with_nan(values((2, 3), jt.float32, rng))
    cases = [("addmm", [a, m1, m2], {"beta": 0.5}), ("tensordot", [m1, m2], {"dims": 1}),
             ("cross", [m1, m1[::-1].copy()], {"dim": 1}), ("cdist", [m1, m1], {}),
             ("nansum", [x], {"dim": 1}), ("diff", [m1], {"prepend": m1[:, :1].copy()})]

    def run(fn, arrays, kwargs, device):
        def put(v):
            return jt.tensor(v, device=device) if isinstance(v, np.ndarray) else v
        return getattr(jt, fn)(*map(put, arrays), **{k: put(v) for k, v in kwargs.items()})
    for fn, arrays, kwargs in cases:
        got, want = run(fn, arrays, kwargs, "cuda"), run(fn, arrays, kwargs, "cpu")
        assert got.device.type == "cuda", fn
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    lo_hi = jt.aminmax(jt.tensor(m1, device="cuda"), dim=0)
    assert lo_hi.min.cpu().tolist() == m1.min(0).tolist()
    w = jt.tensor(m1, device="cuda", requires_grad=True)
    jt.addmm(jt.tensor(a, device="cuda"), w, jt.tensor(m2, device="cuda")).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), np.ones((2, 2)) @ m2.T, rtol=1e-6)


def test_aminmax_out_checks_both_before_writing_either():
    low, high = jt.zeros(3), jt.zeros(3, dtype=jt.float64)  # high: the wrong dtype
    with pytest.raises(RuntimeError, match="dtype"):
        jt.aminmax(jt.ones(2, 3), dim=0, out=(low, high))
    assert not low.numpy().any()
