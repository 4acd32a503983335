"""Elementwise ops against NumPy (values) and torch (values and result dtypes, where installed)."""
import math
import os
import pickle  # noqa: F401  (tensors stay picklable after ops attach methods)
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import jitensor as jt

INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float32", "float64"]
ALL = ["bool"] + INTS + FLOATS
FLOAT_RESULT = {"div", "atan2", "copysign", "xlogy"}
FLOATS_ONLY = {"hypot", "logaddexp", "logaddexp2"}  # integer and bool operands raise, as in torch
BOOL_RESULT = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}

# name -> NumPy reference on operands already converted to the compute dtype
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "fmod": np.fmod,
    "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2, "eq": np.equal,
    "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "hypot": np.hypot, "copysign": np.copysign,
    "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2, "fmax": np.fmax, "fmin": np.fmin,
    "xlogy": lambda x, y: np.where(np.isnan(y), y, np.where(x == 0, 0, x * np.log(y))),
}
NO_BOOL = {"sub", "floor_divide", "remainder", "fmod", "pow"}
INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor"}


def sample(shape, dtype, rng, nonzero=False):
    """Values that exercise each dtype: negatives, zeros, NaN/inf for floats."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -50), min(info.max, 50)
        a = rng.integers(lo, hi + 1, size=shape).astype(dtype)
        if nonzero:
            a[a == 0] = 1
        return a
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    if a.size > 3:
        a.flat[0], a.flat[1] = np.nan, np.inf
    return a


def expected_dtype(name, a, b):
    """torch's rule for the result dtype: promotion, then the op's own rule."""
    promoted = jt.result_type(a, b)
    if name in BOOL_RESULT:
        return jt.bool
    if name in FLOAT_RESULT and not promoted.is_floating_point:
        return jt.get_default_dtype()
    return promoted


def reference(name, x, y, dtype, promoted=None):
    """NumPy's answer with both operands converted to torch's promoted dtype first (what torch
    computes in: uint8 < int8 compares as uint8), cast to the result dtype."""
    xs, ys = np.asarray(x), np.asarray(y)
    if promoted is None:
        promoted = jt.result_type(jt.tensor(xs), jt.tensor(ys))
    compute = promoted.np
    if name in FLOAT_RESULT and not promoted.is_floating_point:
        compute = np.float32
    with np.errstate(all="ignore"):
        return BINARY[name](xs.astype(compute), ys.astype(compute)).astype(dtype.np)


def assert_same(t, expected, dtype):
    assert t.dtype is dtype, (t.dtype, dtype)
    assert tuple(t.shape) == expected.shape
    np.testing.assert_array_equal(t.numpy(), expected) if dtype.name in INTS + ["bool"] else \
        np.testing.assert_allclose(t.numpy(), expected, rtol=2e-6 if dtype.name == "float32"
                                   else 1e-12, equal_nan=True)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ALL)
def test_binary_same_dtype(name, dtype):
    if dtype == "bool" and name in NO_BOOL | {"sub"}:
        with pytest.raises((RuntimeError, NotImplementedError)):
            getattr(jt, name)(jt.tensor([True]), jt.tensor([False]))
        return
    if dtype not in FLOATS and name in FLOATS_ONLY:
        with pytest.raises(NotImplementedError, match=name):
            getattr(jt, name)(jt.ones(2, dtype=dtype), jt.ones(2, dtype=dtype))
        return
    if dtype in FLOATS and name in INT_ONLY:
        with pytest.raises(TypeError, match=name):
            getattr(jt, name)(jt.ones(2, dtype=dtype), jt.ones(2, dtype=dtype))
        return
    rng = np.random.default_rng(0)
    x = sample((3, 4), dtype, rng)
    y = sample((3, 4), dtype, rng, nonzero=name in {"floor_divide", "remainder", "fmod"})
    got = getattr(jt, name)(jt.tensor(x), jt.tensor(y))
    dt = expected_dtype(name, jt.tensor(x), jt.tensor(y))
    assert_same(got, reference(name, x, y, dt), dt)


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_pow(dtype):
    rng = np.random.default_rng(1)
    x = sample((5,), dtype, rng)
    y = np.array([0, 1, 2, 3, 2], dtype=dtype)
    got = jt.pow(jt.tensor(x), jt.tensor(y))
    with np.errstate(all="ignore"):
        assert_same(got, np.power(x, y), jt.tensor(x).dtype)


def test_integer_pow_rules():
    x = jt.tensor([3, -2, 1, -1], dtype=jt.int32)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        x ** -1
    # a negative exponent tensor gives 0 unless the base is 1 or -1, as torch does
    assert (x ** jt.tensor([-1, -1, -3, -3], dtype=jt.int32)).tolist() == [0, 0, 1, -1]
    assert (2 ** x[:2]).tolist() == [8, 0] and (2 ** x[:2]).dtype is jt.int32
    assert (2.0 ** x[:2]).tolist() == [8.0, 0.25]


@given(mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
       st.sampled_from(["add", "mul", "maximum", "lt", "div", "fmin", "xlogy", "copysign"]),
       st.sampled_from([("float32", "float32"), ("int64", "float32"), ("int32", "int32"),
                        ("uint8", "int8"), ("bool", "int16"), ("float64", "float32")]))
def test_broadcasting_and_promotion(shapes, name, dts):
    (s1, s2), _ = shapes
    rng = np.random.default_rng(2)
    x, y = sample(s1, dts[0], rng), sample(s2, dts[1], rng)
    tx, ty = jt.tensor(x), jt.tensor(y)
    dt = expected_dtype(name, tx, ty)
    assert_same(getattr(jt, name)(tx, ty), reference(name, x, y, dt), dt)


@given(st.sampled_from(["add", "sub", "mul", "div", "floor_divide", "remainder", "lt", "eq",
                        "maximum"]),
       st.sampled_from(ALL), st.one_of(st.integers(-5, 5).filter(bool),
                                       st.floats(-5, 5).filter(bool), st.booleans()),
       st.booleans())
def test_python_scalars_both_sides(name, dtype, scalar, reflected):
    x = sample((2, 3), dtype, np.random.default_rng(3), nonzero=True)
    tx = jt.tensor(x)
    args = (scalar, tx) if reflected else (tx, scalar)
    dt_promoted = jt.result_type(*args)
    try:
        got = getattr(jt, name)(*args)
    except (RuntimeError, NotImplementedError) as e:
        if "ZeroDivisionError" in str(e):  # a False scalar or a bool tensor as the divisor
            assert (dtype == "bool" and reflected) or (scalar is False and not reflected)
            return
        assert dt_promoted is jt.bool or (name in {"floor_divide", "remainder"} and
                                          isinstance(scalar, bool)) or \
            name == "sub" and (dtype == "bool" or isinstance(scalar, bool))
        return
    dt = expected_dtype(name, *args)
    assert got.dtype is dt and tuple(got.shape) == (2, 3)
    if name in FLOAT_RESULT and not dt_promoted.is_floating_point:
        s = np.array(scalar, np.float32)  # computed in float: the scalar is not wrapped first
    else:
        s = np.array(scalar).astype(dt_promoted.np if not isinstance(scalar, float) or
                                    dt_promoted.is_floating_point else np.float64)
    ref_args = (s, x) if reflected else (x, s)
    assert_same(got, reference(name, *ref_args, dt, promoted=dt_promoted), dt)


UNARY = {
    "neg": np.negative, "abs": np.abs, "sign": lambda a: np.nan_to_num(np.sign(a), nan=0),
    "exp": np.exp, "log": np.log,
    "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "sigmoid": lambda a: 1 / (1 + np.exp(-a)), "reciprocal": np.reciprocal,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "relu": lambda a: np.where((a > 0) | (a != a), a, 0).astype(a.dtype),
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "square": np.square, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "logical_not": np.logical_not, "bitwise_not": np.invert, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "log2": np.log2, "log10": np.log10,
    "exp2": np.exp2, "erf": np.vectorize(math.erf), "erfc": np.vectorize(math.erfc),
}
UNARY_FLOAT = {"exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tanh", "sigmoid",
               "reciprocal", "rsqrt", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
               "acosh", "atanh", "log2", "log10", "exp2", "erf", "erfc"}
UNARY_BOOL = {"isnan", "isinf", "isfinite", "logical_not"}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ALL)
def test_unary(name, dtype):
    x = sample((4, 3), dtype, np.random.default_rng(4))
    fn = getattr(jt, name)
    if dtype == "bool" and name in {"neg", "abs", "relu", "floor", "ceil", "round", "trunc"}:
        with pytest.raises((RuntimeError, NotImplementedError)):
            fn(jt.tensor(x))
        return
    if dtype in FLOATS and name == "bitwise_not":
        with pytest.raises(TypeError):
            fn(jt.tensor(x))
        return
    got = fn(jt.tensor(x))  # NaN's sign is 0 in torch (NumPy says NaN)
    if name in UNARY_BOOL:
        dt = jt.bool
    elif name in UNARY_FLOAT and dtype not in FLOATS:
        dt = jt.float32
    elif name == "square" and dtype == "bool":
        dt = jt.int64
    else:
        dt = jt.tensor(x).dtype
    with np.errstate(all="ignore"):
        src = x.astype(np.float32) if dt is jt.float32 and dtype not in FLOATS else x
        if name == "square" and dtype == "bool":
            src = x.astype(np.int64)
        ref = x if name == "sign" and dtype == "bool" else np.asarray(UNARY[name](src))
    assert_same(got, ref.astype(dt.np), dt)


def test_sigmoid_does_not_overflow():
    got = jt.sigmoid(jt.tensor([-1000.0, 0.0, 1000.0]))
    assert got.tolist() == [0.0, 0.5, 1.0]


def test_division_semantics_match_python():
    a = [-7, -3, 3, 7]
    b = [2, -2, 2, -2]
    x, y = jt.tensor(a), jt.tensor(b)
    assert (x // y).tolist() == [p // q for p, q in zip(a, b, strict=False)]
    assert (x % y).tolist() == [p % q for p, q in zip(a, b, strict=False)]
    assert jt.fmod(x, y).tolist() == [int(math.fmod(p, q)) for p, q in zip(a, b, strict=False)]
    assert (jt.div(x, y, rounding_mode="trunc").tolist()
            == [int(p / q) for p, q in zip(a, b, strict=False)])
    fx, fy = x.double(), y.double()
    assert (jt.div(fx, fy, rounding_mode="floor").tolist()
            == [p // q for p, q in zip(a, b, strict=False)])
    assert (fx % fy).tolist() == [p % q for p, q in zip(a, b, strict=False)]
    assert (fx / 0).tolist() == [-math.inf, -math.inf, math.inf, math.inf]
    with pytest.raises(ValueError, match="rounding_mode"):
        jt.div(x, y, rounding_mode="round")


@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod"])
def test_integer_division_by_zero_raises_and_writes_nothing(op):
    out = jt.full((3,), 7)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(jt, op)(jt.tensor([1, 2, 3]), jt.tensor([1, 0, 1]), out=out)
    assert out.tolist() == [7, 7, 7]


def test_wraparound_and_scalar_wrapping_like_torch():
    u = jt.tensor([200, 3], dtype=jt.uint8)
    assert (u + 300).tolist() == [244, 47] and (u + 300).dtype is jt.uint8
    assert (u < 300).tolist() == [False, True]  # 300 wraps to 44 as torch casts it
    assert (u * 2.5).dtype is jt.float32 and (u * 2.5).tolist() == [500.0, 7.5]
    assert (-u).tolist() == [56, 253]


def test_bool_arithmetic_like_torch():
    b = jt.tensor([True, False])
    assert (b + b).dtype is jt.bool and (b + b).tolist() == [True, False]
    assert (b * b).tolist() == [True, False]
    assert (~b).tolist() == [False, True]
    assert (b / b).dtype is jt.float32
    with pytest.raises(RuntimeError, match="Subtraction"):
        _ = b - b
    with pytest.raises(RuntimeError, match="Negation"):
        _ = -b


def test_nan_propagation():
    x = jt.tensor([math.nan, 1.0, 2.0])
    y = jt.tensor([0.0, math.nan, 1.0])
    assert np.isnan(jt.maximum(x, y).numpy()[:2]).all()
    assert np.isnan(jt.minimum(x, y).numpy()[:2]).all()
    assert math.isnan(jt.clamp(x, 0, 1)[0].item())
    assert math.isnan(jt.relu(x)[0].item())


def test_clamp_forms():
    x = jt.tensor([-2.0, 0.5, 3.0])
    assert jt.clamp(x, -1, 1).tolist() == [-1.0, 0.5, 1.0]
    assert jt.clamp(x, min=0).tolist() == [0.0, 0.5, 3.0]
    assert jt.clamp(x, max=0).tolist() == [-2.0, 0.0, 0.0]
    assert jt.clamp(x, jt.tensor([0.0, 1.0, 0.0]), 2).tolist() == [0.0, 1.0, 2.0]
    i = jt.tensor([3, -2], dtype=jt.int32)
    assert jt.clamp(i, 0.5).dtype is jt.float32 and jt.clamp(i, 0.5).tolist() == [3.0, 0.5]
    assert jt.clamp(i, min=0).dtype is jt.int32
    with pytest.raises(RuntimeError, match="At least one"):
        jt.clamp(x)
    x.clamp_(0, 1)
    assert x.tolist() == [0.0, 0.5, 1.0]


def test_where():
    c = jt.tensor([True, False, True])
    got = jt.where(c, jt.tensor([1, 2, 3], dtype=jt.int32), 2.5)
    assert got.dtype is jt.float32 and got.tolist() == [1.0, 2.5, 3.0]
    got = jt.where(c[:, None] if hasattr(c, "unsqueeze") else jt.tensor([[True], [False]]),
                   jt.ones(3), jt.zeros(3))
    assert tuple(got.shape) in {(3, 3), (2, 3)}
    with pytest.raises(RuntimeError, match="boolean"):
        jt.where(jt.tensor([1, 0]), jt.ones(2), jt.zeros(2))


def test_nan_to_num():
    x = jt.tensor([math.nan, math.inf, -math.inf, 1.5])
    got = jt.nan_to_num(x)
    f = np.finfo(np.float32)
    assert got.tolist() == [0.0, float(f.max), float(f.min), 1.5]
    assert jt.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0).tolist() == [1.0, 2.0, -2.0, 1.5]
    assert jt.nan_to_num(jt.tensor([1, 2])).tolist() == [1, 2]


def test_inplace_rules_like_torch():
    z = jt.zeros(3, dtype=jt.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        z.add_(1.5)
    assert z.tolist() == [0, 0, 0]
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        jt.zeros(3).add_(jt.zeros(2, 3))
    x = jt.ones(2, 3)
    x += jt.tensor([1.0, 2.0, 3.0])
    x *= 2
    assert x.tolist() == [[4.0, 6.0, 8.0]] * 2
    f = jt.ones(2)
    f += jt.tensor([1, 2])  # int into float: allowed
    assert f.tolist() == [2.0, 3.0]
    x.sub_(1, alpha=2)
    assert x.tolist() == [[2.0, 4.0, 6.0]] * 2
    y = x
    y.exp_()
    assert y is x


def test_out_argument():
    a, b = jt.tensor([1, 2]), jt.tensor([3, 4])
    out = jt.empty(2, dtype=jt.float64)
    r = jt.add(a, b, out=out)
    assert r is out and out.tolist() == [4.0, 6.0]
    bad = jt.full((2,), 9)
    with pytest.raises(RuntimeError, match="can't be cast"):
        jt.add(jt.ones(2), jt.ones(2), out=bad)
    with pytest.raises(RuntimeError, match="shape"):
        jt.add(a, b, out=jt.empty(3, dtype=jt.int64))
    assert bad.tolist() == [9, 9]


def test_out_aliasing_an_input_is_safe():
    base = np.arange(6, dtype=np.float32)
    t = jt.from_numpy(base)
    a, b = jt.from_numpy(base[1:]), jt.from_numpy(base[:-1])
    jt.add(b, b, out=a)  # out overlaps b shifted by one element: computed through a temp
    assert base.tolist() == [0.0, 0.0, 2.0, 4.0, 6.0, 8.0]
    assert t.tolist() == base.tolist()


def test_large_arrays_take_the_parallel_path():
    n = (1 << 17) + 3
    x = np.random.default_rng(5).random(n).astype(np.float32)
    tx = jt.tensor(x)
    np.testing.assert_allclose((tx * 2 + 1).numpy(), x * 2 + 1, rtol=1e-6)
    m = np.random.default_rng(6).random((600, 300))
    tm = jt.tensor(m)
    col = jt.tensor(m[:, :1])
    np.testing.assert_allclose((tm - col).numpy(), m - m[:, :1])



def test_large_outputs_take_the_streaming_path():
    """Outputs of STREAM_MIN bytes and more are written by streaming stores from a scratch row:
    every element must land, whatever the output's alignment, its tail, its dtype's width and
    the operands' layout, and nothing outside the output may change."""
    from jitensor.kernels.cpu.elementwise import STREAM_MIN
    rng = np.random.default_rng(7)
    n = STREAM_MIN // 4 + 37
    x = rng.random(n + 8).astype(np.float32)
    y = rng.random(n + 8).astype(np.float32)
    for shift in (0, 1, 3, 5):  # output starts 0, 4, 12, 20 bytes past a buffer's start
        buf = np.full(n + 8, -1.0, np.float32)
        out = buf[shift:shift + n]
        jt.add(jt.from_numpy(x[:n]), jt.from_numpy(y[2:n + 2]), out=jt.from_numpy(out))
        np.testing.assert_array_equal(out, x[:n] + y[2:n + 2])
        assert (buf[:shift] == -1).all() and (buf[shift + n:] == -1).all()
    big = jt.from_numpy(x[:n])
    np.testing.assert_array_equal((big * 3).numpy(), x[:n] * np.float32(3))
    np.testing.assert_array_equal((big > 0.5).numpy(), x[:n] > 0.5)  # 1-byte outputs
    np.testing.assert_array_equal(big.neg().numpy(), -x[:n])
    side = 1460  # rows of a broadcast operand, each row's lines streamed separately
    m = rng.random((side, side)).astype(np.float32)
    np.testing.assert_array_equal((jt.from_numpy(m) + jt.from_numpy(y[:side])).numpy(),
                                  m + y[:side])
    inplace = x[:n].copy()
    t = jt.from_numpy(inplace)
    t += jt.from_numpy(y[:n])
    np.testing.assert_array_equal(inplace, x[:n] + y[:n])
    strided = np.zeros(2 * n, np.float32)  # a strided out= is written element by element
    jt.add(big, 1.0, out=jt.from_numpy(strided[::2]))
    np.testing.assert_array_equal(strided[::2], x[:n] + np.float32(1))
    assert (strided[1::2] == 0).all()

