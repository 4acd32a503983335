"""The rules of ops/indexing.py's ops."""
import math

from ... import creation
from ...kernels.registry import backend
from ...ops import indexing, reduction, scatter, shape
from ...ops._common import broadcast_shapes
from ._common import _accumulate, _pass, _recorded, rule


def _is_basic(key):
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, slice))
               and not isinstance(k, bool) for k in keys)


def _selected(size, dim, index, g):
    """The gradient of index_select(input, dim, index), of input[index] for a vector index
    (negatives counting from the end) and of embedding (index of any shape, dim 0): zeros like
    input plus g's slices at the selected positions, repeats adding up, in one pass over g;
    `size`: input's shape. (The general form, a gather of every position of input, costs the whole
    of it: an embedding table's backward.)"""
    grad = creation.zeros(size, dtype=g.dtype, device=g.device)
    if g.numel():
        backend(g.device).indexing.take_add(grad._data, g.contiguous()._data,
                                            index.contiguous()._data, size[dim],
                                            math.prod(size[dim + 1:]))
    return grad


@rule("getitem", uses_inputs=False, uses_result=False)
def _getitem(g, result, input, key):
    if _is_basic(key):  # a view: each element of the result is a distinct element of input
        grad = creation.zeros(input.shape, dtype=g.dtype, device=g.device)
        grad[key] = g
        return ((input, grad),)
    if indexing.vector_key(input, key) and not _recorded(g, g):
        # (with create_graph, the general form below, which records itself)
        return ((input, _selected(input.shape, 0, key, g)),)
    return ((input, _accumulate(input, scatter.positions(input)[key], g)),)


@rule("index_select", uses_inputs=False, uses_result=False)
def _index_select(g, result, input, dim, index, *, out=None):
    if input.ndim and not _recorded(g, g):
        return ((input, _selected(input.shape, dim % input.ndim, index.reshape(-1), g)),)
    positions = indexing.index_select(scatter.positions(input), dim, index)
    return ((input, _accumulate(input, positions, g)),)


@rule("embedding", uses_inputs=False, uses_result=False)
def _embedding(g, result, input, weight, padding_idx, scale_grad_by_freq):
    if padding_idx is not None:  # (zeroed, not multiplied: an inf there must not give NaN)
        g = g.masked_fill((input == padding_idx).unsqueeze(-1), 0)
    if scale_grad_by_freq:
        ones = creation.ones(input.shape, dtype=g.dtype, device=g.device)
        g = g / _selected(weight.shape[:1], 0, input, ones)[input].unsqueeze(-1)
    if _recorded(g, g):  # create_graph: the recorded general form
        return ((weight, _accumulate(weight, scatter.positions(weight)[input], g)),)
    return ((weight, _selected(weight.shape, 0, input, g)),)


@rule("gather", uses_inputs=False, uses_result=False)
def _gather(g, result, input, dim, index, *, sparse_grad=False, out=None):
    return ((input, _accumulate(input, indexing.gather(scatter.positions(input), dim, index), g)),)


@rule("take", uses_inputs=False, uses_result=False)
def _take(g, result, input, index):
    return ((input, _accumulate(input, indexing.take(scatter.positions(input), index), g)),)


@rule("masked_select", uses_inputs=False, uses_result=False)
def _masked_select(g, result, input, mask):
    size = broadcast_shapes(input.shape, mask.shape)
    expanded = shape.broadcast_to(input, size)
    positions = indexing.masked_select(scatter.positions(shape.broadcast_to(input, size)), mask)
    return ((input, _accumulate(expanded, positions, g)),)


@rule("masked_fill", uses_inputs=False, uses_result=False)
def _masked_fill(g, result, input, mask, value):
    return (input, _pass(~mask, g)), (value, reduction.sum(_pass(mask, g)))
