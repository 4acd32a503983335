"""uint16, uint32 and uint64 against torch, which supports them barebones: creation from lists,
NumPy arrays and fills, conversions both ways, data movement, the few ops torch computes (eq,
mul, bitwise and/or/xor, sums to int64, sort, ops that convert to float first), its promotion
errors and its NotImplementedError for the rest, printing and serialization in torch's format."""
import io

import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")

UNSIGNED = ["uint16", "uint32", "uint64"]
# values that use the top bit of each dtype, where a signed reading would differ
TOP = {"uint16": [1, 2**15 + 3, 2**16 - 1, 7], "uint32": [1, 2**31 + 3, 2**32 - 1, 7],
       "uint64": [1, 2**63 + 3, 2**64 - 1, 7]}


def _pair(name, values=None):
    a = np.array(TOP[name] if values is None else values, dtype=name)
    return jt.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _same(mine, theirs):
    if isinstance(theirs, torch.Tensor):
        assert mine.dtype.name == str(theirs.dtype).split(".")[-1]
        assert tuple(mine.shape) == tuple(theirs.shape)
        assert mine.tolist() == theirs.tolist()
    else:
        assert mine == theirs


@pytest.mark.parametrize("name", UNSIGNED)
def test_the_dtype_and_its_attributes(name):
    d = getattr(jt, name)
    assert d.np == np.dtype(name) and d.itemsize == np.dtype(name).itemsize
    assert not d.is_signed and not d.is_floating_point and not d.is_complex
    assert jt.dtypes.to_dtype(name) is d and jt.dtypes.to_dtype(getattr(torch, name)) is d
    info, theirs = jt.iinfo(d), torch.iinfo(getattr(torch, name))
    assert (info.min, info.max, info.bits) == (theirs.min, theirs.max, theirs.bits)
    assert repr(info) == repr(theirs)


@pytest.mark.parametrize("name", UNSIGNED)
def test_creation_matches_torch(name):
    t, d = getattr(torch, name), getattr(jt, name)
    _same(jt.tensor([1, 2, 3], dtype=d), torch.tensor([1, 2, 3], dtype=t))
    _same(jt.tensor([-1, 3], dtype=d) if name != "uint64" else jt.tensor([1], dtype=d),
          torch.tensor([-1, 3], dtype=t) if name != "uint64" else torch.tensor([1], dtype=t))
    for make in (lambda m, d: m.zeros(2, 3, dtype=d), lambda m, d: m.ones(4, dtype=d),
                 lambda m, d: m.full((2,), 7, dtype=d), lambda m, d: m.full((2,), -1, dtype=d),
                 lambda m, d: m.zeros_like(m.ones(2), dtype=d)):
        _same(make(jt, d), make(torch, t))
    assert jt.empty(5, dtype=d).dtype is d
    mine, theirs = _pair(name)
    _same(mine, theirs)
    assert mine.numpy().dtype == np.dtype(name)
    _same(jt.tensor(TOP[name], dtype=d), torch.tensor(TOP[name], dtype=t))  # all 64 bits
    _same(jt.tensor(TOP[name][1], dtype=d), torch.tensor(TOP[name][1], dtype=t))
    _same(jt.tensor(TOP[name], dtype=d) == TOP[name][1], torch.tensor(TOP[name], dtype=t) ==
          TOP[name][1])
    for big in (2**64, -(2**63) - 1):  # a number operand past both int64 and uint64
        with pytest.raises(OverflowError):
            torch.tensor([1]) + big
        with pytest.raises(OverflowError, match="int too big to convert"):
            jt.tensor([1]) + big
    if name == "uint64":  # (torch: "can't convert negative int to unsigned")
        with pytest.raises(RuntimeError, match="out of bounds for uint64"):
            jt.tensor([-1, 3], dtype=d)
    with pytest.raises(RuntimeError, match="overflow"):
        jt.full((1,), 2**64, dtype=d)
    r = jt.randint(0, 5, (100,), dtype=d)
    assert r.dtype is d and 0 <= min(r.tolist()) and max(r.tolist()) < 5


@pytest.mark.parametrize("name", UNSIGNED)
def test_conversions_match_torch(name):
    mine, theirs = _pair(name)
    for to in ("int64", "int32", "uint8", "float32", "float64", "bool", *UNSIGNED):
        _same(mine.to(getattr(jt, to)), theirs.to(getattr(torch, to)))
    source = [0, 5, 300, 70000, -1, -70000, 2**40 + 9]
    _same(jt.tensor(source).to(getattr(jt, name)), torch.tensor(source).to(getattr(torch, name)))
    _same(mine.long(), theirs.long())
    assert mine.tolist() == TOP[name] and mine[1].item() == TOP[name][1]
    assert int(mine[2]) == TOP[name][2]


@pytest.mark.parametrize("name", UNSIGNED)
def test_data_movement(name):
    mine, theirs = _pair(name)
    m2, t2 = mine.view(2, 2), theirs.view(2, 2)
    _same(m2.t().contiguous(), t2.t().contiguous())
    _same(jt.cat([mine, mine[1:]]), torch.cat([theirs, theirs[1:]]))
    _same(jt.stack([mine, mine]), torch.stack([theirs, theirs]))
    _same(mine[jt.tensor([3, 0, 1])], theirs[torch.tensor([3, 0, 1])])
    _same(mine[mine == 7], theirs[theirs == 7])
    _same(mine.clone(), theirs.clone())
    _same(jt.where(mine == 1, mine, mine * 2), torch.where(theirs == 1, theirs, theirs * 2))
    _same(mine.roll(1), theirs.roll(1))
    _same(mine.unique(), theirs.unique())
    a, b = mine.clone(), theirs.clone()
    a[1:3] = mine[:2]
    b[1:3] = theirs[:2]
    _same(a, b)
    a.fill_(5)
    b.fill_(5)
    _same(a, b)
    a.copy_(mine)
    _same(a, theirs)


