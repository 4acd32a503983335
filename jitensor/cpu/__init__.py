"""torch.cpu: the CPU as a device module, beside jt.cuda, for device-generic code
(`jt.get_device_module(device).synchronize()`, `...current_stream()`). jitensor's CPU kernels
run to completion before their op returns, so there is one CPU device, its stream is always
idle and synchronizing waits for nothing, as in torch."""
import os
import platform

from llvmlite import binding

from . import amp

__all__ = ["Event", "Stream", "StreamContext", "amp", "current_device", "current_stream",
           "device_count", "get_capabilities", "is_available", "is_initialized", "set_device",
           "stream", "synchronize"]


def is_available():
    return True


def is_initialized():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def set_device(device):
    """Nothing to select: there is one CPU device (torch does nothing either)."""


def synchronize(device=None):
    """Nothing to wait for: every CPU kernel has finished when its op returns."""


class Stream:
    """The CPU's stream, for device-generic code: its work is always done."""

    def __init__(self, priority=-1):
        self.priority = priority

    def wait_stream(self, stream):
        pass

    def record_event(self, event=None):
        return Event() if event is None else event

    def wait_event(self, event):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass


class Event:
    """An event on the CPU's stream: complete as soon as it is recorded."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        pass

    def record(self, stream=None):
        pass

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass


_STREAM = Stream()


def current_stream(device=None):
    return _STREAM


class StreamContext:
    """`with jt.cpu.stream(s):` -- the CPU has one stream, so this selects nothing."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


# torch's names for the instruction-set features LLVM reports for this CPU
_FEATURES = {"sse": "sse", "sse2": "sse2", "sse3": "sse3", "ssse3": "ssse3", "sse4_1": "sse4.1",
             "sse4_2": "sse4.2", "avx": "avx", "avx2": "avx2", "fma3": "fma", "f16c": "f16c",
             "avx512_f": "avx512f", "avx512_cd": "avx512cd", "avx512_dq": "avx512dq",
             "avx512_bw": "avx512bw", "avx512_vl": "avx512vl", "avx512_vnni": "avx512vnni",
             "avx512_bf16": "avx512bf16", "avx512_fp16": "avx512fp16", "avx_vnni": "avxvnni",
             "amx_tile": "amx-tile", "amx_int8": "amx-int8", "amx_bf16": "amx-bf16",
             "bmi": "bmi", "bmi2": "bmi2", "popcnt": "popcnt", "lzcnt": "lzcnt", "aes": "aes",
             "sha": "sha", "neon": "neon", "sve": "sve"}


def get_capabilities():
    """This CPU's instruction-set features (as LLVM, which compiles the kernels, sees them),
    architecture and logical core count, under torch's keys."""
    host = binding.get_host_cpu_features()
    found = {name: bool(host.get(llvm, False)) for name, llvm in _FEATURES.items()}
    found.update(architecture=platform.machine(), num_logical_cores=os.cpu_count(),
                 cpu_name=binding.get_host_cpu_name())
    return found
