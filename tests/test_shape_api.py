"""torch's shape and combination functions composed from jitensor's views, cat, flip, gather
and index ops (hstack and friends, ravel, meshgrid, tensor_split and friends, rot90, select,
repeat_interleave, take_along_dim, diag_embed, diagflat, block_diag, cartesian_prod,
tril/triu_indices, broadcast_shapes, atleast_*d): torch is the oracle for values, dtypes,
shapes, strides, which results are views, gradients and errors; a few run on CUDA."""
import re

import numpy as np
import pytest
from conftest import CPU_DTYPES, assert_grads_match_torch, to_torch_dtype
from hypothesis import given
from hypothesis import strategies as st
from test_shape import assert_same_error, same_layout, sample, shares

import jitensor as jt

torch = pytest.importorskip("torch")

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")

NAMES = ["hstack", "vstack", "row_stack", "dstack", "column_stack", "ravel", "meshgrid",
         "tensor_split", "hsplit", "vsplit", "dsplit", "fliplr", "flipud", "rot90", "select",
         "repeat_interleave", "take_along_dim", "diag_embed", "diagflat", "block_diag",
         "cartesian_prod", "tril_indices", "triu_indices", "broadcast_shapes", "atleast_1d",
         "atleast_2d", "atleast_3d", "swapaxes", "swapdims", "moveaxis", "unflatten"]

dtypes_ = st.sampled_from(CPU_DTYPES)


def shapes(min_dims=0, max_dims=3, min_side=0, max_side=3):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims)


def both(shape, dtype=jt.float64, seed=0):
    """The same values as a jitensor tensor and a torch tensor."""
    a = sample(tuple(shape), dtype, seed)
    return jt.from_numpy(a.copy()), torch.from_numpy(a.copy())


def check(got, expected, base=None, tbase=None):
    """`got` is what torch gave as `expected`: the same nesting, Size values, and tensors of the
    same dtype, shape, strides and values; given the inputs, `got` is a view of `base` exactly
    where torch's result shares `tbase`'s storage."""
    if isinstance(expected, torch.Size):
        assert isinstance(got, jt.Size) and tuple(got) == tuple(expected), (got, expected)
    elif isinstance(expected, (tuple, list)):
        assert isinstance(got, tuple) and len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected, strict=False):
            check(g, e, base, tbase)
    else:
        assert to_torch_dtype(got.dtype) == expected.dtype, (got.dtype, expected.dtype)
        assert same_layout(got, expected), (got.shape, got.stride(), expected.shape,
                                            expected.stride())
        np.testing.assert_array_equal(got.detach().numpy(), expected.detach().numpy())
        if base is not None and expected.numel():
            view = expected.untyped_storage().data_ptr() == tbase.untyped_storage().data_ptr()
            assert shares(got.detach(), base.detach()) == view


def test_every_function_exists_and_tensor_methods_where_torch_has_them():
    for name in NAMES:
        assert callable(getattr(jt, name)), name
        assert hasattr(jt.Tensor, name) == hasattr(torch.Tensor, name), name


# -- values, dtypes, strides, views ------------------------------------------------------------
@given(shapes(), st.integers(1, 3), dtypes_,
       st.sampled_from(["hstack", "vstack", "row_stack", "dstack", "column_stack"]))
def test_stacks_match_torch(shape, count, dtype, fn):
    pairs = [both(shape, dtype, seed) for seed in range(count)]
    check(getattr(jt, fn)([x for x, _ in pairs]), getattr(torch, fn)([t for _, t in pairs]),
          *pairs[0])


def test_stacks_of_mixed_dims_and_dtypes_and_out():
    cases = [
        ("hstack", [(), (2,)], [jt.int64, jt.float32]),
        ("hstack", [(2, 1), (2, 3)], [jt.bool, jt.int8]),
        ("vstack", [(3,), (2, 3)], [jt.uint8, jt.int16]),
        ("dstack", [(2,), (1, 2, 2)], [jt.float64, jt.int32]),
        ("column_stack", [(), (1,), (1, 2)], [jt.int32, jt.float32, jt.bool]),
    ]
    for fn, shape_list, dtype_list in cases:
        pairs = [both(s, d, k)
                 for k, (s, d) in enumerate(zip(shape_list, dtype_list, strict=False))]
        expected = getattr(torch, fn)([t for _, t in pairs])
        check(getattr(jt, fn)([x for x, _ in pairs]), expected)
        out = jt.empty(*expected.shape, dtype=jt.float64)
        assert getattr(jt, fn)([x for x, _ in pairs], out=out) is out
        check(out, expected.double())


