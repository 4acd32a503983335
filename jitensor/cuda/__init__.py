"""jt.cuda: device queries, streams and events, memory statistics, random-number seeding and
device properties, with torch.cuda's names. Nothing here touches the CUDA driver until it is
called, and `import jitensor` never imports numba.cuda. `jt.cuda.amp` is torch.cuda.amp's
surface (GradScaler; autocast disabled only)."""
import collections
import ctypes
import functools
import os
import sys
import threading
import warnings

from .. import streams as _streams_module


class _Device(threading.local):
    index = 0  # this thread's current device (torch keeps it per thread)


_current = _Device()
_initialized = [False]  # set by the first successful init(): torch's lazy CUDA initialization


# Where numba-cuda looks for the driver on Linux (`cudadrv.driver.locate_driver_and_loader`)
_DRIVERS = ("libcuda.so", "libcuda.so.1", "/usr/lib/libcuda.so", "/usr/lib/libcuda.so.1",
            "/usr/lib64/libcuda.so", "/usr/lib64/libcuda.so.1")


def _driver_loads():
    """False when no CUDA driver library loads on Linux, where numba-cuda (a second to import)
    would answer False too; True elsewhere, under the simulator or with NUMBA_CUDA_DRIVER."""
    if not sys.platform.startswith("linux") or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" \
            or os.environ.get("NUMBA_CUDA_DRIVER"):
        return True
    for name in _DRIVERS:
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False


@functools.cache
def _probe():
    """(number of GPUs, reason there are none): asked of numba-cuda once per process."""
    if not _driver_loads():
        return 0, "no NVIDIA driver was found (libcuda.so did not load)"
    try:
        from numba import cuda
    except Exception as e:  # numba-cuda missing or broken
        return 0, f"numba.cuda could not be imported ({e}); install jitensor[cuda]"
    try:
        if not cuda.is_available():
            return 0, "no NVIDIA GPU or driver was found (numba.cuda.is_available() is False)"
        return len(cuda.gpus), ""
    except Exception as e:
        return 0, f"the CUDA driver failed: {e}"


def is_available():
    """True when numba-cuda is installed and a GPU answers. Never raises."""
    return _probe()[0] > 0


def device_count():
    return _probe()[0]


def init(index=None):
    """Raise RuntimeError unless CUDA (and device `index`, when given) can be used."""
    count, reason = _probe()
    if not count:
        raise RuntimeError(f"CUDA is not available: {reason}. Use device='cpu', or pick the "
                           f"device with jt.device('cuda' if jt.cuda.is_available() else 'cpu')")
    if index is not None and not 0 <= index < count:
        raise RuntimeError(f"CUDA error: invalid device ordinal: cuda:{index} requested, but "
                           f"{count} device(s) are present (cuda:0..cuda:{count - 1})")
    if index:  # the backend binds one device's context, streams and pool: never misplace
        raise RuntimeError(f"cuda:{index} requested, but jitensor runs on cuda:0 only (one "
                           f"GPU per process for now); to use GPU {index}, start the process "
                           f"with CUDA_VISIBLE_DEVICES={index} and use cuda:0")
    _initialized[0] = True


def is_initialized():
    """Whether this process has started using CUDA: jitensor initializes it (checks the device)
    on first use -- a CUDA tensor, stream or event, or a device query -- as torch does lazily."""
    return _initialized[0]


def current_device():
    init()
    return _current.index


def set_device(device):
    from ..device import device as device_cls
    index = device if isinstance(device, int) else device_cls(device).index or 0
    init(index)
    _current.index = index


class OutOfMemoryError(RuntimeError):
    """Raised when the GPU has no room for a new tensor even after cached memory was released."""


def _memory(device=None):
    _cuda_device(device)  # checks it (None: the current device)
    from ..kernels.cuda import memory
    return memory


# The pool counts bytes held by tensors (allocated, and its peak) and bytes it holds from the
# driver (reserved); reserved only grows between empty_cache() calls, so its peak is the larger
# of the reserved bytes now and just before each empty_cache() (recorded here). The pool's own
# empty-and-retry on out-of-memory is the one release this misses.
_peak_reserved = [0]


