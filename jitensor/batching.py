"""vmap's batching rules: the function runs once on the whole batch.

Inside `func.vmap`, each mapped input is a `BatchedTensor`: a tensor (`value`) holding every
batch element along its dim 0, which shows the function the shape of one element. Every op
called on a BatchedTensor goes through `dispatch`, which picks the op's batching rule from
the tables below by name: the rule runs the op (or a few ops) once on the values and wraps
what comes back. An op without a rule runs once per batch element and its results are stacked
(torch's slow fallback), so any op is correct, only slower.

Rules call ops through their public names (module attributes looked up at the call, or methods
of the values), so a value that is itself a BatchedTensor of an enclosing vmap dispatches
again: nested vmaps compose. The public functions of jitensor's namespaces reach `dispatch`
through a wrapper bound where jitensor binds them when a vmap first runs (`install`), so a
program that never vmaps calls its ops directly; Tensor methods of a BatchedTensor dispatch
from `BatchedTensor.__getattr__`.

What the batched run cannot do raises `Unbatchable`, and func.vmap then runs the function once
per element instead (as before these rules): Python values read from a batched tensor
(`.item()`, `.tolist()`, control flow on values), random draws, and an op that refuses a
BatchedTensor (a function bound before the first vmap, a method of a plain tensor given a
batched argument)."""
import functools
import inspect
import operator
import sys
import threading

import jitensor

from .tensor import Tensor


class Unbatchable(Exception):
    """The batched run cannot continue: func.vmap runs the function per element instead."""


class _Levels(threading.local):
    sizes = ()  # the batch size of each vmap entered in this thread, outermost first
    different = ()  # per level: whether random draws differ per element (randomness=)
    depth = 0  # 1 while an op dispatches: what its rule calls runs as it is
    drawn = 0  # random numbers drawn by dispatched ops: each element's own


_levels = _Levels()
active = [0]  # vmaps running in any thread: the one check every wrapped function makes


def enter(size, different=False):
    """Enter a vmap level of `size` elements (whose random draws differ per element, with
    `different`); returns its number."""
    _levels.sizes += (size,)
    _levels.different += (different,)
    active[0] += 1
    return len(_levels.sizes) - 1


def leave():
    _levels.sizes = _levels.sizes[:-1]
    _levels.different = _levels.different[:-1]
    active[0] -= 1


def _offset():
    return jitensor.default_generator._offset


def draws():
    """(random numbers drawn so far, those drawn by dispatched ops): a batched run whose draws
    were all dispatched gave each element its own."""
    return _offset(), _levels.drawn


def current():
    """(level, size) of the innermost vmap of this thread, or None."""
    sizes = _levels.sizes
    return (len(sizes) - 1, sizes[-1]) if sizes else None


# -- the batched tensor ---------------------------------------------------------------------------
class BatchedTensor:
    """One element of a batch as vmap's function sees it: `value` holds every element along
    dim 0 (a Tensor, or a BatchedTensor of an enclosing level)."""

    __slots__ = ("value", "level")

    def __init__(self, value, level):
        self.value, self.level = value, level

    def __repr__(self):
        return f"BatchedTensor(lvl={self.level + 1}, bdim=0, value=\n{self.value!r})"

    # what does not depend on the values: the shape of one element
    @property
    def shape(self):
        return self.value.shape[1:]

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self.value.dim() - 1

    ndim = property(dim)

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    dtype = property(lambda self: self.value.dtype)
    device = property(lambda self: self.value.device)
    requires_grad = property(lambda self: self.value.requires_grad)
    is_leaf = property(lambda self: self.value.is_leaf)
    grad_fn = property(lambda self: self.value.grad_fn)
    T = property(lambda self: self.permute(*range(self.dim() - 1, -1, -1)))
    mT = property(lambda self: self.transpose(-2, -1))
    data = property(lambda self: BatchedTensor(self.value.data, self.level))

    @property
    def grad(self):
        g = self.value.grad
        return None if g is None else BatchedTensor(g, self.level)

    def is_floating_point(self):
        return self.value.is_floating_point()

    def is_complex(self):
        return False

    def _values_read(self, *args, **kwargs):
        raise Unbatchable("a Python value read from a batched tensor")

    item = tolist = numpy = __bool__ = __float__ = __int__ = __index__ = _values_read

    def __iter__(self):
        return iter(self.unbind(0))

    def __getattr__(self, name):
        attr = getattr(Tensor, name, None)
        if callable(attr):
            call = _method(name)
            return lambda *args, **kwargs: dispatch(call, name, (self, *args), kwargs)
        if isinstance(attr, property):  # (what holds for every element: is_cuda, layout, ...)
            value = getattr(self.value, name)
            if isinstance(value, (Tensor, BatchedTensor)):
                raise Unbatchable(f"Tensor.{name} of a batched tensor")
            return value
        raise AttributeError(f"'BatchedTensor' has no attribute '{name}'")


