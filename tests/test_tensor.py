"""The Tensor object: description, conversion to Python and NumPy, copies and conversions,
in-place fills and copies, pickling and the new_* routines (NumPy as the oracle)."""
import array
import copy
import pickle

import numpy as np
import pytest
from conftest import COPY_PAIRS, CPU_DTYPES, FLOAT_DTYPES, INT_DTYPES, assert_tensor, dtype_id

import jitensor as jt


def sample(shape, dtype, seed=0):
    """Deterministic values that every dtype holds exactly."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype is jt.bool:
        a = rng.integers(0, 2, n).astype(bool)
    elif dtype.is_floating_point:
        a = (rng.integers(-40, 40, n) / 4).astype(dtype.np)
    else:
        a = rng.integers(0, 100, n).astype(dtype.np)
    return a.reshape(shape)


# -- jt.Size --------------------------------------------------------------------------------------
def test_size_is_a_tuple_subclass_with_torch_repr():
    s = jt.Size([2, 3])
    assert isinstance(s, tuple) and type(s) is jt.Size
    assert s == (2, 3) and s[0] == 2 and s[-1] == 3 and len(s) == 2
    assert repr(s) == "jitensor.Size([2, 3])"
    assert str(s) == "jitensor.Size([2, 3])"
    assert repr(jt.Size([])) == "jitensor.Size([])"
    assert repr(jt.Size([7])) == "jitensor.Size([7])"
    assert s.numel() == 6 and jt.Size([]).numel() == 1 and jt.Size([3, 0]).numel() == 0
    assert type(s[1:]) is jt.Size and s[1:] == (3,)
    assert pickle.loads(pickle.dumps(s)) == s
    assert type(pickle.loads(pickle.dumps(s))) is jt.Size


# -- description --------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (2, 0, 4), (2, 3, 4, 5)], ids=str)
def test_description(d, shape):
    t = jt.zeros(shape, dtype=d)
    ref = np.zeros(shape, d.np)
    assert t.shape == shape and type(t.shape) is jt.Size
    assert t.size() == shape and type(t.size()) is jt.Size
    assert t.dtype is d
    assert t.device == jt.device("cpu")
    assert t.requires_grad is False
    assert t.ndim == len(shape) and t.dim() == len(shape)
    assert t.numel() == ref.size and t.nelement() == ref.size
    if t.numel():  # empty tensors: see test_strides_of_empty_tensors
        assert t.stride() == contiguous_strides(shape)
    assert t.is_contiguous()
    assert t.itemsize == ref.itemsize and t.element_size() == ref.itemsize
    assert t.nbytes == ref.nbytes
    assert t.is_cuda is False
    assert t.is_floating_point() is d.is_floating_point
    assert t.layout is jt.strided
    for i in range(len(shape)):
        assert t.size(i) == shape[i] and t.size(i - len(shape)) == shape[i]
        assert t.stride(i) == t.stride()[i] and t.stride(i - len(shape)) == t.stride()[i]


def contiguous_strides(shape):
    """torch's strides of a new contiguous tensor (a zero-size dim counts as 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)], ids=str)
def test_strides_of_empty_tensors(shape):
    assert jt.zeros(shape).stride() == contiguous_strides(shape)
    assert jt.empty(shape).stride() == contiguous_strides(shape)


def test_size_and_stride_dim_out_of_range():
    t = jt.zeros(2, 3)
    for bad in (2, -3, 10):
        with pytest.raises(IndexError):
            t.size(bad)
        with pytest.raises(IndexError):
            t.stride(bad)
    with pytest.raises(IndexError):
        jt.tensor(1.5).size(1)
    with pytest.raises(IndexError):
        jt.tensor(1.5).size(0)


def test_strides_of_views_are_in_elements():
    base = np.zeros((4, 6), np.float64)
    t = jt.from_numpy(base[:, ::2])
    assert t.stride() == (6, 2) and not t.is_contiguous()
    tt = jt.from_numpy(base.T)
    assert tt.stride() == (1, 6) and tt.shape == (6, 4) and not tt.is_contiguous()
    assert jt.from_numpy(base[1]).is_contiguous()
    assert jt.from_numpy(np.zeros((3, 1), np.int16).T).is_contiguous()  # size-1 dims don't count


