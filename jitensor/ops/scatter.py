"""Writes and adds at positions an index tensor names: scatter, scatter_add, index_add,
index_copy, index_fill, out of place and in place.

Each op computes, for every element it writes, its flat position in the target from the
index values and the element's own place (a few broadcast int64 ops, nothing of the target's
size), checks every index, then writes there through the backend's advanced `index_put` or
adds there through its `accumulate` (atomic adds on CUDA: positions may repeat). The target
is a fresh copy of the input, or, in place, self itself when it is contiguous (else a copy
that is then copied back): all checks pass before anything is written."""
import warnings

from .. import dtypes
from ..creation import allocate, arange, full, ones
from ..kernels.registry import backend
from ..kernels.scalar import elementwise as codes
from ..tensor import Tensor, check_fill_value, contiguous_format
from ._common import broadcast_shapes, same_device, shares_memory
from ._common import dim as _dim
from .elementwise import floor_divide, maximum, minimum, where
from .indexing import _index_tensor, _scatter_source
from .shape import as_strided, cat, expand, reshape, select
from .sort import argsort

__all__ = ["as_strided_scatter", "diagonal_scatter", "index_add", "index_copy", "index_fill",
           "index_put", "index_put_", "index_reduce", "masked_scatter", "put", "scatter",
           "scatter_add", "scatter_reduce", "select_scatter", "slice_scatter"]


def positions(t):
    """An int64 tensor of t's shape holding each element's flat (C-order) position."""
    return arange(t.numel(), dtype=dtypes.int64, device=t.device).reshape(t.shape)


def _flat_positions(fn, shape, d, index, error=RuntimeError, negative=False):
    """The flat C-order position in a tensor of `shape` of each element of `index` (int64,
    shape's number of dims): index's value along dim d, the element's own coordinates along
    the others. A value out of [0, shape[d]) (with `negative`, [-shape[d], shape[d]), counting
    from the end) raises `error`, naming the first."""
    n = shape[d] if shape else 1
    check, data = backend(index.device).elementwise.any_compare, index._data
    low = -n if negative else 0
    if check(codes.LT, data, low) or check(codes.GE, data, n):  # one pass each, no allocation
        bad = (index < low) | (index >= n)
        raise error(f"{fn}(): index {index[bad].reshape(-1)[0].item()} is out of bounds for "
                    f"dimension {d} with size {n}")
    if negative and check(codes.LT, data, 0):
        index = index + n * (index < 0)
    step, strides = 1, []
    for m in reversed(shape):
        strides.append(step)
        step *= m
    strides = strides[::-1] or [1]
    where = index * strides[d] if strides[d] != 1 else index
    for k, m in enumerate(index.shape):
        if k != d and m > 1:
            along = [-1 if j == k else 1 for j in range(index.ndim)]
            where = where + arange(m, dtype=dtypes.int64, device=index.device).reshape(along) \
                * strides[k]
    return where


def _target(input, inplace):
    """Where the result is written: self (in place, when contiguous) or a fresh copy."""
    if inplace and input._data.flags.c_contiguous:
        return input
    out = allocate(input._data.shape, input._dtype, input._device)
    backend(input._device).copy(out._data, input._data)
    return out


def _put(input, inplace, where, values, add=False):
    """input, or a copy, with the element at flat position where[i] = values[i] (+= with
    `add`); `values` is a tensor of where's shape and input's dtype, or a number."""
    out = _target(input, inplace)
    b = backend(out._device)
    pos = where.contiguous()._data.reshape(-1)
    if pos.size:
        if not isinstance(values, Tensor):
            values = allocate(where.shape, out._dtype, out._device).fill_(values)
        elif shares_memory(values, out):  # (x.index_copy_(0, i, x.flip(0)), say)
            values = values.clone()
        values = values.detach().contiguous()._data.reshape(-1)
        flat = out._data.reshape(-1)
        if add:
            b.indexing.accumulate(flat, pos, values)
        else:
            b.indexing.index_put(flat, [((0,), pos)], [], [], values)
    if inplace and out is not input:
        b.copy(input._data, out._data)
        return input
    return out