@functools.cache
def _method(name):
    """Tensor method `name` called on its first argument, whatever it is (so a value that is a
    BatchedTensor dispatches again)."""
    def call(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    return call


def _operator(fn, name, swap=False):
    def method(self, *args):
        return dispatch(fn, name, (args[0], self) if swap else (self, *args))
    return method


for _dunder, (_fn, _name) in {
        "add": (operator.add, "add"), "sub": (operator.sub, "sub"),
        "mul": (operator.mul, "mul"), "truediv": (operator.truediv, "div"),
        "floordiv": (operator.floordiv, "floor_divide"), "mod": (operator.mod, "remainder"),
        "pow": (operator.pow, "pow"), "matmul": (operator.matmul, "matmul"),
        "and": (operator.and_, "bitwise_and"), "or": (operator.or_, "bitwise_or"),
        "xor": (operator.xor, "bitwise_xor")}.items():
    setattr(BatchedTensor, f"__{_dunder}__", _operator(_fn, _name))
    setattr(BatchedTensor, f"__r{_dunder}__", _operator(_fn, _name, swap=True))
    setattr(BatchedTensor, f"__i{_dunder}__",
            _operator(getattr(operator, f"i{_fn.__name__.rstrip('_')}"), _name + "_"))
for _dunder, _name in (("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge"), ("eq", "eq"),
                       ("ne", "ne")):
    setattr(BatchedTensor, f"__{_dunder}__", _operator(getattr(operator, _dunder), _name))
BatchedTensor.__neg__ = _operator(operator.neg, "neg")
BatchedTensor.__pos__ = _operator(operator.pos, "positive")
BatchedTensor.__abs__ = _operator(operator.abs, "abs")
BatchedTensor.__invert__ = _operator(operator.invert, "bitwise_not")
BatchedTensor.__getitem__ = _operator(operator.getitem, "getitem")
BatchedTensor.__setitem__ = _operator(operator.setitem, "setitem")
BatchedTensor.__hash__ = object.__hash__


# -- dispatch -------------------------------------------------------------------------------------
def _batched_in(args, kwargs):
    """The innermost level among the BatchedTensors of the call, or -1."""
    level = -1
    for a in (*args, *kwargs.values()) if kwargs else args:
        if a.__class__ is BatchedTensor:
            level = max(level, a.level)
        elif a.__class__ is list or a.__class__ is tuple:
            for b in a:
                if b.__class__ is BatchedTensor:
                    level = max(level, b.level)
    return level


def dispatch(call, name, args, kwargs=None):
    """`call(*args, **kwargs)` (the op `name`) with BatchedTensors among the arguments."""
    if _levels.depth:
        return _dispatch(call, name, args, kwargs or {})
    before, _levels.depth = _offset(), 1
    try:
        return _dispatch(call, name, args, kwargs or {})
    finally:
        _levels.depth = 0
        _levels.drawn += _offset() - before  # (by the whole batch: each element its own)


def _dispatch(call, name, args, kwargs):
    level = _batched_in(args, kwargs)
    if level < 0:
        return call(*args, **kwargs)
    size = _levels.sizes[level]
    rule = RULES.get(name)
    if rule is not None:
        try:
            return rule(call, args, kwargs, level, size)
        except _NoRule:
            pass
    return _per_element(call, name, args, kwargs, level, size)


class _NoRule(Exception):
    """This call is outside its rule's cases: run it per element."""


def _take(a, level, b):
    if a.__class__ is BatchedTensor and a.level == level:
        return a.value[b]
    if a.__class__ is list or a.__class__ is tuple:
        return type(a)(_take(x, level, b) for x in a)
    return a


def _per_element(call, name, args, kwargs, level, size):
    """The op once per batch element, its tensor results stacked along dim 0."""
    results = [call(*(_take(a, level, b) for a in args),
                    **{k: _take(v, level, b) for k, v in kwargs.items()}) for b in range(size)]
    if name.endswith("_") and not name.startswith("_") and args and \
            args[0].__class__ is BatchedTensor and args[0].level == level:
        return args[0]  # an in-place method wrote each element of self

    def stacked(column):
        first = column[0]
        if isinstance(first, (Tensor, BatchedTensor)):
            return BatchedTensor(jitensor.stack(column), level)
        if first is None or all(c == first for c in column[1:]):
            return first
        raise Unbatchable(f"{name} gives each batch element another Python value")
    first = results[0]
    if isinstance(first, tuple) and not isinstance(first, (Tensor, BatchedTensor)):
        out = [stacked([r[i] for r in results]) for i in range(len(first))]
        return type(first)(*out) if hasattr(first, "_fields") else tuple(out)
    return stacked(results)


def _value(a, level, size):
    """The physical form of argument `a` at `level`: a batched one's value; a tensor of the
    call that is not batched there, expanded along a new dim 0."""
    if a.__class__ is BatchedTensor and a.level == level:
        return a.value
    return a.unsqueeze(0).expand(size, *a.shape)


def _wrap(result, level):
    if isinstance(result, (Tensor, BatchedTensor)):
        return BatchedTensor(result, level)
    if isinstance(result, tuple):
        out = [_wrap(r, level) for r in result]
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    if isinstance(result, list):
        return [_wrap(r, level) for r in result]
    return result


def _rank(a, level):
    return a.dim() if a.__class__ is BatchedTensor and a.level == level else None


# -- rules ----------------------------------------------------------------------------------------
def _elementwise(call, args, kwargs, level, size):
    """Broadcasting ops: each batched operand's value with ones inserted after the batch dim up
    to the largest rank, so the elements line up; other operands broadcast from the right."""
    if any(isinstance(a, (list, tuple)) and _batched_in(a, None) == level for a in args):
        raise _NoRule
    top = max(a.dim() for a in (*args, *kwargs.values())
              if isinstance(a, (Tensor, BatchedTensor)))

    def align(a):
        r = _rank(a, level)
        if r is None:
            return a  # (it broadcasts from the right, as the elements do)
        v = a.value
        return v.reshape(size, *([1] * (top - r)), *a.shape) if r < top else v
    result = call(*(align(a) for a in args), **{k: align(v) for k, v in kwargs.items()})
    if args and args[0].__class__ is BatchedTensor and result is args[0].value:
        return args[0]  # in place
    return _wrap(result, level)


def _first_only(call, args, kwargs, level, size):
    """Ops on the trailing dims of their first argument (layer_norm, embedding's indices,
    linear's input, ...): run on the value, when nothing else is batched."""
    if _rank(args[0], level) is None or _batched_in(args[1:], kwargs) == level:
        raise _NoRule
    result = call(args[0].value, *args[1:], **kwargs)
    return args[0] if result is args[0].value else _wrap(result, level)


def _dims(value, rank, insert=False):
    """Dims of one element (an int or a sequence) as dims of the value."""
    n = rank + 1 if insert else rank
    if isinstance(value, int):
        if not -n <= value < max(n, 1):
            raise _NoRule  # (the per-element run gives torch's error)
        return value % max(n, 1) + 1
    return type(value)(_dims(v, rank, insert) for v in value)


# op -> the parameters holding dims of its first argument, and whether a missing (None) dim means
# every dim
_DIM_OPS = {
    **{n: (("dim",), True) for n in ("sum", "mean", "nansum", "nanmean", "prod", "all", "any",
                                      "var", "std", "count_nonzero")},
    **{n: (("dim",), False) for n in (
        "softmax", "log_softmax", "cumsum", "cumprod", "logsumexp", "sort", "argsort",
        "narrow", "select", "split", "chunk", "unbind", "index_select", "cummax", "cummin",
        "logcumsumexp", "diff", "tensor_split", "renorm")},
    "amax": (("dim",), True), "amin": (("dim",), True), "norm": (("dim",), True),
    "topk": (("dim",), False), "flip": (("dims",), False), "transpose": (("dim0", "dim1"), False),
    "swapaxes": (("axis0", "axis1"), False), "swapdims": (("dim0", "dim1"), False),
    "movedim": (("source", "destination"), False), "moveaxis": (("source", "destination"), False),
    "flatten": (("start_dim", "end_dim"), False), "diagonal": (("dim1", "dim2"), False),
    "max": (("dim",), True), "min": (("dim",), True), "argmax": (("dim",), False),
    "argmin": (("dim",), False), "normalize": (("dim",), False),
}
_INSERTING = {"unsqueeze": "dim", "stack": "dim"}


@functools.cache
def _signature(call):
    try:
        return inspect.signature(call)
    except (TypeError, ValueError):
        return None


def _bound(call, name, args, kwargs):
    # the function a form wraps; for a method, the function of its name
    fn = getattr(call, "__wrapped__", None) or getattr(jitensor, name, None) or \
        getattr(jitensor.nn.functional, name, None)
    sig = _signature(fn) if fn is not None else None
    if sig is None:
        raise _NoRule
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        raise _NoRule from None
    return bound


def _dim_rule(name):
    params, none_is_all = _DIM_OPS[name]

    def rule(call, args, kwargs, level, size):
        rank = _rank(args[0], level)
        if name in ("max", "min") and len(args) > 1 and isinstance(args[1], (Tensor,
                                                                             BatchedTensor)):
            return _elementwise(call, args, kwargs, level, size)  # (max(a, b): maximum)
        if rank is None or _batched_in(args[1:], kwargs) == level:
            raise _NoRule
        bound = _bound(call, name, args, kwargs)
        first = next(iter(bound.arguments))
        for p in params:
            d = bound.arguments.get(p, bound.signature.parameters[p].default
                                    if p in bound.signature.parameters else None)
            if d is None or d == () and none_is_all:
                if not none_is_all or rank == 0:
                    raise _NoRule
                if name in ("max", "min") and d is None:
                    return _wrap(getattr(args[0].value, "a" + name)(tuple(range(1, rank + 1))),
                                 level)
                d = tuple(range(rank))
            elif d is inspect.Parameter.empty:
                raise _NoRule
            bound.arguments[p] = _dims(d, rank)
        bound.arguments[first] = args[0].value
        return _wrap(call(*bound.args, **bound.kwargs), level)
    return rule


def _inserting(name):
    def rule(call, args, kwargs, level, size):
        bound = _bound(call, name, args, kwargs)
        first, p = next(iter(bound.arguments)), _INSERTING[name]
        d = bound.arguments.get(p, 0)
        if name == "stack":
            tensors = bound.arguments[first]
            rank = tensors[0].dim()
            bound.arguments[first] = [_value(t, level, size) for t in tensors]
        else:
            if _batched_in(args[1:], kwargs) == level:
                raise _NoRule
            rank = args[0].dim()
            bound.arguments[first] = args[0].value
        bound.arguments[p] = _dims(d, rank, insert=True)
        return _wrap(call(*bound.args, **bound.kwargs), level)
    return rule


def _cat(call, args, kwargs, level, size):
    bound = _bound(call, "cat", args, kwargs)
    first = next(iter(bound.arguments))
    tensors = bound.arguments[first]
    rank = max(t.dim() for t in tensors)
    bound.arguments[first] = [_value(t, level, size) for t in tensors
                              if not (t.dim() == 1 and t.shape[0] == 0 and rank > 1)]
    bound.arguments["dim"] = _dims(bound.arguments.get("dim", 0), rank)
    return _wrap(call(*bound.args, **bound.kwargs), level)


def _gather(call, args, kwargs, level, size):
    bound = _bound(call, "gather", args, kwargs)
    names = list(bound.arguments)
    x, index = bound.arguments[names[0]], bound.arguments["index"]
    rank = x.dim()
    bound.arguments[names[0]] = _value(x, level, size)
    bound.arguments["index"] = _value(index, level, size)
    bound.arguments["dim"] = _dims(bound.arguments["dim"], rank)
    return _wrap(call(*bound.args, **bound.kwargs), level)


def _sizes(args):
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def _shaped(call, args, kwargs, level, size):
    """reshape/view/expand/repeat/tile/permute: the batch dim is prepended to the sizes."""
    x = args[0]
    if _rank(x, level) is None or kwargs or _batched_in(args[1:], None) == level:
        raise _NoRule
    return x, _sizes(args[1:])


def _reshape(call, args, kwargs, level, size):
    x, sizes = _shaped(call, args, kwargs, level, size)
    return _wrap(call(x.value, (size, *sizes)), level)


def _expand(call, args, kwargs, level, size):
    x, sizes = _shaped(call, args, kwargs, level, size)
    v = x.value  # (new leading dims go after the batch dim)
    v = v.reshape(size, *([1] * (len(sizes) - x.dim())), *x.shape) if len(sizes) > x.dim() else v
    return _wrap(call(v, (size, *sizes)), level)


def _repeat(call, args, kwargs, level, size):
    x, sizes = _shaped(call, args, kwargs, level, size)
    if len(sizes) < x.dim():
        raise _NoRule
    return _wrap(call(x.value, (1, *sizes)), level)


def _permute(call, args, kwargs, level, size):
    x, dims = _shaped(call, args, kwargs, level, size)
    return _wrap(call(x.value, (0, *_dims(tuple(dims), x.dim()))), level)


def _as(method):
    """view_as/reshape_as/expand_as: `method` (view, reshape, expand) to the other's (logical)
    shape."""
    def rule(call, args, kwargs, level, size):
        x, other = args
        if _rank(x, level) is None or kwargs:
            raise _NoRule
        return _wrap(getattr(x.value, method)((size, *other.shape)), level)
    return rule


def _t(call, args, kwargs, level, size):
    x = args[0]
    if _rank(x, level) is None or x.dim() > 2:
        raise _NoRule
    return x if x.dim() < 2 else _wrap(x.value.transpose(1, 2), level)


def _squeeze(call, args, kwargs, level, size):
    x = args[0]
    rank = _rank(x, level)
    if rank is None:
        raise _NoRule
    d = args[1] if len(args) > 1 else kwargs.get("dim")
    if d is None:
        d = tuple(i for i, n in enumerate(x.shape) if n == 1)
    if isinstance(d, (tuple, list)) and not d:
        return x
    return _wrap(call(x.value, _dims(d, rank)), level)


def _getitem(call, args, kwargs, level, size):
    x, key = args
    if isinstance(key, (Tensor, BatchedTensor)) and not key.dtype.is_floating_point and \
            key.dtype != jitensor.bool:  # x[index]: the batch dim stays in front
        if _rank(key, level) is None:
            return _wrap(x.value[:, key], level)
        if _rank(x, level) is None:
            return _wrap(x[key.value], level)
        rows = jitensor.arange(size, device=key.device).reshape(size, *([1] * key.dim()))
        return _wrap(x.value[rows, key.value], level)
    if _rank(x, level) is None or _batched_in((key,) if not isinstance(key, tuple) else key,
                                              None) == level:
        raise _NoRule
    parts = key if isinstance(key, tuple) else (key,)
    if not all(p is None or p is Ellipsis or isinstance(p, (int, slice)) and
               not isinstance(p, bool) for p in parts):
        raise _NoRule  # (tensor and list indices move dims: per element)
    return _wrap(call(x.value, (slice(None), *parts)), level)


def _matmul(call, args, kwargs, level, size):
    """A batched matrix product: vectors become matrices, both get the batch dim and the same
    rank, and the product broadcasts over the batch."""
    a, b = args[0], args[1]
    if kwargs or len(args) != 2 or a.dim() == 0 or b.dim() == 0:
        raise _NoRule
    av, bv = _value(a, level, size), _value(b, level, size)
    if a.dim() == 1:
        av = av.unsqueeze(1)
    if b.dim() == 1:
        bv = bv.unsqueeze(-1)
    gap = av.dim() - bv.dim()
    if gap > 0:
        bv = bv.reshape(size, *([1] * gap), *bv.shape[1:])
    elif gap < 0:
        av = av.reshape(size, *([1] * -gap), *av.shape[1:])
    out = jitensor.matmul(av, bv)  # (mm, bmm and mv are matmul for the ranks they take)
    if a.dim() == 1:
        out = out.squeeze(-2)
    if b.dim() == 1:
        out = out.squeeze(-1)
    return _wrap(out, level)


def _dot(call, args, kwargs, level, size):
    a, b = args[0], args[1]
    if kwargs or a.dim() != 1 or b.dim() != 1:
        raise _NoRule
    return _wrap((_value(a, level, size) * _value(b, level, size)).sum(-1), level)


def _outer(call, args, kwargs, level, size):
    a, b = args[0], args[1]
    if kwargs or a.dim() != 1 or b.dim() != 1:
        raise _NoRule
    return _wrap(_value(a, level, size).unsqueeze(2) * _value(b, level, size).unsqueeze(1), level)


def _einsum(call, args, kwargs, level, size):
    """einsum with an explicit output: each batched operand gets a new leading letter, and so
    does the output."""
    if kwargs or not isinstance(args[0], str) or "->" not in args[0]:
        raise _NoRule
    equation = args[0].replace(" ", "")
    operands = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else \
        list(args[1:])
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise _NoRule
    letter = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in equation)
    batched = [_rank(op, level) is not None for op in operands]
    new = ",".join(letter + t if b else t for t, b in zip(terms, batched, strict=True))
    values = [op.value if b else op for op, b in zip(operands, batched, strict=True)]
    return _wrap(call(f"{new}->{letter}{output}", *values), level)


