"""jt.save / jt.load: round trips of tensors (every CPU dtype, views, 0-d, empty, Parameters)
and nested containers, paths and file objects, shared tensors, model and optimizer state,
map_location, clear errors, and files that must be refused without running any code."""
import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn, optim
from conftest import CPU_DTYPES, dtype_id


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
    np.testing.assert_array_equal(t.detach().numpy(), expected.detach().numpy())


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_tensor_round_trip(dtype):
    for shape in ((), (0,), (3,), (2, 0, 3), (3, 4, 2)):
        t = jt.tensor(sample(dtype, shape))
        assert_same(round_trip(t), t)
    view = jt.tensor(sample(dtype, (4, 6))).T[::2]  # strided views save their values
    assert_same(round_trip(view), view.contiguous())


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
        "meta": [jt.float64, jt.device("cpu"), jt.Size([2, 3])], "np": np.float32(1.5),
        "empty": [[], {}, ()],
    }
    back = round_trip(obj)
    expected = dict(obj, np=1.5)
    assert back == expected
    assert type(back["tuple"]) is tuple and type(back["tuple"][1]) is tuple
    assert type(back["ordered"]) is OrderedDict and list(back["ordered"]) == ["b", "a"]
    assert isinstance(back["meta"][2], jt.Size) and back["meta"][0] is jt.float64
    assert math.isnan(round_trip(math.nan))
    assert list(back) == list(obj)


def test_paths_and_file_objects(tmp_path):
    t = jt.arange(5.0)
    for target in (str(tmp_path / "a.jt"), tmp_path / "b.jt"):
        jt.save({"t": t}, target)
        assert_same(jt.load(target)["t"], t)
    with open(tmp_path / "c.jt", "wb") as f:
        jt.save(t, f)
    with open(tmp_path / "c.jt", "rb") as f:
        assert_same(jt.load(f), t)
    assert zipfile.is_zipfile(tmp_path / "c.jt")  # an ordinary zip: inspectable with any tool
    with pytest.raises(TypeError, match="path or a binary file object, got int"):
        jt.save(t, 3)
    with pytest.raises(FileNotFoundError):
        jt.load(tmp_path / "missing.jt")


