"""torch.types: the type aliases torch's annotations use. jitensor has no symbolic shapes, so
the Sym* alternatives are absent (IntLikeType is int, py_sym_types is empty)."""
import os
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, TypeAlias, Union  # noqa: F401 (torch's names)

from .device import device as _device
from .dtypes import dtype as _dtype
from .tensor import Size, Tensor

__all__ = ["Device", "FileLike", "Number", "Storage"]

_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
_symsize: TypeAlias = Size | Sequence[int]

IntLikeType: TypeAlias = int
FloatLikeType: TypeAlias = float
BoolLikeType: TypeAlias = bool
py_sym_types = ()

Number: TypeAlias = int | float | bool
_Number = (int, float, bool)
FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]
Device: TypeAlias = _device | str | int | None


class Storage:
    """The interface torch's annotations give a storage (an abstract class, as torch's)."""

    device: _device
    dtype: _dtype

    def __deepcopy__(self, memo: dict[int, Any]):
        raise NotImplementedError

    def element_size(self) -> int:
        raise NotImplementedError

    def is_shared(self) -> bool:
        raise NotImplementedError

    def share_memory_(self):
        raise NotImplementedError

    def nbytes(self) -> int:
        raise NotImplementedError

    def cpu(self):
        raise NotImplementedError

    def data_ptr(self) -> int:
        raise NotImplementedError
