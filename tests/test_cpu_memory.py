"""The CPU allocator's pool (kernels/cpu/memory.py): large blocks come back for reuse when the
last view of them is gone, never while one lives; tensors from it are NumPy's in every respect."""
import gc
import threading

import numpy as np
import pytest

import jitensor as jt
from jitensor.kernels.cpu import memory

LARGE = memory.POOL_MIN // 4  # float32 elements of a pooled block


def address(t):
    return t.numpy().ctypes.data


@pytest.fixture(autouse=True)
def fresh_pool():
    memory.empty_cache()
    yield
    memory.empty_cache()


def test_a_freed_block_is_reused_by_the_next_tensor_of_its_size():
    a = jt.ones(LARGE)
    at = address(a)
    del a
    assert memory.idle() > 0
    b = jt.zeros(LARGE)  # a fill into the reused block: no stale values
    assert address(b) == at and memory.idle() == 0
    np.testing.assert_array_equal(b.numpy(), np.zeros(LARGE, np.float32))
    c = jt.empty(LARGE - 100)  # rounded to the same size class
    assert address(c) != at


@pytest.mark.parametrize("keep", ["view", "numpy", "dlpack", "grad_graph"])
def test_a_block_stays_while_anything_views_it(keep):
    a = jt.arange(LARGE, dtype=jt.float32)
    at = address(a)
    if keep == "view":
        held = a[10:20].view(2, 5)
    elif keep == "numpy":
        held = a.numpy()[10:20]
    elif keep == "dlpack":
        held = np.from_dlpack(a)[10:20]
    else:
        w = jt.ones(LARGE, requires_grad=True)
        held = (a * w).sum()  # mul saved a for w's gradient
    del a
    gc.collect()
    b = jt.full((LARGE,), 7.0)
    assert address(b) != at
    if keep == "grad_graph":
        held.backward()
        np.testing.assert_array_equal(w.grad.numpy(), np.arange(LARGE, dtype=np.float32))
    else:
        np.testing.assert_array_equal(np.asarray(held).ravel(), np.arange(10, 20))


@pytest.mark.parametrize("dtype", [jt.bool, jt.uint8, jt.int16, jt.int64, jt.int32,
                                   jt.float64])
@pytest.mark.parametrize("shape", [(LARGE,), (3, LARGE // 2), (2, 3, 4), (0, LARGE)])
def test_pooled_arrays_are_numpys(dtype, shape):
    t = jt.empty(shape, dtype=dtype)
    ref = np.empty(shape, t.numpy().dtype)
    a = t.numpy()
    assert (a.shape, a.dtype, a.strides) == (ref.shape, ref.dtype, ref.strides)
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
    if a.nbytes >= memory.POOL_MIN:
        assert a.ctypes.data % memory.ALIGN == 0
    a[...] = 1
    np.testing.assert_array_equal(jt.ones(shape, dtype=dtype).numpy(), a)


def test_a_reused_block_starts_a_new_version_counter():
    a = jt.zeros(LARGE)
    a.add_(1)
    a.mul_(2)
    assert a._version == 2
    at = address(a)
    del a
    b = jt.empty(LARGE)
    assert address(b) == at and b._version == 0


@pytest.mark.parametrize("shape, error", [((-2, -LARGE), ValueError), ((2.5, LARGE), TypeError),
                                          (((3, 4), LARGE), TypeError)])
def test_bad_sizes_raise_numpys_errors_and_take_no_block(shape, error):
    with pytest.raises(error) as ours:
        memory.empty(shape, np.float32)
    with pytest.raises(error) as numpys:
        np.empty(shape, np.float32)
    assert str(ours.value) == str(numpys.value)
    gc.collect()
    assert memory.idle() == 0 and not memory._free  # (NumPy refused it before any was taken)
    with pytest.raises((error, RuntimeError)):
        jt.empty(*shape)


def test_idle_bytes_stay_within_the_cap(monkeypatch):
    monkeypatch.setattr(memory, "CACHE_MAX", 3 * memory.POOL_MIN)
    tensors = [jt.empty(LARGE) for _ in range(8)]
    del tensors
    assert 0 < memory.idle() <= 3 * memory.POOL_MIN
    memory.empty_cache()
    assert memory.idle() == 0 and not memory._free


def test_blocks_freed_on_other_threads_come_back_once():
    blocks = [jt.empty(LARGE) for _ in range(64)]
    threads = [threading.Thread(target=lambda part=blocks[i::4]: part.clear()) for i in range(4)]
    del blocks
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    idle = memory.idle()
    assert idle == 64 * next(iter(memory._free))
    again = [jt.empty(LARGE) for _ in range(64)]
    assert len({address(t) for t in again}) == 64 and memory.idle() == 0
    del again
    assert memory.idle() == idle


def test_small_tensors_bypass_the_pool():
    t = jt.empty(memory.POOL_MIN // 8 - 1, dtype=jt.float64)
    del t
    assert memory.idle() == 0