def _make_dual(call, args, kwargs, level, size):
    return _wrap(call(_value(args[0], level, size), _value(args[1], level, size), **kwargs),
                 level)


def _unpack_dual(call, args, kwargs, level, size):
    return _wrap(call(args[0].value, **kwargs), level)


def _linear(call, args, kwargs, level, size):
    x, w, bias = (*args, *([None] * (3 - len(args))))[:3]
    bias = kwargs.get("bias", bias)
    if _batched_in((w, bias), None) != level:
        return _first_only(call, args, kwargs, level, size)
    out = x @ w.transpose(-2, -1) if w.dim() == 2 else x @ w  # (logical: rules again)
    return out if bias is None else out + bias


def _folded(name):
    """Convolutions, poolings and per-sample norms of a batched input alone: the batch dim
    joins the input's own batch dim (or is it, for an input without one: an input of fewer
    dims than the op's spatial dims + 2)."""
    full = int(name[-2]) + 2 if name[-2:] in ("1d", "2d", "3d") else None

    def rule(call, args, kwargs, level, size):
        x = args[0]
        if _rank(x, level) is None or _batched_in(args[1:], kwargs) == level:
            raise _NoRule
        v = x.value
        merge = full is None or x.dim() == full
        out = call(v.reshape(size * v.shape[1], *v.shape[2:]) if merge else v, *args[1:],
                   **kwargs)

        def split(o):
            return o.reshape(size, -1, *o.shape[1:]) if merge else o
        return _wrap(tuple(split(o) for o in out) if isinstance(out, tuple) else split(out),
                     level)
    return rule


