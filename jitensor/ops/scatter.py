"""Writes and adds at positions an index tensor names: scatter, scatter_add, index_add,
index_copy, index_fill, out of place and in place.

Each op computes, for every element it writes, its flat position in the target from the
index values and the element's own place (a few broadcast int64 ops, nothing of the target's
size), checks every index, then writes there through the backend's advanced `index_put` or
adds there through its `accumulate` (atomic adds on CUDA: positions may repeat). The target
is a fresh copy of the input, or, in place, self itself when it is contiguous (else a copy
that is then copied back): all checks pass before anything is written."""
from .. import dtypes
from ..creation import allocate, arange
from ..kernels.registry import backend
from ..kernels.scalar import elementwise as codes
from ..tensor import Tensor, check_fill_value
from ._common import dim as _dim
from ._common import same_device, shares_memory
from .indexing import _index_tensor

__all__ = ["index_add", "index_copy", "index_fill", "scatter", "scatter_add"]


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


def _scatter(input, dim, index, src, value, inplace):
    if (src is None) == (value is None):
        raise TypeError("scatter(): give exactly one of src (a tensor or a number) and value")
    src = value if src is None else src
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
def scatter(input, dim, index, src=None, *, value=None):
    """A copy of input with out[index[i][j]][j] = src[i][j] (for dim 0, and so on); `src` is
    a tensor of input's dtype or a number (also `value=`). Where index repeats a position,
    which write lands is unspecified, as in torch."""
    return _scatter(input, dim, index, src, value, False)


def scatter_(self, dim, index, src=None, *, value=None):
    return _scatter(self, dim, index, src, value, True)


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


TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update({name + "_": globals()[name + "_"] for name in __all__})
