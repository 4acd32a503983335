"""The one module that touches numba-cuda's and cuda.core's private entry points (tested with
numba-cuda 0.30.4 and cuda-core 1.2, pinned in pyproject.toml): raw allocation, copies, kernel
compilation and direct launches.

Why direct: creating a numba DeviceNDArray, and numba's dispatch of array arguments at each
launch, each cost more than torch's whole `x + y` (measured on an H200: docs/design.md).
So kernels take raw addresses (as typed pointers) and integers, are compiled once per signature,
and are launched with `cuda.core.launch` and a cached LaunchConfig.

Under NUMBA_ENABLE_CUDASIM=1 (CI, no GPU) the very same kernel sources run in numba's simulator:
device memory is host memory, a "pointer" argument is the NumPy array of its whole allocation
(kernels index it from an element offset, exactly as they index the real pointer), and launches
go through the simulator's `kernel[grid, block](...)`."""
import itertools
import threading

import numba
import numpy as np
from numba import types

from .. import kernel_cache

SIM = bool(numba.config.ENABLE_CUDASIM)
if not SIM:  # (the simulator caches nothing) before any kernel is decorated
    from numba.cuda.core import caching
    kernel_cache.install(caching)
BLOCK = 256  # threads per block of the 1-D kernels
SIM_BLOCK = 8  # the simulator runs one Python thread per GPU thread: keep grids tiny there
_NUMBA = {np.dtype(t): numba.from_dtype(np.dtype(t)) for t in
          (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32,
           np.uint64, np.float16, np.float32, np.float64)}


class CudaError(RuntimeError):
    pass


def _check(result):
    """cuda.bindings calls return (error, *values): raise on an error, return the values."""
    err, *values = result
    if int(err):
        from cuda.bindings import driver
        name = driver.cuGetErrorName(err)[1]
        raise CudaError(f"CUDA driver error {int(err)} ({name.decode() if name else err})")
    return values[0] if len(values) == 1 else values


# -- context and streams ---------------------------------------------------------------------
_state = {}


class _Current(threading.local):
    stream = None  # this thread's current stream (torch keeps it per thread); None: the default


_current = _Current()


def init():
    """Bind numba's and cuda.core's view of device 0's primary context once per process. A
    thread's current stream starts as the legacy default stream (see streams.py)."""
    if "default" not in _state:
        from numba import cuda
        if SIM:
            _state["default"] = _SimStream(0, 0)
            _state["sms"] = 1
        else:
            from cuda.core import Device
            from numba.cuda.cudadrv import driver as ndrv
            cuda.current_context()  # numba's primary context first; cuda.core shares it
            Device().set_current()
            _state["default"] = ndrv._to_core_stream(0)
            _state["sms"] = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return _state


def current_stream():
    """The calling thread's current stream."""
    stream = _current.stream
    return stream if stream is not None else (_state.get("default") or init()["default"])


def set_current_stream(core):
    _current.stream = core


def synchronize():
    from numba import cuda
    init()
    cuda.synchronize()


def new_stream(priority):
    """A new cuda.core Stream that does not wait for the legacy default stream (torch's side
    streams do not either)."""
    init()
    if SIM:
        return _SimStream(next(_sim_handles), priority)
    from cuda.core import Device, StreamOptions
    return Device().create_stream(options=StreamOptions(nonblocking=True, priority=priority))


def new_event(timing, blocking):
    """A new cuda.core Event, not yet recorded (`timing`: it keeps a time for Event - Event)."""
    init()
    if SIM:
        return _SimEvent()
    from cuda.core import Device, EventOptions
    return Device().create_event(EventOptions(timing_enabled=timing, blocking_sync=blocking))


def foreign_stream(handle):
    """A cuda.core Stream for a stream handle another library gave (1, 2: the legacy and
    per-thread default streams)."""
    if SIM:
        return _SimStream(handle, 0)
    from cuda.core import Stream
    return Stream.from_handle(handle)


def stream_done(core):
    """Whether all the work queued on the cuda.core Stream `core` has finished."""
    if SIM:
        return True
    from cuda.bindings import driver
    err, = driver.cuStreamQuery(core.handle)
    if err == driver.CUresult.CUDA_ERROR_NOT_READY:
        return False
    _check((err,))
    return True


