"""Module: the base class of layers and models, with torch.nn.Module's registration rules,
traversal, state dicts, mode switches, conversions and repr."""
import itertools
from collections import OrderedDict, namedtuple

from ...autograd import no_grad
from ...tensor import Tensor, _parse_to
from ..parameter import Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text, spaces):
    """Indent every line but the first (a child's repr nested in its parent's)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line if line.strip() else "" for line in rest])


def _zero_grads(params, set_to_none):
    """Module.zero_grad and Optimizer.zero_grad: drop each gradient, or cut it from any graph
    (create_graph=True gives gradients one) and zero it in place."""
    for p in params:
        if p.grad is not None:
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_().zero_()


class Module:
    """Base class for all neural network modules: subclass it, create parameters and submodules
    in ``__init__`` (after ``super().__init__()``) and compute the output in ``forward``."""

    def __init__(self):
        # object.__setattr__: our own __setattr__ reads these dicts
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # -- registration -------------------------------------------------------------------------
    def _check_new_name(self, kind, name):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")

    def register_parameter(self, name, param):
        """Add `param` (a Parameter, or None for an absent one such as a disabled bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (jitensor.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is state but not a parameter (running statistics, masks); a
        persistent buffer is part of the state dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            f"(jitensor Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module (or None as a placeholder), reachable as an attribute."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_new_name("module", name)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params, buffers, modules = d.get("_parameters"), d.get("_buffers"), d.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                f"(jitensor.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (jitensor.nn.Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                f"(jitensor Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name, keep):
        """Drop `name` from every store but `keep` before it is stored there (where an existing
        entry keeps its place in the order)."""
        self.__dict__.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                self.__dict__[store].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        # only called when normal lookup fails; .get keeps a half-built module (copy, unpickle)
        # from recursing here for its own dicts
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            found = d.get(store)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[store]:
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__()) + list(self._parameters) + list(self._modules) \
            + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # -- traversal ----------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(qualified name, module) for self and every descendant, each shared module once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, prefix + ("." if prefix else "") + name,
                                               remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, child in self._modules.items():
            if child is not None and child not in seen:
                seen.add(child)
                yield name, child

    def children(self):
        for _, child in self.named_children():
            yield child

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in module.__dict__[store].items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(qualified name, parameter) pairs; a parameter shared by two modules (tied weights)
        is reported once, under its first name."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target):
        """The descendant named by a dotted path such as ``"encoder.0"`` ("" is self)."""
        module = self
        for part in target.split(".") if target else ():
            child = module._modules.get(part)
            if child is None:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = child
        return module

    def apply(self, fn):
        """Call fn(module) on every child (recursively), then on self; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got {mode!r}")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        _zero_grads(self.parameters(), set_to_none)

    # -- state dicts ----------------------------------------------------------------------------
    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer under its qualified name.
        Values share memory with the module; they are detached unless `keep_vars`."""
        if destination is None:
            destination = OrderedDict()
        persistent = ((k, v) for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set)
        for name, value in itertools.chain(self._parameters.items(), persistent):
            if value is not None:
                destination[prefix + name] = value if keep_vars else value.detach()
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination=destination, prefix=prefix + name + ".",
                                 keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True):
        """Copy values into the parameters and buffers (converting dtype and device). With
        `strict`, the keys must match state_dict()'s exactly; size mismatches always raise.
        Returns the (missing_keys, unexpected_keys) named tuple."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        expected = self.state_dict(keep_vars=True)
        missing = [k for k in expected if k not in state_dict]
        unexpected = [k for k in state_dict if k not in expected]
        errors = []
        with no_grad():
            for key, target in expected.items():
                if key not in state_dict:
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected '
                                  f'jitensor.Tensor from checkpoint but received {type(value)}')
                elif value.shape != target.shape:
                    errors.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {target.shape}.")
                else:
                    target.copy_(value)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # -- conversions --------------------------------------------------------------------------
    def _apply(self, fn):
        """Convert every parameter (in place, keeping its identity), gradient and buffer."""
        for module in self.modules():
            for p in module._parameters.values():
                if p is None:
                    continue
                new = fn(p.detach())
                if new._data is not p._data:
                    p.data = new  # keeps p itself: optimizers hold references to it
                if p.grad is not None:
                    p.grad = fn(p.grad)
            for name, b in module._buffers.items():
                if b is not None:
                    module._buffers[name] = fn(b)
        return self

    def to(self, *args, non_blocking=False, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``: moves every
        parameter and buffer; a dtype converts only the floating-point ones. Returns self."""
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired "
                            f"dtype={dtype}")
        return self._apply(lambda t: t.to(device=device,
                                          dtype=dtype if t.is_floating_point() else None))

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self.to("float32")

    def double(self):
        return self.to("float64")

    # -- repr ---------------------------------------------------------------------------------
    def extra_repr(self):
        """The text inside this module's parentheses; layers override it."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
