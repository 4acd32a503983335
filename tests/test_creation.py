"""Creation routines: torch's signatures, keywords, dtype inference and errors, with NumPy as the
oracle (the hypothesis sweeps over shapes and dtypes are in test_creation_properties.py)."""
import math

import numpy as np
import pytest
from conftest import CPU_DTYPES, FLOAT_DTYPES, INT_DTYPES, assert_tensor, dtype_id

import jitensor as jt

# -- size forms and keywords ----------------------------------------------------------------------
SIZED = {
    "empty": (jt.empty, None),
    "zeros": (jt.zeros, 0),
    "ones": (jt.ones, 1),
    "rand": (jt.rand, None),
    "randn": (jt.randn, None),
}


@pytest.mark.parametrize("name", list(SIZED))
@pytest.mark.parametrize("form", ["varargs", "tuple", "list", "Size", "np-ints", "one-int"])
def test_size_forms(name, form):
    fn, value = SIZED[name]
    args, shape = {
        "varargs": ((2, 3), (2, 3)),
        "tuple": (((2, 3),), (2, 3)),
        "list": (([2, 3],), (2, 3)),
        "Size": ((jt.Size([2, 3]),), (2, 3)),
        "np-ints": ((np.int64(2), np.int32(3)), (2, 3)),
        "one-int": ((4,), (4,)),
    }[form]
    t = fn(*args)
    assert t.shape == shape and type(t.shape) is jt.Size
    assert t.dtype is jt.float32 and t.device == jt.device("cpu") and t.requires_grad is False
    assert t.is_contiguous()
    if value is not None:
        assert_tensor(t, np.full(shape, value, np.float32), jt.float32)


@pytest.mark.parametrize("name", list(SIZED))
def test_zero_dim_and_empty_sizes(name):
    fn, value = SIZED[name]
    for args, shape in [((), ()), (((),), ()), ((0,), (0,)), ((2, 0, 3), (2, 0, 3)),
                        ((jt.Size([]),), ())]:
        t = fn(*args)
        assert t.shape == shape and t.numel() == math.prod(shape)
        if value is not None:
            assert_tensor(t, np.full(shape, value, np.float32), jt.float32)


@pytest.mark.parametrize("name", list(SIZED))
def test_dtype_device_requires_grad_keywords(name):
    fn, _ = SIZED[name]
    t = fn(2, dtype=jt.float64, device="cpu", requires_grad=True)
    assert t.dtype is jt.float64 and t.device == jt.device("cpu") and t.requires_grad is True
    t = fn((2,), dtype="float32", device=jt.device("cpu"), layout=jt.strided)
    assert t.dtype is jt.float32 and t.layout is jt.strided


@pytest.mark.parametrize("make", [
    lambda **kw: jt.empty(2, 3, **kw), lambda **kw: jt.zeros(2, 3, **kw),
    lambda **kw: jt.ones(2, 3, **kw), lambda **kw: jt.full((2, 3), 1.0, **kw),
    lambda **kw: jt.rand(2, 3, **kw), lambda **kw: jt.randn(2, 3, **kw),
    lambda **kw: jt.arange(6, **kw), lambda **kw: jt.linspace(0, 1, 4, **kw),
    lambda **kw: jt.eye(3, **kw), lambda **kw: jt.randint(5, (2,), **kw),
], ids=["empty", "zeros", "ones", "full", "rand", "randn", "arange", "linspace", "eye", "randint"])
@pytest.mark.parametrize("layout", ["sparse", object(), jt.contiguous_format],
                         ids=["str", "object", "memfmt"])
def test_non_strided_layout_raises(make, layout):
    with pytest.raises(RuntimeError):
        make(layout=layout)
    t = make(layout=jt.strided)
    assert t.layout is jt.strided


def test_memory_format():
    assert jt.empty(2, 3, memory_format=jt.contiguous_format).is_contiguous()
    with pytest.raises(RuntimeError):
        jt.empty(2, memory_format=jt.preserve_format)  # as torch: "unsupported memory format"
    with pytest.raises(RuntimeError):
        jt.empty(2, memory_format="channels_last")
    base = np.zeros((3, 4, 5), np.float32).transpose(2, 0, 1)
    src = jt.from_numpy(base)
    for fn in (jt.empty_like, jt.zeros_like, jt.ones_like, jt.rand_like, jt.randn_like):
        kept = fn(src)
        assert kept.stride() == src.stride() and kept.shape == src.shape  # preserve_format
        assert fn(src, memory_format=jt.preserve_format).stride() == src.stride()
        assert fn(src, memory_format=jt.contiguous_format).is_contiguous()
        with pytest.raises(RuntimeError):
            fn(src, memory_format="channels_last")
    assert jt.full_like(src, 2.0, memory_format=jt.contiguous_format).is_contiguous()


# -- argument errors ----------------------------------------------------------------------------
def _seq(s):
    """The size as one sequence, for the routines that take only that form."""
    return s[0] if len(s) == 1 and isinstance(s[0], (tuple, list)) else s


