"""`install`: every op with a derivative rule records itself when grad is needed.

The op modules stay free of autograd: at import, each op that has a rule in `derivatives` is
replaced (in its module, in the Tensor methods, wherever the same function object is bound) by
a wrapper that records a node when grad mode is on and an input requires grad, and otherwise
calls the op directly. In-place ops are wrapped apart: with grad, they run as their
out-of-place op and the tensor takes the result's values and place in the graph (torch's
"rebase"; a view's base takes the history of itself with the view's part written, and the view
is taken again from it); either way they bump the version counter of the memory written."""
import functools

from .. import creation
from ..dtypes import can_cast
from ..kernels.registry import backend
from ..ops import complex_ops
from ..ops._common import check_writeable
from ..tensor import Tensor
from . import derivatives, forward_ad, grad_mode
from .derivatives import RULES
from .graph import (
    _alias,
    differentiable,
    fusion,
    needs_grad,
    node_class,
    take_history,
    view_base,
    view_of,
)
from .versions import bump, counter

_grad = grad_mode._state  # the calling thread's grad mode
_dual = forward_ad.active  # [whether a forward AD level is entered]

# ops whose result is a view of their input (getitem's, unless it indexes by tensors): an
# in-place op on such a result rewrites its base's history too
VIEWS = {"view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze",
         "unsqueeze", "expand", "expand_as", "broadcast_to", "permute", "transpose", "swapaxes",
         "swapdims", "t", "_T", "_mT", "movedim", "moveaxis", "narrow", "split", "chunk",
         "unbind", "getitem", "diagonal", "as_strided", "unfold", "complex_real", "complex_imag",
         "view_as_real", "view_as_complex"}

# in-place view ops: self takes the view's sizes, strides and history (nothing is written)
_INPLACE_VIEWS = {"squeeze_": "squeeze", "unsqueeze_": "unsqueeze", "transpose_": "transpose",
                  "swapdims_": "swapdims", "swapaxes_": "swapaxes", "t_": "t",
                  "as_strided_": "as_strided"}

_INPLACE_DUNDERS = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                    "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                    "__irshift__", "__setitem__"}

# in-place methods whose out-of-place op is not simply the name without its trailing "_"
_OUT_OF_PLACE = {"__iadd__": "add", "__isub__": "sub", "__imul__": "mul", "__itruediv__": "div",
                 "true_divide_": "div", "__ipow__": "pow", "__imod__": "remainder",
                 "clip_": "clamp", "__setitem__": "index_put", "copy_": "copied",
                 "fill_": "filled", "zero_": "filled"}


def _check_inplace(self, name):
    meta = self._meta
    if meta is None:
        return
    if meta.requires_grad and meta.grad_fn is None:
        raise RuntimeError(f"a leaf Variable that requires grad is being used in an in-place "
                           f"operation ({name}); run it under jitensor.no_grad() or on a clone")
    root, steps = _chain(self)
    if not steps:
        return
    if root._meta.grad_fn is None:
        raise RuntimeError(f"a view of a leaf Variable that requires grad is being used in an "
                           f"in-place operation ({name}); run it under jitensor.no_grad() or on "
                           f"a clone")


def _check_overlap(self, name, grad):
    """torch's refusal to write a tensor whose elements share memory (an expanded one): the
    result would depend on the order of the writes (but without grad a fill writes one value,
    whatever the order); and the refusal to write read-only memory (check_writeable). An input
    that overlaps the output is read as a snapshot instead (docs/design.md, "Writes that
    overlap their inputs")."""
    if name in _KEEP_DATA:
        return
    data = self._data
    if data.size > 1 and 0 in data.strides and (grad or name not in _FILLS) and \
            any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape, strict=False)):
        raise RuntimeError(f"{name}: unsupported operation: more than one element of the "
                           f"written-to tensor refers to a single memory location. Please clone() "
                           f"the tensor before performing the operation.")
    check_writeable(name, self)


