"""Views and shape ops with torch's semantics: views share memory with their base (writes show
both ways), carry torch's strides, and never have negative strides. Each view is computed here
as (sizes, strides, offset) in elements and built by the backend's `as_strided`, except
permutations, which are the buffer's own transpose; cat, stack and flip copy through the
backend's copy kernels. The rest of torch's shape functions (the stacks and splits, meshgrid,
rot90, select, repeat_interleave, take_along_dim, block_diag, ...) are composed from those and
from gather/index_select, so they record their gradients and run on every device without
kernels of their own."""
import copy
import inspect
import math
import operator
import warnings
from functools import reduce

import numpy as np

from .. import dtypes
from ..creation import allocate, ones, zeros
from ..kernels.registry import backend
from ..tensor import Size, Tensor, _wrap, contiguous_format, preserve_format
from ._common import broadcast_shapes as _broadcast_shapes
from ._common import check_out, same_device, shares_memory, write_each, write_out
from ._common import dim as _dim
from ._common import dims as _dims

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
           "broadcast_tensors", "broadcast_to", "cartesian_prod", "cat", "chunk", "clone",
           "column_stack", "concat", "concatenate", "dsplit", "dstack", "flatten", "flip",
           "fliplr", "flipud", "hsplit", "hstack", "meshgrid", "moveaxis", "movedim", "narrow",
           "numel", "permute", "ravel", "repeat_interleave", "reshape", "roll", "rot90",
           "row_stack", "select", "split", "squeeze", "stack", "swapaxes", "swapdims", "t",
           "take_along_dim", "tensor_split", "tile", "transpose", "unbind", "unflatten",
           "unsqueeze", "vsplit", "vstack", "as_strided", "as_strided_", "adjoint", "narrow_copy",
           "split_with_sizes", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"]

