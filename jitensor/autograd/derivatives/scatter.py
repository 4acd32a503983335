"""The rules of ops/scatter.py's ops."""
from ... import creation
from ...ops import elementwise, indexing, scatter
from ...tensor import Tensor
from ._common import rule


def _gathered(g, dim, index, src):
    """The gradient of a scatter's src: g read back where src went, zero where src was not
    read (beyond index's shape)."""
    return _padded(indexing.gather(g, dim, index), index, src)


def _padded(got, index, src):
    """`got` (index's shape) in src's shape, zeros beyond."""
    if got.shape == src.shape:
        return got
    grad = creation.zeros(src.shape, dtype=got.dtype, device=got.device)
    grad[tuple(slice(0, n) for n in index.shape)] = got
    return grad


@rule("scatter", uses_result=False)
def _scatter(g, result, input, dim, index, src=None, *, value=None, reduce=None):
    if reduce == "add":  # scatter_add's (torch has no derivative for either reduce)
        return ((input, g),) + (((src, _gathered(g, dim, index, src)),)
                                if isinstance(src, Tensor) else ())
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented for "
                           "reduce='multiply'; use scatter_reduce(..., 'prod')")
    pairs = [(input, scatter.scatter(g, dim, index, 0))]  # overwritten elements get no gradient
    if isinstance(src, Tensor):
        pairs.append((src, _gathered(g, dim, index, src)))
    return pairs


@rule("scatter_add", uses_result=False)
def _scatter_add(g, result, input, dim, index, src):
    return (input, g), (src, _gathered(g, dim, index, src))


@rule("index_add", uses_result=False)
def _index_add(g, result, input, dim, index, source, *, alpha=1):
    taken = indexing.index_select(g, dim, index)
    return (input, g), (source, taken if alpha == 1 else taken * alpha)


@rule("index_copy", uses_result=False)
def _index_copy(g, result, input, dim, index, source):
    return (input, scatter.index_fill(g, dim, index, 0)), \
        (source, indexing.index_select(g, dim, index))


@rule("index_fill", uses_result=False)
def _index_fill(g, result, input, dim, index, value):
    return ((input, scatter.index_fill(g, dim, index, 0)),)


@rule("scatter_reduce")
def _scatter_reduce(g, result, input, dim, index, src, reduce, *, include_self=True):
    """torch's: mean divides g by each position's count; amax and amin share g equally among
    the elements equal to the result; prod (for inputs without zeros) is g * result / x."""
    if reduce == "sum":
        grad_self, grad_src = g, _gathered(g, dim, index, src)
    elif reduce == "mean":
        count = creation.ones_like(g) if include_self else creation.zeros_like(g)
        count = scatter.scatter_add(count, dim, index, creation.ones_like(src))
        grad_self = g / elementwise.where(count == 0, 1.0, count)
        grad_src = _gathered(grad_self, dim, index, src)
    elif reduce == "prod":
        if (input == 0).any() or (src == 0).any():
            raise NotImplementedError("scatter_reduce(): the gradient of reduce='prod' is only "
                                      "implemented for inputs without zeros")
        grad_self = g * result / input
        grad_src = _gathered(g * result, dim, index, src) / src
    else:
        value = indexing.gather(result, dim, index)
        self_is = (input == result).to(g.dtype)
        src_is = (scatter._within(src, index) == value).to(g.dtype)
        share = g / scatter.scatter_add(self_is, dim, index, src_is)
        grad_self = self_is * share
        grad_src = _padded(src_is * indexing.gather(share, dim, index), index, src)
    if not include_self:
        grad_self = scatter.scatter(grad_self, dim, index, 0)
    return (input, grad_self), (src, grad_src)
