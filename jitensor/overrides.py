"""torch.overrides: the `__torch_function__` protocol's helpers, for user functions that let
tensor-likes (objects whose type defines `__torch_function__`) take over their calls.

jitensor's own Tensor defines no `__torch_function__` and its ops do not dispatch to one, so a
jitensor tensor is never an override: has_torch_function is False for jitensor tensors and
plain values, and True when a tensor-like object takes part, whose `__torch_function__`
(subclasses before their bases, then left to right) handle_torch_function calls."""
import functools
import inspect
import warnings

import jitensor as _jt

from .tensor import Tensor

__all__ = ["get_ignored_functions", "get_overridable_functions", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "is_tensor_method_or_property", "resolve_name",
           "wrap_torch_function"]


def _overrides(t):
    """Whether t's type defines a `__torch_function__` of its own (jitensor's Tensor has
    none)."""
    return getattr(type(t), "__torch_function__", None) is not None


def _overloaded_args(relevant_args):
    """One argument per overriding type, in order, each subclass placed before its base."""
    out, seen = [], set()
    for arg in relevant_args:
        kind = type(arg)
        if kind in seen or not _overrides(arg):
            continue
        seen.add(kind)
        at = len(out)
        for i, other in enumerate(out):
            if issubclass(kind, type(other)):
                at = i
                break
        out.insert(at, arg)
    return out


def has_torch_function(relevant_args):
    """Whether any of `relevant_args` is a tensor-like that overrides torch functions."""
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(input):
    """has_torch_function((input,))."""
    return _overrides(input)


def has_torch_function_variadic(*args):
    """has_torch_function(args)."""
    return any(_overrides(a) for a in args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the `__torch_function__(public_api, types, args, kwargs)` of the overriding
    arguments in turn; the first result other than NotImplemented is returned, else a
    TypeError."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated "
                          "and will be an error in future, please define it as a classmethod.",
                          DeprecationWarning, stacklevel=2)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")


def is_tensor_like(inp):
    """A jitensor Tensor, or an object whose type defines `__torch_function__`."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def wrap_torch_function(dispatcher):
    """Decorator: the function hands its call to handle_torch_function when the arguments
    `dispatcher(*args, **kwargs)` names include a tensor-like that overrides it."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def _namespaces():
    return ((_jt, "torch"), (_jt.nn.functional, "torch.nn.functional"),
            (_jt.linalg, "torch.linalg"), (_jt.special, "torch.special"), (Tensor, "torch.Tensor"))


def get_ignored_functions():
    """Public callables that take no tensor arguments to dispatch on (creation functions,
    settings, ...): never overridable."""
    ignored = set()
    for name in ("arange", "empty", "eye", "full", "linspace", "logspace", "ones", "rand",
                 "randint", "randn", "randperm", "range", "tensor", "zeros", "as_tensor",
                 "from_numpy", "frombuffer", "get_default_dtype", "set_default_dtype",
                 "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
                 "is_grad_enabled", "set_grad_enabled", "get_num_threads", "set_num_threads",
                 "promote_types", "result_type", "can_cast", "set_printoptions",
                 "hamming_window", "hann_window", "bartlett_window", "blackman_window",
                 "kaiser_window", "tril_indices", "triu_indices"):
        fn = getattr(_jt, name, None)
        if fn is not None:
            ignored.add(fn)
    return ignored


def get_overridable_functions():
    """{namespace: [its public functions that take tensors]} for the top level, nn.functional,
    linalg, special and Tensor's methods."""
    ignored = get_ignored_functions()
    out = {}
    for space, _ in _namespaces():
        names = getattr(space, "__all__", None) or dir(space)
        fns = []
        for name in names:
            if name.startswith("_") and space is not Tensor:
                continue
            fn = getattr(space, name, None)
            if callable(fn) and not inspect.isclass(fn) and fn not in ignored:
                fns.append(fn)
        out[space] = fns
    return out


def resolve_name(f):
    """'torch.add', 'torch.Tensor.add', ... for an overridable function, else None."""
    for space, prefix in _namespaces():
        for name in (getattr(space, "__all__", None) or dir(space)):
            try:
                if getattr(space, name) is f:
                    return f"{prefix}.{name}"
            except AttributeError:
                continue
    return None


def is_tensor_method_or_property(func):
    """Whether `func` is one of Tensor's methods or a property getter."""
    return any(getattr(Tensor, n, None) is func for n in dir(Tensor)) or \
        getattr(func, "__name__", None) == "__get__"