ROUTINES_WITH_SIZE = {
    "empty": lambda *s, **kw: jt.empty(*s, **kw),
    "empty-kw": lambda *s, **kw: jt.empty(*s, dtype=jt.float32, **kw),
    "zeros": lambda *s, **kw: jt.zeros(*s, **kw),
    "zeros-kw": lambda *s, **kw: jt.zeros(*s, dtype=jt.int8, **kw),
    "ones": lambda *s, **kw: jt.ones(*s, **kw),
    "full": lambda *s, **kw: jt.full(_seq(s), 1, **kw),
    "rand": lambda *s, **kw: jt.rand(*s, **kw),
    "randn": lambda *s, **kw: jt.randn(*s, **kw),
    "randint": lambda *s, **kw: jt.randint(0, 5, _seq(s), **kw),
    "new_zeros": lambda *s, **kw: jt.zeros(1).new_zeros(*s, **kw),
    "new_empty": lambda *s, **kw: jt.zeros(1).new_empty(*s, **kw),
    "Tensor": lambda *s, **kw: jt.Tensor(*s, **kw),
}


@pytest.mark.parametrize("name", list(ROUTINES_WITH_SIZE))
@pytest.mark.parametrize("size", [(-1,), (2, -3), ((2, -1),)], ids=str)
def test_negative_size_raises_runtime_error(name, size):
    if name == "Tensor" and isinstance(size[0], tuple):
        pytest.skip("Tensor(sequence) is data, as torch.Tensor((2, -1))")
    with pytest.raises(RuntimeError, match="negative"):
        ROUTINES_WITH_SIZE[name](*size)


@pytest.mark.parametrize("name", [n for n in ROUTINES_WITH_SIZE if n != "Tensor"])
@pytest.mark.parametrize("size", [(2.0,), (2, 3.5), (("a",),), ((2, None),), ((2, [3]),),
                                  ((2, True),)], ids=str)
def test_non_integer_size_raises_type_error(name, size):
    with pytest.raises(TypeError):
        ROUTINES_WITH_SIZE[name](*size)


def test_eye_size_errors():
    with pytest.raises(RuntimeError):
        jt.eye(-1)
    with pytest.raises(RuntimeError):
        jt.eye(2, -1)
    with pytest.raises(TypeError):
        jt.eye(2.0)


@pytest.mark.parametrize("d", INT_DTYPES + [jt.bool], ids=dtype_id)
@pytest.mark.parametrize("make", [
    lambda d: jt.zeros(2, dtype=d, requires_grad=True),
    lambda d: jt.ones(2, dtype=d, requires_grad=True),
    lambda d: jt.empty(2, dtype=d, requires_grad=True),
    lambda d: jt.full((2,), 1, dtype=d, requires_grad=True),
    lambda d: jt.tensor([1, 0], dtype=d, requires_grad=True),
    lambda d: jt.arange(2, dtype=d, requires_grad=True),
    lambda d: jt.eye(2, dtype=d, requires_grad=True),
    lambda d: jt.zeros_like(jt.zeros(2), dtype=d, requires_grad=True),
    lambda d: jt.full_like(jt.zeros(2), 1, dtype=d, requires_grad=True),
    lambda d: jt.randint(0, 2, (2,), dtype=d, requires_grad=True),
    lambda d: jt.zeros(2, out=jt.zeros(2, dtype=d), requires_grad=True),
], ids=["zeros", "ones", "empty", "full", "tensor", "arange", "eye", "zeros_like", "full_like",
        "randint", "out"])
def test_requires_grad_on_non_float_raises(make, d):
    with pytest.raises(RuntimeError, match="floating point"):
        make(d)


def test_requires_grad_defaults_raise_for_int_inference():
    with pytest.raises(RuntimeError):
        jt.arange(5, requires_grad=True)  # int64 inferred
    with pytest.raises(RuntimeError):
        jt.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError):
        jt.full((2,), 7, requires_grad=True)
    assert jt.full((2,), 7.0, requires_grad=True).requires_grad


# -- out= ---------------------------------------------------------------------------------------
OUT_CALLS = {
    "zeros": (lambda out, **kw: jt.zeros(2, 3, out=out, **kw), np.zeros((2, 3))),
    "ones": (lambda out, **kw: jt.ones((2, 3), out=out, **kw), np.ones((2, 3))),
    "full": (lambda out, **kw: jt.full((2, 3), 2.5, out=out, **kw), np.full((2, 3), 2.5)),
    "empty": (lambda out, **kw: jt.empty(2, 3, out=out, **kw), None),
    "rand": (lambda out, **kw: jt.rand(2, 3, out=out, **kw), None),
    "randn": (lambda out, **kw: jt.randn(2, 3, out=out, **kw), None),
}


@pytest.mark.parametrize("name", list(OUT_CALLS))
def test_out_is_filled_and_returned(name):
    call, expected = OUT_CALLS[name]
    out = jt.full((2, 3), 99.0)
    ptr = out.data_ptr()
    result = call(out)
    assert result is out and out.data_ptr() == ptr
    assert out.shape == (2, 3) and out.dtype is jt.float32
    if expected is not None:
        assert_tensor(out, expected, jt.float32)
    if name in ("rand", "randn"):
        assert not np.any(out.numpy() == 99.0)
    assert call(out, dtype=jt.float32) is out


