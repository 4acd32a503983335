"""Forward-mode automatic differentiation, torch.autograd.forward_ad's API: within a
`dual_level`, `make_dual(x, t)` gives a tensor carrying the tangent `t`, every differentiable op
run on such tensors gives its floating outputs the tangent J·t (the Jacobian-vector product),
and `unpack_dual(y)` reads it.

Tangents come from the derivative rules of reverse mode (derivatives/), so every op with a
rule has a forward derivative too, computed the cheapest way its kind allows (`Node.tangent`):
- ops linear in their tensor argument (views, reshapes, sums, indexing, cat, ...): the op
  itself applied to the tangent; products of two tensors (matmul and its kin, linear and
  convolution with their bias): the product rule, op(tx, y) + op(x, ty) (+ tb);
- ops whose Jacobian is symmetric (the elementwise ops, whose Jacobian is diagonal, and
  softmax): the rule applied to an input's tangent in place of the gradient gives J·t;
  log_softmax has its formula;
- any other op: its rule is linear in the gradient, g ↦ Jᵀg, and J·t is the gradient with
  respect to g of the sum of (Jᵀg)·t: one backward pass through the rule's own graph (the rules
  are built from recorded public ops, which is what makes double backward work).

Tangents are computed with the tangents' own forward propagation off (one level, as torch's
"Nested forward mode AD is not supported"), and recorded for reverse mode as any op is, so
a tangent is differentiable where grad mode is on. Each entered level keeps the autograd
records of the tensors it gave tangents and clears them on exit.

Left as torch does it differently: an in-place write of a dual value into a view of a tensor
that has no tangent gives the view a tangent, but not its base (jitensor tracks a view's base
only for tensors that require grad)."""
import threading
import weakref
from collections import namedtuple

from ..tensor import Tensor, _AutogradMeta
from . import grad_mode, graph
from .graph import _alias, needs_grad, outputs, record

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

active = graph.dual  # [a level is entered]: the one check on every differentiable op's path
_level = [-1]
_holders = weakref.WeakSet()  # the autograd records given a tangent at the current level


class _Suspended(threading.local):
    on = False  # computing a tangent: ops run as if no level were entered


_suspended = _Suspended()


def enter_dual_level():
    """Enter a new forward AD level (returned), within which dual tensors can be made."""
    if _level[0] >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _level[0] = 0
    active[0] = True
    return 0


def exit_dual_level(*, level=None):
    """Exit the level (every tangent made within it is cleared)."""
    level = _level[0] if level is None else level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _level[0]:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for meta in tuple(_holders):
        meta.fw_grad = None
    _holders.clear()
    _level[0] = -1
    active[0] = False


