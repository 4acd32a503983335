"""The rules of ops/shape.py's ops: views and shape ops (and Tensor's contiguous and to)."""
from ... import creation
from ...ops import shape
from ._common import rule


@rule("view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze",
      "unsqueeze", uses_inputs=False, uses_result=False)
def _reshape(g, result, input, *args, **kwargs):
    return ((input, shape.reshape(g, input.shape)),)


@rule("expand", "expand_as", "broadcast_to", "contiguous", "clone", "to", uses_inputs=False,
      uses_result=False)
def _identity(g, result, input, *args, **kwargs):
    return ((input, g),)  # the engine sums expanded dims and converts dtype and device back


@rule("permute", uses_inputs=False, uses_result=False)
def _permute(g, result, input, *dims):
    order = [d % input.ndim for d in (shape._ints(dims, "permute", "dims") if input.ndim else [])]
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return ((input, shape.permute(g, inverse)),)


@rule("transpose", "swapaxes", "swapdims", uses_inputs=False, uses_result=False)
def _transpose(g, result, input, dim0, dim1):
    return ((input, shape.transpose(g, dim0, dim1)),)


@rule("t", uses_inputs=False, uses_result=False)
def _t(g, result, input):
    return ((input, shape.transpose(g, 0, 1) if input.ndim == 2 else g),)


@rule("_T", uses_inputs=False, uses_result=False)
def _T(g, result, input):
    return ((input, shape.permute(g, list(range(input.ndim - 1, -1, -1)))),)


@rule("_mT", uses_inputs=False, uses_result=False)
def _mT(g, result, input):
    return ((input, shape.transpose(g, -2, -1)),)


@rule("movedim", "moveaxis", uses_inputs=False, uses_result=False)
def _movedim(g, result, input, source, destination):
    return ((input, shape.movedim(g, destination, source)),)


@rule("flip", uses_inputs=False, uses_result=False)
def _flip(g, result, input, dims):
    return ((input, shape.flip(g, dims)),)


@rule("narrow", uses_inputs=False, uses_result=False)
def _narrow(g, result, input, dim, start, length):
    grad = creation.zeros(input.shape, dtype=g.dtype, device=g.device)
    shape.narrow(grad, dim, int(start), length).copy_(g)
    return ((input, grad),)


def _pieces(g, result, input, dim):
    """One gradient per piece of a split of `input` along `dim` (zeros for pieces unused); a
    split into one piece is a node of one output, whose gradient comes bare."""
    g = g if isinstance(g, tuple) else (g,)
    return [gi if gi is not None else creation.zeros(r.shape, dtype=r.dtype, device=r.device)
            for gi, r in zip(g, result, strict=False)]


@rule("split", "chunk", uses_inputs=False)  # the result: the shapes of unused pieces
def _split(g, result, input, size_or_count, dim=0):
    return ((input, shape.cat(_pieces(g, result, input, dim), dim)),)


@rule("unbind", uses_inputs=False)
def _unbind(g, result, input, dim=0):
    return ((input, shape.stack(_pieces(g, result, input, dim), dim)),)


@rule("cat", "concat", "concatenate", uses_inputs=False, uses_result=False)
def _cat(g, result, tensors, dim=0, *, out=None):
    skipped = [t for t in tensors if t.ndim == 1 and t.shape[0] == 0]  # cat skips these
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    return list(zip(kept, shape.split(g, [t.shape[dim] for t in kept], dim), strict=False)) + \
        [(t, creation.zeros(0, dtype=g.dtype, device=g.device)) for t in skipped]


@rule("stack", uses_inputs=False, uses_result=False)
def _stack(g, result, tensors, dim=0, *, out=None):
    return list(zip(tensors, shape.unbind(g, dim), strict=False))


@rule("broadcast_tensors", uses_inputs=False, uses_result=False)
def _broadcast_tensors(g, result, *tensors):
    return list(zip(tensors, g, strict=False))
