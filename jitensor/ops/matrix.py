"""Diagonals and triangles of matrices (the last two dims, or the two named): diagonal (a
view), diag, trace, tril and triu (and their in-place forms).

All are built from other ops -- a strided view, a comparison of two aranges, masked_fill,
index_copy, sum -- so they run on every device and record their gradients through those ops.
Only `diagonal`, a view, has a derivative rule of its own."""
from .. import dtypes
from ..creation import arange, zeros
from ..tensor import Tensor
from ._common import dim as _dim, in_place
from .indexing import masked_fill
from .reduction import sum as _sum
from .scatter import index_copy, positions
from .shape import layout, strided_view

__all__ = ["diag", "diagonal", "trace", "tril", "triu"]

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


def diag(input, diagonal=0):
    """A 1-D input as the `diagonal`-th diagonal of a new square matrix (zeros elsewhere); a
    2-D input's `diagonal`-th diagonal as a new 1-D tensor."""
    view = _module["diagonal"]  # (looked up when called: autograd wraps it after import)
    if input.ndim == 2:
        return view(input, diagonal).clone()
    if input.ndim != 1:
        raise RuntimeError(f"diag(): expected a 1-D or 2-D tensor, got {input.ndim}-D")
    n = input.shape[0] + abs(diagonal)
    out = zeros(n * n, dtype=input.dtype, device=input.device)
    where = view(positions(out).reshape(n, n), diagonal)
    return index_copy(out, 0, where, input).reshape(n, n)


def trace(input):
    """The sum of the main diagonal of a matrix."""
    if input.ndim != 2:
        raise RuntimeError(f"trace(): expected a matrix, but got tensor with dim {input.ndim}")
    return _sum(diagonal(input))


def _triangle(fn, input, diagonal, lower):
    if not isinstance(input, Tensor) or input.ndim < 2:
        raise RuntimeError(f"{fn}: input tensor must have at least 2 dimensions")
    rows, cols = input.shape[-2:]
    # column - row of every element, against the diagonal's offset
    j = arange(cols, dtype=dtypes.int64, device=input.device)
    i = arange(rows, dtype=dtypes.int64, device=input.device).reshape(rows, 1)
    drop = (j - i > diagonal) if lower else (j - i < diagonal)
    return masked_fill(input, drop, 0)


def tril(input, diagonal=0):
    """A copy of input with the elements above its `diagonal`-th diagonal zeroed (batched over
    leading dims)."""
    return _triangle("tril", input, diagonal, lower=True)


def triu(input, diagonal=0):
    """A copy of input with the elements below its `diagonal`-th diagonal zeroed."""
    return _triangle("triu", input, diagonal, lower=False)


TENSOR_METHODS = {"diagonal": diagonal, "diag": diag, "trace": trace, "tril": tril,
                  "triu": triu, "tril_": in_place(tril), "triu_": in_place(triu)}