@given(shapes(max_dims=4), dtypes_, st.sampled_from(["contiguous", "transposed", "strided"]))
def test_ravel_and_atleast_nd_match_torch(shape, dtype, layout):
    x, t = both(shape, dtype)
    if layout == "transposed" and len(shape) >= 2:
        x, t = x.transpose(0, -1), t.transpose(0, -1)
    elif layout == "strided" and shape:
        x, t = x[..., ::2], t[..., ::2]
    check(jt.ravel(x), torch.ravel(t), x, t)
    check(x.ravel(), t.ravel(), x, t)
    for k, fn in enumerate(("atleast_1d", "atleast_2d", "atleast_3d"), 1):
        got = getattr(jt, fn)(x)
        check(got, getattr(torch, fn)(t), x, t)
        assert (got is x) == (x.ndim >= k)
        check(getattr(jt, fn)(x, x), getattr(torch, fn)(t, t), x, t)
        check(getattr(jt, fn)([x]), getattr(torch, fn)([t]), x, t)
    assert jt.atleast_2d() == ()


@given(st.lists(st.none() | st.integers(0, 3), min_size=1, max_size=3),
       st.sampled_from(["ij", "xy"]), st.booleans(), dtypes_)
def test_meshgrid_and_cartesian_prod_match_torch(lengths, indexing, as_list, dtype):
    pairs = [both(() if n is None else (n,), dtype, seed) for seed, n in enumerate(lengths)]
    xs, ts = [x for x, _ in pairs], [t for _, t in pairs]
    got = jt.meshgrid(xs, indexing=indexing) if as_list else jt.meshgrid(*xs, indexing=indexing)
    expected = torch.meshgrid(*ts, indexing=indexing)
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected, strict=False)):
        check(g, e, *pairs[k])  # grid k is a view of input k
    if None not in lengths:
        check(jt.cartesian_prod(*xs), torch.cartesian_prod(*ts), xs[0], ts[0])
        if len(xs) == 1:
            assert jt.cartesian_prod(xs[0]) is xs[0]


def test_meshgrid_without_indexing_warns_and_uses_ij():
    a, b = jt.arange(2), jt.arange(3)
    with pytest.warns(UserWarning, match="pass the indexing argument"):
        grids = jt.meshgrid(a, b)
    assert [g.shape for g in grids] == [(2, 3), (2, 3)]


@given(st.data())
def test_tensor_split_matches_torch_and_gives_views(data):
    shape = data.draw(shapes(min_dims=1, max_side=5))
    x, t = both(shape, data.draw(dtypes_))
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    kind = data.draw(st.sampled_from(["sections", "list", "tuple", "tensor", "0-d tensor"]))
    if kind in ("sections", "0-d tensor"):
        arg = data.draw(st.integers(1, 6))
    else:
        arg = data.draw(st.lists(st.integers(-7, 7), max_size=4))
        arg = tuple(arg) if kind == "tuple" else arg
    jarg, targ = arg, arg
    if "tensor" in kind:
        jarg, targ = jt.tensor(arg, dtype=jt.int64), torch.tensor(arg, dtype=torch.int64)
    got, expected = jt.tensor_split(x, jarg, d), torch.tensor_split(t, targ, d)
    check(got, expected, x, t)
    check(x.tensor_split(jarg, dim=d), expected, x, t)
    for g, e in zip(got, expected, strict=False):  # writes show in the base
        g.zero_()
        e.zero_()
    check(x, t)


@given(st.data())
def test_hsplit_vsplit_dsplit_match_torch(data):
    fn, min_dims = data.draw(st.sampled_from([("hsplit", 1), ("vsplit", 2), ("dsplit", 3)]))
    shape = data.draw(shapes(min_dims=min_dims, max_side=4))
    x, t = both(shape)
    dim = {"hsplit": 1 if len(shape) > 1 else 0, "vsplit": 0, "dsplit": 2}[fn]
    divisors = [s for s in range(1, 5) if shape[dim] % s == 0]
    arg = data.draw(st.sampled_from(divisors) | st.lists(st.integers(-5, 5), max_size=3))
    check(getattr(jt, fn)(x, arg), getattr(torch, fn)(t, arg), x, t)
    check(getattr(x, fn)(arg), getattr(t, fn)(arg), x, t)