@pytest.mark.parametrize("name", UNSIGNED)
def test_the_ops_torch_computes(name):
    mine, theirs = _pair(name)
    for op in (lambda x: x == 7, lambda x: x != 7, lambda x: x == x, lambda x: x * 3,
               lambda x: x * x, lambda x: x & 6, lambda x: x | x, lambda x: x ^ 5,
               lambda x: x / 2, lambda x: x * 0.5, lambda x: x.float() + 1, lambda x: x.sqrt(),
               lambda x: x.exp() > 0, lambda x: x.isnan(), lambda x: x.isfinite(),
               lambda x: x.floor(), lambda x: x.round(), lambda x: x.sum(),
               lambda x: x.view(2, 2).sum(1), lambda x: x.prod(), lambda x: x.cumsum(0),
               lambda x: x.cumprod(0), lambda x: x.nansum(), lambda x: x.sort().values,
               lambda x: x.sort().indices, lambda x: x.argsort(), lambda x: x.any(),
               lambda x: x.all()):
        _same(op(mine), op(theirs))
    x = mine.clone()
    x *= 3
    _same(x, theirs * 3)


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("op", ["add", "sub", "neg", "abs", "lt", "pow", "remainder",
                                "floor_divide", "bitwise_not", "bitwise_left_shift", "clamp",
                                "maximum", "sign", "square"])
def test_what_torch_does_not_compute_raises_as_torch(name, op):
    mine, theirs = _pair(name)
    args = {"add": (1,), "sub": (1,), "lt": (3,), "pow": (2,), "remainder": (3,),
            "floor_divide": (3,), "bitwise_left_shift": (1,), "clamp": (0, 3),
            "maximum": (theirs,)}.get(op, ())
    with pytest.raises(NotImplementedError):
        getattr(torch, op)(theirs, *args)
    mine_args = tuple(mine if a is theirs else a for a in args)
    with pytest.raises(NotImplementedError, match=rf"{op}.*not implemented for "
                                                  rf"'{mine.dtype.scalar_name}'"):
        getattr(jt, op)(mine, *mine_args)


def _promotion(lib, a, b):
    try:
        return str(lib.promote_types(getattr(lib, a), getattr(lib, b))).split(".")[-1]
    except RuntimeError as e:
        return str(e).replace("jitensor", "torch")


@pytest.mark.parametrize("name", UNSIGNED)
def test_promotion_matches_torch(name):
    for other in jt.dtypes.ALL:
        for a, b in ((name, other.name), (other.name, name)):
            assert _promotion(jt, a, b) == _promotion(torch, a, b)
    mine, theirs = _pair(name)
    for other in (2, True, 2.5, 1j, jt.tensor(3), jt.tensor(3.0), jt.ones(2), jt.ones(2, 2)):
        theirs_other = torch.tensor(other.numpy()) if isinstance(other, jt.Tensor) else other
        assert jt.result_type(mine, other).name == \
            str(torch.result_type(theirs, theirs_other)).split(".")[-1]
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types"):
        mine * jt.ones(4, dtype=jt.int64)


@pytest.mark.parametrize("name", UNSIGNED)
def test_printing_matches_torch(name):
    mine, theirs = _pair(name)
    assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")
    assert repr(mine[:0]) == repr(theirs[:0]).replace("torch.", "jitensor.")


@pytest.mark.parametrize("name", UNSIGNED)
def test_serialization_both_ways_with_torch(name):
    mine, theirs = _pair(name)
    buf = io.BytesIO()
    jt.save({"a": mine[1:], "b": mine}, buf)
    buf.seek(0)
    loaded = torch.load(buf)
    assert loaded["a"].tolist() == theirs[1:].tolist() and loaded["a"].dtype == theirs.dtype
    assert loaded["a"].untyped_storage().data_ptr() == loaded["b"].untyped_storage().data_ptr()
    buf = io.BytesIO()
    torch.save({"a": theirs[1:]}, buf)
    buf.seek(0)
    _same(jt.load(buf)["a"], theirs[1:])


@pytest.mark.cuda
def test_cuda_tensors_move_and_convert():
    x = jt.tensor([1, 2**15 + 3], dtype=jt.uint16)
    on = x.to("cuda")
    assert on.dtype is jt.uint16 and on.cpu().tolist() == x.tolist()
    assert on.long().cpu().tolist() == x.tolist()
    assert jt.zeros(2, dtype=jt.uint32, device="cuda").cpu().tolist() == [0, 0]


def test_uint64_extremes_past_int64_match_numpy():
    # (beyond torch, which has no max of uint64: the folds' merges once compared as int64)
    rng = np.random.default_rng(0)
    for shape, dim in (((3, 20), 0), ((5000,), None), ((2, 9000), 1), ((70000,), None)):
        a = rng.integers(0, 2**64, shape, dtype=np.uint64, endpoint=False)
        x = jt.from_numpy(a)
        for mine, theirs in ((x.amax(dim) if dim is not None else x.max(), a.max(dim)),
                             (x.amin(dim) if dim is not None else x.min(), a.min(dim)),
                             (x.argmax(dim), a.argmax(dim)), (x.argmin(dim), a.argmin(dim))):
            assert mine.numpy().tolist() == np.asarray(theirs).tolist()
