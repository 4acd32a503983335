"""torch as the second oracle: promotion tables, result_type over every dtype x operand kind,
devices, fill/full value checks, creation routines, strides, tensor methods and error classes.
Skips as a whole without torch."""
import itertools
import math
import pickle

import numpy as np
import pytest
from conftest import ALL_DTYPES, COPY_PAIRS, CPU_DTYPES, FLOAT_DTYPES, INT_DTYPES, dtype_id
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")


def tdt(d):
    return getattr(torch, d.name)


def same_dtype(jd, td):
    return str(td) == "torch." + jd.name


def assert_same(jt_t, torch_t):
    """Same dtype, shape and values (NaN equal)."""
    assert same_dtype(jt_t.dtype, torch_t.dtype), (jt_t.dtype, torch_t.dtype)
    assert tuple(jt_t.shape) == tuple(torch_t.shape)
    np.testing.assert_array_equal(jt_t.numpy(), torch_t.numpy())


# -- promotion -------------------------------------------------------------------------------------
@pytest.mark.parametrize("a", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("b", ALL_DTYPES, ids=dtype_id)
def test_promote_types_and_can_cast(a, b):
    assert same_dtype(jt.promote_types(a, b), torch.promote_types(tdt(a), tdt(b)))
    assert jt.can_cast(a, b) == torch.can_cast(tdt(a), tdt(b))


class _Operand:
    """A stand-in tensor with only dtype and ndim: float16 has no CPU tensors in jitensor."""

    def __init__(self, dtype, ndim):
        self.dtype, self.ndim = dtype, ndim


def _operands():
    """(label, jt operand, torch operand) for every dtype x {dim>0, 0-d} and the Python scalars."""
    ops = []
    for d in ALL_DTYPES:
        for ndim in (1, 0):
            shape = (2,) * ndim
            if d is jt.float16:
                j = _Operand(d, ndim)
            else:
                j = jt.ones(shape, dtype=d)
            ops.append((f"{d.name}-{ndim}d", j, torch.ones(shape, dtype=tdt(d))))
    for v in (True, False, 0, 3, -7, 1 << 40, 2.5, -0.0, float("inf")):
        ops.append((f"py-{v!r}", v, v))
    return ops


OPERANDS = _operands()


@pytest.mark.parametrize("default", [jt.float32, jt.float64], ids=dtype_id)
@pytest.mark.parametrize("first", range(len(OPERANDS)), ids=[o[0] for o in OPERANDS])
def test_result_type_cross_product(first, default):
    jt.set_default_dtype(default)
    torch.set_default_dtype(tdt(default))
    label_a, ja, ta = OPERANDS[first]
    mismatches = []
    for label_b, jb, tb in OPERANDS:
        try:
            expected = torch.result_type(ta, tb)
        except Exception as e:  # torch needs a tensor or number on each side: both are here
            pytest.fail(f"torch.result_type({label_a}, {label_b}) raised {e!r}")
        got = jt.result_type(ja, jb)
        if not same_dtype(got, expected):
            mismatches.append(f"{label_a}, {label_b}: jitensor {got} vs {expected}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_result_type_with_real_zero_dim_tensors(d):
    for other in CPU_DTYPES:
        for shapes in [((3,), ()), ((), (3,)), ((), ())]:
            a, b = jt.zeros(shapes[0], dtype=d), jt.zeros(shapes[1], dtype=other)
            ta, tb = torch.zeros(shapes[0], dtype=tdt(d)), torch.zeros(shapes[1], dtype=tdt(other))
            assert same_dtype(jt.result_type(a, b), torch.result_type(ta, tb))


# -- devices ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [("cpu",), ("cuda",), ("cuda:0",), ("cuda", 0), ("cuda", 2),
                                  ("cpu:0",), ("cuda:11",)], ids=str)
def test_device_like_torch(args):
    j, t = jt.device(*args), torch.device(*args)
    assert repr(j) == repr(t)
    assert str(j) == str(t)
    assert j.type == t.type and j.index == t.index


def test_device_equality_like_torch():
    specs = [("cpu",), ("cpu:0",), ("cuda",), ("cuda:0",), ("cuda", 0), ("cuda:1",)]
    for a, b in itertools.product(specs, specs):
        assert (jt.device(*a) == jt.device(*b)) == (torch.device(*a) == torch.device(*b)), (a, b)
        if torch.device(*a) == torch.device(*b):
            assert hash(jt.device(*a)) == hash(jt.device(*b))