@given(st.data())
def test_rot90_and_flips_match_torch(data):
    shape = data.draw(shapes(min_dims=2))
    x, t = both(shape, data.draw(dtypes_))
    n = len(shape)
    a, b = data.draw(st.permutations(range(n)))[:2]
    dims = [a - n if data.draw(st.booleans()) else a, b]
    k = data.draw(st.integers(-6, 6))
    check(jt.rot90(x, k, dims), torch.rot90(t, k, dims), x, t)
    check(x.rot90(k, dims), t.rot90(k, dims), x, t)
    check(jt.fliplr(x), torch.fliplr(t), x, t)
    check(x.flipud(), t.flipud(), x, t)


@given(st.data())
def test_select_is_a_view_like_torchs(data):
    shape = data.draw(shapes(min_dims=1, min_side=1, max_side=4))
    x, t = both(shape, data.draw(dtypes_))
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    i = data.draw(st.integers(-shape[d], shape[d] - 1))
    got, expected = jt.select(x, d, i), torch.select(t, d, i)
    check(got, expected, x, t)
    check(x.select(d, i), expected, x, t)
    got.zero_()
    expected.zero_()
    check(x, t)


@given(st.data())
def test_repeat_interleave_matches_torch(data):
    shape = data.draw(shapes())
    x, t = both(shape, data.draw(dtypes_))
    dim = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1)) if shape else None
    n = x.numel() if dim is None else shape[dim]
    kind = data.draw(st.sampled_from(["int", "tensor", "0-d tensor"]))
    if kind == "int":
        jr = tr = data.draw(st.integers(0, 3))
    else:
        counts = data.draw(st.integers(0, 3)) if kind == "0-d tensor" else \
            data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        rdtype = data.draw(st.sampled_from([jt.int32, jt.int64]))
        jr, tr = jt.tensor(counts, dtype=rdtype), torch.tensor(counts, dtype=to_torch_dtype(rdtype))
    expected = torch.repeat_interleave(t, tr, dim)
    size = expected.shape[0 if dim is None else dim] if data.draw(st.booleans()) else None
    check(jt.repeat_interleave(x, jr, dim, output_size=size), expected, x, t)
    check(x.repeat_interleave(jr, dim=dim), expected, x, t)
    if kind == "tensor":  # the one-tensor form: positions repeated
        check(jt.repeat_interleave(jr), torch.repeat_interleave(tr))


@given(st.data())
def test_take_along_dim_matches_torch(data):
    shape = data.draw(shapes(min_dims=1, min_side=1))
    x, t = both(shape, data.draw(dtypes_))
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = [data.draw(st.integers(0, 3)) if k == d % len(shape) else
                   data.draw(st.sampled_from([1, n, 2] if n == 1 else [1, n]))
                   for k, n in enumerate(shape)]
    index = np.random.default_rng(0).integers(0, shape[d], index_shape)
    check(jt.take_along_dim(x, jt.tensor(index), d), torch.take_along_dim(t, torch.tensor(index),
                                                                          d), x, t)
    flat = np.random.default_rng(1).integers(0, x.numel(), data.draw(st.integers(0, 4)))
    check(x.take_along_dim(jt.tensor(flat)), t.take_along_dim(torch.tensor(flat)), x, t)


@given(st.data())
def test_diag_embed_and_diagflat_match_torch(data):
    shape = data.draw(shapes(min_dims=1))
    x, t = both(shape, data.draw(dtypes_))
    n = len(shape) + 1
    a, b = data.draw(st.permutations(range(n)))[:2]
    dims = (a - n if data.draw(st.booleans()) else a, b)
    offset = data.draw(st.integers(-3, 3))
    check(jt.diag_embed(x, offset, *dims), torch.diag_embed(t, offset, *dims), x, t)
    check(x.diag_embed(offset, *dims), t.diag_embed(offset, *dims), x, t)
    check(jt.diagflat(x, offset), torch.diagflat(t, offset), x, t)
    scalar, tscalar = both((), x.dtype)
    check(scalar.diagflat(offset), tscalar.diagflat(offset))


@given(st.lists(st.tuples(shapes(max_dims=2), dtypes_), max_size=3))
def test_block_diag_matches_torch(blocks):
    pairs = [both(s, d, k) for k, (s, d) in enumerate(blocks)]
    check(jt.block_diag(*(x for x, _ in pairs)), torch.block_diag(*(t for _, t in pairs)))