class dual_level:
    """Context manager (and decorator) that enters a forward AD level on entry and exits it on
    exit: tangents made inside are gone after."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapped


def _check_level(level, fn):
    if _level[0] < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level is not None and level != _level[0]:
        raise RuntimeError(f"Invalid level given to {fn}")


def _check_floating(what, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"make_dual(): expected {what} to be a Tensor, got "
                        f"{type(t).__name__}")
    if not t.dtype.is_floating_point:
        raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")


def tangent_of(t):
    m = t._meta
    return None if m is None else m.fw_grad


def _set_tangent(t, tangent):
    meta = t._autograd()
    meta.fw_grad = tangent
    _holders.add(meta)


def check_size(tensor, tangent):
    """torch's error for a tangent whose shape is not its primal's (make_dual's, func.jvp's)."""
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` carrying `tangent` (same shape, floating) as its forward gradient;
    grad still flows back to `tensor` through it."""
    _check_level(level, "_make_dual")
    _check_floating("primal", tensor)
    _check_floating("tangent", tangent)
    check_size(tensor, tangent)
    if tangent.device != tensor.device:
        raise RuntimeError(f"make_dual(): the tangent is on {tangent.device} but the primal on "
                           f"{tensor.device}; move the tangent to the primal's device")
    if tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {_level[0]} is not supported.")
    if tangent.stride() != tensor.stride():  # (torch's tangent has its primal's layout)
        from ..creation import empty_strided
        tangent = empty_strided(tensor.shape, tensor.stride(), dtype=tangent.dtype,
                                device=tangent.device).copy_(tangent)
    dual = tensor.view(tensor.shape)
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): a view of `tensor` without its tangent, and the tangent (None when it
    has none, and outside any level)."""
    if level is not None and level != _level[0]:
        raise RuntimeError("Invalid level given to _unpack_dual")
    tangent = tangent_of(tensor) if isinstance(tensor, Tensor) else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with suspended():
        primal = tensor.view(tensor.shape)
    return UnpackedDualTensor(primal, tangent)


# -- propagation ----------------------------------------------------------------------------------
def carries(args, kwargs):
    """Whether a call with these arguments has tangents to propagate (a level is active)."""
    if _suspended.on:
        return False
    for a in args:
        if isinstance(a, Tensor):
            if a._meta is not None and a._meta.fw_grad is not None:
                return True
        elif a.__class__ is list or a.__class__ is tuple:
            for b in a:
                if isinstance(b, Tensor) and tangent_of(b) is not None:
                    return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, Tensor) and tangent_of(a) is not None:
                return True
    return False


def run(op, cls, fn, args, kwargs):
    """`op` (the recording form of `fn`, whose rule class is `cls`) called with dual inputs:
    its result, each floating output given its tangent."""
    if kwargs and kwargs.get("out") is not None:
        raise NotImplementedError(f"Trying to use forward AD with {fn.__name__} with out=, "
                                  f"which does not support it; call it without out=")
    with suspended():
        result = record(cls, fn, args, kwargs) if grad_mode._state.enabled and \
            needs_grad(args, kwargs) else fn(*args, **kwargs)
        outs = outputs(result)
        if any(o is a for o in outs for a in _tensors(args, kwargs)):
            return result  # an input itself came back (`contiguous` of a contiguous one)
        if any(o._dtype.is_floating_point for o in outs):
            tangents = _tangents(op, cls, args, kwargs, result, outs)
            for o, t in zip(outs, tangents, strict=True):
                if t is not None and o._dtype.is_floating_point:
                    _set_tangent(o, t)
            node = outs[0]._meta.grad_fn if outs[0]._meta is not None else None
            if node is not None and node.result is not None:
                # what the node saved of its result carries the tangents too: a backward pass
                # within the level then gives gradients their tangents (Hessian-vector products)
                saved = outputs(node.result)
                for o, t in zip(saved, tangents, strict=True):
                    if t is not None and o._dtype.is_floating_point:
                        _set_tangent(o, t)
    return result


def written(self, result):
    """`self` was just written with `result`'s values: it takes result's tangent (in its own
    tangent's memory where it has one, so views of that tangent follow)."""
    new = tangent_of(result)
    old = tangent_of(self)
    if new is None and old is None:
        return
    with suspended():
        if new is None:
            old.zero_()
        elif old is not None and old.dtype == new.dtype:
            old.copy_(new)
        else:
            _set_tangent(self, new.to(self.dtype) if new.dtype != self.dtype else new)


def viewed(self, view, args, kwargs):
    """`self` just became the view `view(self, *args)` in place: its tangent follows."""
    tangent = tangent_of(self)
    if tangent is not None:
        with suspended():
            _set_tangent(self, view(tangent, *args, **kwargs))


class suspended:
    """Within: ops run as if no level were entered (what computes tangents, and the forward of
    a custom Function)."""

    def __enter__(self):
        self.was, _suspended.on = _suspended.on, True

    def __exit__(self, *exc):
        _suspended.on = self.was


def function_tangents(jvp, ctx, args, output):
    """Give the outputs of a custom Function called with dual `args` the tangents its `jvp`
    returns (one per output, given one tangent per input: zeros for a tensor without one, None
    for other arguments)."""
    tangents = [(tangent_of(a) if tangent_of(a) is not None else _zeros_for(a))
                if isinstance(a, Tensor) else None for a in args]
    with suspended():
        ctx.for_forward = ctx.to_save_for_forward
        try:
            got = jvp(ctx, *tangents)
        finally:
            ctx.for_forward = None
        outs = output if isinstance(output, tuple) else (output,)
        got = got if isinstance(got, tuple) else (got,)
        if len(got) != len(outs):
            raise RuntimeError(f"jvp returned {len(got)} tangents for {len(outs)} outputs: "
                               f"return one per output of forward")
        for o, t in zip(outs, got, strict=True):
            if isinstance(o, Tensor) and t is not None and o.dtype.is_floating_point:
                _set_tangent(o, t)


def _tensors(args, kwargs):
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif a.__class__ is list or a.__class__ is tuple:
            yield from (b for b in a if isinstance(b, Tensor))
    if kwargs:
        yield from (a for a in kwargs.values() if isinstance(a, Tensor))


def _zeros_for(t):
    from ..creation import zeros_like
    return zeros_like(t)


def _sub(a):
    """`a` with every tensor replaced by its tangent (zeros where it has none)."""
    if isinstance(a, Tensor):
        t = tangent_of(a)
        return _zeros_for(a) if t is None else t
    return type(a)(_sub(b) for b in a)


def _tangents(op, cls, args, kwargs, result, outs):
    """The tangent of each output (None: none)."""
    kind = cls.tangent or _kind(cls)
    if len(args) < _POSITIONAL.get(kind, 0):  # (operands given by keyword: the general way)
        kind = "rule"
    if kind == "linear":
        first = args[0]
        if not any(tangent_of(t) is not None for t in _tensors((first,), None)):
            return [None] * len(outs)
        return outputs(op(_sub(first), *args[1:], **kwargs))
    if kind == "bilinear":
        return [_product_rule(op, args, kwargs, result, _BIAS_DIM.get(cls))]
    if kind == "log_softmax":  # (its Jacobian is not symmetric: J·t is t less softmax·t)
        t = tangent_of(args[0]).to(result.dtype)
        dim = args[1] if len(args) > 1 else kwargs["dim"]
        return [t - (result.exp() * t).sum(dim, keepdim=True)]
    # the tangents are recorded for reverse mode where a primal or a tangent requires grad
    # (not for the aliases made for the rules)
    create = grad_mode._state.enabled and any(
        t.requires_grad or t_of.requires_grad for t in _tensors(args, kwargs)
        if (t_of := tangent_of(t)) is not None)
    args, kwargs, tangents = _asking(args, kwargs, create)
    if not create:
        result = _alias(result) if isinstance(result, Tensor) else tuple(
            _alias(r) if isinstance(r, Tensor) else r for r in result)
    if kind == "symmetric":  # J = Jᵀ: each input's part of J·t is its rule's gradient for t
        total = None
        with grad_mode.set_grad_enabled(create):
            for a, t in tangents.values():
                for inp, g in cls.rule(t, result, *args, **kwargs):
                    if inp is a and g is not None:
                        total = g if total is None else total + g
        if total is not None and total.shape != result.shape:
            total = total.expand(result.shape)
        return [total]
    return _through_rule(cls, args, kwargs, tangents, result, outs, create)


def _product_rule(op, args, kwargs, result, bias_dim):
    """J·t of a product of its first two arguments, B(x, w) (+ a bias b at the third, along
    the output's dim `bias_dim`: linear's and convolution's): B(tx, w) + B(x, tw) (+ tb)."""
    x, w = args[0], args[1]
    tx, tw = tangent_of(x), tangent_of(w)
    bias = args[2] if len(args) > 2 else kwargs.get("bias") if kwargs else None
    if bias is not None:
        args = (x, w, None, *args[3:])
        kwargs = {k: v for k, v in kwargs.items() if k != "bias"} if kwargs else kwargs
    rest = args[2:]
    total = None if tx is None else op(tx, w, *rest, **kwargs)
    if tw is not None:
        term = op(x, tw, *rest, **kwargs)
        total = term if total is None else total + term
    tb = None if bias is None else tangent_of(bias)
    if tb is not None:
        shape = [1] * result.ndim
        shape[bias_dim] = -1
        term = tb.reshape(shape).expand(result.shape)
        total = term if total is None else total + term
    return total


def _asking(args, kwargs, create):
    """The arguments as a rule gets them, and {id(argument): (argument, tangent)}. A tensor with
    a tangent must require grad (rules skip the gradients nobody asked for): one that does not
    is replaced by an alias that does. Unless the tangents are recorded (`create`), every tensor
    is cut from its history, so that computing a tangent never walks the graph before it."""
    tangents = {}

    def ask(a):
        if isinstance(a, Tensor):
            t = tangent_of(a)
            if not create and a.requires_grad or t is not None and not a.requires_grad:
                a = _alias(a)
                if t is not None:
                    a._meta = _AutogradMeta(True)
            if t is not None:
                tangents[id(a)] = (a, t)
            return a
        if a.__class__ is list or a.__class__ is tuple:
            return type(a)(ask(b) for b in a)
        return a
    args = tuple(ask(a) for a in args)
    kwargs = {k: ask(v) for k, v in kwargs.items()} if kwargs else kwargs
    return args, kwargs, tangents


def _through_rule(cls, args, kwargs, tangents, result, outs, create):
    """J·t as the gradient with respect to g of the sum of rule(g)·t."""
    from . import grad
    with grad_mode.enable_grad():
        gs = [_zeros_for(o).requires_grad_() if o._dtype.is_floating_point else None
              for o in outs]
        g = gs[0] if len(outs) == 1 else tuple(gs)
        total = None
        for inp, gi in cls.rule(g, result, *args, **kwargs):
            t = tangents.get(id(inp))
            # (a gradient not computed from g is a constant: zeros, as `zero_`'s for its input)
            if t is None or t[0] is not inp or gi is None or not gi.requires_grad:
                continue
            term = (gi * t[1]).sum()
            total = term if total is None else total + term
        if total is None:
            return [None] * len(outs)
        found = iter(grad(total, [x for x in gs if x is not None], retain_graph=True,
                          create_graph=create, allow_unused=True))
    # (an output the rule never reads does not depend on the inputs: a zero tangent)
    return [None if x is None else _zeros_for(o) if (t := next(found)) is None else t
            for x, o in zip(gs, outs, strict=True)]


LINEAR = ("view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze",
          "unsqueeze", "expand", "expand_as", "broadcast_to", "permute", "transpose",
          "swapaxes", "swapdims", "t", "_T", "_mT", "movedim", "moveaxis", "narrow", "split",
          "chunk", "unbind", "getitem", "diagonal", "as_strided", "unfold", "clone",
          "contiguous", "to", "sum", "mean", "cumsum", "flip", "neg", "negative", "gather",
          "index_select", "take", "masked_select", "cat", "concat", "concatenate", "stack")
BILINEAR = ("matmul", "mm", "bmm", "mv", "dot", "outer", "ger", "linear", "convolution")
_BIAS_DIM = {}  # rule class -> the output dim its op's bias runs along
_POSITIONAL = {"linear": 1, "bilinear": 2, "log_softmax": 1}  # the operands a kind reads by place
# the elementwise families (a diagonal Jacobian), and the ops named beside them
_ELEMENTWISE = ("unary", "arith", "ternary", "math", "math2", "special", "special2",
                "activation")
SYMMETRIC = ("clamp_min", "clamp_max", "celu", "absolute", "subtract", "multiply", "divide",
             "arctan2", "softmax")


def _kind(cls):
    """How the tangents of `cls`'s op are computed (see the module docstring), found once per
    rule class: "linear", "bilinear", "symmetric", "log_softmax" or "rule"."""
    from ..kernels.scalar.table import OPS
    from .derivatives import RULES
    symmetric = {n for op in OPS if op.family in _ELEMENTWISE for n in (op.name, *op.aliases)}
    symmetric.update(SYMMETRIC)
    _BIAS_DIM.update({RULES["linear"]: -1, RULES["convolution"]: 1})
    for name, c in RULES.items():
        c.tangent = "linear" if name in LINEAR else "bilinear" if name in BILINEAR else \
            "symmetric" if name in symmetric else "log_softmax" if name == "log_softmax" \
            else "rule"
    if cls.tangent is None:
        cls.tangent = "rule"
    return cls.tangent
