"""Indexing with torch's semantics. Basic indices (ints, slices with positive steps, None,
`...`) give views; index tensors and masks (advanced indices) copy through the backend's gather
kernel, and write through its scatter kernel, after every index has been checked.

An index key is read the way torch reads it: ints, slices and None are applied first (a view);
each index tensor then stands for one dim of that view (a mask for as many dims as it has, a
bool for a new size-1 dim); all are broadcast together, and the broadcast block replaces the
indexed dims where they were when they are adjacent, else goes first."""
import operator
import warnings

import numpy as np

from .. import dtypes
from ..creation import allocate
from ..creation import tensor as _tensor
from ..kernels.registry import backend
from ..tensor import Tensor, check_fill_value
from ._common import broadcast_shapes, output, same_device, shares_memory, write_out
from ._common import dim as _dim
from .shape import expand, layout, permute, strided_view, unbind

__all__ = ["gather", "index_select", "masked_fill", "masked_select", "nonzero", "take"]

_INDEX = (dtypes.int32, dtypes.int64)
_BAD_INDEX_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"


# -- reading a key -----------------------------------------------------------------------------
def _items(key):
    """The key as a tuple of items; a list holding slices, None, ... or tensors is read as a
    tuple (torch's reading), any other list as one index tensor."""
    if key.__class__ is tuple:
        return key
    if isinstance(key, list) and any(k is None or k is Ellipsis or isinstance(k, (slice, Tensor))
                                     for k in key):
        return tuple(key)
    return (key,)


def _classify(item, device):
    """(kind, value): kind is 'int', 'slice', 'none', 'ellipsis', 'bool', 'index' or 'mask'."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        return "bool", bool(item)
    if isinstance(item, (list, range, np.ndarray)):
        host = np.asarray(item)
        item = _tensor(host if host.size else host.astype(np.int64), device=device)
    if isinstance(item, Tensor):
        return _classify_tensor(item, device)
    if hasattr(item, "__index__"):
        return "int", operator.index(item)
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(item).__name__})")


def _classify_tensor(item, device):
    d = item._dtype
    if d is dtypes.uint8:
        # stacklevel=1, the default: the user's frame is at a depth that varies by entry point
        warnings.warn("indexing with dtype jitensor.uint8 is deprecated, please use a dtype "
                      "jitensor.bool instead", UserWarning, stacklevel=1)
    if d is dtypes.bool_ or d is dtypes.uint8:
        return ("bool", bool(item.item())) if item.ndim == 0 else ("mask", item.to(device))
    if d not in _INDEX:
        raise IndexError(f"{_BAD_INDEX_DTYPE}, got an index of dtype {d.name}; convert it with "
                         f".long()")
    return ("int", item.item()) if item.ndim == 0 else ("index", item.to(device))


class _Plan:
    """A key applied to a tensor: the basic-index view and, for advanced indices, what the
    backend's gather/scatter needs (entries: (dims of the view, index buffer) pairs)."""

    __slots__ = ("view", "entries", "pre", "post", "shape")


def _plan(t, key):
    items = [_classify(k, t._device) for k in _items(key)]
    ndim = t._data.ndim
    kinds = [k for k, _ in items]
    if kinds.count("ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(v.ndim if k == "mask" else 1 for k, v in items
                   if k in ("int", "slice", "index", "mask"))
    if consumed > ndim:
        if ndim == 0 and "int" in kinds:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python to "
                             "convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    shape, strides = layout(t)
    out_shape, out_strides, offset, d = [], [], 0, 0
    advanced = []  # (first dim in the view, dims covered, index tensor or mask)
    for pos, (kind, v) in enumerate(items):
        if kind == "int":
            if not -shape[d] <= v < shape[d]:
                raise IndexError(f"index {v} is out of bounds for dimension {pos} with size "
                                 f"{shape[d]}")
            offset += v % shape[d] * strides[d]
            d += 1
        elif kind == "slice":
            start, n, step = _slice(v, shape[d])
            offset += start * strides[d]
            out_shape.append(n)
            out_strides.append(strides[d] * step)
            d += 1
        elif kind == "ellipsis":
            n = ndim - consumed
            out_shape += shape[d:d + n]
            out_strides += strides[d:d + n]
            d += n
        elif kind in ("none", "bool"):  # a new size-1 dim, with unsqueeze's stride
            if kind == "bool":  # selects that dim's one element, or none of it
                advanced.append((len(out_shape), 1, _tensor([0] if v else [], dtype=dtypes.int64,
                                                             device=t._device)))
            out_shape.append(1)
            out_strides.append(shape[d] * strides[d] if d < ndim else 1)
        else:
            n = v.ndim if kind == "mask" else 1
            advanced.append((len(out_shape), n, v))
            out_shape += shape[d:d + n]
            out_strides += strides[d:d + n]
            d += n
    plan = _Plan()
    out_shape += shape[d:]
    out_strides += strides[d:]
    plan.view = t if out_shape == shape and out_strides == strides and not offset else \
        strided_view(t, out_shape, out_strides, offset)
    plan.entries = None
    if advanced:
        _advanced(plan, advanced)
    return plan


