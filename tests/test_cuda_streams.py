"""CUDA streams and events: the current stream, work queued on side streams, the per-stream
memory pools and Tensor.record_stream, as torch users write them.

Without a GPU these run in numba's simulator, whose kernels finish as they are launched (its
streams and events are stand-ins that wait for nothing); on a GPU the same tests run unchanged
on real streams."""
import gc
import threading

import numpy as np
import pytest

import jitensor as jt

# slow: the simulator runs each GPU thread as Python
pytestmark = [pytest.mark.cuda, pytest.mark.slow,
              pytest.mark.skipif(not jt.cuda.is_available(),
                                 reason="no CUDA: numba-cuda is not installed")]


def address_of_new(n=1000):
    """The address of a fresh float32 block of n elements, freed again at once."""
    t = jt.empty(n, device="cuda")
    address = t.data_ptr()
    del t
    gc.collect()
    return address


def test_the_current_stream_follows_the_context():
    default = jt.cuda.default_stream()
    assert jt.cuda.current_stream() == default and default.cuda_stream == 0
    s, t = jt.cuda.Stream(), jt.cuda.Stream()
    assert s != default and s != t and s.device == jt.device("cuda:0")
    with jt.cuda.stream(s) as entered:
        assert entered is s and jt.cuda.current_stream() == s
        with t:
            assert jt.cuda.current_stream() == t
            with s, s:  # the same stream entered twice
                assert jt.cuda.current_stream() == s
            assert jt.cuda.current_stream() == t
        assert jt.cuda.current_stream() == s
        with jt.cuda.stream(None):  # no change, as in torch
            assert jt.cuda.current_stream() == s
    assert jt.cuda.current_stream() == default
    with pytest.raises(KeyError):
        with jt.cuda.stream(s):
            raise KeyError("inside the block")
    assert jt.cuda.current_stream() == default  # restored after an error too
    jt.cuda.set_stream(s)
    try:
        assert jt.cuda.current_stream() == s
    finally:
        jt.cuda.set_stream(default)
    assert hash(jt.cuda.current_stream()) == hash(default)
    assert f"cuda_stream={s.cuda_stream:#x}" in repr(s)


def test_streams_come_from_a_fixed_pool_per_priority():
    first = jt.cuda.Stream()
    later = [jt.cuda.Stream() for _ in range(31)]
    assert first not in later and jt.cuda.Stream() == first  # 32 streams, handed out in turn
    high = jt.cuda.Stream(priority=-1)
    assert high not in later + [first] and high.priority <= first.priority


def test_work_on_a_side_stream_gives_the_same_results():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = jt.tensor(a, device="cuda")
    s = jt.cuda.Stream()
    s.wait_stream(jt.cuda.current_stream())  # x is written on the default stream
    with jt.cuda.stream(s):
        x.record_stream(s)  # read on s, allocated on the default stream
        y = (x * 2 + 1).exp().sum(dim=1)
        z = x @ x.T
        w = jt.zeros(5, device="cuda")  # the driver's memset, on s
        v = jt.tensor(a[::-1].copy(), device="cuda")  # a host-to-device copy, on s
    s.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), np.exp(a * 2 + 1).sum(1), rtol=1e-5)
    np.testing.assert_allclose(z.cpu().numpy(), a @ a.T, rtol=1e-6)
    assert w.cpu().numpy().tolist() == [0] * 5 and v.cpu().numpy().tolist() == a[::-1].tolist()
    assert s.query()


def test_a_block_is_reused_only_on_its_own_stream():
    s = jt.cuda.Stream()
    with jt.cuda.stream(s):
        on_s = address_of_new()
        assert address_of_new() == on_s  # its own stream reuses it
    assert address_of_new() != on_s  # the default stream does not
    with jt.cuda.stream(s):
        assert address_of_new() == on_s


