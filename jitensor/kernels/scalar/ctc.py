"""Scalar definitions of the CTC loss (Graves et al. 2006), shared by the kernels: the extended
target l' (blanks around and between the labels) and the log-space sum of up to three terms,
written as torch's native CPU kernel writes them so that the values follow its rounding."""
import numpy as np
from numba.extending import register_jitable

from . import libm
from .reduction import cast_like


@register_jitable
def target_prime(targets, offset, stride, s, blank):
    """l'[s]: the blank at even s, label (s - 1) / 2 at odd s."""
    if s % 2 == 0:
        return blank
    return targets[offset + (s // 2) * stride]


@register_jitable
def log_sum3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)) shifted by the max; all -inf gives -inf (shift 0: never
    -inf - -inf)."""
    m = max(a, max(b, c))
    if m == -np.inf:
        m = cast_like(0, a)
    return libm.log(libm.exp(a - m) + libm.exp(b - m) + libm.exp(c - m)) + m


@register_jitable
def log_sum2(a, b):
    """log(exp(a) + exp(b)), as log_sum3."""
    m = max(a, b)
    if m == -np.inf:
        m = cast_like(0, a)
    return libm.log(libm.exp(a - m) + libm.exp(b - m)) + m