def _slice(s, size):
    """(start, length, step) of a slice over `size` elements; steps must be positive."""
    step = 1 if s.step is None else operator.index(s.step)
    if step <= 0:
        raise ValueError(f"step must be greater than zero, got slice step {step}; flip the tensor "
                         f"(t.flip(dim)) to reverse it")
    start, stop, _ = slice(s.start, s.stop, step).indices(size)
    return start, max(0, -(-(stop - start) // step)), step


def _advanced(plan, advanced):
    """Fill in the gather/scatter part of `plan`: masks become positions, indices broadcast."""
    view = plan.view
    shape = list(view._data.shape)
    b = backend(view._device)
    entries, index_shapes = [], []
    for first, n, idx in advanced:
        if idx._dtype in _INDEX:
            entries.append(((first,), idx._data))
        else:
            for k in range(n):
                if idx._data.shape[k] != shape[first + k]:
                    raise IndexError(f"The shape of the mask {list(idx.shape)} at index {k} does "
                                     f"not match the shape of the indexed tensor {shape} at index "
                                     f"{first + k}")
            entries.append((tuple(range(first, first + n)), b.indexing.flatnonzero(idx._data)))
        index_shapes.append(entries[-1][1].shape)
    try:
        block = list(broadcast_shapes(*index_shapes))
    except RuntimeError:
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with "
                         f"shapes {', '.join(str(list(s)) for s in index_shapes)}") from None
    covered = [d for dims, _ in entries for d in dims]
    if 0 not in block and any(shape[d] == 0 for d in covered):
        # no index is valid in an empty dim (torch checks it even when the result is empty)
        raise IndexError("index is out of bounds for dimension with size 0")
    if covered == list(range(covered[0], covered[-1] + 1)):  # adjacent: the block stays there
        pre, post = list(range(covered[0])), list(range(covered[-1] + 1, len(shape)))
    else:
        pre, post = [], [d for d in range(len(shape)) if d not in covered]
    plan.entries, plan.pre, plan.post = entries, pre, post
    plan.shape = [shape[d] for d in pre] + block + [shape[d] for d in post]


def _out_of_bounds(plan, bad):
    """torch's error, which numbers the dims by their index tensors (a mask counts its dims)."""
    k, value = bad
    d = plan.entries[k][0][0]
    number = sum(len(dims) for dims, _ in plan.entries[:k])
    return IndexError(f"index {value} is out of bounds for dimension {number} with size "
                      f"{plan.view._data.shape[d]}")


# -- __getitem__ / __setitem__ -----------------------------------------------------------------
def getitem(self, key):
    """self[key]: a view for basic indices, a copy when an index tensor or mask is involved."""
    if key.__class__ is int:  # the commonest key, without the general reading
        shape, strides = layout(self)
        if not shape:
            _plan(self, key)  # raises the 0-dim error
        if not -shape[0] <= key < shape[0]:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {shape[0]}")
        return strided_view(self, shape[1:], strides[1:], key % shape[0] * strides[0])
    if vector_key(self, key):
        return _take_rows(self, key)
    plan = _plan(self, key)
    if plan.entries is None:
        return plan.view
    out = allocate(plan.shape, self._dtype, self._device)
    bad = backend(self._device).indexing.index(out._data, plan.view._data, plan.entries,
                                               plan.pre, plan.post)
    if bad is not None:
        raise _out_of_bounds(plan, bad)
    return out


def vector_key(self, key):
    """Whether self[key] takes whole slices of dim 0 at the positions of an index vector on
    self's device (rows, embeddings, batches): the case `_take_rows` serves."""
    return key.__class__ is Tensor and key._dtype in _INDEX and key.ndim == 1 and self.ndim \
        and key._device == self._device


def _take_rows(self, index, negative=True):
    """self[index] for an index tensor of positions along dim 0 (rows, embeddings, batches):
    index.shape + self.shape[1:], what the general reading gives, without its plan (the plan
    cost most of a small x[index]). Negative positions count from the end when
    `negative`, else are out of range."""
    shape = self.shape
    n = index.numel()
    if not shape[0] and n:
        raise IndexError("index is out of bounds for dimension with size 0")
    out = allocate(index.shape + shape[1:], self._dtype, self._device)
    rows, positions = out._data, index._data
    if index.ndim != 1:  # the backend takes a vector (buffer views: no tensor reshapes)
        positions = index.contiguous()._data.reshape(-1)
        rows = rows.reshape((n,) + shape[1:])
    bad = backend(self._device).indexing.index(rows, self._data, [((0,), positions)], [],
                                               list(range(1, len(shape))), negative)
    if bad is not None:
        raise IndexError(f"index {bad[1]} is out of bounds for dimension 0 with size {shape[0]}")
    return out


def embedding(input, weight, padding_idx, scale_grad_by_freq):
    """The rows of `weight` (2-D) at the positions in `input` (int32/int64, any shape, on
    weight's device; checked by nn.functional.embedding): input.shape + (weight.shape[1],).
    Recorded as one op: its gradient leaves out padding_idx's row and, with
    scale_grad_by_freq, divides by how often each row was taken."""
    return _take_rows(weight, input, negative=False)  # (torch's: no negative positions)


def _value(self, value):
    """A tensor value on self's device, or a Python scalar checked for self's dtype."""
    if isinstance(value, Tensor):
        if value.ndim == 0:  # a 0-d value moves to self's device, as in torch
            return value.to(self._device)
        same_device("__setitem__", self, value)
        return value
    if isinstance(value, (bool, int, float, complex, np.bool_, np.number)):
        return check_fill_value(value, self._dtype)
    raise TypeError(f"can't assign a {type(value).__name__} to a {self._dtype} tensor; assign a "
                    f"number or a tensor (wrap data with jt.tensor(...))")


def _strip_leading_ones(value):
    """torch drops a value's leading size-1 dims before broadcasting it into an index result."""
    shape, strides = layout(value)
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return strided_view(value, shape[k:], strides[k:]) if k else value


def setitem(self, key, value):
    """self[key] = value: `value` (a number, or a tensor broadcast to the indexed shape) is
    converted to self's dtype; nothing is written unless every index is in range."""
    plan = _plan(self, key)
    value = _value(self, value)
    b = backend(self._device)
    if plan.entries is None:  # basic indices: write into the view
        if isinstance(value, Tensor):
            b.copy(plan.view._data, expand(_strip_leading_ones(value), plan.view.shape)._data)
        else:
            b.fill(plan.view._data, value)
        return
    value = _scatter_source(self, value, plan.shape)
    bad = b.indexing.index_put(plan.view._data, plan.entries, plan.pre, plan.post, value._data)
    if bad is not None:
        raise _out_of_bounds(plan, bad)


def _scatter_source(self, value, shape):
    """`value` as a tensor of self's dtype expanded to `shape`, sharing no memory with self."""
    if not isinstance(value, Tensor):
        scalar = allocate((), self._dtype, self._device)
        backend(self._device).fill(scalar._data, value)
        return expand(scalar, shape)
    value = _strip_leading_ones(value)
    if value._dtype is not self._dtype or shares_memory(value, self):
        value = value.to(self._dtype, copy=True)
    try:
        return expand(value, shape)
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                           f"broadcast to indexing result of shape {shape}") from None


