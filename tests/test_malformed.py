"""Malformed and edge-case calls against torch (#32): each either raises as torch's does or gives
torch's values and dtype, never a silent wrong value. The findings of the held-out probes, one
test each, then a hypothesis differential test over random calls of the same kinds."""
import math

import numpy as np
import pytest
from conftest import INT_DTYPES, dtype_id
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")

SIGNED = [d for d in INT_DTYPES if d is not jt.uint8]


def outcome(call, lib):
    """What `call(lib)` does: ("raises", exception type name, message) or ("value", dtype name,
    values as a list)."""
    try:
        r = call(lib)
    except Exception as e:  # noqa: BLE001 (the outcome is what is compared)
        return "raises", type(e).__name__, str(e)
    return "value", str(r.dtype).split(".")[-1], np.asarray(r.tolist()).tolist()


def same_outcome(call, exact_type=True):
    """jitensor's and torch's outcomes of `call(lib)` agree: both raise (the same type unless
    `exact_type` is False), or both give the same dtype and values (NaN equal to NaN)."""
    ours, theirs = outcome(call, jt), outcome(call, torch)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "raises":
        if exact_type:
            assert ours[1] == theirs[1], (ours, theirs)
        return ours, theirs
    assert ours[1] == theirs[1], (ours, theirs)
    np.testing.assert_array_equal(np.asarray(ours[2], dtype=float), np.asarray(theirs[2], float))
    return ours, theirs


def lib_dtype(lib, d):
    return getattr(lib, d.name)


# -- NaN, inf and out-of-range Python floats into integer dtypes -------------------------------
NAN, INF = float("nan"), float("inf")
CONVERSIONS = {
    "tensor(nan, int64)": lambda lib: lib.tensor(NAN, dtype=lib.int64),
    "tensor([inf], int64)": lambda lib: lib.tensor([INF], dtype=lib.int64),
    "tensor([1, nan], int32)": lambda lib: lib.tensor([1.0, NAN], dtype=lib.int32),
    "tensor([[-inf]], int16)": lambda lib: lib.tensor([[-INF]], dtype=lib.int16),
    "tensor([nan], uint8)": lambda lib: lib.tensor([NAN], dtype=lib.uint8),
    "tensor([300.], int8)": lambda lib: lib.tensor([300.0], dtype=lib.int8),
    "tensor([127.9], int8)": lambda lib: lib.tensor([127.9], dtype=lib.int8),
    "tensor([-1.], uint8)": lambda lib: lib.tensor([-1.0], dtype=lib.uint8),
    "tensor([1e30], int64)": lambda lib: lib.tensor([1e30], dtype=lib.int64),
    "tensor(np.float64(nan), int64)": lambda lib: lib.tensor(np.float64(NAN), dtype=lib.int64),
    "as_tensor([nan], int64)": lambda lib: lib.as_tensor([NAN], dtype=lib.int64),
    "full(nan, int64)": lambda lib: lib.full((2,), NAN, dtype=lib.int64),
    "full_like(inf, int32)": lambda lib: lib.full_like(lib.zeros(2, dtype=lib.int32), INF),
    "fill_(nan) int64": lambda lib: lib.zeros(2, dtype=lib.int64).fill_(NAN),
    "fill_(1e30) int32": lambda lib: lib.zeros(2, dtype=lib.int32).fill_(1e30),
    "setitem nan int64": lambda lib: _setitem(lib.zeros(2, dtype=lib.int64), NAN),
    # these convert, in both
    "tensor([2.5, -0.5], int64)": lambda lib: lib.tensor([2.5, -0.5], dtype=lib.int64),
    "tensor([nan], bool)": lambda lib: lib.tensor([NAN], dtype=lib.bool),
    "tensor(np.array([nan]), int64)": lambda lib: lib.tensor(np.array([NAN]), dtype=lib.int64),
    "full(2.5, int64)": lambda lib: lib.full((2,), 2.5, dtype=lib.int64),
}


