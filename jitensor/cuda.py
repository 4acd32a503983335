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
