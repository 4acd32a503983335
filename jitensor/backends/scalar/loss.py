"""Scalar definitions of the class losses (nll_loss, and cross_entropy as log_softmax fused
into it), shared by the CPU and CUDA kernels.

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
