"""The CPU's allocator: NumPy's, with freed blocks of POOL_MIN bytes and more kept for reuse.

malloc serves such blocks from fresh pages (mmap, or a heap it trims back after each free), and
the first write to each 4 KiB page then faults and has the kernel zero it. A training step of the
small CNN in bench/autograd.py spent a third of its time so, ~5300 faults a step; with this
pool none (docs/design.md). As the CUDA pool (kernels/cuda/memory.py) does, a tensor's array
takes a lease on a block as its buffer, and NumPy holds the lease as the base of every view of
it: when the last view is gone the block goes back to the pool. Blocks are kept by size,
rounded up to one of 8 sizes per octave, and at most CACHE_MAX bytes wait idle; beyond that a
freed block goes back to the system."""
import ctypes
import os
import threading

import numpy as np

POOL_MIN = 1 << 17  # bytes: malloc's heap reuses smaller blocks without faulting
CACHE_MAX = 1 << 30  # idle bytes the pool keeps, at most
ALIGN = 64  # bytes: a cache line, as torch's CPU allocator aligns
_free = {}  # size -> [idle (block, its first aligned address)], the blocks uint8 arrays
_idle = [0]  # bytes in _free
_lock = threading.Lock()  # __del__ may run on any thread


class _Lease:
    """A block in use: a ctypes array at its address (of a nominal length above any block's:
    NumPy only checks that a buffer is long enough), which a tensor's array takes as its
    buffer. It holds the block, and hands it back when NumPy lets go of it."""
    __slots__ = ()

    def __del__(self):
        try:
            _release(self.block, self.address)
        except Exception:  # interpreter shutdown: nothing left to keep
            pass


_Bytes = type("_Bytes", (ctypes.c_char * (1 << 46), _Lease), {"__slots__": ("block", "address")})


def _reset_lock():
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_lock)  # a fork while another thread held it


def _rounded(n):
    step = 1 << max(12, n.bit_length() - 3)
    return -(-n // step) * step


def _release(block, address):
    """Keep `block` for reuse while the idle blocks stay within CACHE_MAX."""
    with _lock:
        if _idle[0] + block.size <= CACHE_MAX:
            _idle[0] += block.size
            _free.setdefault(block.size, []).append((block, address))


def _take(size):
    """(block, address): an idle block of `size` bytes, or a new one (after freeing the idle
    ones, should the system have no memory left), and its first ALIGN-aligned address."""
    with _lock:
        idle = _free.get(size)
        if idle:
            _idle[0] -= size
            return idle.pop()
    try:
        block = np.empty(size, np.uint8)
    except MemoryError:
        empty_cache()
        block = np.empty(size, np.uint8)
    address = block.ctypes.data  # (0.9 us: kept with the block)
    return block, address + -address % ALIGN


def empty(shape, dtype, np_empty=np.empty):
    """np.empty(shape, dtype), its memory from the pool when it takes POOL_MIN bytes or more.
    NumPy allocates first, which checks the shape and sizes it; a large array's own block,
    never touched, is handed back at once. Tiny tensors, the latency path, pay one Python
    test (cheaper than computing the size in Python first)."""
    try:
        a = np_empty(shape, dtype)
    except MemoryError:
        empty_cache()
        a = np_empty(shape, dtype)
    if a.nbytes < POOL_MIN:
        return a
    shape, dtype, nbytes = a.shape, a.dtype, a.nbytes
    del a  # (before a new block is asked for)
    block, address = _take(_rounded(nbytes) + ALIGN)
    lease = _Bytes.from_address(address)
    lease.block, lease.address = block, address
    return np.ndarray(shape, dtype, buffer=lease)


def empty_cache():
    """Free the idle blocks."""
    with _lock:
        _free.clear()
        _idle[0] = 0


def idle():
    """Bytes the pool keeps idle."""
    return _idle[0]
