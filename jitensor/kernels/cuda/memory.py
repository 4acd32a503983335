"""CUDA memory: a caching pool of raw device allocations, and DeviceArray, the NumPy view of one.

A CUDA buffer is a NumPy array whose data pointer is the *device* address (its buffer a ctypes
array at that address; another library's memory comes in by an `__array_interface__`). NumPy
never touches the elements, but its metadata machinery -- shape, strides, reshape-as-view,
transpose, as_strided, may_share_memory -- then serves CUDA tensors exactly as it serves CPU
ones, and the base chain of every view keeps its allocation alive: when the last view is gone
the block returns to the pool. Reading the elements on the host raises.

The pool keeps freed blocks by size (rounded to 512 bytes, as torch's caching allocator rounds),
one pool per stream: a block goes back to the pool of the stream that was current when it was
allocated, and is reused only while that stream is current again, so work that reuses it queues
after the work that used it before (streams.py). A block marked with `record_stream` as used
on other streams too waits, once freed, until an event recorded then on each of them is done."""
import ctypes
import math
import threading

import numpy as np

from ...cuda import OutOfMemoryError
from . import driver

ROUND = 512
_pools = {0: {}}  # stream handle -> its pool: rounded size -> [(address, host storage)] free


class _Pool(threading.local):
    current = _pools[0]  # the pool of this thread's current stream (0: the legacy default)


_pool = _Pool()
_pending = []  # (the list a block returns to, (address, storage), events it waits for)
_stats = {"allocated": 0, "reserved": 0, "peak": 0}


def _size(n):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.2f} {unit}" if unit != "bytes" else f"{n} bytes"
        n /= 1024


class _Block:
    """One allocation in use: a ctypes array at its address (of a nominal length above any
    allocation's, since NumPy only checks that a buffer is long enough), which a fresh
    DeviceArray takes as its buffer and NumPy then holds as the base of every view of it.
    NumPy never reads the bytes. Made this way, not from an `__array_interface__` dict,
    `empty` is faster."""
    __slots__ = ()

    def __del__(self):
        try:
            _stats["allocated"] -= self.size
            if self.uses is None:
                self.pool[self.size].append((self.address, self.storage))
            else:  # reusable once what those streams have queued by now is done
                _pending.append((self.pool[self.size], (self.address, self.storage),
                                 [s.record(driver.new_event(False, False)) for s in self.uses]))
        except Exception:  # interpreter shutdown: the driver frees everything anyway
            pass


# one class for every size (a class per size would cost ~7 KB and ~40 us for each new size)
_Bytes = type("_Bytes", (ctypes.c_char * (1 << 46), _Block),
              {"__slots__": ("address", "size", "storage", "pointer", "pool", "uses")})


class _Foreign:
    """Device memory another library owns (CUDA Array Interface), kept alive by `owner`."""
    __slots__ = ("address", "storage", "owner", "__array_interface__")

    def __init__(self, face, owner):
        self.address, self.storage, self.owner = face["data"][0], None, owner
        if driver.SIM:  # "device" memory is host memory there: kernels index a host view of it
            self.storage = driver.host_bytes(self.address, _extent(face))
        self.__array_interface__ = {"data": (self.address, False), "shape": face["shape"],
                                    "typestr": face["typestr"], "strides": face.get("strides"),
                                    "version": 3}


def _extent(face):
    """The bytes a __cuda_array_interface__ view spans from its data pointer."""
    shape, itemsize = face["shape"], np.dtype(face["typestr"]).itemsize
    if not math.prod(shape):
        return 0
    strides = face.get("strides")
    if strides is None:  # C-contiguous
        return math.prod(shape) * itemsize
    return sum((n - 1) * s for n, s in zip(shape, strides, strict=False)) + itemsize


def foreign(face, owner):
    """A DeviceArray over memory described by a __cuda_array_interface__ dict (no copy)."""
    if any(s < 0 for s in face.get("strides") or ()):
        raise ValueError("from_dlpack(): the array has negative strides, which jitensor tensors "
                         "cannot have; pass a copy (e.g. cupy.ascontiguousarray(x))")
    return np.asarray(_Foreign(face, owner)).view(DeviceArray)