@pytest.mark.parametrize("name", list(OUT_CALLS))
@pytest.mark.parametrize("bad_out, kw", [
    (lambda: jt.full((3, 2), 7.0), {}),
    (lambda: jt.full((6,), 7.0), {}),
    (lambda: jt.full((2, 3), 7.0), {"dtype": jt.float64}),
    (lambda: jt.full((2, 3), 7, dtype=jt.int64), {"dtype": jt.float32}),
], ids=["shape", "flat", "dtype", "dtype2"])
def test_mismatched_out_raises_and_is_unchanged(name, bad_out, kw):
    call, _ = OUT_CALLS[name]
    out = bad_out()
    before = out.numpy().copy()
    with pytest.raises(RuntimeError, match="out="):
        call(out, **kw)
    np.testing.assert_array_equal(out.numpy(), before)
    assert out.dtype.np == before.dtype


def test_out_must_be_a_tensor():
    with pytest.raises(TypeError):
        jt.zeros(2, out=np.zeros(2, np.float32))


@pytest.mark.parametrize("call, expected", [
    (lambda out: jt.arange(6, out=out), np.arange(6)),
    (lambda out: jt.arange(0.0, 6.0, out=out), np.arange(6)),
    (lambda out: jt.linspace(0, 10, 6, out=out), np.arange(0, 11, 2)),
    (lambda out: jt.randint(0, 10, (6,), out=out), None),
    (lambda out: jt.full((6,), 3, out=out), np.full(6, 3)),
], ids=["arange", "arange-float", "linspace", "randint", "full"])
def test_out_on_range_routines(call, expected):
    out = jt.full((6,), -1, dtype=jt.int64)
    assert call(out) is out
    assert out.dtype is jt.int64 and out.shape == (6,)
    if expected is not None:
        assert_tensor(out, expected, jt.int64)
    else:
        assert out.numpy().min() >= 0 and out.numpy().max() < 10
    bad = jt.full((5,), -1, dtype=jt.int64)
    with pytest.raises(RuntimeError):
        call(bad)
    assert bad.tolist() == [-1] * 5


def test_failed_calls_leave_out_unchanged():
    cases = [
        (jt.full((2, 3), 7, dtype=jt.uint8), lambda o: jt.full((2, 3), 300, out=o)),
        (jt.full((2, 3), 7, dtype=jt.int64), lambda o: jt.full((2, 3), float("nan"), out=o)),
        (jt.full((2, 3), 7.0), lambda o: jt.full((2, 3), 1e40, out=o)),
        (jt.full((6,), 7, dtype=jt.int64), lambda o: jt.arange(0, 6, 0, out=o)),
        (jt.full((6,), 7, dtype=jt.int64), lambda o: jt.arange(6, 0, 1, out=o)),
        (jt.full((2, 3), 7, dtype=jt.int64), lambda o: jt.rand(2, 3, out=o)),
        (jt.full((2, 3), 7, dtype=jt.int64), lambda o: jt.randint(5, 5, (2, 3), out=o)),
        (jt.full((2, 3), 7.0), lambda o: jt.zeros(2, 3, out=o, layout="sparse")),
        (jt.full((2, 3), 7.0), lambda o: jt.zeros(2, 3, out=o, dtype="nope")),
        (jt.full((3,), 7.0), lambda o: jt.linspace(0, 1, 4, out=o)),
        (jt.full((3, 3), 7.0), lambda o: jt.eye(3, 4, out=o)),
    ]
    if not jt.cuda.is_available():  # pinned memory needs CUDA
        cases.append((jt.full((2, 3), 7.0), lambda o: jt.ones(2, 3, out=o, pin_memory=True)))
    for out, call in cases:
        before = out.numpy().copy()
        with pytest.raises((RuntimeError, TypeError)):
            call(out)
        np.testing.assert_array_equal(out.numpy(), before)


# -- huge sizes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make, nbytes", [
    (lambda: jt.zeros(1 << 50), 4 << 50),
    (lambda: jt.ones(1 << 50, dtype=jt.float64), 8 << 50),
    (lambda: jt.full((1 << 48, 2), 1, dtype=jt.int16), 4 << 48),
    (lambda: jt.empty(1 << 50, dtype=jt.float32), 4 << 50),
    (lambda: jt.rand(1 << 50), 4 << 50),
    (lambda: jt.zeros(1 << 40, 1 << 40), 4 << 80),
    (lambda: jt.empty(1 << 50, dtype=jt.int8), 1 << 50),
    (lambda: jt.empty(1 << 50), 4 << 50),
    (lambda: jt.empty(1 << 40, 1 << 40), 4 << 80),
    (lambda: jt.ones(1 << 40, 1 << 40), 4 << 80),
    (lambda: jt.Tensor(1 << 50), 4 << 50),
    (lambda: jt.zeros(1).new_zeros(1 << 50), 4 << 50),
], ids=["zeros", "ones-f64", "full-i16", "empty-kw", "rand", "zeros-overflow", "empty-i8", "empty",
        "empty-overflow", "ones-overflow", "Tensor", "new_zeros"])
def test_huge_sizes_raise_memory_error_with_byte_count(make, nbytes):
    with pytest.raises(MemoryError) as info:
        make()
    assert str(nbytes) in str(info.value)


