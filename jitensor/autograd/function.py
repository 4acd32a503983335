"""`Function`: torch.autograd.Function, an op whose forward and backward the user writes.

`MyFn.apply(*args)` runs `MyFn.forward` without recording, then records one node of class
`MyFnBackward`, which is also the `ctx` both methods receive (as in torch, where
`y.grad_fn` is the ctx): the engine calls its `rule`, which calls `MyFn.backward(ctx, *grads)`
and pairs the gradients it returns with the inputs."""
import functools

from ..tensor import Tensor, _AutogradMeta
from . import forward_ad, grad_mode, graph
from .versions import bump, counter


class FunctionCtx:
    """What forward hands backward: saved tensors, marks, and any attribute set on it."""

    to_save = ()
    dirty_tensors = non_differentiable = frozenset()
    materialize_grads = True
    to_save_for_forward = ()
    for_forward = None  # while jvp runs: what save_for_forward kept, read as saved_tensors

    def save_for_backward(self, *tensors):
        self.to_save = tensors  # (checked when the Function records, as torch's)

    def save_for_forward(self, *tensors):
        self.to_save_for_forward = tensors

    @property
    def saved_tensors(self):
        return self.for_forward or ()

    def mark_dirty(self, *tensors):
        self.dirty_tensors = {id(t): t for t in tensors}

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = {id(t) for t in tensors}

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardCFunction(graph.Node, FunctionCtx):
    """The recorded node of a Function (and its ctx). `args`: detached aliases of the tensor
    inputs, which `edges` is keyed by; `positions`: where each sits among forward's args."""

    _forward_cls = None
    _saved = None  # [(tensor or None, output number or None)] once forward saved
    _freed = False

    @property
    def uses_inputs(self):  # read by the engine: a node that saved nothing is never freed
        return bool(self._saved)

    uses_result = False

    @property
    def saved_tensors(self):
        if self.for_forward is not None:  # (in jvp)
            return self.for_forward
        if self._saved is None:
            return ()
        if self.args is None:
            raise RuntimeError(graph._FREED)
        graph._check_versions(self)
        out = []
        for t, nr, packed in self._saved:
            if packed is not None:  # (saved_tensors_hooks)
                t = packed[1](packed[0])
            elif nr is not None:  # an output of this node: saved without its history
                t = graph._alias(t)
                t._meta = _AutogradMeta(True, None, self, nr)
            out.append(t)
        return tuple(out)

    def rule(self, grad, result, *inputs):
        grads = grad if self.n_outputs > 1 else (grad,)
        if self.materialize_grads:
            grads = tuple(_zeros(*spec) if g is None and spec is not None else g
                          for g, spec in zip(grads, self.out_specs, strict=True))
        got = self._forward_cls.backward(self, *grads)
        got = got if isinstance(got, tuple) else (got,)
        expected = self.n_args
        if len(got) < expected or any(g is not None for g in got[expected:]):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {expected}, got {len(got)})")
        at = dict(zip(self.positions, inputs, strict=True))
        for i, g in enumerate(got[:expected]):
            if g is None:
                continue
            t = at.get(i)
            if t is None:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   f"input was not a Variable")
            if g.shape != t.shape and not _expandable(t.shape, g.shape):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at "
                                   f"index {i} - got {list(g.shape)} but expected shape "
                                   f"compatible with {list(t.shape)}")
            yield t, g


def _zeros(shape, dtype, device):
    from ..creation import zeros
    return zeros(shape, dtype=dtype, device=device)


def _expandable(shape, to):
    """Whether a tensor of `shape` broadcasts to `to` (the gradient then sums back to it)."""
    if len(shape) > len(to):
        return False
    return all(n == m or n == 1 for n, m in zip(shape[::-1], to[::-1], strict=False))


