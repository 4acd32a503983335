"""torch.autograd.Variable, from before tensors and Variables merged: `Variable(t)` is a leaf
sharing `t`'s data, and every tensor is an instance of it."""
import warnings

from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: `data` detached (same memory),
    with requires_grad set."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        return data.detach().requires_grad_(requires_grad)