def _setitem(t, value):
    t[0] = value
    return t


@pytest.mark.parametrize("call", CONVERSIONS.values(), ids=CONVERSIONS.keys())
def test_float_conversions_into_integers_raise_as_torch(call):
    ours, theirs = same_outcome(call)
    if ours[0] == "raises":
        assert "cannot be converted to type" in ours[2] and "without overflow" in ours[2]


# -- Python types as dtypes ---------------------------------------------------------------------
DTYPE_ARGS = {
    "tensor": lambda lib, d: lib.tensor([1, 2], dtype=d),
    "zeros": lambda lib, d: lib.zeros(2, dtype=d),
    "full": lambda lib, d: lib.full((2,), 1, dtype=d),
    "arange": lambda lib, d: lib.arange(3, dtype=d),
    "to": lambda lib, d: lib.tensor([1.5, 0.0]).to(d),
    "sum": lambda lib, d: lib.tensor([1, 2]).sum(dtype=d),
    "zeros_like": lambda lib, d: lib.zeros_like(lib.tensor([1, 2]), dtype=d),
    "as_tensor": lambda lib, d: lib.as_tensor([1, 0], dtype=d),
}


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("python_type", [float, int, bool], ids=lambda t: t.__name__)
@pytest.mark.parametrize("call", DTYPE_ARGS.values(), ids=DTYPE_ARGS.keys())
def test_python_types_as_dtypes_as_torch(call, python_type, default):
    jt.set_default_dtype(getattr(jt, default))  # (conftest restores both defaults)
    torch.set_default_dtype(getattr(torch, default))
    same_outcome(lambda lib: call(lib, python_type))
    assert jt.tensor([1, 2], dtype=float).dtype is jt.float64


# -- shifts -------------------------------------------------------------------------------------
def _shift_amounts(d):
    bits = np.iinfo(d.np).bits
    return [-70, -5, -1, 0, 1, bits - 1, bits, bits + 1, 64, 100]


def _values(d, n):
    info = np.iinfo(d.np)
    base = [5, info.min, info.max, -3 if info.min else 200, 1, 0]
    return np.resize(np.array(base, dtype=d.np), n)


