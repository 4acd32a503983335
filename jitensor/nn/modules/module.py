"""Module: the base class of layers and models, with torch.nn.Module's registration rules,
traversal, state dicts, hooks, mode switches, conversions and repr."""
import itertools
import warnings
from collections import OrderedDict, namedtuple
from typing import Any, TypeVar

from ...autograd import is_grad_enabled, no_grad
from ...autograd.function import Function
from ...tensor import Tensor, _parse_to
from ...utils.hooks import RemovableHandle
from ..parameter import Parameter

# hooks for every module (register_module_forward_hook, ...), as torch's
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
T_destination = TypeVar("T_destination", bound=dict[str, Any])

# a module's hook dicts, made in __init__ (and by __setstate__ for modules pickled without them)
_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
               "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_backward_pre_hooks",
               "_backward_hooks", "_state_dict_pre_hooks", "_state_dict_hooks",
               "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


def _register(hooks, hook, prepend=False, **flags):
    """Add `hook` to the dict `hooks` (first with `prepend`), its id to each dict of `flags`
    whose value is true; the handle removes it from all of them."""
    extra = [d for d, on in flags.values() if on]
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    for d in extra:
        d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook):
    """A forward pre-hook of every module, run before their own."""
    return _register(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook of every module, run before their own."""
    return _register(_global_forward_hooks, hook,
                     with_kwargs=(_global_forward_hooks_with_kwargs, with_kwargs),
                     always=(_global_forward_hooks_always_called, always_call))


def register_module_full_backward_pre_hook(hook):
    return _register(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    return _register(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    raise NotImplementedError("register_module_backward_hook (torch's deprecated non-full "
                              "backward hooks) is not supported by jitensor; use "
                              "register_module_full_backward_hook")


class BackwardHookFunction(Function):
    """The identity on a module's input or output tensors, whose backward passes their
    gradients through `hook` (which may replace them): how full backward hooks see them."""

    @staticmethod
    def forward(ctx, hook, *tensors):
        ctx.hook = hook
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        new = ctx.hook(grads)
        return (None,) + tuple(grads if new is None else new)


class _BackwardHook:
    """A module call's full backward hooks: the pre-hooks run when the gradients of its
    outputs arrive, the hooks when those of its inputs are computed (torch.utils.hooks'
    BackwardHook)."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs, self.input_index = 0, None

    @staticmethod
    def _wrap(args, hook):
        """`args` with its tensors passed through BackwardHookFunction; the tensors' positions
        (None when none requires grad: nothing is wrapped)."""
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (is_grad_enabled() and any(args[i].requires_grad for i in index)):
            return args, None
        new = list(args)
        for i, t in zip(index, BackwardHookFunction.apply(hook, *[args[i] for i in index]),
                        strict=True):
            new[i] = t
        return tuple(new), index

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        args, self.input_index = self._wrap(args, self._input_grads)
        return args

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        self.n_outputs = len(outs)
        outs, self.output_index = self._wrap(outs, self._output_grads)
        return outs[0] if single else outs

    @staticmethod
    def _spread(index, values, size):
        full = [None] * size
        for i, v in zip(index, values, strict=True):
            full[i] = v
        return tuple(full)

    def _input_grads(self, grads):
        if self.grad_outputs is None:
            return None
        res = self._spread(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got "
                                   f"{len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)

    def _output_grads(self, grads):
        self.grad_outputs = self._spread(self.output_index, grads, self.n_outputs)
        for hook in self.pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = new
        local = self.grad_outputs
        if self.input_index is None:  # no input requires grad: the hooks run now
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients.",
                          stacklevel=2)
            nothing = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, nothing, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and
                                            all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_index)


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

    dump_patches = False
    # with call_super_init, __init__ passes its arguments on to the next class of the MRO
    # (a module mixed with another class that takes them)
    call_super_init = False
    T_destination = T_destination

    def __init__(self, *args, **kwargs):
        if not self.call_super_init:
            if kwargs:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                                f"argument '{next(iter(kwargs))}'")
            if args:
                raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                                f"but {len(args) + 1} were given")
        # object.__setattr__: our own __setattr__ reads these dicts
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        for name in _HOOK_DICTS:
            object.__setattr__(self, name, OrderedDict())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or
                self._backward_pre_hooks or _global_forward_hooks or
                _global_forward_pre_hooks or _global_backward_hooks or
                _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        """__call__ with hooks, in torch's order: forward pre-hooks (global ones first),
        backward hooks' input side, forward, forward hooks, backward hooks' output side; the
        forward hooks registered with always_call run even when forward raises."""
        result, called = None, set()
        try:
            for hid, hook in (*_global_forward_pre_hooks.items(),
                              *self._forward_pre_hooks.items()):
                if hid in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError(f"forward pre-hook must return None or a tuple "
                                               f"of (new_args, new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
            backward = None
            hooks = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
            pre_hooks = [*_global_backward_pre_hooks.values(),
                         *self._backward_pre_hooks.values()]
            if hooks or pre_hooks:
                backward = _BackwardHook(self, hooks, pre_hooks)
                args = backward.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hid, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hid in self._forward_hooks_always_called or \
                        hid in _global_forward_hooks_always_called:
                    called.add(hid)
                if hid in self._forward_hooks_with_kwargs or \
                        hid in _global_forward_hooks_with_kwargs:
                    new = hook(self, args, kwargs, result)
                else:
                    new = hook(self, args, result)
                if new is not None:
                    result = new
            if backward is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(f"For backward hooks to be called, module output should be a "
                                  f"Tensor or a tuple of Tensors but received {type(result)}",
                                  stacklevel=2)
                else:
                    result = backward.setup_output_hook(result)
            return result
        except Exception:
            for hid, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hid in called or not (hid in self._forward_hooks_always_called or
                                         hid in _global_forward_hooks_always_called):
                    continue
                try:
                    if hid in self._forward_hooks_with_kwargs:
                        new = hook(self, args, kwargs, result)
                    else:
                        new = hook(self, args, result)
                    if new is not None:
                        result = new
                except Exception as e:
                    warnings.warn(f"module forward hook with ``always_call=True`` raised an "
                                  f"exception that was silenced as another error was raised in "
                                  f"forward: {e}", stacklevel=2)
            raise

    # -- hooks --------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (``hook(module, args, kwargs)`` with `with_kwargs`) before
        each forward; a result other than None replaces the arguments."""
        return _register(self._forward_pre_hooks, hook, prepend,
                         with_kwargs=(self._forward_pre_hooks_with_kwargs, with_kwargs))

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        `with_kwargs`) after each forward; a result other than None replaces the output."""
        return _register(self._forward_hooks, hook, prepend,
                         with_kwargs=(self._forward_hooks_with_kwargs, with_kwargs),
                         always=(self._forward_hooks_always_called, always_call))

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` when the gradients of the outputs are computed; a
        result other than None replaces them."""
        return _register(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` when the gradients of the inputs are
        computed; a result other than None replaces grad_input."""
        return _register(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """torch's deprecated form of register_full_backward_hook. torch calls it with the
        gradients of the inputs of the module's last autograd node; jitensor calls it as a full
        backward hook, with the gradients of the module's own inputs (which is what torch gives
        when the forward is one node taking the module's inputs)."""
        return _register(self._backward_hooks, hook)

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before this module's state_dict() is built."""
        return _register(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after this module's entries
        are added; it must return None (it may change state_dict in place)."""
        hook._from_public_api = True
        return _register(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        """As register_state_dict_post_hook, but a result other than None replaces the
        state dict (torch's older form)."""
        return _register(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its own entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """As register_load_state_dict_pre_hook; without `with_module` the hook is not passed
        the module."""
        if not with_module:
            plain = hook

            def hook(module, *args):
                return plain(*args)
        return _register(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after this module and its children loaded; it
        may change incompatible_keys' lists in place."""
        return _register(self._load_state_dict_post_hooks, hook)

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
            if not hasattr(module, part):
                raise AttributeError(f"{module._get_name()} has no attribute `{part}`")
            module = getattr(module, part)
            if not isinstance(module, Module):
                raise AttributeError(f"`{part}` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        """Put `module` at the dotted path `target`, whose parent must exist (with `strict`,
        the attribute too); an attribute there that is not a module raises."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The parameter named by a dotted path such as ``"encoder.0.weight"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer named by a dotted path such as ``"bn.running_mean"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        buffer = getattr(module, name)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return buffer

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
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination=destination, prefix=prefix + name + ".",
                                 keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {})  # (jitensor keeps no local metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries: parameters, persistent buffers and, when the class
        defines get_extra_state, its result under ``_extra_state``."""
        persistent = ((k, v) for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set)
        for name, value in itertools.chain(self._parameters.items(), persistent):
            if value is not None:
                destination[prefix + name] = value if keep_vars else value.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self):
        """Extra state for the state dict (any picklable object); define it, with
        set_extra_state, in a subclass that has state beyond its tensors."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        """Restore what get_extra_state returned, from load_state_dict."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values into the parameters and buffers (converting dtype and device); with
        `assign`, the state dict's tensors become them instead (as Parameters where the module
        had one, keeping its requires_grad). With `strict`, the keys must match state_dict()'s
        exactly; size mismatches always raise. Returns the (missing_keys, unexpected_keys)
        named tuple."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state_dict = OrderedDict(state_dict)  # a copy: pre-hooks may change it
        missing, unexpected, errors = [], [], []

        def load(module, local, prefix):
            module._load_from_state_dict(local, prefix, {"assign_to_params_buffers": assign},
                                         True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)},
                         child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")

        load(self, state_dict, "")
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

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Load this module's own parameters and persistent buffers from the entries of
        `state_dict` under `prefix`, after its load_state_dict pre-hooks."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs)
        persistent = ((k, v) for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set)
        own = {name: value for name, value in itertools.chain(self._parameters.items(),
                                                              persistent) if value is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        with no_grad():
            for name, target in own.items():
                key = prefix + name
                if key not in state_dict:
                    if strict:
                        missing_keys.append(key)
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    error_msgs.append(f'While copying the parameter named "{key}", expected '
                                      f'jitensor.Tensor from checkpoint but received '
                                      f'{type(value)}')
                elif value.shape != target.shape:
                    error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                      f"{value.shape} from checkpoint, the shape in current "
                                      f"model is {target.shape}.")
                elif assign:
                    if isinstance(target, Parameter) and not isinstance(value, Parameter):
                        value = Parameter(value, requires_grad=target.requires_grad)
                    elif isinstance(target, Parameter):
                        value.requires_grad_(target.requires_grad)
                    setattr(self, name, value)
                else:
                    target.copy_(value)
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    name = key[len(prefix):].split(".", 1)[0]
                    if name not in self._modules and name not in own:
                        unexpected_keys.append(key)

    # -- conversions --------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        """Convert every parameter (in place, keeping its identity), gradient and buffer (of
        this module only, without `recurse`)."""
        for module in self.modules() if recurse else (self,):
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

    def to(self, *args, non_blocking=False, memory_format=None, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``: moves every
        parameter and buffer; a dtype converts only the floating-point ones, and a
        `memory_format` (channels_last, ...) lays out the 4-D and 5-D ones, as torch's.
        Returns self."""
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            laid_out = memory_format is not None and t.dim() in (4, 5)
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None,
                        **({"memory_format": memory_format} if laid_out else {}))
        return self._apply(convert)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self.to("float32")

    def double(self):
        return self.to("float64")

    def half(self):
        """float16 floating-point parameters and buffers."""
        return self.to("float16")

    def bfloat16(self):
        """bfloat16 floating-point parameters and buffers."""
        return self.to("bfloat16")

    def type(self, dst_type):
        """Every parameter and buffer converted to `dst_type`, integer ones included."""
        return self._apply(lambda t: t.type(dst_type))

    def to_empty(self, *, device, recurse=True):
        """Every parameter and buffer replaced by uninitialized memory on `device`."""
        from ...creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        """Move every parameter, gradient and buffer into shared memory (Tensor.share_memory_),
        so that processes the module is sent to train the same weights. Returns self."""
        for p in self.parameters():
            p.share_memory_()
            if p.grad is not None:
                p.grad.share_memory_()
        for b in self.buffers():
            b.share_memory_()
        return self

    def _no_device(self, kind):
        raise RuntimeError(f"Module.{kind}: jitensor has no {kind} devices (only cpu and cuda)")

    def ipu(self, device=None):
        self._no_device("ipu")

    def xpu(self, device=None):
        self._no_device("xpu")

    def mtia(self, device=None):
        self._no_device("mtia")

    def compile(self, *args, **kwargs):
        """torch's Module.compile: compile this module's calls in place, with jitensor.compile's
        arguments (which run eagerly for now: nothing changes)."""
        from ...compiler import compile
        compile(self, *args, **kwargs)

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