# -- numpy / python conversions ------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_numpy_shares_memory(d):
    t = jt.zeros(2, 3, dtype=d)
    a = t.numpy()
    assert isinstance(a, np.ndarray) and a.dtype == d.np and a.shape == (2, 3)
    a[1, 2] = 1
    assert t.tolist()[1][2] == 1
    t.fill_(1)
    assert np.all(a == 1)
    assert t.numpy() is not None and np.shares_memory(t.numpy(), a)


def test_numpy_on_requires_grad_raises():
    t = jt.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        t.numpy()
    assert np.array_equal(t.detach().numpy(), np.zeros(3, np.float32))
    assert t.numpy(force=True).shape == (3,)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_array_protocol(d):
    ref = sample((2, 3), d)
    t = jt.tensor(ref)
    a = np.asarray(t)
    assert a.dtype == d.np and a.shape == (2, 3)
    np.testing.assert_array_equal(a, ref)
    assert np.shares_memory(a, t.numpy())
    b = np.asarray(t, dtype=np.float64)
    assert b.dtype == np.float64
    np.testing.assert_array_equal(b, ref.astype(np.float64))
    c = np.array(t, copy=True)
    assert not np.shares_memory(c, t.numpy())
    np.testing.assert_array_equal(c, ref)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 0), (2, 1, 2)], ids=str)
def test_tolist(d, shape):
    ref = sample(shape, d)
    t = jt.tensor(ref)
    got = t.tolist()
    assert got == ref.tolist()
    flat = [got] if shape == () else got
    while flat and isinstance(flat[0], list):
        flat = [x for row in flat for x in row]
    py = bool if d is jt.bool else float if d.is_floating_point else int
    assert all(type(x) is py for x in flat)


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_item_and_scalar_conversions(d):
    value = sample((1,), d)[0].item()
    for t in (jt.tensor(value, dtype=d), jt.tensor([value], dtype=d),
              jt.tensor([[value]], dtype=d)):
        item = t.item()
        assert item == value
        assert type(item) is (bool if d is jt.bool else float if d.is_floating_point else int)
        assert bool(t) is bool(value)
        assert float(t) == float(value) and type(float(t)) is float
        assert int(t) == int(value) and type(int(t)) is int


def test_int_of_float_tensor_truncates():
    assert int(jt.tensor([2.7])) == 2
    assert int(jt.tensor(-2.7)) == -2


@pytest.mark.parametrize("t", [jt.zeros(2), jt.zeros(2, 2), jt.zeros(0)], ids=["2", "2x2", "empty"])
def test_scalar_conversions_need_one_element(t):
    with pytest.raises(RuntimeError):
        t.item()
    with pytest.raises(RuntimeError):
        bool(t)
    with pytest.raises(RuntimeError):
        float(t)
    with pytest.raises(RuntimeError):
        int(t)


def test_len_and_iter():
    ref = np.arange(6, dtype=np.int64).reshape(3, 2)
    t = jt.tensor(ref)
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3
    for row, r in zip(rows, ref, strict=False):
        assert isinstance(row, jt.Tensor) and row.dtype is jt.int64 and row.shape == (2,)
        assert row.tolist() == r.tolist()
    scalars = list(jt.tensor([1.5, 2.5]))
    assert [s.shape for s in scalars] == [(), ()] and [s.item() for s in scalars] == [1.5, 2.5]
    assert len(jt.zeros(0, 3)) == 0 and list(jt.zeros(0, 3)) == []
    with pytest.raises(TypeError):
        len(jt.tensor(1.0))
    with pytest.raises(TypeError):
        iter(jt.tensor(1.0))


def test_getitem_basic_views_share_memory():
    t = jt.zeros(3, 4, dtype=jt.int32)
    row = t[1]
    assert row.shape == (4,) and row.dtype is jt.int32
    row.fill_(7)
    assert t.tolist()[1] == [7, 7, 7, 7] and t.tolist()[0] == [0, 0, 0, 0]
    col = t[:, 2]
    assert col.stride() == (4,) and not col.is_contiguous()


# -- clone / contiguous / to ---------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_clone_is_an_independent_copy(d):
    ref = sample((3, 4), d)
    t = jt.tensor(ref)
    c = t.clone()
    assert_tensor(c, ref, d)
    assert not np.shares_memory(c.numpy(), t.numpy())
    c.fill_(0)
    np.testing.assert_array_equal(t.numpy(), ref)


