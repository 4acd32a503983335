"""torch.cuda.amp: jitensor.amp's autocast and GradScaler for the "cuda" device."""
from .. import amp

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd"]


def amp_definitely_not_available():
    """True when CUDA cannot be used, so CUDA autocast and gradient scaling are off."""
    from .. import cuda
    return not cuda.is_available()


autocast, GradScaler = amp.device_classes("cuda", "float16")


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd: `jitensor.amp.custom_fwd` for "cuda"."""
    return amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """torch.cuda.amp.custom_bwd: `jitensor.amp.custom_bwd` for "cuda"."""
    return amp.custom_bwd(bwd, device_type="cuda")