def _same_dtype(fn, input, source, name):
    if not isinstance(source, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got "
                        f"{type(source).__name__}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"{fn}(): expected {name} to have the dtype of self ({input._dtype}),"
                           f" got {source._dtype}; convert it with .to({input._dtype})")


def _scatter_positions(fn, input, dim, index, src):
    """Where each element of index's shape goes in input, checked as torch checks scatter."""
    _index_tensor(index, fn, (dtypes.int32, dtypes.int64), "int32 or int64")
    same_device(fn, input, index, *([src] if isinstance(src, Tensor) else []))
    if max(index.ndim, 1) != max(input.ndim, 1) or \
            isinstance(src, Tensor) and max(src.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError(f"{fn}(): index, self and src must have the same number of "
                           f"dimensions (index {index.ndim}, self {input.ndim}"
                           + (f", src {src.ndim})" if isinstance(src, Tensor) else ")"))
    d = _dim(dim, input.ndim, fn)
    if any(n > m for k, (n, m) in enumerate(zip(index.shape, input.shape, strict=False)) if k != d):
        raise RuntimeError(f"{fn}(): expected index {list(index.shape)} to be no larger than "
                           f"self {list(input.shape)} apart from dimension {d}")
    if isinstance(src, Tensor) and any(n > m for n, m in zip(index.shape, src.shape, strict=False)):
        raise RuntimeError(f"{fn}(): expected index {list(index.shape)} to be no larger than "
                           f"src {list(src.shape)} in every dimension")
    return _flat_positions(fn, input.shape, d, index.long())


def _within(src, index):
    """The part of src that index's shape covers (scatter reads only that)."""
    return src if src.shape == index.shape else src[tuple(slice(0, n) for n in index.shape)]


def _scatter(input, dim, index, src, value, inplace, reduce=None):
    if (src is None) == (value is None):
        raise TypeError("scatter(): give exactly one of src (a tensor or a number) and value")
    src = value if src is None else src
    if reduce is not None:  # torch's older reductions: scatter_add, or a product
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=3)
        else:  # a number: each position takes it once per index pointing there
            src = full(index.shape, check_fill_value(src, input._dtype), dtype=input._dtype,
                       device=input._device)
        if reduce == "add":
            return _scatter_add(input, dim, index, src, inplace)
        return _scatter_reduce(input, dim, index, src, "prod", True, inplace)
    if isinstance(src, Tensor):
        _same_dtype("scatter", input, src, "src")
    else:
        src = check_fill_value(src, input._dtype)
    where = _scatter_positions("scatter", input, dim, index, src)
    return _put(input, inplace, where, _within(src, index) if isinstance(src, Tensor) else src)


def _scatter_add(input, dim, index, src, inplace):
    _same_dtype("scatter_add", input, src, "src")
    where = _scatter_positions("scatter_add", input, dim, index, src)
    return _put(input, inplace, where, _within(src, index), add=True)


def _index_positions(fn, input, dim, index, source=None, allowed=(dtypes.int32, dtypes.int64),
                     negative=False, error=IndexError):
    """Where each element of source goes in input for the index_* ops (index: a vector; out of
    range raises `error`: torch's IndexError, RuntimeError for index_add)."""
    _index_tensor(index, fn, allowed, " or ".join(d.name for d in allowed))
    if index.ndim > 1:
        raise IndexError(f"{fn}(): index is supposed to be a vector, got shape "
                         f"{list(index.shape)}")
    same_device(fn, input, index, *([source] if source is not None else []))
    d = _dim(dim, input.ndim, fn)
    shape = list(input.shape) or [1]
    shape[d] = index.numel()
    if source is not None and list(source.shape or [1]) != shape:
        raise RuntimeError(f"{fn}(): source of shape {list(source.shape)} must have shape "
                           f"{shape} (self's, with dim {d} the index's length)")
    along = [-1 if k == d else 1 for k in range(len(shape))]
    return _flat_positions(fn, input.shape, d, index.long().reshape(along).expand(shape),
                           error, negative)


