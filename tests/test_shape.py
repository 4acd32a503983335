"""Views and shape ops: NumPy as the value oracle over every CPU dtype, torch for strides,
contiguity and errors, hypothesis for random chains of views and writes through them."""
import re

import numpy as np
import pytest
from conftest import CPU_DTYPES, assert_tensor, at_thread_counts, dtype_id, to_torch_dtype
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
from jitensor.ops.shape import VIEW_INCOMPATIBLE


def sample(shape, dtype, seed=0):
    """Distinct-ish values of `dtype` (a NumPy array) for shape."""
    rng = np.random.default_rng(seed)
    if dtype is jt.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.is_floating_point:
        return np.asarray(rng.standard_normal(shape), dtype.np)
    return np.asarray(rng.integers(0, 100, shape), dtype.np)


def shares(a, b):
    return np.shares_memory(a.numpy(), b.numpy())


def torch_error(call):
    try:
        call()
    except Exception as e:  # the oracle's exception, compared below
        return e
    raise AssertionError("torch did not raise")


def same_layout(got, expected):
    """Equal shapes, and equal strides where there are elements: jitensor reports contiguous
    strides for every empty tensor (Tensor.stride), torch keeps a view's own."""
    return tuple(got.shape) == tuple(expected.shape) and (
        not expected.numel() or got.stride() == expected.stride())


def assert_same_error(jt_call, torch_call, exact=True):
    """jitensor raises what torch raises; with `exact`, torch's message (its first line, without
    "torch." prefixes) is part of ours."""
    expected = torch_error(torch_call)
    with pytest.raises(type(expected)) as info:
        jt_call()
    if exact:
        message = str(expected).split("\n")[0].replace("torch.", "")
        assert message in str(info.value), (message, str(info.value))


# -- values over every dtype -------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_views_match_numpy_and_share_memory(d):
    a = sample((2, 3, 4), d)
    x = jt.from_numpy(a.copy())
    cases = [
        (x.view(6, 4), a.reshape(6, 4)), (x.view(-1), a.reshape(-1)),
        (x.transpose(0, 2), a.swapaxes(0, 2)), (x.permute(1, 2, 0), a.transpose(1, 2, 0)),
        (x.T, a.T), (x.mT, a.swapaxes(-1, -2)), (x.unsqueeze(1), a[:, None]),
        (x[:, :1].squeeze(1), a[:, 0]), (x[:1].expand(5, 3, 4), np.broadcast_to(a[:1], (5, 3, 4))),
        (x.narrow(2, 1, 2), a[:, :, 1:3]), (x.flatten(1), a.reshape(2, 12)),
        (x.unflatten(2, (2, 2)), a.reshape(2, 3, 2, 2)), (x.movedim(0, -1), np.moveaxis(a, 0, -1)),
        (x[1].t(), a[1].T), (x.swapaxes(0, 1), a.swapaxes(0, 1)),
    ]
    for v, expected in cases:
        assert_tensor(v, expected, d)
        assert shares(v, x)


def test_transposes_of_0d_and_1d_tensors_are_views_of_themselves():
    """torch: t(), transpose(0, -1), T and permute(()) of a 0-d tensor return it; t() of a 1-D
    one too. Their gradients pass straight through."""
    x = jt.tensor(3.0, requires_grad=True)
    for v in (x.t(), x.transpose(0, -1), x.T, x.permute(())):
        assert v.shape == () and v.item() == 3.0 and shares(v.detach(), x.detach())
    (x.t() * 2).backward()
    assert x.grad.item() == 2.0
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose(0, 1)
    y = jt.arange(3.0)
    assert y.t().tolist() == [0.0, 1.0, 2.0] and shares(y.t(), y)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_reshape_copies_only_when_it_must(d):
    a = sample((3, 4), d)
    x = jt.from_numpy(a.copy())
    viewed = x.reshape(2, 6)
    assert shares(viewed, x)
    copied = x.t().reshape(12)
    assert not shares(copied, x)
    assert_tensor(copied, a.T.reshape(12), d)
    assert_tensor(x.t().flatten(), a.T.reshape(-1), d)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_split_chunk_unbind_are_views(d):
    a = sample((7, 3), d)
    x = jt.from_numpy(a.copy())
    for got, want in ((x.split(3), np.split(a, [3, 6])), (x.split([2, 5], 0), np.split(a, [2])),
                      (x.chunk(3), np.split(a, [3, 6])), (x.unbind(1), list(a.T))):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=False):
            assert_tensor(g, w, d)
            assert shares(g, x)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_cat_stack_flip_copy(d):
    a, b = sample((2, 3), d, 1), sample((4, 3), d, 2)
    x, y = jt.from_numpy(a), jt.from_numpy(b)
    assert_tensor(jt.cat([x, y]), np.concatenate([a, b]), d)
    assert_tensor(jt.concatenate((x.t(), y.t()), dim=1), np.concatenate([a.T, b.T], 1), d)
    assert_tensor(jt.stack([x, x.flip(0)], 1), np.stack([a, a[::-1]], 1), d)
    assert_tensor(y.t().flip((0, 1)), b.T[::-1, ::-1], d)
    flipped = x.flip(-1)
    assert not shares(flipped, x)


