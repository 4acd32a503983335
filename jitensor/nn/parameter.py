"""Parameter: a leaf tensor that a Module registers when it is assigned as an attribute."""
from ..creation import empty
from ..tensor import Tensor


class Parameter(Tensor):
    """torch.nn.Parameter: shares `data`'s memory, requires grad unless told otherwise, and
    prints as ``Parameter containing:`` followed by the tensor."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}; "
                            f"wrap it first: Parameter(jitensor.tensor(data))")
        p = object.__new__(cls)  # Tensor.__new__ builds tensors from sizes or data
        p._data, p._dtype, p._device, p._meta = data._data, data._dtype, data._device, None
        p.requires_grad = requires_grad
        return p

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce__(self):
        # copy.deepcopy and pickle give back a Parameter with its own copy of the values
        return (Parameter, (self.detach(), self.requires_grad))