# -- full ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, dtype", [
    (True, jt.bool), (False, jt.bool), (3, jt.int64), (-7, jt.int64), (2.5, jt.float32),
    (float("inf"), jt.float32), (np.float64(2.0), jt.float32), (np.int32(4), jt.int64),
    (np.bool_(True), jt.bool),
], ids=str)
def test_full_infers_dtype_from_value(value, dtype):
    t = jt.full((2, 2), value)
    assert_tensor(t, np.full((2, 2), value, dtype.np), dtype)


def test_full_infers_default_float_and_tensor_values():
    jt.set_default_dtype(jt.float64)
    assert jt.full((1,), 0.5).dtype is jt.float64
    jt.set_default_dtype(jt.float32)
    assert_tensor(jt.full((2,), jt.tensor(3)), [3, 3], jt.int64)
    assert_tensor(jt.full((2,), jt.tensor([2.5])), [2.5, 2.5], jt.float32)
    with pytest.raises(RuntimeError):
        jt.full((2,), jt.tensor([1, 2]))
    with pytest.raises(TypeError):
        jt.full((2,), "x")
    assert_tensor(jt.full((2,), 1j), [1j, 1j], jt.complex64)
    with pytest.raises(RuntimeError, match="cannot be converted to type float32"):
        jt.full((2,), 1j, dtype=jt.float32)


@pytest.mark.parametrize("value, dtype", [
    (300, jt.uint8), (256, jt.uint8), (-129, jt.int8), (1 << 31, jt.int32), (1 << 63, jt.int64),
    (float("nan"), jt.int64), (float("inf"), jt.int32), (float("-inf"), jt.uint8),
    (1e40, jt.float32), (-1e39, jt.float32), (1e20, jt.int64),
], ids=str)
def test_full_value_that_does_not_fit_raises(value, dtype):
    with pytest.raises(RuntimeError):
        jt.full((2,), value, dtype=dtype)
    with pytest.raises(RuntimeError):
        jt.full_like(jt.zeros(2), value, dtype=dtype)
    with pytest.raises(RuntimeError):
        jt.zeros(1).new_full((2,), value, dtype=dtype)


@pytest.mark.parametrize("value, dtype, expected", [
    (2.7, jt.int32, 2), (-2.7, jt.int32, -2), (255, jt.uint8, 255), (1e38, jt.float32, 1e38),
    (7, jt.bool, True), (0.0, jt.bool, False), (True, jt.float64, 1.0),
    (float("nan"), jt.float32, np.nan),
    (float("-inf"), jt.float64, -np.inf),
], ids=str)
def test_full_converts_value(value, dtype, expected):
    assert_tensor(jt.full((3,), value, dtype=dtype), np.full(3, expected, dtype.np), dtype)


# -- *_like -------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_like_routines(d):
    src = jt.tensor(np.arange(6).reshape(2, 3) % 2, dtype=d)
    e = jt.empty_like(src)
    assert e.shape == (2, 3) and e.dtype is d and not np.shares_memory(e.numpy(), src.numpy())
    assert_tensor(jt.zeros_like(src), np.zeros((2, 3)), d)
    assert_tensor(jt.ones_like(src), np.ones((2, 3)), d)
    fill = {0: True, 1: 5, 2: -0.5}[d.category]
    assert_tensor(jt.full_like(src, fill), np.full((2, 3), fill), d)
    assert_tensor(jt.zeros_like(src, dtype=jt.float64), np.zeros((2, 3)), jt.float64)
    r = jt.rand_like(src, dtype=jt.float64)
    assert r.shape == (2, 3) and r.dtype is jt.float64
    assert jt.zeros_like(src, device="cpu").device == jt.device("cpu")
    if d.is_floating_point:
        assert jt.rand_like(src).dtype is d and jt.randn_like(src).dtype is d
        assert jt.zeros_like(src, requires_grad=True).requires_grad
        assert jt.rand_like(src, requires_grad=True).requires_grad
    else:
        with pytest.raises(RuntimeError):
            jt.rand_like(src)
        with pytest.raises(RuntimeError):
            jt.randn_like(src)


def test_like_needs_a_tensor():
    for fn in (jt.empty_like, jt.zeros_like, jt.ones_like, jt.rand_like, jt.randn_like):
        with pytest.raises(TypeError):
            fn(np.zeros(2))
    with pytest.raises(TypeError):
        jt.full_like([1, 2], 3)


def test_full_like_truncates_to_input_dtype():
    assert_tensor(jt.full_like(jt.zeros(2, dtype=jt.int16), 3.9), [3, 3], jt.int16)