_FOLDED = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
           "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "max_pool2d_with_indices", "group_norm", "instance_norm",
           "interpolate", "upsample")

def _batch_norm(call, args, kwargs, level, size):
    """batch_norm with running statistics (eval): per channel, so the batch folds into the
    input's; in training each element's own statistics are needed: per element."""
    bound = _bound(call, "batch_norm", args, kwargs)
    if bound.arguments.get("training", False):
        raise _NoRule
    return _folded("batch_norm")(call, args, kwargs, level, size)


_REDUCED_LOSSES = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                   "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss",
                   "poisson_nll_loss")


def _pointwise_loss(name):
    def rule(call, args, kwargs, level, size):
        bound = _bound(call, name, args, kwargs)
        reduction = bound.arguments.get("reduction", "mean")
        if "size_average" in bound.arguments or "reduce" in bound.arguments:
            raise _NoRule
        bound.arguments["reduction"] = "none"
        out = dispatch(call, "elementwise", bound.args, bound.kwargs)
        return out if reduction == "none" else out.mean() if reduction == "mean" else out.sum()
    return rule


def _class_loss(name):
    """cross_entropy and nll_loss with class indices: per-element losses of the batch folded
    into the input's rows, then each element's reduction."""
    def rule(call, args, kwargs, level, size):
        bound = _bound(call, name, args, kwargs)
        a = bound.arguments
        x, target = a["input"], a["target"]
        weight = a.get("weight")
        if "size_average" in a or "reduce" in a or target.dtype.is_floating_point or \
                x.dim() not in (1, 2) or _batched_in((weight,), None) == level or \
                weight is not None and a.get("label_smoothing", 0.0):
            raise _NoRule
        reduction = a.get("reduction", "mean")
        xv, tv = _value(x, level, size), _value(target, level, size)
        classes = xv.shape[-1]
        a["input"], a["target"] = xv.reshape(-1, classes), tv.reshape(-1)
        a["reduction"] = "none"
        losses = call(*bound.args, **bound.kwargs).reshape(size, -1)
        if reduction == "none":
            return _wrap(losses.reshape(tv.shape), level)
        if reduction == "sum":
            return _wrap(losses.sum(1), level)
        ignore = a.get("ignore_index", -100)
        kept = (tv != ignore).reshape(size, -1)
        counted = kept.to(losses.dtype) if weight is None else \
            weight[tv.reshape(size, -1).clamp(0, classes - 1)] * kept
        return _wrap(losses.sum(1) / counted.sum(1), level)
    return rule


