"""torch.jit's names. jitensor has no TorchScript compiler: `script` and `trace` return what
they are given, which runs eagerly with the same results — what a scripted function computes
— and the decorators TorchScript reads (`ignore`, `unused`, `export`, `script_method`) leave
functions as they are. TorchScript files cannot be written or read (`save`, `load` raise)."""
import builtins
import contextlib
import functools
import types
import typing

from .nn.modules.module import Module

__all__ = ["Error", "Final", "Future", "RecursiveScriptModule", "ScriptFunction", "ScriptModule",
           "ScriptWarning", "TopLevelTracedModule", "TracedModule", "TracerWarning",
           "TracingCheckError", "annotate", "enable_onednn_fusion", "export", "fork", "freeze",
           "fuser", "ignore", "interface", "is_scripting", "is_tracing", "isinstance", "load",
           "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution", "save",
           "script", "script_if_tracing", "script_method", "set_fusion_strategy",
           "strict_fusion", "trace", "trace_module", "unused", "wait"]

Final = typing.Final
# the classes of scripted and traced models: a plain Module here (script and trace return it)
ScriptModule = RecursiveScriptModule = TracedModule = TopLevelTracedModule = Module


class Error(Exception):
    """torch.jit.Error: what a TorchScript `raise` raises."""


class ScriptWarning(Warning):
    pass


class TracerWarning(Warning):
    """What a trace warns of (programs filter it: `warnings.filterwarnings("ignore",
    category=torch.jit.TracerWarning)`); jitensor's trace never warns."""


class TracingCheckError(Exception):
    pass


def _script_function_check(obj):
    if not callable(obj):
        raise RuntimeError(f"jitensor.jit.script: cannot script {type(obj).__name__} objects; "
                           f"pass a function or a Module")


class ScriptFunction:
    """What `script` returns for a function: the function, run eagerly."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Modules are returned as they are; functions as a ScriptFunction that runs them."""
    _script_function_check(obj)
    return obj if builtins.isinstance(obj, (Module, type)) else ScriptFunction(obj)


def trace(func, example_inputs=None, *args, **kwargs):
    """The function or module itself: it runs eagerly, so, unlike a trace, data-dependent
    control flow keeps following the data."""
    _script_function_check(func)
    return func


def trace_module(mod, inputs, *args, **kwargs):
    return mod


def script_if_tracing(fn):
    return fn


def _identity_decorator(fn=None, **kwargs):
    if fn is None:
        return lambda f: f
    return fn


ignore = unused = _identity_decorator


def export(fn):
    return fn


def script_method(fn):
    return fn


def interface(obj):
    return obj


def annotate(the_type, the_value):
    return the_value


def is_scripting():
    """False: code always runs as Python in jitensor."""
    return False


def is_tracing():
    return False


class Future:
    """torch.jit.Future of `fork`: the call has already run (jitensor runs it at once)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def done(self):
        return True


def fork(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` (at once, in this thread) and return its Future."""
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """The model itself: freezing inlines a scripted model's parameters, and jitensor runs it
    eagerly with the same results. torch's check that it is in eval mode is kept."""
    if not builtins.isinstance(mod, Module):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """`freeze`: the model itself (see there); torch's graph rewrites have no counterpart."""
    return freeze(mod)


_settings = {"onednn_fusion": False, "fusion_strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled):
    """Recorded only: jitensor's kernels are Numba's, and oneDNN's fuser is not among them."""
    _settings["onednn_fusion"] = bool(enabled)


def onednn_fusion_enabled():
    return _settings["onednn_fusion"]


def set_fusion_strategy(strategy):
    """Record TorchScript's fusion strategy and return the previous one (no TorchScript
    fuser runs here)."""
    previous, _settings["fusion_strategy"] = _settings["fusion_strategy"], list(strategy)
    return previous


@contextlib.contextmanager
def fuser(name):
    """TorchScript's fuser choice ('fuser0'/'fuser1'/'fuser2'/'fuser3'/'none'): eager code
    runs the same under any."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")
    yield


@contextlib.contextmanager
def optimized_execution(should_optimize):
    yield


class strict_fusion:
    """A TorchScript assertion that a region fused; nothing is scripted here, so nothing
    fails it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def isinstance(obj, target_type):
    """torch.jit.isinstance: a check of containers' element types too (list[int],
    dict[str, Tensor], tuple[int, str], Optional[...])."""
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union or origin is types.UnionType:  # (Optional[int], int | None)
        return any(isinstance(obj, a) for a in args)
    if not builtins.isinstance(obj, origin):
        return False
    if origin is list:
        return all(isinstance(v, args[0]) for v in obj) if args else True
    if origin is dict:
        return all(isinstance(k, args[0]) and isinstance(v, args[1])
                   for k, v in obj.items()) if args else True
    if origin is tuple:
        return len(obj) == len(args) and all(map(isinstance, obj, args)) if args else True
    return True


def save(m, f, _extra_files=None):
    raise NotImplementedError("jitensor.jit.save: TorchScript archives cannot be written by "
                              "jitensor (it has no TorchScript compiler); save the state dict "
                              "with jitensor.save(model.state_dict(), f)")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise NotImplementedError("jitensor.jit.load: TorchScript archives cannot be read by "
                              "jitensor (it has no TorchScript interpreter); load a state dict "
                              "saved with torch.save / jitensor.save instead")
