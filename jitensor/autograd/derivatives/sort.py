"""The rules of ops/sort.py's ops."""
from ...ops import scatter
from ._common import _zero, rule


def _unsort(g, result, input, dim):
    """The gradient of sort's or topk's values: g back where each value came from."""
    g = g[0]
    if g is None:
        return ()
    if not input.ndim:
        return ((input, g),)
    return ((input, scatter.scatter_add(_zero(input), dim % input.ndim, result[1], g)),)


@rule("sort", uses_inputs=False)
def _sort(g, result, input, dim=-1, descending=False, *, stable=False):
    return _unsort(g, result, input, dim)


@rule("topk", uses_inputs=False)
def _topk(g, result, input, k, dim=-1, largest=True, sorted=True):
    return _unsort(g, result, input, dim)