_sim_handles = itertools.count(0x100)  # the simulator's stand-in stream handles


class _SimStream:
    """The simulator's cuda.core Stream: its kernels have run by the time their launch returns,
    so it has nothing to wait for, and an event recorded on it is done at once."""

    def __init__(self, handle, priority):
        self.handle, self.priority = handle, priority

    def sync(self):
        pass

    def wait(self, event_or_stream):
        pass

    def record(self, event):
        import time
        event.time = time.perf_counter()
        return event


class _SimEvent:
    """The simulator's cuda.core Event (see _SimStream): `end - start` is the host time between
    their records, in milliseconds, as on a GPU."""
    is_done = True

    def sync(self):
        pass

    def __sub__(self, start):
        return (self.time - start.time) * 1e3


# -- memory: raw allocations (the caching pool in memory.py sits on top) -----------------------
def alloc(nbytes):
    """(address, host storage or None) of `nbytes` new bytes; MemoryError when the device has
    no room (the pool then empties its cache and retries once)."""
    if SIM:
        host = np.empty(nbytes, np.uint8)  # raises MemoryError itself
        return host.ctypes.data, host
    from cuda.bindings import driver
    init()
    err, ptr = driver.cuMemAlloc(nbytes)
    if err == driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY:
        raise MemoryError(f"CUDA out of memory allocating {nbytes} bytes")
    _check((err, ptr))
    return int(ptr), None


def host_bytes(address, nbytes):
    """Simulator only: the `nbytes` of host memory at `address` as a uint8 NumPy array (memory
    another library owns, which the caller keeps alive)."""
    import ctypes
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))


def free(ptr):
    if not SIM:
        from cuda.bindings import driver
        _check(driver.cuMemFree(ptr))


def to_device(dst, host, nbytes, storage):
    """Copy `nbytes` from the C-contiguous NumPy array `host` to device address `dst`, on the
    current stream (`host` may be reused as soon as this returns: the driver stages it)."""
    if SIM:
        storage[dst - storage.ctypes.data:][:nbytes] = host.reshape(-1).view(np.uint8)
    else:
        from cuda.bindings import driver
        _check(driver.cuMemcpyHtoDAsync(dst, host.ctypes.data, nbytes, current_stream().handle))


def to_host(host, src, nbytes, storage):
    """Copy `nbytes` from device address `src` into the C-contiguous NumPy array `host` once
    the current stream's work is done; returns when the copy is."""
    if SIM:
        host.reshape(-1).view(np.uint8)[:] = storage[src - storage.ctypes.data:][:nbytes]
    else:
        from cuda.bindings import driver
        # after the current stream's kernels, which write it; into pageable memory, the call
        # returns when the copy is done
        _check(driver.cuMemcpyDtoHAsync(host.ctypes.data, src, nbytes, current_stream().handle))


def memset(dst, word, count, storage):
    """Fill `count` words at `dst` with the 1-, 2- or 4-byte NumPy unsigned integer `word`
    through the driver's memset (faster than any fill kernel), on the current stream."""
    if SIM:
        start = dst - storage.ctypes.data
        storage[start:start + count * word.itemsize].view(word.dtype)[:] = word
        return
    from cuda.bindings import driver
    fn = {1: driver.cuMemsetD8Async, 2: driver.cuMemsetD16Async,
          4: driver.cuMemsetD32Async}[word.itemsize]
    _check(fn(dst, int(word), count, current_stream().handle))


# -- kernels ---------------------------------------------------------------------------------
def jit(fn):
    """A kernel from the Python function `fn`: compiled lazily, once per argument signature,
    cached on disk."""
    from numba import cuda
    return cuda.jit(fn) if SIM else cuda.jit(fn, cache=True)


def numba_type(value):
    """The numba type a launch argument is compiled for."""
    if isinstance(value, Pointer):
        return types.CPointer(_NUMBA[value.dtype])
    if isinstance(value, (bool, np.bool_)):
        return types.boolean
    if isinstance(value, int):
        return types.int64
    if isinstance(value, float):
        return types.float64
    return _NUMBA[value.dtype]