_FILLS = {"fill_", "zero_", "__setitem__"}
# in-place methods that change the tensor's shape or strides, not its memory
_KEEP_DATA = {"resize_", "resize_as_", "as_strided_", "squeeze_", "unsqueeze_", "t_",
              "transpose_", "swapaxes_", "swapdims_"}


def _written_view(base, value, view):
    """What writing `value` into `view(base)` records (torch's CopySlices): base's values, in
    place already."""
    return base.detach()


def _copy_slices(g, result, base, value, view):
    g = g.contiguous()  # (the view ops, `view` among them, hold for any contiguous tensor)
    if not g.is_complex():
        kept = creation.ones_like(g)
        view(kept).zero_()
        return (base, g * kept), (value, view(g))
    # a complex mask is applied part by part (a view may be one part: .real, .imag)
    kept = creation.full_like(g, 1 + 1j)
    view(kept).zero_()
    masked = complex_ops.view_as_real(g) * complex_ops.view_as_real(kept)
    return (base, complex_ops.view_as_complex(masked)), (value, view(g))


_write_view = differentiable(_written_view, node_class("copy_slices", _copy_slices, False, False))


def _chain(t):
    """The base at the root of the views down to `t`, and the steps that take `t` from it."""
    steps = []
    while (base := view_base(t)) is not None:
        node = t._meta.grad_fn
        steps.append((type(node).forward, node.args[1:], node.kwargs, t._meta.output_nr))
        t = base
    return t, steps[::-1]


def _along(steps, x):
    for step in steps:
        x = view_of(*step, x)
    return x


def _rebase(t, result):
    """`t`, just written with `result`'s values, takes their history. A view wrote its root
    base too, which takes the history of its old self with the view's part written (one step
    from the root, as torch's as_strided: a part reached through an expanded view is every
    element under it), and the view is taken again from that; views between them are taken
    again when next used (their storage's count moved on)."""
    root, steps = _chain(t)
    if steps:
        view = functools.partial(_along, steps)
        take_history(root, _write_view(root, result, view))
        result = view(root)
    take_history(t, result)


def _saved_in_place(t, result):
    """A rule that reads its result now reads `t`, which holds the result's values, as torch's
    saves the tensor written in place itself: writing it again makes backward raise (the
    result's own copy would never change)."""
    node = None if result._meta is None else result._meta.grad_fn
    saved = None if node is None else node.result
    if saved.__class__ is not Tensor or saved._data is not result._data:
        return
    old, new = counter(result._data), counter(t._data)
    node.result = _alias(t)
    node.versions = [(new, new.count) if c is old else (c, n) for c, n in node.versions]


def _inplace(name, fn, out_of_place):
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        if fusion[0] is not None:  # inside a compiled call: pending expressions may read what
            from ..fusion import suspended  # is written; the op itself runs eagerly
            with suspended():
                return method(self, *args, **kwargs)
        grad = _grad.enabled and (self.requires_grad or needs_grad(args, kwargs))
        dual = _dual[0] and forward_ad.carries((self, *args), kwargs)
        _check_overlap(self, name, grad)
        if grad or dual:
            if grad:
                _check_inplace(self, name)
            if out_of_place is None:
                raise RuntimeError(f"{name} is not differentiable; call it under "
                                   f"jitensor.no_grad() or on a detach()ed tensor" if grad else
                                   f"{name} has no forward derivative; call it outside "
                                   f"forward AD or on tensors without tangents")
            args = args if name != "zero_" else (0,)
            # the op reads self's old values when its rule uses its inputs (a composed op's
            # parts may): give it a copy
            cls = getattr(out_of_place, "node_class", None)
            src = self.clone() if cls is None or cls.uses_inputs else self
            result = out_of_place(src, *args, **kwargs)
            if result.shape != self.shape:
                raise RuntimeError(f"{name}: output with shape {list(self.shape)} doesn't match "
                                   f"the broadcast shape {list(result.shape)}")
            if not can_cast(result.dtype, self.dtype):
                raise RuntimeError(f"{name}: result type {result.dtype} can't be cast to the "
                                   f"desired output type {self.dtype}")
            backend(self._device).copy(self._data, result._data)
            bump(self._data)  # (before the rebase: a view taken again saves the new version)
            if grad:
                _rebase(self, result)
                _saved_in_place(self, result)
            if dual:
                forward_ad.written(self, result)
        else:
            data = self._data
            written = counter(data)
            count = written.count
            fn(self, *args, **kwargs)
            if written.count == count:  # (else fn wrote self through out=, which counted)
                if self._data is data:
                    written.count += 1
                else:  # (set_ and resize_ give self other memory)
                    bump(self._data)
        return self
    return method