@pytest.mark.parametrize("rows", [3, 1 << 14], ids=["small", "parallel-size"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_joins_of_many_pieces_at_any_size_and_thread_count(rows, dim):
    """Small joins run as one NumPy call, large ones as a copy per piece (parallel on several
    threads): the same values either way, at 1 and all threads."""
    a = sample((rows, 5, 6), jt.float32, 5)
    pieces = [jt.from_numpy(a)[:, :, i] for i in range(6)]  # strided pieces
    want_stack = np.stack([a[:, :, i] for i in range(6)], dim)
    want_cat = np.concatenate([a[:, :, i] for i in range(6)], min(dim, 1))
    for stacked, joined in at_thread_counts(lambda: (jt.stack(pieces, dim),
                                                     jt.cat(pieces, min(dim, 1)))):
        assert_tensor(stacked, want_stack, jt.float32)
        assert_tensor(joined, want_cat, jt.float32)


@pytest.mark.parametrize("pair", [(jt.uint8, jt.int8), (jt.bool, jt.float32), (jt.int32, jt.int64),
                                  (jt.int16, jt.float64), (jt.bool, jt.uint8)],
                         ids=lambda p: f"{p[0].name}-{p[1].name}")
def test_cat_promotes_like_torch(pair):
    a, b = sample((2, 2), pair[0], 3), sample((1, 2), pair[1], 4)
    got = jt.cat([jt.from_numpy(a), jt.from_numpy(b)])
    expected = jt.promote_types(*pair)
    assert_tensor(got, np.concatenate([a.astype(expected.np), b.astype(expected.np)]), expected)


def test_cat_out_and_legacy_empty():
    x = jt.ones(2, 3, dtype=jt.int32)
    out = jt.zeros(4, 3, dtype=jt.float64)
    assert jt.cat([x, jt.zeros(2, 3, dtype=jt.int32)], out=out) is out
    assert_tensor(out, np.r_[np.ones((2, 3)), np.zeros((2, 3))], jt.float64)
    legacy = jt.zeros(0, dtype=jt.float64)
    got = jt.cat([legacy, x, legacy])  # 1-D empties are skipped but join the promotion
    assert_tensor(got, np.ones((2, 3)), jt.float64)
    assert tuple(jt.cat([legacy, legacy]).shape) == (0,)
    assert tuple(jt.cat([jt.zeros(2, 0), jt.zeros(3, 0)]).shape) == (5, 0)


def test_cat_leaves_out_unchanged_on_error():
    x = jt.ones(2, 3)
    out = jt.full((4, 3), 7.0)
    with pytest.raises(RuntimeError, match="tensor number 1"):
        jt.cat([x, jt.ones(2, 4)], out=out)
    with pytest.raises(RuntimeError, match="single memory location"):
        jt.cat([out[:2], x], out=out)
    with pytest.raises(TypeError, match="can't be cast"):
        jt.cat([x, x], out=jt.zeros(4, 3, dtype=jt.int32))
    assert (out.numpy() == 7).all()


def test_flip_keeps_layout_like_torch():
    torch = pytest.importorskip("torch")
    a = sample((3, 4), jt.float32)
    assert jt.from_numpy(a).t().flip(0).stride() == torch.from_numpy(a).t().flip(0).stride()


# -- torch: strides, contiguity, view compatibility --------------------------------------------
OPS = st.one_of(
    st.tuples(st.just("transpose"), st.integers(0, 7), st.integers(0, 7)),
    st.tuples(st.just("permute"), st.randoms(use_true_random=False)),
    st.tuples(st.just("slice"), st.integers(0, 7), st.integers(-5, 5), st.integers(-5, 5),
              st.integers(1, 3)),
    st.tuples(st.just("select"), st.integers(0, 7), st.integers(-4, 4)),
    st.tuples(st.just("unsqueeze"), st.integers(0, 8)),
    st.tuples(st.just("squeeze"), st.integers(0, 7)),
    st.tuples(st.just("expand"), st.integers(1, 3)),
    st.tuples(st.just("reshape"), st.randoms(use_true_random=False)),
    st.tuples(st.just("T")),
)


def _reshape_target(shape, rnd):
    """A random shape with the same number of elements (its factors reshuffled, 1s added)."""
    factors = []
    for n in shape:
        f, k = n, 2
        while f > 1 and k <= f:
            while f % k == 0:
                factors.append(k)
                f //= k
            k += 1
    if 0 in shape:
        factors = [0] + factors
    rnd.shuffle(factors)
    out, i = [], 0
    while i < len(factors):
        take = rnd.randint(1, 2)
        out.append(int(np.prod(factors[i:i + take])))
        i += take
    out += [1] * rnd.randint(0, 1)
    rnd.shuffle(out)
    if out and 0 not in shape and rnd.random() < 0.3:  # -1 is ambiguous with 0 elements
        out[rnd.randrange(len(out))] = -1
    return out


def concrete(op, shape):
    """The chain step `op` made concrete for a tensor of `shape` (random draws happen here,
    once, so every oracle sees the same step), or None when it does not apply."""
    name, ndim = op[0], len(shape)
    if name in ("transpose", "slice", "select", "squeeze") and not ndim:
        return None
    if name == "transpose":
        return name, op[1] % ndim, op[2] % ndim
    if name == "permute":
        order = list(range(ndim))
        op[1].shuffle(order)
        return name, order
    if name == "slice":
        return name, (slice(None),) * (op[1] % ndim) + (slice(op[2], op[3], op[4]),)
    if name == "select":
        d = op[1] % ndim
        if not -shape[d] <= op[2] < shape[d]:
            return None
        return name, (slice(None),) * d + (op[2],)
    if name == "unsqueeze":
        return None if ndim >= 5 else (name, op[1] % (ndim + 1))
    if name == "squeeze":
        return name, op[1] % ndim
    if name == "expand":
        return name, [op[1] if n == 1 else n for n in shape]
    if name == "reshape":
        return name, _reshape_target(list(shape), op[1])
    return op


def apply(step, x, np_like):
    """Apply a concrete step to a jitensor or torch tensor (`np_like` False) or a NumPy array
    (reshape is left to the callers, whose rules differ)."""
    name, arg = step[0], step[1] if len(step) > 1 else None
    if name == "transpose":
        return np.swapaxes(x, *step[1:]) if np_like else x.transpose(*step[1:])
    if name == "permute":
        return np.transpose(x, arg) if np_like else x.permute(arg)
    if name in ("slice", "select"):
        return x[arg]
    if name == "unsqueeze":
        return np.expand_dims(x, arg) if np_like else x.unsqueeze(arg)
    if name == "squeeze":
        return (np.squeeze(x, arg) if x.shape[arg] == 1 else x) if np_like else x.squeeze(arg)
    if name == "expand":
        return np.broadcast_to(x, arg) if np_like else x.expand(arg)
    if name == "T":
        return x.T if np_like else x.permute(list(range(x.ndim - 1, -1, -1)))
    raise AssertionError(name)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4)


@given(shape=shapes, ops=st.lists(OPS, max_size=6), d=st.sampled_from(CPU_DTYPES))
def test_view_chains_match_numpy_values(shape, ops, d):
    a = sample(shape, d)
    x, ref = jt.from_numpy(a.copy()), a
    for op in ops:
        step = concrete(op, ref.shape)
        if step is None:
            continue
        if step[0] == "reshape":
            x, ref = x.reshape(step[1]), ref.reshape(step[1])
        else:
            x, ref = apply(step, x, False), apply(step, ref, True)
    assert_tensor(x, ref, d)


@given(shape=shapes, ops=st.lists(OPS, max_size=6), value=st.integers(-50, -1))
def test_writes_through_views_show_in_the_base(shape, ops, value):
    """Base elements hold their own positions; after writing through the view, exactly the
    positions the view sees (per NumPy on the position array) hold the new value."""
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    base = jt.from_numpy(positions.copy())
    x, ref, aliased = base, positions, True
    for op in ops:
        step = concrete(op, ref.shape)
        if step is None:
            continue
        if step[0] == "reshape":
            y = x.reshape(step[1])
            aliased = aliased and (not y.numel() or shares(y, base))
            x, ref = y, ref.reshape(step[1])
        else:
            x, ref = apply(step, x, False), apply(step, ref, True)
    x.fill_(value)
    expected = positions.copy()
    if aliased:
        expected[np.isin(positions, ref)] = value
    assert_tensor(base, expected, jt.int64)
    assert (x.numpy() == value).all()


@given(shape=shapes, ops=st.lists(OPS, max_size=6))
def test_view_chains_match_torch_strides(shape, ops):
    torch = pytest.importorskip("torch")
    a = sample(shape, jt.float32)
    x, tx = jt.from_numpy(a.copy()), torch.from_numpy(a.copy())
    for op in ops:
        step = concrete(op, tuple(tx.shape))
        if step is None:
            continue
        if step[0] == "reshape":
            try:
                ty = tx.view(step[1])
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match=re.escape(str(e).split("\n")[0])):
                    x.view(step[1])
                x, tx = x.reshape(step[1]), tx.reshape(step[1])
            else:
                x, tx = x.view(step[1]), ty
        else:
            x, tx = apply(step, x, False), apply(step, tx, False)
        assert same_layout(x, tx), (step, x.stride(), tx.stride())
        assert x.is_contiguous() == tx.is_contiguous()
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    assert same_layout(x, tx)


