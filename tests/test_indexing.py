"""Indexing: NumPy indexing on host copies is the value oracle over every CPU dtype, torch the
oracle for index placement, shapes and errors; hypothesis draws keys, layouts and values."""
import contextlib
import re
import warnings

import numpy as np
import pytest
from conftest import CPU_DTYPES, assert_tensor, dtype_id, run_python
from hypothesis import given, settings
from hypothesis import strategies as st
from test_shape import assert_same_error, same_layout, sample, shares

import jitensor as jt
from jitensor.kernels.cpu.kernels import PARALLEL_MIN


def host_key(key):
    """The key with jitensor tensors replaced by NumPy arrays (for NumPy and torch)."""
    if isinstance(key, tuple):
        return tuple(host_key(k) for k in key)
    return key.numpy() if isinstance(key, jt.Tensor) else key


def torch_key(torch, key):
    if isinstance(key, tuple):
        return tuple(torch_key(torch, k) for k in key)
    if isinstance(key, jt.Tensor):
        return torch.from_numpy(key.numpy().copy())
    return key


# -- getitem over every dtype ------------------------------------------------------------------
KEYS = [  # keys on which NumPy and torch agree
    1, -1, (1, 2), (slice(None), 2), (slice(1, None, 2), slice(None, None, 3)), (Ellipsis, 0),
    (None, 0, None), (slice(None), None, 1), Ellipsis, (0, 1, 1),
    jt.tensor([2, 0, 2]), (slice(None), jt.tensor([[1, 0], [3, 3]])),
    (jt.tensor([0, 2]), slice(None), jt.tensor([1, 3])),
    (jt.tensor([[0], [2]]), jt.tensor([1, 3, 0]), slice(1, 3)),
    (Ellipsis, jt.tensor([-1, 0], dtype=jt.int32)),
    jt.tensor([True, False, True]), (slice(None), jt.tensor([True, False, False, True, True])),
    (jt.tensor([[True, False, True, True, False]] * 3), slice(None)),
    jt.tensor([[[True, False, True, False]] * 5] * 3),
    (jt.tensor([0, 1]), jt.tensor([True, False, False, True, False])),
]


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_getitem_matches_numpy(d):
    a = sample((3, 5, 4), d)
    x = jt.from_numpy(a)
    for key in KEYS:
        got = x[key]
        assert_tensor(got, a[host_key(key)], d)
        basic = not any(isinstance(k, jt.Tensor) for k in (key if isinstance(key, tuple) else
                                                           (key,)))
        assert shares(got, x) == (basic and got.numel() > 0)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_getitem_on_non_contiguous_views(d):
    a = sample((4, 6, 3), d)
    x = jt.from_numpy(a)
    view, ref = x.permute(2, 0, 1)[:, ::2], a.transpose(2, 0, 1)[:, ::2]
    assert not view.is_contiguous()
    mask = np.ascontiguousarray(ref if d is jt.bool else ref > ref.flat[0])
    for key in (jt.tensor([1, 0, 1]), (slice(None), jt.tensor([1, 0])),
                (jt.tensor([0, 2]), slice(None), jt.tensor([5, 1])), jt.from_numpy(mask)):
        assert_tensor(view[key], ref[host_key(key)], d)


def test_integer_index_to_0d_is_a_view():
    t = jt.zeros(3)
    x = t[1]
    assert isinstance(x.numpy(), np.ndarray) and x.shape == ()
    x.fill_(5.0)
    assert t.tolist() == [0.0, 5.0, 0.0]
    assert next(iter(jt.tensor([1, 2]))).item() == 1


def test_list_and_numpy_keys():
    a = sample((4, 3), jt.int32)
    x = jt.from_numpy(a)
    assert_tensor(x[[3, 0]], a[[3, 0]])
    assert_tensor(x[[True, False, True, False]], a[[True, False, True, False]])
    assert_tensor(x[np.array([1, 1])], a[[1, 1]])
    assert_tensor(x[[]], a[np.array([], np.int64)])
    assert_tensor(x[[[0, 1], [2, 3]]], a[np.array([[0, 1], [2, 3]])])


