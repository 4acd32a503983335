"""More of torch's native functions at the top level, each composed of jitensor's ops (so each
runs on every device and differentiates where torch's does): gradient (finite differences),
histogramdd, nonzero_static, segment_reduce, binomial (sampled from jitensor's generator),
embedding_renorm_, torch.ctc_loss and conv_tbc (nn.functional's with torch's native
arguments), set_default_tensor_type, and the eager forms of the higher-order ops cond and
while_loop."""
import builtins
import importlib
import math
import numbers
import warnings

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..creation import arange, full, tensor, zeros
from ..tensor import Tensor
from ._common import broadcast_shapes, same_device, write_pair
from .reduction import _return_type, return_types

__all__ = ["binomial", "cond", "conv_tbc", "ctc_loss", "embedding_renorm_", "gradient",
           "histogramdd", "nonzero_static", "segment_reduce", "set_default_tensor_type",
           "while_loop"]

return_types.histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))


def _jt():
    return importlib.import_module("jitensor")


def _F():
    return importlib.import_module("jitensor.nn.functional")


def _tensor_arg(fn, t, name, position=None):
    if not isinstance(t, Tensor):
        where = f" (position {position})" if position else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be Tensor, not "
                        f"{type(t).__name__}")


# -- gradient -----------------------------------------------------------------------------------
def _along(t, dim, ndim):
    """A 1-D tensor shaped to broadcast along `dim` of an ndim-D tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return t.reshape(shape)


def _gradient_uniform(f, dim, h, edge_order):
    n = f.shape[dim]
    mid = (f.narrow(dim, 2, n - 2) - f.narrow(dim, 0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (f.narrow(dim, 1, 1) - f.narrow(dim, 0, 1)) / h
        last = (f.narrow(dim, n - 1, 1) - f.narrow(dim, n - 2, 1)) / h
    else:
        first = (f.narrow(dim, 0, 1) * -1.5 + f.narrow(dim, 1, 1) * 2.0
                 - f.narrow(dim, 2, 1) * 0.5) / h
        last = (f.narrow(dim, n - 3, 1) * 0.5 - f.narrow(dim, n - 2, 1) * 2.0
                + f.narrow(dim, n - 1, 1) * 1.5) / h
    return _jt().cat([first, mid, last], dim)


def _gradient_coordinates(f, dim, x, edge_order):
    """Second-order differences on the (possibly uneven) coordinates x, as NumPy's gradient."""
    n, nd = f.shape[dim], f.ndim
    dx = x[1:] - x[:-1]
    dx1, dx2 = dx[:-1], dx[1:]
    a = _along(-dx2 / (dx1 * (dx1 + dx2)), dim, nd)
    b = _along((dx2 - dx1) / (dx1 * dx2), dim, nd)
    c = _along(dx1 / (dx2 * (dx1 + dx2)), dim, nd)
    mid = a * f.narrow(dim, 0, n - 2) + b * f.narrow(dim, 1, n - 2) + c * f.narrow(dim, 2, n - 2)
    if edge_order == 1:
        first = (f.narrow(dim, 1, 1) - f.narrow(dim, 0, 1)) / dx[0]
        last = (f.narrow(dim, n - 1, 1) - f.narrow(dim, n - 2, 1)) / dx[n - 2]
    else:
        d1, d2 = dx[0], dx[1]
        first = (f.narrow(dim, 0, 1) * (-(2 * d1 + d2) / (d1 * (d1 + d2)))
                 + f.narrow(dim, 1, 1) * ((d1 + d2) / (d1 * d2))
                 + f.narrow(dim, 2, 1) * (-d1 / (d2 * (d1 + d2))))
        d1, d2 = dx[n - 3], dx[n - 2]
        last = (f.narrow(dim, n - 3, 1) * (d2 / (d1 * (d1 + d2)))
                + f.narrow(dim, n - 2, 1) * (-(d2 + d1) / (d1 * d2))
                + f.narrow(dim, n - 1, 1) * ((2 * d2 + d1) / (d2 * (d1 + d2))))
    return _jt().cat([first, mid, last], dim)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient: a tuple of the derivative estimates of `input` along each dim of `dim`
    (all by default): central differences inside, one-sided ones of order `edge_order` (1 or
    2) at the ends. `spacing`: one step for every dim, a list of steps (one per dim), or a list
    of 1-D coordinate tensors (one per dim, possibly uneven)."""
    _tensor_arg("gradient", input, "input")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    given_dim = dim is not None
    if dim is None:
        dims = list(range(input.ndim))
    elif isinstance(dim, numbers.Integral):
        dims = [int(dim)]
    else:
        dims = [int(d) for d in dim]
    dims = [d % input.ndim if input.ndim else d for d in dims]
    if isinstance(spacing, (list, tuple)):
        spacings = list(spacing)
        if len(spacings) != len(dims):
            if given_dim:
                raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a "
                                   f"scalar or it's spacing and dim arguments to have the same "
                                   f"length, but got a spacing argument of length "
                                   f"{len(spacings)} and a dim argument of length {len(dims)}.")
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, "
                               f"or a list of length equal to 'self.dim() = {input.ndim}', "
                               f"since dim argument was not given, but got a list of length "
                               f"{len(spacings)}")
    else:
        if isinstance(spacing, Tensor):
            spacing = spacing.item()
        spacings = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    out = []
    for d, h in zip(dims, spacings, strict=True):
        if isinstance(h, Tensor) and h.ndim == 1:
            same_device("gradient", input, h)
            if h.shape[0] != input.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same "
                                   f"device and have size {input.shape[d]} along dim {d}, got "
                                   f"{h.shape[0]}")
            out.append(_gradient_coordinates(input, d, h, edge_order))
        else:
            if isinstance(h, Tensor):
                h = h.item()
            out.append(_gradient_uniform(input, d, h, edge_order))
    return tuple(out)


# -- histogramdd --------------------------------------------------------------------------------
def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):
    """torch.histogramdd: the D-dimensional histogram of the points input (..., D) as
    ``(hist, bin_edges)``: `bins` an int (for every dim), D ints, or D 1-D tensors of
    increasing edges; `range` (2D floats: each dim's min and max; default the data's, widened
    by 0.5 each way where they are equal). Bins are closed on the left, the last of each dim
    also on the right; points outside are not counted. `weight` (input's leading shape) sums
    weights; `density` normalises to a density over the bins' volumes."""
    jt = _jt()
    fn = "histogramdd"
    _tensor_arg(fn, input, "input")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                           f"same dtype and be floating point, got {input.dtype}")
    if input.ndim < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension, "
                           "but got 0")
    D = input.shape[-1]
    x = input.detach().reshape(-1, D)
    if isinstance(bins, numbers.Integral):
        bins = [int(bins)] * D
    bins = list(bins)
    if len(bins) != D:
        raise RuntimeError(f"torch.histogramdd: expected {D} sequences of bin edges for each "
                           f"of the {D} dimensions of the input, but got {len(bins)}")
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range should "
                           f"have {2 * D} elements, but got {len(range)}")
    edges = []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.ndim != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, "
                                   f"but got {b.ndim} dimensions in the bins tensor for "
                                   f"dimension {d}")
            if b.dtype is not input.dtype:
                raise RuntimeError("torch.histogramdd: input tensor and bins tensors should "
                                   "have the same dtype")
            if b.numel() < 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 "
                                   f"element, but got {b.numel()} elements for dimension {d}")
            edges.append(b.detach().clone())
            continue
        h = jt.histogram(x[:, d].contiguous(), int(b),
                         range=None if range is None else (range[2 * d], range[2 * d + 1]))
        edges.append(h.bin_edges)
    if weight is not None:
        _tensor_arg(fn, weight, "weight")
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have "
                               "the same shape as the input tensor excluding its innermost "
                               "dimension")
    counts = [e.numel() - 1 for e in edges]
    keep = jt.ones(x.shape[0], dtype=dtypes.bool_, device=x.device)
    flat = jt.zeros(x.shape[0], dtype=dtypes.int64, device=x.device)
    for d, e in enumerate(edges):
        v = x[:, d].contiguous()
        keep = keep & (v >= e[0]) & (v <= e[-1])
        pos = jt.searchsorted(e, v, right=True) - 1
        pos = pos.clamp(0, max(counts[d] - 1, 0))
        flat = flat * counts[d] + pos
    total = math.prod(counts)
    src = jt.ones(x.shape[0], dtype=input.dtype, device=x.device) if weight is None else \
        weight.detach().reshape(-1).to(input.dtype)
    src = jt.where(keep, src, 0.0)
    hist = jt.zeros(total, dtype=input.dtype, device=x.device).index_add_(0, flat, src)
    hist = hist.reshape(counts)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            hist = hist / _along(e[1:] - e[:-1], d, D)
    return write_pair(fn, out, (hist, edges), return_types.histogramdd,
                      "a (hist, bin_edges) pair")


