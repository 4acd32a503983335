"""torch.cpu, torch.get_device_module, torch.futures with fork/wait, torch.from_file and
torch.set_flush_denormal, against torch where it is installed."""
import os

import numpy as np
import pytest

import jitensor as jt


def test_cpu_device_module_for_device_generic_code():
    cpu = jt.get_device_module("cpu")
    assert cpu is jt.cpu and jt.get_device_module(jt.device("cpu")) is jt.cpu
    assert cpu.is_available() and cpu.is_initialized() and cpu.device_count() == 1
    assert cpu.current_device() == "cpu"
    cpu.set_device("cpu")
    cpu.synchronize()
    stream = cpu.current_stream()
    with cpu.stream(stream) as s:
        assert s is stream
    event = stream.record_event()
    assert event.query() and stream.query()
    stream.wait_event(event)
    caps = cpu.get_capabilities()
    assert caps["num_logical_cores"] == os.cpu_count() and isinstance(caps["avx2"], bool)
    assert jt.get_device_module("cuda") is jt.cuda and jt.get_device_module("cuda:0") is jt.cuda
    with pytest.raises(RuntimeError, match="Device 'xpu' does not have a corresponding module"):
        jt.get_device_module("xpu")
    with jt.cpu.amp.autocast():
        assert (jt.ones(2, 2) @ jt.ones(2, 2)).dtype is jt.bfloat16
    with jt.cpu.amp.autocast(enabled=False):
        assert jt.ones(2).dtype is jt.float32


def test_default_device_module_is_the_accelerators_or_the_cpus():
    want = jt.cuda if jt.accelerator.is_available() else jt.cpu
    assert jt.get_device_module() is want


def test_futures_fork_wait_then_collect():
    f = jt.fork(lambda x, y=1: x + y, 2, y=3)
    assert f.done() and jt.wait(f) == 5 and f.value() == 5
    assert f.then(lambda done: done.wait() * 2).wait() == 10
    with pytest.raises(ZeroDivisionError):
        jt.fork(lambda: 1 / 0)  # runs at once, raising where torch raises
    g = jt.futures.Future()
    with pytest.raises(RuntimeError, match="not complete"):
        g.value()
    seen = []
    g.add_done_callback(lambda done: seen.append(done.value()))
    chained = g.then(lambda done: done.wait() + 1)
    both = jt.futures.collect_all([f, g])
    assert not both.done() and not chained.done()
    g.set_result(7)
    assert seen == [7] and chained.wait() == 8 and [x.wait() for x in both.wait()] == [5, 7]
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        g.set_result(8)
    assert jt.futures.wait_all([f, g]) == [5, 7]
    bad = jt.futures.Future()
    bad.set_exception(ValueError("x"))
    with pytest.raises(ValueError):
        bad.wait()
    with pytest.raises(RuntimeError, match="error when running the callback: ValueError: x"):
        bad.then(lambda done: done.wait()).wait()
    with pytest.raises(TypeError):
        bad.set_exception("not an exception")


def test_from_file_private_and_shared(tmp_path):
    path = str(tmp_path / "data.bin")
    np.arange(6, dtype=np.float32).tofile(path)
    t = jt.from_file(path, size=4)
    assert t.dtype is jt.float32 and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    t[0] = 9.0  # private: the file keeps its values
    assert np.fromfile(path, np.float32)[0] == 0.0
    s = jt.from_file(path, shared=True, size=6)
    s[0] = 9.0
    assert np.fromfile(path, np.float32)[0] == 9.0
    assert (s * 2).tolist() == [18.0, 2.0, 4.0, 6.0, 8.0, 10.0]  # kernels run on the mapping
    grown = str(tmp_path / "new.bin")
    n = jt.from_file(grown, shared=True, size=3, dtype=jt.int64)
    assert n.tolist() == [0, 0, 0] and os.path.getsize(grown) == 24
    assert jt.from_file(path).numel() == 0
    with pytest.raises(RuntimeError, match="is smaller than the required mapping size <40>"):
        jt.from_file(path, size=10)
    with pytest.raises(RuntimeError, match="unable to open file"):
        jt.from_file(str(tmp_path / "missing.bin"), size=1)


def test_from_file_matches_torch(tmp_path):
    torch = pytest.importorskip("torch")
    path = str(tmp_path / "data.bin")
    np.arange(8, dtype=np.int32).tofile(path)
    got = jt.from_file(path, size=8, dtype=jt.int32)
    want = torch.from_file(path, size=8, dtype=torch.int32)
    assert got.tolist() == want.tolist() and str(got.dtype) == "jitensor.int32"


def test_set_flush_denormal():
    assert jt.set_flush_denormal(False) is True
    assert jt.set_flush_denormal(True) is False  # never flushed: tiny values stay
    tiny = jt.tensor([1e-40], dtype=jt.float32)
    assert (tiny * 1.0).item() != 0.0
    with pytest.raises(TypeError, match="mode"):
        jt.set_flush_denormal(1)
