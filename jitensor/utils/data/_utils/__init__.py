"""torch.utils.data._utils: the older import path of the collate functions."""
from . import collate

__all__ = ["collate"]