# -- nonzero_static -----------------------------------------------------------------------------
def nonzero_static(input, *, size, fill_value=-1):
    """torch.nonzero_static: nonzero(input) cut or padded (with fill_value rows) to exactly
    `size` rows."""
    _tensor_arg("nonzero_static", input, "input")
    if isinstance(size, builtins.bool) or not isinstance(size, numbers.Integral) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    jt = _jt()
    idx = jt.nonzero(input)
    n = idx.shape[0]
    if n >= size:
        return idx[:size].clone()
    pad = full((size - n, input.ndim), fill_value, dtype=dtypes.int64, device=input.device)
    return jt.cat([idx, pad], 0)


# -- segment_reduce -----------------------------------------------------------------------------
_IDENTITY = {"sum": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf, "mean": math.nan}


def _segments_1d(data, lengths, axis, reduce, initial):
    """One row of lengths: data's `axis` reduced in consecutive segments of those lengths."""
    jt = _jt()
    S = lengths.shape[0]
    ids = jt.repeat_interleave(arange(S, device=data.device), lengths.long())
    shape = list(data.shape)
    shape[axis] = S
    index = _along(ids, axis, data.ndim).expand(
        [s if d != axis else ids.shape[0] for d, s in enumerate(data.shape)])
    start = _IDENTITY[reduce] if initial is None else float(initial)
    base = full(shape, start, dtype=data.dtype, device=data.device)
    name = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce == "mean":
        total = base.scatter_reduce(axis, index, data, "sum",
                                    include_self=initial is not None)
        count = _along(lengths.to(data.dtype), axis, data.ndim)
        if initial is None:
            return jt.where(count > 0, total / count.clamp(min=1), math.nan)
        return jt.where(count > 0, total / count.clamp(min=1), float(initial))
    if initial is None and ids.shape[0]:
        out = base.scatter_reduce(axis, index, data, name, include_self=False)
        return out
    return base.scatter_reduce(axis, index, data, name, include_self=True)


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """torch.segment_reduce: data reduced along `axis` over consecutive segments given by
    `lengths` (*, S) or `offsets` (*, S + 1), whose leading dims are data's before `axis`.
    reduce: 'sum', 'mean', 'prod', 'max'/'amax', 'min'/'amin'; an empty segment gives
    `initial` (default: the reduction's identity, NaN for mean), which otherwise joins every
    segment. `unsafe` skips the checks of the lengths."""
    fn = "segment_reduce"
    _tensor_arg(fn, data, "data")
    reduce_name = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    if reduce_name not in _IDENTITY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{_type_name(data.dtype)}'")
    if lengths is None:
        _tensor_arg(fn, offsets, "offsets")
        lengths = offsets[..., 1:] - offsets[..., :-1]
    else:
        _tensor_arg(fn, lengths, "lengths")
    same_device(fn, data, lengths)
    axis = axis % data.ndim
    if axis != lengths.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    if tuple(lengths.shape[:-1]) != tuple(data.shape[:axis]):
        raise RuntimeError("segment_reduce(): Expected lengths to have the leading dims of "
                           "data")
    if not unsafe:
        if lengths.numel() and (lengths < 0).any().item():
            raise RuntimeError("lengths contains negative value!")
        if not (lengths.sum(-1) == data.shape[axis]).all().item():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                               "sum to data.size(lengths.dim()-1) when !unsafe.")
    if lengths.ndim == 1:
        return _segments_1d(data, lengths, axis, reduce_name, initial)
    rows = lengths.reshape(-1, lengths.shape[-1])
    block = data.reshape((-1,) + tuple(data.shape[axis:]))
    out = [_segments_1d(block[i], rows[i], 0, reduce_name, initial).unsqueeze(0)
           for i in range(rows.shape[0])]
    result = _jt().cat(out, 0)
    return result.reshape(tuple(data.shape[:axis]) + tuple(result.shape[1:]))


