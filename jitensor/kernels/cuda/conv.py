"""CUDA kernels of the 2-d convolution (ops/conv.py): im2col and col2im around the matrix
products of linalg.py.

The forward unfolds a chunk of images into their windows, cols (images * groups, K, P) with
K = C/groups * kh * kw and P = OH * OW (a thread an element, 0 in the padding), and multiplies
W (groups, O/groups, K) by it into the output, whose bias a last kernel adds. The input's
gradient is the transposed product W^T @ g folded back (col2im): a thread per input element
gathers the window elements that read it, so no atomics are needed. The weight's is g @ cols^T
per image, summed over the images by the reduction kernels. Chunks keep cols under CHUNK
bytes. Buffers as the CPU backend's: all C-contiguous; padding (top, left)."""
import math

import numpy as np
from numba import cuda

from ..scalar.reduction import SUM
from . import driver
from .access import load, store
from .linalg import _zero, matmul
from .memory import pointer
from .reduction import reduce

CHUNK = 1 << 12 if driver.SIM else 1 << 30  # bytes of windows unfolded at once, at most


@driver.jit
def unfold(x, xo, c_n, h_n, w_n, imgs, groups, kh, kw, oh_n, ow_n, sh, sw, ph, pw, dh, dw,
           cols, co, zero):
    """cols[(n * groups + g) * K + k, p] = image n's window element k of output p, for the
    `imgs` images from x[xo] on (K = C / groups * kh * kw, P = OH * OW)."""
    cg = c_n // groups
    k_n, p_n = cg * kh * kw, oh_n * ow_n
    e = cuda.grid(1)
    while e < imgs * groups * k_n * p_n:
        p, k, ng = e % p_n, e // p_n % k_n, e // (p_n * k_n)
        c = ng % groups * cg + k // (kh * kw)
        h = p // ow_n * sh - ph + k // kw % kh * dh
        w = p % ow_n * sw - pw + k % kw * dw
        v = zero
        if 0 <= h < h_n and 0 <= w < w_n:
            v = load(x, xo + ((ng // groups * c_n + c) * h_n + h) * w_n + w)
        store(cols, co + e, v)
        e += cuda.gridsize(1)


@driver.jit
def fold(cols, co, imgs, groups, kh, kw, oh_n, ow_n, sh, sw, ph, pw, dh, dw, c_n, h_n, w_n, x,
         xo, zero):
    """x[xo + e] = the sum of the elements of cols (as unfold's) that unfold read from input
    element e, for `imgs` images."""
    cg = c_n // groups
    k_n, p_n = cg * kh * kw, oh_n * ow_n
    e = cuda.grid(1)
    while e < imgs * c_n * h_n * w_n:
        w, h, c, n = e % w_n, e // w_n % h_n, e // (w_n * h_n) % c_n, e // (w_n * h_n * c_n)
        base = co + (n * groups + c // cg) * k_n * p_n
        acc = zero
        for i in range(kh):
            t = h + ph - i * dh
            if t >= 0 and t % sh == 0 and t // sh < oh_n:
                for j in range(kw):
                    u = w + pw - j * dw
                    if u >= 0 and u % sw == 0 and u // sw < ow_n:
                        k = (c % cg * kh + i) * kw + j
                        acc += load(cols, base + k * p_n + t // sh * ow_n + u // sw)
        store(x, xo + e, acc)
        e += cuda.gridsize(1)


@driver.jit
def add_bias(out, oo, total, o_n, p_n, b, bo):
    """out[n, o, p] += b[o]."""
    e = cuda.grid(1)
    while e < total:
        store(out, oo + e, load(out, oo + e) + load(b, bo + e // p_n % o_n))
        e += cuda.gridsize(1)


class _Shape:
    """A convolution's sizes, and the launch arguments its kernels share."""

    def __init__(self, x_shape, w_shape, out_shape, stride, padding, dilation, groups, dtype):
        self.n, self.c, self.h, self.w = x_shape
        self.o, _, kh, kw = w_shape
        _, _, oh, ow = out_shape
        self.groups, self.dtype = groups, np.dtype(dtype)
        self.k, self.p = math.prod(w_shape[1:]), oh * ow
        self.geometry = (kh, kw, oh, ow, *stride, *padding, *dilation)
        self.per_image = groups * self.k * self.p  # elements of one image's windows
        self.chunk = max(1, min(self.n, CHUNK // max(1, self.per_image * self.dtype.itemsize)))

    def chunks(self):
        """(first image, images) of each chunk."""
        return ((n0, min(self.chunk, self.n - n0)) for n0 in range(0, self.n, self.chunk))

    def index(self, imgs):
        """matmul's index maps for a chunk: W's group, cols' matrix."""
        return np.tile(np.arange(self.groups), imgs), np.arange(imgs * self.groups)

    def unfold(self, cols, x, n0, imgs):
        image = self.c * self.h * self.w
        xp, xo = pointer(x)
        driver.launch_1d(unfold, imgs * self.per_image, xp, xo + n0 * image, self.c, self.h,
                         self.w, imgs, self.groups, *self.geometry, *pointer(cols),
                         _zero(self.dtype))


def conv(out, x, w, bias, stride, padding, dilation, groups):
    """See the CPU backend's conv."""
    from . import empty
    s = _Shape(x.shape, w.shape, out.shape, stride, padding, dilation, groups, x.dtype)
    og = s.o // groups
    weights = w.reshape(groups, og, s.k)
    cols = empty((s.chunk * groups, s.k, s.p), x.dtype)
    for n0, imgs in s.chunks():
        part = cols[:imgs * groups]
        s.unfold(part, x, n0, imgs)
        matmul(out[n0:n0 + imgs].reshape(imgs * groups, og, s.p), weights, part, *s.index(imgs))
    if bias is not None:
        driver.launch_1d(add_bias, out.size, *pointer(out), out.size, s.o, s.p, *pointer(bias))


def conv_grad_input(gx, g, w, stride, padding, dilation, groups):
    """See the CPU backend's conv_grad_input."""
    from . import empty
    s = _Shape(gx.shape, w.shape, g.shape, stride, padding, dilation, groups, gx.dtype)
    og = s.o // groups
    weights = w.reshape(groups, og, s.k).transpose(0, 2, 1)
    cols = empty((s.chunk * groups, s.k, s.p), gx.dtype)
    image = s.c * s.h * s.w
    for n0, imgs in s.chunks():
        part = cols[:imgs * groups]
        matmul(part, weights, g[n0:n0 + imgs].reshape(imgs * groups, og, s.p), *s.index(imgs))
        xp, xo = pointer(gx)
        driver.launch_1d(fold, imgs * image, *pointer(part), imgs, groups, *s.geometry, s.c,
                         s.h, s.w, xp, xo + n0 * image, _zero(gx.dtype))


def conv_grad_weight(gw, g, x, stride, padding, dilation, groups):
    """See the CPU backend's conv_grad_weight: each chunk's products summed over its images
    into a row of `sums`, the rows summed last (memory bounded by the chunk, not the batch)."""
    from . import empty, fill
    s = _Shape(x.shape, gw.shape, g.shape, stride, padding, dilation, groups, x.dtype)
    if not s.n:
        fill(gw, 0)
        return
    og = s.o // groups
    chunks = list(s.chunks())
    products = empty((s.chunk * groups, og, s.k), x.dtype)
    sums = empty((len(chunks), s.o * s.k), x.dtype)
    cols = empty((s.chunk * groups, s.k, s.p), x.dtype)
    for i, (n0, imgs) in enumerate(chunks):
        part, every = cols[:imgs * groups], np.arange(imgs * groups)
        s.unfold(part, x, n0, imgs)
        each = products[:imgs * groups]
        matmul(each, g[n0:n0 + imgs].reshape(imgs * groups, og, s.p), part.transpose(0, 2, 1),
               every, every)
        reduce(SUM, sums[i], each.reshape(imgs, s.o * s.k), (0,))
    reduce(SUM, gw.reshape(s.o * s.k), sums, (0,))