def _inplace_view(name, fn, view):
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        if not (_grad.enabled and self.requires_grad):
            fn(self, *args, **kwargs)
            if _dual[0]:
                forward_ad.viewed(self, view, args, kwargs)
            return self
        _check_inplace(self, name)
        # the view is taken of an alias holding self's old place in the graph (self itself
        # would become its own base)
        old = _alias(self)
        old._autograd().requires_grad, old._meta.grad_fn, old._meta.output_nr = \
            True, self._meta.grad_fn, self._meta.output_nr
        result = view(old, *args, **kwargs)
        self._data = result._data
        take_history(self, result)
        if _dual[0]:
            forward_ad.viewed(self, view, args, kwargs)
        return self
    return method


def install(modules):
    """Wrap the ops of `modules` (their globals and TENSOR_METHODS) and Tensor's own methods."""
    wrapped = {}  # id(original) -> wrapper
    for module in modules:
        for name, cls in RULES.items():
            fn = getattr(module, name, None)
            if callable(fn) and id(fn) not in wrapped:
                wrapped[id(fn)] = differentiable(fn, cls)
    for name in ("clone", "contiguous", "to"):
        setattr(Tensor, name, differentiable(getattr(Tensor, name), RULES[name]))
    ops = {name: wrapped[id(getattr(m, name))] for m in modules for name in RULES
           if id(getattr(m, name, None)) in wrapped}
    ops["index_put"] = differentiable(derivatives.index_put, RULES["index_put"])
    ops["copied"] = differentiable(derivatives.copied, RULES["copied"])
    ops["filled"] = differentiable(derivatives.filled, RULES["filled"])
    for module in modules:
        for key, value in list(vars(module).items()):
            if id(value) in wrapped:
                setattr(module, key, wrapped[id(value)])
        methods = module.TENSOR_METHODS
        for key, value in list(methods.items()):
            if isinstance(value, property) and id(value.fget) in wrapped:
                methods[key] = property(wrapped[id(value.fget)])
            elif id(value) in wrapped:
                methods[key] = wrapped[id(value)]
            elif key in _INPLACE_VIEWS:
                methods[key] = _inplace_view(key, value, ops[_INPLACE_VIEWS[key]])
            elif key.endswith("_") and not key.startswith("__") or key in _INPLACE_DUNDERS:
                name = _OUT_OF_PLACE.get(key, key[:-1])
                composed = getattr(module, name) if name in getattr(module, "COMPOSED", ()) \
                    else None  # built from recorded ops: it records itself
                # (a method may name its own: another argument order, or checks of its own)
                methods[key] = _inplace(key, value, getattr(value, "out_of_place", None)
                                        or ops.get(name, composed))
    for key in ("fill_", "zero_", "copy_"):
        setattr(Tensor, key, _inplace(key, getattr(Tensor, key), ops[_OUT_OF_PLACE[key]]))
    for name, cls in RULES.items():
        cls.is_view = name in VIEWS
        if cls.is_view:
            cls.forward = staticmethod(ops[name])
