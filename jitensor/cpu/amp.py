"""torch.cpu.amp: jitensor.amp's autocast and GradScaler for the "cpu" device."""
from .. import amp

__all__ = ["GradScaler", "autocast"]


class autocast(amp.autocast):
    """torch.cpu.amp.autocast(enabled=True, dtype=bfloat16, cache_enabled=True)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        from .. import bfloat16
        super().__init__("cpu", bfloat16 if dtype is None else dtype, enabled, cache_enabled)


class GradScaler(amp.GradScaler):
    """torch.cpu.amp.GradScaler: `jitensor.amp.GradScaler("cpu", ...)`."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