class Function(FunctionCtx):
    """Subclass with static `forward(ctx, *args)` (or `forward(*args)` and
    `setup_context(ctx, inputs, output)`) and `backward(ctx, *grads)`, then call `apply`."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls})

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply() takes positional arguments only (as "
                            f"torch's)")
        record = grad_mode.is_grad_enabled() and any(
            isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx = cls._backward_cls() if record else FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        separate = cls.setup_context is not Function.setup_context
        dual = graph.dual[0] and forward_ad.carries(args, None)
        with grad_mode.no_grad(), forward_ad.suspended():
            output = cls.forward(*args) if separate else cls.forward(ctx, *args)
            if separate:
                cls.setup_context(ctx, args, output)
        if record:
            output = _record(ctx, args, output)
        if dual:
            forward_ad.function_tangents(cls.jvp, ctx, args, output)
        return output


def _record(node, args, output):
    """Link the outputs of `node`'s forward into the graph as its outputs; returns them."""
    dirty = node.dirty_tensors or {}
    outs = output if isinstance(output, tuple) else (output,)
    positions, inputs, edges = [], [], {}
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            alias = graph._alias(a)
            positions.append(i)
            inputs.append(alias)
            m = a._meta
            if m is not None and m.requires_grad:
                if graph._stale(m.grad_fn):
                    graph.retake(a)
                edges[id(alias)] = a if m.grad_fn is None else (m.grad_fn, m.output_nr)
    node.positions, node.n_args = tuple(positions), len(args)
    node.args, node.kwargs, node.edges, node.n_outputs = tuple(inputs), {}, edges, len(outs)
    node.result, node.retained, node.taken, node.versions = None, None, None, []
    node.hooks = None
    returned = {id(o) for o in outs}
    for t in dirty.values():
        if id(t) not in returned:
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must "
                               "all be outputs of the Function.")
    ids = {id(a) for a in args if isinstance(a, Tensor)}
    new, specs = [], []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            new.append(o)
            specs.append(None)
            continue
        specs.append((o.shape, o._dtype, o._device))
        differentiable = o._dtype.category > 1 and id(o) not in node.non_differentiable
        if id(o) in dirty:
            if o._meta is not None and o._meta.requires_grad and o._meta.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            bump(o._data)
            if differentiable:
                made = graph._alias(o)
                made._meta = _AutogradMeta(True, None, node, nr)
                from .wrap import _rebase
                _rebase(o, made)
        else:
            if id(o) in ids:  # an input returned as it is: torch returns a view of it
                o = graph._alias(o)
            if differentiable:
                o._meta = _AutogradMeta(True, None, node, nr)
        new.append(o)
    node.out_specs = specs
    _save(node, new)
    return tuple(new) if isinstance(output, tuple) else new[0]


def _save(node, outs):
    """Keep what forward saved: an output without its history (else it would hold the node
    that holds it), through saved_tensors_hooks' pack when some are active."""
    if not node.to_save:
        return
    saved, versions = [], []
    nrs = {id(o): nr for nr, o in enumerate(outs) if isinstance(o, Tensor)}
    hooks = graph.saved_tensor_hooks()
    for i, t in enumerate(node.to_save):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is "
                            f"of type {type(t).__name__}")
        if t is None:
            saved.append((None, None, None))
            continue
        nr = nrs.get(id(t))
        if hooks is not None:
            with grad_mode.no_grad():  # (what the hook computes is not part of the graph)
                packed = hooks[0](t)
            saved.append((None, None, (packed, hooks[1])))
            continue
        c = counter(t._data)
        versions.append((c, c.count))
        saved.append((graph._alias(t), nr, None) if nr is not None else (t, None, None))
    node._saved, node.versions, node.to_save = saved, versions, ()


def once_differentiable(fn):
    """Decorate a Function's backward that is not itself differentiable: it runs without
    recording, and differentiating its result (create_graph) raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.is_grad_enabled() or not any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        # each an alias that requires grad, so that _DelayedError records (torch's way)
        grads = [o.detach().requires_grad_() for o in outputs if isinstance(o, Tensor)]
        delayed = iter(_DelayedError.apply(*grads) if grads else ())
        wrapped = tuple(next(delayed) if isinstance(o, Tensor) else o for o in outputs)
        return wrapped[0] if single else wrapped
    return wrapper


class _DelayedError(Function):
    """The identity, whose backward raises: what once_differentiable's results carry."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


Function._backward_cls = type("FunctionBackward", (BackwardCFunction,), {"_forward_cls": Function})


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        self.inplace = inplace


class NestedIOFunction(Function):
    def __init__(self):
        raise NotImplementedError("NestedIOFunction (legacy autograd functions) is not "
                                  "supported by jitensor; use a static-method Function")