@pytest.mark.parametrize("bad", ["gpu", "CPU", "cuda:x", "cuda:-1", "", "cuda:", " cpu", "cuda0",
                                 "cuda:0:0"])
def test_bad_device_strings_like_torch(bad):
    with pytest.raises(RuntimeError):
        torch.device(bad)
    with pytest.raises(RuntimeError):
        jt.device(bad)


# -- fill_ / full value checks ---------------------------------------------------------------------
FILL_VALUES = [-1, -255, -256, 0, 1, 127, 128, 255, 256, -128, -129, 32767, 32768, -32769,
               2 ** 31 - 1, 2 ** 31, 2 ** 63 - 1, -2 ** 63, 2.7, -2.7, 127.5, -128.5, 127.9, -0.5,
               255.5, 32767.5, 1e10, 1e40, -1e40, 3.4e38, 3.5e38, math.nan, math.inf, -math.inf,
               True, False]


def _former_fill_bug(d, v):
    """The cells where jitensor used to disagree with torch (kept as a regression test below)."""
    if d is jt.bool or d.is_floating_point or isinstance(v, bool):
        return False
    info = np.iinfo(d.np)
    if d is jt.uint8 and isinstance(v, int) and -255 <= v <= -1:
        return True  # uint8 negative ints wrap (-1 -> 255)
    # a float is range-checked before truncation (int8 127.5 raises)
    return isinstance(v, float) and math.isfinite(v) and not info.min <= v <= info.max \
        and info.min <= int(v) <= info.max


def _outcome(make):
    try:
        return "ok", make().tolist()
    except Exception as e:  # noqa: BLE001 - the class is the comparison
        return type(e).__name__, None


def _agree(a, b):
    if a[0] != b[0]:
        return False
    return a[1] is None or all(x == y or (x != x and y != y)
                               for x, y in zip(a[1], b[1], strict=False))


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("kind", ["fill_", "full", "full_like", "new_full"])
def test_fill_value_checks_like_torch(d, kind):
    calls = {
        "fill_": (lambda v: jt.zeros(2, dtype=d).fill_(v),
                  lambda v: torch.zeros(2, dtype=tdt(d)).fill_(v)),
        "full": (lambda v: jt.full((2,), v, dtype=d), lambda v: torch.full((2,), v, dtype=tdt(d))),
        "full_like": (lambda v: jt.full_like(jt.zeros(2, dtype=d), v),
                      lambda v: torch.full_like(torch.zeros(2, dtype=tdt(d)), v)),
        "new_full": (lambda v: jt.zeros(1, dtype=d).new_full((2,), v),
                     lambda v: torch.zeros(1, dtype=tdt(d)).new_full((2,), v)),
    }
    mine, theirs = calls[kind]
    bad = []
    for v in FILL_VALUES:
        a, b = _outcome(lambda v=v: mine(v)), _outcome(lambda v=v: theirs(v))
        if not _agree(a, b):
            bad.append(f"{kind}({v!r}) on {d}: jitensor {a} vs torch {b}")
    assert not bad, "\n".join(bad)


_FORMER_BUG_CELLS = [(d, v) for d in CPU_DTYPES for v in FILL_VALUES if _former_fill_bug(d, v)]


@pytest.mark.parametrize("d, v", [pytest.param(d, v, id=f"{d.name}-{v!r}")
                                  for d, v in _FORMER_BUG_CELLS])
def test_fill_value_former_differences(d, v):
    assert _agree(_outcome(lambda: jt.zeros(2, dtype=d).fill_(v)),
                  _outcome(lambda: torch.zeros(2, dtype=tdt(d)).fill_(v)))


TENSOR_CHECK_DATA = [[-1], [300], [-129], [255, 0], [127, -128], [2 ** 31], [True, 2]]
@pytest.mark.parametrize("data, d", [pytest.param(data, d, id=f"{d.name}-{data}")
                                     for d in INT_DTYPES for data in TENSOR_CHECK_DATA])
def test_tensor_value_checks_like_torch(data, d):
    a, b = (_outcome(lambda: jt.tensor(data, dtype=d)),
            _outcome(lambda: torch.tensor(data, dtype=tdt(d))))
    assert _agree(a, b), (a, b)


# -- creation routines (hypothesis) ----------------------------------------------------------------
small_shapes = st.lists(st.integers(0, 5), max_size=4).map(tuple)
dtypes_st = st.sampled_from(CPU_DTYPES)