@pytest.mark.parametrize("d", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("n", [1, 6, 37])  # the serial, scalar-tail and vectorised paths
@pytest.mark.parametrize("op", ["<<", ">>"])
def test_shifts_by_any_count_as_torch(d, n, op):
    x = _values(d, n)
    shift = (lambda a, s: a << s) if op == "<<" else (lambda a, s: a >> s)
    info = np.iinfo(d.np)
    for s in _shift_amounts(d):
        def by_scalar(lib, s=s):
            return shift(lib.tensor(x), s)

        def in_place(lib, s=s):
            t = lib.tensor(x)
            if op == "<<":
                t <<= s
            else:
                t >>= s
            return t

        same_outcome(by_scalar)
        same_outcome(in_place)
        if info.min <= s <= info.max:  # a tensor of counts of x's dtype, and x as a number
            counts = np.full(n, s, d.np)
            same_outcome(lambda lib, c=counts: shift(lib.tensor(x), lib.tensor(c)))
            same_outcome(lambda lib, c=counts: shift(int(x[0]), lib.tensor(c)))
    assert (jt.full((6,), 5, dtype=jt.int64) << 64).tolist() == [0] * 6  # the probe's case


def test_shift_of_two_bools_raises_as_torch():
    same_outcome(lambda lib: lib.tensor([True, False]) << lib.tensor([True, True]),
                 exact_type=True)
    same_outcome(lambda lib: lib.tensor([True, False]) << 1)  # int64, in both


# -- the most negative integer divided by -1 ----------------------------------------------------
DIVISIONS = {
    "//": lambda a, b, lib: a // b,
    "%": lambda a, b, lib: a % b,
    "floor_divide": lambda a, b, lib: lib.floor_divide(a, b),
    "remainder": lambda a, b, lib: lib.remainder(a, b),
    "fmod": lambda a, b, lib: lib.fmod(a, b),
    "div floor": lambda a, b, lib: lib.div(a, b, rounding_mode="floor"),
    "div trunc": lambda a, b, lib: lib.div(a, b, rounding_mode="trunc"),
}


@pytest.mark.parametrize("d", SIGNED, ids=dtype_id)
@pytest.mark.parametrize("n", [1, 37])
@pytest.mark.parametrize("name", DIVISIONS)
def test_int_min_divided_by_minus_one_as_torch(d, n, name):
    fn = DIVISIONS[name]
    x = np.full(n, np.iinfo(d.np).min, d.np)

    def tensor_divisor(lib):
        return fn(lib.tensor(x), lib.full((n,), -1, dtype=lib_dtype(lib, d)), lib)

    def scalar_divisor(lib):
        return fn(lib.tensor(x), -1, lib)

    if name == "div trunc" and d.np.itemsize >= 4:
        # torch's CPU kernel traps there (SIGFPE, the process dies): jitensor's quotient wraps,
        # as torch's floor division
        for call in (tensor_divisor, scalar_divisor):
            assert call(jt).tolist() == x.tolist()
        return
    same_outcome(tensor_divisor)
    same_outcome(scalar_divisor)


# -- writes into read-only NumPy memory ---------------------------------------------------------
WRITES = {
    "add_": lambda t: t.add_(1),
    "mul_": lambda t: t.mul_(2),
    "neg_": lambda t: t.neg_(),
    "exp_": lambda t: t.exp_(),
    "clamp_": lambda t: t.clamp_(0, 1),
    "+=": lambda t: t.__iadd__(1),
    "fill_": lambda t: t.fill_(3),
    "zero_": lambda t: t.zero_(),
    "copy_": lambda t: t.copy_(jt.ones(t.shape)),
    "setitem": lambda t: t.__setitem__(0, 7.0),
    "out=": lambda t: jt.add(jt.ones(t.shape), 1, out=t),
    "uniform_": lambda t: t.uniform_(),
    "masked_fill_": lambda t: t.masked_fill_(jt.ones(t.shape, dtype=jt.bool), 2.0),
}


def _read_only(kind):
    if kind == "frombuffer":
        return np.frombuffer(np.arange(1.0, 7.0, dtype=np.float32).tobytes(), dtype=np.float32)
    return np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))


@pytest.mark.parametrize("kind", ["frombuffer", "broadcast_to"])
@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_writes_into_read_only_numpy_memory_raise_a_clear_error(kind, write):
    a = _read_only(kind)
    before = a.copy()
    with pytest.raises(RuntimeError, match="read-only|single memory location"):
        write(jt.from_numpy(a))
    np.testing.assert_array_equal(a, before)
    assert write(jt.from_numpy(a).clone()) is not None  # a copy takes the write


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_read_only_numpy_memory_and_torch():
    """torch warns (once a process) at from_numpy of a read-only array and then writes it
    (undefined behavior); jitensor refuses the write. An expanded tensor is refused by both,
    with torch's message."""
    b = _read_only("broadcast_to")
    with pytest.raises(RuntimeError) as theirs:
        torch.from_numpy(b).add_(1)
    with pytest.raises(RuntimeError) as ours:
        jt.from_numpy(b).add_(1)
    assert str(ours.value).endswith(str(theirs.value))


