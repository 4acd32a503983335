"""sort, argsort, topk: along one dim, through the backend's row sort (every sort is stable:
ties keep their order, NaN sorts above every number, as in torch)."""
import operator

from .. import dtypes
from ..creation import allocate
from ..kernels.registry import backend
from ..tensor import Tensor
from ._common import dim as _dim
from ._common import write_pair
from .reduction import return_types
from .shape import movedim

__all__ = ["argsort", "sort", "topk"]


def _sorted(fn, input, dim, descending, k=None):
    """(values, indices) of input sorted along dim, both contiguous; only the first k of each
    row when k is given."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got "
                        f"{type(input).__name__}")
    if input._dtype.is_complex:
        raise RuntimeError(f"{fn}(): complex numbers have no order; sort their .abs() or "
                           f".real instead")
    d = _dim(dim, input.ndim, fn)
    if input.ndim == 0:
        return input.clone(), allocate((), dtypes.int64, input._device).fill_(0)
    rows = movedim(input, d, -1).contiguous()
    n = rows.shape[-1]
    k = n if k is None else k
    shape = (*rows.shape[:-1], k)
    values = allocate(shape, input._dtype, input._device)
    indices = allocate(shape, dtypes.int64, input._device)
    if values.numel():
        src, out = rows._data.reshape(-1, n), values._data.reshape(-1, k)
        if src.dtype == bool:  # sorted as the 0/1 bytes they are
            src, out = src.view("u1"), out.view("u1")
        b = backend(input._device).sort
        (b.sort_rows if k == n else b.topk_rows)(out, indices._data.reshape(-1, k), src,
                                                 bool(descending))
    if d == input.ndim - 1:
        return values, indices
    return movedim(values, -1, d).contiguous(), movedim(indices, -1, d).contiguous()


def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """(values, indices): input sorted along `dim` (ascending unless `descending`) and where
    each value came from. Always stable (`stable` is accepted for torch's signature)."""
    return write_pair("sort", out, _sorted("sort", input, dim, descending), return_types.sort)


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort input along `dim` (see sort)."""
    return _sorted("argsort", input, dim, descending)[1]


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """(values, indices) of the k largest (or, with largest=False, smallest) elements along
    `dim`, in sorted order (`sorted` is accepted for torch's signature; ties: first first)."""
    k = operator.index(k)
    d = _dim(dim, input.ndim, "topk") if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk(): selected index k out of range: k={k} for dimension {dim} "
                           f"of size {n}")
    return write_pair("topk", out, _sorted("topk", input, dim, largest, k if input.ndim else None),
                      return_types.topk)


TENSOR_METHODS = {"sort": sort, "argsort": argsort, "topk": topk}