@given(shape=small_shapes, d=dtypes_st)
def test_zeros_ones_empty_like_torch(shape, d):
    assert_same(jt.zeros(shape, dtype=d), torch.zeros(shape, dtype=tdt(d)))
    assert_same(jt.ones(*shape, dtype=d) if shape else jt.ones((), dtype=d),
                torch.ones(shape, dtype=tdt(d)))
    e, te = jt.empty(shape, dtype=d), torch.empty(shape, dtype=tdt(d))
    assert same_dtype(e.dtype, te.dtype) and tuple(e.shape) == tuple(te.shape)
    assert e.is_contiguous() == te.is_contiguous()
    assert e.stride() == te.stride()
    assert (e.nbytes == te.nbytes and e.element_size() == te.element_size()
            and e.numel() == te.numel())
    assert_same(jt.zeros(shape), torch.zeros(shape))


@given(shape=small_shapes, d=st.sampled_from([None] + CPU_DTYPES), data=st.data())
def test_full_like_torch(shape, d, data):
    value = data.draw(st.one_of(st.booleans(), st.integers(-100, 100), st.floats(-1e6, 1e6),
                                st.sampled_from([math.nan, math.inf])))
    kw = {} if d is None else {"dtype": d}
    tkw = {} if d is None else {"dtype": tdt(d)}
    a, b = (_outcome(lambda: jt.full(shape, value, **kw)),
            _outcome(lambda: torch.full(shape, value, **tkw)))
    assert _agree((a[0], None), (b[0], None)), (a, b)
    if a[0] == "ok":
        assert_same(jt.full(shape, value, **kw), torch.full(shape, value, **tkw))


@given(start=st.integers(-50, 50), end=st.integers(-50, 50), step=st.integers(-6, 6).filter(bool),
       d=st.sampled_from([None, jt.int16, jt.int32, jt.int64, jt.float32, jt.float64]))
def test_arange_int_like_torch(start, end, step, d):
    a = _outcome(lambda: jt.arange(start, end, step, dtype=d))
    b = _outcome(lambda: torch.arange(start, end, step, dtype=None if d is None else tdt(d)))
    assert a[0] == b[0]
    if a[0] == "ok":
        assert_same(jt.arange(start, end, step, dtype=d),
                    torch.arange(start, end, step, dtype=None if d is None else tdt(d)))


@given(start=st.integers(-400, 400).map(lambda k: k / 8),
       step=st.integers(1, 64).map(lambda k: k / 16),
       n=st.integers(0, 7), d=st.sampled_from([None, jt.float32, jt.float64]))
def test_arange_float_like_torch(start, step, n, d):
    # up to 7 elements torch takes its scalar path (start + i * step in double), the same formula;
    # longer ranges go through torch's SIMD path, whose rounding depends on the CPU
    end = start + n * step
    a = jt.arange(start, end, step, dtype=d)
    b = torch.arange(start, end, step, dtype=None if d is None else tdt(d))
    assert_same(a, b)


@given(n=st.integers(0, 40), d=st.sampled_from([jt.float32, jt.float64]))
def test_arange_float_long_ranges_close_to_torch(n, d):
    a, b = (jt.arange(0.5, 0.5 + n * 0.1, 0.1, dtype=d),
            torch.arange(0.5, 0.5 + n * 0.1, 0.1, dtype=tdt(d)))
    assert tuple(a.shape) == tuple(b.shape) and same_dtype(a.dtype, b.dtype)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=4 * np.finfo(d.np).eps)


@pytest.mark.parametrize("args", [(0, 10, 0), (0, 5, -1), (5, 0, 1), (1.0, 0.0, 0.5),
                                  (0, math.inf)], ids=str)
def test_arange_errors_like_torch(args):
    with pytest.raises(RuntimeError):
        torch.arange(*args)
    with pytest.raises(RuntimeError):
        jt.arange(*args)


@pytest.mark.parametrize("start, end, steps", [(0, 1, 5), (-2, 6, 9), (0, 10, 11), (1, -1, 3),
                                                (3, 7, 1), (3, 7, 0), (2.5, 2.5, 4), (0, 1, 2),
                                                (-8, 8, 17), (0, 1, 3), (0, 1, 7), (-1, 1, 6)],
                         ids=str)
