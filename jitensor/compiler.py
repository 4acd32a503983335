"""torch.compile's API: `jitensor.compile` and the `jitensor.compiler` namespace.

jitensor does not capture or fuse graphs yet: a compiled function or module runs its ops
eagerly, exactly as the uncompiled one does — what torch.compile(backend="eager") does — so a
script that compiles its model runs unchanged and gets eager jitensor's results. The arguments
are checked as torch checks them. A compiled module is torch's `OptimizedModule`: it wraps the
original as `_orig_mod` (so its state dict keys carry that prefix, as torch's do) and shares its
parameters, buffers and hooks."""
import functools

from .nn.modules.module import Module

__all__ = ["OptimizedModule", "allow_in_graph", "assume_constant_result", "compile",
           "cudagraph_mark_step_begin", "disable", "get_default_backend", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "list_backends", "reset",
           "set_default_backend"]

_BACKENDS = ("eager", "inductor", "jitensor")  # all run eagerly for now
_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_default_backend = ["inductor"]


class InvalidBackend(RuntimeError):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")


class OptimizedModule(Module):
    """A compiled module: calls run the original module (its hooks included)."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)


def list_backends(exclude_tags=("debug", "experimental")):
    return sorted(_BACKENDS)


def get_default_backend():
    return _default_backend[0]


def set_default_backend(backend):
    _check_backend(backend)
    _default_backend[0] = backend


def _check_backend(backend):
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise InvalidBackend(backend)
    if not isinstance(backend, str) and not callable(backend):
        raise InvalidBackend(backend)


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None,
            name=None, disable=False, recompile_limit=None, isolate_recompiles=False,
            shapes_spec=None):
    """torch.compile: `model` (a function or an nn.Module) to run compiled — for now eagerly,
    with the same results; without `model`, a decorator."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(_MODES)}")
    _check_backend(_default_backend[0] if backend is None else backend)
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, name=name, disable=disable,
                                 recompile_limit=recompile_limit,
                                 isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
    if not callable(model):
        raise RuntimeError(f"compile(): argument 'model' must be a function or a Module, not "
                           f"{type(model).__name__}")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)
    compiled._torchdynamo_orig_callable = model
    return compiled


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: `fn` runs eagerly, as everything does in jitensor."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    return fn


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def is_compiling():
    """False: jitensor never traces, so code always runs as written."""
    return False


is_dynamo_compiling = is_compiling


def is_exporting():
    return False


def reset():
    """torch.compiler.reset: jitensor keeps no compiled graphs to clear (its kernels live in
    the on-disk kernel cache, which stays valid)."""


def cudagraph_mark_step_begin():
    """jitensor records no CUDA graphs, so there is no step to mark."""
