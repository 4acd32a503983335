"""jitensor.utils: torch.utils's data loading (`data`), activation checkpointing
(`checkpoint`), hook handles (`hooks`), DLPack capsules (`dlpack`) and, imported on first use,
`benchmark` (Timer), `model_zoo` and `tensorboard`."""
import importlib

from . import checkpoint, data, dlpack, hooks  # noqa: F401


def __getattr__(name):
    if name in ("benchmark", "model_zoo", "tensorboard"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