def _size_of(call, args, kwargs, level, size):
    return args[0].size(*args[1:], **kwargs)


def _autograd_grad(call, args, kwargs, level, size):
    """autograd.grad of batched outputs with respect to batched inputs, one element at a time
    in effect: each element's output depends on its own inputs only, so the gradients of the
    values are the elements' gradients."""
    sig = _signature(call)
    bound = sig.bind(*args, **kwargs)
    a = bound.arguments
    outputs = [a["outputs"]] if isinstance(a["outputs"], BatchedTensor) else list(a["outputs"])
    inputs = [a["inputs"]] if isinstance(a["inputs"], BatchedTensor) else list(a["inputs"])
    cots = a.get("grad_outputs")
    cots = [cots] if isinstance(cots, BatchedTensor) or cots is None else list(cots)
    cots = cots if len(cots) == len(outputs) else [None] * len(outputs)
    if all(_rank(t, level) is None for t in inputs + outputs):
        raise _NoRule  # (the cotangents alone are batched: one backward pass per element)
    if any(_rank(t, level) is None for t in inputs + outputs):
        raise Unbatchable("autograd.grad with a tensor outside the batch")
    values = [o.value for o in outputs]
    a["outputs"], a["inputs"] = values, [t.value for t in inputs]
    a["grad_outputs"] = [v.new_ones(v.shape) if c is None else _value(c, level, size)
                         for v, c in zip(values, cots, strict=True)]
    found = call(*bound.args, **bound.kwargs)
    return tuple(None if g is None else BatchedTensor(g, level) for g in found)


