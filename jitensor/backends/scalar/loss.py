"""Scalar definitions of the class losses (nll_loss, and cross_entropy as log_softmax fused
into it), shared by the CPU and CUDA kernels.

A *row* holds the C scores x[c] of one target t. With lse = log(sum(exp(x))) (cross_entropy)
or lse = 0 (nll_loss: x already holds log-probabilities), -log p[c] = lse - x[c] and

    loss = w[t] * (lse - x[t])                                 (w: class weights, or all 1)
    with label smoothing s:  (1 - s) * loss + s / C * sum_c w[c] * (lse - x[c])

The gradient of g * loss by x[c], with p[c] = exp(x[c] - lse) (0 for nll_loss, whose lse
does not depend on x) and W = sum_c w[c]:

    a * p[c] - b * w[c] - h * (c == t),  (a, b, h) = g * ((1 - s) w[t] + s W / C, s / C, (1 - s) w[t])

A target equal to ignore_index counts nothing: its row's loss, weight and gradient are 0."""
from numba.extending import register_jitable

NONE, MEAN, SUM = range(3)  # the reductions, in the order of torch's Reduction enum


@register_jitable
def row_loss(lse, picked, weight, smooth, smoothing, n_classes):
    """The loss of one target: `picked` is x[t], `weight` w[t], `smooth` the row's sum of
    w[c] * (lse - x[c]) (read only when smoothing)."""
    loss = weight * (lse - picked)
    if smoothing == 0.0:
        return loss
    return (1.0 - smoothing) * loss + smoothing / n_classes * smooth


@register_jitable
def grad_coefficients(g, weight, class_total, smoothing, n_classes):
    """(a, b, h) of the module docstring for a row whose loss has gradient g and target weight
    `weight`; `class_total` is W."""
    h = g * ((1.0 - smoothing) * weight)
    if smoothing == 0.0:  # (then W is not read: a backend may leave it unset)
        return h, 0.0, h
    share = smoothing / n_classes
    return h + g * share * class_total, g * share, h


@register_jitable
def class_grad(a, b, h, p, w, hit):
    """The gradient at one class: p its probability, w its weight, hit whether it is the target."""
    grad = a * p - b * w
    return grad - h if hit else grad