def _type_name(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dtype.name, dtype.name)


# -- binomial -----------------------------------------------------------------------------------
def _binomial_inversion(n, p, g):
    """Counts of successes as the number of geometric(p) waiting times that fit within n
    trials (exact; rounds ~ n p + 1, so used where n p < 10)."""
    sampling = importlib.import_module("jitensor.ops.sampling")
    jt = _jt()
    out = zeros(n.shape[0], dtype=dtypes.float64, device=n.device)
    idx = jt.nonzero((n > 0) & (p > 0)).reshape(-1)
    log_q = (-p[idx]).log1p()
    left = n[idx]
    k = zeros(idx.shape[0], dtype=dtypes.float64, device=n.device)
    for _ in range(sampling._MAX_ROUNDS):
        if not idx.numel():
            return out
        u = sampling._open_uniform64(idx.numel(), n.device, g)
        gap = (u.log() / log_q).floor() + 1
        left = left - gap
        alive = left >= 0
        k = k + alive
        done = ~alive
        out[idx[done]] = k[done]
        idx, left, log_q, k = idx[alive], left[alive], log_q[alive], k[alive]
    sampling._rounds("binomial")


def _binomial_btrs(n, p, g):
    """Hörmann's transformed rejection (BTRS, 1993) for n p >= 10 (p <= 1/2), as torch's and
    NumPy's samplers: a candidate from a transformed uniform, accepted inside the squeeze or
    against the exact log-pmf."""
    sampling = importlib.import_module("jitensor.ops.sampling")
    jt = _jt()
    out = zeros(n.shape[0], dtype=dtypes.float64, device=n.device)
    q = 1 - p
    spq = (n * p * q).sqrt()
    b = spq * 2.53 + 1.15
    a = b * 0.0248 + p * 0.01 - 0.0873
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (b.reciprocal() * 5.1 + 2.83) * spq
    lpq = (p / q).log()
    m = ((n + 1) * p).floor()
    h = (m + 1).lgamma() + (n - m + 1).lgamma()
    idx = arange(n.shape[0], device=n.device)
    for _ in range(sampling._MAX_ROUNDS):
        if not idx.numel():
            return out
        uv = sampling._uniform64((2, idx.numel()), n.device, g)
        u, v = uv[0] - 0.5, uv[1]
        us = 0.5 - u.abs()
        a_i, b_i, n_i = a[idx], b[idx], n[idx]
        k = ((2 * a_i / us + b_i) * u + c[idx]).floor()
        inside = (k >= 0) & (k <= n_i)
        quick = inside & (us >= 0.07) & (v <= vr[idx])
        kk = k.clamp(min=0.0)
        kk = jt.minimum(kk, n_i)
        lhs = (v * alpha[idx] / (a_i / (us * us) + b_i)).log()
        rhs = h[idx] - (kk + 1).lgamma() - (n_i - kk + 1).lgamma() + (kk - m[idx]) * lpq[idx]
        accept = quick | (inside & (lhs <= rhs))
        out[idx[accept]] = kk[accept]
        idx = idx[~accept]
    sampling._rounds("binomial")