# -- index ops ---------------------------------------------------------------------------------
def _index_tensor(index, fn, allowed, what):
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}(): argument 'index' must be a Tensor, got {type(index).__name__}")
    if index._dtype not in allowed:
        raise RuntimeError(f"{fn}(): Expected dtype {what} for index, got {index._dtype.name}; "
                           f"convert it with .long()")
    return index


def index_select(input, dim, index, *, out=None):
    """The entries of `input` at positions `index` (a vector) along `dim`."""
    _index_tensor(index, "index_select", _INDEX, "int32 or int64")
    if index.ndim > 1:
        raise IndexError(f"index_select(): Index is supposed to be a vector, got shape "
                         f"{list(index.shape)}")
    device = same_device("index_select", input, index)
    d = _dim(dim, input.ndim, "index_select")
    shape = list(input._data.shape)
    if not shape:
        if index._data.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{index._data.size} value(s)")
        return index_select(input.reshape(1), 0, index.reshape(1), out=out).reshape(())
    shape[d] = index._data.size
    result = allocate(shape, input._dtype, device)
    bad = backend(device).indexing.index(result._data, input._data, [((d,), index._data)],
                                         list(range(d)), list(range(d + 1, input.ndim)),
                                         negative=False)
    if bad is not None:
        raise RuntimeError(f"index_select(): index {bad[1]} is out of bounds for dimension {d} "
                           f"with size {input._data.shape[d]}")
    return _into(out, result, "index_select")


