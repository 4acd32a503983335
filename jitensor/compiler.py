"""torch.compile's API: `jitensor.compile` and the `jitensor.compiler` namespace.

A compiled function or module runs its Python as written, every call, with elementwise fusion
on (jitensor/fusion.py): chains of elementwise ops on float tensors become one generated,
disk-cached kernel each, forward and backward, with eager's values. jitensor captures no graph,
so nothing is specialized to a call's shapes or values (torch's `dynamic=True`), nothing
recompiles when they change, and no Python is ever skipped: there are no graph breaks, and
`fullgraph=True` has none to refuse. Backend "eager" runs without fusion, as torch's does.

The arguments are checked as torch checks them. A compiled module is torch's `OptimizedModule`:
it wraps the original as `_orig_mod` (so its state dict keys carry that prefix, as torch's do)
and shares its parameters, buffers and hooks."""
import functools

from . import fusion
from .nn.modules.module import Module

__all__ = ["OptimizedModule", "allow_in_graph", "assume_constant_result", "compile",
           "cudagraph_mark_step_begin", "disable", "get_default_backend", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "list_backends", "reset",
           "set_default_backend"]

_BACKENDS = ("eager", "inductor", "jitensor")  # inductor: jitensor's fusion, as "jitensor"
_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_default_backend = ["inductor"]


class InvalidBackend(RuntimeError):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")


class OptimizedModule(Module):
    """A compiled module: calls run the original module (its hooks included), fused unless
    `fuse` is False (backend "eager")."""

    def __init__(self, mod, fuse=True):
        super().__init__()
        self._orig_mod = mod
        self._fuse = fuse

    def forward(self, *args, **kwargs):
        if not self._fuse:
            return self._orig_mod(*args, **kwargs)
        with fusion.region():
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
    """torch.compile: `model` (a function or an nn.Module) to run with its elementwise ops
    fused (see the module doc); without `model`, a decorator."""
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
    fuse = (_default_backend[0] if backend is None else backend) != "eager"
    if isinstance(model, Module):
        return OptimizedModule(model, fuse)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        if not fuse:
            return model(*args, **kwargs)
        with fusion.region():
            return model(*args, **kwargs)
    compiled._torchdynamo_orig_callable = model
    return compiled


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: `fn` runs eagerly, without fusion, even inside a compiled
    call."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def eager(*args, **kwargs):
        with fusion.suspended():
            return fn(*args, **kwargs)
    return eager


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def is_compiling():
    """False: jitensor never traces, so code always runs as written (fused inside a compiled
    call, with the same values)."""
    return False


is_dynamo_compiling = is_compiling


def is_exporting():
    return False


def reset():
    """torch.compiler.reset: jitensor keeps no compiled graphs to clear (its fused kernels live
    in the on-disk kernel cache, which stays valid)."""


def cudagraph_mark_step_begin():
    """jitensor records no CUDA graphs, so there is no step to mark."""
