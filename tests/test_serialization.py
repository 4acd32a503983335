"""jt.save / jt.load: round trips of tensors (every CPU dtype, views keeping their strides and
shared storage, 0-d, empty, Parameters) and nested containers, paths and file objects, model
and optimizer state, whole modules with weights_only=False, map_location and mmap; torch's
file layout, read both ways against torch itself; the weights-only allow-list; atomic saves
(also under a killed process); damaged and hostile files, which must fail with clear errors
without running any code; and files of jitensor's previous format."""
import functools
import io
import json
import math
import os
import pickle
import pickletools
import stat
import struct
import subprocess
import sys
import time
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest
from conftest import CPU_DTYPES, REPO, dtype_id
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt
from jitensor import nn, optim, serialization


def round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    jt.save(obj, buf)
    buf.seek(0)
    return jt.load(buf, **load_kwargs)


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype is jt.bool:
        return rng.random(shape) < 0.5
    if dtype.is_floating_point:
        return rng.standard_normal(shape).astype(dtype.np)
    return rng.integers(0, 100, shape).astype(dtype.np)


def assert_same(t, expected):
    assert isinstance(t, jt.Tensor) and t.dtype is expected.dtype
    assert t.device == expected.device and t.requires_grad == expected.requires_grad
    assert t.shape == expected.shape
    np.testing.assert_array_equal(t.detach().numpy(), expected.detach().numpy())


def records(data):
    """{name: bytes} of a zip archive's records, in order."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def archive(members):
    """A zip archive of {name: bytes}, as bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def saved(obj):
    buf = io.BytesIO()
    jt.save(obj, buf)
    return buf.getvalue()


def shares(a, b):
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


# -- round trips -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_tensor_round_trip(dtype):
    for shape in ((), (0,), (3,), (2, 0, 3), (3, 4, 2)):
        t = jt.tensor(sample(dtype, shape))
        assert_same(round_trip(t), t)
    base = jt.tensor(sample(dtype, (4, 6)))
    view = base.T[::2]  # a strided view keeps its strides and offset, as in torch
    back = round_trip(view)
    assert_same(back, view)
    assert back.stride() == view.stride() == (2, 6)


def test_views_share_their_storage():
    w = jt.arange(24.0).reshape(4, 6)
    back = round_trip({"w": w, "row": w[1], "col": w[:, 2], "t": w.T, "x": w.expand(2, 4, 6)})
    assert all(shares(back["w"], back[k]) for k in ("row", "col", "t", "x"))
    assert back["col"].stride() == (6,) and back["x"].stride() == (0, 6, 1)
    back["w"][1, 2] = -1.0  # one storage: a write shows through every view
    assert back["row"][2].item() == back["col"][1].item() == back["t"][2, 1].item() == -1.0
    dense = round_trip(w.T.clone())  # a permuted dense copy keeps its layout, as in torch
    assert dense.stride() == (1, 6) and dense.tolist() == w.T.tolist()
    members = records(saved({"w": w, "row": w[1], "other": w.clone()}))
    assert sorted(n for n in members if n.startswith("archive/data/")) == \
        ["archive/data/0", "archive/data/1"]


def test_flags_and_parameters_survive():
    t = jt.randn(3, requires_grad=True)
    p = nn.Parameter(jt.randn(2, 2))
    frozen = nn.Parameter(jt.randn(2), requires_grad=False)
    back = round_trip([t, p, frozen])
    assert_same(back[0], t)
    assert type(back[1]) is nn.Parameter and back[1].requires_grad and back[1].is_leaf
    assert type(back[2]) is nn.Parameter and not back[2].requires_grad
    np.testing.assert_array_equal(back[1].detach().numpy(), p.detach().numpy())


def test_structure_round_trip():
    obj = {
        "none": None, "bools": [True, False], "int": -(2 ** 70), "float": 0.1,
        "special": [math.inf, -math.inf], "text": "naïve ✓", "tuple": (1, (2.5, "x")),
        "ordered": OrderedDict([("b", 1), ("a", 2)]), 3: "int key", (1, 2): "tuple key",
        "meta": [jt.float64, jt.device("cpu"), jt.Size([2, 3]), jt.strided], "np": np.float32(1.5),
        "empty": [[], {}, ()], "bytes": b"\x00\xff", "set": {1, 2}, "complex": 1 - 2j,
        "counter": Counter("aab"), "bytearray": bytearray(b"ab"), "np_ints": [np.int64(7),
                                                                              np.bool_(True)],
    }
    back = round_trip(obj)
    expected = dict(obj, np=1.5)
    assert back == expected
    assert type(back["tuple"]) is tuple and type(back["tuple"][1]) is tuple
    assert type(back["ordered"]) is OrderedDict and list(back["ordered"]) == ["b", "a"]
    assert isinstance(back["meta"][2], jt.Size) and back["meta"][0] is jt.float64
    assert back["meta"][3] is jt.strided and type(back["np"]) is float
    assert [type(x) for x in back["np_ints"]] == [int, bool]
    assert math.isnan(round_trip(math.nan))
    assert list(back) == list(obj)


def test_paths_and_file_objects(tmp_path):
    t = jt.arange(5.0)
    for target in (str(tmp_path / "a.pt"), tmp_path / "b.pt"):
        jt.save({"t": t}, target)
        assert_same(jt.load(target)["t"], t)
    with open(tmp_path / "c.pt", "wb") as f:
        jt.save(t, f)
    with open(tmp_path / "c.pt", "rb") as f:
        assert_same(jt.load(f), t)
    assert zipfile.is_zipfile(tmp_path / "c.pt")  # an ordinary zip: inspectable with any tool
    assert sorted(os.listdir(tmp_path)) == ["a.pt", "b.pt", "c.pt"]  # no temporary files left
    with pytest.raises(TypeError, match="path or a binary file object, got int"):
        jt.save(t, 3)
    with pytest.raises(TypeError, match="path or a binary file object, got int"):
        jt.load(3)
    with pytest.raises(FileNotFoundError):
        jt.load(tmp_path / "missing.pt")

    class Stream(io.RawIOBase):  # neither seekable nor tellable: read whole, as torch does
        def __init__(self, data):
            self.data = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self.data.readinto(b)

    assert_same(jt.load(Stream((tmp_path / "c.pt").read_bytes())), t)


