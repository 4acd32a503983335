"""Fused scaled dot-product attention (no mask but the causal one, no dropout): softmax(q k^T *
scale) v a head at a time, forward and backward, each head's products through cblas_?gemm and
its softmax in one pass over its (L, S) weights, which live only in a per-head scratch.

The forward keeps each query row's log-sum-exp, from which the backward recomputes the row's
weights. A head is one task, and OpenBLAS runs on one thread meanwhile (linalg.gemm_blas says
why): the same bits at any thread count."""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..scalar.libm import exp
from ..scalar.reduction import cast_like
from . import blas
from .kernels import num_threads, one_worker, prange_only, serial, twins

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


@twins(one_worker)
@njit(cache=True, parallel=prange_only(), **_options)
def attention_forward(q, k, v, out, lse, scale, causal, workers):
    """out[h] = softmax(q[h] @ k[h]^T * scale, causal: key j > query i hidden) @ v[h] and lse[h]
    each row's log-sum-exp, for every head h of the C-contiguous stacks q (H, L, E), k (H, S,
    E), v (H, S, Ev); a head per task, over `workers` threads."""
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    if workers == 1:
        for h in range(q.shape[0]):
            _forward_head(q[h], k[h], v[h], out[h], lse[h], scale, causal)
    else:
        for h in prange(q.shape[0]):
            _forward_head(q[h], k[h], v[h], out[h], lse[h], scale, causal)
    blas.set_num_threads(threads)


@twins(one_worker)
@njit(cache=True, parallel=prange_only(), **_options)
def attention_backward(q, k, v, out, lse, dout, dq, dk, dv, scale, causal, workers):
    """The gradients dq, dk, dv of attention_forward's out for its gradient dout."""
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    if workers == 1:
        for h in range(q.shape[0]):
            _backward_head(q[h], k[h], v[h], out[h], lse[h], dout[h], dq[h], dk[h], dv[h],
                           scale, causal)
    else:
        for h in prange(q.shape[0]):
            _backward_head(q[h], k[h], v[h], out[h], lse[h], dout[h], dq[h], dk[h], dv[h],
                           scale, causal)
    blas.set_num_threads(threads)


def _workers(q, k, v):
    work = q.shape[0] * q.shape[1] * k.shape[1] * (q.shape[2] + v.shape[2])
    return 1 if serial(work) else max(1, min(num_threads(), q.shape[0]))


def forward(q, k, v, out, lse, scale, causal):
    """Fill out (H, L, Ev) and lse (H, L) from the C-contiguous stacks q, k, v of one float
    dtype (L, S, E >= 1)."""
    attention_forward(q, k, v, out, lse, q.dtype.type(scale), bool(causal), _workers(q, k, v))


def backward(q, k, v, out, lse, dout, dq, dk, dv, scale, causal):
    """Fill dq, dk, dv (q's, k's and v's shapes) for out's gradient dout."""
    attention_backward(q, k, v, out, lse, dout, dq, dk, dv, q.dtype.type(scale), bool(causal),
                       _workers(q, k, v))
