"""Scalar definitions of the normalisations over trailing dims (layer_norm, rms_norm), shared
by the CPU and CUDA kernels.

A *row* holds the n elements normalised together. layer_norm centres it, rms_norm does not:

    mean = sum(x) / n                    (0 for rms_norm)
    rstd = 1 / sqrt(sum((x - mean)^2) / n + eps)
    y = xhat * w + b,  xhat = (x - mean) * rstd      (w = 1 and b = 0 where absent)

Both come from one pass of float64 sums of d = x - shift and d^2, the shift being the row's
first element (0 for rms_norm), and the mean is kept as the shift plus an offset: x - mean is
(x - shift) - offset, exact where x - shift is, and more accurate than x less a rounded mean
(rows far from 0). The forward saves each row's offset and rstd. The gradient of a row for
upstream gradient gy, with gw = gy * w:

    dx = rstd * ((gw - mean(gw)) - xhat * mean(gw * xhat))     (rms_norm: no mean(gw) term)
    dw = the sum over rows of gy * xhat,   db = the sum over rows of gy
"""
from numba.extending import register_jitable

from . import libm


@register_jitable
def moments(s1, s2, n, centred):
    """(the mean's offset from the shift, the summed squared deviations) of a row from the
    float64 sums s1, s2 of d and d^2 over it. One pass suffices: s2 - s1^2 / n cancels no more
    than a factor (mean - shift)^2 / variance <= n - 1 (Samuelson's inequality: the shift is
    an element) of the float64 digits, where a shift of 0 could lose them all."""
    if not centred:
        return 0.0, s2
    return s1 / n, max(s2 - s1 * s1 / n, 0.0)


@register_jitable
def rstd(squares, n, eps):
    """1 / sqrt(variance + eps) from the row's summed squared deviations (a float64)."""
    return 1.0 / libm.sqrt(squares / n + eps)


@register_jitable
def normalized(d, offset, rstd):
    """xhat at one element, d being x - shift."""
    return (d - offset) * rstd


@register_jitable
def input_grad(gw, xhat, rstd, centre, slope):
    """dx at one element: `centre` is mean(gw) (0 for rms_norm), `slope` mean(gw * xhat)."""
    return rstd * ((gw - centre) - xhat * slope)