def test_non_contiguous_operands():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    ta = jt.from_numpy(a)
    sliced = jt.from_numpy(a[:, ::2])
    transposed = jt.from_numpy(a.T)
    np.testing.assert_array_equal((sliced * 2).numpy(), a[:, ::2] * 2)
    np.testing.assert_array_equal((transposed + transposed).numpy(), a.T + a.T)
    np.testing.assert_array_equal((ta + jt.from_numpy(a[0])).numpy(), a + a[0])


def test_device_mismatch_and_bad_operands():
    x = jt.ones(2)
    assert (x == None) is False  # noqa: E711  (Python falls back to identity)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(RuntimeError, match="must match the size"):
        jt.ones(2) + jt.ones(3)


def test_operators_and_methods_agree():
    x = jt.tensor([1.0, -2.0, 3.0])
    assert (x + 1).tolist() == x.add(1).tolist() == (1 + x).tolist()
    assert (1 - x).tolist() == [0.0, 3.0, -2.0]
    assert (2 / x).tolist() == pytest.approx([2.0, -1.0, 2.0 / 3.0])
    assert (x ** 2).tolist() == x.pow(2).tolist() == [1.0, 4.0, 9.0]
    assert abs(x).tolist() == x.abs().tolist() == [1.0, 2.0, 3.0]
    assert (-x).tolist() == x.neg().tolist()
    assert (x > 0).tolist() == x.gt(0).tolist() == [True, False, True]
    i = jt.tensor([6, 3])
    assert (i & 2).tolist() == [2, 2] and (i | 1).tolist() == [7, 3]
    assert (i ^ 1).tolist() == [7, 2] and (i << 1).tolist() == [12, 6]
    assert (i >> 1).tolist() == [3, 1] and (~i).tolist() == [-7, -4]
    assert {x: 1}[x] == 1  # tensors stay hashable


