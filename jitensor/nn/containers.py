"""Sequential and ModuleList: modules kept under the names "0", "1", ... and used like lists."""
import operator
from collections import OrderedDict

from .module import Module, _addindent


class _ModuleSequence(Module):
    """List behaviour shared by Sequential and ModuleList (children named by position)."""

    def _key(self, idx):
        """The child name for int `idx` (negative counts from the end)."""
        idx = operator.index(idx)
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for {type(self).__name__} of length "
                             f"{n}")
        return list(self._modules)[idx % n]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._slice(idx)
        return self._modules[self._key(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key(idx)]
        for key in keys:
            del self._modules[key]
        self._renumber(list(self._modules.values()))

    def _renumber(self, modules):
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(modules))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    __iadd__ = extend

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