# -- tensor() -----------------------------------------------------------------------------------
@pytest.mark.parametrize("data, dtype, shape", [
    (True, jt.bool, ()), ([True, False], jt.bool, (2,)), (3, jt.int64, ()),
    ([1, 2, 3], jt.int64, (3,)),
    (2.5, jt.float32, ()), ([1, 2.5], jt.float32, (2,)), ([True, 2], jt.int64, (2,)),
    ([True, 2.5], jt.float32, (2,)), ([[1, 2], [3, 4]], jt.int64, (2, 2)), ([], jt.float32, (0,)),
    ([[]], jt.float32, (1, 0)), ([[[1.5]]], jt.float32, (1, 1, 1)), ((1, 2), jt.int64, (2,)),
    ([np.int8(1), 2], jt.int64, (2,)),
], ids=str)
def test_tensor_infers_dtype_like_torch(data, dtype, shape):
    t = jt.tensor(data)
    assert t.dtype is dtype and t.shape == shape
    np.testing.assert_array_equal(t.numpy(), np.asarray(data, dtype=dtype.np))


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_tensor_from_numpy_keeps_dtype_and_copies(d):
    a = np.arange(6).reshape(2, 3).astype(d.np)
    t = jt.tensor(a)
    assert_tensor(t, a, d)
    assert not np.shares_memory(t.numpy(), a)
    a[0, 0] = 1
    assert t.tolist()[0][0] == 0
    s = jt.tensor(a[0, 1])  # a NumPy scalar keeps its dtype
    assert s.dtype is d and s.shape == ()
    v = jt.tensor(a[:, ::-1])  # negative strides are fine for a copy
    assert_tensor(v, a[:, ::-1], d)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_tensor_with_dtype_converts(d):
    data = [[0, 1, 2], [3, 4, 5]]
    assert_tensor(jt.tensor(data, dtype=d), np.array(data).astype(d.np), d)
    assert_tensor(jt.tensor([0.0, 1.5, 2.7], dtype=d), np.array([0.0, 1.5, 2.7]).astype(d.np), d)


def test_tensor_from_tensor_copies():
    src = jt.tensor([1.5, 2.5], requires_grad=True)
    t = jt.tensor(src)
    assert_tensor(t, [1.5, 2.5], jt.float32)
    assert t.requires_grad is False
    assert not np.shares_memory(t.numpy(), src.detach().numpy())
    assert_tensor(jt.tensor(src, dtype=jt.int64), [1, 2], jt.int64)


def test_tensor_errors():
    with pytest.raises(ValueError):
        jt.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        jt.tensor(["a", "b"])
    with pytest.raises(TypeError):
        jt.tensor(np.zeros(2, np.clongdouble))
    with pytest.raises(TypeError):
        jt.tensor(np.zeros(2, ">f4"))  # non-native byte order
    with pytest.raises(RuntimeError):
        jt.tensor([1 << 63])
    with pytest.raises(RuntimeError):
        jt.tensor([300], dtype=jt.uint8)
    with pytest.raises(RuntimeError):
        jt.tensor([-129, 5], dtype=jt.int8)


def test_tensor_requires_grad():
    t = jt.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.dtype is jt.float32
    assert jt.tensor(1.0, dtype=jt.float64, requires_grad=True).requires_grad


# -- as_tensor / from_numpy ----------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_from_numpy_shares_memory(d):
    a = np.zeros((2, 3), d.np)
    t = jt.from_numpy(a)
    assert t.dtype is d and t.shape == (2, 3) and t.device == jt.device("cpu")
    a[1, 1] = 1
    assert t.tolist()[1][1] == 1
    t.fill_(1)
    assert np.all(a == 1)
    assert t.numpy() is a or np.shares_memory(t.numpy(), a)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_as_tensor_shares_memory_when_dtype_matches(d):
    a = np.zeros(4, d.np)
    t = jt.as_tensor(a)
    assert t.dtype is d and np.shares_memory(t.numpy(), a)
    t2 = jt.as_tensor(a, dtype=d, device="cpu")
    assert np.shares_memory(t2.numpy(), a)
    other = jt.float64 if d is not jt.float64 else jt.int32
    c = jt.as_tensor(a, dtype=other)
    assert c.dtype is other and not np.shares_memory(c.numpy(), a)
    assert_tensor(c, a.astype(other.np), other)


def test_as_tensor_other_inputs():
    t = jt.zeros(3)
    assert jt.as_tensor(t) is t
    assert jt.as_tensor(t, dtype=jt.float32) is t
    assert jt.as_tensor(t, dtype=jt.int64).dtype is jt.int64
    assert_tensor(jt.as_tensor([1, 2]), [1, 2], jt.int64)
    assert_tensor(jt.as_tensor(2.5), np.float32(2.5), jt.float32)
    a = np.arange(4.0)[::-1]
    r = jt.as_tensor(a)  # negative strides: copied, not an error
    assert_tensor(r, a, jt.float64)
    assert not np.shares_memory(r.numpy(), a)


def test_from_numpy_errors():
    with pytest.raises(ValueError, match="negative"):
        jt.from_numpy(np.zeros(4)[::-1])
    with pytest.raises(ValueError):
        jt.from_numpy(np.zeros((3, 3))[:, ::-2])
    for bad in (np.clongdouble, np.object_, "U2"):
        with pytest.raises(TypeError):
            jt.from_numpy(np.zeros(2, bad))
    with pytest.raises(TypeError):
        jt.from_numpy([1, 2])
    with pytest.raises(TypeError):
        jt.from_numpy(np.zeros(2, ">i4"))