def test_torch_oracle_result_dtypes_and_values():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    for name in sorted(BINARY):
        for d1, d2 in [("int32", "float32"), ("uint8", "int8"), ("bool", "int64"),
                       ("float64", "float32"), ("int16", "int16")]:
            x, y = sample((3,), d1, rng, nonzero=True), sample((3,), d2, rng, nonzero=True)
            try:
                want = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y))
            except (RuntimeError, NotImplementedError, TypeError):
                with pytest.raises((RuntimeError, NotImplementedError, TypeError)):
                    getattr(jt, name)(jt.tensor(x), jt.tensor(y))
                continue
            got = getattr(jt, name)(jt.tensor(x), jt.tensor(y))
            assert got.dtype.name == str(want.dtype).split(".")[1], (name, d1, d2)
            np.testing.assert_allclose(got.numpy().astype(np.float64),
                                       want.numpy().astype(np.float64), rtol=1e-6,
                                       equal_nan=True, err_msg=f"{name} {d1} {d2}")
    for name in sorted(UNARY):
        for d in ALL:
            x = sample((4,), d, rng)
            try:
                want = getattr(torch, name)(torch.from_numpy(x))
            except (RuntimeError, NotImplementedError, TypeError):
                with pytest.raises((RuntimeError, NotImplementedError, TypeError)):
                    getattr(jt, name)(jt.tensor(x))
                continue
            got = getattr(jt, name)(jt.tensor(x))
            assert got.dtype.name == str(want.dtype).split(".")[1], (name, d)
            np.testing.assert_allclose(got.numpy().astype(np.float64),
                                       want.numpy().astype(np.float64), rtol=1e-5,
                                       equal_nan=True, err_msg=f"{name} {d}")


