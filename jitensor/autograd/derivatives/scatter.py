"""The rules of ops/scatter.py's ops."""
from ... import creation
from ...ops import indexing, scatter
from ...tensor import Tensor
from ._common import rule


def _gathered(g, dim, index, src):
    """The gradient of a scatter's src: g read back where src went, zero where src was not
    read (beyond index's shape)."""
    got = indexing.gather(g, dim, index)
    if got.shape == src.shape:
        return got
    grad = creation.zeros(src.shape, dtype=g.dtype, device=g.device)
    grad[tuple(slice(0, n) for n in index.shape)] = got
    return grad


@rule("scatter", uses_result=False)
def _scatter(g, result, input, dim, index, src=None, *, value=None):
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