VIEW_INCOMPATIBLE = ("view size is not compatible with input tensor's size and stride (at least "
                     "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                     "instead.")


# -- metadata ----------------------------------------------------------------------------------
def layout(t):
    """(sizes, strides in elements) of `t` as lists."""
    size = t._dtype.itemsize
    return list(t._data.shape), [s // size for s in t._data.strides]


def strided_view(t, shape, strides, offset=0):
    """A tensor sharing `t`'s memory with the given sizes, strides and offset (in elements,
    offset from t's first element)."""
    buf = backend(t._device).indexing.as_strided(t._data, shape, strides, offset)
    return _wrap(buf, t._dtype, t._device)


def _ints(args, fn, name="size"):
    """A list of ints from varargs or one sequence (torch accepts both)."""
    seq = args[0] if len(args) == 1 else args
    if (seq.__class__ is tuple or seq.__class__ is Size) and \
            all(a.__class__ is int for a in seq):  # the usual case, in every backward: fast
        return list(seq)
    if len(args) == 1 and not isinstance(args[0], int) and hasattr(args[0], "__iter__") \
            and not isinstance(args[0], Tensor):
        args = tuple(args[0])
    out = []
    for pos, a in enumerate(args):
        if isinstance(a, bool) or not hasattr(a, "__index__") or \
                isinstance(a, Tensor) and (a._dtype.is_floating_point or a.ndim):
            raise TypeError(f"{fn}(): argument '{name}' must be a tuple of ints, but found "
                            f"element of type {type(a).__name__} at pos {pos}: {a!r}")
        out.append(operator.index(a))
    return out




def _infer_size(shape, numel):
    """`shape` with its one -1 replaced so that it holds `numel` elements (torch's inferSize)."""
    infer, known = None, 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError(f"only one dimension can be inferred, got shape {shape}")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
        else:
            known *= s
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is not None:
            if known == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} "
                                   f"because the unspecified dimension size -1 can be any value "
                                   f"and is ambiguous")
            shape = shape[:infer] + [numel // known] + shape[infer + 1:]
        return shape
    raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")


def _view_strides(old_shape, old_strides, shape):
    """Strides for viewing (old_shape, old_strides) as `shape` without moving data, or None
    when some new dim would span two non-contiguous chunks (torch's computeStride)."""
    if not old_shape:
        return [1] * len(shape)
    numel = reduce(operator.mul, old_shape, 1)
    if numel == 0:
        if old_shape == shape:
            return list(old_strides)
        strides, step = [0] * len(shape), 1
        for d in range(len(shape) - 1, -1, -1):
            strides[d] = step
            step *= max(shape[d], 1)
        return strides
    strides = [0] * len(shape)
    view_d = len(shape) - 1
    base = old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        # a chunk of old dims ends here when dim d-1 does not continue it contiguously
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                strides[view_d] = view_numel * base
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base = old_strides[d - 1]
                tensor_numel = view_numel = 1
    return strides if view_d == -1 else None


def _canonical(data):
    """Whether data's strides are C order's own, a dim of size 1 included."""
    step = data.itemsize
    for n, stride in zip(reversed(data.shape), reversed(data.strides), strict=True):
        if stride != step:
            return False
        step *= n
    return True


def _dense_view(t, shape):
    """A CPU tensor viewed in `shape` by NumPy's reshape, several times faster than working
    out the strides: always a view of a C-contiguous buffer; of a strided one, where NumPy
    finds one and no size is 1 (the strides of such a view are then torch's, the only ones
    possible; a dim of size 1 may take any stride, and NumPy's choice is not torch's). None
    for any other tensor or shape."""
    data = t._data
    if data.__class__ is not np.ndarray or not data.size:
        return None
    if 1 in data.shape:  # NumPy calls contiguous what has any strides in its dims of size 1,
        # and views that as contiguous; torch's view keeps such strides
        return _wrap(data.reshape(shape), t._dtype, t._device) if _canonical(data) else None
    if data.flags.c_contiguous:
        return _wrap(data.reshape(shape), t._dtype, t._device)
    if 1 in shape:
        return None
    try:
        return _wrap(data.reshape(shape, copy=False), t._dtype, t._device)
    except ValueError:  # (no view: the general path raises torch's error)
        return None


def _is_dtype(x):
    """Whether view()'s one argument names a dtype rather than a size."""
    return isinstance(x, (dtypes.dtype, str)) or type(x).__module__ == "torch" or \
        isinstance(x, type) or hasattr(x, "itemsize") and not hasattr(x, "__index__")


# -- view / reshape ----------------------------------------------------------------------------
def view(self, *shape):
    """A view with a new shape (one size may be -1), or with dtype `view(dtype)`; raises when
    the strides cannot express the new shape (use reshape, which copies then)."""
    if len(shape) == 1 and _is_dtype(shape[0]):
        return _view_dtype(self, dtypes.to_dtype(shape[0]))
    shape = _infer_size(_ints(shape, "view"), self._data.size)
    fast = _dense_view(self, shape)
    if fast is not None:
        return fast
    old_shape, old_strides = layout(self)
    strides = _view_strides(old_shape, old_strides, shape)
    if strides is None:
        raise RuntimeError(VIEW_INCOMPATIBLE)
    return strided_view(self, shape, strides)


def _view_dtype(self, dtype):
    """Reinterpret the memory as `dtype`; a different element size rescales the last dim,
    which must be contiguous (torch's rules)."""
    old, new = self._dtype, dtype
    if old.itemsize != new.itemsize:
        what = f"to view {old.name} as {new.name} (different element sizes)"
        shape, strides = layout(self)
        if not shape:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if strides[-1] != 1 and shape[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        if new.itemsize > old.itemsize:
            ratio = new.itemsize // old.itemsize
            if shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                                   f"{shape[-1]}")
            if any(s % ratio for s in strides[:-1]):
                raise RuntimeError(f"self.stride(i) must be divisible by {ratio} for all i < -1 "
                                   f"{what}; got strides {strides}")
    buf = backend(self._device).indexing.view_dtype(self._data, new.np)
    return _wrap(buf, new, self._device)


def view_as(self, other):
    return view(self, other.shape)


def reshape(input, *shape):
    """`input` with a new shape: a view when the strides allow it, else a contiguous copy."""
    shape = _infer_size(_ints(shape, "reshape", "shape"), input._data.size)
    fast = _dense_view(input, shape)
    if fast is not None:
        return fast
    old_shape, old_strides = layout(input)
    strides = _view_strides(old_shape, old_strides, shape)
    if strides is None:
        input = input.contiguous()
        strides = _view_strides(*layout(input), shape)
    return strided_view(input, shape, strides)


def reshape_as(self, other):
    return reshape(self, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    """Dims start_dim..end_dim merged into one (a view when possible, as reshape)."""
    if input.ndim == 0:
        return reshape(input, 1)
    start, end = _dim(start_dim, input.ndim, "flatten"), _dim(end_dim, input.ndim, "flatten")
    if start > end:
        raise RuntimeError(f"flatten() has invalid args: start_dim cannot come after end_dim "
                           f"(got start_dim={start_dim}, end_dim={end_dim})")
    if start == end:
        return input
    shape = list(input._data.shape)
    merged = reduce(operator.mul, shape[start:end + 1], 1)
    return reshape(input, shape[:start] + [merged] + shape[end + 1:])


def ravel(input):
    """`input` as 1-D: a view when it is contiguous, else a copy (torch tests contiguity, not
    whether the strides happen to allow a flat view, as reshape does)."""
    return view(input.contiguous(), -1)


def unflatten(input, dim, sizes):
    """Dim `dim` split into `sizes` (one may be -1): always a view."""
    d = _dim(dim, input.ndim, "unflatten")
    sizes = _ints((sizes,), "unflatten", "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input._data.shape[d]
    try:
        sizes = _infer_size(sizes, n)
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of "
                           f"dim {dim} ({n}) in the input tensor") from None
    shape = list(input._data.shape)
    return view(input, shape[:d] + sizes + shape[d + 1:])


# -- dims reordered ----------------------------------------------------------------------------
def permute(input, *dims_):
    """A view with the dims in the order `dims_`."""
    order = _ints(dims_, "permute", "dims")
    if len(order) != input.ndim:
        raise RuntimeError(f"permute(): number of dims don't match in permute: input.dim() = "
                           f"{input.ndim} is not equal to len(dims) = {len(order)}")
    order = [_dim(d, input.ndim, "permute") for d in order]
    if len(set(order)) != len(order):
        raise RuntimeError(f"permute(): duplicate dims are not allowed, got {_ints(dims_, '')}")
    return _reordered(input, order)


def _reordered(input, order):
    """The view of `input` with its dims in `order` (a permutation): the buffer's own
    transpose, the same strides as_strided would give at a fifth of the cost."""
    return _wrap(input._data.transpose(order), input._dtype, input._device)


def transpose(input, dim0, dim1):
    """A view with dims `dim0` and `dim1` swapped (a 0-d tensor accepts 0 and -1)."""
    if input.__class__ is not Tensor and getattr(input, "is_sparse", False):
        from . import sparse
        return sparse.transpose(input, dim0, dim1)
    n = input._data.ndim
    a, b = _dim(dim0, n, "transpose"), _dim(dim1, n, "transpose")
    order = list(range(n))
    if n:
        order[a], order[b] = b, a
    return _reordered(input, order)


swapaxes = swapdims = transpose


def t(input):
    """transpose(0, 1) for 2-D tensors; 0-D and 1-D tensors come back as views of themselves."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D; use transpose(dim0, dim1) or mT")
    return transpose(input, 0, -1)


def _T(self):
    return _reordered(self, list(range(self.ndim - 1, -1, -1)))


def _mT(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return transpose(self, -2, -1)


def movedim(input, source, destination):
    """A view with dims `source` moved to positions `destination`, the others keeping order."""
    src = _ints((source,), "movedim", "source") if not isinstance(source, int) else [source]
    dst = _ints((destination,), "movedim", "destination") \
        if not isinstance(destination, int) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [_dim(d, input.ndim, "movedim") for d in src]
    dst = [_dim(d, input.ndim, "movedim") for d in dst]
    for name, ds in (("source", src), ("destination", dst)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({ds})")
    order = [-1] * input.ndim
    for s, d in zip(src, dst, strict=False):
        order[d] = s
    rest = iter(d for d in range(input.ndim) if d not in src)
    return permute(input, [d if d >= 0 else next(rest) for d in order])


moveaxis = movedim


# -- size-1 dims and broadcasting --------------------------------------------------------------
def unsqueeze(input, dim):
    """A view with a size-1 dim inserted at `dim` (torch's stride for it)."""
    d = _dim(dim, input.ndim + 1, "unsqueeze")
    shape, strides = layout(input)
    stride = shape[d] * strides[d] if d < input.ndim else 1
    return strided_view(input, shape[:d] + [1] + shape[d:], strides[:d] + [stride] + strides[d:])


def squeeze(input, dim=None):
    """A view without the size-1 dims among `dim` (all dims when None)."""
    shape, strides = layout(input)
    drop = [d for d in _dims(dim, input.ndim, "squeeze") if d < input.ndim and shape[d] == 1]
    keep = [d for d in range(input.ndim) if d not in drop]
    return strided_view(input, [shape[d] for d in keep], [strides[d] for d in keep])


def _expanded(input, sizes):
    """(sizes, strides) of `input` expanded to `sizes` (torch's inferExpandGeometry)."""
    shape, strides = layout(input)
    n, ndim = len(sizes), len(shape)
    if n < ndim:
        raise RuntimeError(f"expand({input._dtype.name} tensor of shape {shape}, size={sizes}): "
                           f"the number of sizes provided ({n}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({ndim})")
    out_shape, out_strides = [0] * n, [0] * n
    for i in range(n - 1, -1, -1):
        d = ndim - n + i
        size = shape[d] if d >= 0 else 1
        stride = strides[d] if d >= 0 else (out_shape[i + 1] * out_strides[i + 1]
                                            if i + 1 < n else 0)
        target = sizes[i]
        if target == -1:
            if d < 0:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            target = size
        if size != target:
            if size != 1:
                raise RuntimeError(f"The expanded size of the tensor ({target}) must match the "
                                   f"existing size ({size}) at non-singleton dimension {i}.  "
                                   f"Target sizes: {sizes}.  Tensor sizes: {shape}")
            if target < 0:
                raise RuntimeError(f"expand: the requested size {target} at dim {i} must be "
                                   f"non-negative (or -1 to keep a size)")
            size, stride = target, 0
        out_shape[i], out_strides[i] = size, stride
    return out_shape, out_strides


def expand(self, *sizes):
    """A view with size-1 dims repeated (stride 0) to `sizes`; -1 keeps a size."""
    return strided_view(self, *_expanded(self, _ints(sizes, "expand")))


def expand_as(self, other):
    return expand(self, other.shape)


def broadcast_to(input, size):
    """`input` expanded to `size` (a view)."""
    return expand(input, size)


def broadcast_tensors(*tensors):
    """Views of `tensors` expanded to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def broadcast_shapes(*shapes):
    """The shape that tensors of `shapes` broadcast to, as a Size. These are torch's Python-level
    rules, not the tensor ops' (_common.broadcast_shapes): an int stands for a 1-D shape, None
    is skipped, and the errors name the argument that does not fit."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for s in shapes:
        if not isinstance(s, (list, tuple)):
            raise RuntimeError(  # noqa: TRY004 (torch's exception type)
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
        for k, n in enumerate(s):
            if not isinstance(n, int):
                raise TypeError(f"broadcast_shapes(): a shape takes an iterable of 'int' (item {k} "
                                f"of {s} is '{type(n).__name__}')")
    common = [1] * max((len(s) for s in shapes), default=0)
    for arg, s in enumerate(shapes):
        for i in range(-1, -1 - len(s), -1):
            if s[i] == common[i] or s[i] == 1:
                continue
            if common[i] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[i]} at {i}! "
                                   f"Mismatching argument at index {arg} had {s}; but expected "
                                   f"shape should be broadcastable to {common}")
            if s[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            common[i] = s[i]
    return Size(common)


def _at_least_1d(x):
    return reshape(x, 1) if x.ndim == 0 else x


def _at_least_2d(x):
    return reshape(x, 1, 1) if x.ndim == 0 else unsqueeze(x, 0) if x.ndim == 1 else x


def _at_least_3d(x):
    """torch's placement: a vector becomes (1, n, 1), a matrix (m, n, 1)."""
    if x.ndim == 0:
        return reshape(x, 1, 1, 1)
    if x.ndim == 1:
        x = unsqueeze(x, 0)
    return unsqueeze(x, -1) if x.ndim == 2 else x


def _at_least(fn, tensors, grow):
    """One tensor grown (a view, or itself), or a tuple of them for several tensors or one
    sequence of them."""
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and not single:
        tensors = tensors[0]
    grown = [grow(x) for x in _tensor_list(tensors, fn)]
    return grown[0] if single else tuple(grown)


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (a 0-d one as shape (1,)); others are returned as they
    are."""
    return _at_least("atleast_1d", tensors, _at_least_1d)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims: a vector as one row."""
    return _at_least("atleast_2d", tensors, _at_least_2d)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: a vector as (1, n, 1), a matrix as (m, n, 1)."""
    return _at_least("atleast_3d", tensors, _at_least_3d)


# -- slices along one dim ----------------------------------------------------------------------
def _slice(input, d, start, length):
    """A view of elements start..start+length of dim `d` (already checked): NumPy's basic
    slice of a CPU array (the strides kept, as torch keeps them), faster to build."""
    data = input._data
    if data.__class__ is np.ndarray and d < data.ndim:
        return _wrap(data[(slice(None),) * d + (slice(start, start + length),)], input._dtype,
                     input._device)
    shape, strides = layout(input)
    shape[d] = length
    return strided_view(input, shape, strides, start * strides[d])


def narrow(input, dim, start, length):
    """A view of `length` elements of dim `dim` from `start` (negative counts from the end)."""
    d = _dim(dim, input.ndim, "narrow")
    start, length = operator.index(start), operator.index(length)
    n = input._data.shape[d] if input.ndim else 1
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if length < 0:
        raise RuntimeError(f"narrow(): length must be non-negative, got {length}")
    start %= n if n else 1
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(input, d, start, length)


def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces along `dim`: of `split_size_or_sections` elements each (the
    last may be shorter), or of the listed sizes."""
    d = _dim(dim, tensor.ndim, "split")
    n = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = _ints((split_size_or_sections,), "split", "split_size_or_sections")
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sizes}")
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    else:
        size = operator.index(split_size_or_sections)
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        if size == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        pieces = max(-(-n // size), 1) if size else 1
        sizes = [size] * (pieces - 1) + [n - size * (pieces - 1)]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return tuple(_slice(tensor, d, s, length) for s, length in zip(starts, sizes, strict=False))


def chunk(input, chunks, dim=0):
    """Up to `chunks` views of equal size (the last may be smaller) along `dim`."""
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _dim(dim, input.ndim, "chunk")
    n = input._data.shape[d]
    if n == 0:  # torch: `chunks` empty pieces
        return tuple(_slice(input, d, 0, 0) for _ in range(chunks))
    return split(input, -(-n // chunks), d)


def select(input, dim, index):
    """The slice at `index` of dim `dim`, without that dim: a view (narrow, then squeeze, so
    that autograd records it)."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input.ndim, "select")
    i, n = operator.index(index), input._data.shape[d]
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return squeeze(narrow(input, d, i % n, 1), d)


def tensor_split(input, indices_or_sections, dim=0):
    """Views of `input` along `dim`: `sections` pieces as equal as can be (the first ones one
    longer), or the pieces between `indices` (read as slice bounds: negative ones count from the
    end, out-of-range ones are clamped, a bound below the previous one gives an empty piece)."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _dim(dim, input.ndim, "tensor_split")
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        what = "tensor_split expected tensor_indices_or_sections to"
        if arg._device.type != "cpu":
            raise RuntimeError(f"{what} be on cpu, but it's on {arg._device}")
        if arg._dtype is not dtypes.int64:
            raise RuntimeError(f"{what} have dtype of long, but got {arg._dtype.scalar_name}")
        if arg.ndim > 1:
            raise RuntimeError(f"{what} be a zero-dimensional or one-dimensional tensor, but got "
                               f"a tensor with {arg.ndim} dims")
        arg = arg.tolist()
    n = input._data.shape[d]
    if isinstance(arg, (list, tuple)):
        bounds = _ints((arg,), "tensor_split", "indices")
    else:
        if isinstance(arg, bool) or not hasattr(arg, "__index__"):
            raise TypeError(f"tensor_split(): argument 'indices_or_sections' must be an int, a "
                            f"sequence of ints or a tensor, not {type(arg).__name__}")
        sections = operator.index(arg)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, longer = divmod(n, sections)
        bounds = [k * size + min(k, longer) for k in range(1, sections)]
    pieces, start = [], 0
    for end in bounds + [n]:
        first, last, _ = slice(start, end).indices(n)
        pieces.append(narrow(input, d, first, max(last - first, 0)))
        start = end
    return tuple(pieces)


def _split_along(fn, input, indices_or_sections, dim, min_dims):
    """hsplit, vsplit and dsplit: tensor_split along `dim`, where a number of sections must
    divide the dim evenly."""
    if input.ndim < min_dims:
        raise RuntimeError(f"{fn} requires a tensor with at least {min_dims} dimension, but got a "
                           f"tensor with {input.ndim} dimensions!")
    if isinstance(indices_or_sections, Tensor):
        raise TypeError(f"{fn}(): argument 'indices_or_sections' must be an int or a sequence of "
                        f"ints, not Tensor")
    if not isinstance(indices_or_sections, (list, tuple)) and hasattr(indices_or_sections,
                                                                      "__index__"):
        indices_or_sections = operator.index(indices_or_sections)  # (NumPy ints too)
        n = input._data.shape[dim]
        if indices_or_sections == 0 or n % indices_or_sections:
            raise RuntimeError(f"{fn} attempted to split along dimension {dim}, but the size of "
                               f"the dimension {n} is not divisible by the split_size "
                               f"{indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections):
    """tensor_split along the columns (dim 1; dim 0 of a vector), in equal sections."""
    return _split_along("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    """tensor_split along the rows (dim 0) of a tensor of 2 or more dims."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """tensor_split along the depth (dim 2) of a tensor of 3 or more dims."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def unbind(input, dim=0):
    """The slices along `dim`, each without that dim (views)."""
    d = _dim(dim, input.ndim, "unbind")
    shape, strides = layout(input)
    rest_shape, rest_strides = shape[:d] + shape[d + 1:], strides[:d] + strides[d + 1:]
    return tuple(strided_view(input, rest_shape, rest_strides, i * strides[d])
                 for i in range(shape[d]))


# -- copies: cat, stack, flip ------------------------------------------------------------------
def _tensor_list(tensors, fn):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' must be a tuple or list of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn}(): expected Tensor as element {i} in argument 'tensors', but "
                            f"got {type(x).__name__}")
    return list(tensors)


def _cat_shape(tensors, dim, fn):
    """(result shape, dim) for cat, with torch's rules: 1-D empty tensors are skipped."""
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated; unsqueeze it to 1-D first")
    sized = [(i, x) for i, x in enumerate(tensors) if x._data.shape != (0,)]
    if not sized:
        return [0], _dim(dim, 1, fn)
    first = sized[0][1]
    d = _dim(dim, first.ndim, fn)
    shape = list(first._data.shape)
    shape[d] = 0
    for i, x in sized:
        if x.ndim != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} "
                               f"and {x.ndim}")
        for a, (want, got) in enumerate(zip(first._data.shape, x._data.shape, strict=False)):
            if a != d and want != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {want} but got size {got} for tensor number "
                                   f"{i} in the list.")
        shape[d] += x._data.shape[d]
    return shape, d


def cat(tensors, dim=0, *, out=None):
    """`tensors` joined along `dim`, in their promoted dtype (or out's)."""
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    device = same_device("cat", *tensors)
    dtype = reduce(dtypes.promote_types, (x._dtype for x in tensors))
    shape, d = _cat_shape(tensors, dim, "cat")
    if out is None:
        out = allocate(shape, dtype, device)
    else:
        if isinstance(out, Tensor) and not dtypes.can_cast(dtype, out._dtype):
            raise TypeError(f"cat(): input types can't be cast to the desired output type "
                            f"{out._dtype.name} (the inputs promote to {dtype.name}); pass out "
                            f"with dtype {dtype.name}")
        check_out("cat", out, shape, dtype, device)
        if any(shares_memory(out, x) for x in tensors):  # a write could clobber a later input
            raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                               "written-to tensor refer to a single memory location. Please "
                               "clone() the tensor before performing the operation.")
    b, at = backend(device), 0
    pieces = [x._data for x in tensors if x._data.size]  # (1-D empties may not even match)
    if pieces and all(p.dtype == out._data.dtype for p in pieces) \
            and b.join(out._data, pieces, d):
        return out
    for x in tensors:
        if not x._data.size:
            continue
        n = x._data.shape[d]
        b.copy(_slice(out, d, at, n)._data, x._data)
        at += n
    return out


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """`tensors` (all of one shape) joined along a new dim `dim`."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]
    for i, x in enumerate(tensors[1:], 1):
        if x._data.shape != first._data.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first.shape)} at entry 0 and {list(x.shape)} at entry {i}")
    d = _dim(dim, first.ndim + 1, "stack")
    if out is None and all(x._dtype is first._dtype and x._device is first._device
                           for x in tensors):
        shape = list(first._data.shape)
        shape.insert(d, len(tensors))
        joined = allocate(shape, first._dtype, first._device)
        if backend(first._device).join(joined._data, [x._data for x in tensors], d, True):
            return joined
        out = joined  # (cat's piecewise copies fill it)
    return cat([unsqueeze(x, d) for x in tensors], d, out=out)


def flip(input, dims):
    """A copy of `input` with the order of elements reversed along `dims`."""
    ds = _dims(dims, max(input.ndim, 1), "flip")  # a 0-d tensor takes dim 0 or -1, as in torch
    if input.ndim == 0:
        return input.clone()
    out = input._empty_like()
    backend(input._device).indexing.flip(out._data, input._data, ds)
    return out


def fliplr(input):
    """A copy with the columns (dim 1) in reverse order."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    """A copy with the rows (dim 0) in reverse order."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def _nonempty(tensors, fn):
    tensors = _tensor_list(tensors, fn)
    if not tensors:
        raise RuntimeError(f"{fn} expects a non-empty TensorList")
    return tensors


def hstack(tensors, *, out=None):
    """cat along the columns: dim 1, or dim 0 when the tensors are vectors (0-d ones count as
    vectors of one)."""
    tensors = [_at_least_1d(x) for x in _nonempty(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """cat along the rows (dim 0), vectors taken as rows."""
    return cat([_at_least_2d(x) for x in _nonempty(tensors, "vstack")], 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    """cat along the depth (dim 2), after atleast_3d."""
    return cat([_at_least_3d(x) for x in _nonempty(tensors, "dstack")], 2, out=out)


def column_stack(tensors, *, out=None):
    """cat along dim 1, vectors (and 0-d tensors) taken as columns."""
    tensors = _nonempty(tensors, "column_stack")
    return cat([reshape(x, x.numel(), 1) if x.ndim <= 1 else x for x in tensors], 1, out=out)


# -- grids, blocks and gathers (views, cat and gather: they record their gradients) ------------
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of the 0-d or 1-D `tensors` (varargs or one sequence), each expanded
    to the shape of all their lengths (views). With 'ij' the k-th tensor varies along dim k;
    'xy' swaps the roles of the first two (Cartesian order: x along the columns)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    tensors = _nonempty(tensors, "meshgrid")
    for x in tensors:
        if x.ndim > 1:
            raise RuntimeError(f"meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               f"{x}")
        if x._dtype is not tensors[0]._dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if x._device != tensors[0]._device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing is None:
        warnings.warn("meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f'{indexing}')
    swap = indexing == "xy" and len(tensors) >= 2  # torch's way: 'ij' of the two swapped
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    n = len(tensors)
    shape = [x.numel() for x in tensors]
    grids = [expand(view(x, [-1 if i == k else 1 for i in range(n)]), shape)
             for k, x in enumerate(tensors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    """The rows of all combinations of one element from each vector (in 'ij' order: the last
    varies fastest); one vector is returned itself."""
    tensors = _tensor_list(tensors, "cartesian_prod")
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([flatten(g) for g in meshgrid(tensors, indexing="ij")], 1)


def block_diag(*tensors):
    """The 0-, 1- or 2-D `tensors` (vectors as rows) as the blocks of a block-diagonal matrix,
    zeros elsewhere, in their result_type (as torch: 0-d blocks rank below the others)."""
    tensors = _tensor_list(tensors, "block_diag")
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(f"block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {x.ndim} dimensions")
    if not tensors:
        return zeros(1, 0)
    device = same_device("block_diag", *tensors)
    dtype = dtypes.result_type(*tensors)
    blocks = [_at_least_2d(x).to(dtype) for x in tensors]
    width, left, rows = sum(b.shape[1] for b in blocks), 0, []
    for b in blocks:
        m, n = b.shape
        rows.append(cat([zeros(m, left, dtype=dtype, device=device), b,
                         zeros(m, width - left - n, dtype=dtype, device=device)], 1))
        left += n
    return cat(rows, 0)


def take_along_dim(input, indices, dim=None, *, out=None):
    """The elements of `input` at `indices` along `dim`, the two broadcast against each other
    outside `dim` (gather); with dim None, of the flattened input (which must be viewable as
    1-D, as in torch)."""
    from .indexing import gather
    same_device("take_along_dim", input, indices)
    if dim is None:
        result = gather(view(input, -1), 0, view(indices, -1))
        return write_out("take_along_dim", out, result, exact=True)
    if indices._dtype is not dtypes.int64:
        raise RuntimeError(f"take_along_dim(): dtype of indices should be Long but got "
                           f"{indices._dtype.scalar_name}")
    if input.ndim != indices.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {input.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _dim(dim, input.ndim, "take_along_dim")
    sizes = list(input.shape)
    sizes[d] = indices.shape[d]
    sizes = list(_broadcast_shapes(sizes, indices.shape))
    indices = expand(indices, sizes)
    sizes[d] = input.shape[d]
    return write_out("take_along_dim", out, gather(expand(input, sizes), d, indices), exact=True)


# -- repeats and rotations (built from views, reshape and cat: they record their gradients) ---
def repeat(input, *sizes):
    """input tiled `sizes[d]` times along each dim d (new leading dims where `sizes` is
    longer than input's shape): a copy."""
    sizes = _ints(sizes, "repeat", "repeats")
    if len(sizes) < input.ndim:
        raise RuntimeError(f"Number of dimensions of repeat dims can not be smaller than number "
                           f"of dimensions of tensor ({len(sizes)} < {input.ndim}); give one "
                           f"count per dim")
    if any(r < 0 for r in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: repeats {sizes}")
    shape = [1] * (len(sizes) - input.ndim) + list(input.shape)
    if all(r == 1 for r in sizes):  # (reshape alone would give a view)
        return reshape(input, shape).clone()
    # each dim d as (repeat, d), so the copies interleave as torch's repeat lays them out
    pairs = [n for d in shape for n in (1, d)]
    tiled = [n for r, d in zip(sizes, shape, strict=False) for n in (r, d)]
    return reshape(expand(reshape(input, pairs), tiled),
                   [r * d for r, d in zip(sizes, shape, strict=False)])


def tile(input, *dims, **kwargs):
    """repeat, with `dims` (ints, or one sequence, or dims=) padded with leading 1s to input's
    number of dims."""
    if "dims" in kwargs and not dims:
        dims = (kwargs.pop("dims"),)
    if kwargs:
        raise TypeError(f"tile() got an unexpected keyword argument {next(iter(kwargs))!r}")
    dims = _ints(dims, "tile", "dims")
    return repeat(input, [1] * (input.ndim - len(dims)) + dims)


def roll(input, shifts, dims=None):
    """input rotated by `shifts[k]` places along `dims[k]` (elements leaving one end come back
    at the other); without dims, the flattened input is rolled and reshaped back."""
    shifts = _ints((shifts,), "roll", "shifts")  # (an int, or one sequence of them)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll(): shifts {shifts} need a dim each; give dims=")
        return roll(flatten(input), shifts, 0).view(input.shape)
    dims = _ints((dims,), "roll", "dims")
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll(): shifts and dims must align, got shifts {shifts} and dims "
                           f"{dims}")
    out = input
    for shift, dim in zip(shifts, dims, strict=False):
        d = _dim(dim, input.ndim, "roll")
        n = input.shape[d] if input.ndim else 1
        k = shift % n if n else 0
        if k:
            out = cat([narrow(out, d, n - k, k), narrow(out, d, 0, n - k)], d)
    return out if out is not input else input.clone()


def rot90(input, k=1, dims=(0, 1)):
    """input rotated by k quarter turns in the plane of `dims`, from the first dim towards the
    second: a flip and a transpose (a view of the flipped copy, with torch's strides)."""
    dims = _ints((dims,), "rot90", "dims")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = (_dim(d, input.ndim, "rot90") for d in dims)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k = operator.index(k) % 4
    if k == 1:
        return transpose(flip(input, b), a, b)
    if k == 2:
        return flip(input, (a, b))
    if k == 3:
        return transpose(flip(input, a), a, b)
    return input.clone(memory_format=contiguous_format)  # (as torch's, whatever input's strides)


def _repeated_positions(repeats, output_size):
    """0, 1, ... each repeated repeats[i] times (in repeats' dtype): a 1 added where each run
    but the first starts, then a running sum, so that the work is linear in the output."""
    from .reduction import cumsum
    from .scatter import index_add
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats._dtype not in (dtypes.int32, dtypes.int64):
        raise NotImplementedError(f'"repeat_interleave_{repeats._device.type}" not implemented '
                                  f"for '{repeats._dtype.scalar_name}'")
    if (repeats < 0).any():
        raise RuntimeError("repeats can not be negative")
    ends = cumsum(repeats, 0)
    total = ends[-1].item() if repeats.numel() else 0
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    starts = narrow(ends, 0, 0, max(ends.numel() - 1, 0))
    device = repeats._device
    marks = index_add(zeros(total + 1, dtype=dtypes.int64, device=device), 0, starts,
                      ones(starts.numel(), dtype=dtypes.int64, device=device))
    return narrow(cumsum(marks, 0), 0, 0, total).to(repeats._dtype)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (each slice along `dim`; of the flattened input when dim is None) repeated
    `repeats` times, or repeats[i] times for the i-th: a copy. With one tensor of counts,
    repeat_interleave(repeats) gives the positions 0, 1, ... each repeated its count."""
    if repeats is None:
        return _repeated_positions(input, output_size)
    d = _dim(0 if dim is None else dim, input.ndim, "repeat_interleave")
    if dim is None:
        input = flatten(input)
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        n = input._data.shape[d]
        if repeats.numel() == 1:
            repeats = expand(reshape(repeats, 1), n)
        elif repeats.shape[0] != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}")
        from .indexing import index_select
        return index_select(input, d, _repeated_positions(repeats, output_size))
    if isinstance(repeats, bool) or not hasattr(repeats, "__index__"):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be an int or a Tensor, not "
                        f"{type(repeats).__name__}")
    r = operator.index(repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    tiled = unsqueeze(input, d + 1)
    sizes = list(tiled.shape)
    sizes[d + 1] = r
    if output_size is not None and output_size != r * sizes[d]:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {r * sizes[d]} but "
                           f"got {output_size}")
    return flatten(expand(tiled, sizes).clone(memory_format=contiguous_format), d, d + 1)


def clone(input, *, memory_format=preserve_format):
    """A copy of input with its own memory (Tensor.clone)."""
    return input.clone(memory_format=memory_format)


def numel(input):
    """The number of elements of input."""
    return input.numel()


# -- storage: as_strided, unfold, resize_ ------------------------------------------------------
def _storage(buf):
    """The array owning the memory `buf` views (torch's storage): the end of NumPy's base chain,
    through the wrappers as_strided builds (which hold their array as `.base`)."""
    while True:
        base = buf.base
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)
            if not isinstance(base, np.ndarray):
                return buf
        buf = base


def _storage_ptr(t, buf):
    return backend(t._device).data_ptr(buf)


def _storage_offset(self):
    """Where self's first element lies in its storage, in elements."""
    root = _storage(self._data)
    return (_storage_ptr(self, self._data) - _storage_ptr(self, root)) // self._dtype.itemsize


def _geometry(fn, size, stride):
    size, stride = _ints((size,), fn, "size"), _ints((stride,), fn, "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{fn}: Negative strides are not supported at the moment, got "
                           f"strides: {stride}")
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {size}")
    return size, stride


def _extent(size, stride, offset):
    """The storage a view of this geometry needs, in elements (0 for an empty view)."""
    return offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) + 1 \
        if math.prod(size) else 0


def as_strided(input, size, stride, storage_offset=None):
    """A view of input's storage with the given sizes, strides and offset (in elements, from
    the storage's start; input's own offset when None). Elements may overlap."""
    size, stride = _geometry("as_strided", size, stride)
    own = _storage_offset(input)
    offset = own if storage_offset is None else operator.index(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    item = input._dtype.itemsize
    have = _storage(input._data).nbytes // item
    need = _extent(size, stride, offset)
    if need > have:
        raise RuntimeError(f"setStorage: sizes {size}, strides {stride}, storage offset "
                           f"{offset}, and itemsize {item} requiring a storage size of "
                           f"{need * item} are out of bounds for storage of size {have * item}")
    return strided_view(input, size, stride, offset - own)


def _become(self, view):
    """self takes `view`'s sizes and strides (in-place view ops change metadata only; under
    grad, autograd/wrap.py gives self the view's history too)."""
    self._data = view._data
    return self


def as_strided_(self, size, stride, storage_offset=None):
    return _become(self, as_strided(self, size, stride, storage_offset))


def unfold(self, dimension, size, step):
    """A view of every slice of `size` elements along `dimension`, `step` apart, as a new
    last dim (windows may overlap)."""
    shape, strides = layout(self)
    d = _dim(dimension, max(self.ndim, 1), "unfold")
    size, step = operator.index(size), operator.index(step)
    n = shape[d] if shape else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not shape:
        return strided_view(self, [size], [1])
    shape[d], strides[d], along = (n - size) // step + 1, strides[d] * step, strides[d]
    return strided_view(self, shape + [size], strides + [along])


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      **kwargs):
    """An uninitialised tensor with the given sizes and strides (self's dtype and device unless
    given), over storage just large enough."""
    size, stride = _geometry("new_empty_strided", size, stride)
    base = self.new_empty(_extent(size, stride, 0), dtype=dtype, device=device, **kwargs)
    out = strided_view(base, size, stride)
    return out.requires_grad_() if requires_grad else out


def resize_(self, *sizes, memory_format=None):
    """self with the given sizes, contiguous from its storage offset: the elements it keeps are
    its storage's in order. Storage too small is replaced by a larger copy, which jitensor can
    only do for a tensor that is its storage's whole array (views of it would keep the old
    memory); torch's new elements are uninitialised, as here."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    size = _ints(sizes, "resize_")
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {size}")
    from ..tensor import _contiguous_strides
    root, item = _storage(self._data), self._dtype.itemsize
    offset, numel = _storage_offset(self), math.prod(size)
    if offset + numel <= root.nbytes // item:
        return _become(self, strided_view(self, size, _contiguous_strides(size)))
    if self._data is not root or not root.flags.c_contiguous:
        raise RuntimeError(f"resize_(): jitensor cannot grow the storage of a view or of a "
                           f"tensor resized before (its storage holds {root.nbytes // item} "
                           f"elements, {offset + numel} needed); resize a clone() instead")
    grown = allocate([numel], self._dtype, self._device)
    backend(self._device).copy(_slice(grown, 0, 0, root.size)._data, root.reshape(-1))
    self._data = grown._data.reshape(size)
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, the_template.shape)


def narrow_copy(input, dim, start, length, *, out=None):
    """narrow's elements as a new contiguous tensor."""
    result = narrow(input, dim, start, length).clone(memory_format=contiguous_format)
    return write_out("narrow_copy", out, result, exact=True)


# -- the *_copy forms of the views (torch.permute_copy, ...): the view's elements as a new
# contiguous tensor, which out= may take. Each view is called through the Tensor method (or
# module function) autograd wraps, so a copy records its gradient as the view and clone do.
def _complex_view(name):
    def view(input):
        from . import complex_ops
        return getattr(complex_ops, name)(input)
    return view


def _sliced(input, dim=0, start=None, end=None, step=1):
    return input[(slice(None),) * _dim(dim, input.ndim, "slice_copy") + (slice(start, end, step),)]


_COPIED_VIEWS = {
    "alias_copy": lambda input: input,
    "as_strided_copy": lambda input, size, stride, storage_offset=None:
        input.as_strided(size, stride, storage_offset),
    "detach_copy": lambda input: input.detach(),
    "diagonal_copy": lambda input, offset=0, dim1=0, dim2=1: input.diagonal(offset, dim1, dim2),
    "expand_copy": lambda input, size, *, implicit=False: input.expand(size),
    "permute_copy": lambda input, dims: input.permute(dims),
    "select_copy": lambda input, dim, index: input.select(dim, index),
    "slice_copy": _sliced,
    "split_copy": lambda input, split_size, dim=0: input.split(split_size, dim),
    "split_with_sizes_copy": lambda input, split_sizes, dim=0:
        input.split_with_sizes(split_sizes, dim),
    "squeeze_copy": lambda input, dim=None: input.squeeze(dim),
    "t_copy": lambda input: input.t(),
    "transpose_copy": lambda input, dim0, dim1: input.transpose(dim0, dim1),
    "unbind_copy": lambda input, dim=0: input.unbind(dim),
    "unfold_copy": lambda input, dimension, size, step: input.unfold(dimension, size, step),
    "unsqueeze_copy": lambda input, dim: input.unsqueeze(dim),
    "view_copy": lambda input, size: input.view(size),  # (a size or a dtype)
    "view_as_real_copy": _complex_view("view_as_real"),
    "view_as_complex_copy": _complex_view("view_as_complex"),
}


def _copy_form(name, view):
    """torch.`name`: `view`'s result (a tensor, or a list for the splits) copied contiguous;
    out= a tensor, or a list of one per piece (then None is returned, as torch's)."""
    def fn(input, *args, out=None, **kwargs):
        result = view(input, *args, **kwargs)
        if isinstance(result, Tensor):
            return write_out(name, out, result.clone(memory_format=contiguous_format), exact=True)
        copies = [r.clone(memory_format=contiguous_format) for r in result]
        if out is None:
            return copies
        if not isinstance(out, (list, tuple)) or len(out) != len(copies):
            raise RuntimeError(f"{name}(): out= must be a list of {len(copies)} tensors, one per "
                               f"piece, got {type(out).__name__}")
        write_each(name, out, copies)
        return None
    signature = inspect.signature(view)
    out_param = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    fn.__signature__ = signature.replace(parameters=[*signature.parameters.values(), out_param])
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: the {name[:-5]} view's elements in new contiguous memory."
    return fn


globals().update({name: _copy_form(name, view) for name, view in _COPIED_VIEWS.items()})
__all__ += list(_COPIED_VIEWS)


def split_with_sizes(input, split_sizes, dim=0):
    """Views of consecutive pieces along `dim` of the listed sizes (which sum to its size)."""
    if not isinstance(split_sizes, (list, tuple, Size)):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' must be tuple of ints, not "
                        f"{type(split_sizes).__name__}")
    return split(input, list(split_sizes), dim)


# torch's unsafe_ forms skip autograd's view tracking; jitensor's are its safe ones
def unsafe_split(input, split_size, dim=0):
    return split(input, split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input, chunks, dim=0):
    return chunk(input, chunks, dim)


# -- in-place view ops: self takes the view's sizes and strides --------------------------------
def squeeze_(self, dim=None):
    return _become(self, squeeze(self, dim))


def unsqueeze_(self, dim):
    return _become(self, unsqueeze(self, dim))


def transpose_(self, dim0, dim1):
    return _become(self, transpose(self, dim0, dim1))


def swapdims_(self, dim0, dim1):
    return _become(self, swapdims(self, dim0, dim1))


swapaxes_ = swapdims_


def t_(self):
    return _become(self, t(self))


# -- conjugate transposes: views of real tensors; complex ones are conjugated (a copy: jitensor
# has no lazy conjugate bit, ops/complex_ops.py)
def _conjugated(x):
    if not x._dtype.is_complex:
        return x
    from .complex_ops import conj
    return conj(x)


def _H(self):
    if self.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return _conjugated(t(self))
    if self.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.")
    return _conjugated(transpose(self, 0, 1))


def _matrix_transpose(self, what):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of "
                           f"matrices. Got {self.ndim}-D tensor.")
    return _conjugated(transpose(self, -2, -1))


def _mH(self):
    return _matrix_transpose(self, "mH")


def adjoint(input):
    """The (conjugate) transpose of the last two dims: a view."""
    return _matrix_transpose(input, "adjoint()")


# -- Python protocols ----------------------------------------------------------------------------
def _reversed(self):
    return self if self.ndim == 0 else flip(self, 0)


def _deepcopy(self, memo):
    """copy.deepcopy: a leaf's values in new memory, with its requires_grad and a deep copy of
    its grad; tensors that viewed one storage view one new storage (per deepcopy call)."""
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment.  If you were attempting to "
                           "deepcopy a module, this may be because of a torch.nn.utils."
                           "weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    root = _storage(self._data)
    new = object.__new__(type(self))
    new._meta = None
    if root.dtype == self._data.dtype:
        key = ("jitensor storage", id(root))  # (memo holds ids of objects and keeps them alive)
        if key not in memo:
            copy._keep_alive(root, memo)
            memo[key] = _wrap(root, self._dtype, self._device).clone()
        copied = memo[key]
        new._data = strided_view(copied, *layout(self), _storage_offset(self))._data
    else:  # a dtype view of the storage: its own values only
        new._data = self.detach().clone()._data
    new._dtype, new._device = self._dtype, self._device
    if self.requires_grad:
        new.requires_grad_()
    if self.grad is not None:
        new.grad = copy.deepcopy(self.grad, memo)
    memo[id(self)] = new
    return new


TENSOR_METHODS = {
    "view": view, "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as,
    "flatten": flatten, "unflatten": unflatten, "permute": permute, "transpose": transpose,
    "swapaxes": swapaxes, "swapdims": swapdims, "t": t, "T": property(_T), "mT": property(_mT),
    "movedim": movedim, "moveaxis": moveaxis, "unsqueeze": unsqueeze, "squeeze": squeeze,
    "expand": expand, "expand_as": expand_as, "broadcast_to": broadcast_to, "narrow": narrow,
    "split": split, "chunk": chunk, "unbind": unbind, "flip": flip, "repeat": repeat,
    "tile": tile, "roll": roll, "ravel": ravel, "select": select, "tensor_split": tensor_split,
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit, "fliplr": fliplr, "flipud": flipud,
    "rot90": rot90, "repeat_interleave": repeat_interleave, "take_along_dim": take_along_dim,
    "storage_offset": _storage_offset, "as_strided": as_strided, "as_strided_": as_strided_,
    "unfold": unfold, "new_empty_strided": new_empty_strided, "resize_": resize_,
    "resize_as_": resize_as_, "narrow_copy": narrow_copy, "split_with_sizes": split_with_sizes,
    "unsafe_split": unsafe_split, "unsafe_split_with_sizes": unsafe_split_with_sizes,
    "unsafe_chunk": unsafe_chunk, "squeeze_": squeeze_, "unsqueeze_": unsqueeze_,
    "transpose_": transpose_, "swapdims_": swapdims_, "swapaxes_": swapaxes_, "t_": t_,
    "H": property(_H), "mH": property(_mH), "adjoint": adjoint, "__reversed__": _reversed,
    "__deepcopy__": _deepcopy,
}