# -- closeness and composites ------------------------------------------------------------------
@given(st.lists(st.sampled_from([0.0, 1.0, 1.0 + 1e-6, 1.1, -1.0, np.inf, -np.inf, np.nan,
                                 1e-9, 0.0 - 1e-9]), min_size=2, max_size=8).map(np.array),
       st.sampled_from([1e-5, 0.0, 0.1]), st.sampled_from([1e-8, 0.0, 0.5]), st.booleans())
def test_isclose_matches_numpy(values, rtol, atol, equal_nan):
    a, b = values, values[::-1].copy()
    got = jt.isclose(jt.tensor(a), jt.tensor(b), rtol, atol, equal_nan)
    assert got.dtype is jt.bool
    np.testing.assert_array_equal(got.numpy(), np.isclose(a, b, rtol, atol, equal_nan))
    assert jt.allclose(jt.tensor(a), jt.tensor(b), rtol, atol, equal_nan) == \
        np.allclose(a, b, rtol, atol, equal_nan)


def test_isclose_integers_bools_equal_and_errors():
    assert jt.isclose(jt.tensor([1, 5, 100]), jt.tensor([1, 6, 101]), atol=1).tolist() == \
        [True, True, True]
    assert jt.isclose(jt.tensor([True, False]), jt.tensor([True, True])).tolist() == [True, False]
    assert jt.isclose(jt.tensor([1.0, 2.0]), 1.0).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="same dtype"):
        jt.isclose(jt.tensor([1]), jt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="rtol must be greater"):
        jt.isclose(jt.ones(1), jt.ones(1), rtol=-1)
    assert jt.equal(jt.tensor([1, 2]), jt.tensor([1, 2]))
    assert jt.equal(jt.tensor([1, 2]), jt.tensor([1.0, 2.0]))  # compared after promotion
    assert not jt.equal(jt.tensor([1, 2]), jt.tensor([[1, 2]]))
    # integer differences are taken in float, as torch does: no wrap-around
    assert not jt.isclose(jt.tensor([0], dtype=jt.uint8), jt.tensor([255], dtype=jt.uint8),
                          atol=1).item()
    assert not jt.isclose(jt.tensor([-2 ** 63]), jt.tensor([2 ** 63 - 1]), atol=1).item()
    assert not jt.equal(jt.tensor([np.nan]), jt.tensor([np.nan]))


