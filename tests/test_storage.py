"""Storages against torch: UntypedStorage (aliasing a tensor's memory, bytes, copies, resize),
TypedStorage and the legacy typed classes (with torch's deprecation warning), Tensor's
untyped_storage/storage/storage_type/storage_offset, set_ to a storage, is_set_to, and tensors
made from storages; jt.save/jt.load of tensors that view one."""
import copy
import io
import warnings

import numpy as np
import pytest

import jitensor as jt
from jitensor import storage as jstorage

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def pair(values, dtype="float32"):
    return (jt.tensor(values, dtype=getattr(jt, dtype)),
            torch.tensor(values, dtype=getattr(torch, dtype)))


def same_error(fn_mine, fn_theirs, exc=Exception):
    with pytest.raises(exc) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as mine:
        fn_mine()
    assert str(mine.value) == str(theirs.value).replace("torch.", "jitensor.")


def test_untyped_storage_aliases_the_tensor():
    for ns in (jt, torch):
        a = ns.arange(6, dtype=ns.float32)
        s = a.untyped_storage()
        assert type(s) is ns.UntypedStorage
        assert (s.nbytes(), s.size(), len(s), s.element_size()) == (24, 24, 24, 1)
        assert s.device == ns.device("cpu")
        assert s.data_ptr() == a.data_ptr()
        assert a[1:].untyped_storage().data_ptr() == s.data_ptr()
        assert a.view(ns.int32).untyped_storage().data_ptr() == s.data_ptr()
        assert a.untyped_storage() is a.untyped_storage()
        s[0] = 5  # through the storage into the tensor
        assert a[0].view(ns.int32).item() == 5
        a[1] = 2.0  # and back
    mine, theirs = jt.arange(6.0).untyped_storage(), torch.arange(6.0).untyped_storage()
    assert mine.tolist() == theirs.tolist()
    assert [mine[i] for i in (0, 3, -1, -24)] == [theirs[i] for i in (0, 3, -1, -24)]


