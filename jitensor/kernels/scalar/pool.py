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
def takes(v, best):
    """Whether element v takes over from the max so far: it is larger, or NaN (torch's rule:
    the first largest wins, and the last NaN)."""
    return (v > best) | (v != v)


@register_jitable
def first_inside(start, step):
    """The first of start, start + step, ... at or after 0."""
    return start - start // step * step if start < 0 else start


@register_jitable
def window_max(x, xo, h_n, w_n, oh, ow, geo, lowest):
    """(value, index) of output (oh, ow)'s max over the plane at x[xo:], as torch's kernel
    finds it: from `lowest` (-inf, or an integer type's minimum) at the window's first position
    inside the plane, the window's elements in order, each taking over as `takes` says. A
    window wholly in the padding gives `lowest` at that first position, which lies outside the
    plane (torch's too)."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6], geo[7]
    h0, w0 = oh * sh - ph, ow * sw - pw
    h1, w1 = min(h_n, h0 + (kh - 1) * dh + 1), min(w_n, w0 + (kw - 1) * dw + 1)
    h0, w0 = first_inside(h0, dh), first_inside(w0, dw)
    best, at = lowest, h0 * w_n + w0
    for h in range(h0, h1, dh):
        for w in range(w0, w1, dw):
            v = x[xo + h * w_n + w]
            if takes(v, best):
                best, at = v, h * w_n + w
    return best, at