@given(st.integers(0, 6), st.integers(0, 6), st.integers(-8, 8),
       st.sampled_from([None, jt.int32, jt.int64]))
def test_tril_and_triu_indices_match_torch(row, col, offset, dtype):
    options = {} if dtype is None else {"dtype": dtype}
    toptions = {} if dtype is None else {"dtype": to_torch_dtype(dtype)}
    for fn in ("tril_indices", "triu_indices"):
        check(getattr(jt, fn)(row, col, offset, **options),
              getattr(torch, fn)(row, col, offset, **toptions))


shape_args = st.integers(0, 3) | st.lists(st.integers(0, 3), max_size=3) | \
    st.lists(st.integers(0, 3), max_size=3).map(tuple)


@given(st.lists(shape_args, max_size=4))
def test_broadcast_shapes_matches_torch(args):
    try:
        expected = torch.broadcast_shapes(*args)
    except RuntimeError:
        assert_same_error(lambda: jt.broadcast_shapes(*args), lambda: torch.broadcast_shapes(*args))
    else:
        check(jt.broadcast_shapes(*args), expected)
        check(jt.broadcast_shapes(*args, None), expected)


# -- gradients ---------------------------------------------------------------------------------
GRADIENT_CASES = {
    "select": lambda m, x: m.select(x, 1, -1),
    "tensor_split": lambda m, x: m.tensor_split(x, [1, -1], 2),
    "repeat_interleave tensor": lambda m, x: m.repeat_interleave(x, m.tensor([2, 0, 1]), 1),
    "repeat_interleave int": lambda m, x: m.repeat_interleave(x, 3),
    "take_along_dim": lambda m, x: m.take_along_dim(x, m.tensor([[[3], [3], [0]]]), 2),
    "take_along_dim flat": lambda m, x: m.take_along_dim(x, m.tensor([5, 5, 0])),
    "diag_embed": lambda m, x: m.diag_embed(x, 1, 0, 2),
    "diagflat": lambda m, x: m.diagflat(x[0], -1),
    "block_diag": lambda m, x: m.block_diag(x[0], x[1, 0], x[1, 1, 1]),
    "rot90": lambda m, x: m.rot90(x, 3, (2, 0)),
    "meshgrid": lambda m, x: m.meshgrid(x[0, 0], x[1, 1], indexing="xy"),
    "cartesian_prod": lambda m, x: m.cartesian_prod(x[0, 0], x[1, 1]),
    "hstack": lambda m, x: m.hstack([x, x[:, :1]]),
    "dstack": lambda m, x: m.dstack([x[0, :1], x[1, 0]]),
    "column_stack": lambda m, x: m.column_stack([x[0, :, 0], x[1]]),
    "atleast_3d": lambda m, x: m.atleast_3d(x[0, 0]),
    "ravel": lambda m, x: m.ravel(x.transpose(0, 2)),
    "fliplr": lambda m, x: m.fliplr(x),
}


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_gradients_match_torch(name):
    fn = GRADIENT_CASES[name]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4))
    x, t = jt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    got, expected = fn(jt, x), fn(torch, t)
    if isinstance(expected, tuple):
        got, expected = jt.cat([g.reshape(-1) for g in got]), \
            torch.cat([e.reshape(-1) for e in expected])
    assert_grads_match_torch(torch, rng, got, expected, [x], [t], 1e-12, 0)


# -- errors ------------------------------------------------------------------------------------
def _a(m):
    return m.arange(6.).reshape(2, 3)