def test_clone_of_views():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in (base[:, ::2], base.T, base[1:3, 1:5], np.broadcast_to(base[0], (3, 6))):
        c = jt.from_numpy(view).clone()
        assert_tensor(c, view, jt.float32)
        assert not np.shares_memory(c.numpy(), base)


def test_clone_keeps_requires_grad():
    assert jt.ones(2, requires_grad=True).clone().requires_grad is True


def test_clone_preserves_dense_permuted_layout():
    base = np.zeros((2, 3, 4), np.float32)
    t = jt.from_numpy(base.transpose(2, 0, 1))
    assert t.clone().stride() == t.stride()
    assert t.clone(memory_format=jt.contiguous_format).is_contiguous()


def test_contiguous():
    t = jt.zeros(2, 3)
    assert t.contiguous() is t
    base = np.arange(12, dtype=np.int16).reshape(3, 4)
    v = jt.from_numpy(base.T)
    c = v.contiguous()
    assert c is not v and c.is_contiguous()
    assert_tensor(c, base.T, jt.int16)
    assert not np.shares_memory(c.numpy(), base)


@pytest.mark.parametrize("src", CPU_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("dst", CPU_DTYPES, ids=dtype_id)
def test_to_dtype_converts_like_numpy(src, dst):
    ref = sample((7,), src, seed=3)
    t = jt.tensor(ref)
    out = t.to(dst)
    assert_tensor(out, ref.astype(dst.np), dst)
    if src is dst:
        assert out is t
    else:
        assert not np.shares_memory(out.numpy(), t.numpy())


def test_to_signatures():
    t = jt.tensor([1.5, -2.5, 0.0])
    assert t.to(jt.float32) is t
    assert t.to("float32") is t
    assert t.to("cpu") is t
    assert t.to(jt.device("cpu")) is t
    assert t.to("cpu", jt.float32) is t
    assert t.to(device="cpu", dtype=jt.float32) is t
    assert t.to(t) is t
    c = t.to(jt.float32, copy=True)
    assert c is not t and not np.shares_memory(c.numpy(), t.numpy())
    assert_tensor(c, [1.5, -2.5, 0.0], jt.float32)
    assert t.to("cpu", copy=True) is not t
    other = jt.zeros(1, dtype=jt.int64)
    assert_tensor(t.to(other), [1, -2, 0], jt.int64)
    assert_tensor(t.to("cpu", jt.int8), [1, -2, 0], jt.int8)
    assert_tensor(t.to(dtype="float64"), [1.5, -2.5, 0.0], jt.float64)
    assert_tensor(t.to(np.float64), [1.5, -2.5, 0.0], jt.float64)
    assert_tensor(t.to(int), [1, -2, 0], jt.int64)
    assert_tensor(t.to(bool), [True, True, False], jt.bool)
    with pytest.raises(TypeError):
        t.to(jt.float32, bogus=1)
    with pytest.raises(TypeError):
        t.to("cpu", jt.float32, jt.float64)


def test_to_keeps_requires_grad_for_floats_only():
    t = jt.ones(2, requires_grad=True)
    assert t.to(jt.float64).requires_grad is True
    assert t.to(jt.int64).requires_grad is False
    assert t.to(jt.float32) is t


@pytest.mark.parametrize("method, dtype", [("float", jt.float32), ("double", jt.float64),
                                           ("int", jt.int32), ("long", jt.int64),
                                           ("bool", jt.bool), ("short", jt.int16),
                                           ("char", jt.int8), ("byte", jt.uint8)])
def test_conversion_methods(method, dtype):
    ref = np.array([0.0, 1.75, 3.5, 100.25, 0.5])
    out = getattr(jt.tensor(ref, dtype=jt.float64), method)()
    assert_tensor(out, ref.astype(dtype.np), dtype)  # float -> int truncates, != 0 -> True
    same = jt.zeros(2, dtype=dtype)
    assert getattr(same, method)() is same


def test_cpu_returns_self_and_type():
    t = jt.zeros(2)
    assert t.cpu() is t
    assert t.type() == "jitensor.FloatTensor"
    assert t.type(jt.int64).dtype is jt.int64
    assert t.type("float64").dtype is jt.float64


# -- fill_ / zero_ -------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_fill_and_zero(d):
    t = jt.empty(3, 4, dtype=d)
    value = {0: True, 1: 7, 2: -2.5}[d.category]
    assert t.fill_(value) is t
    assert_tensor(t, np.full((3, 4), value, d.np), d)
    assert t.zero_() is t
    assert_tensor(t, np.zeros((3, 4), d.np), d)


@pytest.mark.parametrize("d, value, expected", [
    (jt.int8, 2.7, 2), (jt.int8, -2.7, -2), (jt.int64, 1e18, 10 ** 18), (jt.uint8, 255, 255),
    (jt.int8, -128, -128), (jt.int8, 127, 127), (jt.int16, True, 1), (jt.bool, 2.5, True),
    (jt.bool, 0, False), (jt.float32, 1, 1.0), (jt.float32, float("inf"), float("inf")),
    (jt.float64, float("-inf"), float("-inf")), (jt.float32, np.float64(0.5), 0.5),
    (jt.int32, np.int64(5), 5),
])
def test_fill_values_convert_like_torch(d, value, expected):
    t = jt.zeros(3, dtype=d).fill_(value)
    assert_tensor(t, np.full(3, expected, d.np), d)


def test_fill_nan():
    t = jt.zeros(2, dtype=jt.float64).fill_(float("nan"))
    assert t.dtype is jt.float64 and np.isnan(t.numpy()).all()


@pytest.mark.parametrize("d, value", [
    (jt.int8, 200), (jt.int8, -129), (jt.uint8, 256), (jt.int16, 1 << 15), (jt.int32, 1 << 31),
    (jt.int64, 1 << 63), (jt.int64, -(1 << 63) - 1), (jt.int8, float("nan")),
    (jt.int32, float("inf")), (jt.float32, 1e40), (jt.float32, -1e39), (jt.int8, 300.0),
    (jt.uint8, -256),
])
def test_fill_out_of_range_raises_and_leaves_tensor_unchanged(d, value):
    t = jt.ones(4, dtype=d)
    with pytest.raises(RuntimeError):
        t.fill_(value)
    assert_tensor(t, np.ones(4, d.np), d)


def test_fill_uint8_negative_wraps_like_torch():
    assert jt.zeros(2, dtype=jt.uint8).fill_(-1).tolist() == [255, 255]
    assert jt.full((2,), -255, dtype=jt.uint8).tolist() == [1, 1]


@pytest.mark.parametrize("d, value", [(jt.int8, 127.5), (jt.int8, -128.5), (jt.uint8, -0.5),
                                      (jt.uint8, 255.5)])
def test_fill_float_just_outside_int_range_raises(d, value):
    with pytest.raises(RuntimeError):
        jt.zeros(2, dtype=d).fill_(value)


def test_fill_rejects_bad_values():
    t = jt.zeros(2)
    with pytest.raises(TypeError):
        t.fill_("1")
    with pytest.raises(RuntimeError, match="cannot be converted"):
        t.fill_(1j)
    with pytest.raises(RuntimeError):
        t.fill_(jt.zeros(2))  # a 1-d tensor is not a fill value
    assert_tensor(t.fill_(jt.tensor(3.5)), [3.5, 3.5], jt.float32)  # a 0-d tensor is


# -- copy_ ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dst, src", COPY_PAIRS, ids=dtype_id)
def test_copy_converts_dtype(dst, src):
    ref = sample((6,), src, seed=5)
    t = jt.zeros(6, dtype=dst)
    assert t.copy_(jt.tensor(ref)) is t
    assert_tensor(t, ref.astype(dst.np), dst)


def test_copy_broadcasts():
    t = jt.zeros(3, 4, dtype=jt.int32)
    t.copy_(jt.tensor([1, 2, 3, 4]))
    assert_tensor(t, np.tile(np.arange(1, 5), (3, 1)), jt.int32)
    t.copy_(jt.tensor([[10], [20], [30]], dtype=jt.float64))
    assert_tensor(t, np.repeat([[10], [20], [30]], 4, axis=1), jt.int32)
    t.copy_(jt.tensor(5))
    assert_tensor(t, np.full((3, 4), 5), jt.int32)
    t.copy_(7.9)  # a Python scalar
    assert_tensor(t, np.full((3, 4), 7), jt.int32)
    t.copy_([[1, 2, 3, 4]] * 3)  # nested lists
    assert_tensor(t, np.tile(np.arange(1, 5), (3, 1)), jt.int32)
    t.copy_(np.ones((1, 4)))  # a NumPy array
    assert_tensor(t, np.ones((3, 4)), jt.int32)


@pytest.mark.parametrize("dst_shape, src_shape", [
    ((3, 5), (4,)), ((3, 4), (2, 3)), ((3, 4), (3, 1, 4)), ((3, 4), (1, 3, 4)), ((3, 4), (5,)),
    ((3, 4), (3,)), ((), (2,)), ((0,), (2,)),
], ids=str)
def test_copy_shape_mismatch_raises_clearly(dst_shape, src_shape):
    t = jt.full(dst_shape, 9.0)
    with pytest.raises(RuntimeError, match="broadcast"):
        t.copy_(jt.zeros(src_shape))
    assert_tensor(t, np.full(dst_shape, 9.0), jt.float32)


def test_copy_from_overlapping_view():
    ref = np.arange(16, dtype=np.float64).reshape(4, 4)
    t = jt.tensor(ref)
    t.copy_(jt.from_numpy(t.numpy().T))
    assert_tensor(t, ref.T, jt.float64)
    a = np.arange(10, dtype=np.int64)
    tail = jt.from_numpy(a[2:])
    tail.copy_(jt.from_numpy(a[:8]))  # a shifted overlap
    np.testing.assert_array_equal(a, [0, 1, 0, 1, 2, 3, 4, 5, 6, 7])


def test_write_into_read_only_array_raises_a_clear_error():
    a = np.zeros(3, np.float32)
    a.setflags(write=False)
    with pytest.raises(RuntimeError, match="read-only"):
        jt.from_numpy(a).fill_(1.0)
    with pytest.raises(RuntimeError, match="read-only"):
        jt.from_numpy(a).copy_(jt.ones(3))
    with pytest.raises(RuntimeError, match="read-only"):
        jt.from_numpy(np.broadcast_to(a, (2, 3))).fill_(1.0)
    np.testing.assert_array_equal(a, np.zeros(3, np.float32))


def test_copy_into_non_contiguous_views():
    base = np.zeros((4, 6), np.float32)
    jt.from_numpy(base[:, ::2]).copy_(jt.tensor([1.0, 2.0, 3.0]))
    expected = np.zeros((4, 6), np.float32)
    expected[:, ::2] = [1, 2, 3]
    np.testing.assert_array_equal(base, expected)
    jt.from_numpy(base.T).copy_(jt.tensor(np.arange(24.0).reshape(6, 4)))
    np.testing.assert_array_equal(base, np.arange(24.0).reshape(6, 4).T)


# -- requires_grad ------------------------------------------------------------------------------
def test_requires_grad_flag():
    t = jt.zeros(2)
    assert t.requires_grad is False and t.grad is None and t.grad_fn is None and t.is_leaf
    assert t.requires_grad_() is t and t.requires_grad is True
    t.requires_grad = False
    assert t.requires_grad is False
    assert jt.zeros(2, requires_grad=True).requires_grad is True
    assert jt.zeros(2, requires_grad=True).detach().requires_grad is False
    with pytest.raises(RuntimeError):
        jt.zeros(2, dtype=jt.int64).requires_grad_()


# -- pickling ------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)], ids=str)
def test_pickle_round_trip(d, shape):
    ref = sample(shape, d)
    t = jt.tensor(ref)
    for back in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert_tensor(back, ref, d)
        assert back.requires_grad is False
        assert back.device == jt.device("cpu")
        assert not np.shares_memory(back.numpy(), t.numpy())


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=dtype_id)
def test_pickle_keeps_requires_grad(d):
    t = jt.tensor([1.5, 2.5], dtype=d, requires_grad=True)
    back = pickle.loads(pickle.dumps(t))
    assert back.requires_grad is True and back.dtype is d
    assert back.detach().tolist() == [1.5, 2.5]


