"""torch.cpu.amp: jitensor.amp's autocast and GradScaler for the "cpu" device."""
from .. import amp

__all__ = ["GradScaler", "autocast"]

autocast, GradScaler = amp.device_classes("cpu", "bfloat16")
