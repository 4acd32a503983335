"""jitensor.utils: torch.utils's data loading (`data`)."""
from . import data  # noqa: F401
