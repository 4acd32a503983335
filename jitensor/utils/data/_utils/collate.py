"""torch.utils.data._utils.collate: the collate functions (jitensor.utils.data.collate)."""
from ..collate import collate, default_collate, default_collate_fn_map, default_convert

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]