def test_from_numpy_views_and_zero_strides():
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    v = jt.from_numpy(base[1:, ::3])
    assert v.shape == (3, 2) and v.stride() == (6, 3)
    assert v.tolist() == base[1:, ::3].tolist()
    b = jt.from_numpy(np.broadcast_to(np.arange(3.0), (2, 3)))
    assert b.stride() == (0, 1) and b.tolist() == [[0.0, 1.0, 2.0]] * 2


# -- arange ------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(5,), (0,), (2, 9), (10, 0, -3), (0, 10, 3), (-5, 5, 2), (3, 3),
                                  (-7, -20, -4), (np.int64(4),)], ids=str)
def test_arange_ints(args):
    t = jt.arange(*args)
    assert_tensor(t, np.arange(*args, dtype=np.int64), jt.int64)


@pytest.mark.parametrize("args", [(5.0,), (0.5, 3), (0, 1, 0.1), (1, 2.5, 0.5), (10, 0, -0.7),
                                  (-1.5, 1.5, 0.25), (0, 1, 1 / 3), (1e3, 1e3 + 1, 0.125)], ids=str)
@pytest.mark.parametrize("default", FLOAT_DTYPES, ids=dtype_id)
def test_arange_floats(args, default):
    jt.set_default_dtype(default)
    t = jt.arange(*args)
    start, end, step = (0.0, args[0], 1.0) if len(args) == 1 else (args + (1.0,))[:3]
    n = math.ceil((end - start) / step)
    expected = (float(start) + np.arange(n, dtype=np.float64) * step).astype(default.np)
    assert_tensor(t, expected, default)
    assert t.shape == np.arange(*args).shape


@pytest.mark.parametrize("d", CPU_DTYPES[1:], ids=dtype_id)
def test_arange_dtype(d):
    assert_tensor(jt.arange(0, 10, 2, dtype=d), np.arange(0, 10, 2).astype(d.np), d)
    assert_tensor(jt.arange(0.0, 4.0, dtype=d), np.arange(0, 4).astype(d.np), d)


@pytest.mark.parametrize("args", [(0, 10, 0), (0.0, 1.0, 0.0)], ids=str)
def test_arange_zero_step(args):
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        jt.arange(*args)


@pytest.mark.parametrize("args", [(0, 5, -1), (5, 0, 1), (5.0, 0.0, 0.5), (-1,)], ids=str)
def test_arange_sign_mismatch(args):
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        jt.arange(*args)


def test_arange_other_errors():
    with pytest.raises(RuntimeError):
        jt.arange(0, float("inf"))
    with pytest.raises(RuntimeError):
        jt.arange(float("nan"))
    with pytest.raises(TypeError):
        jt.arange("5")
    with pytest.raises(TypeError):
        jt.arange(True)
    assert_tensor(jt.arange(jt.tensor(3)), [0, 1, 2], jt.int64)




@pytest.mark.parametrize("d, expected", [
    (jt.int32, [0, 1, 2, 3]), (jt.int16, [0, 1, 2, 3]), (jt.int8, [0, 1, 2, 3]),
    (jt.uint8, [0, 1, 2, 3]),
    pytest.param(jt.int64, [0, 1, 2, 3, 4]),
], ids=str)
def test_arange_integer_dtype_with_fractional_step_matches_torch(d, expected):
    """torch truncates start/step to the integer type (values 0, 1, 2, ...); the length is
    ceil(5 / 1.5) = 4 for the narrower ints but (5 - 0) / 1 = 5 for int64."""
    assert jt.arange(0.0, 5.0, 1.5, dtype=d).tolist() == expected


# -- linspace --------------------------------------------------------------------------------------
@pytest.mark.parametrize("start, end, steps, expected", [
    (0, 1, 5, [0.0, 0.25, 0.5, 0.75, 1.0]),
    (-2, 6, 9, list(range(-2, 7))),
    (0, 10, 11, list(range(11))),
    (1, -1, 3, [1.0, 0.0, -1.0]),
    (3, 7, 1, [3.0]),
    (3, 7, 0, []),
    (2.5, 2.5, 4, [2.5] * 4),
    (0, 1, 2, [0.0, 1.0]),
], ids=str)
@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=dtype_id)
def test_linspace_exact(start, end, steps, expected, d):
    assert_tensor(jt.linspace(start, end, steps, dtype=d), np.array(expected, d.np), d)


def test_linspace_default_dtype_and_endpoints():
    t = jt.linspace(0, 1, 7)
    assert t.dtype is jt.float32 and t.shape == (7,)
    jt.set_default_dtype(jt.float64)
    t = jt.linspace(-1.3, 2.9, 13)
    assert t.dtype is jt.float64
    assert t.tolist()[0] == -1.3 and t.tolist()[-1] == 2.9  # both endpoints are exact
    np.testing.assert_allclose(t.numpy(), np.linspace(-1.3, 2.9, 13), rtol=0, atol=1e-15)


def torch_int_linspace(start, end, steps):
    """torch's CPU formula for integer dtypes: endpoints cast to int first, double step,
    first half counted up from start, second half down from end, each value truncated."""
    s, e = int(start), int(end)
    if steps == 1:
        return [s]
    step = (e - s) / (steps - 1)
    return [int(s + step * i) if i < steps // 2 else int(e - step * (steps - 1 - i))
            for i in range(steps)]


