"""Hypothesis sweeps: every creation routine over shapes (0-4 dims, sizes 0-5, now and then big
enough to take the parallel branch of the kernels) and all 8 CPU dtypes, against NumPy; plus
fill_/copy_/clone on arbitrary strided views (the coalesced 4-D kernels)."""
import math

import numpy as np
import pytest
from conftest import COPY_PAIRS, CPU_DTYPES, INT_DTYPES, assert_tensor
from hypothesis import assume, given
from hypothesis import strategies as st

import jitensor as jt
from jitensor.kernels.cpu import kernels

P = kernels.PARALLEL_MIN  # read at import: the threshold the kernels use now
NON_BOOL = [d for d in CPU_DTYPES if d is not jt.bool]

dtypes_st = st.sampled_from(CPU_DTYPES)
small_shapes = st.lists(st.integers(0, 5), max_size=4).map(tuple)
big_shapes = st.sampled_from([(P,), (P + 3,), (2, P // 2 + 1), (3, 5, P // 15 + 7), (1, P + 1, 1)])


@st.composite
def shapes(draw):
    """Mostly small shapes; about one draw in ten crosses PARALLEL_MIN."""
    return draw(big_shapes) if draw(st.integers(0, 9)) == 0 else draw(small_shapes)


def size_args(shape, form):
    """The size in each of torch's spellings."""
    return {"varargs": shape, "tuple": (tuple(shape),), "list": (list(shape),),
            "Size": (jt.Size(shape),)}[form]


forms = st.sampled_from(["varargs", "tuple", "list", "Size"])


def values_for(d):
    """Fill values that `d` holds (no overflow error expected)."""
    if d is jt.bool:
        return st.booleans()
    if d.is_floating_point:
        big = float(np.finfo(d.np).max)
        return st.one_of(st.floats(-big, big), st.sampled_from([math.nan, math.inf, -math.inf]),
                         st.integers(-(1 << 24), 1 << 24))
    info = np.iinfo(d.np)
    lo, hi = max(int(info.min), -(1 << 62)), min(int(info.max), 1 << 62)
    return st.one_of(st.integers(int(info.min), int(info.max)), st.booleans(),
                     st.floats(lo, hi, allow_nan=False))


def expected_fill(value, d):
    """The value as stored in dtype `d` (floats truncate into integers, as a C cast)."""
    if not d.is_floating_point and d is not jt.bool and isinstance(value, float):
        value = int(value)
    return np.array(value).astype(d.np) if d is not jt.bool else np.bool_(value)


# -- zeros / ones / empty / full ----------------------------------------------------------------
@given(shape=shapes(), d=dtypes_st, form=forms)
def test_zeros_ones_empty(shape, d, form):
    args = size_args(shape, form)
    assert_tensor(jt.zeros(*args, dtype=d), np.zeros(shape, d.np), d)
    assert_tensor(jt.ones(*args, dtype=d), np.ones(shape, d.np), d)
    e = jt.empty(*args, dtype=d)
    assert e.shape == shape and e.dtype is d and e.is_contiguous() and e.numpy().dtype == d.np
    if d is jt.float32:  # the default dtype without a keyword
        assert_tensor(jt.zeros(*args), np.zeros(shape, np.float32), jt.float32)
        assert_tensor(jt.ones(*args), np.ones(shape, np.float32), jt.float32)
        assert jt.empty(*args).shape == shape


@given(data=st.data(), shape=shapes(), d=dtypes_st, form=st.sampled_from(["tuple", "list", "Size"]))
def test_full(data, shape, d, form):
    value = data.draw(values_for(d))
    (size,) = size_args(shape, form)
    t = jt.full(size, value, dtype=d)
    assert_tensor(t, np.full(shape, expected_fill(value, d), d.np), d)


@given(data=st.data(), shape=small_shapes)
def test_full_infers_dtype(data, shape):
    value = data.draw(st.one_of(st.booleans(), st.integers(-(1 << 63), (1 << 63) - 1),
                                st.floats(-3e38, 3e38)))
    t = jt.full(shape, value)
    d = jt.bool if isinstance(value, bool) else jt.int64 if isinstance(value, int) else jt.float32
    assert_tensor(t, np.full(shape, value, d.np), d)


@given(shape=shapes(), d=dtypes_st, src_d=dtypes_st, data=st.data())
def test_like_routines(shape, d, src_d, data):
    src = jt.zeros(shape, dtype=src_d)
    override = data.draw(st.booleans())
    kw = {"dtype": d} if override else {}
    d = d if override else src_d
    assert_tensor(jt.zeros_like(src, **kw), np.zeros(shape, d.np), d)
    assert_tensor(jt.ones_like(src, **kw), np.ones(shape, d.np), d)
    value = data.draw(values_for(d))
    assert_tensor(jt.full_like(src, value, **kw), np.full(shape, expected_fill(value, d), d.np), d)
    e = jt.empty_like(src, **kw)
    assert e.shape == shape and e.dtype is d
    if d.is_floating_point:
        r = jt.rand_like(src, **kw)
        assert r.shape == shape and r.dtype is d
        assert r.numel() == 0 or (r.numpy().min() >= 0 and r.numpy().max() < 1)
        n = jt.randn_like(src, **kw)
        assert n.shape == shape and n.dtype is d and np.isfinite(n.numpy()).all()


@given(shape=small_shapes, d=dtypes_st, data=st.data())
def test_new_routines(shape, d, data):
    t = jt.zeros(1, dtype=d)
    assert_tensor(t.new_zeros(shape), np.zeros(shape, d.np), d)
    assert_tensor(t.new_ones(*shape) if shape else t.new_ones(()), np.ones(shape, d.np), d)
    value = data.draw(values_for(d))
    assert_tensor(t.new_full(shape, value), np.full(shape, expected_fill(value, d), d.np), d)
    e = t.new_empty(shape)
    assert e.shape == shape and e.dtype is d


# -- tensor / as_tensor / from_numpy -------------------------------------------------------------
def arrays(d, shape, seed):
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if d is jt.bool:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if d.is_floating_point:
        return (rng.standard_normal(n) * 100).astype(d.np).reshape(shape)
    info = np.iinfo(d.np)
    return rng.integers(int(info.min), int(info.max), n, endpoint=True, dtype=d.np).reshape(shape)


@given(shape=shapes(), d=dtypes_st, seed=st.integers(0, 2 ** 32 - 1))
def test_tensor_and_from_numpy(shape, d, seed):
    a = arrays(d, shape, seed)
    t = jt.tensor(a)
    assert_tensor(t, a, d)
    assert a.size == 0 or not np.shares_memory(t.numpy(), a)
    f = jt.from_numpy(a)
    assert f.dtype is d and f.shape == shape and f.numpy() is a
    s = jt.as_tensor(a)
    assert s.dtype is d and s.numpy() is a


@given(shape=small_shapes, d=dtypes_st, seed=st.integers(0, 2 ** 32 - 1))
def test_tensor_from_nested_lists_infers_like_torch(shape, d, seed):
    a = arrays(d, shape, seed)
    if d.is_floating_point:
        a = a.astype(np.float64)
        inferred = jt.float32
    else:
        inferred = jt.bool if d is jt.bool else jt.int64
    if a.size == 0:
        inferred = jt.float32  # no element to infer from: the default dtype, as torch
    ref = np.asarray(a.tolist())  # tolist() of an empty dim drops the dims after it
    t = jt.tensor(a.tolist())
    assert_tensor(t, ref.astype(inferred.np), inferred)
    flat = a.reshape(-1)  # with a dtype: 1-d (one compiled conversion per dtype pair)
    assert_tensor(jt.tensor(flat.tolist(), dtype=d), flat.astype(d.np), d)


# -- arange / linspace / eye -----------------------------------------------------------------------
@given(start=st.integers(-60, 60), step=st.integers(-7, 7).filter(bool), n=st.integers(0, 40),
       extra=st.integers(0, 6), d=st.sampled_from([None] + NON_BOOL))
def test_arange_int_args(start, step, n, extra, d):
    end = start + n * step + (extra % abs(step)) * (1 if step > 0 else -1)
    if d is jt.uint8:
        assume(min(start, end) >= 0)
    if d is jt.int8:
        assume(max(abs(start), abs(end)) <= 127)
    t = jt.arange(start, end, step, dtype=d)
    expected = np.arange(start, end, step, dtype=np.int64)
    assert_tensor(t, expected.astype((d or jt.int64).np), d or jt.int64)


@given(start=st.integers(-4000, 4000), step=st.integers(1, 400).map(lambda k: k / 16),
       n=st.integers(0, 50), frac=st.floats(0, 0.999), neg=st.booleans(),
       d=st.sampled_from([None, jt.float32, jt.float64]))
def test_arange_float_args(start, step, n, frac, neg, d):
    start = start / 8
    step = -step if neg else step
    end = start + (n + frac) * step
    t = jt.arange(start, end, step, dtype=d)
    d = d or jt.get_default_dtype()
    count = math.ceil((end - start) / step)
    expected = (start + np.arange(count, dtype=np.float64) * step).astype(d.np)
    assert_tensor(t, expected, d)
    assert t.shape == np.arange(start, end, step).shape


@given(n=st.one_of(st.integers(0, 40), st.just(P + 5)))
def test_arange_single_argument_crosses_parallel_threshold(n):
    assert_tensor(jt.arange(n), np.arange(n), jt.int64)
    assert_tensor(jt.arange(float(n)), np.arange(n, dtype=np.float32), jt.float32)


@given(start=st.floats(-1e3, 1e3), end=st.floats(-1e3, 1e3),
       steps=st.one_of(st.integers(0, 60), st.just(P + 1)),
       d=st.sampled_from([jt.float32, jt.float64]))
def test_linspace_float(start, end, steps, d):
    t = jt.linspace(start, end, steps, dtype=d)
    assert t.shape == (steps,) and t.dtype is d
    ref = np.linspace(start, end, steps)
    got = t.numpy().astype(np.float64)
    scale = max(abs(start), abs(end), 1e-300)
    # relative to the range; plus, where the step is subnormal, its rounding (up to half the
    # smallest subnormal) times up to steps / 2 multiples (torch computes in d alike)
    info = np.finfo(d.np)
    tol = scale * (8 * info.eps) + steps * float(info.smallest_subnormal)
    np.testing.assert_allclose(got, ref.astype(d.np).astype(np.float64), rtol=0, atol=tol)
    if steps >= 1:
        assert got[0] == np.float64(d.np.type(start))  # endpoints exact
    if steps >= 2:
        assert got[-1] == np.float64(d.np.type(end))
    if steps >= 3:  # monotone between the endpoints
        diffs = np.diff(got)
        assert np.all(diffs >= 0) if end >= start else np.all(diffs <= 0)


def torch_int_linspace(start, end, steps):
    """torch's CPU formula for integer dtypes (see test_creation.py)."""
    if steps == 1:
        return [int(start)]
    s, e = int(start), int(end)
    step = (e - s) / (steps - 1)
    return [int(s + step * i) if i < steps // 2 else int(e - step * (steps - 1 - i))
            for i in range(steps)]


@given(start=st.integers(-100, 100), end=st.integers(-100, 100), steps=st.integers(0, 60),
       d=st.sampled_from([jt.int8, jt.int16, jt.int32, jt.int64]), as_float=st.booleans())
def test_linspace_integer_dtype(start, end, steps, d, as_float):
    args = (float(start), float(end)) if as_float else (start, end)
    t = jt.linspace(*args, steps, dtype=d)
    assert_tensor(t, np.array(torch_int_linspace(start, end, steps), dtype=d.np), d)


@given(n=st.integers(0, 7), m=st.one_of(st.none(), st.integers(0, 7)), d=dtypes_st)
def test_eye(n, m, d):
    t = jt.eye(n, m, dtype=d) if m is not None else jt.eye(n, dtype=d)
    assert_tensor(t, np.eye(n, m, dtype=d.np), d)


def test_eye_parallel_branch():
    n = math.isqrt(P) + 3
    assert_tensor(jt.eye(n, n + 1, dtype=jt.int16), np.eye(n, n + 1, dtype=np.int16), jt.int16)


# -- random ---------------------------------------------------------------------------------------
@given(shape=shapes(), d=st.sampled_from([jt.float32, jt.float64]), seed=st.integers(0, 2 ** 63))
def test_rand_randn(shape, d, seed):
    jt.manual_seed(seed)
    r = jt.rand(*shape, dtype=d) if shape else jt.rand((), dtype=d)
    assert r.shape == shape and r.dtype is d and r.numpy().dtype == d.np
    assert r.numel() == 0 or (r.numpy().min() >= 0 and r.numpy().max() < 1)
    n = jt.randn(shape, dtype=d)
    assert n.shape == shape and n.dtype is d and np.isfinite(n.numpy()).all()
    jt.manual_seed(seed)
    np.testing.assert_array_equal(jt.rand(shape, dtype=d).numpy(), r.numpy())
    np.testing.assert_array_equal(jt.randn(shape, dtype=d).numpy(), n.numpy())


@given(shape=shapes(), d=st.sampled_from(NON_BOOL), data=st.data(), seed=st.integers(0, 2 ** 63))
def test_randint(shape, d, data, seed):
    if d.is_floating_point:
        lo_min, hi_max = -1000, 1000
    else:
        info = np.iinfo(d.np)
        lo_min, hi_max = max(int(info.min), -(1 << 40)), min(int(info.max), 1 << 40)
    low = data.draw(st.integers(lo_min, hi_max - 1))
    high = data.draw(st.integers(low + 1, hi_max))
    jt.manual_seed(seed)
    t = jt.randint(low, high, shape, dtype=d)
    assert t.shape == shape and t.dtype is d
    v = t.numpy()
    assert v.size == 0 or (v.min() >= low and v.max() < high)
    jt.manual_seed(seed)
    np.testing.assert_array_equal(jt.randint(low, high, shape, dtype=d).numpy(), v)


@pytest.mark.parametrize("draw", [
    lambda n: jt.rand(n), lambda n: jt.rand(n, dtype=jt.float64),
    lambda n: jt.randn(n),
    lambda n: jt.randint(-5, 1000, (n,)),
], ids=["rand", "rand64", "randn", "randint"])
def test_serial_and_parallel_kernels_draw_the_same_stream(draw):
    """Element i of a draw depends only on (seed, offset + i): a draw above PARALLEL_MIN starts
    with the same numbers as a small serial one, and consecutive draws continue the stream."""
    jt.manual_seed(2024)
    big = draw(P + 17).numpy()
    jt.manual_seed(2024)
    small = draw(40).numpy()
    rest = draw(P + 17 - 40).numpy()
    np.testing.assert_array_equal(big[:40], small)
    np.testing.assert_array_equal(big[40:], rest)


# -- fill_ / copy_ / clone on strided views -------------------------------------------------------
@st.composite
def views(draw, max_ndim=5):
    """(base shape, slices, permutation): a positive-stride view of a C-contiguous base."""
    if draw(st.integers(0, 14)) == 0:  # big enough for the parallel 4-D branch
        shape = [4, P // 2 + 2]
        return shape, (slice(None), slice(0, None, 2)), draw(st.sampled_from([(0, 1), (1, 0)]))
    ndim = draw(st.integers(1, max_ndim))
    shape = draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim))
    slices = tuple(slice(draw(st.integers(0, 1)), None, draw(st.integers(1, 3))) for _ in shape)
    perm = tuple(draw(st.permutations(range(ndim))))
    return shape, slices, perm


def apply_view(a, slices, perm):
    return a[slices].transpose(perm)


@given(view=views(), d=dtypes_st, data=st.data())
def test_fill_on_strided_views(view, d, data):
    shape, slices, perm = view
    base = arrays(d, tuple(shape), seed=1)
    expected = base.copy()
    value = data.draw(values_for(d))
    t = jt.from_numpy(apply_view(base, slices, perm))
    assert t.fill_(value) is t
    apply_view(expected, slices, perm)[...] = expected_fill(value, d)
    np.testing.assert_array_equal(base, expected)  # the view filled, nothing else touched


def broadcast_source_shape(draw, shape):
    """A shape that broadcasts to `shape`: some dims set to 1, some leading dims dropped."""
    src = [1 if draw(st.integers(0, 3)) == 0 else n for n in shape]
    drop = draw(st.integers(0, len(src)))
    return tuple(src[drop:])


@given(view=views(), pair=st.sampled_from(COPY_PAIRS), data=st.data())
def test_copy_into_strided_views(view, pair, data):
    dst_d, src_d = pair
    shape, slices, perm = view
    base = arrays(dst_d, tuple(shape), seed=2)
    expected = base.copy()
    dst_view = apply_view(base, slices, perm)
    src_shape = broadcast_source_shape(data.draw, dst_view.shape)
    src = (np.abs(arrays(src_d, src_shape, seed=3)) if src_d is not jt.bool
           else arrays(src_d, src_shape, 3))
    if src_d.is_floating_point:
        src = np.clip(src, -100, 100)
    strided_src = data.draw(st.booleans()) and src.ndim >= 2
    src_arg = jt.from_numpy(np.ascontiguousarray(src.T).T) if strided_src else jt.tensor(src)
    t = jt.from_numpy(dst_view)
    assert t.copy_(src_arg) is t
    apply_view(expected, slices, perm)[...] = np.broadcast_to(src.astype(dst_d.np), dst_view.shape)
    np.testing.assert_array_equal(base, expected)


@given(view=views(), d=dtypes_st)
def test_clone_and_contiguous_of_strided_views(view, d):
    shape, slices, perm = view
    base = arrays(d, tuple(shape), seed=4)
    v = apply_view(base, slices, perm)
    t = jt.from_numpy(v)
    c = t.clone()
    assert_tensor(c, v, d)
    assert v.size == 0 or not np.shares_memory(c.numpy(), base)
    k = t.contiguous()
    assert_tensor(k, v, d)
    assert k.is_contiguous()
    assert (k is t) == v.flags.c_contiguous


@given(shape=small_shapes, d=st.sampled_from(INT_DTYPES))
def test_fill_out_of_range_never_writes(shape, d):
    t = jt.full(shape, 3, dtype=d)
    with pytest.raises(RuntimeError):
        t.fill_(int(np.iinfo(d.np).max) + 1)
    assert_tensor(t, np.full(shape, 3, d.np), d)