# -- subtraction with bools ---------------------------------------------------------------------
SUBTRACTIONS = {
    "sub(i, True)": lambda lib: lib.sub(lib.tensor([1, 2]), True),
    "sub(f, True)": lambda lib: lib.sub(lib.tensor([1.5, 2.0]), True),
    "rsub(i, True)": lambda lib: lib.rsub(lib.tensor([1, 2]), True),
    "rsub(f, True)": lambda lib: lib.rsub(lib.tensor([1.5]), True),
    "i - True": lambda lib: lib.tensor([1, 2]) - True,
    "True - i": lambda lib: True - lib.tensor([1, 2]),
    "f - True": lambda lib: lib.tensor([1.5]) - True,
    "i.sub_(True)": lambda lib: lib.tensor([1, 2]).sub_(True),
    "sub(i, b)": lambda lib: lib.sub(lib.tensor([1, 2]), lib.tensor([True, False])),
    "sub(b, 1)": lambda lib: lib.sub(lib.tensor([True, False]), 1),
    "sub(b, b)": lambda lib: lib.sub(lib.tensor([True]), lib.tensor([False])),
    "b - True": lambda lib: lib.tensor([True]) - True,
    "rsub(b, b)": lambda lib: lib.rsub(lib.tensor([True]), lib.tensor([False])),
    "sub(i, 1, alpha=True)": lambda lib: lib.sub(lib.tensor([1, 2]), 1, alpha=True),
    "add(i, i, alpha=True)": lambda lib: lib.add(lib.tensor([1, 2]), lib.tensor([1, 2]),
                                                 alpha=True),
    "add(f, f, alpha=True)": lambda lib: lib.add(lib.tensor([1.0]), lib.tensor([1.0]),
                                                 alpha=True),
    "i.add_(1, alpha=True)": lambda lib: lib.tensor([1, 2]).add_(1, alpha=True),
    "add(b, b, alpha=True)": lambda lib: lib.add(lib.tensor([True, False]),
                                                 lib.tensor([False, False]), alpha=True),
    "add(i, i, alpha=1.0)": lambda lib: lib.add(lib.tensor([1, 2]), lib.tensor([1, 2]),
                                                alpha=1.0),
    "rsub(i, 1, alpha=2)": lambda lib: lib.rsub(lib.tensor([1, 2]), 1, alpha=2),
}


@pytest.mark.parametrize("call", SUBTRACTIONS.values(), ids=SUBTRACTIONS.keys())
def test_subtraction_with_bools_raises_as_torch(call):
    ours, theirs = same_outcome(call)
    if ours[0] == "raises":  # torch's message (jitensor may add the value it refused)
        assert ours[2].startswith(theirs[2].rstrip(".")), (ours, theirs)


# -- reductions over dim=() ---------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (0,), (1,), (2, 3)], ids=str)
@pytest.mark.parametrize("dtype", ["int64", "int16", "bool", "float32"])
@pytest.mark.parametrize("name", ["logsumexp", "sum", "nansum", "amax", "amin", "all", "any",
                                  "mean", "std", "var", "count_nonzero"])
@pytest.mark.parametrize("dim", [(), []], ids=["tuple", "list"])
@pytest.mark.filterwarnings("ignore:.*degrees of freedom")  # std/var of one element, as torch
def test_reductions_over_no_dims_as_torch(name, dtype, shape, dim):
    data = np.arange(1, 1 + math.prod(shape)).reshape(shape)

    def call(lib, keepdim=False):
        x = lib.tensor(data.tolist(), dtype=getattr(lib, dtype))
        if name in ("all", "any", "count_nonzero") and keepdim:
            return getattr(lib, name)(x, dim)
        return getattr(lib, name)(x, dim, keepdim=keepdim)

    if name in ("amax", "amin") and not data.size:
        return  # no identity: both refuse, with messages of their own
    ours, theirs = same_outcome(call)
    if ours[0] == "raises" and name == "logsumexp":
        assert ours[2].endswith(theirs[2])
    same_outcome(lambda lib: call(lib, keepdim=True))


# -- overlapping writes: jitensor's rule (docs/design.md, "Writes that overlap their inputs") ----
def test_overlapping_in_place_input_is_read_as_a_snapshot_where_torch_refuses():
    y = torch.arange(6.0)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        y[1:] += y[:-1]
    x = jt.arange(6.0)
    x[1:] += x[:-1]
    expected = np.arange(6.0)
    expected[1:] = expected[1:] + expected[:-1].copy()
    np.testing.assert_array_equal(x.numpy(), expected)
    m = jt.arange(4.0).reshape(2, 2)
    product = (m.numpy() @ m.numpy().T).T
    jt.mm(m, m.t(), out=m.t())
    np.testing.assert_array_equal(m.numpy(), product)


