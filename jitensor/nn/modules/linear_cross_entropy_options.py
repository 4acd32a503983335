"""torch.nn.LinearCrossEntropyOptions: the options of linear_cross_entropy's computation."""
import dataclasses

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """torch's options of linear_cross_entropy's batch-chunked computation (memory for
    speed); jitensor computes the reference form, the same loss, whatever they say."""
    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None
