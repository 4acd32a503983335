"""Containers: Sequential and ModuleList (modules kept under the names "0", "1", ... and used
like lists), ModuleDict, and ParameterList and ParameterDict."""
import operator
import warnings
from collections import OrderedDict

from .module import Module, _addindent

__all__ = ["Container", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
           "Sequential"]


class Container(Module):
    """Deprecated in torch: a Module holding the modules given as keyword arguments."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        for name, module in kwargs.items():
            self.add_module(name, module)


class _Store(Module):
    """A container over one of the module's stores (`_store`: its attribute name)."""

    _store = "_modules"

    def _items(self):
        return self.__dict__[self._store]

    def __len__(self):
        return len(self._items())


class _Sequence(_Store):
    """List behaviour over entries named by position: Sequential, ModuleList, ParameterList."""

    def _key(self, idx):
        """The entry name for int `idx` (negative counts from the end)."""
        idx = operator.index(idx)
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for {type(self).__name__} of length "
                             f"{n}")
        return list(self._items())[idx % n]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._slice(idx)
        return self._items()[self._key(idx)]

    def __iter__(self):
        return iter(self._items().values())

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    __iadd__ = extend


class _ModuleSequence(_Sequence):
    """List behaviour shared by Sequential and ModuleList (children named by position)."""

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key(idx)]
        for key in keys:
            del self._modules[key]
        self._renumber(list(self._modules.values()))

    def _renumber(self, modules):
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(modules))

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)
        return self

    def pop(self, idx):
        module = self[idx]
        del self[idx]
        return module


class Sequential(_ModuleSequence):
    """Modules applied in order: ``Sequential(Linear(2, 3), ReLU())`` or from an OrderedDict of
    named modules."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _slice(self, s):
        # the children keep their names, as in torch
        return Sequential(OrderedDict(list(self._modules.items())[s]))

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of submodules whose parameters the parent module sees (a plain Python list would
    hide them)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _slice(self, s):
        return ModuleList(list(self._modules.values())[s])

    def __repr__(self):
        # torch's: runs of identical children print once, as "(2-5): 4 x Linear(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        lines, start = [], 0
        for end in range(len(reprs)):
            if end + 1 == len(reprs) or reprs[end + 1] != reprs[start]:
                head = f"({start}): " if end == start else \
                    f"({start}-{end}): {end - start + 1} x "
                lines.append(_addindent(head + reprs[start], 2))
                start = end + 1
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class _Dict(_Store):
    """Dict behaviour over the store: ModuleDict, ParameterDict."""

    def __getitem__(self, key):
        return self._items()[key]

    def __delitem__(self, key):
        del self._items()[key]

    def __iter__(self):
        return iter(self._items())

    def __contains__(self, key):
        return key in self._items()

    def keys(self):
        return self._items().keys()

    def items(self):
        return self._items().items()

    def values(self):
        return self._items().values()

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def clear(self):
        self._items().clear()

    def update(self, pairs):
        """Add (name, value) pairs from a mapping or an iterable of pairs."""
        pairs = pairs.items() if hasattr(pairs, "items") else pairs
        for j, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(f"{type(self).__name__} update sequence element #{j} has "
                                 f"length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]


class ModuleDict(_Dict):
    """A dict of submodules whose parameters the parent module sees, in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key, module):
        self.add_module(key, module)


def _describe(items):
    """torch's extra_repr of the parameter containers: a line per entry."""
    return "\n".join(
        f"  ({key}): Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}"
        f"{'' if p.device.type == 'cpu' else f' ({p.device})'}]"
        for key, p in items if p is not None)


def _parameter(value):
    """What a parameter container stores: Parameters as they are, other tensors wrapped."""
    from ...tensor import Tensor
    from ..parameter import Parameter
    return Parameter(value) if isinstance(value, Tensor) and not isinstance(
        value, Parameter) else value


class ParameterList(_Sequence):
    """A list of parameters the parent module sees (tensors assigned are made Parameters)."""

    _store = "_parameters"

    def __init__(self, values=None):
        super().__init__()
        self.extend(values or ())

    def _slice(self, s):
        return ParameterList(list(self)[s])

    def __setitem__(self, idx, value):
        self.register_parameter(self._key(idx), _parameter(value))

    def append(self, value):
        self.register_parameter(str(len(self)), _parameter(value))
        return self

    def extra_repr(self):
        return _describe(self._parameters.items())


class ParameterDict(_Dict):
    """A dict of parameters the parent module sees (tensors assigned are made Parameters)."""

    _store = "_parameters"

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key, value):
        self.register_parameter(key, _parameter(value))

    def extra_repr(self):
        return _describe(self._parameters.items())
