"""torch.jit's names. jitensor has no TorchScript compiler: `script` and `trace` return what
they are given, which runs eagerly with the same results — what a scripted function computes
— and the decorators TorchScript reads (`ignore`, `unused`, `export`, `script_method`) leave
functions as they are. TorchScript files cannot be written or read (`save`, `load` raise)."""
import functools
import typing

from .nn.modules.module import Module

__all__ = ["Final", "Future", "ScriptFunction", "ScriptModule", "annotate", "export", "fork",
           "ignore", "interface", "is_scripting", "is_tracing", "load", "save", "script",
           "script_if_tracing", "script_method", "trace", "trace_module", "unused", "wait"]

Final = typing.Final
ScriptModule = Module  # a base class of old TorchScript models: a plain Module here


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
    return obj if isinstance(obj, (Module, type)) else ScriptFunction(obj)


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


def save(m, f, _extra_files=None):
    raise NotImplementedError("jitensor.jit.save: TorchScript archives cannot be written by "
                              "jitensor (it has no TorchScript compiler); save the state dict "
                              "with jitensor.save(model.state_dict(), f)")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise NotImplementedError("jitensor.jit.load: TorchScript archives cannot be read by "
                              "jitensor (it has no TorchScript interpreter); load a state dict "
                              "saved with torch.save / jitensor.save instead")
