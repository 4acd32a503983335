"""CUDA kernels of layer_norm and rms_norm (formulas: kernels/scalar/norm.py) on dense (m, n)
buffers, a row being the n elements normalised together; and of batch_norm, whose "row" is a
channel of (N, C, S), a block a channel. Everything is computed in float64
(float16 and float32 data included): the kernels are bound by memory, not arithmetic.

The forward and the input's gradient run one block of threads per row, as softmax: each
thread sums its strided share of the row (in the forward, of d = x - shift and d^2: one pass,
kernels/scalar/norm.py), the block adds up the shares in shared memory, and the threads write
their elements. The weight and bias gradients are sums over the rows: a thread
per column and run of rows sums its run (neighbouring threads read neighbouring elements),
and the reduction kernels add up the runs."""
import numpy as np
from numba import cuda, float64

from ..scalar import norm as scalar
from ..scalar.reduction import SUM
from . import driver
from .access import load, store
from .memory import pointer
from .reduction import _launch, block_sum, reduce

BUSY = 4 if driver.SIM else 1 << 17  # threads that keep the GPU busy summing the columns


@cuda.jit(device=True, inline="always")
def _shift(x, base, centred):
    """The shift of the row at x[base] (kernels/scalar/norm.py): its first element, or 0 for
    rms_norm."""
    return float64(load(x, base)) if centred else 0.0


@cuda.jit(device=True, inline="always")
def _scaled(g, i, w, j, has_w):
    """g[i] * w[j] in float64 (w[j] = 1 where there is no weight)."""
    v = float64(load(g, i))
    if has_w:
        v *= float64(load(w, j))
    return v


@driver.jit
def norm_rows(x, xo, m, n, w, wo, has_w, b, bo, has_b, centred, eps, y, yo, stats, so):
    """y = each row of x normalised (centred for layer_norm), times w, plus b; row r's offset
    and rstd (kernels/scalar/norm.py) into stats[so + r] and stats[so + m + r]."""
    slot = cuda.shared.array(1, float64)
    t = cuda.threadIdx.x
    r = cuda.blockIdx.x
    while r < m:
        base = xo + r * n
        shift = _shift(x, base, centred)
        s1 = s2 = 0.0
        j = t
        while j < n:
            d = float64(load(x, base + j)) - shift
            s1 += d
            s2 += d * d
            j += cuda.blockDim.x
        offset, squares = scalar.moments(block_sum(s1, slot), block_sum(s2, slot), n, centred)
        rstd = scalar.rstd(squares, n, eps)
        j = t
        while j < n:
            v = scalar.normalized(float64(load(x, base + j)) - shift, offset, rstd)
            if has_w:
                v *= float64(load(w, wo + j))
            if has_b:
                v += float64(load(b, bo + j))
            store(y, yo + r * n + j, v)
            j += cuda.blockDim.x
        if t == 0:
            store(stats, so + r, offset)
            store(stats, so + m + r, rstd)
        r += cuda.gridDim.x


@driver.jit
def norm_grad_rows(x, xo, m, n, w, wo, has_w, g, go, centred, stats, so, dx, dxo):
    """dx = the gradient of norm_rows' y by x for upstream gradient g, a block a row."""
    slot = cuda.shared.array(1, float64)
    t = cuda.threadIdx.x
    r = cuda.blockIdx.x
    while r < m:
        base = xo + r * n
        shift = _shift(x, base, centred)
        offset, rstd = load(stats, so + r), load(stats, so + m + r)
        slope = centre = 0.0
        j = t
        while j < n:
            gw = _scaled(g, go + r * n + j, w, wo + j, has_w)
            slope += gw * scalar.normalized(float64(load(x, base + j)) - shift, offset, rstd)
            centre += gw
            j += cuda.blockDim.x
        slope = block_sum(slope, slot) / n
        centre = block_sum(centre, slot) / n if centred else 0.0
        j = t
        while j < n:
            gw = _scaled(g, go + r * n + j, w, wo + j, has_w)
            xhat = scalar.normalized(float64(load(x, base + j)) - shift, offset, rstd)
            store(dx, dxo + r * n + j, scalar.input_grad(gw, xhat, rstd, centre, slope))
            j += cuda.blockDim.x
        r += cuda.gridDim.x