@pytest.mark.parametrize("d", [None, jt.float32, jt.float64, jt.int64, jt.int32, jt.int16], ids=str)
def test_linspace_like_torch(start, end, steps, d):
    a = jt.linspace(start, end, steps, dtype=d)
    b = torch.linspace(start, end, steps, dtype=None if d is None else tdt(d))
    if a.dtype.is_floating_point and (end - start) % max(steps - 1, 1) and steps > 2:
        # an inexact step: torch's SIMD path (FMA, lane-wise arange) rounds differently per CPU
        assert same_dtype(a.dtype, b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2 * np.finfo(a.dtype.np).eps)
        assert a.tolist()[0] == b.tolist()[0] and a.tolist()[-1] == b.tolist()[-1]
    else:
        assert_same(a, b)


@pytest.mark.parametrize("start, end, steps", [(2.0, 90.0, 7), (-1.3, 7.1, 1000), (0.1, 0.2, 33),
                                               (1e6, -3.5, 101)])
@pytest.mark.parametrize("d", [jt.float32, jt.float64], ids=dtype_id)
def test_linspace_rounding_like_torch(start, end, steps, d):
    # computed in the output's type as torch does; torch's vector loop may fuse multiply-adds,
    # so single elements may still differ in the last bit
    a = jt.linspace(start, end, steps, dtype=d).numpy()
    b = torch.linspace(start, end, steps, dtype=tdt(d)).numpy()
    ulp = np.finfo(a.dtype).eps * max(abs(start), abs(end))  # of the operands, not the result
    np.testing.assert_allclose(a, b, rtol=0, atol=ulp)
    assert a[0] == b[0] and a[-1] == b[-1]


def test_linspace_float32_steps_in_float32_like_torch():
    assert jt.linspace(2.0, 90.0, 7).numpy()[1] == np.float32(16.666668)  # float64 then round:
    # 16.666666


def test_linspace_int_fractional_endpoints_like_torch():
    assert_same(jt.linspace(0.5, 10.5, 5, dtype=jt.int64),
                torch.linspace(0.5, 10.5, 5, dtype=torch.int64))




@pytest.mark.parametrize("d", [
    d if d is not jt.int64 else pytest.param(
        d)
    for d in INT_DTYPES], ids=dtype_id)
def test_arange_int_dtype_fractional_step_like_torch(d):
    assert_same(jt.arange(0.0, 5.0, 1.5, dtype=d), torch.arange(0.0, 5.0, 1.5, dtype=tdt(d)))


@given(n=st.integers(0, 8), m=st.one_of(st.none(), st.integers(0, 8)), d=dtypes_st)
def test_eye_like_torch(n, m, d):
    a = jt.eye(n, m, dtype=d) if m is not None else jt.eye(n, dtype=d)
    b = torch.eye(n, m, dtype=tdt(d)) if m is not None else torch.eye(n, dtype=tdt(d))
    assert_same(a, b)


TENSOR_DATA = [True, 3, -2.5, [True, False], [1, 2], [1, 2.5], [True, 2], [True, 2.5], [],
               [[]], [[1, 2], [3, 4]], [[[1.5]]], (1, 2), np.float32(1.5), np.int16(3),
               np.array([1, 2], np.int32), np.array(2.5),
               np.arange(6, dtype=np.uint8).reshape(2, 3), np.array([True]),
               np.zeros((0, 2), np.int8)]


@pytest.mark.parametrize("data", TENSOR_DATA, ids=lambda x: type(x).__name__ + repr(x)[:20])
@pytest.mark.parametrize("default", FLOAT_DTYPES, ids=dtype_id)
def test_tensor_inference_like_torch(data, default):
    jt.set_default_dtype(default)
    torch.set_default_dtype(tdt(default))
    assert_same(jt.tensor(data), torch.tensor(data))
    if isinstance(data, np.ndarray):
        assert_same(jt.from_numpy(data), torch.from_numpy(data))
        assert_same(jt.as_tensor(data), torch.as_tensor(data))


@pytest.mark.parametrize("value, d", [(True, None), (3, None), (2.5, None), (np.float64(1), None),
                                      (2, jt.float64), (2.7, jt.int32), (1.0, jt.bool)], ids=str)
def test_full_inference_like_torch(value, d):
    for default in FLOAT_DTYPES:
        jt.set_default_dtype(default)
        torch.set_default_dtype(tdt(default))
        assert_same(jt.full((2, 2), value, dtype=d),
                    torch.full((2, 2), value, dtype=None if d is None else tdt(d)))


