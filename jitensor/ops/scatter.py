"""Writes and adds at positions an index tensor names: scatter, scatter_add, index_add,
index_copy, index_fill, out of place and in place.

Each op finds, for every element it writes, its flat position in a fresh copy of the input (a
gather or an index_select of the copy's positions, which also checks every index), then
writes there through the backend's advanced `index_put`, or adds there through its
`accumulate` (atomic adds on CUDA: positions may repeat). The in-place forms compute the
result and then copy it into self, so an error leaves self as it was."""
from .. import dtypes
from ..backends.registry import backend
from ..creation import allocate, arange
from ..tensor import Tensor, check_fill_value
from ._common import dim as _dim, in_place, same_device
from .indexing import _index_tensor, gather, index_select

__all__ = ["index_add", "index_copy", "index_fill", "scatter", "scatter_add"]


def positions(t):
    """An int64 tensor of t's shape holding each element's flat (C-order) position."""
    return arange(t.numel(), dtype=dtypes.int64, device=t.device).reshape(t.shape)


def _copy_of(input):
    out = allocate(input._data.shape, input._dtype, input._device)
    backend(input._device).copy(out._data, input._data)
    return out


def _put(out, where, values, add=False):
    """out's element at flat position where[i] = values[i] (+= with `add`); `values` is a
    tensor of where's shape and out's dtype, or a number."""
    b = backend(out._device)
    pos = where.contiguous()._data.reshape(-1)
    if pos.size:
        if not isinstance(values, Tensor):
            values = allocate(where.shape, out._dtype, out._device).fill_(values)
        values = values.detach().contiguous()._data.reshape(-1)
        flat = out._data.reshape(-1)
        if add:
            b.indexing.accumulate(flat, pos, values)
        else:
            b.indexing.index_put(flat, [((0,), pos)], [], [], values)
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
    _index_tensor(index, fn, (dtypes.int64,), "int64")
    same_device(fn, input, index, *([src] if isinstance(src, Tensor) else []))
    if max(index.ndim, 1) != max(input.ndim, 1) or \
            isinstance(src, Tensor) and max(src.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError(f"{fn}(): index, self and src must have the same number of "
                           f"dimensions (index {index.ndim}, self {input.ndim}"
                           + (f", src {src.ndim})" if isinstance(src, Tensor) else ")"))
    d = _dim(dim, input.ndim, fn)
    if isinstance(src, Tensor) and any(n > m for n, m in zip(index.shape, src.shape)):
        raise RuntimeError(f"{fn}(): expected index {list(index.shape)} to be no larger than "
                           f"src {list(src.shape)} in every dimension")
    return gather(positions(input), d, index)  # checks the rest: sizes and index values


def _within(src, index):
    """The part of src that index's shape covers (scatter reads only that)."""
    return src if src.shape == index.shape else src[tuple(slice(0, n) for n in index.shape)]


def scatter(input, dim, index, src=None, *, value=None):
    """A copy of input with out[index[i][j]][j] = src[i][j] (for dim 0, and so on); `src` is
    a tensor of input's dtype or a number (also `value=`). Where index repeats a position,
    which write lands is unspecified, as in torch."""
    if (src is None) == (value is None):
        raise TypeError("scatter(): give exactly one of src (a tensor or a number) and value")
    src = value if src is None else src
    if isinstance(src, Tensor):
        _same_dtype("scatter", input, src, "src")
    else:
        src = check_fill_value(src, input._dtype)
    where = _scatter_positions("scatter", input, dim, index, src)
    return _put(_copy_of(input), where, _within(src, index) if isinstance(src, Tensor) else src)


def scatter_add(input, dim, index, src):
    """A copy of input with src[i][j] added to out[index[i][j]][j] (for dim 0, and so on);
    repeated positions add up."""
    _same_dtype("scatter_add", input, src, "src")
    where = _scatter_positions("scatter_add", input, dim, index, src)
    return _put(_copy_of(input), where, _within(src, index), add=True)


def _index_positions(fn, input, dim, index, source=None):
    """Where each element of source goes in input for the index_* ops (index: a vector)."""
    _index_tensor(index, fn, (dtypes.int32, dtypes.int64), "int32 or int64")
    if index.ndim > 1:
        raise IndexError(f"{fn}(): index is supposed to be a vector, got shape "
                         f"{list(index.shape)}")
    same_device(fn, input, index, *([source] if source is not None else []))
    where = index_select(positions(input), _dim(dim, input.ndim, fn), index)
    if source is not None and list(source.shape) != list(where.shape):
        raise RuntimeError(f"{fn}(): source of shape {list(source.shape)} must have shape "
                           f"{list(where.shape)} (self's, with dim {dim} the index's length)")
    return where


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of input with alpha * source[i] added along `dim` at position index[i];
    repeated indices add up."""
    _same_dtype("index_add", input, source, "source")
    where = _index_positions("index_add", input, dim, index, source)
    if alpha != 1:
        source = (source * alpha).to(input._dtype)
    return _put(_copy_of(input), where, source, add=True)


def index_copy(input, dim, index, source):
    """A copy of input with source[i] written along `dim` at position index[i]."""
    _same_dtype("index_copy", input, source, "source")
    return _put(_copy_of(input), _index_positions("index_copy", input, dim, index, source),
                source)


def index_fill(input, dim, index, value):
    """A copy of input with `value` (a number or a 0-d tensor) along `dim` at the positions
    in index."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill(): only supports a 0-dimensional value tensor, "
                               f"got one with {value.ndim} dimension(s)")
        value = value.item()
    value = check_fill_value(value, input._dtype)
    return _put(_copy_of(input), _index_positions("index_fill", input, dim, index), value)


TENSOR_METHODS = {name: globals()[name] for name in __all__}
TENSOR_METHODS.update({name + "_": in_place(globals()[name]) for name in __all__})
