"""Fused scaled dot-product attention (no mask but the causal one, no dropout): softmax(q k^T *
scale) v a head at a time, forward and backward, each head's products through cblas_?gemm and
its softmax in one pass over its (L, S) weights, which live only in a per-head scratch.

The forward keeps each query row's log-sum-exp, from which the backward recomputes the row's
weights. A head is one task of a worker (kernels.run_tasks), and OpenBLAS runs on one thread
meanwhile (linalg.gemm_blas says why): the same bits at any thread count."""
import math

import numpy as np
from numba import carray
from numba.extending import register_jitable

from ..scalar.libm import exp
from ..scalar.reduction import cast_like
from . import blas, narrow
from .kernels import Specialised, context, num_threads, run_tasks, serial, worker
from .vector import as_pointer

AVAILABLE = blas.AVAILABLE  # without cblas_?gemm attention keeps its composed path
_options = dict(fastmath={"reassoc"}, error_model="numpy")


@register_jitable
def _product(ta, tb, c, a, b, accumulate):
    """c [+]= op(a) @ op(b) for 2-D arrays of one float type with unit column strides (rows of
    C-contiguous arrays), op transposing where ta / tb."""
    m, n = c.shape
    k = a.shape[0] if ta else a.shape[1]
    ra, rb = blas.TRANS if ta else blas.NO_TRANS, blas.TRANS if tb else blas.NO_TRANS
    pa, pb, pc = a.ctypes.data, b.ctypes.data, c.ctypes.data
    la, lb, lc = a.strides[0] // a.itemsize, b.strides[0] // b.itemsize, c.strides[0] // c.itemsize
    beta = 1.0 if accumulate else 0.0
    if c.itemsize == 4:
        blas.sgemm(blas.ROW_MAJOR, ra, rb, m, n, k, 1.0, pa, la, pb, lb, beta, pc, lc)
    else:
        blas.dgemm(blas.ROW_MAJOR, ra, rb, m, n, k, 1.0, pa, la, pb, lb, beta, pc, lc)


@register_jitable(**_options)
def _visible(i, source, causal):
    """How many keys query row i sees: all, or with `causal` those j <= i."""
    return min(i + 1, source) if causal else source


# Query rows run in blocks of BLOCK_ROWS: a causal block's products stop at the last key its
# rows see (about half the multiply-adds of the whole (L, S) products).
BLOCK_ROWS = 64


@register_jitable(**_options)
def _forward_head(q, k, v, out, lse, scale, causal):
    length, source = q.shape[0], k.shape[0]
    scratch = np.empty((min(BLOCK_ROWS, length), source), q.dtype)
    for r0 in range(0, length, BLOCK_ROWS):
        r1 = min(r0 + BLOCK_ROWS, length)
        keys = _visible(r1 - 1, source, causal)
        p = scratch[:r1 - r0, :keys]
        _product(False, True, p, q[r0:r1], k[:keys], False)
        for i in range(r0, r1):
            n, s = _visible(i, source, causal), p[i - r0]
            top = s[0] * scale
            for j in range(n):
                s[j] *= scale
                top = max(top, s[j])
            total = top - top
            for j in range(n):
                s[j] = exp(s[j] - top)
                total += s[j]
            r = cast_like(1.0, total) / total
            for j in range(n):
                s[j] *= r
            for j in range(n, keys):
                s[j] = 0.0
            lse[i] = top + np.log(total)
        _product(False, False, out[r0:r1], p, v[:keys], False)


@register_jitable(**_options)
def _backward_head(q, k, v, out, lse, dout, dq, dk, dv, scale, causal):
    length, source = q.shape[0], k.shape[0]
    rows = min(BLOCK_ROWS, length)
    scratch_p, scratch_d = np.empty((rows, source), q.dtype), np.empty((rows, source), q.dtype)
    for r0 in range(0, length, BLOCK_ROWS):
        r1 = min(r0 + BLOCK_ROWS, length)
        keys = _visible(r1 - 1, source, causal)
        p, ds = scratch_p[:r1 - r0, :keys], scratch_d[:r1 - r0, :keys]
        _product(False, True, p, q[r0:r1], k[:keys], False)
        _product(False, True, ds, dout[r0:r1], v[:keys], False)  # dO v^T: d of the weights
        for i in range(r0, r1):
            n, s, d = _visible(i, source, causal), p[i - r0], ds[i - r0]
            for j in range(n):
                s[j] = exp(s[j] * scale - lse[i])
            total = dout[i, 0] * out[i, 0]  # sum_j p_j (dO_i . v_j) = dO_i . O_i
            for e in range(1, out.shape[1]):
                total += dout[i, e] * out[i, e]
            for j in range(n):
                d[j] = s[j] * (d[j] - total) * scale
            for j in range(n, keys):
                s[j] = 0.0
                d[j] = 0.0
        # the keys past `keys` get nothing from this block (nor, causal, from any before it)
        first = r0 == 0
        _product(True, False, dv[:keys], p, dout[r0:r1], not first)
        _product(False, False, dq[r0:r1], ds, k[:keys], False)
        _product(True, False, dk[:keys], ds, q[r0:r1], not first)
        if first:
            for j in range(keys, source):
                dv[j, :] = 0.0
                dk[j, :] = 0.0


