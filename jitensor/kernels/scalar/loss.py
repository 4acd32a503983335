"""Scalar definitions of the losses, shared by the CPU and CUDA kernels: the class losses
(nll_loss, and cross_entropy as log_softmax fused into it) and, at the end, the pointwise ones.

A *row* holds the C scores x[c] of one target t. Its log-sum-exp is kept in two parts, the max
m and log_s = log(sum(exp(x - m))), so that -log p[c] = (m - x[c]) + log_s loses nothing to
the size of the scores (as torch's (x - m) - log_s; m + log_s in one float would: scores of
1e5 in float32). nll_loss reads x as log-probabilities already: m = log_s = 0. Then

    loss = w[t] * -log p[t]                                     (w: class weights, or all 1)
    with label smoothing s:  (1 - s) * loss + s / C * sum_c w[c] * -log p[c]

The gradient of g * loss by x[c], with p[c] = exp((x[c] - m) - log_s) and W = sum_c w[c]:

    a * p[c] - b * w[c] - h * (c == t),  with
    (a, b, h) = g * ((1 - s) w[t] + s W / C,  s / C,  (1 - s) w[t])

where a = 0 for nll_loss, whose log-sum-exp does not depend on x (no softmax term: 0 * p, not
a NaN from an infinite g). A target equal to ignore_index counts nothing: its row's loss,
weight and gradient are 0."""
from numba.extending import register_jitable

from . import libm, table
from .elementwise import logsigmoid, sigmoid, xlogy
from .reduction import cast_like

NONE, MEAN, SUM = range(3)  # the reductions, in the order of torch's Reduction enum


@register_jitable
def row_loss(top, log_s, picked, weight, smooth, smoothing, n_classes):
    """The loss of one target: `picked` is x[t], `weight` w[t], `smooth` the row's sum of
    w[c] * -log p[c] (read only when smoothing)."""
    loss = weight * ((top - picked) + log_s)
    if smoothing == 0.0:
        return loss
    return (1.0 - smoothing) * loss + smoothing / n_classes * smooth


@register_jitable
def grad_coefficients(g, weight, class_total, smoothing, n_classes, log_probs):
    """(a, b, h) of the module docstring for a row whose loss has gradient g and target weight
    `weight`; `class_total` is W."""
    h = g * ((1.0 - smoothing) * weight)
    if smoothing == 0.0:  # (then W is not read: a backend may leave it unset)
        return 0.0 if log_probs else h, 0.0, h
    share = smoothing / n_classes
    return h + g * share * class_total, g * share, h


@register_jitable
def class_grad(a, b, h, p, w, hit):
    """The gradient at one class: p its probability, w its weight, hit whether it is the target."""
    grad = a * p - b * w
    return grad - h if hit else grad


# -- pointwise losses: the "loss" family of the elementwise kernels computes loss(x, y, c, d) of
# input x and target y, c a third operand (pos_weight) and d a number (beta, delta); the
# "loss_grad" family its derivative by x, under the same codes. Formulas as torch's kernels;
# the ones calling libm inlined on the CPU, so that their loops vectorise.
SMOOTH_L1, HUBER, BCE, BCE_LOGITS, KL_DIV, KL_DIV_LOG = table.codes(
    "loss", "smooth_l1", "huber", "bce", "bce_logits", "kl_div", "kl_div_log")
BCE_EPSILON = 9.999999960041972e-13  # torch's EPSILON, 1e-12 rounded to float32 as it stores it


@register_jitable
def smooth_l1(x, y, beta):
    z = abs(x - y)
    return cast_like(0.5, x) * z * z / beta if z < beta else z - cast_like(0.5, x) * beta


@register_jitable
def smooth_l1_grad(x, y, beta):
    d = x - y  # (compared as torch's kernel does: a NaN d gives NaN)
    one = cast_like(1, x)
    return -one if d < -beta else one if d > beta else d / beta


@register_jitable
def huber(x, y, delta):
    z = abs(x - y)
    return cast_like(0.5, x) * z * z if z < delta else delta * (z - cast_like(0.5, x) * delta)


@register_jitable
def huber_grad(x, y, delta):
    d = x - y
    return -delta if d < -delta else delta if d > delta else d


@register_jitable
def _log_at_least_minus_100(v):
    """log(v) and log1p(-x) of binary_cross_entropy are clamped at -100, as torch: x = 0 or 1
    gives a finite loss. (NaN stays NaN.)"""
    floor = cast_like(-100, v)
    return floor if v < floor else v


@libm.inline_on_cpu
def bce(x, y):
    """-(y log x + (1 - y) log(1 - x)) of a probability x."""
    one = cast_like(1, x)
    return (y - one) * _log_at_least_minus_100(libm.log1p(-x)) \
        - y * _log_at_least_minus_100(libm.log(x))


@libm.inline_on_cpu
def bce_grad(x, y):
    """(x - y) / (x (1 - x)), the denominator at least BCE_EPSILON."""
    den = (cast_like(1, x) - x) * x
    eps = cast_like(BCE_EPSILON, x)
    return (x - y) / (eps if den < eps else den)


@libm.inline_on_cpu
def bce_logits(x, y, pos_weight):
    """bce of sigmoid(x) from x itself, the positive term weighted by pos_weight:
    (1 - y) x - (1 + (pos_weight - 1) y) log(sigmoid(x))."""
    one = cast_like(1, x)
    return (one - y) * x - ((pos_weight - one) * y + one) * logsigmoid(x)


@libm.inline_on_cpu
def bce_logits_grad(x, y, pos_weight):
    """(1 - y) - (1 + (pos_weight - 1) y) sigmoid(-x)."""
    one = cast_like(1, x)
    return (one - y) - ((pos_weight - one) * y + one) * sigmoid(-x)


@libm.inline_on_cpu
def kl_div(x, y):
    """y (log y - x) of log-probabilities x, 0 where y is 0."""
    return xlogy(y, y) - y * x


@libm.inline_on_cpu
def kl_div_log(x, y):
    """The same with log-probabilities y: e^y (y - x)."""
    return libm.exp(y) * (y - x)