def test_lerp_addcmul_addcdiv():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3))
    for fn in (lambda ns, x, y, z: ns.lerp(x, y, 0.2), lambda ns, x, y, z: ns.lerp(x, y, 1.0),
               lambda ns, x, y, z: ns.lerp(x, y, z), lambda ns, x, y, z: x.addcmul(y, z, value=3),
               lambda ns, x, y, z: ns.addcdiv(x, y, z, value=-0.5)):
        got = fn(jt, *map(jt.tensor, (a, b, c)))
        want = fn(torch, *map(torch.tensor, (a, b, c)))
        assert got.dtype is jt.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    assert jt.lerp(jt.tensor(a), jt.tensor(b), 1.0).tolist() == b.tolist()  # exact at the end
    x = jt.tensor(a)
    assert x.addcmul_(jt.tensor(b), jt.tensor(c)) is x
    np.testing.assert_allclose(x.numpy(), a + b * c, rtol=1e-6)
    with pytest.raises(RuntimeError, match="integer division"):
        jt.addcdiv(jt.ones(2), jt.tensor([1, 2]), jt.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="dtype of input"):
        jt.lerp(jt.ones(2), jt.ones(2, dtype=jt.float64), 0.5)
    with pytest.raises(RuntimeError, match="broadcast shape"):
        jt.ones(3).addcmul_(jt.ones(2, 3), jt.ones(3))
    i = jt.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):  # float result into int64 self
        i.addcmul_(jt.tensor([3.0, 4.0]), jt.tensor([1.0, 1.0]))
    assert i.tolist() == [1, 2]
    with pytest.raises(NotImplementedError, match="float"):
        jt.lerp(i, i, 0.5)


def test_in_place_aliases():
    x = jt.tensor([-1.0, 2.0])
    assert x.negative_() is x and x.tolist() == [1.0, -2.0]
    assert x.absolute_().tolist() == [1.0, 2.0] and x.arcsin_ is not None
    assert x.true_divide_(2).tolist() == [0.5, 1.0] and x.divide_(0.5).tolist() == [1.0, 2.0]


def test_fmax_fmin_keep_the_first_of_equal_values():
    a, b = jt.tensor([0.0, -0.0, np.nan]), jt.tensor([-0.0, 0.0, 1.0])
    got = jt.fmax(a, b).numpy()
    assert list(np.signbit(got)) == [False, True, False] and got[2] == 1.0
    assert list(np.signbit(jt.fmin(a, b).numpy()[:2])) == [False, True]


def _trig_arguments(dtype):
    """Where sin/cos/tan's vectorised reduction is hard: near multiples of pi/2 (the results
    near 0 or infinity, which libm recomputes), tiny and signed-zero arguments, the edge of the
    reduction's range (2^19) and beyond it, inf and NaN; with a random spread."""
    near = np.arange(-2000, 2001) * (np.pi / 2)
    near = np.concatenate([near, near * 337.0]).astype(dtype)
    tiny = np.geomspace(np.finfo(dtype).tiny / 4, 1.0, 500).astype(dtype)
    edge = dtype(2.0 ** 19)
    return np.concatenate([
        near, np.nextafter(near, dtype(np.inf)), np.nextafter(near, dtype(-np.inf)),
        tiny, -tiny, np.linspace(-edge * 1.01, edge * 1.01, 3001, dtype=dtype),
        np.array([0.0, -0.0, 1e7, -3e9, 1e30, np.finfo(dtype).max, np.inf, -np.inf, np.nan],
                 dtype),
        np.random.default_rng(7).uniform(-100, 100, 5000).astype(dtype)])