ERRORS = {  # name: (call on the module, a fragment of our message, or None: it holds torch's)
    "hstack empty": (lambda m: m.hstack([]), None),
    "vstack empty": (lambda m: m.vstack([]), None),
    "dstack empty": (lambda m: m.dstack([]), None),
    "column_stack empty": (lambda m: m.column_stack([]), None),
    "hstack of a tensor": (lambda m: m.hstack(_a(m)), "argument 'tensors'"),
    "vstack of a number": (lambda m: m.vstack([_a(m), 1]), "expected Tensor as element 1"),
    "meshgrid empty": (lambda m: m.meshgrid(), None),
    "meshgrid 2-D": (lambda m: m.meshgrid(_a(m), indexing="ij"),
                     "Expected 0D or 1D tensor in the tensor list but got"),
    "meshgrid dtypes": (lambda m: m.meshgrid(m.tensor([1]), m.tensor([1.]), indexing="ij"), None),
    "meshgrid indexing": (lambda m: m.meshgrid(m.tensor([1]), indexing="yx"), None),
    "tensor_split 0-d": (lambda m: m.tensor_split(m.tensor(1.), 2), None),
    "tensor_split 0 sections": (lambda m: m.tensor_split(_a(m), 0, 1), None),
    "tensor_split float tensor": (lambda m: m.tensor_split(_a(m), m.tensor([1.]), 1), None),
    "tensor_split int32 tensor": (
        lambda m: m.tensor_split(_a(m), m.tensor([1], dtype=m.int32), 1), None),
    "tensor_split 2-D tensor": (lambda m: m.tensor_split(_a(m), m.tensor([[1]]), 1), None),
    "tensor_split float": (lambda m: m.tensor_split(_a(m), 2.0, 1),
                           "argument 'indices_or_sections'"),
    "tensor_split float index": (lambda m: m.tensor_split(_a(m), [1.0], 1),
                                 "argument 'indices' must be a tuple of ints"),
    "tensor_split dim": (lambda m: m.tensor_split(_a(m), 2, 5), None),
    "hsplit 0-d": (lambda m: m.hsplit(m.tensor(1.), 2), None),
    "hsplit uneven": (lambda m: m.hsplit(_a(m), 2), None),
    "hsplit 0": (lambda m: m.hsplit(_a(m), 0), None),
    "hsplit tensor": (lambda m: m.hsplit(_a(m), m.tensor([1])), "argument 'indices_or_sections'"),
    "vsplit 1-D": (lambda m: m.vsplit(m.arange(4), 2), None),
    "vsplit uneven": (lambda m: m.vsplit(_a(m), 3), None),
    "dsplit 2-D": (lambda m: m.dsplit(_a(m), 1), None),
    "dsplit uneven": (lambda m: m.dsplit(m.zeros(1, 2, 3), 2), None),
    "fliplr 1-D": (lambda m: m.fliplr(m.arange(3)), None),
    "flipud 0-d": (lambda m: m.flipud(m.tensor(3)), None),
    "rot90 one dim": (lambda m: m.rot90(_a(m), 1, [0]), None),
    "rot90 1-D": (lambda m: m.rot90(m.arange(3), 1, [0, 1]), None),
    "rot90 same dims": (lambda m: m.rot90(_a(m), 1, [0, -2]), None),
    "rot90 dim range": (lambda m: m.rot90(_a(m), 1, [0, 2]), None),
    "select 0-d": (lambda m: m.select(m.tensor(1.), 0, 0), None),
    "select index": (lambda m: m.select(_a(m), -1, 3), None),
    "select negative index": (lambda m: m.select(_a(m), 0, -3), None),
    "select empty": (lambda m: m.select(m.zeros(0, 3), 0, 0), None),
    "select dim": (lambda m: m.select(_a(m), 2, 0), None),
    "repeat_interleave negative": (lambda m: m.repeat_interleave(_a(m), -1), None),
    "repeat_interleave bool": (lambda m: m.repeat_interleave(_a(m), True), "argument 'repeats'"),
    "repeat_interleave output_size": (
        lambda m: m.repeat_interleave(_a(m), 2, 0, output_size=5), None),
    "repeat_interleave length": (
        lambda m: m.repeat_interleave(_a(m), m.tensor([1, 2, 3]), 0), None),
    "repeat_interleave negative counts": (
        lambda m: m.repeat_interleave(_a(m), m.tensor([1, -2]), 0), None),
    "repeat_interleave 2-D counts": (
        lambda m: m.repeat_interleave(_a(m), m.tensor([[1, 2]]), 0), None),
    "repeat_interleave float counts": (
        lambda m: m.repeat_interleave(_a(m), m.tensor([1., 2.]), 0), None),
    "repeat_interleave counts' output_size": (
        lambda m: m.repeat_interleave(_a(m), m.tensor([1, 2]), 0, output_size=4), None),
    "repeat_interleave 0-d counts alone": (lambda m: m.repeat_interleave(m.tensor(3)), None),
    "repeat_interleave 0-d dim": (lambda m: m.repeat_interleave(m.tensor(5.), 2, 0), None),
    "take_along_dim int32": (
        lambda m: m.take_along_dim(_a(m), m.tensor([[0]], dtype=m.int32), 1), None),
    "take_along_dim dims": (lambda m: m.take_along_dim(_a(m), m.tensor([0]), 1), None),
    "take_along_dim broadcast": (
        lambda m: m.take_along_dim(_a(m), m.tensor([[0, 1, 2]] * 3), 1), None),
    "take_along_dim dim": (lambda m: m.take_along_dim(_a(m), m.tensor([[0]]), 5), None),
    "take_along_dim 0-d": (lambda m: m.take_along_dim(m.tensor(2.), m.tensor(0), 0), None),
    "take_along_dim strided": (lambda m: m.take_along_dim(_a(m).t(), m.tensor([0])), None),
    "diag_embed 0-d": (lambda m: m.diag_embed(m.tensor(1.)), None),
    "diag_embed same dims": (lambda m: m.diag_embed(_a(m), 0, 1, -2), None),
    "diag_embed dim": (lambda m: m.diag_embed(_a(m), 0, 3, 1), None),
    "block_diag 3-D": (lambda m: m.block_diag(m.zeros(2, 2, 2)), None),
    "block_diag list": (lambda m: m.block_diag([m.zeros(1)]), "expected Tensor as element 0"),
    "cartesian_prod 2-D": (lambda m: m.cartesian_prod(_a(m)), None),
    "cartesian_prod 0-d": (lambda m: m.cartesian_prod(m.tensor(1), m.tensor([1])), None),
    "cartesian_prod empty": (lambda m: m.cartesian_prod(), None),
    "cartesian_prod dtypes": (lambda m: m.cartesian_prod(m.tensor([1]), m.tensor([1.])), None),
    "tril_indices row": (lambda m: m.tril_indices(-1, 4), None),
    "triu_indices col": (lambda m: m.triu_indices(2, -4), None),
    "tril_indices float": (lambda m: m.tril_indices(2, 2, dtype=m.float32), None),
    "triu_indices int16": (lambda m: m.triu_indices(2, 2, dtype=m.int16), None),
    "tril_indices float row": (lambda m: m.tril_indices(2.0, 2), None),
    "broadcast_shapes negative": (lambda m: m.broadcast_shapes((-1,), (3,)), None),
    "broadcast_shapes float": (lambda m: m.broadcast_shapes((2.0,), (1,)),
                               "takes an iterable of 'int'"),
    "broadcast_shapes tensor": (lambda m: m.broadcast_shapes(m.tensor([3]), (3,)),
                                "Input shapes should be of type ints"),
    "atleast_1d number": (lambda m: m.atleast_1d(3), "argument 'tensors'"),
    "atleast_2d list with a number": (lambda m: m.atleast_2d([m.zeros(1), 3]),
                                      "expected Tensor as element 1"),
}