@driver.jit
def norm_grad_columns(x, xo, m, n, g, go, centred, stats, so, parts, sums, po):
    """sums (float64, (2, parts, n)) = the sums of g * xhat and of g at each column over each
    of `parts` runs of rows, a thread per column and run."""
    e = cuda.grid(1)
    while e < n * parts:
        j, q = e % n, e // n
        sw = sb = 0.0
        for r in range(q * m // parts, (q + 1) * m // parts):
            gr = float64(load(g, go + r * n + j))
            shift = _shift(x, xo + r * n, centred)
            xhat = scalar.normalized(float64(load(x, xo + r * n + j)) - shift,
                                     load(stats, so + r), load(stats, so + m + r))
            sw += gr * xhat
            sb += gr
        store(sums, po + q * n + j, sw)
        store(sums, po + (parts + q) * n + j, sb)
        e += cuda.gridsize(1)


@cuda.jit(device=True, inline="always")
def _at(j, c, c_n, s_n):
    """The index in (N, C, S) of element j of channel c's N * S."""
    return (j // s_n * c_n + c) * s_n + j % s_n


@driver.jit
def batch_norm_channels(x, xo, n_img, c_n, s_n, w, wo, has_w, b, bo, has_b, eps, y, yo, stats,
                        so):
    """y = each channel of x (N, C, S) normalised, times w, plus b, a block a channel; stats
    (4, C) gets each channel's offset, rstd, mean and biased variance."""
    slot = cuda.shared.array(1, float64)
    t = cuda.threadIdx.x
    c = cuda.blockIdx.x
    count = n_img * s_n
    while c < c_n:
        shift = float64(load(x, xo + c * s_n))
        s1 = s2 = 0.0
        j = t
        while j < count:
            d = float64(load(x, xo + _at(j, c, c_n, s_n))) - shift
            s1 += d
            s2 += d * d
            j += cuda.blockDim.x
        offset, squares = scalar.moments(block_sum(s1, slot), block_sum(s2, slot), count, True)
        rstd = scalar.rstd(squares, count, eps)
        scale = float64(load(w, wo + c)) if has_w else 1.0
        bias = float64(load(b, bo + c)) if has_b else 0.0
        j = t
        while j < count:
            i = _at(j, c, c_n, s_n)
            store(y, yo + i,
                  scalar.normalized(float64(load(x, xo + i)) - shift, offset, rstd) * scale
                  + bias)
            j += cuda.blockDim.x
        if t == 0:
            store(stats, so + c, offset)
            store(stats, so + c_n + c, rstd)
            store(stats, so + 2 * c_n + c, shift + offset)
            store(stats, so + 3 * c_n + c, squares / count)
        c += cuda.gridDim.x


@driver.jit
def batch_norm_channels_grad(x, xo, n_img, c_n, s_n, w, wo, has_w, g, go, stats, so, want_x,
                             dx, dxo, dw, dwo, db, dbo):
    """The gradients of batch_norm_channels' y for upstream g, a block a channel: dx (when
    want_x), dw and db."""
    slot = cuda.shared.array(1, float64)
    t = cuda.threadIdx.x
    c = cuda.blockIdx.x
    count = n_img * s_n
    while c < c_n:
        shift = float64(load(x, xo + c * s_n))
        offset, rstd = load(stats, so + c), load(stats, so + c_n + c)
        slope = centre = 0.0
        j = t
        while j < count:
            i = _at(j, c, c_n, s_n)
            gi = float64(load(g, go + i))
            slope += gi * scalar.normalized(float64(load(x, xo + i)) - shift, offset, rstd)
            centre += gi
            j += cuda.blockDim.x
        slope, centre = block_sum(slope, slot), block_sum(centre, slot)
        if t == 0:
            store(dw, dwo + c, slope)
            store(db, dbo + c, centre)
        if want_x:
            scale = float64(load(w, wo + c)) if has_w else 1.0
            j = t
            while j < count:
                i = _at(j, c, c_n, s_n)
                xhat = scalar.normalized(float64(load(x, xo + i)) - shift, offset, rstd)
                store(dx, dxo + i, scalar.input_grad(float64(load(g, go + i)) * scale, xhat,
                                                     rstd, centre / count * scale,
                                                     slope / count * scale))
                j += cuda.blockDim.x
        c += cuda.gridDim.x


def _param(t, x):
    """Kernel arguments of a weight or bias: (pointer, offset, present); x's for None."""
    return (*pointer(x if t is None else t), t is not None)


def norm(y, stats, x, weight, bias, eps, centred):
    """See the CPU backend's norm."""
    m, n = x.shape
    if y.size:
        _launch(norm_rows, m, *pointer(x), m, n, *_param(weight, x), *_param(bias, x),
                centred, float(eps), *pointer(y), *pointer(stats))


def norm_grad(dx, dw, db, x, weight, g, stats, centred):
    """See the CPU backend's norm_grad."""
    from . import empty, fill
    m, n = x.shape
    if not n:
        return
    if not m:  # no rows: nothing to sum
        for t in (dw, db):
            if t is not None:
                fill(t, 0)
        return
    if dx is not None:
        _launch(norm_grad_rows, m, *pointer(x), m, n, *_param(weight, x), *pointer(g),
                centred, *pointer(stats), *pointer(dx))
    if dw is not None:
        parts = max(1, min(m, BUSY // n))
        sums = empty((2, parts, n), np.float64)
        driver.launch_1d(norm_grad_columns, n * parts, *pointer(x), m, n, *pointer(g), centred,
                         *pointer(stats), parts, *pointer(sums))
        reduce(SUM, dw, sums[0], (0,))
        reduce(SUM, db, sums[1], (0,))


def batch_norm(y, stats, x, weight, bias, eps):
    """See the CPU backend's batch_norm."""
    n, c, s = x.shape
    if y.size:
        _launch(batch_norm_channels, c, *pointer(x), n, c, s, *_param(weight, x),
                *_param(bias, x), float(eps), *pointer(y), *pointer(stats))


def batch_norm_grad(dx, dw, db, x, weight, g, stats):
    """See the CPU backend's batch_norm_grad."""
    n, c, s = x.shape
    if x.size:
        _launch(batch_norm_channels_grad, c, *pointer(x), n, c, s, *_param(weight, x),
                *pointer(g), *pointer(stats), dx is not None, *pointer(x if dx is None else dx),
                *pointer(dw), *pointer(db))

