"""torch.nn's padding modules: ConstantPad, ZeroPad, ReflectionPad, ReplicationPad and
CircularPad in 1, 2 and 3 dims, each F.pad over the last 1, 2 or 3 dims with its mode (F.pad
checks the sizes and the input's rank). `padding` is an int (the same on every side) or the
2, 4 or 6 sizes F.pad takes: (left, right[, top, bottom[, front, back]])."""
from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


def _sizes(padding, n):
    """torch's _ntuple(2 n): a sequence as a tuple (its length unchecked, as torch leaves
    that to F.pad), an int repeated 2 n times."""
    if hasattr(padding, "__iter__"):
        return tuple(padding)
    return (padding,) * (2 * n)


class _PadNd(Module):
    """F.pad(input, padding, mode) over the last _n dims."""

    _n = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _sizes(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _per_dim(kind, base, parents=(None,) * 3):
    """The 1d, 2d and 3d subclasses of base under torch's names (kind + "1d", ...), each with
    its _n (and `parents`' class of its dim as a second base, where given); created here, in
    this module, so that they pickle."""
    return tuple(type(f"{kind}{n}d", (base,) if parent is None else (base, parent),
                      {"_n": n, "__module__": __name__})
                 for n, parent in zip((1, 2, 3), parents, strict=False))


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):  # (torch shows the sizes only)
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    """Checks the input's rank first, as torch's CircularPad modules do (ValueError)."""

    _mode = "circular"

    def forward(self, input):
        if input.ndim not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input (got "
                             f"{input.ndim}D input)")
        return super().forward(input)


ConstantPad1d, ConstantPad2d, ConstantPad3d = _per_dim("ConstantPad", _ConstantPadNd)
# (torch's ZeroPad{n}d are ConstantPad{n}d's subclasses)
ZeroPad1d, ZeroPad2d, ZeroPad3d = _per_dim("ZeroPad", _ZeroPadNd,
                                           (ConstantPad1d, ConstantPad2d, ConstantPad3d))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _per_dim("ReflectionPad", _ReflectionPadNd)
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _per_dim("ReplicationPad",
                                                                _ReplicationPadNd)
CircularPad1d, CircularPad2d, CircularPad3d = _per_dim("CircularPad", _CircularPadNd)