def writeable(a):
    """`a`, or a writeable DeviceArray over the same memory when `a` is a read-only view (a
    broadcast), keeping `a` alive: what NumPy's DLPack export requires."""
    if a.flags.writeable:
        return a
    return foreign({"shape": a.shape, "typestr": a.dtype.str, "strides": a.strides,
                    "data": (address(a), False)}, a)


def _new(size, asked):
    """A block of `size` bytes when the current pool has none free: one whose recorded uses
    have finished, else a new one from the driver; on out-of-memory the cache is released and
    the allocation retried once before OutOfMemoryError."""
    if _pending:
        _collect()
        free = _pool.current.get(size)
        if free:
            return free.pop()
    try:
        found = driver.alloc(size)
    except MemoryError:
        empty_cache()
        try:
            found = driver.alloc(size)
        except MemoryError:
            raise OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {_size(asked)}; jitensor holds "
                f"{_size(_stats['allocated'])} in tensors and {_size(_stats['reserved'])} "
                f"reserved in all. Free tensors you no longer need (del), call "
                f"jitensor.cuda.empty_cache(), or use smaller tensors") from None
    _stats["reserved"] += size
    _pool.current.setdefault(size, [])  # where the block goes when it is freed
    return found


def _collect():
    """Return the pending blocks whose streams have finished with them to their pools."""
    for entry in list(_pending):  # a copy: a block freed meanwhile (by gc) joins _pending
        if all(e.is_done for e in entry[2]):
            _pending.remove(entry)
            entry[0].append(entry[1])


def empty_cache():
    """Return every cached (unused) block to the driver."""
    if _pending:  # once the device is idle, their streams are done with every pending block
        driver.synchronize()
        while _pending:
            free, block, _ = _pending.pop()
            free.append(block)
    for pool in _pools.values():
        for size, blocks in pool.items():
            for address, _ in blocks:
                driver.free(address)
            _stats["reserved"] -= size * len(blocks)
            blocks.clear()


def use_pool(handle):
    """Allocate from (and free into) the pool of the stream `handle` from now on."""
    _pool.current = _pools.setdefault(handle, {})


def record_stream(a, core):
    """Mark the block of DeviceArray `a` as used by work queued on the cuda.core Stream `core`
    (when that is not the stream it was allocated on): once freed, it waits for that work."""
    b = block(a)
    if isinstance(b, _Foreign) or b.pool is _pools.get(int(core.handle)):
        return  # another library's memory; or the block's own stream, which orders it already
    if b.uses is None:
        b.uses = []
    if not any(s is core for s in b.uses):
        b.uses.append(core)


def stats():
    return dict(_stats)


def reset_peak():
    _stats["peak"] = _stats["allocated"]


def _host_error(what):
    return TypeError(f"{what}: the elements of a CUDA tensor live in device memory and cannot be "
                     f"read on the host; copy them first with Tensor.cpu()")


# NumPy functions that only look at shapes, strides and addresses, never at elements.
_METADATA = {np.may_share_memory, np.shares_memory, np.broadcast_to, np.broadcast_arrays,
             np.lib.stride_tricks.as_strided, np.reshape, np.transpose, np.squeeze,
             np.expand_dims, np.moveaxis, np.swapaxes, np.ndim, np.shape, np.size}


