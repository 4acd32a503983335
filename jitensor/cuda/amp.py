"""torch.cuda.amp: jitensor.amp's autocast and GradScaler for the "cuda" device."""
from .. import amp

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd"]


def amp_definitely_not_available():
    """True when CUDA cannot be used, so CUDA autocast and gradient scaling are off."""
    from .. import cuda
    return not cuda.is_available()


class autocast(amp.autocast):
    """torch.cuda.amp.autocast(enabled=True, dtype=float16, cache_enabled=True)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        from .. import float16
        super().__init__("cuda", float16 if dtype is None else dtype, enabled, cache_enabled)


class GradScaler(amp.GradScaler):
    """torch.cuda.amp.GradScaler: `jitensor.amp.GradScaler("cuda", ...)`."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd: `jitensor.amp.custom_fwd` for "cuda"."""
    return amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """torch.cuda.amp.custom_bwd: `jitensor.amp.custom_bwd` for "cuda"."""
    return amp.custom_bwd(bwd, device_type="cuda")
