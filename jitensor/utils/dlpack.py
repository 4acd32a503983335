"""torch.utils.dlpack: DLPack capsules in and out."""
from ..creation import from_dlpack

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor):
    """A "dltensor" capsule sharing `tensor`'s memory (CPU or CUDA), for from_dlpack of any
    library; the same as ``tensor.__dlpack__()``."""
    from ..tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor.__dlpack__()