@given(shape=shapes, sizes=st.lists(st.integers(-1, 3), max_size=5), lead=st.integers(0, 2))
def test_expand_matches_torch(shape, sizes, lead):
    torch = pytest.importorskip("torch")
    a = sample(shape, jt.float32)
    # size-1 dims grow, -1 keeps a size, a 3 on another size must raise
    target = [1] * lead + [s if s >= 0 and (n == 1 or s == 3) else (-1 if s == -1 else n)
                           for n, s in zip(shape, sizes + [1] * len(shape), strict=False)]
    tx = torch.from_numpy(a)
    try:
        expected = tx.expand(target)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=re.escape(str(e)[:40])):
            jt.from_numpy(a).expand(*target)
        return
    assert same_layout(jt.from_numpy(a).expand(*target), expected)


@pytest.mark.parametrize("shape, strides_of", [
    ((2, 3, 4), lambda t: t.transpose(0, 1)), ((4, 6), lambda t: t[:, ::2]),
    ((2, 1, 4), lambda t: t.transpose(0, 2)), ((0, 3), lambda t: t.t()),
    ((3, 4), lambda t: t[1:, 1:]), ((), lambda t: t), ((5,), lambda t: t[None, :, None]),
])
def test_view_raises_exactly_when_torch_does(shape, strides_of):
    torch = pytest.importorskip("torch")
    a = sample(shape, jt.float32)
    x, tx = strides_of(jt.from_numpy(a)), strides_of(torch.from_numpy(a))
    n = int(np.prod(tx.shape))
    targets = [[n], [-1], [1, n], [n, 1], [1, -1, 1]] + [list(s) for s in
                                                       [(2, n // 2), (n // 2, 2), (3, -1), (-1, 4),
                                                        (2, 2, -1)] if n and n % 4 == 0]
    targets += [list(tx.shape)[::-1], [int(np.prod(tx.shape[:1]) or 0), -1] if tx.ndim else [1]]
    for target in targets:
        try:
            expected = tx.view(target)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=re.escape(str(e).split("\n")[0])):
                x.view(target)
            continue
        assert same_layout(x.view(target), expected)
        assert tuple(x.reshape(target).shape) == tuple(expected.shape)