@pytest.mark.parametrize("start, end, steps", [(0, 10, 5), (-5, 5, 7), (0, 100, 4), (10, -10, 6),
                                                 (0, 3, 7), (7, 7, 3), (0, 1, 2), (5, 9, 1)],
                         ids=str)
@pytest.mark.parametrize("d", [jt.int64, jt.int32, jt.int16, jt.int8], ids=dtype_id)
def test_linspace_integer_dtype(start, end, steps, d):
    assert_tensor(jt.linspace(start, end, steps, dtype=d),
                  np.array(torch_int_linspace(start, end, steps), d.np), d)


def test_linspace_integer_dtype_fractional_endpoints_match_torch():
    assert jt.linspace(0.5, 10.5, 5, dtype=jt.int64).tolist() == [0, 2, 5, 7, 10]


def test_linspace_errors():
    with pytest.raises(RuntimeError):
        jt.linspace(0, 1, -1)
    with pytest.raises((RuntimeError, TypeError)):
        jt.linspace(0, 1, 2.5)
    with pytest.raises(TypeError):
        jt.linspace("0", 1, 3)


# -- eye ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n, m", [(0, None), (1, None), (3, None), (2, 5), (5, 2), (0, 3), (4, 0)],
                         ids=str)
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_eye(n, m, d):
    t = jt.eye(n, m, dtype=d) if m is not None else jt.eye(n, dtype=d)
    assert_tensor(t, np.eye(n, m, dtype=d.np), d)


def test_eye_default_dtype_and_out():
    assert jt.eye(2).dtype is jt.float32
    out = jt.full((2, 3), 5, dtype=jt.int64)
    assert jt.eye(2, 3, out=out) is out
    assert_tensor(out, np.eye(2, 3), jt.int64)


# -- random -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [jt.rand, jt.randn], ids=["rand", "randn"])
@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=dtype_id)
def test_manual_seed_reproduces(fn, d):
    jt.manual_seed(1234)
    a = fn(3, 5, dtype=d)
    b = fn(3, 5, dtype=d)
    jt.manual_seed(1234)
    a2 = fn(3, 5, dtype=d)
    b2 = fn(3, 5, dtype=d)
    assert a.dtype is d and a.shape == (3, 5)
    np.testing.assert_array_equal(a.numpy(), a2.numpy())
    np.testing.assert_array_equal(b.numpy(), b2.numpy())
    assert not np.array_equal(a.numpy(), b.numpy())  # the stream advances
    jt.manual_seed(4321)
    assert not np.array_equal(fn(3, 5, dtype=d).numpy(), a.numpy())
    assert jt.initial_seed() == 4321


def test_randint_reproduces_and_range():
    jt.manual_seed(7)
    a = jt.randint(-3, 4, (1000,))
    jt.manual_seed(7)
    b = jt.randint(-3, 4, (1000,))
    assert a.dtype is jt.int64 and a.shape == (1000,)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    v = a.numpy()
    assert v.min() >= -3 and v.max() < 4
    assert set(np.unique(v).tolist()) == set(range(-3, 4))  # every value shows up


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=dtype_id)
def test_rand_in_unit_interval(d):
    jt.manual_seed(0)
    v = jt.rand(100_000, dtype=d).numpy()
    assert v.dtype == d.np and v.min() >= 0.0 and v.max() < 1.0
    assert abs(v.mean() - 0.5) < 0.01 and abs(v.std() - math.sqrt(1 / 12)) < 0.01


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=dtype_id)
def test_randn_moments(d):
    jt.manual_seed(0)
    v = jt.randn(100_000, dtype=d).numpy().astype(np.float64)
    assert np.isfinite(v).all()
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1.0) < 0.02
    assert abs(np.mean(np.abs(v) < 1.0) - 0.6827) < 0.01


@pytest.mark.parametrize("d", CPU_DTYPES[1:], ids=dtype_id)
def test_randint_dtypes(d):
    t = jt.randint(0, 100, (50,), dtype=d)
    assert t.dtype is d and t.shape == (50,)
    v = t.numpy()
    assert v.min() >= 0 and v.max() < 100
    if d.is_floating_point:
        assert np.all(v == np.floor(v))


def test_randint_signatures_and_errors():
    assert jt.randint(5, (3,)).shape == (3,)
    assert jt.randint(5, [2, 2]).shape == (2, 2)
    assert jt.randint(2, 5, jt.Size([4])).shape == (4,)
    assert jt.randint(0, 1, (10,)).tolist() == [0] * 10
    with pytest.raises(RuntimeError):
        jt.randint(5, 5, (2,))
    with pytest.raises(RuntimeError):
        jt.randint(5, 2, (2,))
    with pytest.raises(TypeError):
        jt.randint(5)


def test_randint_size_keyword():
    assert jt.randint(10, size=(3,)).shape == (3,)


def test_randint_range_must_fit_dtype():
    with pytest.raises(RuntimeError):
        jt.randint(250, 300, (1000,), dtype=jt.uint8)


def test_random_non_float_dtype_raises():
    for fn in (jt.rand, jt.randn):
        for d in INT_DTYPES + [jt.bool]:
            with pytest.raises(RuntimeError):
                fn(2, dtype=d)