def _unbatched_result(call, args, kwargs, level, size):
    """Ops whose result has no batch dim of its own (new tensors of given sizes)."""
    return call(args[0].value, *args[1:], **kwargs)


RULES = {"getitem": _getitem, "matmul": _matmul, "mm": _matmul, "bmm": _matmul,
         "mv": _matmul, "dot": _dot, "inner": _dot, "vdot": _dot, "outer": _outer,
         "ger": _outer, "linear": _linear, "cat": _cat, "concat": _cat, "concatenate": _cat,
         "gather": _gather, "reshape": _reshape, "view": _reshape, "expand": _expand,
         "broadcast_to": _expand, "repeat": _repeat, "permute": _permute, "t": _t,
         "squeeze": _squeeze, "size": _size_of, "grad": _autograd_grad,
         "new_zeros": _unbatched_result, "new_ones": _unbatched_result,
         "new_full": _unbatched_result, "new_empty": _unbatched_result,
         "new_tensor": _unbatched_result, "cross_entropy": _class_loss("cross_entropy"),
         "nll_loss": _class_loss("nll_loss"), "view_as": _as("view"),
         "reshape_as": _as("reshape"), "expand_as": _as("expand"), "einsum": _einsum,
         "make_dual": _make_dual, "unpack_dual": _unpack_dual, "batch_norm": _batch_norm}