@pytest.mark.filterwarnings("ignore:torch.meshgrid:UserWarning")  # torch's, without indexing=
@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    call, fragment = ERRORS[name]
    assert_same_error(lambda: call(jt), lambda: call(torch), exact=fragment is None)
    if fragment is not None:
        with pytest.raises(Exception, match=re.escape(fragment)):
            call(jt)


# -- CUDA --------------------------------------------------------------------------------------
CUDA_CASES = [
    lambda m, x: m.hstack([x, x]), lambda m, x: m.column_stack([x[0], x[1]]),
    lambda m, x: m.meshgrid(x[0], x[1, :2], indexing="xy"), lambda m, x: m.tensor_split(x, 2, 1),
    lambda m, x: m.rot90(x, 1), lambda m, x: m.select(x, 1, -1),
    lambda m, x: m.repeat_interleave(x, m.tensor([2, 0], device=x.device), 0),
    lambda m, x: m.take_along_dim(x, m.tensor([[2], [0]], device=x.device), 1),
    lambda m, x: m.diag_embed(x[0], 1), lambda m, x: m.block_diag(x[0], x[1, :1]),
    lambda m, x: m.tril_indices(2, 3, device=x.device),
]


@needs_cuda
def test_on_cuda_as_on_the_cpu():
    x = jt.arange(6.).reshape(2, 3)
    c = x.to("cuda")
    for fn in CUDA_CASES:
        got, expected = fn(jt, c), fn(jt, x)
        if isinstance(expected, jt.Tensor):
            got, expected = (got,), (expected,)
        for g, e in zip(got, expected, strict=True):
            assert g.device.type == "cuda" and g.dtype is e.dtype
            np.testing.assert_array_equal(g.cpu().numpy(), e.numpy())