def binomial(count, prob, generator=None):
    """torch.binomial: Binomial(count, prob) samples, float tensors of one dtype broadcast
    together; drawn from jitensor's generator (a seed repeats them; the values are not
    torch's). Counts <= 0 give 0; prob is clamped into [0, 1]."""
    sampling = importlib.import_module("jitensor.ops.sampling")
    _tensor_arg("binomial", count, "count", 1)
    _tensor_arg("binomial", prob, "prob", 2)
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_type_name(count.dtype)}")
    if not prob.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for prob, got: "
                         f"{_type_name(prob.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {_type_name(prob.dtype)} but expected "
                           f"{_type_name(count.dtype)}")
    same_device("binomial", count, prob)
    shape = broadcast_shapes(count.shape, prob.shape)
    g = sampling._gen(generator)
    with no_grad():
        n = count.detach().expand(shape).to(dtypes.float64).reshape(-1).floor().clamp(min=0.0)
        p = prob.detach().expand(shape).to(dtypes.float64).reshape(-1).clamp(0.0, 1.0)
        jt = _jt()
        flip = p > 0.5
        pp = jt.where(flip, 1 - p, p)
        out = zeros(n.shape[0], dtype=dtypes.float64, device=n.device)
        small = jt.nonzero(n * pp < 10).reshape(-1)
        if small.numel():
            out[small] = _binomial_inversion(n[small], pp[small], g)
        large = jt.nonzero(n * pp >= 10).reshape(-1)
        if large.numel():
            out[large] = _binomial_btrs(n[large], pp[large], g)
        out = jt.where(flip, n - out, out).reshape(shape).to(count.dtype)
    return sampling._zero_grad(out, count, prob)