# -- torch placement rules ---------------------------------------------------------------------
def keys(ndim):
    """Keys mixing every kind of index item for a tensor with `ndim` dims (sizes 0..4)."""
    item = st.one_of(
        st.integers(-4, 4), st.just(None), st.booleans(),
        st.builds(slice, st.one_of(st.none(), st.integers(-5, 5)),
                  st.one_of(st.none(), st.integers(-5, 5)),
                  st.one_of(st.none(), st.integers(1, 3))),
        st.lists(st.integers(-4, 3), min_size=0, max_size=3).map(
            lambda v: jt.tensor(v, dtype=jt.int64)),
        st.lists(st.lists(st.integers(0, 3), min_size=2, max_size=2), min_size=1,
                 max_size=2).map(lambda v: jt.tensor(v, dtype=jt.int32)),
        st.lists(st.booleans(), min_size=0, max_size=4).map(lambda v: jt.tensor(v, dtype=jt.bool)),
        st.integers(0, 3).map(lambda v: jt.tensor(v)),
    )
    ellipsis = st.integers(0, ndim + 2)  # where to put one `...` (past the end: none)
    return st.tuples(st.lists(item, max_size=ndim + 2), ellipsis).map(
        lambda p: tuple(p[0][:p[1]]) + (Ellipsis,) + tuple(p[0][p[1]:]) if p[1] <= len(p[0])
        else tuple(p[0]))


def same_outcome(call_jt, call_torch):
    """Both raise the same exception type, or both give equal values, shapes and dtypes;
    returns the pair of results (or None)."""
    try:
        expected = call_torch()
    except (IndexError, RuntimeError, ValueError) as e:
        with pytest.raises(type(e)):
            call_jt()
        return None
    got = call_jt()
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    return got, expected


@settings(max_examples=150)
@given(shape=st.lists(st.integers(0, 4), max_size=4), data=st.data())
def test_getitem_matches_torch(shape, data):
    torch = pytest.importorskip("torch")
    key = data.draw(keys(len(shape)))
    a = sample(shape, jt.float64)
    x, tx = jt.from_numpy(a), torch.from_numpy(a)
    with_tensors = any(isinstance(k, jt.Tensor) and k.ndim for k in key)
    with _quiet():
        result = same_outcome(lambda: x[key], lambda: tx[torch_key(torch, key)])
    if result and not with_tensors and not any(isinstance(k, bool) for k in key):
        assert same_layout(*result)


@settings(max_examples=100)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), data=st.data(),
       scalar=st.booleans())
def test_setitem_matches_torch(shape, data, scalar):
    torch = pytest.importorskip("torch")
    key = data.draw(keys(len(shape)))
    a = sample(shape, jt.float64)
    x, tx = jt.from_numpy(a.copy()), torch.from_numpy(a.copy())
    tkey = torch_key(torch, key)
    try:
        target = tx[tkey]
    except (IndexError, RuntimeError, ValueError) as e:
        with pytest.raises(type(e)):
            x[key] = 1.0
        np.testing.assert_array_equal(x.numpy(), a)  # nothing written on error
        return
    if _has_duplicates(tx, tkey):
        return  # which write wins is unspecified, as in torch
    value = 7.5 if scalar else sample(target.shape[data.draw(st.integers(0, target.ndim)):],
                                      jt.float64, 5)
    x[key] = value if scalar else jt.from_numpy(value)
    with _quiet():
        tx[tkey] = value if scalar else torch.from_numpy(value)
    np.testing.assert_array_equal(x.numpy(), tx.numpy())


def _has_duplicates(tx, tkey):
    """Whether the key reaches some element twice (positions of a position tensor)."""
    import torch
    positions = torch.arange(tx.numel()).reshape(tx.shape)
    with _quiet():
        hit = positions[tkey].reshape(-1)
    return hit.numel() != hit.unique().numel()