# bounds in ulp: every float32 with |x| < 2^19 was checked (float64 results of NumPy's as
# the reference); float64 against NumPy's (glibc's, itself within an ulp)
_TRIG_ULP = {("sin", np.float32): 2.0, ("cos", np.float32): 2.0, ("tan", np.float32): 4.0,
             ("sin", np.float64): 2.0, ("cos", np.float64): 2.0, ("tan", np.float64): 3.0}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_is_within_a_few_ulp_of_libm_everywhere(name, dtype):
    """The CPU's vectorised sin/cos/tan (kernels/scalar/libm.py) with the serial kernel (one
    row at a time) and the parallel one (a large, strided operand)."""
    x = _trig_arguments(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
    for got in (getattr(jt, name)(jt.tensor(x)).numpy(),
                getattr(jt, name)(jt.tensor(np.repeat(x, 2))[::2]).numpy()):
        assert got.dtype == dtype
        finite = np.isfinite(want)
        err = np.abs(got[finite].astype(np.float64) - want[finite]) / ulp[finite]
        assert err.max() <= _TRIG_ULP[name, dtype], x[finite][np.argmax(err)]
        assert np.isnan(got[~finite]).all()
        zero = x == 0
        assert (np.signbit(got[zero]) == np.signbit(getattr(np, name)(x[zero]))).all()


def test_trig_of_integers_and_in_place():
    x = jt.tensor([0, 1, -2, 1000000, 2 ** 40])
    np.testing.assert_allclose(jt.sin(x).numpy(), np.sin(np.float32([0, 1, -2, 1e6, 2.0 ** 40])),
                               rtol=2e-7)
    y = jt.tensor([0.5, 4.0, 1e9], dtype=jt.float64)
    y.cos_()
    np.testing.assert_allclose(y.numpy(), np.cos([0.5, 4.0, 1e9]), rtol=1e-15)


_F64_ARGS = {
    "log": np.concatenate([np.geomspace(5e-324, 1.7e308, 200_001), np.linspace(0.5, 2, 100_001),
                           [0.0, -0.0, -1.0, 1.0, np.inf, -np.inf, np.nan]]),
    "tanh": np.concatenate([np.linspace(-25, 25, 200_001), np.geomspace(1e-300, 1, 3000),
                            -np.geomspace(1e-300, 1, 3000), np.nextafter(0.625, [0, 1]),
                            [0.0, -0.0, 0.625, -0.625, np.inf, -np.inf, np.nan]])}


@pytest.mark.parametrize("name, bound", [("log", 1.0), ("tanh", 2.0)])
def test_vectorised_float64_math_is_within_ulps_of_libm(name, bound):
    """The CPU's branch-free float64 log (fdlibm's) and tanh (Cephes'), libm.py; NaN, inf,
    signed zeros and denormals included."""
    x = _F64_ARGS[name]
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    got = getattr(jt, name)(jt.tensor(x)).numpy()
    assert got.dtype == np.float64
    finite = np.isfinite(want)
    err = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]))
    assert err.max() <= bound, x[finite][np.argmax(err)]
    np.testing.assert_array_equal(got[~finite], want[~finite])
    zero = want == 0
    assert (np.signbit(got[zero]) == np.signbit(want[zero])).all()