@needs_cuda
def test_gradients_on_cuda_and_device_errors():
    x = jt.arange(6., dtype=jt.float64, device="cuda").reshape(2, 3).requires_grad_()
    counts = jt.tensor([1, 3], device="cuda")
    jt.take_along_dim(jt.repeat_interleave(x, counts, 0), jt.tensor([[2]], device="cuda"),
                      1).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [[0, 0, 1], [0, 0, 3]])
    with pytest.raises(RuntimeError, match="to be on cpu, but it's on cuda"):
        jt.tensor_split(x, jt.tensor([1], device="cuda"))
    with pytest.raises(RuntimeError, match="same device"):
        jt.meshgrid(jt.zeros(2, device="cuda"), jt.zeros(2), indexing="ij")
    with pytest.raises(RuntimeError, match="same device"):
        jt.block_diag(jt.zeros(2, device="cuda"), jt.zeros(2))


def test_rot90_by_whole_turns_is_a_contiguous_copy():
    x = jt.arange(12).reshape(3, 4).t()
    for k in (0, 4, -4):
        r = jt.rot90(x, k)
        assert r.stride() == (3, 1) and r.tolist() == x.tolist()  # torch's strides
        r[0, 0] = 99
        assert x[0, 0].item() == 0


def test_hsplit_sections_may_be_numpy_ints():
    x = jt.arange(12).reshape(2, 6)
    assert [p.shape[1] for p in jt.hsplit(x, np.int64(3))] == [2, 2, 2]
    with pytest.raises(RuntimeError, match="not divisible by the split_size 4"):
        jt.hsplit(x, np.int64(4))


# -- the *_copy forms of the views ---------------------------------------------------------------
COPIES = [("alias_copy", ()), ("as_strided_copy", ((2, 2), (1, 2), 1)), ("detach_copy", ()),
          ("diagonal_copy", (1,)), ("expand_copy", ((2, 3, 4),)), ("permute_copy", ((1, 0),)),
          ("select_copy", (1, 2)), ("slice_copy", (1, 1, 3)), ("slice_copy", (-1, None, None, 2)),
          ("split_copy", (3, 1)), ("split_with_sizes_copy", ([1, 3], 1)), ("squeeze_copy", ()),
          ("t_copy", ()), ("transpose_copy", (0, 1)), ("unbind_copy", (0,)),
          ("unfold_copy", (1, 2, 1)), ("unsqueeze_copy", (-1,)), ("view_copy", ((2, 6),)),
          ("view_copy", ("int32",))]


@pytest.mark.parametrize("name, args", COPIES, ids=lambda c: c if isinstance(c, str) else "")
def test_copied_views_match_torch(name, args):
    """Values, dtype and shape as torch's, each result contiguous and owning its memory; out=
    takes it (a list of pieces for the splits, which then return None, as torch's)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def call(lib, **kw):
        a = [getattr(lib, v) if isinstance(v, str) else v for v in args]
        return getattr(lib, name)(lib.from_numpy(x.copy()), *a, **kw)
    want, got = call(torch), call(jt)
    pieces = isinstance(want, (tuple, list))
    wants, gots = (list(want), list(got)) if pieces else ([want], [got])
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants, strict=True):
        assert g.dtype == getattr(jt, str(w.dtype).split(".")[1]) and g.shape == w.shape
        np.testing.assert_array_equal(g.numpy(), w.numpy())
        assert g.is_contiguous() and not np.shares_memory(g.numpy(), x)
    outs = [jt.empty(tuple(w.shape), dtype=g.dtype) for g, w in zip(gots, wants, strict=True)]
    returned = call(jt, out=outs if pieces else outs[0])
    assert returned is None if pieces else returned is outs[0]
    for o, w in zip(outs, wants, strict=True):
        np.testing.assert_array_equal(o.numpy(), w.numpy())


def test_copied_views_record_gradients():
    x = jt.ones(2, 3, requires_grad=True)
    (jt.transpose_copy(x, 0, 1) * jt.arange(6.0).reshape(3, 2)).sum().backward()
    assert x.grad.tolist() == [[0, 2, 4], [1, 3, 5]]
    x.grad = None
    sum(p.sum() * (i + 1) for i, p in enumerate(jt.unbind_copy(x, 1))).backward()
    assert x.grad.tolist() == [[1, 2, 3], [1, 2, 3]]