# -- nn natives ---------------------------------------------------------------------------------
def embedding_renorm_(input, indices, max_norm, norm_type):
    """torch.embedding_renorm_: rows `indices` of `input` whose norm_type-norm exceeds max_norm
    rescaled in place to max_norm / (norm + 1e-7) times themselves (each row once); returns
    input. Not differentiable (torch runs it under no_grad)."""
    _tensor_arg("embedding_renorm_", input, "input", 1)
    _tensor_arg("embedding_renorm_", indices, "indices", 2)
    if input.ndim != 2:
        raise RuntimeError(f"embedding_renorm_(): Expected 2-dimensional tensor, but got "
                           f"{input.ndim}-dimensional tensor for argument #1 'self' (while "
                           f"checking arguments for embedding_renorm_)")
    if indices.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"embedding_renorm_(): Expected tensor for argument #2 'indices' to "
                           f"have one of the following scalar types: Long, Int; but got "
                           f"{_type_name(indices.dtype)} instead")
    jt = _jt()
    with no_grad():
        rows = jt.unique(indices.reshape(-1).long())
        if rows.numel():
            taken = input[rows]
            norms = jt.linalg.vector_norm(taken, float(norm_type), dim=1)
            scale = jt.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(input.dtype)
            input[rows] = taken * scale.unsqueeze(1)
    return input


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    """torch.ctc_loss: nn.functional.ctc_loss with torch's native arguments (reduction an
    int: 0 none, 1 mean, 2 sum)."""
    if isinstance(reduction, str):
        name = reduction
    else:
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{reduction} is not a valid value for reduction")
        name = _REDUCTIONS[reduction]
    if not isinstance(input_lengths, Tensor):
        input_lengths = tensor(list(input_lengths), dtype=dtypes.int64)
    if not isinstance(target_lengths, Tensor):
        target_lengths = tensor(list(target_lengths), dtype=dtypes.int64)
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=blank,
                         reduction=name, zero_infinity=zero_infinity)


def conv_tbc(input, weight, bias, pad=0):
    """torch.conv_tbc: a 1-D convolution in (time, batch, channels) layout: input (T, B, C_in),
    weight (K, C_in, C_out), bias (C_out) -> (T + 2 pad - K + 1, B, C_out); F.conv_tbc with
    torch's argument checks of the top-level function."""
    for position, (name, t) in enumerate((("self", input), ("weight", weight),
                                          ("bias", bias)), 1):
        _tensor_arg("conv_tbc", t, name, position)
    return _F().conv_tbc(input, weight, bias, pad)


