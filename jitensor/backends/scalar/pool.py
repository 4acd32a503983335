"""Scalar definitions of 2-d max pooling, shared by the CPU and CUDA kernels.

A plane is one (image, channel) pair's H x W input, or its OH x OW outputs, flat at an offset in
its buffer. `geo` holds (kh, kw, sh, sw, ph, pw, dh, dw). Output (oh, ow) is the largest element
of its window, the inputs oh * sh - ph + i * dh, ow * sw - pw + j * dw inside the plane (the
padding is never read), and its index is where that element is, h * W + w, as torch returns it.
Its gradient goes back there alone (the backends' own loops: the CPU adds each output's at its
index, CUDA gathers at each input those of the outputs whose index it is)."""
import numpy as np
from numba.extending import register_jitable


def lowest(dtype):
    """window_max's start for the NumPy dtype: -inf, or an integer type's minimum."""
    return dtype.type(-np.inf if dtype.kind == "f" else np.iinfo(dtype).min)


@register_jitable
def window_max(x, xo, h_n, w_n, oh, ow, geo, lowest):
    """(value, index) of output (oh, ow)'s max over the plane at x[xo:], as torch's kernel
    finds it: from `lowest` (-inf, or an integer type's minimum) at the window's first position
    inside the plane, each element above the max so far, or NaN, takes over, so the first
    largest wins, and the last NaN. A window wholly in the padding gives `lowest` at that first
    position, which lies outside the plane (torch's too)."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6], geo[7]
    h0, w0 = oh * sh - ph, ow * sw - pw
    h1, w1 = min(h_n, h0 + (kh - 1) * dh + 1), min(w_n, w0 + (kw - 1) * dw + 1)
    if h0 < 0:
        h0 -= h0 // dh * dh  # (the first row of the window at or after 0)
    if w0 < 0:
        w0 -= w0 // dw * dw
    best, at = lowest, h0 * w_n + w0
    for h in range(h0, h1, dh):
        for w in range(w0, w1, dw):
            v = x[xo + h * w_n + w]
            if v > best or v != v:
                best, at = v, h * w_n + w
    return best, at