def test_small_in_place_ops_match_numpy():
    """The in-place fast path (same-shape operands of one dtype, numbers, the tensor itself)
    and the cases it hands to the general path: overlapping views, non-contiguous self,
    promotion, alpha."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    x = jt.tensor(a, requires_grad=True)
    with jt.no_grad():
        x.add_(jt.tensor(b)).mul_(2.0).sub_(x).div_(jt.tensor(b)).add_(1)
    np.testing.assert_allclose(x.detach().numpy(), ((a + b) * 2 - (a + b) * 2) / b + 1)
    assert x._version == 5 and x.dtype is jt.float64  # (saved tensors are checked by it)
    z, w = jt.arange(6.0), np.arange(6.0)
    z[1:].add_(z[:-1])  # overlapping: computed as if from a copy
    w[1:] += w[:-1].copy()
    assert z.tolist() == w.tolist()
    t = jt.tensor(a).t()
    t.add_(1.0)
    np.testing.assert_allclose(t.numpy(), a.T + 1)
    i = jt.arange(6)
    i.add_(2).mul_(3).sub_(jt.ones(6, dtype=jt.int64), alpha=2)
    assert i.tolist() == [(v + 2) * 3 - 2 for v in range(6)] and i.dtype is jt.int64
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.div_(2)
    assert i.tolist() == [(v + 2) * 3 - 2 for v in range(6)]
    f = jt.ones(3, dtype=jt.float32)
    f.add_(jt.ones(3, dtype=jt.float64))  # promotes, then casts back to float32
    assert f.dtype is jt.float32 and f.tolist() == [2.0] * 3
    # a trailing-shape operand (a bias row) broadcasts on the fast path; a (4, 1) one does not
    m, row, col = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((4, 1))
    y = jt.tensor(m)
    y.add_(jt.tensor(row)).mul_(jt.tensor(col))
    np.testing.assert_allclose(y.numpy(), (m + row) * col)
    assert y.dtype is jt.float64 and y.shape == (4, 3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        jt.tensor(row).add_(jt.tensor(m))
    v = jt.tensor(m)
    v[1:].add_(v[0])  # the row overlaps self: general path, as if from a copy
    np.testing.assert_allclose(v.numpy(), np.vstack([m[:1], m[1:] + m[0]]))



@pytest.mark.parametrize("n", [7, 1 << 17])  # the serial kernel, and the threads' slices
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_in_place_kernel_matches_numpy(n, dtype):
    """add_, sub_ (alpha), mul_ and div_ into self run a kernel of their own (the general
    loops' overlap test of out and self, the same array, made them scalar): same-shape
    operands, numbers, one element expanded (a full reduction's gradient) and self itself."""
    rng = np.random.default_rng(5)
    a = rng.integers(1, 9, n).astype(dtype)
    b = rng.integers(1, 9, n).astype(dtype)
    x, want = jt.tensor(a), a.copy()
    x.add_(jt.tensor(b)).sub_(jt.tensor(b), alpha=3).mul_(jt.tensor(b)).add_(x)
    want = ((want + b) - 3 * b) * b
    want = want + want
    x.add_(jt.tensor(np.array(4, dtype)).expand(n)).mul_(2)
    want = (want + 4) * 2
    if dtype.startswith("float"):
        x.div_(jt.tensor(b)).sub_(jt.tensor(2.5, dtype=dtype).expand(n))
        want = want / b - 2.5
    assert x.dtype is getattr(jt, dtype) and x.tolist() == want.tolist()
    from jitensor.kernels.cpu import elementwise as kernels
    ran = kernels.arith_inplace_flat if n < kernels.PARALLEL_MIN else kernels.arith_inplace
    assert any(str(sig[1].dtype) == dtype for sig in ran.signatures)


def test_operands_of_one_expanded_element_are_read_as_numbers():
    """Small ops read an operand that is one element everywhere (a full reduction's expanded
    gradient) as a number: either side of binary ops, where, and the gradient kernels."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    one, x = jt.tensor(np.float32(1.5)).expand(3, 4), jt.tensor(a)
    for got, want in ((one * 2, np.full((3, 4), 3.0)), (one - x, 1.5 - a), (x / one, a / 1.5),
                      (one < x, 1.5 < a), (jt.where(x > 0, one, x), np.where(a > 0, 1.5, a)),
                      (jt.exp(one), np.full((3, 4), np.exp(np.float32(1.5)))),
                      (one.int() & jt.tensor(np.arange(12).reshape(3, 4)).int(),
                       1 & np.arange(12).reshape(3, 4))):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        assert tuple(got.shape) == (3, 4)
    y = jt.tensor(a, requires_grad=True)
    jt.nn.functional.gelu(y).sum().backward()  # gelu's gradient kernel of an expanded g
    np.testing.assert_allclose(y.grad.numpy(), _gelu_grad(a), rtol=1e-5, atol=1e-6)


def _gelu_grad(a):
    a = a.astype(np.float64)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(a / math.sqrt(2)))
    return cdf + a * np.exp(-a * a / 2) / math.sqrt(2 * math.pi)


@pytest.mark.parametrize("n", [6, 1 << 17])
def test_copies_of_one_expanded_element_are_fills(n):
    """A source of one element seen everywhere (stride 0 in every dim) is copied as a fill of
    its value, with the copy's C casts."""
    for value, dtype, want in ((2.7, jt.int32, 2), (-2.7, jt.int64, -2), (0.5, jt.bool, True),
                               (3, jt.float32, 3.0), (1.25, jt.float64, 1.25)):
        src = jt.tensor(value).expand(n // 2, 2)
        out = jt.empty(n // 2, 2, dtype=dtype).copy_(src)
        assert out.dtype is dtype and out.reshape(-1).tolist() == [want] * n
        assert src.contiguous().reshape(-1).tolist() == [src[0, 0].item()] * n
    t = jt.arange(4.0)
    t.copy_(t[2].expand(4))  # the element read first, then filled in
    assert t.tolist() == [2.0] * 4

@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_in_place_and_into_its_input(name):
    """The kernels recompute by libm, from the argument, what the reduction cannot serve; in
    place (and out= the input) they must still see the arguments."""
    for dtype in (np.float32, np.float64):
        x = np.array([1e30, np.pi / 2, 3 * np.pi / 2, 7.0, 1e6, np.inf, -0.0], dtype)
        with np.errstate(invalid="ignore"):
            want = getattr(np, name)(x.astype(np.float64)).astype(dtype)
        t = jt.tensor(x)
        getattr(t, name + "_")()
        np.testing.assert_allclose(t.numpy(), want, rtol=4e-7 if dtype == np.float32 else 1e-15)
        t = jt.tensor(np.repeat(x, 20000))[::2]  # a strided view, the parallel kernel
        getattr(jt, name)(t, out=t)
        np.testing.assert_allclose(t.numpy(), np.repeat(want, 10000),
                                   rtol=4e-7 if dtype == np.float32 else 1e-15)


def test_float32_trig_without_fused_multiply_add(tmp_path):
    """On a CPU without FMA, float32 sin/cos/tan take the float64 reduction (the float32 one's
    first step is exact only fused): compiled for Numba's generic CPU in a new process."""
    code = ("import numpy as np, jitensor as jt; x = np.float32([9.424682, 12345.678, 400000.1]);"
            "print(repr(jt.sin(jt.tensor(x)).numpy().tolist()))")
    env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    want = np.sin(np.float32([9.424682, 12345.678, 400000.1]).astype(np.float64))
    np.testing.assert_allclose(eval(done.stdout), want, rtol=2e-7)


@pytest.mark.parametrize("exponent", [2, 3, -2, 0.5, -0.5, -1, 2.0])
@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
def test_common_powers_run_as_exact_products_and_roots(exponent, dtype):
    """x ** 2, 3, -2, 0.5, -0.5, -1 as torch computes them (x * x, x * x * x, sqrt, ...): the
    same bits as NumPy's products and correctly rounded roots, through the operator, pow() and
    out=, with pow's derivative; special values included."""
    x = np.array([-0.0, 0.0, -np.inf, np.inf, np.nan, 1e-30, -3.5, 2.0, 7.25],
                 dtype.np)
    with np.errstate(all="ignore"):
        want = {2: x * x, 3: x * x * x, -2: 1 / (x * x), 0.5: np.sqrt(x),
                -0.5: 1 / np.sqrt(x), -1: 1 / x}[exponent]
    t = jt.tensor(x)
    out = jt.empty(len(x), dtype=dtype)
    for got in (t ** exponent, jt.pow(t, exponent), jt.pow(t, exponent, out=out)):
        assert got.dtype is dtype
        np.testing.assert_array_equal(got.numpy(), want)
    assert jt.pow(t, exponent, out=out) is out
    a = jt.tensor([1.5, 2.0, 3.0], dtype=jt.float64, requires_grad=True)
    (a ** exponent).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), exponent * a.detach().numpy() ** (exponent - 1),
                               rtol=1e-12)
    assert (jt.tensor([2, 3]) ** 2).tolist() == [4, 9]  # integers keep the integer power


@pytest.mark.parametrize("a, b", [((0,), (3, 1)), ((3, 1), (0,)), ((0, 1), (1, 4)), ((2, 0), (1,)),
                                  ((0,), ())])
def test_empty_operands_broadcast_as_torch(a, b):
    """An empty operand has stride 0 like a broadcast scalar but no element to read: it
    broadcasts to an empty result of NumPy's shape, in every family."""
    x, y = jt.zeros(a), jt.ones(b)
    shape = np.broadcast_shapes(a, b)
    for got in (x + y, y * x, jt.where(x > 0, y, 2.0), jt.maximum(x, y), x == y):
        assert got.shape == shape and got.numel() == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("rows", [(1,), (5,), (3, 4), (300,)])
def test_a_bias_row_broadcast_down_matches_numpy(rows, dtype):
    # a last-dim row of at least elementwise.ROW_MIN elements broadcast over the other dims runs
    # without copying its broadcast, as a tile of whole rows (300 rows: several tiles and a
    # part of one): both operand orders, in place and into out=
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((*rows, 40)) * 8).astype(dtype)
    row = (rng.standard_normal(40) * 8 + 20).astype(dtype)
    xt, rt = jt.tensor(x), jt.tensor(row)
    for name in ("add", "sub", "mul", "maximum"):
        fn = getattr(np, {"sub": "subtract", "mul": "multiply"}.get(name, name))
        for got, want in ((getattr(jt, name)(xt, rt), fn(x, row)),
                          (getattr(jt, name)(rt, xt), fn(row, x))):
            assert got.dtype == jt.tensor(want).dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want)
    got = jt.where(jt.tensor(x > 0), xt, rt)
    np.testing.assert_array_equal(got.numpy(), np.where(x > 0, x, row))
    for name in ("add_", "sub_", "mul_"):
        target = xt.clone()
        getattr(target, name)(rt)
        want = {"add_": x + row, "sub_": x - row, "mul_": x * row}[name]
        np.testing.assert_array_equal(target.numpy(), want)
    out = jt.empty_like(xt)
    jt.add(xt, rt, alpha=2, out=out)
    np.testing.assert_array_equal(out.numpy(), x + 2 * row)
    # a row broadcast but strided (every other element) and a short row take the other paths
    wide = (rng.standard_normal(80) * 8).astype(dtype)
    np.testing.assert_array_equal((xt + jt.tensor(wide)[::2]).numpy(), x + wide[::2])
    np.testing.assert_array_equal((xt[..., :4] + rt[:4]).numpy(), x[..., :4] + row[:4])


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("rows", [(1,), (5,), (3, 4), (512,)])
def test_a_column_broadcast_along_rows_matches_numpy(rows, dtype):
    # a keepdim column (x - x.mean(-1, keepdim=True)) broadcast along rows of at least
    # elementwise.ROW_MIN runs as one number per row (the columns kernel): both operand
    # orders, each arithmetic family, a comparison, and a column strided or too short
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((*rows, 40)) * 8).astype(dtype)
    column = (rng.standard_normal((*rows, 1)) * 8 + 20).astype(dtype)
    xt, ct = jt.tensor(x), jt.tensor(column)
    for name in ("add", "sub", "mul", "maximum", "div", "eq", "lt"):
        fn = getattr(np, {"sub": "subtract", "mul": "multiply", "div": "true_divide",
                          "eq": "equal", "lt": "less"}.get(name, name))
        for got, want in ((getattr(jt, name)(xt, ct), fn(x, column)),
                          (getattr(jt, name)(ct, xt), fn(column, x))):
            if name == "div":  # (true division of integers gives the default float dtype)
                want = want.astype(np.float32)
            assert got.dtype == jt.tensor(want).dtype and got.shape == want.shape
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if name == "div" else 0)
    target = xt.clone()
    target.mul_(ct)
    np.testing.assert_array_equal(target.numpy(), x * column)
    wide_column = ct.expand(xt.shape)  # against a number (an expanded gradient times 2)
    np.testing.assert_array_equal((wide_column * 3).numpy(), np.broadcast_to(column * 3, x.shape))
    np.testing.assert_array_equal((3 - wide_column).numpy(), np.broadcast_to(3 - column, x.shape))
    wide = (rng.standard_normal((*rows, 2)) * 8).astype(dtype)
    np.testing.assert_array_equal((xt + jt.tensor(wide)[..., :1]).numpy(), x + wide[..., :1])
    np.testing.assert_array_equal((xt[..., :4] + ct).numpy(), x[..., :4] + column)