# -- settings -----------------------------------------------------------------------------------
def set_default_tensor_type(t, /):
    """torch.set_default_tensor_type (deprecated): the default dtype (and device) of a legacy
    type or its name, 'torch.DoubleTensor', say; only floating types."""
    legacy = importlib.import_module("jitensor.legacy_types")
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    parsed = legacy.parse(t)
    if parsed is None:
        if isinstance(t, str):
            raise TypeError(f"invalid type: '{t}'")
        raise TypeError(f"invalid type object: only floating-point types are supported as "
                        f"the default type, got {t!r}")
    dtype, device_type = parsed
    if not dtype.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got "
                        f"{dtype}")
    jt = _jt()
    jt.set_default_dtype(dtype)
    current = jt.get_default_device()
    if getattr(current, "type", str(current)) != device_type:
        jt.set_default_device(device_type)


# -- higher-order ops, eagerly --------------------------------------------------------------------
def _leaves(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    if isinstance(tree, dict):
        return [leaf for item in tree.values() for leaf in _leaves(item)]
    return [tree]


def _check_aliasing(op, outputs, inputs):
    ids = {id(t) for t in inputs if isinstance(t, Tensor)}
    for t in _leaves(outputs):
        if isinstance(t, Tensor) and id(t) in ids:
            raise RuntimeError(f"{op}: Higher order ops do not support aliasing: a branch "
                               f"returned one of its inputs as it is; return a copy "
                               f"(x.clone()) instead")


def cond(pred, true_fn, false_fn, operands=()):
    """torch.cond, eagerly: true_fn(*operands) if pred else false_fn(*operands). pred is a
    bool or a one-element tensor; operands a tuple or list of (nested) tensors. As in torch, a
    Python pred just calls its branch; a tensor pred also refuses a branch that returns an
    operand itself (torch's tracing refuses aliasing)."""
    if not isinstance(pred, (builtins.bool, int, float, Tensor)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                           f"{pred}.")
    if not (callable(true_fn) and callable(false_fn)):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or \
            not all(isinstance(t, Tensor) for t in _leaves(operands)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    take = builtins.bool(pred.item()) if isinstance(pred, Tensor) else builtins.bool(pred)
    result = (true_fn if take else false_fn)(*operands)
    if isinstance(pred, Tensor):
        _check_aliasing("torch.cond", result, _leaves(operands))
    return result


def _metadata(t):
    return (t.dtype, t.ndim) if isinstance(t, Tensor) else type(t)


def while_loop(cond_fn, body_fn, carried_inputs):
    """torch.while_loop, eagerly: while cond_fn(*values): values = body_fn(*values), from
    `carried_inputs` (a tuple or list of tensors or ints). body_fn must return as many values,
    with the same dtypes and dims (torch's errors); cond_fn a bool or one-element tensor."""
    if not (callable(cond_fn) and callable(body_fn)):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got "
                           f"{type(carried_inputs)}")
    for t in carried_inputs:
        if not isinstance(t, (Tensor, int)) or isinstance(t, builtins.bool):
            raise RuntimeError(f"Expect carried_inputs to be a tuple of tensors or ints, got "
                               f"{carried_inputs}")
    values = tuple(carried_inputs)
    originals = [t for t in values if isinstance(t, Tensor)]
    while True:
        go = cond_fn(*values)
        if isinstance(go, Tensor):
            if go.numel() != 1 or go.dtype is not dtypes.bool_:
                raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean "
                                   f"but got {go}")
            go = builtins.bool(go.item())
        elif go is True and all(isinstance(t, Tensor) for t in values):
            raise RuntimeError("torch.while_loop: infinite loop detected: cond_fn always "
                               "returns the same value True")
        if not go:
            return values
        result = body_fn(*values)
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if len(result) != len(values):
            raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same "
                               f"number of outputs but got lhs:{list(result)} and "
                               f"rhs:{list(values)}")
        for i, (new, old) in enumerate(zip(result, values, strict=True)):
            if _metadata(new) != _metadata(old):
                raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same "
                                   f"metadata but found: pair[{i}] differ in "
                                   f"{_metadata(new)} vs {_metadata(old)}")
        _check_aliasing("torch.while_loop", result, originals)
        values = result


TENSOR_METHODS = {"nonzero_static": nonzero_static}