def synchronize(device=None):
    """Wait until every kernel queued on the GPU has finished."""
    _cuda_device(device)
    from ..kernels.cuda import driver
    driver.synchronize()


def memory_stats(device=None):
    """torch's memory statistics, under torch's key names, for what jitensor's pool counts:
    ``allocated_bytes.all.{current,peak}`` (held by tensors, in 512-byte blocks as torch
    counts) and ``reserved_bytes.all.{current,peak}`` (held by the pool: tensors' blocks plus
    freed ones cached for reuse). Empty without CUDA, as torch's is before CUDA starts."""
    if not is_available():
        return collections.OrderedDict()
    stats = _memory(device).stats()
    peak_reserved = max(_peak_reserved[0], stats["reserved"])
    return collections.OrderedDict(sorted({
        "allocated_bytes.all.current": stats["allocated"],
        "allocated_bytes.all.peak": stats["peak"],
        "reserved_bytes.all.current": stats["reserved"],
        "reserved_bytes.all.peak": peak_reserved}.items()))


def memory_allocated(device=None):
    """Bytes of GPU memory held by tensors now (in 512-byte blocks, as torch counts); 0 without
    CUDA, as in torch."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    """The most bytes tensors held at once since the start or `reset_peak_memory_stats`."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    """Bytes held by jitensor's pool: tensors' blocks plus freed ones cached for reuse."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    """The most bytes the pool held at once since the start or `reset_peak_memory_stats`."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None):
    """Start the peaks (`max_memory_allocated`, `max_memory_reserved`) again from now."""
    memory = _memory(device)
    memory.reset_peak()
    _peak_reserved[0] = memory.stats()["reserved"]


