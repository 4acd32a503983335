"""Views and shape ops with torch's semantics: views share memory with their base (writes show
both ways), carry torch's strides, and never have negative strides. Each view is computed here
as (sizes, strides, offset) in elements and built by the backend's `as_strided`, except
permutations, which are the buffer's own transpose; cat, stack and flip copy through the
backend's copy kernels."""
import operator
from functools import reduce

from .. import dtypes
from ..backends.registry import backend
from ..creation import allocate
from ..tensor import Size, Tensor, _wrap, preserve_format
from ._common import broadcast_shapes, check_out, same_device, shares_memory
from ._common import dim as _dim, dims as _dims

__all__ = ["broadcast_tensors", "broadcast_to", "cat", "chunk", "clone", "concat", "concatenate",
           "flatten", "flip", "movedim", "moveaxis", "narrow", "numel", "permute", "reshape",
           "roll", "split", "squeeze", "stack", "swapaxes", "swapdims", "t", "tile", "transpose",
           "unbind", "unflatten", "unsqueeze"]

VIEW_INCOMPATIBLE = ("view size is not compatible with input tensor's size and stride (at least one "
                     "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


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
    for s, d in zip(src, dst):
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
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


# -- slices along one dim ----------------------------------------------------------------------
def _slice(input, d, start, length):
    """A view of elements start..start+length of dim `d` (already checked)."""
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
    return tuple(_slice(tensor, d, s, length) for s, length in zip(starts, sizes))


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
        for a, (want, got) in enumerate(zip(first._data.shape, x._data.shape)):
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
    for x in tensors:
        if not x._data.size:  # contributes nothing (1-D empties may not even match)
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
    return cat([unsqueeze(x, d) for x in tensors], d, out=out)


def flip(input, dims):
    """A copy of `input` with the order of elements reversed along `dims`."""
    ds = _dims(dims, max(input.ndim, 1), "flip")  # a 0-d tensor takes dim 0 or -1, as in torch
    if input.ndim == 0:
        return input.clone()
    out = input._empty_like()
    backend(input._device).indexing.flip(out._data, input._data, ds)
    return out


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
    tiled = [n for r, d in zip(sizes, shape) for n in (r, d)]
    return reshape(expand(reshape(input, pairs), tiled),
                   [r * d for r, d in zip(sizes, shape)])


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
    for shift, dim in zip(shifts, dims):
        d = _dim(dim, input.ndim, "roll")
        n = input.shape[d] if input.ndim else 1
        k = shift % n if n else 0
        if k:
            out = cat([narrow(out, d, n - k, k), narrow(out, d, 0, n - k)], d)
    return out if out is not input else input.clone()


def clone(input, *, memory_format=preserve_format):
    """A copy of input with its own memory (Tensor.clone)."""
    return input.clone(memory_format=memory_format)


def numel(input):
    """The number of elements of input."""
    return input.numel()


TENSOR_METHODS = {
    "view": view, "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as,
    "flatten": flatten, "unflatten": unflatten, "permute": permute, "transpose": transpose,
    "swapaxes": swapaxes, "swapdims": swapdims, "t": t, "T": property(_T), "mT": property(_mT),
    "movedim": movedim, "moveaxis": moveaxis, "unsqueeze": unsqueeze, "squeeze": squeeze,
    "expand": expand, "expand_as": expand_as, "broadcast_to": broadcast_to, "narrow": narrow,
    "split": split, "chunk": chunk, "unbind": unbind, "flip": flip, "repeat": repeat,
    "tile": tile, "roll": roll,
}
