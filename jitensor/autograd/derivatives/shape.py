"""The rules of ops/shape.py's ops: views and shape ops (and Tensor's contiguous and to)."""
from ... import creation, dtypes
from ...ops import elementwise, indexing, scatter, shape
from ._common import _accumulate, rule


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
    if len(tensors) == 1:  # one output: the engine hands its gradient alone, not in a tuple
        g = (g,)
    return list(zip(tensors, g, strict=False))


def _may_overlap(size, stride):
    """Whether two elements of a view of this geometry may share memory (torch's test: each
    dim's stride, in increasing order, must step past all the smaller dims span)."""
    span = 0
    for n, s in sorted((p for p in zip(size, stride, strict=True) if p[0] > 1),
                       key=lambda p: p[1]):
        if s <= span:
            return True
        span += (n - 1) * s
    return False


@rule("as_strided", uses_inputs=False, uses_result=False)
def _as_strided(g, result, input, size, stride, storage_offset=None):
    """torch's: g added up in the storage both views read (overlapping elements of the result
    add), read back through input's own view, divided among input's elements that share one
    place in memory."""
    size, stride = shape._geometry("as_strided", size, stride)
    in_size, in_stride = list(input.shape), list(input.stride())
    in_off = shape._storage_offset(input)
    out_off = in_off if storage_offset is None else storage_offset
    low = min(in_off, out_off)
    extent = max(shape._extent(in_size, in_stride, in_off - low),
                 shape._extent(size, stride, out_off - low), 1)
    cells = creation.arange(extent, dtype=dtypes.int64, device=g.device)
    out_at = shape.as_strided(cells, size, stride, out_off - low).reshape(-1)
    in_at = shape.as_strided(cells, in_size, in_stride, in_off - low)
    flat = creation.zeros(extent, dtype=g.dtype, device=g.device)
    flat = scatter.index_add(flat, 0, out_at, g.reshape(-1))
    if _may_overlap(in_size, in_stride):
        count = scatter.index_add(creation.zeros(extent, dtype=g.dtype, device=g.device), 0,
                                  in_at.reshape(-1), creation.ones(in_at.numel(), dtype=g.dtype,
                                                                   device=g.device))
        flat = flat / elementwise.where(count == 0, 1.0, count)
    return ((input, indexing.take(flat, in_at.contiguous())),)


@rule("unfold", uses_inputs=False, uses_result=False)
def _unfold(g, result, input, dimension, size, step):
    return ((input, _accumulate(input, shape.unfold(scatter.positions(input), dimension, size,
                                                    step), g)),)