@given(shape=small_shapes, d=st.sampled_from([jt.float32, jt.float64]))
def test_random_shapes_and_dtypes_like_torch(shape, d):
    for mine, theirs in ((jt.rand, torch.rand), (jt.randn, torch.randn)):
        a, b = mine(shape, dtype=d), theirs(shape, dtype=tdt(d))
        assert same_dtype(a.dtype, b.dtype) and tuple(a.shape) == tuple(b.shape)
        assert a.numel() == 0 or a.stride() == b.stride()
    a, b = jt.randint(0, 9, shape), torch.randint(0, 9, shape)
    assert same_dtype(a.dtype, b.dtype) and tuple(a.shape) == tuple(b.shape)
    a = jt.rand_like(jt.zeros(shape, dtype=d))
    b = torch.rand_like(torch.zeros(shape, dtype=tdt(d)))
    assert same_dtype(a.dtype, b.dtype) and tuple(a.shape) == tuple(b.shape)


# -- strides of *_like / clone ---------------------------------------------------------------------
def _view_pairs():
    base_np = np.zeros((3, 4, 5), np.float32)
    base_t = torch.from_numpy(base_np)
    return {
        "permuted": (base_np.transpose(2, 0, 1), base_t.permute(2, 0, 1)),
        "transposed": (base_np.T, base_t.permute(2, 1, 0)),
        "sliced": (base_np[:, ::2], base_t[:, ::2]),
        "sliced-permuted": (base_np[:, ::2].transpose(1, 0, 2), base_t[:, ::2].permute(1, 0, 2)),
        "row": (base_np[1], base_t[1]),
        "broadcast-inner": (np.broadcast_to(np.zeros((3, 1), np.float32), (3, 4)),
                            torch.zeros(3, 1).expand(3, 4)),
        "broadcast-outer": (np.broadcast_to(np.zeros(6, np.float32), (3, 6)),
                            torch.zeros(6).expand(3, 6)),
        "broadcast-middle": (np.broadcast_to(np.zeros((4, 1, 5), np.float32), (4, 6, 5)),
                             torch.zeros(4, 1, 5).expand(4, 6, 5)),
    }


VIEWS = _view_pairs()


@pytest.mark.parametrize("fn", ["empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
                                "clone"])
@pytest.mark.parametrize("name", list(VIEWS))
def test_preserve_format_strides_like_torch(fn, name):
    a, b = VIEWS[name]
    ja = jt.from_numpy(a)
    assert ja.stride() == b.stride()
    if fn == "clone":
        got, expected = ja.clone(), b.clone()
    elif fn == "full_like":
        got, expected = jt.full_like(ja, 2.0), torch.full_like(b, 2.0)
    else:
        got, expected = getattr(jt, fn)(ja), getattr(torch, fn)(b)
    assert got.stride() == expected.stride()
    assert got.is_contiguous() == expected.is_contiguous()
    assert tuple(got.shape) == tuple(expected.shape)


# -- tensor methods --------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_tensor_methods_like_torch(d):
    ref = (np.arange(12) % 5).astype(d.np).reshape(3, 4)
    j, t = jt.tensor(ref), torch.tensor(ref)
    assert j.stride() == t.stride() and j.stride(-1) == t.stride(-1) and j.size(0) == t.size(0)
    assert (j.itemsize == t.itemsize and j.element_size() == t.element_size()
            and j.nbytes == t.nbytes)
    assert j.tolist() == t.tolist() and j.ndim == t.ndim and j.dim() == t.dim() and len(j) == len(t)
    assert j.is_floating_point() == t.is_floating_point()
    flat = ref.reshape(-1)  # conversions on 1-d data (one compiled copy kernel per dtype pair)
    j, t = jt.tensor(flat), torch.tensor(flat)
    for method in ("float", "double", "int", "long", "bool", "short", "char", "byte"):
        assert_same(getattr(j, method)(), getattr(t, method)())
    for target in CPU_DTYPES:
        assert_same(j.to(target), t.to(tdt(target)))
    jt_item, t_item = jt.tensor(ref[1, 2]).item(), torch.tensor(ref[1, 2]).item()
    assert jt_item == t_item and type(jt_item) is type(t_item)
    assert_same(j.new_zeros(2), t.new_zeros(2))
    assert_same(j.new_ones((1, 2)), t.new_ones((1, 2)))
    assert_same(j.new_full((2,), 1), t.new_full((2,), 1))
    assert_same(j.new_tensor([0, 1]), t.new_tensor([0, 1]))
    assert same_dtype(j.new_empty(3).dtype, t.new_empty(3).dtype)
    assert_same(pickle.loads(pickle.dumps(j)), pickle.loads(pickle.dumps(t)))
    assert repr(j.shape) == repr(t.shape).replace("torch.", "jitensor.")