def test_pickle_non_contiguous_view():
    base = np.arange(12, dtype=np.int16).reshape(3, 4)
    back = pickle.loads(pickle.dumps(jt.from_numpy(base.T)))
    assert_tensor(back, base.T, jt.int16)
    assert back.is_contiguous()


# -- new_* ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_new_routines_inherit_dtype_and_device(d):
    t = jt.zeros(1, dtype=d)
    fill = {0: True, 1: 3, 2: 1.5}[d.category]
    e = t.new_empty(2, 3)
    assert e.shape == (2, 3) and e.dtype is d and e.device == t.device
    assert t.new_empty((2, 3)).shape == (2, 3)
    assert_tensor(t.new_zeros(2, 3), np.zeros((2, 3)), d)
    assert_tensor(t.new_zeros((2, 3)), np.zeros((2, 3)), d)
    assert_tensor(t.new_ones(4), np.ones(4), d)
    assert_tensor(t.new_ones(jt.Size([1, 2])), np.ones((1, 2)), d)
    assert_tensor(t.new_full((2, 2), fill), np.full((2, 2), fill), d)
    assert_tensor(t.new_tensor([1, 0, 1]), np.array([1, 0, 1]), d)
    assert_tensor(t.new_zeros(2, dtype=jt.float64), np.zeros(2), jt.float64)
    assert t.new_zeros(2, device="cpu").device == jt.device("cpu")


