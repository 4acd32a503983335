"""torch.Stream and torch.Event, the device-generic ones: for a CUDA device they are
jitensor.cuda's Stream and Event (subclasses of these); on the CPU work runs in program order,
so a CPU stream is always done and has nothing to wait for, and a CPU event cannot be
recorded, as in torch ("cpu backend doesn't support events")."""
from . import dtypes

__all__ = ["Event", "Stream"]


def _device(value):
    from .device import device  # not at import: jitensor.device imports jitensor.cuda, and
    return device(value)        # jitensor.cuda this module


def _resolve(device):
    """The device a Stream or Event of `device` lives on: the current accelerator when None."""
    if device is None:
        from . import accelerator
        return accelerator.current_accelerator() or _device("cpu")
    return _device(device)


class Stream:
    """``Stream(device=None, *, priority=0)``: a stream of `device` (the current accelerator
    when None, else the CPU)."""

    def __new__(cls, device=None, *args, priority=0, **kwargs):
        if cls is Stream:  # not for jitensor.cuda.Stream, whose own arguments come here
            d = _resolve(device)
            if d.type == "cuda":
                from . import cuda
                return cuda.Stream(d, priority)
        return super().__new__(cls)

    def __init__(self, device=None, *, priority=0):
        self.device = _device("cpu")
        self.priority = priority

    # torch's DeviceType numbers (c10/core/DeviceType.h), as torch.Stream gives them
    device_type = property(lambda self: {"cpu": 0, "cuda": 1}[self.device.type])
    device_index = property(lambda self: -1 if self.device.index is None else self.device.index)
    stream_id = property(lambda self: 0)
    native_handle = property(lambda self: 0)

    def query(self):
        return True

    def synchronize(self):
        """Nothing to wait for: CPU ops have finished when they return."""

    def wait_stream(self, stream):
        """Nothing to order: CPU work runs in program order."""

    def wait_event(self, event):
        event.wait(self)

    def record_event(self, event=None):
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def is_capturing(self):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __eq__(self, other):
        return type(other) is type(self) and other.device == self.device

    def __hash__(self):
        return hash((type(self), self.device))

    def __repr__(self):
        return (f"{dtypes.SHOWN_AS}.Stream device_type={self.device.type}, "
                f"device_index={self.device_index}, stream_id={self.stream_id}")


class Event:
    """``Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)``: an
    event of `device` (the current accelerator when None, else the CPU)."""

    def __new__(cls, device=None, *args, enable_timing=False, blocking=False, interprocess=False,
                **kwargs):
        if cls is Event:  # not for jitensor.cuda.Event, whose own arguments come here
            d = _resolve(device)
            if d.type == "cuda":
                from . import cuda
                return cuda.Event(enable_timing, blocking, interprocess)
        return super().__new__(cls)

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _device("cpu")
        self.enable_timing, self.blocking = bool(enable_timing), bool(blocking)

    def record(self, stream=None):
        raise RuntimeError("jitensor.Event.record(): the cpu backend doesn't support events; "
                           "create the event on a CUDA device (jitensor.Event('cuda'))")

    def query(self):
        return True  # never recorded: nothing to wait for

    def synchronize(self):
        """A never-recorded event has nothing to wait for."""

    def wait(self, stream=None):
        """A never-recorded event makes nothing wait."""

    def elapsed_time(self, end_event):
        raise RuntimeError("jitensor.Event.elapsed_time(): the cpu backend doesn't support "
                           "events; time CPU work with time.perf_counter()")

    def __repr__(self):
        return f"{dtypes.SHOWN_AS}.Event device_type={self.device.type}, device_index=-1"
