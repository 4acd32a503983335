"""The rules of ops/loss.py's ops."""
import math

from ... import creation
from ...kernels.scalar.loss import BCE, BCE_EPSILON, BCE_LOGITS, HUBER, KL_DIV, MEAN, SMOOTH_L1
from ...ops import activation, elementwise, loss
from ...ops import reduction as reductions  # ("reduction": nll_loss's argument)
from .. import grad_mode
from ..graph import carrying
from ._common import _recorded, _wanted, rule


@rule("nll_loss", uses_result=False)
def _nll_loss(g, result, input, target, weight, d, ignore_index, reduction, smoothing, log_probs,
              saved):
    """One kernel (loss.nll_loss_grad) unless the backward is recorded; then the same formula
    (kernels/scalar/loss.py) composed from ops, the softmax differentiable."""
    if weight is not None and weight.requires_grad:
        raise RuntimeError("the derivative for 'weight' is not implemented")
    if not _recorded(g, input):
        return ((input, loss.nll_loss_grad(g, input, target, weight, d, ignore_index, reduction,
                                           smoothing, log_probs, saved)),)
    n_classes = input.shape[d]
    kept = target != ignore_index
    t = target.masked_fill(~kept, 0)
    g = elementwise.where(kept, g / saved[1] if reduction == MEAN else g, 0.0).unsqueeze(d)
    along = [-1 if k == d else 1 for k in range(input.ndim)]
    t_weight, w, class_total = (1.0, 1.0, n_classes) if weight is None else \
        (weight[t].unsqueeze(d), weight.reshape(along), weight.sum())
    share = smoothing / n_classes
    h = g * ((1.0 - smoothing) * t_weight)
    hit = creation.arange(n_classes, device=input.device).reshape(along) == t.unsqueeze(d)
    grad = elementwise.where(hit, -h, 0.0)
    if smoothing:
        grad = grad - g * share * w
    if not log_probs:
        grad = grad + (h + g * (share * class_total)) * reductions.softmax(input, d)
    return ((input, grad),)


@rule("pointwise_loss", uses_result=False)
def _pointwise_loss(g, result, input, target, extra, code, param):
    """The input's derivative in one kernel (loss.pointwise_loss_grad) unless the backward is
    recorded, then composed from ops; the target's and pos_weight's (rarely asked for) composed
    too, as torch's formulas."""
    x, y = input, target
    pw = 1.0 if extra is None else extra
    wanted = _wanted(x), _wanted(y), _wanted(extra)
    piecewise = code == SMOOTH_L1 or code == HUBER  # (the target's is -dx)
    dx = None
    if wanted[0] or wanted[1] and piecewise:
        if not (grad_mode._state.enabled or carrying(g, x, y)):
            dx = loss.pointwise_loss_grad(x, y, extra, code, param)
        elif piecewise:  # linear from |d| = param on, as the forward (and torch)
            d = x - y
            top = 1.0 if code == SMOOTH_L1 else float(param)
            # (NaN stays NaN)
            linear = elementwise.where(d > 0, top, elementwise.where(d < 0, -top, d))
            dx = elementwise.where(d.abs() < param, d / param if code == SMOOTH_L1 else d, linear)
        elif code == BCE:
            dx = (x - y) / elementwise.clamp_min((1 - x) * x, BCE_EPSILON)
        elif code == BCE_LOGITS:
            dx = (1 - y) - ((pw - 1) * y + 1) * elementwise.sigmoid(-x)
        else:
            dx = -y if code == KL_DIV else -elementwise.exp(y)
    grads = [(x, g * dx)] if wanted[0] else []
    if wanted[1]:
        if piecewise:
            dy = -dx
        elif code == BCE:  # -logit(x), as torch's (infinite at 0 and 1)
            dy = elementwise.log1p(-x) - elementwise.log(x)
        elif code == BCE_LOGITS:
            dy = -x - (pw - 1) * activation.logsigmoid(x)
        elif code == KL_DIV:  # (of xlogy(y, y): NaN at y = 0, as torch's)
            dy = elementwise.where(y != 0, elementwise.log(y) + 1, math.nan) - x
        else:
            dy = elementwise.exp(y) * (y - x + 1)
        grads.append((y, g * dy))
    if wanted[2]:
        grads.append((extra, g * -(y * activation.logsigmoid(x))))
    return grads


@rule("ctc_loss", uses_result=True)
def _ctc_loss(g, result, log_probs, targets, offsets, stride, input_lengths, target_lengths,
              blank, zero_infinity, alpha):
    """One kernel (loss.ctc_loss_grad), as torch's native backward: its result is not
    differentiated again (torch has no derivative of it either)."""
    return ((log_probs, loss.ctc_loss_grad(g, result, log_probs, targets, offsets, stride,
                                           input_lengths, target_lengths, blank, zero_infinity,
                                           alpha)),)
