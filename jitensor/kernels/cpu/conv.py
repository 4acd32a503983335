"""CPU kernels of the 2-d convolution (ops/conv.py): the forward and the gradients of the input
and of the weight, each one worker (`kernels.run_tasks`) compiled per dtype: on one thread or
several, without a parallel kernel's compile per signature.

A convolution is a product per image and group: out (Og, P) = W (Og, K) @ cols (K, P), where
cols holds the image's (zero-padded) windows, K = C/groups * kh * kw rows of P = OH * OW
positions (im2col). Materialising cols for the whole batch first (the composed form) wrote and
read back the batch's windows through memory, 9x the input for a 3x3 kernel, which took most
of the forward's time. Here each task unfolds a block of one image's output rows (or of a few
small images whole, side by side, so that the product has COLUMNS positions) into a scratch
buffer of at most BLOCK elements, which `cblas_?gemm` (blas.py) multiplies while it is still in
the caches; integers, and floats where NumPy ships no OpenBLAS, multiply in plain loops, wrapping as
torch's do.

The input's gradient is the transposed product, cols = W^T @ g, folded back onto the image
(col2im: overlapping windows add up), a task per image and group so that no two tasks add into
the same place. The weight's is the sum over images and blocks of g @ cols^T, each product run
transposed (cols @ g^T), in PARTS runs of tasks fixed by the shape, each into its own partial
sum, added up in run order: serial and parallel give the same bits.

Where the images, groups and blocks make fewer than TASKS tasks (a batch of one, a layer of
many channels), each task is split over slices of channels, so that on many cores no task runs
alone: of the output channels in the forward, which unfold the same windows; of the input
channels in the gradients, which do not (each unfolds or folds its own rows of the windows).

Buffers: x (N, C, H, W), out and g (N, O, OH * OW), w (O, K), all C-contiguous. `geo` holds
(stride h, w, padding top, left, dilation h, w, groups, kh, kw, OW, rows per block, channel
slices per task, images per block)."""
import math

import numpy as np
from numba import carray, njit
from numba.extending import register_jitable

from . import blas, narrow
from .kernels import Specialised, num_threads, run_worker, single_thread, worker
from .vector import as_pointer

BLOCK = 1 << 20  # scratch elements per task, at most (4 MiB of float32; row blocks of a quarter
# of that ran no faster, and four 7x7 images of 512 channels fit)
PARTS = 16  # runs of tasks the weight's gradient is summed in, at most
PARTIAL_MAX = 1 << 22  # elements all the runs' partial sums may take together
COLUMNS = 256  # positions a block's product takes where whole images fit (of 7x7 images one
# image's 49 as columns ran at 108 GFLOPS, four's at 151)
TASKS = 8  # tasks a kernel makes at least, where there are channels to split (fixed by the
# shape, not the threads, so that every machine computes the same bits). 16 kept more cores of
# a large machine busy on a small batch, but cost 20-60% on 1 and 2 threads: more products,
# smaller, and the forward's slices unfold the same windows again
FORWARD_SLICE = 64  # output channels a forward's slice keeps, at least
TILE = 32  # elements of a side of _add_runs's tiles
FEW = 4  # positions a block's rows hold at most for the im2col that loops over the channels
LOOPS, SGEMM, DGEMM = 0, 1, 2  # how the products run