def _index_add(input, dim, index, source, alpha, inplace):
    _same_dtype("index_add", input, source, "source")
    where = _index_positions("index_add", input, dim, index, source, error=RuntimeError)
    if alpha != 1:  # (an integer self takes alpha as an integer, as in torch)
        source = source * (alpha if input._dtype.is_floating_point else int(alpha))
    return _put(input, inplace, where, source.reshape(where.shape), add=True)


def _index_copy(input, dim, index, source, inplace):
    _same_dtype("index_copy", input, source, "source")
    where = _index_positions("index_copy", input, dim, index, source)
    return _put(input, inplace, where, source.reshape(where.shape))


def _index_fill(input, dim, index, value, inplace):
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill(): only supports a 0-dimensional value tensor, "
                               f"got one with {value.ndim} dimension(s)")
        value = value.item()
    value = check_fill_value(value, input._dtype)
    where = _index_positions("index_fill", input, dim, index, allowed=(dtypes.int64,),
                             negative=True)  # (torch's index_fill counts from the end too)
    return _put(input, inplace, where, value)


# -- the public forms (in place: into self; everything is checked before self changes) -------
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of input with out[index[i][j]][j] = src[i][j] (for dim 0, and so on); `src` is
    a tensor of input's dtype or a number (also `value=`). Where index repeats a position,
    which write lands is unspecified, as in torch. `reduce` ("add" or "multiply", torch's
    older form of scatter_reduce) adds or multiplies src in instead."""
    return _scatter(input, dim, index, src, value, False, reduce)


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    return _scatter(self, dim, index, src, value, True, reduce)


def scatter_add(input, dim, index, src):
    """A copy of input with src[i][j] added to out[index[i][j]][j] (for dim 0, and so on);
    repeated positions add up."""
    return _scatter_add(input, dim, index, src, False)


def scatter_add_(self, dim, index, src):
    return _scatter_add(self, dim, index, src, True)


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of input with alpha * source[i] added along `dim` at position index[i];
    repeated indices add up."""
    return _index_add(input, dim, index, source, alpha, False)


def index_add_(self, dim, index, source, *, alpha=1):
    return _index_add(self, dim, index, source, alpha, True)


def index_copy(input, dim, index, source):
    """A copy of input with source[i] written along `dim` at position index[i]."""
    return _index_copy(input, dim, index, source, False)


def index_copy_(self, dim, index, source):
    return _index_copy(self, dim, index, source, True)


def index_fill(input, dim, index, value):
    """A copy of input with `value` (a number or a 0-d tensor) along `dim` at the positions
    in index."""
    return _index_fill(input, dim, index, value, False)


def index_fill_(self, dim, index, value):
    return _index_fill(self, dim, index, value, True)


# -- index_put, put, masked_scatter ------------------------------------------------------------
def _index_put(input, indices, values, accumulate, inplace):
    fn = "index_put_" if inplace else "index_put"
    if not isinstance(indices, (tuple, list)) or \
            not all(isinstance(i, Tensor) for i in indices):
        raise TypeError(f"{fn}(): argument 'indices' must be a tuple of Tensors (index a dim "
                        f"wholly with t[:, i] = v instead of None)")
    if not isinstance(values, Tensor):
        raise TypeError(f"{fn}(): argument 'values' must be Tensor, not {type(values).__name__}")
    if values._dtype is not input._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input._dtype.scalar_name} for the destination and "
                           f"{values._dtype.scalar_name} for the source.")
    same_device(fn, input, values, *indices)
    where = positions(input)[tuple(indices)]  # (checks the indices as t[indices] does)
    return _put(input, inplace, where, _scatter_source(input, values, list(where.shape)),
                add=accumulate)


def index_put(input, indices, values, accumulate=False):
    """A copy of input with input[indices] = values (`indices` a tuple of index tensors or
    masks, values broadcast); with `accumulate`, values are added, repeated positions adding
    up (in order on the CPU: the same bits at any thread count)."""
    return _index_put(input, indices, values, accumulate, False)


def index_put_(self, indices, values, accumulate=False):
    return _index_put(self, indices, values, accumulate, True)


# recorded as index_put (the in-place wrapper looks this name up when it runs)
index_put_.out_of_place = lambda self, indices, values, accumulate=False: \
    index_put(self, indices, values, accumulate)