@pytest.mark.parametrize("shape", [(2048, 32), (7, 331, 40), (1500, 100)])
def test_large_outputs_of_short_rows_match_numpy(shape):
    """From PARALLEL_MIN elements on, rows shorter than SHORT_ROW (after coalescing) run as one
    long row, their operands copied C-contiguous first: a column, a transposed operand, three
    operands, and into a strided out= (which keeps the 4-D path); a bias row is read in place by
    the rows kernel, in place too."""
    from jitensor.kernels.cpu.elementwise import PARALLEL_MIN, SHORT_ROW
    assert np.prod(shape) >= PARALLEL_MIN and shape[-1] < SHORT_ROW
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    row, col = rng.standard_normal(shape[-1:]), rng.standard_normal((*shape[:-1], 1))
    row, col = row.astype(np.float32), col.astype(np.float32)
    flipped = np.ascontiguousarray(np.swapaxes(x, -1, -2)) * 2
    xt, rt, ct = jt.tensor(x), jt.tensor(row), jt.tensor(col)
    ft = jt.tensor(flipped).transpose(-1, -2)
    np.testing.assert_array_equal((xt + rt).numpy(), x + row)
    np.testing.assert_array_equal((xt * ct).numpy(), x * col)
    np.testing.assert_array_equal((xt - ft).numpy(), x - np.swapaxes(flipped, -1, -2))
    np.testing.assert_array_equal(jt.where(xt > 0, rt, ct).numpy(), np.where(x > 0, row, col))
    target = xt.clone()
    target.mul_(rt)
    np.testing.assert_array_equal(target.numpy(), x * row)
    buf = np.zeros((*shape[:-1], shape[-1] * 2), np.float32)
    jt.add(xt, ct, out=jt.from_numpy(buf)[..., ::2])
    np.testing.assert_array_equal(buf[..., ::2], x + col)
    assert not buf[..., 1::2].any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_underflow_edges_match_numpy(dtype):
    # below the smallest subnormal's log exp is exactly 0 (the kernel selects it, never running
    # its arithmetic into subnormals there), through the subnormal range it is NumPy's within
    # the subnormals' spacing, and inf, -inf and NaN keep their results
    low = -104.0 if dtype == np.float32 else -746.0
    edges = [-np.inf, -1e30, low - 1e-3, np.inf, np.nan, 0.0]
    v = np.concatenate([np.linspace(low - 30, low + 25, 4001), edges]).astype(dtype)
    got = jt.exp(jt.from_numpy(v)).numpy()
    with np.errstate(over="ignore"):
        want = np.exp(v)
    assert got.dtype == dtype
    assert np.all(got[v < low] == 0)
    tiny = np.finfo(dtype).smallest_subnormal
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=2 * tiny)