@pytest.mark.parametrize("dst_d, src_d", COPY_PAIRS, ids=lambda d: d.name)
def test_copy_broadcast_and_convert_like_torch(dst_d, src_d):
    src = (np.arange(4) % 3).astype(src_d.np)
    a = jt.zeros(3, 4, dtype=dst_d).copy_(jt.tensor(src))
    b = torch.zeros(3, 4, dtype=tdt(dst_d)).copy_(torch.tensor(src))
    assert_same(a, b)
    a = jt.zeros(4, 3, dtype=dst_d).copy_(jt.tensor(src.reshape(4, 1)))
    b = torch.zeros(4, 3, dtype=tdt(dst_d)).copy_(torch.tensor(src.reshape(4, 1)))
    assert_same(a, b)
    a = jt.zeros(4, dtype=dst_d).copy_(jt.tensor(src))
    b = torch.zeros(4, dtype=tdt(dst_d)).copy_(torch.tensor(src))
    assert_same(a, b)


def test_float_conversions_truncate_like_torch():
    data = [0.0, 0.4, -0.6, 1.5, -2.5, 99.9, -99.9]
    for d in (jt.int8, jt.int16, jt.int32, jt.int64, jt.bool):
        assert_same(jt.tensor(data).to(d), torch.tensor(data).to(tdt(d)))
        assert_same(jt.tensor(data, dtype=d), torch.tensor(data, dtype=tdt(d)))


# -- error classes ---------------------------------------------------------------------------------
ERROR_CASES = {
    "negative size": (lambda m: m.zeros(2, -1)),
    "negative size tuple": (lambda m: m.ones((-3,))),
    "float size": (lambda m: m.zeros(2, 2.0)),
    "str size": (lambda m: m.empty("a")),
    "int requires_grad": (lambda m: m.zeros(2, dtype=m.int64, requires_grad=True)),
    "tensor int requires_grad": (lambda m: m.tensor([1, 2], requires_grad=True)),
    "arange step 0": (lambda m: m.arange(0, 5, 0)),
    "arange sign": (lambda m: m.arange(5, 0, 2)),
    "eye negative": (lambda m: m.eye(-2)),
    "full uint8 300": (lambda m: m.full((2,), 300, dtype=m.uint8)),
    "full int64 nan": (lambda m: m.full((2,), math.nan, dtype=m.int64)),
    "full float32 1e40": (lambda m: m.full((2,), 1e40, dtype=m.float32)),
    "fill int8 200": (lambda m: m.zeros(2, dtype=m.int8).fill_(200)),
    "size out of range": (lambda m: m.zeros(2, 3).size(2)),
    "stride out of range": (lambda m: m.zeros(2, 3).stride(-3)),
    "len 0-d": (lambda m: len(m.tensor(1.0))),
    "item of many": (lambda m: m.zeros(2).item()),
    "bool of many": (lambda m: bool(m.zeros(2))),
    "numpy requires_grad": (lambda m: m.zeros(2, requires_grad=True).numpy()),
    "from_numpy negative": (lambda m: m.from_numpy(np.zeros(3)[::-1])),
    "from_numpy clongdouble": (lambda m: m.from_numpy(np.zeros(3, np.clongdouble)) if m is jt else
                           m.from_numpy(np.zeros(3, np.uint32).astype(object))),
    "ragged tensor": (lambda m: m.tensor([[1, 2], [3]])),
    "copy_ bad shape": (lambda m: m.zeros(2, 3).copy_(m.zeros(4))),
    "set_default_dtype int": (lambda m: m.set_default_dtype(m.int32)),
    "randint empty range": (lambda m: m.randint(3, 3, (2,))),
    "linspace negative steps": (lambda m: m.linspace(0, 1, -1)),
    "device bad string": (lambda m: m.device("gpu")),
}


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_error_classes_like_torch(name):
    call = ERROR_CASES[name]
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(Exception) as got:
        call(jt)
    assert issubclass(got.type, expected.type) or issubclass(expected.type, got.type), \
        (f"jitensor raised {got.type.__name__}: {got.value}; "
         f"torch {expected.type.__name__}: {expected.value}")
