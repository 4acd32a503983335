"""CUDA streams and events: the current stream, work queued on side streams, the per-stream
memory pools and Tensor.record_stream, as torch users write them.

Without a GPU these run in numba's simulator, whose kernels finish as they are launched (its
streams and events are stand-ins that wait for nothing); on a GPU the same tests run unchanged
on real streams."""
import gc

import numpy as np
import pytest

import jitensor as jt

pytestmark = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")


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
    """A stream as memory.record_stream sees it: a handle, and record() of an event."""
    handle = 0xBEEF

    def record(self, event):
        self.recorded = event
        return event


def test_record_stream_holds_a_freed_block_until_that_stream_is_done(monkeypatch):
    from jitensor.backends.cuda import driver, memory
    monkeypatch.setattr(driver, "new_event", lambda timing, blocking: _Event())

    def handed_out():
        """The addresses of every free 4 KiB block of the pool, and of one more."""
        held = [jt.empty(1000, device="cuda") for _ in range(len(memory._cached[4096]) + 1)]
        return {t.data_ptr() for t in held}

    other = _Stream()
    x = jt.empty(1000, device="cuda")
    address = x.data_ptr()
    memory.record_stream(x._data, other)
    memory.record_stream(x._data[:10], other)  # a view marks the same block, once
    del x
    gc.collect()
    assert address not in handed_out()  # the other stream may still be reading it
    other.recorded.is_done = True
    assert address in handed_out()  # its work is done: the block is reused


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


def test_dlpack_export_synchronizes_only_for_a_stream_that_does_not_follow_ours():
    from jitensor.backends.cuda import streams
    for consumer in (None, -1, 1, 2):  # the current stream is the legacy default one
        assert streams.orders(consumer)
    assert not streams.orders(0x1234)
    s = jt.cuda.Stream()
    with jt.cuda.stream(s):
        assert streams.orders(s.cuda_stream) and streams.orders(-1)
        assert not streams.orders(None) and not streams.orders(1)
        t = jt.ones(3, device="cuda")
        for consumer in (None, 1, s.cuda_stream):
            t.__dlpack__(stream=consumer)  # exported after s's work where it must be