def test_shared_tensors_stay_shared():
    w = jt.randn(3, 3)
    back = round_trip({"encoder": w, "decoder": w, "other": w.clone()})
    assert back["encoder"] is back["decoder"] and back["other"] is not back["encoder"]
    members = records(saved([w, w, w]))
    assert sum(n.startswith("archive/data/") for n in members) == 1


def test_model_and_optimizer_round_trip(tmp_path):
    """A checkpoint of a float64 model and its Adam state, loaded into fresh objects, carries
    on exactly as the original does."""
    jt.manual_seed(0)

    def build():
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
        return model, optim.Adam(model.parameters(), lr=0.01, amsgrad=True)

    def step(model, opt, seed):
        rng = np.random.default_rng(seed)
        for p in model.parameters():
            p.grad = jt.tensor(rng.standard_normal(tuple(p.shape)))
        opt.step()

    model, opt = build()
    for seed in range(3):
        step(model, opt, seed)
    jt.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3},
            tmp_path / "ckpt.pt")
    ckpt = jt.load(tmp_path / "ckpt.pt")
    assert ckpt["epoch"] == 3 and ckpt["model"]["0.weight"].dtype is jt.float64
    assert ckpt["optim"]["state"][0]["step"].dtype is jt.float32
    assert ckpt["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    model2, opt2 = build()
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optim"])
    for seed in range(3, 6):
        step(model, opt, seed)
        step(model2, opt2, seed)
    for p, q in zip(model.parameters(), model2.parameters(), strict=False):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


class Custom:
    """A class of this module: a whole object needs weights_only=False (or allow-listing)."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return type(other) is Custom and other.value == self.value


def test_whole_modules_and_objects_need_weights_only_false(tmp_path):
    jt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    jt.save({"model": model, "opt": opt, "custom": Custom(3), "array": np.arange(3)},
            tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL "
                                                     "jitensor.nn.modules.container.Sequential"):
        jt.load(tmp_path / "whole.pt")
    back = jt.load(tmp_path / "whole.pt", weights_only=False)
    x = jt.randn(5, 3)
    np.testing.assert_array_equal(back["model"](x).detach().numpy(),
                                  model(x).detach().numpy())
    assert back["custom"] == Custom(3) and back["array"].tolist() == [0, 1, 2]
    # the optimizer holds the loaded model's own Parameters, so it trains it
    assert back["opt"].param_groups[0]["params"][0] is back["model"][0].weight
    back["model"](x).sum().backward()
    before = back["model"][0].weight.detach().clone()
    back["opt"].step()
    assert not np.array_equal(before.numpy(), back["model"][0].weight.detach().numpy())
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        round_trip([lambda: 0])  # as torch: what pickle cannot write, save cannot


def _with_location(path, location):
    """Rewrite a saved file so its storages claim they came from `location` (CUDA tensors
    cannot be made on this machine, but their files can)."""
    members = records(path.read_bytes())
    old = pickle.BINUNICODE + struct.pack("<I", 3) + b"cpu"
    new = pickle.BINUNICODE + struct.pack("<I", len(location)) + location.encode()
    assert old in members["archive/data.pkl"]
    members["archive/data.pkl"] = members["archive/data.pkl"].replace(old, new)
    path.write_bytes(archive(members))
    return path


def test_map_location(tmp_path):
    path = tmp_path / "t.pt"
    jt.save({"w": jt.tensor([1.0, 2.0]), "v": jt.tensor([[1.0, 2.0]])[:, 1]}, path)
    _with_location(path, "cuda:1")
    for where in ("cpu", jt.device("cpu"), {"cuda:1": "cpu"}, {"cuda:1": jt.device("cpu")}):
        back = jt.load(path, map_location=where)
        assert back["w"].device == "cpu" and back["v"].tolist() == [2.0]
    seen = []

    def relocate(t, location):
        seen.append((t.device, tuple(t.shape), location))
        return t * 2

    back = jt.load(path, map_location=relocate)
    assert seen == [(jt.device("cpu"), (2,), "cuda:1")] * 2 and back["w"].tolist() == [2.0, 4.0]
    if not jt.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            jt.load(path)  # back to the saved device
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            jt.load(path, map_location={"cuda:0": "cpu"})  # a mapping for another device
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            jt.load(path, map_location=lambda t, loc: None)  # None: the saved device
    jt.save({"w": jt.tensor([1.0, 2.0])}, path)
    assert jt.load(path, map_location=lambda t, loc: None)["w"].device == "cpu"
    with pytest.raises(RuntimeError, match="map_location returned a str"):
        jt.load(path, map_location=lambda t, loc: "cpu")


def test_mmap_views_the_file(tmp_path):
    path = tmp_path / "m.pt"
    w = jt.arange(12.0).reshape(3, 4)
    jt.save({"w": w, "col": w[:, 1], "i": jt.tensor([1, 2], dtype=jt.int16)}, path)
    back = jt.load(path, mmap=True)
    assert_same(back["w"], w) and assert_same(back["col"], w[:, 1])
    assert back["i"].tolist() == [1, 2] and shares(back["w"], back["col"])
    assert isinstance(back["w"].numpy().base, np.ndarray)  # the file's pages, not a copy
    back["w"][0, 0] = 7.0  # copy-on-write: the file keeps its values
    assert jt.load(path)["w"][0, 0].item() == 0.0
    with pytest.raises(ValueError, match="must be a file path"):
        jt.load(io.BytesIO(path.read_bytes()), mmap=True)


# -- torch's layout ----------------------------------------------------------------------------
def test_file_layout_is_torchs():
    """The records, their order and contents, 64-byte alignment of every record's data, and a
    pickle that names torch's globals (and no jitensor ones) for a state dict."""
    w = jt.arange(6.0).reshape(2, 3)
    data = saved(OrderedDict([("w", w), ("b", nn.Parameter(jt.zeros(2))),
                              ("n", jt.tensor(3, dtype=jt.int64))]))
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        infos = z.infolist()
        assert [i.filename for i in infos] == [
            "archive/data.pkl", "archive/.format_version", "archive/.storage_alignment",
            "archive/byteorder", "archive/data/0", "archive/data/1", "archive/data/2",
            "archive/version", "archive/.data/serialization_id"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        assert z.read("archive/version") == b"3\n" and z.read("archive/byteorder") == b"little"
        assert z.read("archive/.format_version") == b"1"
        assert z.read("archive/.storage_alignment") == b"64"
        assert z.read("archive/.data/serialization_id").isdigit()
        assert z.read("archive/data/0") == np.arange(6.0, dtype=np.float32).tobytes()
        pkl = z.read("archive/data.pkl")
    for info in infos:  # where each record's data starts: after its local header
        name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:
                                                         info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename
    text = io.StringIO()
    pickletools.dis(pkl, out=text)
    globals_ = {line.split("GLOBAL")[1].strip().strip("'") for line in
                text.getvalue().splitlines() if "GLOBAL" in line}
    assert globals_ == {"collections OrderedDict", "torch._utils _rebuild_tensor_v2",
                        "torch._utils _rebuild_parameter", "torch FloatStorage",
                        "torch LongStorage"}
    assert pkl[:2] == b"\x80\x02"  # protocol 2, as torch.save's default


def test_zip64_records_load(monkeypatch):
    """Records past 4 GiB switch to zip64 fields; forced here for every record."""
    monkeypatch.setattr(serialization, "_ZIP64_LIMIT", 0)
    data = saved({"w": jt.arange(5.0), "i": jt.tensor([1, 2], dtype=jt.int8)})
    monkeypatch.undo()
    assert b"PK\x06\x06" in data and b"PK\x06\x07" in data  # zip64 end records
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None
    back = jt.load(io.BytesIO(data))
    assert back["w"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and back["i"].tolist() == [1, 2]


def test_byte_order_and_compression_of_other_writers():
    """A big-endian file's storages are swapped on load (torch records the order); a
    checkpoint re-zipped with compression still loads."""
    w = jt.tensor([1.0, -2.5, 3.0], dtype=jt.float64)
    members = records(saved({"w": w, "b": jt.tensor([True, False])}))
    members["archive/byteorder"] = b"big"
    members["archive/data/0"] = np.frombuffer(members["archive/data/0"], "<f8").astype(
        ">f8").tobytes()
    back = jt.load(io.BytesIO(archive(members)))
    assert back["w"].tolist() == [1.0, -2.5, 3.0] and back["b"].tolist() == [True, False]
    members = records(saved({"w": w}))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    assert jt.load(io.BytesIO(buf.getvalue()))["w"].tolist() == [1.0, -2.5, 3.0]


def test_arguments_torch_has():
    buf = io.BytesIO()
    jt.save({"w": jt.ones(2)}, buf, pickle_protocol=4)
    buf.seek(0)
    assert jt.load(buf, weights_only=False, pickle_module=pickle)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        jt.load(io.BytesIO(buf.getvalue()), pickle_module=pickle)
    with pytest.raises(NotImplementedError, match="zip format"):
        jt.save(jt.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)
    with pytest.raises(TypeError, match="pickle._Pickler"):
        jt.save(jt.ones(1), io.BytesIO(), pickle_module=json)


@pytest.mark.slow
@pytest.mark.subprocess
def test_torch_is_never_imported():
    code = ("import io, sys, jitensor as jt\n"
            "b = io.BytesIO(); jt.save({'w': jt.ones(2), 'p': jt.nn.Parameter(jt.ones(1))}, b)\n"
            "b.seek(0); jt.load(b); b.seek(0); jt.load(b, weights_only=False)\n"
            "print('torch' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=REPO, timeout=300, check=True)
    assert out.stdout.strip() == "False", out.stderr


# -- against torch -----------------------------------------------------------------------------
@pytest.mark.torch
def test_torch_reads_jitensor_files(tmp_path):
    torch = pytest.importorskip("torch")
    tensors = {d.name: jt.tensor(sample(d, (3, 4), seed=i)) for i, d in enumerate(CPU_DTYPES)}
    views = {f"{name}.view": t.T[1:] for name, t in tensors.items()}
    extras = {"scalar": jt.tensor(2.5), "empty": jt.zeros(0, 3),
              "grad": jt.ones(2, requires_grad=True), "param": nn.Parameter(jt.ones(2, 2)),
              "frozen": nn.Parameter(jt.ones(1), False)}
    meta = {"nested": [(1, "a"), {"k": 2.5}], "ordered": OrderedDict(a=1),
            "size": jt.Size([2, 3]), "dtype": jt.int16, "device": jt.device("cpu"), "none": None}
    jt.save({**tensors, **views, **extras, **meta}, tmp_path / "jt.pt")
    back = torch.load(tmp_path / "jt.pt", weights_only=True)
    for name, t in {**tensors, **views, **extras}.items():
        theirs = back[name]
        assert str(theirs.dtype) == f"torch.{t.dtype.name}", name
        assert tuple(theirs.shape) == tuple(t.shape) and theirs.stride() == t.stride(), name
        assert theirs.requires_grad == t.requires_grad, name
        np.testing.assert_array_equal(theirs.detach().numpy(), t.detach().numpy())
    for name in tensors:  # a view shares its base's storage in torch too
        assert back[f"{name}.view"].untyped_storage().data_ptr() == \
            back[name].untyped_storage().data_ptr()
        assert back[f"{name}.view"].storage_offset() == 1
    assert type(back["param"]) is torch.nn.Parameter and back["param"].requires_grad
    assert type(back["frozen"]) is torch.nn.Parameter and not back["frozen"].requires_grad
    assert back["nested"] == [(1, "a"), {"k": 2.5}] and back["ordered"] == OrderedDict(a=1)
    assert back["size"] == torch.Size([2, 3]) and back["dtype"] is torch.int16
    assert back["device"] == torch.device("cpu") and back["none"] is None
    assert torch.load(tmp_path / "jt.pt", weights_only=True, mmap=True)["float32"].tolist() \
        == tensors["float32"].tolist()


@pytest.mark.torch
def test_torch_reads_zip64_files(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(serialization, "_ZIP64_LIMIT", 0)
    jt.save({"w": jt.arange(4.0)}, tmp_path / "z.pt")
    assert torch.load(tmp_path / "z.pt", weights_only=True)["w"].tolist() == [0, 1, 2, 3]


@pytest.mark.torch
def test_jitensor_reads_torch_files(tmp_path):
    torch = pytest.importorskip("torch")
    dtypes = [getattr(torch, d.name) for d in CPU_DTYPES]
    tensors = {str(d): torch.arange(12).reshape(3, 4).to(d) for d in dtypes}
    views = {f"{n}.view": t.T[1:] for n, t in tensors.items()}
    obj = {**tensors, **views, "scalar": torch.tensor(1.5), "empty": torch.empty(0, 2),
           "param": torch.nn.Parameter(torch.ones(2)), "grad": torch.ones(2, requires_grad=True),
           "expanded": torch.ones(3)[None].expand(2, 3), "size": torch.Size([1, 2]),
           "nested": [(torch.zeros(1), {"x": 3})], "dtype": torch.float64,
           "device": torch.device("cpu"), "bytes": b"ab", "set": {1}}
    torch.save(obj, tmp_path / "t.pt")
    back = jt.load(tmp_path / "t.pt")
    for name, t in obj.items():
        if isinstance(t, torch.Tensor):
            mine = back[name]
            assert mine.dtype.name == str(t.dtype).removeprefix("torch."), name
            assert tuple(mine.shape) == tuple(t.shape) and mine.stride() == t.stride(), name
            assert mine.requires_grad == t.requires_grad, name
            np.testing.assert_array_equal(mine.detach().numpy(), t.detach().numpy())
    for name in tensors:
        assert shares(back[name], back[f"{name}.view"])
    assert type(back["param"]) is nn.Parameter and back["param"].requires_grad
    assert back["size"] == jt.Size([1, 2]) and isinstance(back["size"], jt.Size)
    assert back["dtype"] is jt.float64 and back["device"] == jt.device("cpu")
    assert back["bytes"] == b"ab" and back["set"] == {1}
    assert back["nested"][0][1] == {"x": 3}
    # protocol 4 pickles (another opcode set) and files saved in torch's "archive" name
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf, pickle_protocol=4)
    buf.seek(0)
    assert jt.load(buf)["w"].tolist() == [1.0, 1.0]


@pytest.mark.torch
def test_torch_dtypes_jitensor_lacks_are_named(tmp_path):
    torch = pytest.importorskip("torch")
    for dtype, name in ((torch.complex32, "complex32"), (torch.float8_e4m3fn, "float8_e4m3fn")):
        torch.save({"w": torch.ones(2, dtype=dtype)}, tmp_path / "t.pt")
        with pytest.raises(RuntimeError, match=f"t.pt.*torch.{name} values; jitensor has no "
                                               f"{name} dtype"):
            jt.load(tmp_path / "t.pt")


@pytest.mark.torch
def test_torch_objects_and_formats_jitensor_cannot_read(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save(torch.nn.Linear(2, 2), tmp_path / "m.pt")
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear, which "
                                                     "jitensor has no counterpart for"):
        jt.load(tmp_path / "m.pt", weights_only=False)
    torch.save({"w": torch.ones(2)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="torch's legacy format"):
        jt.load(tmp_path / "old.pt")


def _torch_model(torch):
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                               torch.nn.Linear(4, 2)).double()


def _jt_model():
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()


@pytest.mark.torch
def test_model_state_dict_round_trips_through_torch(tmp_path):
    torch = pytest.importorskip("torch")
    jt.manual_seed(0)
    mine, theirs = _jt_model(), _torch_model(torch)
    x = np.random.default_rng(0).standard_normal((5, 3))

    def same(mine, theirs):
        ours, their = mine.state_dict(), theirs.state_dict()
        assert list(ours) == list(their)
        for name in ours:  # the values exactly; the outputs to rounding (summation order)
            np.testing.assert_array_equal(ours[name].numpy(), their[name].numpy())
        np.testing.assert_allclose(theirs(torch.tensor(x)).detach().numpy(),
                                   mine(jt.tensor(x)).detach().numpy(), rtol=1e-13)

    jt.save(mine.state_dict(), tmp_path / "jt.pt")
    theirs.load_state_dict(torch.load(tmp_path / "jt.pt", weights_only=True))
    same(mine, theirs)
    with torch.no_grad():
        for p in theirs.parameters():
            p.mul_(-2.0)
    torch.save(theirs.state_dict(), tmp_path / "torch.pt")  # an OrderedDict with _metadata
    mine2 = _jt_model()
    mine2.load_state_dict(jt.load(tmp_path / "torch.pt"))
    same(mine2, theirs)


@pytest.mark.torch
def test_optimizer_state_round_trips_through_torch(tmp_path):
    """Adam's state goes jitensor -> torch -> jitensor mid-training, and each library carries
    on as the other would have."""
    torch = pytest.importorskip("torch")
    jt.manual_seed(0)
    rng = np.random.default_rng(0)
    grads = [[rng.standard_normal(s) for s in ((4, 3), (4,), (2, 4), (2,))] for _ in range(6)]

    def jt_step(model, opt, g):
        for p, x in zip(model.parameters(), g, strict=False):
            p.grad = jt.tensor(x)
        opt.step()

    def torch_step(model, opt, g):
        for p, x in zip(model.parameters(), g, strict=False):
            p.grad = torch.tensor(x)
        opt.step()

    def same(mine, theirs):
        for p, q in zip(mine.parameters(), theirs.parameters(), strict=False):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12,
                                       atol=1e-15)

    mine = _jt_model()
    opt = optim.Adam(mine.parameters(), lr=0.01, amsgrad=True, weight_decay=0.1)
    for g in grads[:2]:
        jt_step(mine, opt, g)
    jt.save({"model": mine.state_dict(), "optim": opt.state_dict()}, tmp_path / "jt.pt")
    ckpt = torch.load(tmp_path / "jt.pt", weights_only=True)
    theirs = _torch_model(torch)
    topt = torch.optim.Adam(theirs.parameters(), lr=0.01, amsgrad=True, weight_decay=0.1)
    theirs.load_state_dict(ckpt["model"])
    topt.load_state_dict(ckpt["optim"])
    for g in grads[2:4]:
        jt_step(mine, opt, g)
        torch_step(theirs, topt, g)
    same(mine, theirs)
    torch.save({"model": theirs.state_dict(), "optim": topt.state_dict()}, tmp_path / "t.pt")
    ckpt = jt.load(tmp_path / "t.pt")
    mine2 = _jt_model()
    opt2 = optim.Adam(mine2.parameters(), lr=0.01, amsgrad=True, weight_decay=0.1)
    mine2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optim"])
    for g in grads[4:]:
        jt_step(mine2, opt2, g)
        torch_step(theirs, topt, g)
    same(mine2, theirs)


@pytest.mark.cuda
@pytest.mark.torch
def test_cuda_tensors_both_ways(tmp_path):
    """CUDA tensors save from the device (views sharing their storage) and torch.save's
    float16 loads onto it (in numba's simulator without a GPU)."""
    torch = pytest.importorskip("torch")
    if not jt.cuda.is_available():
        pytest.skip("CUDA is not available")
    w = jt.arange(6.0, device="cuda").reshape(2, 3)
    jt.save({"w": w, "row": w[1]}, tmp_path / "c.pt")
    back = torch.load(tmp_path / "c.pt", weights_only=True, map_location="cpu")
    assert back["row"].tolist() == [3.0, 4.0, 5.0] and back["row"].storage_offset() == 3
    mine = jt.load(tmp_path / "c.pt")
    assert mine["w"].is_cuda and mine["row"].tolist() == [3.0, 4.0, 5.0]
    torch.save({"h": torch.arange(4, dtype=torch.float16)[1:]}, tmp_path / "h.pt")
    h = jt.load(tmp_path / "h.pt", map_location="cuda")["h"]
    assert h.is_cuda and h.dtype is jt.float16 and h.cpu().tolist() == [1.0, 2.0, 3.0]


# -- the allow-list ----------------------------------------------------------------------------
class _Exploit:
    """Unpickling this runs a shell command that creates the file named `marker`."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _EvalExploit(_Exploit):
    def __reduce__(self):
        return (eval, (f"open({str(self.marker)!r}, 'w')",))


def _checkpoint(pkl):
    return io.BytesIO(archive({"archive/data.pkl": pkl, "archive/version": b"3\n"}))


def test_payloads_are_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    for exploit, message in ((_Exploit, "GLOBAL posix.system is from module posix, which is "
                                        "blocked"),
                             (_EvalExploit, "Unsupported global: GLOBAL builtins.eval was not "
                                            "an allowed global by default. Please use "
                                            r"`jitensor.serialization.add_safe_globals\(\[eval")):
        for protocol in (2, 4):
            pkl = pickle.dumps({"w": exploit(marker)}, protocol=protocol)
            with pytest.raises(pickle.UnpicklingError, match=message) as refused:
                jt.load(_checkpoint(pkl))
            assert isinstance(refused.value, RuntimeError)  # as every fault of a file
            assert not marker.exists()
    path = tmp_path / "evil.pt"  # a bare pickle (not a checkpoint) is never unpickled at all
    path.write_bytes(pickle.dumps({"w": _Exploit(marker)}))
    with pytest.raises(RuntimeError, match="evil.pt.*not a checkpoint"):
        jt.load(path, weights_only=False)
    assert not marker.exists()


def test_safe_globals():
    data = saved({"custom": Custom(1)})
    assert serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {__name__}.Custom"):
        jt.load(io.BytesIO(data))
    with serialization.safe_globals([Custom]):
        assert serialization.get_safe_globals() == [Custom]
        assert jt.load(io.BytesIO(data))["custom"] == Custom(1)
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([(Custom, f"{__name__}.Custom")])
    try:
        assert jt.load(io.BytesIO(data))["custom"] == Custom(1)
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(TypeError, match="module.name"):
        serialization.add_safe_globals([(Custom, 3)])
    with serialization.safe_globals([os.system]), pytest.raises(pickle.UnpicklingError,
                                                                  match="blocked"):
        jt.load(_checkpoint(pickle.dumps(_Exploit("x"), protocol=2)))


def _ops(*parts):
    """A protocol 2 pickle from opcodes and their arguments."""
    return b"\x80\x02" + b"".join(parts) + pickle.STOP


def _global(module, name):
    return pickle.GLOBAL + f"{module}\n{name}\n".encode()


def test_opcodes_that_could_misuse_allowed_globals_are_refused():
    float32 = (jt.float32.itemsize, jt.float32.np)
    cases = [  # BUILD on a dtype would change jt.float32 for the whole process
        (_ops(_global("torch", "float32"), pickle.NONE, pickle.EMPTY_DICT,
              pickle.BINUNICODE + struct.pack("<I", 8) + b"itemsize", pickle.BININT1 + b"\x01",
              pickle.SETITEM, pickle.TUPLE2, pickle.BUILD), "sets the state of a dtype"),
        # Tensor(10**12) would allocate what the file asks
        (_ops(_global("torch", "Tensor"), pickle.LONG1 + b"\x06" + (10 ** 12).to_bytes(6, "little"),
              pickle.TUPLE1, pickle.REDUCE), "calls <class 'jitensor.tensor.Tensor'>"),
        (_ops(_global("torch", "Tensor"), pickle.BININT1 + b"\x05", pickle.TUPLE1,
              pickle.NEWOBJ), "creates a <class 'jitensor.tensor.Tensor'>"),
        (_ops(_global("collections", "OrderedDict"), pickle.EMPTY_TUPLE, pickle.REDUCE,
              pickle.BININT1 + b"\x01", pickle.APPEND), "APPEND to a OrderedDict"),
        (_ops(pickle.MARK, pickle.BININT1 + b"\x01", pickle.INST + b"builtins\nlist\n"),
         "INST opcode"),
    ]
    for pkl, message in cases:
        with pytest.raises(pickle.UnpicklingError, match=message):
            jt.load(_checkpoint(pkl))
    assert (jt.float32.itemsize, jt.float32.np) == float32
    with pytest.raises(RuntimeError, match="a bytearray is made from a int"):
        jt.load(_checkpoint(_ops(_global("builtins", "bytearray"),
                                 pickle.LONG1 + b"\x06" + (10 ** 12).to_bytes(6, "little"),
                                 pickle.TUPLE1, pickle.REDUCE)))


# -- damaged and hostile files -----------------------------------------------------------------
def test_damaged_files_give_clear_errors(tmp_path):
    good = saved({"w": jt.arange(100.0), "v": jt.ones(3, dtype=jt.int64)})
    path = tmp_path / "t.pt"
    rng = np.random.default_rng(0)
    damaged = [(good[:n], "damaged or truncated zip archive") for n in (10, 200, 900,
                                                                       len(good) - 10)]
    damaged += [(rng.bytes(5000), "not a checkpoint"), (b"", "not a checkpoint"),
                (b"PK" + rng.bytes(300), "damaged or truncated zip archive")]
    for drop, message in (("archive/data/0", "lacks the record archive/data/0"),
                          ("archive/data.pkl", "lacks the record archive/data.pkl")):
        members = records(good)
        del members[drop]
        damaged.append((archive(members), message))
    members = records(good)  # a storage record one byte short of its tensor
    members["archive/data/0"] = members["archive/data/0"][:-1]
    damaged.append((archive(members), "record archive/data/0 holds 399 bytes where its "
                                      "storage of 100 float32 elements needs 400"))
    for cut, message in ((40, "data.pkl ends inside a GLOBAL opcode"),
                         (100, "data.pkl cannot be unpickled")):  # the pickle cut short
        members = records(good)
        members["archive/data.pkl"] = members["archive/data.pkl"][:cut]
        damaged.append((archive(members), message))
    corrupt = bytearray(good)  # a flipped byte inside a storage: the CRC catches it
    corrupt[good.index(np.arange(100.0, dtype=np.float32).tobytes()) + 7] ^= 0xFF
    damaged.append((bytes(corrupt), "record archive/data/0 cannot be read"))
    empty = io.BytesIO()
    zipfile.ZipFile(empty, "w").close()
    damaged.append((empty.getvalue(), "empty zip archive"))
    for data, message in damaged:
        path.write_bytes(data)
        with pytest.raises(RuntimeError, match=f"cannot load '.*t.pt': .*{message}"):
            jt.load(path)


def test_huge_declared_sizes_are_refused_before_allocating():
    good = saved({"w": jt.arange(4.0)})
    members = records(good)
    pkl = members["archive/data.pkl"]
    cases = []
    # a storage that claims 2**40 elements: checked against its record, never allocated
    huge = pkl.replace(pickle.BININT1 + b"\x04t", pickle.LONG1 + b"\x06" +
                       (2 ** 40).to_bytes(6, "little") + b"t")
    assert huge != pkl
    cases.append((archive({**members, "archive/data.pkl": huge}), "needs 4398046511104"))
    # a tensor whose size and strides reach past its storage
    wide = pkl.replace(pickle.BININT1 + b"\x04\x85", pickle.BININT1 + b"\x09\x85")
    assert wide != pkl
    cases.append((archive({**members, "archive/data.pkl": wide}), "reaches element 8 of "
                                                                  "storage 0, which holds 4"))
    # strings and frames that declare more bytes than the pickle holds
    for opcode in (pickle.BINUNICODE + struct.pack("<I", 2 ** 32 - 1),
                   pickle.BINBYTES8 + struct.pack("<Q", 2 ** 62),
                   pickle.FRAME + struct.pack("<Q", 2 ** 62)):
        cases.append((archive({"archive/data.pkl": b"\x80\x04" + opcode + b"abc."}),
                      "data.pkl cannot be unpickled"))
    # a zip record whose declared size exceeds the file
    raw = bytearray(good)
    central = raw.index(b"PK\x01\x02")  # the first entry of the directory: data.pkl's
    struct.pack_into("<II", raw, central + 20, 2 ** 31, 2 ** 31)  # its sizes
    cases.append((bytes(raw), "declares 2147483648 bytes, which the file's"))
    for data, message in cases:
        with pytest.raises(RuntimeError, match=message):
            jt.load(io.BytesIO(data))


def test_deep_nesting_is_refused_without_recursion():
    n = 100_000
    deep = [  # a tuple nested deeper than the C stack can hash, as a dict key
        _ops(pickle.EMPTY_DICT, pickle.EMPTY_TUPLE, pickle.TUPLE1 * n, pickle.BININT1 + b"\x01",
             pickle.SETITEM),
        _ops(pickle.EMPTY_LIST * n, pickle.APPEND * (n - 1)),  # lists in lists
        _ops(pickle.MARK * n, pickle.LIST * n),  # the same, by protocol 0's opcodes
    ]
    for pkl in deep:
        with pytest.raises(RuntimeError, match="nests containers more than 1000 deep"):
            jt.load(_checkpoint(pkl))
    shallow = [[[[1]]]] * 3  # real nesting loads
    assert jt.load(_checkpoint(pickle.dumps(shallow, protocol=2))) == shallow


def _same(a, b):
    if isinstance(a, jt.Tensor):
        assert_same(a, b)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    else:
        assert a == b and type(a) is type(b)


@functools.cache
def _valid():
    """(an object, its checkpoint, a checkpoint of jitensor's previous format)."""
    original = {"linear": nn.Linear(3, 2).state_dict(), "view": jt.arange(10.0)[2:8:2],
                "ints": jt.ones(2, 3, dtype=jt.int64).t(), "size": jt.Size([2, 1]),
                "dtype": jt.float64, "nested": [1, (2.5, "a", b"b"), {3: None}],
                "ordered": OrderedDict(a=Counter("ab"))}
    legacy = io.BytesIO()
    _legacy_file(legacy, {"list": [_tensor_node(0), {"dtype": "float64"}, {"size": [2]},
                                   {"tuple": [1, "x", None]}]}, [np.arange(3, dtype=np.float32)])
    return original, saved(original), legacy.getvalue()

_EDITS = st.lists(st.tuples(st.sampled_from(["set", "insert", "delete", "cut"]),
                            st.integers(0, 2 ** 32), st.binary(min_size=1, max_size=8)),
                  min_size=1, max_size=6)


def _edit(raw, edits):
    raw = bytearray(raw)
    for kind, at, data in edits:
        at %= len(raw) + 1
        if kind == "set":
            raw[at:at + len(data)] = data
        elif kind == "insert":
            raw[at:at] = data
        elif kind == "delete":
            del raw[at:at + len(data)]
        else:
            del raw[at:]
    return bytes(raw)


@settings(max_examples=300)
@given(target=st.sampled_from(["file", "data.pkl", "record", "previous format"]),
       member=st.integers(0, 100), edits=_EDITS)
def test_mutated_checkpoints_load_or_raise_runtime_error(target, member, edits):
    """Bytes of a valid checkpoint changed, inserted, deleted or cut: anywhere in the file (the
    CRCs catch changed data, so what loads is the original), or in one record rewritten with
    a valid zip around it (data.pkl, to reach the unpickler, or any record, or a record of the
    previous format). Each load gives an object or a RuntimeError naming the file, in bounded
    memory and without running anything."""
    original, good, legacy = _valid()
    if target == "file":
        data = _edit(good, edits)
    else:
        members = records(legacy if target == "previous format" else good)
        name = "archive/data.pkl" if target == "data.pkl" else list(members)[member % len(members)]
        members[name] = _edit(members[name], edits)
        data = archive(members)
    try:
        loaded = jt.load(io.BytesIO(data))
    except RuntimeError as e:
        assert str(e).startswith("jt.load: cannot load the file object: "), e
        return
    if target == "file":
        _same(original, loaded)


# -- jitensor's previous format ----------------------------------------------------------------
def _legacy_file(path, root, arrays):
    """A file as jitensor's previous jt.save wrote it: jitensor/data.json and .npy arrays."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("jitensor/data.json",
                   json.dumps({"format": "jitensor", "version": 1, "root": root}))
        for n, a in enumerate(arrays):
            with z.open(f"jitensor/tensors/{n}.npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, a, allow_pickle=False)
    return path


def _tensor_node(n, dtype="float32", device="cpu", **flags):
    return {"tensor": n, "dtype": dtype, "device": device, "requires_grad": False,
            "parameter": False, **flags}


def test_previous_format_still_loads(tmp_path):
    meta = {"list": [{"dtype": "float64"}, {"device": "cpu"}, {"size": [2, 3]},
                     {"tuple": [1, "x", None]}, {"dict": [[3, 4.5]]}]}
    root = {"OrderedDict": [["w", _tensor_node(0)], ["p", _tensor_node(1, "int64")],
                            ["again", _tensor_node(0)],
                            ["param", _tensor_node(2, requires_grad=True, parameter=True)],
                            ["meta", meta]]}
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([7, 8]),
              np.ones(2, np.float32)]
    path = _legacy_file(tmp_path / "old.jt", root, arrays)
    back = jt.load(path)
    assert type(back) is OrderedDict and list(back) == ["w", "p", "again", "param", "meta"]
    assert back["w"].tolist() == arrays[0].tolist() and back["again"] is back["w"]
    assert back["p"].dtype is jt.int64 and type(back["param"]) is nn.Parameter
    assert back["param"].requires_grad
    assert back["meta"] == [jt.float64, jt.device("cpu"), jt.Size([2, 3]), (1, "x", None),
                            {3: 4.5}]
    assert jt.load(path, map_location=lambda t, loc: t * 2)["w"].tolist() == \
        (arrays[0] * 2).tolist()


def test_previous_format_damage_gives_clear_errors(tmp_path):
    path = tmp_path / "old.jt"
    good = records(_legacy_file(path, {"list": [_tensor_node(0)]}, [np.zeros(2, np.float32)])
                   .read_bytes())
    npy = good["jitensor/tensors/0.npy"]
    wrong = io.BytesIO()
    np.save(wrong, np.zeros(2, np.int32))
    evil = io.BytesIO()
    np.save(evil, np.array([_Exploit(tmp_path / "pwned")], dtype=object), allow_pickle=True)
    deep = {"format": "jitensor", "version": 1, "root": None}
    deep_json = json.dumps(deep).replace("null", '{"list": [' * 5000 + "]}" * 5000)
    cases = [
        ("jitensor/data.json", b"{not json", "no readable jitensor/data.json"),
        ("jitensor/data.json", b'{"format": "other"}', "does not describe a jitensor object"),
        ("jitensor/data.json", b'{"format": "jitensor", "version": 99, "root": null}',
         "format version 99"),
        ("jitensor/data.json", b'{"format": "jitensor", "version": 1, "root": {"eval": 1}}',
         "entry it cannot read"),
        ("jitensor/data.json", deep_json.encode(), "nests too deeply"),
        ("jitensor/tensors/0.npy", None, "lacks the record jitensor/tensors/0.npy"),
        ("jitensor/tensors/0.npy", wrong.getvalue(),
         "holds int32 values but the structure says jitensor.float32"),
        ("jitensor/tensors/0.npy", evil.getvalue(), "allow_pickle=False"),
        # found by test_mutated_checkpoints_load_or_raise_runtime_error: NumPy's header
        # parser raised tokenize's TokenError, the dtype lookup a TypeError
        ("jitensor/tensors/0.npy", npy.replace(b"}  ", b"} (", 1),
         "cannot be read as an array .TokenError"),
        ("jitensor/data.json", good["jitensor/data.json"].replace(b"float32", b"fl0at32"),
         "a dtype is named 'fl0at32'"),
        # a header declaring more than the record holds: refused before NumPy allocates it
        ("jitensor/tensors/0.npy", npy.replace(b"(2,), }" + b" " * 13, b"(10000000000000,), }"),
         "holds 8 bytes of data where its shape .* needs 40000000000000"),
    ]
    for name, data, message in cases:
        members = dict(good)
        if data is None:
            del members[name]
        else:
            members[name] = data
        path.write_bytes(archive(members))
        with pytest.raises(RuntimeError, match=message):
            jt.load(path)
    assert not (tmp_path / "pwned").exists()


# -- atomic saves ------------------------------------------------------------------------------
def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    jt.save({"w": jt.ones(3)}, path)
    os.chmod(path, 0o640)
    before = path.read_bytes()

    def broken(self, name, data):
        raise OSError("disk full")

    monkeypatch.setattr(serialization._ArchiveWriter, "record", broken)
    with pytest.raises(OSError, match="disk full"):
        jt.save({"w": jt.zeros(3)}, path)
    monkeypatch.undo()
    with pytest.raises(pickle.PicklingError):  # pickling fails before any file is opened
        jt.save({"w": jt.zeros(3), "f": lambda: 0}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]
    jt.save({"w": jt.zeros(3)}, path)  # a successful save keeps the file's permissions
    assert jt.load(path)["w"].tolist() == [0.0, 0.0, 0.0]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    link = tmp_path / "latest.pt"  # saving through a symlink replaces what it points at
    link.symlink_to(path)
    jt.save({"w": jt.full((3,), 2.0)}, link)
    assert link.is_symlink() and jt.load(path)["w"].tolist() == [2.0, 2.0, 2.0]
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt", "latest.pt"]


_SAVER = """
import sys
import jitensor as jt
w = jt.full((25_000_000,), 2.0, dtype=jt.float64)  # 200 MB
print("saving", flush=True)
jt.save({"w": w}, sys.argv[1])
print("saved", flush=True)
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_killed_save_leaves_the_old_checkpoint(tmp_path):
    """A process killed while saving a 200 MB checkpoint over an old one leaves the old one
    loading bit-exactly (or, if the save finished first, the new one whole)."""
    path = tmp_path / "ckpt.pt"
    old = np.random.default_rng(0).standard_normal(25_000_000)
    jt.save({"w": jt.from_numpy(old)}, path)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    interrupted = 0
    for delay in (0.1, 0.15, 0.2, 0.3):
        child = subprocess.Popen([sys.executable, "-c", _SAVER, str(path)], env=env, cwd=REPO,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert child.stdout.readline() == b"saving\n"
            time.sleep(delay)
            child.kill()
            finished = b"saved" in child.communicate(timeout=60)[0]
        finally:
            child.kill()
            child.wait()
        w = jt.load(path)["w"].numpy()
        # the new checkpoint, whole: the save finished (a kill may land between its rename and
        # its "saved"); put the old one back for the next trial
        if finished or (w == 2.0).all():
            assert (w == 2.0).all()
            jt.save({"w": jt.from_numpy(old)}, path)
        else:
            interrupted += 1
            assert np.array_equal(w, old)
        del w
    assert interrupted, "every save finished before it was killed: nothing was tested"
    # a killed save leaves only its temporary file behind, named after the checkpoint
    assert all(n == "ckpt.pt" or n.startswith(".ckpt.pt.") and n.endswith(".tmp")
               for n in os.listdir(tmp_path))


def test_the_environment_overrides_weights_only_as_torch(tmp_path, monkeypatch):
    """TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 loads a pickled object where weights_only is not
    passed (with torch's warning); TORCH_FORCE_WEIGHTS_ONLY_LOAD=1 refuses it always."""
    import pickle
    path = tmp_path / "object.pt"
    jt.save({"steps": range(3)}, path)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert jt.load(path)["steps"] == range(3)
    with pytest.raises(pickle.UnpicklingError):
        jt.load(path, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(RuntimeError, match="Only one of"):
        jt.load(path)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    with pytest.raises(pickle.UnpicklingError):
        jt.load(path, weights_only=False)