def _into_self(self, result):
    """Write `result` (self's shape) into self: the in-place forms of the composed ops."""
    backend(self._device).copy(self._data, result._data)
    return self


def put(input, index, source, accumulate=False):
    """A copy of input with the elements at the flat (C-order) positions `index` (int64,
    negatives counting from the end) set to source's (added with `accumulate`)."""
    _index_tensor(index, "put_", (dtypes.int64,), "Long")
    _same_dtype("put_", input, source, "source")
    same_device("put_", input, index, source)
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    n = input.numel()
    index = reshape(index, -1)
    bad = (index < -n) | (index >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {index[bad][0].item()} on a "
                         f"tensor of {n} elements.")
    index = where(index < 0, index + n, index)
    return reshape(index_put(reshape(input, -1), (index,), reshape(source, -1), accumulate),
                   input.shape)


def put_(self, index, source, accumulate=False):
    return _into_self(self, put(self, index, source, accumulate))


def masked_scatter(input, mask, source):
    """A copy of input (broadcast with mask) with source's elements, in order, where mask
    holds."""
    if not isinstance(mask, Tensor) or mask._dtype is not dtypes.bool_:
        got = mask._dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_scatter_only supports boolean masks, but got mask with dtype "
                           f"{got}")
    _same_dtype("masked_scatter", input, source, "source")
    same_device("masked_scatter", input, mask, source)
    size = list(broadcast_shapes(input.shape, mask.shape))
    mask = expand(mask, size)
    n = int(mask.sum().item())
    if source.numel() < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return index_put(expand(input, size), (mask,), reshape(source, -1)[:n])


def masked_scatter_(self, mask, source):
    if isinstance(mask, Tensor) and list(broadcast_shapes(self.shape, mask.shape)) != \
            list(self.shape):
        raise RuntimeError(f"masked_scatter_: mask of shape {list(mask.shape)} does not "
                           f"broadcast to self's shape {list(self.shape)}")
    return _into_self(self, masked_scatter(self, mask, source))


# -- scatter_reduce, index_reduce ----------------------------------------------------------------
_REDUCE = ("sum", "prod", "mean", "amax", "amin")
_COMBINE = {"prod": lambda a, b: a * b, "amax": maximum, "amin": minimum}


def _segment_reduce(pos, values, reduce):
    """(positions, reductions): each distinct position of `pos` once with the reduction of
    its values, by a log-step scan over the values sorted by position (a fixed tree of
    elementwise ops: the same bits on any device and at any thread count)."""
    order = argsort(pos, stable=True)
    pos, values = pos[order], values[order]
    combine, n, k = _COMBINE[reduce], pos.numel(), 1
    while k < n:
        same = pos[k:] == pos[:-k]
        values = cat([values[:k], where(same, combine(values[:-k], values[k:]), values[k:])])
        k *= 2
    last = cat([pos[1:] != pos[:-1], ones(1, dtype=dtypes.bool_, device=pos.device)])
    return pos[last], values[last]


def _reduce_at(input, inplace, where_, values, reduce, include_self):
    """input, or a copy, with the values at flat positions where_ reduced into it."""
    out = _target(input, False)
    pos, values = where_.reshape(-1), values.reshape(-1)
    if pos.numel() and reduce in ("sum", "mean"):
        if not include_self:
            _put(out, True, pos, 0)
        _put(out, True, pos, values, add=True)
        if reduce == "mean":  # (untouched positions are divided by 1)
            count = ones(out.shape, dtype=out.dtype, device=out.device)
            if not include_self:
                _put(count, True, pos, 0)
            _put(count, True, pos, 1, add=True)
            count = where(count == 0, 1, count)
            out = out / count if out._dtype.is_floating_point else floor_divide(out, count)
    elif pos.numel():
        at, reduced = _segment_reduce(pos, values, reduce)
        if include_self:
            reduced = _COMBINE[reduce](out.reshape(-1)[at], reduced)
        _put(out, True, at, reduced)
    return _into_self(input, out) if inplace else out


def _check_reduce(reduce, allowed, message):
    if reduce not in allowed:
        raise RuntimeError(message + f", got {reduce}" if "scatter" in message else
                           message + f" but got {reduce}.")