def test_new_routines_requires_grad_and_truncation():
    t = jt.zeros(1, dtype=jt.int32)
    assert_tensor(t.new_full((3,), 2.7), [2, 2, 2], jt.int32)
    f = jt.zeros(1)
    assert f.new_zeros(2, requires_grad=True).requires_grad is True
    assert f.new_tensor([1.0], requires_grad=True).requires_grad is True
    with pytest.raises(RuntimeError):
        t.new_zeros(2, requires_grad=True)
    src = jt.tensor([1.0, 2.0])
    copy_ = f.new_tensor(src)
    assert not np.shares_memory(copy_.numpy(), src.numpy())


# -- Tensor(...) constructor ----------------------------------------------------------------------
def test_tensor_class_constructor():
    a = jt.Tensor(2, 3)
    assert isinstance(a, jt.Tensor) and a.shape == (2, 3) and a.dtype is jt.float32
    b = jt.Tensor([1, 2])
    assert_tensor(b, [1.0, 2.0], jt.float32)  # always the default dtype, as torch.Tensor
    c = jt.Tensor()
    assert c.shape == (0,) and c.dtype is jt.float32
    d = jt.Tensor(jt.Size([4]))
    assert d.shape == (4,)
    assert isinstance(jt.zeros(1), jt.Tensor)