def test_memory_returns_to_its_level_after_stream_work():
    base = jt.cuda.memory_allocated()
    s = jt.cuda.Stream()
    with jt.cuda.stream(s):
        x = jt.ones(1000, device="cuda")
        y = x + x
    assert jt.cuda.memory_allocated() == base + 2 * 4096
    del x, y
    gc.collect()
    assert jt.cuda.memory_allocated() == base
    jt.cuda.empty_cache()  # every stream's cached blocks go back to the driver
    assert jt.cuda.memory_reserved() == jt.cuda.memory_allocated()


class _Event:
    """An event whose completion the test decides."""
    is_done = False


class _Stream:
    """A stand-in cuda.core Stream that notes what is asked of it."""

    def __init__(self, handle=0xBEEF):
        self.handle, self.priority, self.calls = handle, 0, []

    def record(self, event):
        self.calls.append(("record", event))
        return event

    def wait(self, other):
        self.calls.append(("wait", other))

    def sync(self):
        self.calls.append(("sync",))


class _Producer:
    """Another library's CUDA array over `t`'s memory, by its CUDA Array Interface."""

    def __init__(self, t, version, stream):
        self.t, self.version, self.stream = t, version, stream  # t: kept alive

    @property
    def __cuda_array_interface__(self):
        face = {"shape": tuple(self.t.shape), "typestr": "<f4", "strides": None,
                "data": (self.t.data_ptr(), False), "version": self.version}
        return face if self.version < 3 else {**face, "stream": self.stream}


def test_record_stream_holds_a_freed_block_until_that_stream_is_done(monkeypatch):
    from jitensor.kernels.cuda import driver, memory
    monkeypatch.setattr(driver, "new_event", lambda timing, blocking: _Event())

    def handed_out():
        """The addresses of every free 4 KiB block of the pool, and of one more."""
        held = [jt.empty(1000, device="cuda") for _ in range(len(memory._pool.current[4096]) + 1)]
        return {t.data_ptr() for t in held}

    other = _Stream()
    x = jt.empty(1000, device="cuda")
    address = x.data_ptr()
    x.record_stream(jt.cuda.Stream._of(other))
    x[:10].record_stream(jt.cuda.Stream._of(other))  # a view marks the same block, once
    del x
    gc.collect()
    assert address not in handed_out()  # the other stream may still be reading it
    (call, event), = other.calls  # one event, recorded when x was freed
    event.is_done = True
    assert address in handed_out()  # its work is done: the block is reused


def test_empty_cache_waits_for_pending_blocks(monkeypatch):
    from jitensor.kernels.cuda import driver, memory
    monkeypatch.setattr(driver, "new_event", lambda timing, blocking: _Event())
    x = jt.empty(1000, device="cuda")
    x.record_stream(jt.cuda.Stream._of(_Stream()))
    del x
    gc.collect()
    assert memory._pending
    jt.cuda.empty_cache()  # synchronizes the device: then every stream is done with it
    assert not memory._pending and jt.cuda.memory_reserved() == jt.cuda.memory_allocated()


def test_record_stream_of_another_librarys_memory_changes_nothing():
    x = jt.ones(4, device="cuda")
    view = jt.from_dlpack(_Producer(x, version=3, stream=None))
    view.record_stream(jt.cuda.Stream._of(_Stream()))  # jitensor never reuses foreign memory
    assert view.data_ptr() == x.data_ptr()


def test_record_stream_on_its_own_stream_changes_nothing():
    x = jt.empty(1000, device="cuda")
    address = x.data_ptr()
    x.record_stream(jt.cuda.current_stream())
    del x
    gc.collect()
    assert address_of_new() == address


def test_record_stream_errors():
    with pytest.raises(RuntimeError, match="only for CUDA tensors"):
        jt.ones(2).record_stream(jt.cuda.current_stream())
    with pytest.raises(TypeError, match="expected a jitensor.cuda.Stream, got int"):
        jt.ones(2, device="cuda").record_stream(0)