class DeviceArray(np.ndarray):
    """A NumPy view of device memory (see the module docstring): metadata only."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _host_error(f"NumPy ufunc {ufunc.__name__}")

    def __array_function__(self, func, types, args, kwargs):
        if func not in _METADATA:
            raise _host_error(f"numpy.{func.__name__}")
        return super().__array_function__(func, types, args, kwargs)

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        if not all(k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice))
                   for k in keys) or \
                sum(isinstance(k, (int, np.integer)) for k in keys) >= self.ndim:
            raise _host_error("reading elements")
        return super().__getitem__(key)

    def reshape(self, *shape, order="C", copy=None):
        """A view with a new shape; never a copy (that would read the elements)."""
        try:  # (setting .shape instead copies, reading device memory, when no view will do:
            # a segfault on the H200)
            return np.ndarray.reshape(self, *shape, order=order, copy=False)
        except ValueError:
            raise ValueError(f"cannot reshape a DeviceArray of shape {self.shape} and strides "
                             f"{self.strides} to {shape} without copying") from None

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)  # (NumPy's copies where no view will do)

    def _refuse(self, *args, **kwargs):
        raise _host_error("reading elements")

    item = tolist = tobytes = copy = flatten = astype = fill = __setitem__ = __iter__ = _refuse

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, address={self.address:#x})"

    __str__ = __repr__

    @property
    def address(self):
        return self.__array_interface__["data"][0]


def empty(shape, dtype):
    """A new uninitialised DeviceArray (no kernel runs). `shape`: a tuple of non-negative ints
    (as the front end and NumPy's .shape give it: not checked again), or an int or a sequence
    (checked)."""
    if not isinstance(dtype, np.dtype):  # np.dtype(a dtype) still costs 0.2 us
        dtype = np.dtype(dtype)
    if dtype.kind == "V" and dtype.name == "bfloat16":
        raise TypeError("bfloat16 tensors live on the CPU only: jitensor's CUDA kernels have no "
                        "bfloat16; use dtype=jitensor.float16 on CUDA")
    if dtype.kind == "c":
        raise TypeError(f"complex tensors ({dtype}) live on the CPU only: jitensor's CUDA kernels "
                        f"have no complex dtype; keep them on the CPU, or carry the real and "
                        f"imaginary parts as float tensors (jitensor.view_as_real)")
    if shape.__class__ is not tuple:
        shape = (shape,) if isinstance(shape, int) else tuple(map(int, shape))
        if shape and min(shape) < 0:
            raise ValueError(f"negative dimensions are not allowed: {shape}")
    nbytes = math.prod(shape) * dtype.itemsize
    size = -(-nbytes // ROUND) * ROUND or ROUND
    pool = _pool.current
    free = pool.get(size)  # the pool's fast path, inline: it is most of `empty`'s cost
    address, storage = free.pop() if free else _new(size, nbytes)
    b = _Bytes.from_address(address)
    b.address, b.size, b.storage, b.pool, b.uses = address, size, storage, pool, None
    allocated = _stats["allocated"] = _stats["allocated"] + size  # counted as b.size is set
    if allocated > _stats["peak"]:
        _stats["peak"] = allocated
    b.pointer = driver.make_pointer(address, dtype, storage)
    return DeviceArray.__new__(DeviceArray, shape, dtype, buffer=b)


def block(a):
    """The _Block (or _Foreign) a DeviceArray, or any view of one, lives in."""
    b = a.base
    while not isinstance(b, (_Block, _Foreign)):  # through views, and as_strided's DummyArray
        b = b.base
    return b


def fresh(a):
    """The _Block of `a` when `a` is a whole fresh allocation (memory.empty's own array, C-
    contiguous from its block's start, of its pointer's dtype), else None: the small-op paths
    then skip layout tests and address lookups. NumPy makes every view's base the array it
    was taken from, never the block."""
    b = getattr(a, "base", None)
    return b if isinstance(b, _Block) else None


def address(a):
    return a.__array_interface__["data"][0]


def pointer(a):
    """(driver.Pointer to a's allocation, a's element offset in it) for a kernel argument."""
    b = fresh(a)
    if b is not None:
        return b.pointer, 0
    b = block(a)
    return (driver.make_pointer(b.address, a.dtype, b.storage),
            (address(a) - b.address) // a.dtype.itemsize)


def strides(a):
    """a's strides in elements."""
    return tuple(s // a.dtype.itemsize for s in a.strides)