def test_incompatible_view_message():
    x = jt.zeros(2, 3).t()
    with pytest.raises(RuntimeError, match=re.escape(VIEW_INCOMPATIBLE)):
        x.view(6)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_view_dtype_same_size_and_torch_rules(d):
    torch = pytest.importorskip("torch")
    a = sample((2, 4), d)
    same = {1: jt.uint8, 2: jt.int16, 4: jt.float32, 8: jt.int64}[d.itemsize]
    got = jt.from_numpy(a).view(same)
    expected = torch.from_numpy(a).view(to_torch_dtype(same))
    assert tuple(got.shape) == tuple(expected.shape) and got.dtype is same
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    wider = jt.from_numpy(sample((2, 4), jt.int16)).view(jt.float32)
    assert tuple(wider.shape) == (2, 2) and wider.stride() == (2, 1)
    assert_same_error(lambda: jt.zeros(2, 3).view(jt.float64),
                      lambda: torch.zeros(2, 3).view(torch.float64), exact=False)
    assert_same_error(lambda: jt.zeros(2, 3).t().view(jt.int16),
                      lambda: torch.zeros(2, 3).t().view(torch.int16), exact=False)


@pytest.mark.parametrize("call", [
    lambda m, x: m.split(x, 2), lambda m, x: m.split(x, [1, 4]), lambda m, x: m.chunk(x, 3),
    lambda m, x: m.chunk(x, 2, 1), lambda m, x: m.unbind(x, 1), lambda m, x: m.split(x, 5, 1),
    lambda m, x: (m.narrow(x, 1, -2, 2),), lambda m, x: m.broadcast_tensors(x, x[:1]),
    lambda m, x: (m.movedim(x, (0, 1), (1, 0)),), lambda m, x: (m.squeeze(x[:1]),),
    lambda m, x: (m.squeeze(x[:1], (0, 1)),), lambda m, x: (m.unsqueeze(x, -1),),
    lambda m, x: (m.flatten(x[None], 0, 1),), lambda m, x: (m.swapdims(x, 0, 1),),
    lambda m, x: m.chunk(x[:0], 3), lambda m, x: (m.broadcast_to(x[:, :1], (2, 5, 4)),),
], ids=range(16))
def test_pieces_match_torch(call):
    torch = pytest.importorskip("torch")
    a = sample((5, 4), jt.float32)
    got, expected = call(jt, jt.from_numpy(a)), call(torch, torch.from_numpy(a))
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=False):
        assert same_layout(g, e)
        np.testing.assert_array_equal(g.numpy(), e.numpy())


