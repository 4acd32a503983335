"""jitensor.utils: torch.utils's data loading (`data`), activation checkpointing
(`checkpoint`) and hook handles (`hooks`)."""
from . import checkpoint, data, hooks  # noqa: F401
