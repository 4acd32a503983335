"""CPU kernels of 2-d max pooling (formulas: kernels/scalar/pool.py), a task per run of planes.

Buffers are flat C-contiguous (planes, H, W) inputs and (planes, OH, OW) outputs. The backward
adds each output's gradient at its index, a plane's outputs in order, so each sum runs in the
outputs' order as in torch's and the CUDA kernel's gather. (Pooling composed of a strided slice
per window element, stacked and reduced, took 4 copies forward and, backward, a comparison, a
selection, and 4 fills and additions of the input's size. A gather per input element, as on
CUDA, ran many times slower here.)"""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..scalar import pool as scalar
from . import narrow
from .kernels import PARALLEL_MIN, num_threads, one_worker, prange_only, single_thread, twins


@register_jitable
def _forward(lo, hi, out, at, x, h_n, w_n, oh_n, ow_n, geo, lowest):
    """The planes lo .. hi: a row of outputs at a time, each element of their windows in window
    order (scalar.window_max's order, so the same winners) across the whole row, which beat a
    window at a time."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6], geo[7]
    for p in range(lo, hi):
        for oh in range(oh_n):
            o = (p * oh_n + oh) * ow_n
            best, where = out[o:o + ow_n], at[o:o + ow_n]
            top = oh * sh - ph
            first, end = scalar.first_inside(top, dh), min(h_n, top + (kh - 1) * dh + 1)
            for ow in range(ow_n):
                best[ow] = lowest
                where[ow] = first * w_n + scalar.first_inside(ow * sw - pw, dw)
            for h in range(first, end, dh):
                row = x[(p * h_n + h) * w_n:(p * h_n + h + 1) * w_n]
                for j in range(kw):
                    left = j * dw - pw  # output ow reads w = ow * sw + left
                    lo_ow = -(left // sw) if left < 0 else 0
                    n = min(ow_n, (w_n - 1 - left) // sw + 1) - lo_ow
                    if n <= 0:
                        continue
                    # views indexed from 0: an index Numba cannot prove non-negative is checked
                    # for wrapping around at every element, which keeps a loop scalar
                    src = row[lo_ow * sw + left:]
                    b_row, w_row = best[lo_ow:lo_ow + n], where[lo_ow:lo_ow + n]
                    at0 = h * w_n + lo_ow * sw + left
                    for e in range(n):
                        v, b = src[e * sw], b_row[e]
                        take = scalar.takes(v, b)
                        b_row[e] = v if take else b
                        w_row[e] = at0 + e * sw if take else w_row[e]


@register_jitable
def _backward(lo, hi, gx, g, at, plane, outputs):
    for p in range(lo, hi):
        start = p * plane
        for e in range(start, start + plane):
            gx[e] = 0
        for o in range(p * outputs, (p + 1) * outputs):
            if at[o] < plane:  # (a window wholly in the padding points past its plane)
                gx[start + at[o]] += g[o]


@twins(one_worker)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def max_pool2d_kernel(out, at, x, h_n, w_n, oh_n, ow_n, geo, lowest, tasks):
    planes = out.size // (oh_n * ow_n)
    if tasks == 1:
        _forward(0, planes, out, at, x, h_n, w_n, oh_n, ow_n, geo, lowest)
        return
    for t in prange(tasks):
        _forward(planes * t // tasks, planes * (t + 1) // tasks, out, at, x, h_n, w_n, oh_n,
                 ow_n, geo, lowest)


@twins(one_worker)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def max_pool2d_grad_kernel(gx, g, at, plane, outputs, tasks):
    planes = gx.size // plane
    if tasks == 1:
        _backward(0, planes, gx, g, at, plane, outputs)
        return
    for t in prange(tasks):
        _backward(planes * t // tasks, planes * (t + 1) // tasks, gx, g, at, plane, outputs)


def _geometry(kernel, stride, padding, dilation):
    return np.array((*kernel, *stride, *padding, *dilation), np.int64)


def _tasks(planes, work):
    """How many runs of the planes the work is split into: 1 (a plain loop) below the thread
    pool's threshold."""
    return 1 if work < PARALLEL_MIN or single_thread() else min(planes, 4 * num_threads())


@narrow.in_float32
def max_pool2d(out, at, x, kernel, stride, padding, dilation):
    """out, at (N, C, OH, OW) = the max of each window of x (N, C, H, W) and its index in its
    plane; padding (top, left)."""
    max_pool2d_kernel(out.reshape(-1), at.reshape(-1), x.reshape(-1), *x.shape[2:],
                      *out.shape[2:], _geometry(kernel, stride, padding, dilation),
                      scalar.lowest(x.dtype),
                      _tasks(out.shape[0] * out.shape[1], out.size * kernel[0] * kernel[1]))


@narrow.in_float32
def max_pool2d_grad(gx, g, at, kernel, stride, padding, dilation):
    """gx (N, C, H, W) = the gradient of max_pool2d by its input for g (N, C, OH, OW): each
    plane zeroed, then each output's gradient added at its index, in the outputs' order."""
    max_pool2d_grad_kernel(gx.reshape(-1), g.reshape(-1), at.reshape(-1),
                           gx.shape[2] * gx.shape[3], g.shape[2] * g.shape[3],
                           _tasks(gx.shape[0] * gx.shape[1], gx.size + g.size))
