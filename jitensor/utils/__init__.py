"""jitensor.utils: torch.utils's data loading (`data`), activation checkpointing
(`checkpoint`), hook handles (`hooks`) and DLPack capsules (`dlpack`)."""
from . import checkpoint, data, dlpack, hooks  # noqa: F401