def _into(out, result, fn):
    """`result`, or `out` holding it (an error before this point left `out` untouched)."""
    if out is None:
        return result
    output(fn, out, result.shape, result._dtype, result._device)
    backend(out._device).copy(out._data, result._data)
    return out


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """out[i][j] = input[index[i][j]][j] for dim 0 (and so on): `index` has input's number of
    dims and is no larger than input outside `dim`."""
    _index_tensor(index, "gather", _INDEX, "int32/int64")
    device = same_device("gather", input, index)
    if max(index.ndim, 1) != max(input.ndim, 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input "
                           f"tensor (index has {index.ndim}, input has {input.ndim})")
    d = _dim(dim, input.ndim, "gather")
    src = input if input.ndim else input.reshape(1)
    idx = index if index.ndim else index.reshape(1)
    for k, (n, m) in enumerate(zip(idx._data.shape, src._data.shape, strict=False)):
        if k != d and n > m:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(index.shape)} to be no larger than self "
                               f"{list(input.shape)} apart from dimension {d}")
    if idx._dtype is not dtypes.int64:
        idx = idx.long()
    result = allocate(index.shape, input._dtype, device)
    bad = backend(device).indexing.gather(result.reshape(idx.shape)._data, src._data, d,
                                          idx._data)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                           f"{src._data.shape[d]}")
    return _into(out, result, "gather")


def take(input, index):
    """The elements of `input`, read as 1-D in C order, at positions `index` (any shape)."""
    _index_tensor(index, "take", (dtypes.int64,), "int64 (a long tensor)")
    device = same_device("take", input, index)
    result = allocate(index.shape, input._dtype, device)
    bad = backend(device).indexing.index(result._data, input._data,
                                         [(tuple(range(input.ndim)), index._data)], [], [])
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad[1]} on a tensor of "
                         f"{input._data.size} elements.")
    return result


# -- masks -------------------------------------------------------------------------------------
def _mask(mask, fn):
    if not isinstance(mask, Tensor) or mask._dtype is not dtypes.bool_:
        got = mask._dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"{fn} only supports boolean masks, but got mask with dtype {got}; "
                           f"compare to get one (e.g. mask != 0)")
    return mask


def _fill_value(self, value, fn):
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"{fn} only supports a 0-dimensional value tensor, but got tensor "
                               f"with {value.ndim} dimension(s).")
        value = value.item()
    return check_fill_value(value, self._dtype)


def masked_fill_(self, mask, value):
    """self[mask] = value in place; `mask` broadcasts to self's shape."""
    _mask(mask, "masked_fill_")
    same_device("masked_fill_", self, mask)
    value = _fill_value(self, value, "masked_fill_")
    shape = broadcast_shapes(mask.shape, self.shape)
    if list(shape) != list(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}; use the out-of-place masked_fill")
    backend(self._device).indexing.masked_fill(self._data, expand(mask, shape)._data, value)
    return self


def masked_fill(input, mask, value):
    """A copy of `input` (broadcast with `mask`) with `value` where `mask` is true."""
    _mask(mask, "masked_fill_")
    device = same_device("masked_fill", input, mask)
    value = _fill_value(input, value, "masked_fill_")
    shape = broadcast_shapes(mask.shape, input.shape)
    out = allocate(shape, input._dtype, device)
    b = backend(device)
    b.copy(out._data, expand(input, shape)._data)
    b.indexing.masked_fill(out._data, expand(mask, shape)._data, value)
    return out


def masked_select(input, mask, *, out=None):
    """The elements of `input` (broadcast with `mask`) where `mask` is true, as a 1-D copy."""
    if not isinstance(mask, Tensor) or mask._dtype is not dtypes.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask; compare to get one "
                           "(e.g. mask != 0)")
    device = same_device("masked_select", input, mask)
    shape = broadcast_shapes(mask.shape, input.shape)
    b = backend(device)
    positions = b.indexing.flatnonzero(expand(mask, shape)._data)
    result = allocate(positions.shape, input._dtype, device)
    b.indexing.index(result._data, expand(input, shape)._data,
                     [(tuple(range(len(shape))), positions)], [], [])
    return write_out("masked_select", out, result, exact=True)


def nonzero(input, *, out=None, as_tuple=False):
    """The coordinates of the non-zero elements: an int64 (n, ndim) tensor (torch's layout:
    each coordinate column contiguous), or with as_tuple one 1-D tensor per dim."""
    b = backend(input._device)
    data = input._data if not input._dtype.is_complex else input.detach().ne(0)._data
    positions = b.indexing.flatnonzero(data)
    shape = input._data.shape if input.ndim or not as_tuple else (1,)
    coords = allocate((len(shape), positions.size), dtypes.int64, input._device)
    rows = permute(coords, 1, 0)
    b.indexing.unravel(rows._data, positions, shape)
    if as_tuple:
        if out is not None:
            raise RuntimeError("nonzero(): as_tuple=True does not take out=; drop one of them")
        return unbind(coords)
    return write_out("nonzero", out, rows, exact=True)


TENSOR_METHODS = {
    "__getitem__": getitem, "__setitem__": setitem, "index_select": index_select,
    "gather": gather, "take": take, "masked_fill": masked_fill, "masked_fill_": masked_fill_,
    "masked_select": masked_select, "nonzero": nonzero,
}
