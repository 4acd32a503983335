"""CPU kernels of the CTC loss (formulas: kernels/scalar/ctc.py), as torch's native CPU kernel:
the forward runs the alpha recursion of each batch element in log space and saves alpha; the
backward runs the beta recursion, sums alpha * beta per (t, class) and writes the gradient by
log_probs from both.

log_probs is (T, N, C), dense; targets a flat int64 buffer where element b's labels start at
offsets[b], `stride` apart. One batch element is one task: tasks never share an output element
and each runs the same loop on any number of threads, so results are the same bits at any
thread count."""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..scalar import libm
from ..scalar.ctc import log_sum2, log_sum3, target_prime
from ..scalar.reduction import cast_like
from .kernels import prange_only, serial, twins


@register_jitable
def _alpha(lp, targets, offset, stride, length, n_labels, blank, alpha, b):
    """Element b's alpha (alpha[b, t, s] for t < length, s <= 2 * n_labels) and its negative
    log-likelihood."""
    neg = cast_like(-np.inf, lp[0, 0, 0])
    if length == 0:  # (only the empty target has a path through no frames)
        return -neg if n_labels else cast_like(0, neg)
    alpha[b, 0, :] = neg
    alpha[b, 0, 0] = lp[0, b, blank]
    if n_labels > 0:
        alpha[b, 0, 1] = lp[0, b, target_prime(targets, offset, stride, 1, blank)]
    for t in range(1, length):
        for s in range(2 * n_labels + 1):
            here = target_prime(targets, offset, stride, s, blank)
            a2 = alpha[b, t - 1, s - 1] if s > 0 else neg
            # a label may skip the blank before it unless it repeats the label before that
            skip = s > 1 and target_prime(targets, offset, stride, s - 2, blank) != here
            a3 = alpha[b, t - 1, s - 2] if skip else neg
            alpha[b, t, s] = log_sum3(alpha[b, t - 1, s], a2, a3) + lp[t, b, here]
    last = length - 1
    if n_labels == 0:  # (no label state to end in)
        return -alpha[b, last, 0]
    return -log_sum2(alpha[b, last, 2 * n_labels], alpha[b, last, 2 * n_labels - 1])


@twins(lambda *args: serial(args[8].size))  # alpha
@njit(cache=True, parallel=prange_only())
def forward(nll, lp, targets, offsets, stride, input_lengths, target_lengths, blank, alpha):
    """nll[b] = -log p(target b | log_probs), alpha saved for the backward."""
    n = nll.shape[0]
    if serial(alpha.size):
        for b in range(n):
            nll[b] = _alpha(lp, targets, offsets[b], stride, input_lengths[b], target_lengths[b],
                            blank, alpha, b)
    else:
        for b in prange(n):
            nll[b] = _alpha(lp, targets, offsets[b], stride, input_lengths[b], target_lengths[b],
                            blank, alpha, b)


@register_jitable
def _grad(out, g, lp, targets, offset, stride, length, n_labels, blank, alpha, nll,
          zero_infinity, b):
    """Element b's gradient, out[:, b, :] (torch's formula, eq. 16 of the paper taken through
    the softmax: exp(lp) - exp(log(sum alpha beta) + nll - lp), times g[b])."""
    neg = cast_like(-np.inf, lp[0, 0, 0])
    n_t, n_c = lp.shape[0], lp.shape[2]
    if zero_infinity and nll[b] == np.inf:
        out[:, b, :] = 0
        return
    out[:length, b, :] = neg  # the log of an empty sum
    last = 2 * n_labels
    beta = np.empty((max(length, 1), last + 1), lp.dtype)
    if length > 0:
        t = length - 1
        beta[t, :] = neg
        beta[t, last] = lp[t, b, blank]
        out[t, b, blank] = alpha[b, t, last] + beta[t, last]
        if n_labels > 0:
            here = target_prime(targets, offset, stride, last - 1, blank)
            beta[t, last - 1] = lp[t, b, here]
            out[t, b, here] = alpha[b, t, last - 1] + beta[t, last - 1]
    for t in range(length - 2, -1, -1):
        for s in range(last, -1, -1):
            here = target_prime(targets, offset, stride, s, blank)
            b2 = beta[t + 1, s + 1] if s < last else neg
            skip = s < last - 1 and target_prime(targets, offset, stride, s + 2, blank) != here
            b3 = beta[t + 1, s + 2] if skip else neg
            beta[t, s] = log_sum3(beta[t + 1, s], b2, b3) + lp[t, b, here]
            both = alpha[b, t, s] + beta[t, s]
            have = out[t, b, here]
            out[t, b, here] = both if have == neg else log_sum2(have, both)
    gb, loss = g[b], nll[b]
    for t in range(length):
        for c in range(n_c):
            x = lp[t, b, c]
            out[t, b, c] = (libm.exp(x) - libm.exp(out[t, b, c] + loss - x)) * gb
    out[length:n_t, b, :] = 0


@twins(lambda *args: serial(args[9].size))  # alpha
@njit(cache=True, parallel=prange_only())
def backward(out, g, lp, targets, offsets, stride, input_lengths, target_lengths, blank, alpha,
             nll, zero_infinity):
    """out (T, N, C) = the gradient of sum_b g[b] * nll[b] by log_probs."""
    n = nll.shape[0]
    if serial(alpha.size):
        for b in range(n):
            _grad(out, g, lp, targets, offsets[b], stride, input_lengths[b], target_lengths[b],
                  blank, alpha, nll, zero_infinity, b)
    else:
        for b in prange(n):
            _grad(out, g, lp, targets, offsets[b], stride, input_lengths[b], target_lengths[b],
                  blank, alpha, nll, zero_infinity, b)