# -- workers (kernels.run_tasks), compiled per dtype (DTYPE); a head per task. The comments give
# the layout of the arguments at `context`. (As parallel kernels, their parfors doubled the
# compile: docs/design.md, "Cold start".) -----------------------------------------------------
DTYPE = None
_per_dtype = Specialised(globals(), ("DTYPE",), lambda dtype: "_" + np.dtype(dtype).name)


@register_jitable
def _head(c, i, h, zero):
    """Head h of the stack whose layout `_layout` wrote at c[i:i + 7], as a 2-D view (rows,
    features) with unit column stride."""
    heads, rows, ld, features = c[i + 1], c[i + 4], c[i + 5], c[i + 6]
    address = c[i] + h // heads * c[i + 2] + h % heads * c[i + 3]
    return carray(as_pointer(address, zero), (rows, max(ld, features)))[:, :features]


@register_jitable
def _lse(c, i, zero):
    return carray(as_pointer(c[i], zero), (c[i + 1], c[i + 2]))


@_per_dtype(worker, cache=True, **_options)
def attention_forward(context, first, step):
    """out[h] = softmax(q[h] @ k[h]^T * scale, causal: key j > query i hidden) @ v[h] and lse[h]
    each row's log-sum-exp."""
    # heads, then q, k, v, out (7 each: `_layout`), lse (2-D), scale (1 element), causal
    c, zero = carray(as_pointer(context, np.int64(0)), 35), DTYPE(0)
    lse, scale = _lse(c, 29, zero), carray(as_pointer(c[32], zero), 1)[0]
    for h in range(first, c[0], step):
        _forward_head(_head(c, 1, h, zero), _head(c, 8, h, zero), _head(c, 15, h, zero),
                      _head(c, 22, h, zero), lse[h], scale, c[34] != 0)


@_per_dtype(worker, cache=True, **_options)
def attention_backward(context, first, step):
    """dq, dk, dv: the gradients of attention_forward's out for its gradient dout."""
    # heads, then q, k, v, out (7 each), lse (2-D), dout, dq, dk, dv (7 each), scale, causal
    c, zero = carray(as_pointer(context, np.int64(0)), 63), DTYPE(0)
    lse, scale = _lse(c, 29, zero), carray(as_pointer(c[60], zero), 1)[0]
    for h in range(first, c[0], step):
        _backward_head(_head(c, 1, h, zero), _head(c, 8, h, zero), _head(c, 15, h, zero),
                       _head(c, 22, h, zero), lse[h], _head(c, 32, h, zero),
                       _head(c, 39, h, zero), _head(c, 46, h, zero), _head(c, 53, h, zero),
                       scale, c[62] != 0)


def _layout(x):
    """A stack of heads as the workers read it: (address, heads per batch H, batch stride,
    head stride (bytes), rows, row stride (elements), features), for x of shape (B, L, E) or
    (B, H, L, E) whose last dim has unit stride: head h starts h // H batch strides and h % H
    head strides from x's first element. The heads of a (B, L, H, E) buffer seen as (B, H, L,
    E) (a transformer's q, k, v) are read in place."""
    size = x.itemsize
    if x.ndim == 3:
        x = x[:, None]
    return (x.__array_interface__["data"][0], x.shape[1], x.strides[0], x.strides[1],
            x.shape[2], x.strides[2] // size, x.shape[3])


def _run(kernel, q, k, v, *arguments):
    """The `kernel` worker of q's dtype, a head per task."""
    heads = math.prod(q.shape[:-2])
    work = heads * q.shape[-2] * k.shape[-2] * (q.shape[-1] + v.shape[-1])
    threads = 1 if serial(work) else max(1, min(num_threads(), heads))
    values = [heads]
    for x in (q, k, v, *arguments):  # stacks of heads by `_layout`, the rest as `context` packs
        values.extend(_layout(x) if isinstance(x, np.ndarray) and x.ndim >= 3 else context(x))
    blas.on_one_thread(run_tasks, _per_dtype.build(q.dtype.type)[kernel].address,
                       np.array(values, np.int64), threads)


@narrow.in_float32
def forward(q, k, v, out, lse, scale, causal):
    """Fill out (..., L, Ev) and lse (heads, L) from q (..., L, E), k (..., S, E), v (..., S,
    Ev) of one float dtype (L, S, E >= 1): 3-D or 4-D stacks of heads with a unit-stride last
    dim (`_layout`)."""
    _run("attention_forward", q, k, v, out, lse, np.full(1, scale, q.dtype), bool(causal))


@narrow.in_float32
def backward(q, k, v, out, lse, dout, dq, dk, dv, scale, causal):
    """Fill dq, dk, dv (q's, k's and v's shapes, any such layout) for out's gradient dout."""
    _run("attention_backward", q, k, v, out, lse, dout, dq, dk, dv, np.full(1, scale, q.dtype),
         bool(causal))
