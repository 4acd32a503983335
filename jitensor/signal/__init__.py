"""torch.signal: signal processing (its `windows` module)."""
from . import windows

__all__ = ["windows"]