def _scatter_reduce(input, dim, index, src, reduce, include_self, inplace):
    _check_reduce(reduce, _REDUCE, "reduce argument must be either sum, prod, mean, amax or amin")
    _same_dtype("scatter_reduce", input, src, "src")
    where_ = _scatter_positions("scatter_reduce", input, dim, index, src)
    return _reduce_at(input, inplace, where_, _within(src, index), reduce, include_self)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of input with src[i][j] reduced into out[index[i][j]][j] (for dim 0, and so on)
    by `reduce` ('sum', 'prod', 'mean', 'amax' or 'amin'), input's own values taking part
    unless include_self=False. Deterministic: the same bits at any thread count."""
    return _scatter_reduce(input, dim, index, src, reduce, include_self, False)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return _scatter_reduce(self, dim, index, src, reduce, include_self, True)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """A copy of input with source's slices reduced along `dim` into the positions index[i]
    by `reduce` ('prod', 'mean', 'amax' or 'amin'): scatter_reduce with the index spread over
    source's shape."""
    _check_reduce(reduce, _REDUCE[1:], "index_reduce(): Expected reduce to be one of prod, "
                                       "mean, amax or amin")
    _same_dtype("index_reduce", input, source, "source")
    _index_positions("index_reduce", input, dim, index, source)  # (index_reduce's checks)
    d = _dim(dim, input.ndim, "index_reduce")
    if not input.ndim:
        return scatter_reduce(input, 0, reshape(index, ()), reshape(source, ()), reduce,
                              include_self=include_self)
    along = [-1 if k == d else 1 for k in range(input.ndim)]
    spread = expand(reshape(index, along), source.shape).long()
    return scatter_reduce(input, d, spread, source, reduce, include_self=include_self)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return _into_self(self, index_reduce(self, dim, index, source, reduce,
                                         include_self=include_self))


# -- the *_scatter ops: src written into a view of a copy of input -------------------------------
def _view_scatter(input, src, view):
    out = input.clone(memory_format=contiguous_format)
    part = view(out)
    if not isinstance(src, Tensor):
        raise TypeError(f"argument 'src' must be Tensor, not {type(src).__name__}")
    if part.shape != src.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(part.shape)}")
    part.copy_(src)
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with its diagonal (as input.diagonal(offset, dim1, dim2)) set to src."""
    from . import matrix  # (matrix imports this module)
    return _view_scatter(input, src, lambda t: matrix.diagonal(t, offset, dim1, dim2))


def select_scatter(input, src, dim, index):
    """A copy of input with input.select(dim, index) set to src."""
    return _view_scatter(input, src, lambda t: select(t, dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with the slice start:end:step of dim `dim` set to src."""
    d = _dim(dim, input.ndim, "slice_scatter")
    return _view_scatter(input, src, lambda t: t[(slice(None),) * d + (slice(start, end, step),)])


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input (contiguous, its own storage) with its view as_strided(size, stride,
    storage_offset) set to src."""
    return _view_scatter(input, src, lambda t: as_strided(t, size, stride, storage_offset))


def fill_diagonal(input, fill_value, wrap=False):
    """fill_diagonal_ on a copy (what the in-place form records under grad)."""
    return fill_diagonal_(input.clone(), fill_value, wrap)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (all indices equal) with fill_value; with `wrap`, a tall matrix's
    diagonal starts again after every width+1 rows, as torch's."""
    shape = list(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    h, w = shape[0], shape[1]
    if wrap and len(shape) == 2 and h > w:
        k = arange(-(-h * w // (w + 1)), device=self.device)  # flat positions k * (w + 1)
        self[k + k // w, k % w] = fill_value
    else:
        k = arange(min(shape), device=self.device)
        self[(k,) * len(shape)] = fill_value
    return self


# their in-place forms run them as they are (autograd/wrap.py)
COMPOSED = ("put", "masked_scatter", "index_reduce", "fill_diagonal")
TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update({name + "_": globals()[name + "_"] for name in __all__
                       if name + "_" in globals()}, fill_diagonal_=fill_diagonal_)