class Pointer:
    """A typed device pointer argument: the allocation's base address (in the simulator, also
    its host storage), of one subclass per dtype, so that the classes of a launch's arguments
    alone name the signature it was compiled for. Kernels index it from an element offset."""
    __slots__ = ("address", "storage")
    dtype = None

    def value(self):
        if SIM:  # the simulator's own device array: a NumPy one would be copied in and out
            from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
            usable = self.storage.size // self.dtype.itemsize * self.dtype.itemsize
            return FakeCUDAArray(self.storage[:usable].view(self.dtype))
        return self.address


_pointer_types = {}  # dtype -> its Pointer subclass


def make_pointer(address, dtype, storage=None):
    """A Pointer of `dtype` elements at `address` (`storage`: the simulator's host memory)."""
    cls = _pointer_types.get(dtype)
    if cls is None:
        cls = _pointer_types[dtype] = type(f"Pointer[{dtype}]", (Pointer,),
                                           {"dtype": dtype, "__slots__": ()})
    p = cls()
    p.address, p.storage = address, storage
    return p


_compiled = {}  # (kernel, argument classes) -> (cuda.core Kernel, positions of Pointers, of bools)
_configs = {}  # (grid, block) -> LaunchConfig
SIGNATURES = set()  # (module, kernel, argument types) launched: CI compiles each to PTX


def _cufunc(kernel, argtypes):
    """The cuda.core Kernel of `kernel` compiled for these numba types."""
    try:
        compiled = kernel.compile(argtypes)
    except RuntimeError as e:
        # numba-cuda 0.30 cannot cache code that links files (float16 arithmetic links its
        # shim): that signature compiles again, uncached (measured on the H200)
        if "linking files" not in str(e):
            raise
        from numba.cuda.core.caching import NullCache
        cache, kernel._cache = kernel._cache, NullCache()
        try:
            compiled = kernel.compile(argtypes)
        finally:
            kernel._cache = cache
    return compiled._codelibrary.get_cufunc().kernel


def _compile(key, kernel, args):
    """_compiled[key]: compiled for these arguments, with where its Pointers and bools are."""
    found = _compiled[key] = (_cufunc(kernel, tuple(map(numba_type, args))),
                              tuple(i for i, a in enumerate(args) if isinstance(a, Pointer)),
                              tuple(i for i, a in enumerate(args) if a.__class__ is bool))
    return found


def _config(grid, block):
    found = _configs.get((grid, block))
    if found is None:
        from cuda.core import LaunchConfig
        found = _configs[(grid, block)] = LaunchConfig(grid=grid, block=block)
    return found


def _core_launch(*args):
    from cuda.core import launch
    global _core_launch
    _core_launch = launch  # imported on first use
    launch(*args)


def launch(kernel, grid, block, *args):
    """Run `kernel` on a grid of `grid` blocks of `block` threads with `args` (Pointers, ints,
    floats, bools, NumPy scalars) on the current stream."""
    if SIM:
        SIGNATURES.add((kernel.fn.__module__, kernel.fn.__name__, tuple(map(numba_type, args))))
        kernel[grid, block](*(a.value() if isinstance(a, Pointer) else a for a in args))
        return
    key = (kernel, *map(type, args))  # the classes name the signature (see Pointer)
    found = _compiled.get(key) or _compile(key, kernel, args)
    stream = current_stream()
    # cuda.core passes a Python int as 8 bytes (a pointer: the address) and a float as a
    # double, as the kernel was compiled for them (numba_type); a bool (an int to cuda.core)
    # goes as NumPy's one byte. Plain ints only: cuda.core converts an int subclass ~15x slower
    cufunc, pointers, bools = found
    args = list(args)
    for i in pointers:
        args[i] = args[i].address
    for i in bools:
        args[i] = np.bool_(args[i])
    _core_launch(stream, _config(grid, block), cufunc, *args)


def launch_1d(kernel, n, *args):
    """Run a grid-stride kernel over `n` items: enough blocks to fill the GPU, no more."""
    if SIM:
        launch(kernel, 1, max(1, min(n, SIM_BLOCK)), *args)
    else:
        sms = _state.get("sms") or init()["sms"]
        launch(kernel, max(1, min(-(-n // BLOCK), sms * 32)), BLOCK, *args)


def threads_per_row():
    """Threads that cooperate on one row of a row-wise kernel (a power of two)."""
    return 4 if SIM else BLOCK