def test_generators_are_independent_streams():
    g1, g2 = jt.Generator(), jt.Generator()
    g1.manual_seed(5)
    g2.manual_seed(5)
    a = jt.rand(4, generator=g1)
    jt.rand(10)  # the default generator does not disturb g2
    b = jt.rand(4, generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert g1.initial_seed() == 5
    with pytest.raises(TypeError):
        g1.manual_seed(1.5)
    with pytest.raises(RuntimeError):
        g1.manual_seed(1 << 64)
    g1.manual_seed(-1)  # negative seeds wrap as in torch
    assert g1.initial_seed() == (1 << 64) - 1


def test_rng_state_round_trip():
    jt.manual_seed(99)
    jt.rand(3)
    state = jt.get_rng_state()
    assert state.dtype is jt.uint8 and state.shape == (16,)
    a = jt.randn(5)
    jt.set_rng_state(state)
    b = jt.randn(5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    s = jt.seed()
    assert isinstance(s, int) and jt.initial_seed() == s


@pytest.mark.cuda
def test_fork_rng_restores_the_generators_however_the_block_ends():
    jt.manual_seed(7)
    cuda_before = jt.cuda.get_rng_state()
    with jt.random.fork_rng():
        forked = jt.rand(3)
        jt.randn(4, device="cuda")
    assert jt.cuda.get_rng_state().tolist() == cuda_before.tolist()
    assert jt.rand(3).tolist() == forked.tolist()  # the state the block started from
    state = jt.get_rng_state()
    with pytest.raises(KeyError), jt.random.fork_rng(devices=[]):
        jt.rand(5)
        raise KeyError("the block fails")
    assert jt.get_rng_state().tolist() == state.tolist()
    with jt.random.fork_rng(enabled=False):  # forks nothing
        jt.rand(2)
    assert jt.get_rng_state().tolist() != state.tolist()


def test_draws_after_randn_are_independent_of_it():
    jt.manual_seed(0)
    jt.rand(10)  # any draw that moves the offset off 0
    n = jt.randn(5, dtype=jt.float64).numpy()
    r = jt.rand(15, dtype=jt.float64).numpy()
    # Box-Muller of the later uniforms reproduces the earlier normals exactly
    rebuilt = np.sqrt(-2 * np.log(1 - r[0:10:2])) * np.cos(2 * np.pi * r[1:10:2])
    assert not np.allclose(rebuilt, n)


def test_failed_random_call_does_not_advance_the_stream():
    jt.manual_seed(3)
    expected = jt.rand(4).numpy().copy()
    jt.manual_seed(3)
    with pytest.raises(RuntimeError):
        jt.rand(4, dtype=jt.int64)
    with pytest.raises(RuntimeError):
        jt.rand(-4)
    np.testing.assert_array_equal(jt.rand(4).numpy(), expected)


def test_rand_into_non_contiguous_out_matches_contiguous_draw():
    base = np.zeros((4, 6), np.float32)
    out = jt.from_numpy(base[:, ::2])
    jt.manual_seed(11)
    jt.rand(4, 3, out=out)
    jt.manual_seed(11)
    ref = jt.rand(4, 3)
    np.testing.assert_array_equal(base[:, ::2], ref.numpy())
    assert np.all(base[:, 1::2] == 0)


def test_rand_like_reproduces():
    src = jt.zeros(2, 3, dtype=jt.float64)
    jt.manual_seed(1)
    a = jt.rand_like(src)
    jt.manual_seed(1)
    b = jt.rand(2, 3, dtype=jt.float64)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    jt.manual_seed(1)
    c = jt.randn_like(src)
    jt.manual_seed(1)
    np.testing.assert_array_equal(c.numpy(), jt.randn(2, 3, dtype=jt.float64).numpy())


# -- empty -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_empty_shape_and_dtype(d):
    t = jt.empty(3, 2, dtype=d)
    assert t.shape == (3, 2) and t.dtype is d and t.is_contiguous() and t.numpy().dtype == d.np
    assert jt.Tensor(2, 3).shape == (2, 3)


def test_randint_spans_int64s_whole_range():
    """high - low up to 2^64 - 1 (it overflowed int64: every draw came out 0)."""
    x = jt.randint(-2**63, 2**63 - 1, (4000,))
    v = np.array(x.tolist(), dtype=object)
    assert x.dtype is jt.int64 and (v < 0).sum() > 1000 and (v > 0).sum() > 1000
    y = np.array(jt.randint(2**62, 2**63, (1000,)).tolist(), dtype=object)
    assert (y >= 2**62).all() and y.max() > 2**62 + 2**61


@pytest.mark.parametrize("fn", ["empty", "zeros", "ones", "rand", "randn"])
def test_size_as_a_keyword(fn):
    """torch's `*size` routines also take ``size=`` (gat's ``torch.empty(size=(n, m))``)."""
    make = getattr(jt, fn)
    assert make(size=(2, 3)).shape == make(size=[2, 3]).shape == (2, 3)
    assert make(size=(2,), dtype=jt.float64).dtype is jt.float64
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        make(2, size=(2, 3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'sise'"):
        make(2, sise=3)
