"""jt.cuda: device queries. Nothing here touches the CUDA driver until it is called, and
`import jitensor` never imports numba.cuda."""
import functools

_current = [0]


@functools.lru_cache(maxsize=None)
def _probe():
    """(number of GPUs, reason there are none): asked of numba-cuda once per process."""
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


def current_device():
    init()
    return _current[0]


def set_device(device):
    from .device import device as device_cls
    index = device if isinstance(device, int) else device_cls(device).index or 0
    init(index)
    _current[0] = index


class OutOfMemoryError(RuntimeError):
    """Raised when the GPU has no room for a new tensor even after cached memory was released."""


def _memory(device=None):
    _cuda_device(device)  # checks it (None: the current device)
    from .backends.cuda import memory
    return memory


def synchronize(device=None):
    """Wait until every kernel queued on the GPU has finished."""
    _cuda_device(device)
    from .backends.cuda import driver
    driver.synchronize()


def memory_allocated(device=None):
    """Bytes of GPU memory held by tensors now (in 512-byte blocks, as torch counts)."""
    return _memory(device).stats()["allocated"]


def max_memory_allocated(device=None):
    return _memory(device).stats()["peak"]


def reset_peak_memory_stats(device=None):
    _memory(device).reset_peak()


def memory_reserved(device=None):
    """Bytes held by jitensor's pool: tensors' blocks plus freed ones cached for reuse."""
    return _memory(device).stats()["reserved"]


def empty_cache():
    """Give the cached, unused blocks back to the driver (tensors keep theirs)."""
    _memory().empty_cache()


class device:
    """``with jt.cuda.device(1):`` -- make a device current inside the block (None or -1: no
    change, as in torch)."""

    def __init__(self, index):
        from .device import device as device_cls
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
    from .backends.cuda import streams
    return streams


class Stream:
    """A CUDA stream. Kernels, copies and allocations made while it is current (``with
    jt.cuda.stream(s):`` or ``with s:``) queue on it in order and may run alongside other
    streams' work; order between streams is the caller's (wait_stream, wait_event,
    Tensor.record_stream), as in torch. Like torch, Stream() takes one of a fixed set of streams
    per priority in turn (backends/cuda/streams.py); priority < 0 asks for a high one."""

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

    def query(self):
        """Whether all the work queued on this stream has finished."""
        from .backends.cuda import driver
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


class Event:
    """A CUDA event: a point in a stream's work, to wait for, to test, or to time
    (``enable_timing=True``: ``start.elapsed_time(end)`` in milliseconds)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("jt.cuda.Event(interprocess=True): events shared between "
                                      "processes are not supported; leave interprocess=False")
        init()
        self.enable_timing, self.blocking = bool(enable_timing), bool(blocking)
        self._core = None  # created at the first record, as torch does

    def record(self, stream=None):
        """Record the event on `stream` (the current stream when None)."""
        stream = current_stream() if stream is None else stream
        if self._core is None:
            from .backends.cuda import driver
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
    from .device import device as device_cls
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