RULES.update({n: _dim_rule(n) for n in _DIM_OPS})
RULES.update({n: _inserting(n) for n in _INSERTING})
RULES.update({n: _folded(n) for n in _FOLDED})
RULES.update({n: _pointwise_loss(n) for n in _REDUCED_LOSSES})
RULES["elementwise"] = _elementwise
_FIRST_ONLY = ("layer_norm", "rms_norm", "embedding", "one_hot", "local_response_norm",
               "contiguous", "clone", "detach", "requires_grad_", "detach_", "float", "double",
               "half", "bfloat16", "int", "long", "bool", "to", "type", "cpu", "cuda",
               "retain_grad", "zero_", "fill_", "zeros_like", "ones_like", "empty_like",
               "full_like", "pad", "pixel_shuffle", "pixel_unshuffle")


def _elementwise_names():
    from .kernels.scalar.table import OPS
    names = {n for op in OPS if op.family not in ("loss", "loss_grad")
             for n in (op.name, *op.aliases)}
    names |= {"where", "masked_fill", "lerp", "addcmul", "addcdiv", "clamp", "clip",
              "clamp_min", "clamp_max", "nan_to_num", "float_power", "positive", "absolute",
              "subtract", "multiply", "divide", "true_divide", "negative", "arctan2", "gelu",
              "silu", "relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh",
              "hardsigmoid", "hardswish", "mish", "softplus", "softsign", "tanhshrink",
              "logsigmoid", "threshold", "hardshrink", "softshrink", "sigmoid", "tanh",
              "dropout", "alpha_dropout", "square", "frac", "sgn", "deg2rad", "rad2deg",
              "logit", "heaviside", "isclose", "type_as"}
    return names | {n + "_" for n in names}


