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


def _memory():
    init()
    from .backends.cuda import memory
    return memory


def synchronize(device=None):
    """Wait until every kernel queued on the GPU has finished."""
    init()
    from .backends.cuda import driver
    driver.synchronize()


def memory_allocated(device=None):
    """Bytes of GPU memory held by tensors now (in 512-byte blocks, as torch counts)."""
    return _memory().stats()["allocated"]


def max_memory_allocated(device=None):
    return _memory().stats()["peak"]


def reset_peak_memory_stats(device=None):
    _memory().reset_peak()


def memory_reserved(device=None):
    """Bytes held by jitensor's pool: tensors' blocks plus freed ones cached for reuse."""
    return _memory().stats()["reserved"]


def empty_cache():
    """Give the cached, unused blocks back to the driver (tensors keep theirs)."""
    _memory().empty_cache()


class device:
    """``with jt.cuda.device(1):`` -- make a device current inside the block."""

    def __init__(self, index):
        from .device import device as device_cls
        self.index = index if isinstance(index, int) else device_cls(index).index or 0

    def __enter__(self):
        self.previous = current_device()
        set_device(self.index)
        return self

    def __exit__(self, *exc):
        set_device(self.previous)


class Stream:
    """A CUDA stream. jitensor queues every kernel on the device's default stream in order, so
    a Stream here orders work as that one stream does; ``synchronize`` waits for it."""

    def __init__(self, device=None, priority=0):
        init()

    def synchronize(self):
        synchronize()

    def wait_stream(self, stream):
        pass  # one underlying stream: already ordered

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def current_stream(device=None):
    return Stream(device)


def stream(s):
    """``with jt.cuda.stream(s):`` (see Stream)."""
    return s


def get_device_name(device=None):
    init()
    from numba import cuda
    name = getattr(cuda.get_current_device(), "name", "CUDA simulator")
    return name.decode() if isinstance(name, bytes) else name