def reset_max_memory_allocated(device=None):
    """Deprecated in torch for `reset_peak_memory_stats`, which it calls (all peaks reset)."""
    warnings.warn("jitensor.cuda.reset_max_memory_allocated now calls "
                  "jitensor.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device)


def empty_cache():
    """Give the cached, unused blocks back to the driver (tensors keep theirs). Does nothing
    before CUDA is initialized (nothing is cached then), as in torch."""
    if not _initialized[0]:
        return
    memory = _memory()
    _peak_reserved[0] = max(_peak_reserved[0], memory.stats()["reserved"])
    memory.empty_cache()


def memory_summary(device=None, abbreviated=False):
    """A printable table of `memory_stats` (the counters jitensor keeps: current and peak bytes
    held by tensors and by the pool), in the layout of torch's."""
    index = _cuda_device(device).index if is_available() else 0
    stats = memory_stats(device)

    def size(n):
        for unit in ("B  ", "KiB", "MiB", "GiB", "TiB"):
            if n < 768 * 1024 or unit == "TiB":
                return f"{n:6d} {unit}"
            n //= 1024

    lines = ["=" * 75, f" {'':16} jitensor CUDA memory summary, device ID {index:<16d} ",
             "=" * 75, f"  {'Metric':<21} | {'Cur Usage':^10} | {'Peak Usage':^10} "]
    for key, name in (("allocated_bytes", "Allocated memory"),
                      ("reserved_bytes", "GPU reserved memory")):
        lines += ["-" * 75, f" {name:<21} | {size(stats.get(key + '.all.current', 0))} | "
                            f"{size(stats.get(key + '.all.peak', 0))} "]
    lines.append("=" * 75)
    return "|" + "|\n|".join(line.ljust(75) for line in lines) + "|\n"


class device:
    """``with jt.cuda.device(1):`` -- make a device current inside the block (None or -1: no
    change, as in torch)."""

    def __init__(self, index):
        from ..device import device as device_cls
        self.index = index if index is None or isinstance(index, int) else \
            device_cls(index).index or 0

    def __enter__(self):
        if self.index not in (None, -1):
            self.previous = current_device()
            set_device(self.index)
        return self

    def __exit__(self, *exc):
        if self.index not in (None, -1):
            set_device(self.previous)


def _streams():
    init()
    from ..kernels.cuda import streams
    return streams


class Stream(_streams_module.Stream):
    """A CUDA stream. Kernels, copies and allocations made while it is current (``with
    jt.cuda.stream(s):`` or ``with s:``) queue on it in order and may run alongside other
    streams' work; order between streams is the caller's (wait_stream, wait_event,
    Tensor.record_stream), as in torch. Like torch, Stream() takes one of a fixed set of streams
    per priority in turn (kernels/cuda/streams.py); priority < 0 asks for a high one."""

    def __init__(self, device=None, priority=0):
        self.device = _cuda_device(device)
        self._core, self._entered = _streams().pooled(priority), []

    @classmethod
    def _of(cls, core):
        s = cls.__new__(cls)
        s.device, s._core, s._entered = _cuda_device(None), core, []
        return s

    @property
    def cuda_stream(self):
        """The stream's handle (cudaStream_t) as an int: 0 for the legacy default stream."""
        return _streams().handle(self._core)

    @property
    def priority(self):
        return self._core.priority

    stream_id = native_handle = cuda_stream

    def query(self):
        """Whether all the work queued on this stream has finished."""
        from ..kernels.cuda import driver
        return driver.stream_done(self._core)

    def synchronize(self):
        """Wait until the work queued on this stream has finished."""
        self._core.sync()

    def wait_stream(self, stream):
        """Make work queued on this stream from now on wait for what `stream` has queued."""
        self._core.wait(stream._core)

    def wait_event(self, event):
        """Make work queued on this stream from now on wait for `event`."""
        event.wait(self)

    def record_event(self, event=None):
        """Record `event` (a new Event when None) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self):
        return hash(self.cuda_stream)

    def __cuda_stream__(self):
        """The CUDA stream protocol (cuda.core, numba-cuda): (version, handle)."""
        return 0, self.cuda_stream

    def __enter__(self):
        self._entered.append(stream(self))  # a stack: `with s:` may nest inside `with s:`
        return self._entered[-1].__enter__()

    def __exit__(self, *exc):
        self._entered.pop().__exit__(*exc)

    def __repr__(self):
        return f"<jitensor.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event(_streams_module.Event):
    """A CUDA event: a point in a stream's work, to wait for, to test, or to time
    (``enable_timing=True``: ``start.elapsed_time(end)`` in milliseconds)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("jt.cuda.Event(interprocess=True): events shared between "
                                      "processes are not supported; leave interprocess=False")
        init()
        self.enable_timing, self.blocking = bool(enable_timing), bool(blocking)
        self.device = _cuda_device(None)
        self._core = None  # created at the first record, as torch does

    def record(self, stream=None):
        """Record the event on `stream` (the current stream when None)."""
        stream = current_stream() if stream is None else stream
        if self._core is None:
            from ..kernels.cuda import driver
            self._core = driver.new_event(self.enable_timing, self.blocking)
        stream._core.record(self._core)

    def wait(self, stream=None):
        """Make work queued on `stream` (the current one when None) from now on wait for the
        event; a never-recorded event waits for nothing."""
        if self._core is not None:
            (current_stream() if stream is None else stream)._core.wait(self._core)

    def query(self):
        """Whether the work before the event's record has finished (True if never recorded)."""
        return self._core is None or self._core.is_done

    def synchronize(self):
        """Wait until the work before the event's record has finished."""
        if self._core is not None:
            self._core.sync()

    def elapsed_time(self, end_event):
        """Milliseconds from this event's record to `end_event`'s, both recorded and done."""
        for name, e in (("self", self), ("end_event", end_event)):
            if not e.enable_timing:
                raise RuntimeError(f"elapsed_time(): {name} was created without timing; create "
                                   f"both events with jt.cuda.Event(enable_timing=True)")
            if e._core is None:
                raise RuntimeError(f"elapsed_time(): {name} has not been recorded; call "
                                   f"record() on both events first")
        self.synchronize()
        end_event.synchronize()
        return float(end_event._core - self._core)


def _cuda_device(device):
    """The jt.device of a CUDA device given as None (the current one), an index or a name."""
    from ..device import device as device_cls
    index = device if device is None or isinstance(device, int) else device_cls(device).index
    index = current_device() if index is None or index == -1 else index  # -1: as torch
    init(index)
    return device_cls("cuda", index)


def current_stream(device=None):
    """The stream CUDA work goes on now: the default one unless a stream context is active."""
    _cuda_device(device)
    return Stream._of(_streams().current())


def default_stream(device=None):
    """The legacy default stream, where CUDA work goes outside any stream context."""
    _cuda_device(device)
    return Stream._of(_streams().default())


def set_stream(stream):
    """Make `stream` current (prefer the context manager ``jt.cuda.stream(s)``)."""
    if stream is not None:
        _streams().use(stream._core)


class stream:
    """``with jt.cuda.stream(s):`` -- queue CUDA work on `s` inside the block (None: no change)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.previous = _streams().current()
            _streams().use(self.stream._core)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            _streams().use(self.previous)


StreamContext = stream


def get_device_name(device=None):
    _cuda_device(device)
    from numba import cuda
    name = getattr(cuda.get_current_device(), "name", "CUDA simulator")
    return name.decode() if isinstance(name, bytes) else name


# -- random numbers ------------------------------------------------------------------------------
# jitensor draws every device's random numbers from one generator, jt.default_generator: its
# counter-based stream gives the same numbers on the CPU and on CUDA (random.py), so there is no
# separate CUDA generator state. With CUDA available, the functions below seed, read and set
# that generator: a CUDA draw after jt.cuda.manual_seed(s) is reproducible, as in torch, but
# unlike torch the CPU draws that follow come from the same seed. Without CUDA the seeding and
# setting functions do nothing, as torch's (queued until CUDA starts, which it never does), so
# CPU draws are untouched; the reading ones raise, as torch's do.
def _generator(device=None):
    _cuda_device(device)  # checks it (None, "cuda": the current device)
    from ..random import default_generator
    return default_generator


def manual_seed(seed):
    """Seed the CUDA draws (see above: jitensor's one generator); nothing without CUDA."""
    seed = int(seed)
    if is_available():
        _generator().manual_seed(seed)


manual_seed_all = manual_seed  # jitensor runs on one GPU


def seed():
    """Seed the CUDA draws with a random number; nothing without CUDA."""
    if is_available():
        _generator().seed()


seed_all = seed


def initial_seed():
    """The seed of the CUDA draws (jitensor's one generator)."""
    return _generator().initial_seed()


def get_rng_state(device="cuda"):
    """The state of the CUDA draws as a uint8 tensor (jitensor's one generator: see above)."""
    return _generator(device).get_state()


def set_rng_state(new_state, device="cuda"):
    """Restore a state from `get_rng_state`; nothing without CUDA, as in torch."""
    if is_available():
        _generator(device).set_state(new_state)


def get_rng_state_all():
    """`get_rng_state` of every CUDA device: [] without CUDA."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# -- device properties ---------------------------------------------------------------------------
class _CudaDeviceProperties:
    """What `get_device_properties` returns: torch's fields. On a GPU they come from the driver
    through numba-cuda; in numba's simulator (NUMBA_ENABLE_CUDASIM=1, kernels run on the host)
    the name is "CUDA simulator", major.minor the simulator's compute capability, total_memory
    the host's physical memory, one multiprocessor with torch's usual per-SM figures for the
    rest of the limits, and 0 for the hardware it has no counterpart for (clocks, bus, L2)."""

    _FIELDS = ("name", "major", "minor", "total_memory", "multi_processor_count",
               "is_integrated", "is_multi_gpu_board", "max_threads_per_multi_processor",
               "max_threads_per_block", "warp_size", "regs_per_multiprocessor",
               "shared_memory_per_block", "shared_memory_per_block_optin",
               "shared_memory_per_multiprocessor", "L2_cache_size", "clock_rate",
               "memory_clock_rate", "memory_bus_width", "uuid", "pci_bus_id", "pci_device_id",
               "pci_domain_id", "gcnArchName")

    def __init__(self, **fields):
        for name in self._FIELDS:
            setattr(self, name, fields[name])

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
                f"pci_bus_id={self.pci_bus_id}, pci_device_id={self.pci_device_id}, "
                f"pci_domain_id={self.pci_domain_id}, "
                f"L2_cache_size={self.L2_cache_size // (1 << 20)}MB)")


def _host_memory():
    """(available, total) bytes of host memory: the simulator's device memory."""
    page = os.sysconf("SC_PAGE_SIZE")
    return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page


@functools.cache
def _properties(index):
    from numba import config, cuda
    dev = cuda.get_current_device()
    major, minor = dev.compute_capability
    uuid = str(getattr(dev, "uuid", "")).removeprefix("GPU-")
    if config.ENABLE_CUDASIM:
        return _CudaDeviceProperties(
            name="CUDA simulator", major=major, minor=minor, total_memory=_host_memory()[1],
            multi_processor_count=1, is_integrated=1, is_multi_gpu_board=0,
            max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32,
            regs_per_multiprocessor=65536, shared_memory_per_block=49152,
            shared_memory_per_block_optin=49152, shared_memory_per_multiprocessor=65536,
            L2_cache_size=0, clock_rate=0, memory_clock_rate=0, memory_bus_width=0, uuid=uuid,
            pci_bus_id=0, pci_device_id=0, pci_domain_id=0, gcnArchName="")
    name = dev.name
    return _CudaDeviceProperties(
        name=name.decode() if isinstance(name, bytes) else name, major=major, minor=minor,
        total_memory=int(cuda.current_context().get_memory_info()[1]),
        multi_processor_count=dev.MULTIPROCESSOR_COUNT, is_integrated=dev.INTEGRATED,
        is_multi_gpu_board=dev.MULTI_GPU_BOARD,
        max_threads_per_multi_processor=dev.MAX_THREADS_PER_MULTIPROCESSOR,
        max_threads_per_block=dev.MAX_THREADS_PER_BLOCK, warp_size=dev.WARP_SIZE,
        regs_per_multiprocessor=dev.MAX_REGISTERS_PER_MULTIPROCESSOR,
        shared_memory_per_block=dev.MAX_SHARED_MEMORY_PER_BLOCK,
        shared_memory_per_block_optin=dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        shared_memory_per_multiprocessor=dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        L2_cache_size=dev.L2_CACHE_SIZE, clock_rate=dev.CLOCK_RATE,
        memory_clock_rate=dev.MEMORY_CLOCK_RATE, memory_bus_width=dev.GLOBAL_MEMORY_BUS_WIDTH,
        uuid=uuid, pci_bus_id=dev.PCI_BUS_ID, pci_device_id=dev.PCI_DEVICE_ID,
        pci_domain_id=dev.PCI_DOMAIN_ID, gcnArchName="")


def get_device_properties(device=None):
    """The properties of a CUDA device (the current one when None): name, major, minor,
    total_memory, multi_processor_count, warp_size, ... as torch's (see
    `_CudaDeviceProperties` for the simulator's)."""
    return _properties(_cuda_device(device).index)


def get_device_capability(device=None):
    """(major, minor): the device's compute capability."""
    props = get_device_properties(device)
    return props.major, props.minor


def mem_get_info(device=None):
    """(free, total) bytes of the device's memory, as the driver reports them (other processes'
    use included); in the simulator, the host's available and physical memory."""
    _cuda_device(device)
    from numba import config
    if config.ENABLE_CUDASIM:
        return _host_memory()
    from numba import cuda
    free, total = cuda.current_context().get_memory_info()
    return int(free), int(total)


def get_arch_list():
    """The architectures jitensor compiles CUDA kernels for: numba-cuda compiles each kernel at
    run time for the GPU present, so this is that GPU's (["sm_90"] on an H100); [] without
    CUDA, as in torch."""
    if not is_available():
        return []
    major, minor = get_device_capability()
    return [f"sm_{major}{minor}"]


def is_bf16_supported(including_emulation=True):
    """False: jitensor's CUDA kernels have no bfloat16 (its bfloat16 tensors live on the CPU),
    so scripts that ask pick float16."""
    return False


def ipc_collect():
    """torch frees the GPU memory of tensors other processes shared through CUDA IPC and have
    released. jitensor shares no CUDA memory between processes (no CUDA IPC), so there is none
    to free; it still needs CUDA, as torch's does."""
    init()


from ..legacy_types import CUDA_TYPES as _LEGACY_TYPES  # noqa: E402
from . import amp  # noqa: E402,F401 (torch.cuda.amp is there without an import; it needs the above)

globals().update(_LEGACY_TYPES)  # FloatTensor, LongTensor, ... on CUDA (torch's legacy types)