@register_jitable
def _span(size, count, stride, offset):
    """(lo, hi): the outputs o in [0, count) whose tap o * stride + offset falls inside
    [0, size)."""
    lo = min(count, max(0, (stride - 1 - offset) // stride))
    return lo, max(lo, min(count, (size - 1 - offset) // stride + 1))


@register_jitable
def _tap(x, geo, oh0, rows, i, j):
    """Where kernel tap (i, j) of a block's windows reads a plane of x: the (lo, hi) columns
    and (r_lo, r_hi) rows of the block inside the plane, and the flat index in the plane of
    block row 0's column 0 (which may lie in the padding). The same for every channel: worked
    out once per tap (its divisions, per row of the windows, took most of the time of
    convolutions of few output positions and many channels)."""
    sh, sw, ph, pw, dh, dw, ow_n = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[9]
    h_n, w_n = x.shape[2], x.shape[3]
    top, offset = oh0 * sh - ph + i * dh, j * dw - pw
    lo, hi = _span(w_n, ow_n, sw, offset)
    r_lo, r_hi = _span(h_n, rows, sh, top)
    return lo, hi, r_lo, r_hi, top * w_n + offset


@register_jitable
def _unfold(cols, ld, x, n, c0, k_n, geo, oh0, rows):
    """im2col of output rows oh0 .. oh0 + rows of image n, channels c0 ..: row k = (c * kh + i) *
    kw + j of cols (flat, rows ld apart) gets x[n, c0 + c, (oh0 + r) * sh - ph + i * dh, ow * sw
    - pw + j * dw] at r * OW + ow, 0 in the padding.

    When the block's rows follow each other in x as in cols (stride 1 and OW = W, as a 'same'
    convolution's), each k is one long copy, its few padding columns zeroed after: runs of one
    output row (32 elements) spent 3/4 of their time entering and leaving the vector loop."""
    sh, sw, kh, kw, ow_n = geo[0], geo[1], geo[7], geo[8], geo[9]
    flat, zero = x.reshape(x.size), cols.dtype.type(0)
    plane = x.shape[2] * x.shape[3]
    runs = sw == 1 and sh * x.shape[3] == ow_n
    for i in range(kh):
        for j in range(kw):
            lo, hi, r_lo, r_hi, at = _tap(x, geo, oh0, rows, i, j)
            if rows * ow_n <= FEW:
                _unfold_few(cols, ld, flat, at, (n * x.shape[1] + c0) * plane, plane, k_n,
                            geo, (i * kw + j) * ld, rows, lo, hi, r_lo, r_hi, x.shape[3])
                continue
            for c in range(k_n // (kh * kw)):
                row0, src0 = ((c * kh + i) * kw + j) * ld, (n * x.shape[1] + c0 + c) * plane + at
                _zeros(cols, row0, r_lo * ow_n, zero)
                _zeros(cols, row0 + r_hi * ow_n, (rows - r_hi) * ow_n, zero)
                if runs and r_lo < r_hi and lo < hi:
                    first, last = r_lo * ow_n + lo, (r_hi - 1) * ow_n + hi
                    _copy(cols, row0 + first, flat, src0 + first, last - first)
                    _edges(cols, row0, r_lo, r_hi, ow_n, lo, hi, zero)
                    continue
                if lo > 0 or hi < ow_n:  # the padding's columns: zeroed with the rows at once
                    _zeros(cols, row0 + r_lo * ow_n, (r_hi - r_lo) * ow_n, zero)
                for r in range(r_lo, r_hi):  # row by row: plain indexing (no views to make)
                    dst, src = row0 + r * ow_n + lo, src0 + r * sh * x.shape[3] + lo * sw
                    if sw == 1:  # a vector loop (MNIST's 'valid' 3x3: docs/design.md)
                        _copy(cols, dst, flat, src, hi - lo)
                    elif sw == 2:  # the constant stride vectorises too (interleaved loads)
                        _copy2(cols, dst, flat, src, hi - lo)
                    else:
                        for e in range(hi - lo):
                            cols[dst + e] = flat[src + e * sw]


@register_jitable
def _fold(cols, ld, x, n, c0, k_n, geo, oh0, rows):
    """_unfold's adjoint: cols added back onto x where _unfold read it (the padding's share is
    dropped; cols is overwritten)."""
    sh, sw, kh, kw, ow_n = geo[0], geo[1], geo[7], geo[8], geo[9]
    flat, zero = x.reshape(x.size), cols.dtype.type(0)
    plane = x.shape[2] * x.shape[3]
    runs = sw == 1 and sh * x.shape[3] == ow_n
    for i in range(kh):
        for j in range(kw):
            lo, hi, r_lo, r_hi, at = _tap(x, geo, oh0, rows, i, j)
            if rows * ow_n <= FEW:
                _fold_few(cols, ld, flat, at, (n * x.shape[1] + c0) * plane, plane, k_n, geo,
                          (i * kw + j) * ld, lo, hi, r_lo, r_hi, x.shape[3])
                continue
            for c in range(k_n // (kh * kw)):
                row0, src0 = ((c * kh + i) * kw + j) * ld, (n * x.shape[1] + c0 + c) * plane + at
                if runs and r_lo < r_hi and lo < hi:
                    first, last = r_lo * ow_n + lo, (r_hi - 1) * ow_n + hi
                    _edges(cols, row0, r_lo, r_hi, ow_n, lo, hi, zero)  # (they would add to x)
                    _add(flat, src0 + first, cols, row0 + first, last - first)
                    continue
                for r in range(r_lo, r_hi):  # row by row: plain indexing (no views to make)
                    dst, src = src0 + r * sh * x.shape[3], row0 + r * ow_n
                    if sw == 1:
                        _add(flat, dst + lo, cols, src + lo, hi - lo)
                    elif sw == 2:
                        _add2(flat, dst + 2 * lo, cols, src + lo, hi - lo)
                    else:
                        for e in range(lo, hi):
                            flat[dst + e * sw] += cols[src + e]


@register_jitable
def _unfold_few(cols, ld, flat, at, base, plane, k_n, geo, tap0, rows, lo, hi, r_lo, r_hi,
                w_n):
    """_unfold's tap (i, j) (its cols rows start at tap0) for blocks of FEW positions or
    less (a 4x4 image to 1x1): a loop over the channels for each position (a loop of its own
    for each channel's few positions cost ten times the copies)."""
    sh, sw, taps, ow_n = geo[0], geo[1], geo[7] * geo[8], geo[9]
    step, zero = taps * ld, cols.dtype.type(0)
    for r in range(rows):
        for e in range(ow_n):
            dst = tap0 + r * ow_n + e
            if r_lo <= r and r < r_hi and lo <= e and e < hi:
                src = base + at + r * sh * w_n + e * sw
                for c in range(k_n // taps):
                    cols[dst + c * step] = flat[src + c * plane]
            else:
                for c in range(k_n // taps):
                    cols[dst + c * step] = zero


@register_jitable
def _fold_few(cols, ld, flat, at, base, plane, k_n, geo, tap0, lo, hi, r_lo, r_hi, w_n):
    """_fold's tap (i, j) for blocks of FEW positions or less, as _unfold_few."""
    sh, sw, taps, ow_n = geo[0], geo[1], geo[7] * geo[8], geo[9]
    step = taps * ld
    for r in range(r_lo, r_hi):
        for e in range(lo, hi):
            dst, src = base + at + r * sh * w_n + e * sw, tap0 + r * ow_n + e
            for c in range(k_n // taps):
                flat[dst + c * plane] += cols[src + c * step]


@register_jitable
def _copy(cols, c0, flat, x0, n):
    """cols[c0 + e] = flat[x0 + e] for e < n, both starts >= 0. Through views indexed from 0:
    an index Numba cannot prove non-negative is checked for wrapping around at every element,
    which kept the loop scalar (and so did a step passed in, even of 1)."""
    if n > 0:
        c, x = cols[c0:c0 + n], flat[x0:x0 + n]
        for e in range(n):
            c[e] = x[e]


@register_jitable
def _copy2(cols, c0, flat, x0, n):
    """cols[c0 + e] = flat[x0 + 2 e] for e < n (as _copy)."""
    if n > 0:
        c, x = cols[c0:c0 + n], flat[x0:x0 + 2 * n - 1]
        for e in range(n):
            c[e] = x[2 * e]


@register_jitable
def _add(flat, x0, cols, c0, n):
    """flat[x0 + e] += cols[c0 + e] for e < n (as _copy)."""
    if n > 0:
        c, x = cols[c0:c0 + n], flat[x0:x0 + n]
        for e in range(n):
            x[e] += c[e]


@register_jitable
def _add2(flat, x0, cols, c0, n):
    """flat[x0 + 2 e] += cols[c0 + e] for e < n (as _copy)."""
    if n > 0:
        c, x = cols[c0:c0 + n], flat[x0:x0 + 2 * n - 1]
        for e in range(n):
            x[2 * e] += c[e]


@register_jitable
def _zeros(cols, c0, n, zero):
    if n > 0:
        c = cols[c0:c0 + n]
        for e in range(n):
            c[e] = zero


@register_jitable
def _edges(cols, row0, r_lo, r_hi, ow_n, lo, hi, zero):
    """Zero columns [0, lo) and [hi, OW) of rows r_lo .. r_hi of one k's cols."""
    for r in range(r_lo, r_hi):
        dst = row0 + r * ow_n
        _zeros(cols, dst, lo, zero)
        _zeros(cols, dst + hi, ow_n - hi, zero)


@register_jitable
def _operand(a):
    """(BLAS transpose flag, leading dim) of the 2-D view a, whose rows or columns have unit
    stride (a dim of 1 has any stride: BLAS only asks that the leading dim cover a row)."""
    rows, cols = a.shape
    if cols == 1 or a.strides[1] == a.itemsize:
        return blas.NO_TRANS, max(1, cols, a.strides[0] // a.itemsize if rows > 1 else 1)
    return blas.TRANS, max(1, rows, a.strides[1] // a.itemsize)


@register_jitable
def _product(code, c, a, b, accumulate):
    """c = a @ b (c += a @ b with `accumulate`) for 2-D views, c's rows of unit stride."""
    m, n, k = c.shape[0], c.shape[1], a.shape[1]
    if code == LOOPS:
        if not accumulate:
            for i in range(m):
                for j in range(n):
                    c[i, j] = 0
        for i in range(m):
            for p in range(k):
                v = a[i, p]
                for j in range(n):
                    c[i, j] += v * b[p, j]
        return
    (ta, lda), (tb, ldb) = _operand(a), _operand(b)
    ldc = max(1, n, c.strides[0] // c.itemsize if m > 1 else 1)
    beta = 1.0 if accumulate else 0.0
    if code == SGEMM:
        blas.sgemm(blas.ROW_MAJOR, ta, tb, m, n, k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb,
                   beta, c.ctypes.data, ldc)
    else:
        blas.dgemm(blas.ROW_MAJOR, ta, tb, m, n, k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb,
                   beta, c.ctypes.data, ldc)


@register_jitable
def _task(t, geo, n_img, oh_n):
    """(first image, images, group, first output row, rows) of task t: tasks run over the
    blocks of images (geo[12] each; one unless whole images fit a block), each block's groups,
    each group's blocks of output rows."""
    groups, rows, images = geo[6], geo[10], geo[12]
    n_blocks = -(-oh_n // rows)
    oh0 = t % n_blocks * rows
    n0 = t // (n_blocks * groups) * images
    return n0, min(images, n_img - n0), t // n_blocks % groups, oh0, min(rows, oh_n - oh0)


@register_jitable
def _count(n_img, oh_n, groups, rows, images):
    """How many tasks `_task` numbers: blocks of images, their groups, blocks of rows."""
    return -(-n_img // images) * groups * -(-oh_n // rows)


@register_jitable
def _scratch(k_n, geo, dtype):
    """(a flat scratch for one block's windows, its rows' spacing, its 2-D view): an image's
    columns follow the previous one's."""
    ld = geo[10] * geo[9] * geo[12]
    flat = np.empty(k_n * ld, dtype)
    return flat, ld, flat.reshape((k_n, ld))


@register_jitable
def _gathered(g, n0, count, o0, o1, p0, p1, spare):
    """g[n0, o0:o1, p0:p1] for one image; for several, their columns side by side, copied
    into `spare` (as the windows lie in the scratch)."""
    if count == 1:
        return g[n0, o0:o1, p0:p1]
    width = p1 - p0
    for i in range(count):
        for o in range(o1 - o0):
            src, dst = g[n0 + i, o0 + o, p0:p1], spare[o, i * width:(i + 1) * width]
            for p in range(width):
                dst[p] = src[p]
    return spare[:o1 - o0, :count * width]


@register_jitable
def _share(s, splits, size):
    """Slice s of `splits` of range(size)."""
    return size * s // splits, size * (s + 1) // splits


@register_jitable
def _forward_tasks(first, step, out, x, w, bias, has_bias, code, geo):
    n_img, o_n, p_n = out.shape
    ow_n, groups, splits, oh_n = geo[9], geo[6], geo[11], p_n // geo[9]
    og, cg = o_n // groups, x.shape[1] // groups
    k_n = w.shape[1]
    flat, ld, cols = _scratch(k_n, geo, x.dtype)
    spare = np.empty((og, ld if geo[12] > 1 else 0), x.dtype)
    tasks = _count(n_img, oh_n, groups, geo[10], geo[12])
    for t in range(first, tasks * splits, step):
        n0, count, g, oh0, rows = _task(t // splits, geo, n_img, oh_n)
        o0, o1 = _share(t % splits, splits, og)
        o0, o1 = g * og + o0, g * og + o1
        p0, p1 = oh0 * ow_n, (oh0 + rows) * ow_n
        width = p1 - p0
        for i in range(count):
            _unfold(flat[i * width:], ld, x, n0 + i, g * cg, k_n, geo, oh0, rows)
        dst = out[n0, o0:o1, p0:p1] if count == 1 else spare[:o1 - o0, :count * width]
        _product(code, dst, w[o0:o1], cols[:, :count * width], False)
        if has_bias:
            for o in range(o1 - o0):
                v = bias[o0 + o]
                for p in range(count * width):
                    dst[o, p] += v
        for i in range(count if count > 1 else 0):
            for o in range(o1 - o0):
                src, to = dst[o, i * width:(i + 1) * width], out[n0 + i, o0 + o, p0:p1]
                for p in range(width):
                    to[p] = src[p]


# -- workers (kernels.run_tasks): each compiled per dtype, DTYPE the element type of its arrays
# (geo's: int64); the comments give the layout of the arguments at `context` -----------------
DTYPE = None
_per_dtype = Specialised(globals(), ("DTYPE",), lambda dtype: "_" + np.dtype(dtype).name)


@_per_dtype(worker, cache=True, error_model="numpy")
def conv_forward(context, first, step):
    """out = the convolution of x with w (plus bias, when has_bias)."""
    # out (3-D), x (4-D), w (2-D), bias (1-D), geo (1-D), has_bias, code
    c, zero = carray(as_pointer(context, np.int64(0)), 18), DTYPE(0)
    out = carray(as_pointer(c[0], zero), (c[1], c[2], c[3]))
    x = carray(as_pointer(c[4], zero), (c[5], c[6], c[7], c[8]))
    w = carray(as_pointer(c[9], zero), (c[10], c[11]))
    bias = carray(as_pointer(c[12], zero), c[13])
    geo = carray(as_pointer(c[14], np.int64(0)), c[15])
    _forward_tasks(first, step, out, x, w, bias, c[16] != 0, c[17], geo)


@register_jitable
def _input_tasks(first, step, gx, g, w, code, geo):
    n_img, o_n, p_n = g.shape
    ow_n, groups, rows, splits, images = geo[9], geo[6], geo[10], geo[11], geo[12]
    oh_n, og, cg, taps = p_n // ow_n, o_n // groups, gx.shape[1] // groups, geo[7] * geo[8]
    flat, ld, cols = _scratch(w.shape[1], geo, gx.dtype)
    spare = np.empty((og, ld if images > 1 else 0), gx.dtype)
    for t in range(first, -(-n_img // images) * groups * splits, step):
        n0, q = t // (groups * splits) * images, t // splits % groups
        count = min(images, n_img - n0)
        c0, c1 = _share(t % splits, splits, cg)
        for i in range(count):
            gx[n0 + i, q * cg + c0:q * cg + c1] = 0
        for oh0 in range(0, oh_n, rows):  # in turn: neighbouring blocks' windows overlap
            p0, p1 = oh0 * ow_n, min(oh0 + rows, oh_n) * ow_n
            width = p1 - p0
            block = cols[:(c1 - c0) * taps, :count * width]
            _product(code, block, w[q * og:(q + 1) * og, c0 * taps:c1 * taps].T,
                     _gathered(g, n0, count, q * og, (q + 1) * og, p0, p1, spare), False)
            for i in range(count):
                _fold(flat[i * width:], ld, gx, n0 + i, q * cg + c0, (c1 - c0) * taps, geo,
                      oh0, width // ow_n)


@_per_dtype(worker, cache=True, error_model="numpy")
def conv_input_grad(context, first, step):
    """gx = the gradient of the convolution by its input for upstream gradient g: a task per
    image, group and slice of its channels (no two add into one place)."""
    # gx (4-D), g (3-D), w (2-D), geo (1-D), code
    c, zero = carray(as_pointer(context, np.int64(0)), 15), DTYPE(0)
    gx = carray(as_pointer(c[0], zero), (c[1], c[2], c[3], c[4]))
    g = carray(as_pointer(c[5], zero), (c[6], c[7], c[8]))
    w = carray(as_pointer(c[9], zero), (c[10], c[11]))
    geo = carray(as_pointer(c[12], np.int64(0)), c[13])
    _input_tasks(first, step, gx, g, w, c[14], geo)


@register_jitable
def _weight_part(item, partial, g, x, code, geo):
    """partial[part] += (g @ cols^T)^T = cols @ g^T over run `part` of the tasks, for slice s of
    each group's input channels (item = part * splits + s): its rows of cols, which it alone
    unfolds. (Slices of the output channels each unfolded every window again: 16 times for
    a 512-channel 7x7 layer. And transposed: OpenBLAS ran the product with the long P dim as
    k faster this way round.)"""
    n_img, o_n, p_n = g.shape
    ow_n, groups, splits, parts = geo[9], geo[6], geo[11], partial.shape[0]
    oh_n, og, cg, taps = p_n // ow_n, o_n // groups, x.shape[1] // groups, geo[7] * geo[8]
    part, (c0, c1) = item // splits, _share(item % splits, splits, cg)
    k0, k1 = c0 * taps, c1 * taps
    tasks = _count(n_img, oh_n, groups, geo[10], geo[12])
    flat, ld, cols = _scratch(k1 - k0, geo, x.dtype)
    spare = np.empty((og, ld if geo[12] > 1 else 0), x.dtype)
    partial[part, k0:k1] = 0
    for t in range(tasks * part // parts, tasks * (part + 1) // parts):
        n0, count, q, oh0, rows = _task(t, geo, n_img, oh_n)
        p0, p1 = oh0 * ow_n, (oh0 + rows) * ow_n
        width = p1 - p0
        for i in range(count):
            _unfold(flat[i * width:], ld, x, n0 + i, q * cg + c0, k1 - k0, geo, oh0, rows)
        _product(code, partial[part, k0:k1, q * og:(q + 1) * og], cols[:, :count * width],
                 _gathered(g, n0, count, q * og, (q + 1) * og, p0, p1, spare).T, True)


@_per_dtype(worker, cache=True, error_model="numpy")
def conv_weight_grad(context, first, step):
    """The gradient of the convolution by its weight for upstream gradient g: the runs' sums
    into partial ((runs, K, O): transposed), which `_add_runs` adds up."""
    # partial (3-D), g (3-D), x (4-D), geo (1-D), code
    c, zero = carray(as_pointer(context, np.int64(0)), 16), DTYPE(0)
    partial = carray(as_pointer(c[0], zero), (c[1], c[2], c[3]))
    g = carray(as_pointer(c[4], zero), (c[5], c[6], c[7]))
    x = carray(as_pointer(c[8], zero), (c[9], c[10], c[11], c[12]))
    geo = carray(as_pointer(c[13], np.int64(0)), c[14])
    for item in range(first, partial.shape[0] * geo[11], step):
        _weight_part(item, partial, g, x, c[15], geo)


@njit(cache=True)
def _add_runs(gw, partial):
    """gw = the runs' (transposed) partial sums added in run order (the same bits on any thread
    count): summed into the first run's, then transposed a TILE x TILE tile at a time (Numba's
    copy of a transposed array, element by element across whole rows, was ten times
    slower)."""
    k_n, o_n = partial.shape[1], partial.shape[2]
    total = partial[0].reshape(-1)
    for part in range(1, partial.shape[0]):
        other = partial[part].reshape(-1)
        for e in range(total.size):
            total[e] += other[e]
    for j0 in range(0, k_n, TILE):
        for i0 in range(0, o_n, TILE):
            for i in range(i0, min(i0 + TILE, o_n)):
                for j in range(j0, min(j0 + TILE, k_n)):
                    gw[i, j] = partial[0, j, i]


# -- launchers -----------------------------------------------------------------------------------
def _code(dtype):
    if (dtype.kind == "f" or narrow.is_narrow_dtype(dtype)) and blas.AVAILABLE:
        return DGEMM if dtype == np.float64 else SGEMM  # (narrow dtypes run float32's workers)
    return LOOPS


def _blocking(k_n, out_shape, blocks=1):
    """(output rows per block, images per block): the rows split into blocks of equal rows,
    each at most BLOCK elements of windows (or one row); where whole images fit, as many as
    make COLUMNS positions (in blocks of equal counts), leaving at least `blocks` blocks."""
    n, _, oh_n, ow_n = out_shape
    positions = oh_n * ow_n
    if k_n * positions > BLOCK:
        return -(-oh_n // -(-k_n * positions // BLOCK)), 1
    images = min(n // blocks, -(-COLUMNS // max(1, positions)),
                 BLOCK // max(1, k_n * positions))
    return oh_n, -(-n // -(-n // images)) if images > 1 else 1


def _geometry(w, out_shape, stride, padding, dilation, groups, blocking, tasks, channels):
    """The kernels' `geo` array: `tasks` tasks, each split further over slices of its
    `channels` until there are TASKS."""
    splits = min(channels, max(1, -(-TASKS // max(1, tasks))))
    return np.array((*stride, *padding, *dilation, groups, *w.shape[2:], out_shape[3],
                     blocking[0], splits, blocking[1]), np.int64)


def workers(dtype):
    """name -> the workers for arrays of `dtype`."""
    return _per_dtype.build(dtype.type)


def _run(kernel, threads, *arguments):
    """The `kernel` worker of the first array's dtype on `threads` threads (float16 and
    bfloat16: float32's, on copies, narrow.py)."""
    if narrow.is_narrow(arguments[0]):
        return narrow.call(_run, (kernel, threads, *arguments))
    run_worker(workers(arguments[0].dtype)[kernel], threads, *arguments)


def _workers(tasks, work):
    """Threads for `tasks` tasks of `work` multiply-adds in all."""
    from .linalg import BLAS_PARALLEL_MIN
    return 1 if work < BLAS_PARALLEL_MIN or single_thread() else max(1, min(num_threads(), tasks))


def _matrix(w):
    """The weight (O, C / groups, kh, kw) as the (O, K) matrix of the products."""
    return w.reshape(w.shape[0], math.prod(w.shape[1:]))


def conv(out, x, w, bias, stride, padding, dilation, groups):
    """out (N, O, OH, OW) = x (N, C, H, W) convolved with w (O, C / groups, kh, kw), plus bias
    (O,) or None; all C-contiguous, padding (top, left)."""
    n, o, oh, ow = out.shape
    w2 = _matrix(w)
    # (TASKS blocks before any slices of channels, which would unfold the same windows again)
    blocking = _blocking(w2.shape[1], out.shape, TASKS)
    tasks = _count(n, oh, groups, *blocking)
    geo = _geometry(w, out.shape, stride, padding, dilation, groups, blocking, tasks,
                    max(1, o // groups // FORWARD_SLICE))
    _run("conv_forward", _workers(tasks * geo[11], out.size * w2.shape[1]),
         out.reshape(n, o, oh * ow), x, w2, w2[0] if bias is None else bias, geo,
         bias is not None, _code(x.dtype))


def conv_grad_input(gx, g, w, stride, padding, dilation, groups):
    """gx (N, C, H, W) = the convolution's gradient by its input for g (N, O, OH, OW)."""
    n, o, oh, ow = g.shape
    w2 = _matrix(w)
    blocking = _blocking(w2.shape[1], g.shape)
    tasks = -(-n // blocking[1]) * groups  # (each runs its blocks of rows in turn)
    geo = _geometry(w, g.shape, stride, padding, dilation, groups, blocking, tasks,
                    gx.shape[1] // groups)
    _run("conv_input_grad", _workers(tasks * geo[11], g.size * w2.shape[1]), gx,
         g.reshape(n, o, oh * ow), w2, geo, _code(gx.dtype))


def conv_grad_weight(gw, g, x, stride, padding, dilation, groups):
    """gw (O, C / groups, kh, kw) = the convolution's gradient by its weight for g: the tasks
    in runs, each summed into a partial of its own."""
    n, o, oh, ow = g.shape
    gw2 = _matrix(gw)
    blocking = _blocking(gw2.shape[1], g.shape)
    parts = max(1, min(PARTS, _count(n, oh, groups, *blocking),
                       PARTIAL_MAX // max(1, gw.size)))
    geo = _geometry(gw, g.shape, stride, padding, dilation, groups, blocking, parts,
                    x.shape[1] // groups)
    partial = np.empty((parts, gw2.shape[1], o), gw.dtype)
    _run("conv_weight_grad", _workers(parts * geo[11], g.size * gw2.shape[1]), partial,
         g.reshape(n, o, oh * ow), x, geo, _code(x.dtype))
    _add_runs(gw2, partial)