# -- errors like torch -------------------------------------------------------------------------
ERRORS = [
    ("view size", lambda m, x: x.view(4, 5), True),
    ("view two -1", lambda m, x: x.view(-1, -1), False),
    ("view -2", lambda m, x: x.view(-2, 3), True),
    ("view ambiguous", lambda m, x: x[:0].view(0, -1), True),
    ("view float", lambda m, x: x.view(2.0, 3), False),
    ("reshape size", lambda m, x: m.reshape(x, (5,)), True),
    ("flatten order", lambda m, x: x.flatten(1, 0), False),
    ("unflatten sizes", lambda m, x: x.unflatten(1, (2, 2)), True),
    ("unflatten empty", lambda m, x: x.unflatten(1, ()), True),
    ("transpose dim", lambda m, x: x.transpose(0, 2), True),
    ("t 3d", lambda m, x: x[None].t(), False),
    ("mT 1d", lambda m, x: x[0].mT, True),
    ("permute length", lambda m, x: x.permute(0, 1, 2), False),
    ("permute duplicate", lambda m, x: x.permute(0, 0), False),
    ("unsqueeze dim", lambda m, x: x.unsqueeze(3), True),
    ("squeeze dim", lambda m, x: x.squeeze(2), True),
    ("squeeze duplicate", lambda m, x: x.squeeze((0, 0)), False),
    ("expand mismatch", lambda m, x: x.expand(3, 3), True),
    ("expand too few", lambda m, x: x.expand(3), False),
    ("expand leading -1", lambda m, x: x.expand(-1, 2, 3), True),
    ("narrow start", lambda m, x: x.narrow(1, 4, 0), True),
    ("narrow length", lambda m, x: x.narrow(1, 2, 2), True),
    ("chunk 0", lambda m, x: x.chunk(0), True),
    ("split 0", lambda m, x: x.split(0), True),
    ("split sum", lambda m, x: x.split([1, 2]), True),
    ("split negative", lambda m, x: x.split(-1), True),
    ("cat sizes", lambda m, x: m.cat([x, m.zeros(2, 4)]), True),
    ("cat ndim", lambda m, x: m.cat([x, m.zeros(2)]), True),
    ("cat 0-d", lambda m, x: m.cat([x, m.zeros(())]), False),
    ("cat empty", lambda m, x: m.cat([]), True),
    ("cat dim", lambda m, x: m.cat([x, x], 2), True),
    ("cat tensor", lambda m, x: m.cat(x), False),
    ("stack sizes", lambda m, x: m.stack([x, m.zeros(2, 4)]), True),
    ("stack empty", lambda m, x: m.stack([]), True),
    ("stack dim", lambda m, x: m.stack([x, x], 3), True),
    ("flip duplicate", lambda m, x: x.flip((0, 0)), False),
    ("movedim lengths", lambda m, x: x.movedim((0, 1), (1,)), False),
    ("movedim repeated", lambda m, x: x.movedim((0, 0), (1, 0)), True),
    ("broadcast_tensors", lambda m, x: m.broadcast_tensors(x, m.zeros(4)), True),
]