def _install_rules():
    for name in _elementwise_names():
        RULES.setdefault(name, _elementwise)
    for name in _FIRST_ONLY:
        RULES.setdefault(name, _first_only)


# -- binding the public functions -----------------------------------------------------------------
_installed = []
_install_lock = threading.Lock()


def _form(fn, name):
    random = name in _RANDOM

    @functools.wraps(fn)
    def form(*args, **kwargs):
        if active[0]:
            if _batched_in(args, kwargs) >= 0:
                return dispatch(form, name, args, kwargs)
            if random and _levels.sizes and _levels.different[-1] and not _levels.depth and \
                    kwargs.get("out") is None:
                return dispatch(_drawn, name, (fn, *args), kwargs)
        return fn(*args, **kwargs)
    form.__wrapped__ = fn
    return form


# random ops that draw without a batched argument: under randomness="different", a draw per
# element
_RANDOM = {"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm",
           "normal", "bernoulli", "multinomial", "poisson"}


def _drawn(fn, *args, **kwargs):
    level, size = len(_levels.sizes) - 1, _levels.sizes[-1]
    return BatchedTensor(jitensor.stack([fn(*args, **kwargs) for _ in range(size)]), level)


def install():
    """Bind the public functions of jitensor's namespaces, wherever jitensor binds them, to
    forms that dispatch BatchedTensors; run when a vmap first runs."""
    with _install_lock:
        if _installed:
            return
        import jitensor.nn.functional  # noqa: F401 (imported on first use otherwise)
        _install_rules()
        spaces = [jitensor, jitensor.nn.functional, jitensor.linalg, jitensor.special,
                  jitensor.autograd, jitensor.autograd.forward_ad]
        for space in spaces:
            public = getattr(space, "__all__", None)
            for name, fn in list(vars(space).items()):
                if inspect.isfunction(fn) and not name.startswith("_") and \
                        (public is None or name in public) and id(fn) not in _FORMS and \
                        (fn.__module__.startswith(_OP_MODULES) or
                         fn.__module__ == "jitensor.autograd"):
                    _FORMS[id(fn)] = _form(fn, name)
        # wherever jitensor binds them, so that a name bound to one function in two modules
        # stays so
        for name, module in list(sys.modules.items()):
            if name == "jitensor" or name.startswith("jitensor."):
                for key, value in list(vars(module).items()):
                    form = _FORMS.get(id(value))
                    if form is not None and not key.startswith("__"):
                        setattr(module, key, form)
        # indexing a plain tensor by a batched index (an embedding table's rows)
        Tensor.__getitem__ = _form(Tensor.__getitem__, "getitem")
        Tensor.__setitem__ = _form(Tensor.__setitem__, "setitem")
        _installed.append(True)


_FORMS = {}  # id(public function) -> its dispatching form
# where the ops are defined (not the transforms, settings, serialization, ...)
_OP_MODULES = ("jitensor.ops.", "jitensor.nn.functional", "jitensor.creation", "jitensor.linalg",
               "jitensor.autograd.forward_ad", "jitensor.special")


def form_of(fn):
    """The dispatching form of public function `fn` (`fn` itself if it has none): a function
    taken before the first vmap, `vmap(jitensor.dot)`, dispatches too."""
    return _FORMS.get(id(fn), fn)
