"""torch.nn.utils.parametrize: make a module's parameter or buffer the output of a module (a
parametrization) applied to an unconstrained original, as torch does it.

`register_parametrization(module, "weight", P)` moves ``module.weight`` to
``module.parametrizations.weight.original`` (after P.right_inverse, when P has one) and gives
the module a class of its own, ``Parametrized<Class>``, whose ``weight`` property computes
``P(original)`` at each access (once per `cached()` block). Assigning ``module.weight = X``
stores ``P.right_inverse(X)``. The state dict then holds ``parametrizations.weight.original``
(``original0``, ``original1``, ... when right_inverse returns several tensors).
`remove_parametrizations` undoes it, keeping the parametrized value or the original."""
import collections.abc
import contextlib
import copy
import copyreg

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_enabled = [0]  # nesting depth of cached() blocks
_cache = {}  # (id(module), tensor name) -> the parametrized tensor, inside cached()


@contextlib.contextmanager
def cached():
    """Inside the block each parametrized tensor is computed once, at its first access, and
    reused (as torch's: for a forward pass that reads a parametrized weight several times)."""
    _cache_enabled[0] += 1
    try:
        yield
    finally:
        _cache_enabled[0] -= 1
        if not _cache_enabled[0]:
            _cache.clear()


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _set(dest, src):
    """torch's ``dest.set_(src)``: `dest` (the same object, which optimizers may hold) takes
    `src`'s memory."""
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to the original(s) they keep
    (``original``, or ``original0``, ``original1``, ... when the first right_inverse returns a
    sequence)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
                # without right_inverse (or when it raises NotImplementedError): the identity
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(f"Registering a parametrization may not change the dtype of "
                                 f"the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise ValueError(f"Registering a parametrization may not change the shape of "
                                 f"the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {z.shape}")

    def right_inverse(self, value):
        """Store `value` as the parametrized tensor: each parametrization's right_inverse, last
        to first, gives the original(s) to keep."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       f"implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors. Got "
                                     f"{type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got a sequence of length "
                                     f"{len(value)}.")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise ValueError(f"`right_inverse` must return a sequence of tensors. "
                                         f"Got element {i} of type {type(tensor).__name__}")
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                         f"{tensor.dtype} while `original{i}` has dtype "
                                         f"{original_i.dtype}")
                    _set(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    """Give `module` a class of its own (a subclass of its class) to hold the properties: a
    parametrized module then pickles only through its state_dict, as in torch."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through "
                           "state_dict(). See: https://pytorch.org/tutorials/beginner/"
                           "saving_loading_models.html#saving-loading-a-general-checkpoint-"
                           "for-inference-and-or-resuming-training")

    namespace = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    """The property computing ``module.<tensor_name>`` from its parametrizations."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"{tensor_name} is still an attribute of the module")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled[0]:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrize ``module.<tensor_name>`` (a parameter, a buffer, or an already parametrized
    tensor, whose list of parametrizations it extends) by the module `parametrization`:
    reading it returns ``parametrization(original)``. Unless `unsafe`, the parametrization
    must keep the tensor's shape and dtype (checked here). Returns `module`."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError(f"Registering a parametrization may not change the dtype of "
                                 f"the tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.dtype: {y.dtype}\n"
                                 f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if x.shape != y.shape:
                raise ValueError(f"Registering a parametrization may not change the shape of "
                                 f"the tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.shape: {y.shape}\n"
                                 f"parametrization(module.{tensor_name}).shape: {x.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(z).__name__}")
                    if z.dtype != y.dtype:
                        raise ValueError(f"The tensor returned by parametrization.right_inverse "
                                         f"must have the same dtype as module.{tensor_name}, "
                                         f"unless the `unsafe` flag is enabled.\n"
                                         f"module.{tensor_name}.dtype: {y.dtype}\n"
                                         f"returned dtype: {z.dtype}")
                    if z.shape != y.shape:
                        raise ValueError(f"The tensor returned by parametrization.right_inverse "
                                         f"must have the same shape as module.{tensor_name}, "
                                         f"unless the `unsafe` flag is enabled.\n"
                                         f"module.{tensor_name}.shape: {y.shape}\n"
                                         f"returned shape: {z.shape}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether `module` has a parametrization (on `tensor_name`, when given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations on `tensor_name`: it becomes a parameter (or buffer) again,
    holding its parametrized value when `leave_parametrized` (in the original's object, so
    optimizers keep working), else the original. Returns `module`."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _set(original, t)
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that "
                         "is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)
