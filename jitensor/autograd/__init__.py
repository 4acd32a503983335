"""Reverse-mode automatic differentiation with torch's API: `backward`, `grad`, `no_grad`,
`enable_grad`, `set_grad_enabled`, `inference_mode`, `gradcheck`, `Function` (function.py) and
`detect_anomaly` (anomaly_mode.py). How ops are recorded: graph.py and wrap.py; the derivative
of each op: derivatives/, a file per ops/ module."""
from ..creation import allocate
from ..kernels.registry import backend
from ..profiler import ProfilerActivity
from ..tensor import Tensor
from . import (  # noqa: F401
    anomaly_mode,
    forward_ad,
    function,
    functional,
    grad_mode,
    graph,
    profiler,
)
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    is_view_replay_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .profiler import kineto_available
from .variable import Variable

# torch.autograd re-exports the protocol helpers of torch.overrides; loaded on first use
_OVERRIDES = ("handle_torch_function", "has_torch_function")

__all__ = ["Function", "Variable", "backward", "detect_anomaly", "enable_grad", "grad",
           "gradcheck", "gradgradcheck", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "is_multithreading_enabled", "is_tensor_like",
           "is_view_replay_enabled", "no_grad", "set_detect_anomaly", "set_grad_enabled",
           "set_multithreading_enabled"]
__all__ += ["ProfilerActivity", "kineto_available"]  # (torch's, from torch.profiler)


def is_tensor_like(inp):
    """Whether `inp` is a Tensor (jitensor has no __torch_function__ tensor-likes)."""
    return isinstance(inp, Tensor)


def _as_list(x):
    return [x] if isinstance(x, Tensor) or x is None else list(x)


def _roots(outputs, grad_outputs, what):
    """(edge, gradient) for each output, checking what torch checks."""
    outputs = _as_list(outputs)
    grads = _as_list(grad_outputs) if grad_outputs is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"{what}: got {len(grads)} gradients for {len(outputs)} outputs; pass "
                           f"one gradient (or None) per output")
    roots = []
    for i, (out, g) in enumerate(zip(outputs, grads, strict=False)):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs "
                                   f"(output {i} has shape {tuple(out.shape)}); pass gradient=")
            if out._dtype.is_complex:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"(output {i} is {out._dtype}); pass gradient=, or take a "
                                   f"real loss such as .abs() or .real")
            g = allocate(out._data.shape, out._dtype, out._device)  # ones (new_ones: 2x slower)
            backend(out._device).fill(g._data, 1)
        elif not isinstance(g, Tensor):
            g = out.new_full(out.shape, g)
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} "
                               f"and output[{i}] has a shape of {out.shape}.")
        roots.append((graph._edge(out), g))
    return roots


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of `tensors` into the `.grad` of the leaves they depend on
    (only into `inputs`, when given)."""
    roots = _roots(tensors, grad_tensors, "backward")
    retain = create_graph if retain_graph is None else retain_graph
    state = grad_mode._state
    prev, state.enabled = state.enabled, bool(create_graph)
    try:
        if inputs is None:
            graph.run(roots, retain)
            return
        inputs = _as_list(inputs)
        found = {graph.capture_key(t): None for t in inputs}
        graph.run(roots, retain, capture=found)
        for t in inputs:
            g = found[graph.capture_key(t)]
            if g is not None:
                t.grad = g if t.grad is None else t.grad + g
    finally:
        state.enabled = prev


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """The gradients of `outputs` with respect to each of `inputs`, as a tuple; no `.grad`
    changes."""
    inputs = _as_list(inputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require "
                               f"grad")
    roots = _roots(outputs, grad_outputs, "grad")
    found = {graph.capture_key(t): None for t in inputs}
    with set_grad_enabled(create_graph):
        graph.run(roots, create_graph if retain_graph is None else retain_graph, capture=found)
    result = []
    for i, t in enumerate(inputs):
        g = found[graph.capture_key(t)]
        if g is None and not (allow_unused or materialize_grads):
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) appears to not "
                               f"have been used in the graph. Set allow_unused=True if this is "
                               f"the desired behavior.")
        result.append(t.new_zeros(t.shape) if g is None and materialize_grads else g)
    return tuple(result)


def __getattr__(name):
    if name in _OVERRIDES:
        import importlib
        return getattr(importlib.import_module("jitensor.overrides"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
