"""torch.nn.attention: `SDPBackend` and `sdpa_kernel`, the choice of the kernels
scaled_dot_product_attention may use in a block. The choice is recorded in
jitensor.backends.cuda's flags, as torch records it; jitensor has one attention kernel per
device, which computes what each of torch's does, so it runs whatever is chosen."""
import contextlib
import enum

from ..backends import cuda as _cuda

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FLAGS = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
          SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enable only `backends` (an SDPBackend or a list of them) for the block; the previous
    choice comes back when it ends."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    chosen = set([backends] if isinstance(backends, SDPBackend) else backends)
    saved = dict(_cuda._sdp)
    _cuda._sdp.update({flag: backend in chosen for backend, flag in _FLAGS.items()})
    try:
        yield {}
    finally:
        _cuda._sdp.update(saved)