def test_whole_base_and_offsets():
    b, tb = jt.zeros(4, 5)[1:, 2:], torch.zeros(4, 5)[1:, 2:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert (b.untyped_storage().nbytes(), b.storage_offset(), b.storage().size(),
                b.t().storage_offset()) == (tb.untyped_storage().nbytes(), tb.storage_offset(),
                                            tb.storage().size(), tb.t().storage_offset())
    assert jt.zeros(0).untyped_storage().nbytes() == torch.zeros(0).untyped_storage().nbytes()


def test_bytes_get_set_slice_fill():
    mine, theirs = jt.UntypedStorage(6).fill_(0), torch.UntypedStorage(6).fill_(0)
    for s in (mine, theirs):
        s[0] = 300  # modulo 256
        s[1] = -1
        s[2:4] = 9
    assert mine.tolist() == theirs.tolist() == [44, 255, 9, 9, 0, 0]
    part, tpart = mine[1:3], theirs[1:3]
    assert type(part) is jt.UntypedStorage and part.tolist() == tpart.tolist()
    assert part.data_ptr() - mine.data_ptr() == tpart.data_ptr() - theirs.data_ptr() == 1
    part[0] = 1  # a slice aliases
    assert mine[1] == 1
    assert mine.fill_(-2).tolist() == theirs.fill_(-2).tolist()
    for m, t in [(lambda s: s[6], IndexError), (lambda s: s[-7], IndexError),
                 (lambda s: s[1.0], TypeError), (lambda s: s[0:4:2], RuntimeError),
                 (lambda s: s.__setitem__(0, 2.5), RuntimeError),
                 (lambda s: s.fill_(2.5), RuntimeError),
                 (lambda s: s.copy_(type(s)(5)), RuntimeError)]:
        same_error(lambda m=m: m(mine), lambda m=m: m(theirs), t)
    assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")
    assert repr(jt.UntypedStorage(0)) == \
        repr(torch.UntypedStorage(0)).replace("torch.", "jitensor.")


def test_copy_clone_cpu_to_and_constructors():
    mine, theirs = jt.UntypedStorage([1, 2, 300]), torch.UntypedStorage([1, 2, 300])
    assert mine.tolist() == theirs.tolist()
    c = mine.clone()
    assert c.tolist() == mine.tolist() and c.data_ptr() != mine.data_ptr()
    assert copy.copy(mine).data_ptr() != mine.data_ptr()
    d = copy.deepcopy(mine)
    assert d.tolist() == mine.tolist() and d.data_ptr() != mine.data_ptr()
    assert jt.UntypedStorage(3).copy_(mine).tolist() == [1, 2, 44]
    assert mine.cpu() is mine and mine.to(device="cpu") is mine
    assert mine.untyped() is mine
    assert (mine.is_shared(), mine.is_pinned(), mine.is_cuda, mine.get_device()) == \
        (theirs.is_shared(), theirs.is_pinned(), theirs.is_cuda, theirs.get_device())
    assert mine.type() == theirs.type().replace("torch.", "jitensor.")
    assert jt.UntypedStorage().nbytes() == torch.UntypedStorage().nbytes() == 0
    with pytest.raises(TypeError):
        jt.UntypedStorage(3).copy_(jt.zeros(3))


def test_from_buffer():
    data = b"\x01\x00\x02\x00"
    for kw in ({"dtype": "uint8"}, {"dtype": "int16", "byte_order": "big"},
               {"dtype": "int16", "byte_order": "little", "count": 1, "offset": 2}):
        mine = jt.UntypedStorage.from_buffer(data, **{**kw, "dtype": getattr(jt, kw["dtype"])})
        theirs = torch.UntypedStorage.from_buffer(data, **{**kw,
                                                           "dtype": getattr(torch, kw["dtype"])})
        assert mine.tolist() == theirs.tolist()
    same_error(lambda: jt.UntypedStorage.from_buffer(data),
               lambda: torch.UntypedStorage.from_buffer(data), RuntimeError)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert jt.FloatStorage.from_buffer(b"\x00\x00\x80\x3f", "little").tolist() == \
            torch.FloatStorage.from_buffer(b"\x00\x00\x80\x3f", "little").tolist() == [1.0]


def test_resize():
    u, tu = jt.UntypedStorage(4).fill_(3), torch.UntypedStorage(4).fill_(3)
    assert u.resizable() and tu.resizable()
    u.resize_(6)
    tu.resize_(6)
    assert u.size() == tu.size() == 6 and u.tolist()[:4] == tu.tolist()[:4] == [3] * 4
    u.resize_(2)
    assert u.tolist() == [3, 3]
    # torch's error for storages that cannot resize (jitensor: any storage a tensor views)
    n = torch.from_numpy(np.zeros(3, np.float32)).untyped_storage()
    same_error(lambda: jt.zeros(3).untyped_storage().resize_(100), lambda: n.resize_(100),
               RuntimeError)
    x = jt.empty(0).set_(u)
    assert not u.resizable()
    with pytest.raises(RuntimeError, match="not resizable"):
        u.resize_(8)
    assert x.shape == (0,)  # 2 bytes: no float32 element


def test_set_to_storage():
    a, ta = pair([0.0, 1, 2, 3, 4, 5])
    s, ts = a.untyped_storage(), ta.untyped_storage()
    t, tt = jt.tensor([]).set_(s), torch.tensor([]).set_(ts)
    assert t.shape == tt.shape and t.is_set_to(a) and tt.is_set_to(ta)
    t[0] = tt[0] = 7
    assert a[0].item() == ta[0].item() == 7
    v, tv = jt.tensor([]).set_(s, 1, (2, 2), (2, 1)), torch.tensor([]).set_(ts, 1, (2, 2), (2, 1))
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    assert v.storage_offset() == tv.storage_offset() == 1
    assert jt.tensor([]).set_(s, 1, (2,)).tolist() == torch.tensor([]).set_(ts, 1, (2,)).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_error(lambda: jt.tensor([], dtype=jt.float64).set_(a.storage()),
                   lambda: torch.tensor([], dtype=torch.float64).set_(ta.storage()),
                   RuntimeError)
        same_error(lambda: jt.tensor([], dtype=jt.int64).set_(a.storage()),
                   lambda: torch.tensor([], dtype=torch.int64).set_(ta.storage()), RuntimeError)
        w = jt.tensor([], dtype=jt.float32).set_(a.storage())
        assert w.is_set_to(a)
    # an untyped storage takes any dtype: its bytes as that dtype
    i64, ti64 = jt.tensor([], dtype=jt.int64).set_(s), torch.tensor([],
                                                                    dtype=torch.int64).set_(ts)
    assert i64.tolist() == ti64.tolist()
    same_error(lambda: jt.tensor([]).set_(s, 0, (2, 3), (1,)),
               lambda: torch.tensor([]).set_(ts, 0, (2, 3), (1,)), RuntimeError)
    same_error(lambda: jt.tensor([]).set_(s, -1, (2,), (1,)),
               lambda: torch.tensor([]).set_(ts, -1, (2,), (1,)), RuntimeError)
    n = torch.from_numpy(np.zeros(3, np.float32)).untyped_storage()
    same_error(lambda: jt.tensor([]).set_(jt.zeros(3).untyped_storage(), 0, (5,), (1,)),
               lambda: torch.tensor([]).set_(n, 0, (5,), (1,)), RuntimeError)
    same_error(lambda: jt.tensor([], requires_grad=True).set_(s),
               lambda: torch.tensor([], requires_grad=True).set_(ts), RuntimeError)
    with pytest.raises(TypeError):
        jt.tensor([]).set_(s, 1)
    # a storage no tensor views grows for set_, as torch's
    g = jt.UntypedStorage(4)
    assert jt.tensor([]).set_(g, 0, (3,), (1,)).shape == (3,) and g.nbytes() == 12


def test_tensors_from_storages():
    a, ta = pair([0.0, 1, 2, 3])
    s, ts = a.untyped_storage(), ta.untyped_storage()
    for make in (lambda ns, st: ns.Tensor(st), lambda ns, st: ns.tensor([]).new(st),
                 lambda ns, st: ns.FloatTensor(st)):
        v, tv = make(jt, s), make(torch, ts)
        assert v.shape == tv.shape and v.tolist() == tv.tolist()
        v[1] = tv[1] = 9
        assert a[1].item() == ta[1].item() == 9


def test_typed_storage_and_legacy_classes():
    jstorage._reset_warn_typed_storage_removal()
    torch.storage._reset_warn_typed_storage_removal()
    a, ta = pair([1.0, 2, 3])
    with warnings.catch_warnings(record=True) as mine:
        warnings.simplefilter("always")
        s = a.storage()
        s2 = a.storage()
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        ts = ta.storage()
        ta.storage()
    assert [str(w.message) for w in mine] == [str(w.message) for w in theirs]
    assert len(mine) == 1 and mine[0].category is UserWarning and mine[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert type(s) is jt.TypedStorage and s.dtype is jt.float32 and s2.dtype is jt.float32
        assert isinstance(s, jt.FloatStorage) and not isinstance(s, jt.DoubleStorage)
        assert (s.size(), len(s), s.nbytes(), s.element_size(), s.tolist(), s[1], s[-1]) == \
            (ts.size(), len(ts), ts.nbytes(), ts.element_size(), ts.tolist(), ts[1], ts[-1])
        assert s.untyped() is a.untyped_storage() and s.data_ptr() == a.data_ptr()
        s[0] = 5
        s[1:] = 7
        assert a.tolist() == [5, 7, 7]
        assert s.fill_(2).tolist() == [2.0] * 3 and a.tolist() == [2.0] * 3
        assert repr(s) == repr(ts.fill_(2)).replace("torch.", "jitensor.")
        assert a.storage_type() is jt.FloatStorage
        assert jt.zeros(2, dtype=jt.int64).storage_type() is jt.LongStorage
        assert jt.HalfStorage(3).size() == torch.HalfStorage(3).size() == 3
        assert jt.HalfStorage(3).type() == "jitensor.HalfStorage"  # (no float16 CPU values)
        assert jt.zeros(2, dtype=jt.complex64).storage_type() is jt.ComplexFloatStorage
        assert jt.zeros(2, dtype=jt.uint16).storage_type() is None  # (as torch's)
        same_error(lambda: jt.zeros(2).set_(jt.ComplexFloatStorage(2)),
                   lambda: torch.zeros(2).set_(torch.ComplexFloatStorage(2)), RuntimeError)
        same_error(lambda: jt.zeros(2, dtype=jt.complex128).set_(jt.FloatStorage(2)),
                   lambda: torch.zeros(2, dtype=torch.complex128).set_(torch.FloatStorage(2)),
                   RuntimeError)
        for name in ("Bool", "Byte", "Char", "Short", "Int", "Long", "Float", "Double",
                     "ComplexFloat", "ComplexDouble"):
            mine_cls, their_cls = getattr(jt, name + "Storage"), getattr(torch, name + "Storage")
            x, tx = mine_cls([1, 0, 1]), their_cls([1, 0, 1])
            assert type(x) is jt.TypedStorage and isinstance(x, mine_cls)
            assert x.tolist() == tx.tolist() and x.dtype.name == str(tx.dtype)[6:]
            assert x.type() == tx.type().replace("torch.", "jitensor.")
            assert mine_cls(3).size() == their_cls(3).size() == 3
            assert mine_cls().size() == 0
        assert jt.ByteStorage([1, 2]).float().tolist() == torch.ByteStorage([1, 2]).float().tolist()
        assert jt.IntStorage([1, 2]).double().tolist() == [1.0, 2.0]
        assert jt.TypedStorage([1, 2], dtype=jt.int32).tolist() == [1, 2]
        assert jt.TypedStorage(3).dtype is jt.get_default_dtype()
        assert jt.FloatStorage(wrap_storage=a.untyped_storage())[1] == 2.0
        c = s.clone()
        assert c.tolist() == s.tolist() and c.data_ptr() != s.data_ptr()
        same_error(lambda: jt.ByteStorage([1, 2])[5], lambda: torch.ByteStorage([1, 2])[5],
                   IndexError)
        same_error(lambda: jt.ByteStorage([1, 2])[0:1], lambda: torch.ByteStorage([1, 2])[0:1],
                   RuntimeError)
        with pytest.raises(RuntimeError, match="'device' cannot be specified"):
            jt.FloatStorage(2, device="cpu")
    assert jt.is_storage(s) and jt.is_storage(s.untyped()) and not jt.is_storage(a)
    assert jt.Storage is jt.FloatStorage and issubclass(jt.UntypedStorage, jt.StorageBase)


def test_save_load_tensors_viewing_a_storage(tmp_path):
    u = jt.UntypedStorage(16).fill_(0)
    x = jt.tensor([], dtype=jt.float32).set_(u, 0, (4,), (1,))
    y = jt.tensor([], dtype=jt.float32).set_(u, 1, (2,), (1,))
    x.copy_(jt.tensor([1.0, 2, 3, 4]))
    a = jt.arange(6.0)
    buf = io.BytesIO()
    jt.save({"x": x, "y": y, "a": a, "a1": a[2:]}, buf)
    buf.seek(0)
    back = jt.load(buf)
    assert back["x"].tolist() == [1, 2, 3, 4] and back["y"].tolist() == [2, 3]
    # (tensors of another dtype than their storage's base are saved apart, as .view(dtype)'s)
    assert back["a1"].untyped_storage().data_ptr() == back["a"].untyped_storage().data_ptr()
    assert back["a1"].storage_offset() == 2 and back["a"].untyped_storage().nbytes() == 24
    buf.seek(0)
    theirs = torch.load(buf)
    assert theirs["x"].tolist() == [1, 2, 3, 4]
    assert theirs["a1"].untyped_storage().data_ptr() == theirs["a"].untyped_storage().data_ptr()
