"""torch.amp: gradient scaling (`GradScaler`, complete) and autocast (disabled only: see
autocast_mode)."""
from . import autocast_mode, grad_scaler
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]


def device_classes(device_type, default_dtype):
    """torch.<device>.amp's autocast and GradScaler: jitensor.amp's, for `device_type`, autocast
    in `default_dtype` (a name: "float16", "bfloat16") unless given another."""
    import jitensor

    class autocast(autocast_mode.autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            dtype = getattr(jitensor, default_dtype) if dtype is None else dtype
            super().__init__(device_type, dtype, enabled, cache_enabled)

    class GradScaler(grad_scaler.GradScaler):
        def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            super().__init__(device_type, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)

    autocast.__doc__ = (f"torch.{device_type}.amp.autocast(enabled=True, dtype={default_dtype}, "
                        "cache_enabled=True).")
    GradScaler.__doc__ = (f"torch.{device_type}.amp.GradScaler: "
                          f'`jitensor.amp.GradScaler("{device_type}", ...)`.')
    for cls in (autocast, GradScaler):
        cls.__module__, cls.__qualname__ = f"jitensor.{device_type}.amp", cls.__name__
    return autocast, GradScaler