@contextlib.contextmanager
def _quiet():
    """Silence torch's deprecation warnings (uint8 masks, non-tuple sequences)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


PLACEMENT = [  # torch and NumPy differ on some of these: torch's rules are followed
    (0, slice(None), [0, 1]), ([0, 1], slice(None), [0, 1]), (slice(None), [0, 1], 1),
    (slice(None), [0, 1], slice(None), 1), (None, [0, 1], None), ([0, 1], None, [0, 1]),
    (True, [0, 1]), ([0, 1], True), (slice(None), [[0], [1]], [0, 2, 1]), (False,),
]


@pytest.mark.parametrize("key", PLACEMENT, ids=range(len(PLACEMENT)))
def test_advanced_placement_like_torch(key):
    torch = pytest.importorskip("torch")
    a = sample((2, 3, 4, 5), jt.int16)
    jkey = tuple(jt.tensor(k) if isinstance(k, list) else k for k in key)
    got, expected = jt.from_numpy(a)[jkey], torch.from_numpy(a)[torch_key(torch, jkey)]
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


# -- setitem -----------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_setitem_matches_numpy(d):
    a = sample((4, 5), d)
    cases = [
        (1, 3), ((slice(None), 2), 1), ((slice(1, 3), slice(None, None, 2)), sample((2, 3), d, 1)),
        (jt.tensor([3, 0]), sample((5,), d, 2)), ((slice(None), jt.tensor([4, 1])), 0),
        ((jt.tensor([0, 3]), jt.tensor([1, 2])), sample((2,), d, 3)),
        (jt.from_numpy(a > a.flat[3]), 1), ((Ellipsis, jt.tensor([True, False] * 2 + [True])),
                                            sample((4, 1), d, 4)),
    ]
    for key, value in cases:
        x, ref = jt.from_numpy(a.copy()), a.copy()
        x[key] = jt.from_numpy(value) if isinstance(value, np.ndarray) else value
        ref[host_key(key)] = value
        assert_tensor(x, ref, d)
    for key, value in cases[1:6]:  # into a transposed view: writes reach the base
        base, ref = jt.from_numpy(a.T.copy()), a.T.copy()
        x = base.t()
        x[key] = jt.from_numpy(value) if isinstance(value, np.ndarray) else value
        ref.T[host_key(key)] = value
        assert_tensor(base, ref, d)


@pytest.mark.parametrize("src", [jt.float64, jt.int64, jt.bool], ids=dtype_id)
@pytest.mark.parametrize("dst", [jt.uint8, jt.int32, jt.float32], ids=dtype_id)
def test_setitem_converts_to_self_dtype(src, dst):
    value = sample((3,), src, 6)
    for key in (slice(None, 3), jt.tensor([0, 2, 4])):
        x = jt.zeros(5, dtype=dst)
        x[key] = jt.from_numpy(value)
        ref = np.zeros(5, dst.np)
        ref[host_key(key)] = value.astype(dst.np)
        assert_tensor(x, ref, dst)


def test_setitem_broadcasts_and_strips_leading_ones():
    x = jt.zeros(2, 5)
    x[[0]] = jt.ones(1, 1, 5)
    x[1] = jt.full((1, 5), 2.0)
    assert x.tolist() == [[1.0] * 5, [2.0] * 5]
    with pytest.raises(RuntimeError, match=re.escape("shape mismatch: value tensor of shape [3] "
                                                     "cannot be broadcast to indexing result of "
                                                     "shape [2, 5]")):
        x[[0, 1]] = jt.ones(3)
    with pytest.raises(RuntimeError, match="expanded size"):
        x[0] = jt.ones(3)


def test_setitem_with_overlapping_value():
    x = jt.arange(6)
    x[[0, 1, 2]] = x[3:]
    assert x.tolist() == [3, 4, 5, 3, 4, 5]
    y = jt.arange(6)
    y[1:] = y[:5]
    assert y.tolist() == [0, 0, 1, 2, 3, 4]


def test_setitem_out_of_range_writes_nothing():
    x = jt.zeros(4)
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 4"):
        x[jt.tensor([0, 1, 9])] = 1.0
    with pytest.raises(IndexError, match="index -5 is out of bounds"):
        x[[0, -5]] = jt.ones(2)
    assert x.tolist() == [0.0] * 4


def test_setitem_rejects_values_torch_rejects():
    x = jt.zeros(3, dtype=jt.uint8)
    with pytest.raises(RuntimeError, match="cannot be converted to type uint8"):
        x[0] = 300
    with pytest.raises(TypeError, match="can't assign a list"):
        x[0] = [1]
    assert x.tolist() == [0, 0, 0]


# -- index ops ---------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_index_ops_match_numpy(d):
    a = sample((4, 6), d)
    x = jt.from_numpy(a)
    idx = np.array([5, 0, 3, 3])
    assert_tensor(x.index_select(1, jt.from_numpy(idx)), a[:, idx], d)
    assert_tensor(jt.index_select(x.t(), 0, jt.from_numpy(idx.astype(np.int32))), a.T[idx], d)
    g = np.array([[1, 0], [3, 3], [0, 2]])
    assert_tensor(jt.gather(x, 0, jt.from_numpy(g)), np.take_along_axis(a[:, :2], g, 0), d)
    assert_tensor(x.t().gather(1, jt.from_numpy(g[:2])),
                  np.take_along_axis(a.T[:2, :], g[:2], 1), d)
    t = np.array([[23, -1], [0, 7]])
    assert_tensor(x.take(jt.from_numpy(t)), a.reshape(-1)[t], d)
    assert_tensor(x.t().take(jt.from_numpy(t)), a.T.reshape(-1)[t], d)
    mask = sample((4, 6), jt.bool, 9)
    assert_tensor(x.masked_select(jt.from_numpy(mask)), a[mask], d)
    row = mask[1:2, ::-1][:, :4].copy()  # (1, 4), broadcast over x.t()'s rows
    assert_tensor(x.t().masked_select(jt.from_numpy(row)), a.T[np.broadcast_to(row, (6, 4))], d)
    assert_tensor(jt.nonzero(x), np.argwhere(a), jt.int64)
    for got, want in zip(x.t().nonzero(as_tuple=True), np.nonzero(a.T), strict=False):
        assert_tensor(got, want, jt.int64)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_masked_fill_matches_numpy(d):
    a = sample((3, 4), d)
    mask = sample((4,), jt.bool, 2)
    value = {0: True, 1: 7, 2: -2.5}[d.category]
    ref = a.copy()
    ref[:, mask] = value
    assert_tensor(jt.from_numpy(a).masked_fill(jt.from_numpy(mask), value), ref, d)
    x = jt.from_numpy(a.copy())
    view = x.t()
    assert view.masked_fill_(jt.from_numpy(mask[:, None]), jt.tensor(value)) is view
    assert_tensor(x, ref, d)
    wide = jt.from_numpy(a[0]).masked_fill(jt.from_numpy(np.tile(mask, (2, 1))), value)
    expected = np.tile(a[0], (2, 1))
    expected[np.tile(mask, (2, 1))] = value
    assert_tensor(wide, expected, d)


def test_zero_dim_inputs_like_torch():
    torch = pytest.importorskip("torch")
    for call in (lambda m, x: x.nonzero(), lambda m, x: x.nonzero(as_tuple=True)[0],
                 lambda m, x: m.gather(x, 0, m.tensor(0)), lambda m, x: x.take(m.tensor([0, 0])),
                 lambda m, x: x.index_select(0, m.tensor([0])), lambda m, x: x[None],
                 lambda m, x: x[...], lambda m, x: x[True], lambda m, x: x[m.tensor(False)],
                 lambda m, x: x.masked_select(m.tensor([True, False]))):
        got, expected = call(jt, jt.tensor(5.0)), call(torch, torch.tensor(5.0))
        assert tuple(got.shape) == tuple(expected.shape) and got.dtype.name == \
            str(expected.dtype)[6:]
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_nonzero_layout_like_torch():
    torch = pytest.importorskip("torch")
    a = sample((3, 4), jt.int8)
    got, expected = jt.from_numpy(a).nonzero(), torch.from_numpy(a).nonzero()
    assert got.stride() == expected.stride() and tuple(got.shape) == tuple(expected.shape)
    nan = jt.tensor([float("nan"), 0.0, -0.0, 1e-30])
    assert nan.nonzero().tolist() == [[0], [3]]


# -- big inputs: the parallel kernels ----------------------------------------------------------
def test_parallel_paths_match_numpy():
    n = 4 * PARALLEL_MIN
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    x = jt.from_numpy(a)
    idx = rng.integers(-n, n, n // 2)
    assert_tensor(x[jt.from_numpy(idx)], a[idx])
    mask = a > 0.3
    assert_tensor(x[jt.from_numpy(mask)], a[mask])
    assert_tensor(jt.from_numpy(mask).nonzero()[:, 0], np.flatnonzero(mask))
    two = jt.from_numpy(a.reshape(256, -1)).t()
    assert_tensor(two[:, jt.tensor([3, 1])], a.reshape(256, -1).T[:, [3, 1]])
    perm = rng.permutation(n)
    y = jt.zeros(n)
    y[jt.from_numpy(perm)] = x
    expected = np.zeros(n, np.float32)
    expected[perm] = a
    assert_tensor(y, expected)
    g = rng.integers(0, 256, (256, n // 256))
    assert_tensor(jt.from_numpy(a.reshape(256, -1)).gather(0, jt.from_numpy(g)),
                  np.take_along_axis(a.reshape(256, -1), g, 0))
    y.masked_fill_(jt.from_numpy(mask), 0.0)
    expected[mask] = 0
    assert_tensor(y, expected)
    bad = jt.from_numpy(np.r_[idx, n])
    with pytest.raises(IndexError, match=f"index {n} is out of bounds"):
        y[bad] = 1.0
    assert_tensor(y, expected)


# -- errors like torch -------------------------------------------------------------------------
ERRORS = [
    ("int out of range", lambda m, x: x[0, 5], True),
    ("int out of range after None", lambda m, x: x[None, 5], True),
    ("negative int", lambda m, x: x[..., -5], True),
    ("too many", lambda m, x: x[0, 0, 0, 0], True),
    ("0-dim", lambda m, x: x[0, 0, 0][0], False),
    ("negative step", lambda m, x: x[::-1], True),
    ("float index", lambda m, x: x[1.5], False),
    ("float tensor", lambda m, x: x[m.tensor([1.0])], True),
    ("int16 tensor", lambda m, x: x[m.tensor([1], dtype=m.int16)], True),
    ("tensor out of range", lambda m, x: x[0, m.tensor([5])], True),
    ("tensor out of range 2", lambda m, x: x[:, m.tensor([1]), m.tensor([9])], True),
    ("mask shape", lambda m, x: x[:, m.zeros(3, 5, dtype=m.bool)], True),
    ("mask shape after select", lambda m, x: x[0, m.zeros(3, 5, dtype=m.bool)], True),
    ("broadcast", lambda m, x: x[m.tensor([0, 1]), m.tensor([0, 1, 2])], True),
    ("index_select vector", lambda m, x: x.index_select(1, m.tensor([[2, 0]])), True),
    ("index_select dtype", lambda m, x: x.index_select(1, m.tensor([1.0])), True),
    ("index_select range", lambda m, x: x.index_select(1, m.tensor([3])), False),
    ("index_select negative", lambda m, x: x.index_select(1, m.tensor([-1])), False),
    ("index_select dim", lambda m, x: x.index_select(3, m.tensor([0])), True),
    ("gather ndim", lambda m, x: x.gather(1, m.tensor([2, 0])), True),
    ("gather size", lambda m, x: x.gather(2, m.zeros(3, 1, 1, dtype=m.long)), True),
    ("gather range", lambda m, x: x.gather(1, m.tensor([[[3]]])), True),
    ("gather negative", lambda m, x: x.gather(1, m.tensor([[[-1]]])), True),
    ("gather dtype", lambda m, x: x.gather(1, m.tensor([[[0.0]]])), True),
    ("take range", lambda m, x: x.take(m.tensor([24])), True),
    ("take negative", lambda m, x: x.take(m.tensor([-25])), True),
    ("take dtype", lambda m, x: x.take(m.tensor([1], dtype=m.int32)), False),
    ("masked_fill mask", lambda m, x: x.masked_fill(m.tensor([1, 0, 1, 1]), 1), False),
    ("masked_fill value", lambda m, x: x.masked_fill(m.tensor([True]), m.tensor([1.0])), True),
    ("masked_fill shape", lambda m, x: x.masked_fill(m.tensor([True, False]), 1), True),
    ("masked_fill_ broadcast", lambda m, x: x[0, 0].masked_fill_(m.ones(2, 4, dtype=m.bool), 1),
     True),
    ("masked_select mask", lambda m, x: x.masked_select(m.tensor([1, 0, 1, 1])), True),
    ("masked_select shape", lambda m, x: x.masked_select(m.tensor([True, False])), True),
]


@pytest.mark.parametrize("name, call, exact", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_like_torch(name, call, exact):
    torch = pytest.importorskip("torch")
    a = sample((2, 3, 4), jt.float32)
    x = jt.from_numpy(a.copy())
    with _quiet():
        assert_same_error(lambda: call(jt, x), lambda: call(torch, torch.from_numpy(a.copy())),
                          exact)
    np.testing.assert_array_equal(x.numpy(), a)


def test_one_ellipsis_only():
    with pytest.raises(IndexError, match="single ellipsis"):  # NumPy's rule; torch is lax
        jt.zeros(2, 3)[..., 0, ...]


def test_uint8_masks_index_with_a_warning():
    x = jt.arange(4)
    with pytest.warns(UserWarning, match="uint8"):
        got = x[jt.tensor([1, 0, 0, 1], dtype=jt.uint8)]
    assert got.tolist() == [0, 3]


def test_gather_out_untouched_on_error():
    out = jt.full((1, 2), 3.0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        jt.gather(jt.zeros(2, 2), 0, jt.tensor([[0, 5]]), out=out)
    assert out.tolist() == [[3.0, 3.0]]
    assert jt.gather(jt.ones(2, 2), 0, jt.tensor([[0, 1]]), out=out) is out
    assert out.tolist() == [[1.0, 1.0]]


def test_kernels_load_from_the_disk_cache():
    """A second process runs the indexing kernels without compiling them again."""
    code = ("import jitensor as jt\n"
            "from jitensor.kernels.cpu import indexing as k\n"
            "x = jt.arange(12.0).reshape(3, 4)\n"
            "x[x > 5]; x[[0, 2], 1:]; x[[1]] = 0.0; x.nonzero(); x.gather(1, jt.tensor([[0]]))\n"
            "w = jt.ones(3, 2, requires_grad=True); w[jt.tensor([2, 0])].sum().backward()\n"
            "kernels = [k.index_copy_kernel, k.add_offsets_kernel, k.count_true_kernel,\n"
            "           k.write_true_kernel, k.unravel_kernel, k.gather_kernel, k.take_kernel,\n"
            "           k.take_add_kernel]\n"
            "builds = [b for f in kernels for b in getattr(f, 'builds', (f,))]\n"
            "print(sum(sum(f.stats.cache_misses.values()) for f in builds),\n"
            "      sum(sum(f.stats.cache_hits.values()) for f in builds))")
    run_python(code)
    misses, hits = map(int, run_python(code).split())
    assert misses == 0 and hits >= 8


# -- one index vector: x[index] and index_select take whole slices in one pass ---------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("index_dtype", [jt.int32, jt.int64], ids=str)
def test_vector_index_takes_rows_like_numpy(d, index_dtype):
    a = sample((5, 3, 2), d)
    x = jt.from_numpy(a)
    for idx in ([4, 0, 0, -1, -5, 2], [], [3]):
        i = jt.tensor(idx, dtype=index_dtype)
        assert_tensor(x[i], a[np.array(idx, np.int64)])
        assert_tensor(x[:, ::2][i], a[:, ::2][np.array(idx, np.int64)])  # (strided)
        for dim in range(3):
            kept = [v % a.shape[dim] for v in idx]
            assert_tensor(jt.index_select(x, dim, jt.tensor(kept, dtype=index_dtype)),
                          np.take(a, np.array(kept, np.int64), dim))
    assert_tensor(jt.from_numpy(a[:0])[jt.tensor([], dtype=index_dtype)], a[:0])


def test_vector_index_out_of_range_raises_and_writes_nothing():
    x = jt.arange(6.0).reshape(3, 2)
    for bad, value in (([0, 3], 3), ([-4, 1], -4)):
        with pytest.raises(IndexError, match=f"index {value} is out of bounds for dimension 0 "
                                             f"with size 3"):
            x[jt.tensor(bad)]
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1"):
        jt.index_select(x, 1, jt.tensor([0, -1]))
    with pytest.raises(IndexError, match="index is out of bounds for dimension with size 0"):
        jt.zeros(0, 2)[jt.tensor([0])]
    out = jt.full((2, 2), 7.0)
    with pytest.raises(RuntimeError):
        jt.index_select(x, 0, jt.tensor([0, 5]), out=out)
    assert out.tolist() == [[7.0, 7.0], [7.0, 7.0]]


def test_vector_index_parallel_rows_and_gradient():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4096, 40)).astype(np.float32)
    idx = rng.integers(-4096, 4096, 3000)
    x = jt.tensor(a, requires_grad=True)
    y = x[jt.from_numpy(idx)]
    assert_tensor(y.detach(), a[idx])
    g = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(jt.from_numpy(g))
    want = np.zeros_like(a)
    np.add.at(want, idx, g)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select_and_vector_index_gradients_match_numpy(dim):
    rng = np.random.default_rng(dim + 5)
    a = rng.standard_normal((4, 5, 3))
    n = a.shape[dim]
    idx = np.array([n - 1, 0, 0, 1, n - 1], np.int32)
    x = jt.tensor(a, requires_grad=True)
    y = jt.index_select(x, dim, jt.from_numpy(idx))
    g = rng.standard_normal(y.shape)
    y.backward(jt.from_numpy(g))
    want = np.zeros_like(a)
    np.add.at(np.moveaxis(want, dim, 0), idx, np.moveaxis(g, dim, 0))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)
    x.grad = None
    key = jt.tensor([-1, 2, -1, 0])
    (x[key] * jt.from_numpy(a[[-1, 2, -1, 0]])).sum().backward()
    want = np.zeros_like(a)
    np.add.at(want, [-1, 2, -1, 0], a[[-1, 2, -1, 0]])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_vector_index_second_derivatives_match_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((5, 3))
    x, tx = jt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    idx = [4, -1, 0, 0]
    for select in (lambda t, i: t[i], lambda t, i: t.index_select(1, i.remainder(3))):
        (g,) = jt.autograd.grad((select(x, jt.tensor(idx)) ** 3).sum(), x, create_graph=True)
        (tg,) = torch.autograd.grad((select(tx, torch.tensor(idx)) ** 3).sum(), tx,
                                    create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
        (gg,) = jt.autograd.grad(g.sum(), x)
        (tgg,) = torch.autograd.grad(tg.sum(), tx)
        np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-12)


def test_a_python_range_indexes_as_a_list_as_in_torch():
    torch = pytest.importorskip("torch")
    x = np.arange(12.0).reshape(3, 4)
    got, want = jt.tensor(x), torch.tensor(x)
    got[range(3), jt.tensor([0, 2, 1])] = -1.0
    want[range(3), torch.tensor([0, 2, 1])] = -1.0
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(jt.tensor(x)[range(1, 3)].numpy(), x[1:3])
    assert jt.tensor(x)[range(0)].shape == (0, 4)