@pytest.mark.parametrize("name, call, exact", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_like_torch(name, call, exact):
    torch = pytest.importorskip("torch")
    x = jt.zeros(2, 3)
    assert_same_error(lambda: call(jt, x), lambda: call(torch, torch.zeros(2, 3)), exact)
    assert (x.numpy() == 0).all()


def test_slicing_with_a_negative_step_raises():
    with pytest.raises(ValueError, match="step must be greater than zero"):
        jt.zeros(3)[::-1]


# -- repeat, tile, roll ----------------------------------------------------------------------------
@given(st.lists(st.integers(0, 3), min_size=0, max_size=3), st.data())
def test_repeat_and_tile_match_numpys_tile(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    reps = data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape) + 2))
    got = jt.tensor(x).repeat(*reps)
    want = np.tile(x, reps)
    assert got.dtype is jt.int32 and tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    short = data.draw(st.lists(st.integers(1, 2), min_size=0, max_size=len(shape)))
    np.testing.assert_array_equal(jt.tile(jt.tensor(x), short).numpy(), np.tile(x, short))


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_roll_matches_numpy(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    dims = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=3))
    shifts = data.draw(st.lists(st.integers(-9, 9), min_size=len(dims), max_size=len(dims)))
    np.testing.assert_array_equal(jt.roll(jt.tensor(x), shifts, dims).numpy(),
                                  np.roll(x, shifts, dims))
    np.testing.assert_array_equal(jt.tensor(x).roll(shifts[0]).numpy(), np.roll(x, shifts[0]))


def test_repeat_tile_roll_errors_and_copies():
    x = jt.ones(2, 3)
    with pytest.raises(RuntimeError, match="can not be smaller"):
        x.repeat(2)
    with pytest.raises(RuntimeError, match="negative"):
        x.repeat(1, -1)
    with pytest.raises(RuntimeError, match="align"):
        x.roll((1, 2), 0)
    with pytest.raises(RuntimeError, match="dims="):
        x.roll((1, 2))
    for y in (x.repeat(1, 1), x.roll(0, 1), x.roll(3, 1)):  # new memory, as in torch
        assert not shares(y, x)
    assert x.tile(2, 2).shape == (4, 6) and jt.tile(x, [3]).shape == (2, 9)
    assert jt.tile(x, dims=(2,)).shape == x.tile(dims=[1, 2]).shape == (2, 6)
