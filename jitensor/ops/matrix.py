"""Diagonals and triangles of matrices (the last two dims, or the two named): diagonal (a
view), diag, diag_embed, diagflat, trace, tril and triu (and their in-place forms), and the
coordinates of triangles, tril_indices and triu_indices.

All are built from other ops -- a strided view, a comparison of two aranges, masked_fill,
index_copy, nonzero, sum -- so they run on every device and record their gradients through
those ops. Only `diagonal`, a view, has a derivative rule of its own."""
from .. import dtypes
from ..creation import _check_layout, arange, zeros
from ..tensor import Tensor
from ._common import dim as _dim
from ._common import in_place, write_out
from .indexing import masked_fill, nonzero
from .reduction import sum as _sum
from .scatter import index_copy, positions
from .shape import flatten, layout, strided_view

__all__ = ["diag", "diag_embed", "diagflat", "diagonal", "trace", "tril", "tril_indices",
           "triu", "triu_indices"]

COMPOSED = ("tril", "triu")  # their in-place forms run them as they are (autograd/wrap.py)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of the matrices in dims dim1 and dim2 (above it for a positive
    `offset`, below for a negative one), as a new last dim."""
    d1, d2 = _dim(dim1, input.ndim, "diagonal"), _dim(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, strides = layout(input)
    n1, n2 = shape[d1], shape[d2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start = (offset * strides[d2] if offset >= 0 else -offset * strides[d1]) if length else 0
    keep = [d for d in range(input.ndim) if d not in (d1, d2)]
    return strided_view(input, [shape[d] for d in keep] + [length],
                        [strides[d] for d in keep] + [strides[d1] + strides[d2]], start)


_module = globals()


def diag(input, diagonal=0, *, out=None):
    """A 1-D input as the `diagonal`-th diagonal of a new square matrix (zeros elsewhere); a
    2-D input's `diagonal`-th diagonal as a new 1-D tensor."""
    if input.ndim == 2:
        view = _module["diagonal"]  # (looked up when called: autograd wraps it after import)
        return write_out("diag", out, view(input, diagonal).clone(), exact=True)
    if input.ndim != 1:
        raise RuntimeError(f"diag(): expected a 1-D or 2-D tensor, got {input.ndim}-D")
    return write_out("diag", out, diag_embed(input, diagonal), exact=True)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """The last dim of `input` as the `offset`-th diagonals of new matrices in dims dim1 and
    dim2 of the result (one more dim than input; zeros off the diagonals). The result's flat
    positions, viewed as it and taken along those diagonals, say where index_copy puts input."""
    ndim = input.ndim + 1
    d1, d2 = _dim(dim1, ndim, "diag_embed"), _dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, input.shape[-1] + abs(offset))
    out = zeros(shape, dtype=input.dtype, device=input.device).reshape(-1)
    where = diagonal(positions(out).reshape(shape), offset, d1, d2)  # input's shape
    return index_copy(out, 0, where.reshape(-1), input.reshape(-1)).reshape(shape)


def diagflat(input, offset=0):
    """The flattened input as the `offset`-th diagonal of a new square matrix."""
    return diag_embed(flatten(input), offset)


def trace(input):
    """The sum of the main diagonal of a matrix."""
    if input.ndim != 2:
        raise RuntimeError(f"trace(): expected a matrix, but got tensor with dim {input.ndim}")
    return _sum(diagonal(input))


def _offsets(rows, cols, device):
    """column - row of every element of a rows x cols matrix: its diagonal's offset."""
    j = arange(cols, dtype=dtypes.int64, device=device)
    return j - arange(rows, dtype=dtypes.int64, device=device).reshape(rows, 1)


def _triangle(fn, input, diagonal, lower):
    if not isinstance(input, Tensor) or input.ndim < 2:
        raise RuntimeError(f"{fn}: input tensor must have at least 2 dimensions")
    offsets = _offsets(*input.shape[-2:], input.device)
    return masked_fill(input, offsets > diagonal if lower else offsets < diagonal, 0)


def tril(input, diagonal=0, *, out=None):
    """A copy of input with the elements above its `diagonal`-th diagonal zeroed (batched over
    leading dims)."""
    return write_out("tril", out, _triangle("tril", input, diagonal, lower=True), exact=True)


def triu(input, diagonal=0, *, out=None):
    """A copy of input with the elements below its `diagonal`-th diagonal zeroed."""
    return write_out("triu", out, _triangle("triu", input, diagonal, lower=False), exact=True)


def _triangle_indices(fn, row, col, offset, dtype, device, layout, lower):
    """The (row, column) coordinates, in row-major order, of a rows x cols triangle: the
    nonzero positions of its mask, as a 2 x N tensor."""
    for position, (name, n) in enumerate((("row", row), ("col", col), ("offset", offset)), 1):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                            f"{type(n).__name__}")
    for name, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{name} must be non-negative, got{n}")
    _check_layout(layout, fn=fn)
    dtype = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise NotImplementedError(f"\"{fn}\" not implemented for '{dtype.scalar_name}'")
    offsets = _offsets(row, col, device)
    return nonzero(offsets <= offset if lower else offsets >= offset).t().to(dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The coordinates of the lower triangle of a row x col matrix (on and below its
    `offset`-th diagonal): a 2 x N tensor of rows, then columns, in row-major order."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, layout, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The coordinates of the upper triangle (on and above the `offset`-th diagonal)."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, layout, False)


TENSOR_METHODS = {"diagonal": diagonal, "diag": diag, "diag_embed": diag_embed,
                  "diagflat": diagflat, "trace": trace, "tril": tril, "triu": triu,
                  "tril_": in_place(tril), "triu_": in_place(triu)}