def test_format_and_hash():
    t = jt.tensor(2.5)
    assert f"{t:.2f}" == "2.50"
    assert hash(t) == hash(t) and len({t, jt.tensor(2.5)}) == 2  # identity hash
    assert f"{jt.tensor([1, 2])}" == "tensor([1, 2])"


@pytest.mark.parametrize("d", INT_DTYPES, ids=dtype_id)
def test_index_protocol(d):
    t = jt.tensor(3, dtype=d)
    assert [10, 11, 12, 13][t] == 13
    with pytest.raises(TypeError):
        [1, 2][jt.tensor(1.0)]


def test_data_ptr():
    t = jt.zeros(4, dtype=jt.int32)
    assert t.data_ptr() == t.numpy().ctypes.data
    assert t[2:].data_ptr() == t.data_ptr() + 8


def test_integer_index_to_0d_is_a_view():
    t = jt.zeros(3)
    x = t[1]
    assert isinstance(x.numpy(), np.ndarray) and x.shape == ()
    x.fill_(5.0)
    assert t.tolist() == [0.0, 5.0, 0.0]
    first = next(iter(jt.tensor([1, 2])))
    assert first.data_ptr() > 0


def test_tensor_of_a_python_buffer_copies():
    buf = array.array("f", [1.0, 2.0, 3.0])
    t = jt.tensor(buf)
    buf[0] = 9.0
    assert t.tolist() == [1.0, 2.0, 3.0]
    buf = array.array("f", [1.0, 2.0, 3.0])
    t = jt.tensor(memoryview(buf))
    buf[0] = 9.0
    assert t.tolist() == [1.0, 2.0, 3.0]