def test_events_order_streams_and_time_work():
    s = jt.cuda.Stream()
    start, end = jt.cuda.Event(enable_timing=True), jt.cuda.Event(enable_timing=True)
    assert start.query()  # never recorded: nothing to wait for
    start.record()
    x = jt.ones(64, device="cuda") * 3
    end.record()
    s.wait_event(end)  # s's work from now on follows x
    with jt.cuda.stream(s):
        x.record_stream(s)
        y = x + 1
    done = s.record_event()
    done.synchronize()
    assert done.query() and y.cpu().numpy().tolist() == [4.0] * 64
    assert start.elapsed_time(end) >= 0.0
    s.wait_stream(jt.cuda.default_stream())
    jt.cuda.default_stream().wait_stream(s)
    plain = jt.cuda.Event()
    plain.record(s)
    plain.wait()  # the current stream waits for it
    with pytest.raises(RuntimeError, match="create both events with"):
        plain.elapsed_time(end)
    with pytest.raises(RuntimeError, match="end_event has not been recorded"):
        start.elapsed_time(jt.cuda.Event(enable_timing=True))
    with pytest.raises(NotImplementedError, match="interprocess"):
        jt.cuda.Event(interprocess=True)


def test_stream_and_event_calls_reach_the_stream():
    a, b = _Stream(0x501), _Stream(0x502)
    sa, sb = jt.cuda.Stream._of(a), jt.cuda.Stream._of(b)
    sa.wait_stream(sb)
    assert a.calls == [("wait", b)]
    e = sb.record_event()
    assert b.calls == [("record", e._core)]
    sa.wait_event(e)
    sa.synchronize()
    sa.wait_event(jt.cuda.Event())  # never recorded: nothing to wait for
    assert a.calls[1:] == [("wait", e._core), ("sync",)]
    assert sa.__cuda_stream__() == (0, 0x501)


def test_dlpack_and_the_array_interface_order_streams(monkeypatch):
    from jitensor.kernels.cuda import driver
    foreign = {}
    monkeypatch.setattr(driver, "foreign_stream",
                        lambda handle: foreign.setdefault(handle, _Stream(handle)))
    t = jt.ones(3, device="cuda")
    for consumer in (None, -1, 1, 2):  # they already follow the legacy default stream
        t.__dlpack__(stream=consumer)
    assert not foreign and t.__cuda_array_interface__["stream"] is None
    t.__dlpack__(stream=0x1234)  # another stream waits for ours
    assert foreign[0x1234].calls == [("wait", driver.init()["default"])]
    side = _Stream(0x777)
    with jt.cuda.Stream._of(side):  # no kernels in here: the stand-in cannot run them
        t.__dlpack__(stream=0x777)
        t.__dlpack__(stream=-1)
        assert not side.calls and t.__cuda_array_interface__["stream"] == 0x777
        t.__dlpack__()  # the legacy stream waits for the side stream
        assert foreign[1].calls == [("wait", side)]
        jt.from_dlpack(_Producer(t, version=3, stream=None))  # nothing to wait for
        jt.from_dlpack(_Producer(t, version=3, stream=0x99))
        jt.from_dlpack(_Producer(t, version=2, stream=None))  # torch's: the legacy stream
        assert side.calls == [("wait", foreign[0x99]), ("wait", foreign[1])]


@pytest.mark.cuda
def test_the_current_stream_and_device_are_per_thread():
    side = jt.cuda.Stream()
    seen = {}

    def other():
        seen["stream"] = jt.cuda.current_stream()
        seen["device"] = jt.cuda.current_device()
        seen["sum"] = (jt.ones(4, device="cuda") * 2).sum().item()

    with jt.cuda.stream(side):
        assert jt.cuda.current_stream() == side
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        assert jt.cuda.current_stream() == side
    assert seen["stream"] == jt.cuda.default_stream() and seen["stream"] != side
    assert seen["device"] == 0 and seen["sum"] == 8.0
