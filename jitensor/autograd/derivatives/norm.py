"""The rules of ops/norm.py's ops."""
from ...ops import elementwise, norm, reduction
from .. import grad_mode
from ._common import _recorded, _wanted, rule


@rule("native_layer_norm", uses_result=False)
def _native_layer_norm(g, result, input, weight, bias, normalized_shape, eps, stats):
    return _normalization(g, input, weight, bias, normalized_shape, eps, stats, True)


@rule("fused_rms_norm", uses_result=False)
def _fused_rms_norm(g, result, input, weight, normalized_shape, eps, stats):
    return _normalization(g, input, weight, None, normalized_shape, eps, stats, False)


@rule("native_batch_norm", uses_result=False)
def _native_batch_norm(g, result, input, weight, bias, eps, stats):
    """One kernel (norm.batch_norm_grad) unless the backward is recorded; then the same formulas
    composed from ops over every dim but the channels'."""
    params = _wanted(weight) or _wanted(bias)
    if not (_recorded(g, input) or grad_mode._state.enabled and params):
        dx, dw, db = norm.batch_norm_grad(g, input, weight, stats, _wanted(input))
        return (input, dx), (weight, dw), (bias, db)
    dims = (0, *range(2, input.ndim))
    first = input[(slice(0, 1), slice(None)) + (slice(0, 1),) * (input.ndim - 2)].detach()
    centre = input - first  # less each channel's first element, as the kernels
    centre = centre - reduction.mean(centre, dims, keepdim=True)
    rstd = elementwise.rsqrt(reduction.mean(elementwise.square(centre), dims, keepdim=True) + eps)
    xhat = centre * rstd
    pairs = [(bias, g.sum(dims))] if _wanted(bias) else []
    if _wanted(weight):
        pairs.append((weight, (g * xhat).sum(dims)))
    if _wanted(input):
        gw = g if weight is None else g * weight.reshape((1, -1) + (1,) * (input.ndim - 2))
        pairs.append((input, rstd * (gw - reduction.mean(gw, dims, keepdim=True)
                                     - xhat * reduction.mean(gw * xhat, dims, keepdim=True))))
    return pairs


def _normalization(g, input, weight, bias, shape, eps, stats, centred):
    """One kernel (norm.norm_grad) unless the backward is recorded; then the same formulas
    (kernels/scalar/norm.py) composed from ops, mean and rstd recomputed differentiably."""
    params = _wanted(weight) or _wanted(bias)
    if not (_recorded(g, input) or grad_mode._state.enabled and params):
        dx, dw, db = norm.norm_grad(g, input, weight, shape, stats, centred, _wanted(input),
                                    params)
        return (input, dx), (weight, dw), (bias, db)
    dims = tuple(range(-len(shape), 0))
    centre = input
    if centred:  # less each row's first element, a constant: as exact as the kernels' sums
        centre = input - input[(...,) + (slice(0, 1),) * len(shape)].detach()
        centre = centre - reduction.mean(centre, dims, keepdim=True)
    rstd = elementwise.rsqrt(reduction.mean(elementwise.square(centre), dims, keepdim=True) + eps)
    xhat = centre * rstd
    pairs = [(bias, g)]  # (the engine sums over the rows)
    if _wanted(weight):
        pairs.append((weight, g * xhat))
    if _wanted(input):
        gw = g if weight is None else g * weight
        slope = reduction.mean(gw * xhat, dims, keepdim=True)
        centred_gw = gw - reduction.mean(gw, dims, keepdim=True) if centred else gw
        pairs.append((input, rstd * (centred_gw - xhat * slope)))
    return pairs
