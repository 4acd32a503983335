"""Parameter: a leaf tensor that a Module registers when it is assigned as an attribute; the
uninitialized parameters and buffers of lazy modules."""
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
        # pickle gives back a Parameter with its own copy of the values
        return (Parameter, (self.detach(), self.requires_grad))

    def __deepcopy__(self, memo):
        """A Parameter of a copy of the values, without the grad (torch's: a cloned model
        starts with no gradients)."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result


class UninitializedTensorMixin:
    """A parameter or buffer of a lazy module before its shape is known: an empty tensor until
    materialize() gives it a shape and makes it a plain Parameter (or Tensor)."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Fill in the tensor: empty values of `shape` (device and dtype kept unless given);
        its class becomes cls_to_become."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, protocol):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether `param` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """torch.nn.UninitializedParameter: a lazy module's parameter until its first forward."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """torch.nn.UninitializedBuffer: a lazy module's buffer until its first forward."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        data = empty(0, device=device, dtype=dtype)
        t = object.__new__(cls)
        t._data, t._dtype, t._device, t._meta = data._data, data._dtype, data._device, None
        t.requires_grad = requires_grad
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result