def test_shared_tensors_stay_shared():
    w = jt.randn(3, 3)
    back = round_trip({"encoder": w, "decoder": w, "other": w.clone()})
    assert back["encoder"] is back["decoder"] and back["other"] is not back["encoder"]
    buf = io.BytesIO()
    jt.save([w, w, w], buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        assert sum(n.endswith(".npy") for n in z.namelist()) == 1


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
            tmp_path / "ckpt.jt")
    ckpt = jt.load(tmp_path / "ckpt.jt")
    assert ckpt["epoch"] == 3 and ckpt["model"]["0.weight"].dtype is jt.float64
    assert ckpt["optim"]["state"][0]["step"].dtype is jt.float32
    assert ckpt["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    model2, opt2 = build()
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optim"])
    for seed in range(3, 6):
        step(model, opt, seed)
        step(model2, opt2, seed)
    for p, q in zip(model.parameters(), model2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def _file_with_device(tmp_path, device):
    """A saved tensor whose structure claims it came from `device` (CUDA tensors cannot be
    made on this machine, but their files can)."""
    path = tmp_path / "t.jt"
    jt.save({"w": jt.tensor([1.0, 2.0])}, path)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = json.loads(members["jitensor/data.json"])
    header["root"]["dict"][0][1]["device"] = device
    members["jitensor/data.json"] = json.dumps(header).encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_map_location(tmp_path):
    path = _file_with_device(tmp_path, "cuda:1")
    for where in ("cpu", jt.device("cpu"), {"cuda:1": "cpu"}, {"cuda:1": jt.device("cpu")}):
        assert jt.load(path, map_location=where)["w"].device == "cpu"
    seen = []

    def relocate(t, location):
        seen.append((t.device, location))
        return t * 2

    w = jt.load(path, map_location=relocate)["w"]
    assert seen == [(jt.device("cpu"), "cuda:1")] and w.tolist() == [2.0, 4.0]
    if not jt.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            jt.load(path)  # back to the saved device
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            jt.load(path, map_location={"cuda:0": "cpu"})  # a mapping for another device
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            jt.load(path, map_location=lambda t, loc: None)  # None: the saved device
    assert jt.load(_file_with_device(tmp_path, "cpu"), map_location=lambda t, loc: None)[
        "w"].device == "cpu"


def test_unsupported_objects_name_their_type():
    class Custom:
        pass

    for obj, name in ((Custom(), "Custom"), ({1, 2}, "set"), (nn.Linear(2, 2), "Linear"),
                      (np.zeros(2), "ndarray"), (b"raw", "bytes"), ([lambda: 0], "function")):
        with pytest.raises(TypeError, match=f"cannot save an object of type .*{name}"):
            round_trip(obj)
    with pytest.raises(TypeError, match="state_dict"):
        round_trip({"model": nn.Linear(2, 2)})


class _Exploit:
    """Unpickling this runs a shell command that creates the file named `marker`."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_pickle_files_are_refused_without_running_code(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.jt"
    path.write_bytes(pickle.dumps({"w": _Exploit(marker)}))
    with pytest.raises(RuntimeError, match="not a jitensor file.*never unpickles"):
        jt.load(path)
    assert not marker.exists()
    # a zip holding a pickle (the layout of torch.save's files) is refused just the same
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(_Exploit(marker)))
    with pytest.raises(RuntimeError, match="not a jitensor file"):
        jt.load(path)
    assert not marker.exists()


@pytest.mark.filterwarnings("ignore:Duplicate name")  # the second entry is the attack
def test_pickled_array_inside_a_jitensor_file_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.jt"
    jt.save(jt.zeros(1), path)
    evil = io.BytesIO()
    np.save(evil, np.array([_Exploit(marker)], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("jitensor/tensors/0.npy", evil.getvalue())  # shadows the real entry
    with pytest.raises(ValueError, match="allow_pickle=False"):
        jt.load(path)
    assert not marker.exists()


def test_torch_files_are_refused(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.zeros(2)}, tmp_path / "t.pt")
    with pytest.raises(RuntimeError, match="not a jitensor file"):
        jt.load(tmp_path / "t.pt")


def _rewrite(path, name, data):
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members[name] = data
    if data is None:
        del members[name]
    with zipfile.ZipFile(path, "w") as z:
        for n, d in members.items():
            z.writestr(n, d)


def test_damaged_files_give_clear_errors(tmp_path):
    path = tmp_path / "t.jt"
    cases = [
        ("jitensor/data.json", b"{not json", "no readable jitensor/data.json"),
        ("jitensor/data.json", b'{"format": "other"}', "does not describe a jitensor object"),
        ("jitensor/data.json", b'{"format": "jitensor", "version": 99, "root": null}',
         "format version 99"),
        ("jitensor/data.json", b'{"format": "jitensor", "version": 1, "root": {"eval": 1}}',
         "entry it cannot read"),
        ("jitensor/tensors/0.npy", None, "lacks jitensor/tensors/0.npy"),
    ]
    for name, data, message in cases:
        jt.save([jt.zeros(2)], path)
        _rewrite(path, name, data)
        with pytest.raises(RuntimeError, match=message):
            jt.load(path)
    jt.save([jt.zeros(2)], path)
    wrong = io.BytesIO()
    np.save(wrong, np.zeros(2, np.int32))
    _rewrite(path, "jitensor/tensors/0.npy", wrong.getvalue())
    with pytest.raises(RuntimeError, match="holds int32 values but the structure says "
                                           "jitensor.float32"):
        jt.load(path)
    with pytest.raises(RuntimeError, match="not a zip archive"):
        jt.load(io.BytesIO(b"plain text"))
