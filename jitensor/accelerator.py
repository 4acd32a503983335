"""jt.accelerator: torch.accelerator's device-generic API. jitensor's one accelerator is CUDA
(through jt.cuda). torch names the accelerator its build was compiled for even when no device
answers; jitensor has no such build-time choice, so it counts CUDA as the accelerator only when
CUDA can be used (`jt.cuda.is_available()`), and otherwise behaves as torch's CPU-only build:
no accelerator, and the functions that need one raise. CUDA graphs (torch.accelerator.Graph)
are not supported."""
import warnings

from . import cuda
from .device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream",
           "device_count", "device_index", "empty_cache", "empty_host_cache",
           "get_device_capability", "get_memory_info", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]


class AcceleratorError(RuntimeError):
    """torch.AcceleratorError: what torch raises when an accelerator's runtime call fails."""


class FatalError(Exception):
    """torch.FatalError: what torch raises for an unrecoverable internal error."""


_NONE = "Cannot access accelerator device when none is available."


def is_available():
    """Whether an accelerator (a CUDA GPU) can be used now."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """``device(type='cuda')`` when CUDA can be used, else None (see the module docstring;
    `check_available` therefore changes nothing)."""
    return _device("cuda") if cuda.is_available() else None


def device_count():
    return cuda.device_count()


def _require():
    if not cuda.is_available():
        raise RuntimeError(_NONE)


def _index(device, optional):
    """The device index of `device` (an int, a "cuda..." string or a jt.device), with torch's
    checks; None is the current device when `optional`."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = _device(device)
    index = None
    if isinstance(device, _device):
        if current_accelerator() is None:
            raise RuntimeError("Accelerator expected")
        if device.type != "cuda":
            raise ValueError(f"{device.type} doesn't match the current accelerator "
                             f"{current_accelerator()}.")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                             f"but got:{device}")
        return current_device_index()
    return index


def current_device_index():
    """The index of the current device of the accelerator."""
    _require()
    return cuda.current_device()


def current_device_idx():
    """Deprecated in torch for `current_device_index`."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """Make `device` (an index, or a device with one) current; a negative index does nothing."""
    _require()
    index = _index(device, optional=False)
    if index >= 0:
        cuda.set_device(index)


def set_device_idx(device, /):
    """Deprecated in torch for `set_device_index`."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def get_device_capability(device=None, /):
    """{"supported_dtypes": the dtypes tensors on the device can have}."""
    _require()
    from .dtypes import ALL
    cuda.init(_index(device, optional=True))
    return {"supported_dtypes": set(ALL)}


def current_stream(device=None, /):
    """The stream work on the device goes on now (a jt.cuda.Stream)."""
    _require()
    return cuda.current_stream(_index(device, optional=True))


def set_stream(stream):
    """Make `stream` current (and its device the current device)."""
    _require()
    cuda.set_device(stream.device)
    cuda.set_stream(stream)


def synchronize(device=None, /):
    """Wait until all the work queued on the device, on every stream, has finished."""
    _require()
    cuda.synchronize(_index(device, optional=True))


class device_index:
    """``with jt.accelerator.device_index(i):`` -- make device `i` current inside the block
    (None: no change)."""

    def __init__(self, device, /):
        self.idx, self.prev_idx = device, -1

    def __enter__(self):
        if self.idx is not None:
            _require()
            self.prev_idx = cuda.current_device()
            if self.idx >= 0:
                cuda.set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None and self.prev_idx >= 0:
            cuda.set_device(self.prev_idx)


# -- memory: jt.cuda's counters (memory_stats lists the ones jitensor keeps) --------------------
def empty_cache():
    """Give the accelerator's cached, unused memory back to the driver."""
    _require()
    cuda.empty_cache()


def empty_host_cache():
    """torch frees its cache of pinned (page-locked) host memory. jitensor keeps no such cache
    (its `pin_memory=True` tensors are ordinary host memory from the CPU pool), so there is
    nothing to free once the device is checked."""
    _require()


def memory_stats(device_index=None, /):
    _require()
    return cuda.memory_stats(_index(device_index, optional=True))


def memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device_index=None, /):
    _require()
    cuda.reset_peak_memory_stats(_index(device_index, optional=True))


def reset_accumulated_memory_stats(device_index=None, /):
    """torch zeroes its running totals (bytes ever allocated and freed). jitensor keeps no such
    totals (`memory_stats` has current and peak values only), so there is nothing to reset."""
    _require()
    cuda.init(_index(device_index, optional=True))


def get_memory_info(device_index=None, /):
    """(free, total) bytes of the device's memory."""
    _require()
    return cuda.mem_get_info(_index(device_index, optional=True))