# -- a differential test over random edge-case calls --------------------------------------------
def _ints(d):
    info = np.iinfo(d.np)
    return st.one_of(st.sampled_from([int(info.min), int(info.max), -1, 0, 1, 2, 3, 5, -7]),
                     st.integers(int(info.min), int(info.max))).filter(
        lambda v: info.min <= v <= info.max)


# floats into integers; none at +-2^63, where torch's range check (in double) lets 2^63 through
# and casts it to int min while jitensor raises
_FLOATS = st.sampled_from([NAN, INF, -INF, 1e30, -1e30, 2.5, -0.5, -1.0, 127.9, 128.0, -128.9,
                           255.5, 256.0, 32767.5, 3e9, -3e9, 0.0])


@st.composite
def edge_calls(draw):
    d = draw(st.sampled_from(INT_DTYPES))
    n = draw(st.integers(1, 40))
    x = np.array(draw(st.lists(_ints(d), min_size=n, max_size=n)), dtype=d.np)
    kind = draw(st.sampled_from(["shift", "division", "conversion", "sub"]))
    if kind == "shift":
        op = draw(st.sampled_from(["<<", ">>", "<<=", ">>="]))
        count = draw(st.one_of(st.integers(-70, 130), st.sampled_from(
            [np.iinfo(d.np).bits - 1, np.iinfo(d.np).bits, 64])))
        as_tensor = draw(st.booleans()) and np.iinfo(d.np).min <= count <= np.iinfo(d.np).max

        def call(lib):
            t = lib.tensor(x)
            c = lib.full((n,), count, dtype=lib_dtype(lib, d)) if as_tensor else count
            if op == "<<=":
                t <<= c
                return t
            if op == ">>=":
                t >>= c
                return t
            return t << c if op == "<<" else t >> c
        return f"{x!r} {op} {count} (tensor: {as_tensor})", call
    if kind == "division":
        name = draw(st.sampled_from(sorted(DIVISIONS)))
        divisor = np.array(draw(st.lists(st.sampled_from([-1, 1, 2, -3, 0]), min_size=n,
                                         max_size=n)), dtype=np.int64).astype(d.np)
        if name == "div trunc" and d.np.itemsize >= 4:  # torch traps on int min / -1
            x = np.where((x == np.iinfo(d.np).min) & (divisor == -1), 0, x).astype(d.np)
        return f"{x!r} {name} {divisor!r}", lambda lib: DIVISIONS[name](
            lib.tensor(x), lib.tensor(divisor), lib)
    if kind == "conversion":
        values = draw(st.lists(_FLOATS, min_size=1, max_size=4))
        how = draw(st.sampled_from(["tensor", "as_tensor", "full", "fill_"]))

        def call(lib):
            dt = lib_dtype(lib, d)
            if how == "full":
                return lib.full((2,), values[0], dtype=dt)
            if how == "fill_":
                return lib.zeros(2, dtype=dt).fill_(values[0])
            return getattr(lib, how)(values, dtype=dt)
        return f"{how}({values}, {d})", call
    other = draw(st.sampled_from([True, False, 1, "bool tensor"]))
    swap = draw(st.booleans())

    def call(lib):
        y = lib.tensor([True] * n) if other == "bool tensor" else other
        a, b = (y, lib.tensor(x)) if swap else (lib.tensor(x), y)
        return a - b if isinstance(a, lib.Tensor) or isinstance(b, lib.Tensor) else None
    return f"sub {x!r} {other!r} (swapped: {swap})", call


@settings(max_examples=300)
@given(edge_calls())
def test_edge_calls_differential_against_torch(case):
    """Either both raise, or both give the same dtype and values."""
    _, call = case
    same_outcome(call, exact_type=False)
