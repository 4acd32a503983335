"""CUDA kernels of 2-d max pooling (formulas: kernels/scalar/pool.py): a thread per output
forward, and backward a thread per input element, which gathers the gradients of the outputs
whose max it is (no atomics, and each sum in the outputs' order, as on the CPU). float16
gradients add up in float32, as torch's. Buffers as the CPU backend's."""
import numpy as np
from numba import cuda

from ..scalar import pool as scalar
from . import driver
from .access import store
from .memory import pointer


@cuda.jit(device=True, inline="always")
def _first(position, pad, kernel, stride, dilation):
    """The first output whose window can reach `position` along one dim (ceil division)."""
    return max(0, -((dilation * (kernel - 1) - position - pad) // stride))


@cuda.jit(device=True, inline="always")
def input_grad(g, go, at, ao, oh_n, ow_n, h, w, w_n, geo, zero):
    """The gradient of input element (h, w) of a plane: the sum of the gradients g of the
    outputs (their planes at g[go:] and at[ao:]) whose max it is, in the outputs' order."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6], geo[7]
    me, acc = h * w_n + w, zero
    for oh in range(_first(h, ph, kh, sh, dh), min(oh_n, (h + ph) // sh + 1)):
        for ow in range(_first(w, pw, kw, sw, dw), min(ow_n, (w + pw) // sw + 1)):
            if at[ao + oh * ow_n + ow] == me:
                acc += g[go + oh * ow_n + ow]
    return acc


@driver.jit
def _forward(out, oo, at, ao, x, xo, total, h_n, w_n, oh_n, ow_n, kh, kw, sh, sw, ph, pw, dh,
             dw, lowest):
    geo = (kh, kw, sh, sw, ph, pw, dh, dw)
    e = cuda.grid(1)
    while e < total:
        plane = e // (oh_n * ow_n)
        v, i = scalar.window_max(x, xo + plane * h_n * w_n, h_n, w_n, e // ow_n % oh_n,
                                 e % ow_n, geo, lowest)
        store(out, oo + e, v)
        store(at, ao + e, i)
        e += cuda.gridsize(1)


@driver.jit
def _backward(gx, gxo, g, go, at, ao, total, h_n, w_n, oh_n, ow_n, kh, kw, sh, sw, ph, pw, dh,
              dw, zero):
    geo = (kh, kw, sh, sw, ph, pw, dh, dw)
    e = cuda.grid(1)
    while e < total:
        plane = e // (h_n * w_n)
        store(gx, gxo + e, input_grad(g, go + plane * oh_n * ow_n, at, ao + plane * oh_n * ow_n,
                                      oh_n, ow_n, e // w_n % h_n, e % w_n, w_n, geo, zero))
        e += cuda.gridsize(1)


def max_pool2d(out, at, x, kernel, stride, padding, dilation):
    """See the CPU's."""
    driver.launch_1d(_forward, out.size, *pointer(out), *pointer(at), *pointer(x), out.size,
                     *x.shape[2:], *out.shape[2:], *kernel, *stride, *padding, *dilation,
                     scalar.lowest(x.dtype))


def max_pool2d_grad(gx, g, at, kernel, stride, padding, dilation):
    """See the CPU's."""
    zero = np.float32(0) if gx.dtype == np.float16 else gx.dtype.type(0)
    driver.launch_1d(_backward, gx.size, *pointer(gx), *pointer(g), *pointer(at), gx.size,
                     *gx.shape[2:], *g.shape[2:], *kernel, *stride, *padding, *dilation, zero)
