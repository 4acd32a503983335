"""Matrix products on the CPU.

`matmul` takes stacks of matrices: `out` (t, m, n) C-contiguous, `a` (ta, m, k) and `b` (tb, k, n)
of any strides, and index arrays `ia`, `ib` naming the `a` and `b` matrix of each output matrix
(that is how broadcast batch dims arrive). The launcher hands each kernel C-contiguous stacks,
copying only layouts it cannot use as they are, so every dtype needs one compiled signature.

float32/float64 call `cblas_?gemm` (`blas.py`: the OpenBLAS NumPy ships), OpenBLAS set to one
thread and each product split into slabs of rows over Numba's threads (see gemm_blas); a
C-contiguous stack read transposed is BLAS's transposed operand, so no copy is made.

Integers (no BLAS for them), and floats where NumPy ships no OpenBLAS, use `gemm_tiled`: output
tiles spread over the threads, B packed in panels so the inner loop is a unit-stride vector
loop, sums wrapping in the dtype as torch's do. Measured on one thread (CPU time), 512^3 int64
/ int32 / int8: 33 / 52 / 90 GOP/s; torch, whose integer matmul runs on one thread: 31 / 39 /
85. 2 rows x 4 depths per pass beat 1 x 4 by
1.5x; 4 x 4 gained 5-10% on int64 / int32 but lost 7% on int8, 2 x 8 gained nothing. A single
column (matrix-vector, dot) runs `gemv_tiled`."""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from . import blas
from .kernels import first_small, num_threads, one_worker, prange_only, serial, single_thread, twins

# Output tiles of MC x NC elements per task, accumulated over KC-deep panels of B packed
# contiguous: one panel (int64: 512 KiB) stays in L2 while the tile's rows stream past it.
MC, NC, KC = 64, 256, 256
MV = 512  # rows per matrix-vector task: the axpy form (A^T stored) runs MV-long vector loops
# BLAS products run in parallel from this many bytes of multiply-adds (m*n*k * itemsize): the
# size from which a second thread pays for entering the pool, for float32 and float64 alike
# (measured on 2 cores: docs/design.md)
BLAS_PARALLEL_MIN = 1 << 20
BLAS_SLAB = 64  # rows (or columns) of a slab, at least
BLAS_PART_WORK = 1 << 19  # multiply-adds of a slab, at least
BLAS_PARTS = 4  # slabs of a product, at most


@register_jitable
def _tile(a, ai, bp, acc, i0, mp, p0, kp, nc):
    """acc[:mp, :nc] += A[i0:i0+mp, p0:p0+kp] @ bp[:kp, :nc] for matrix `ai` of the stack `a`,
    mp a multiple of 2 and kp of 4 (the operands are zero-padded). Two rows share each load of
    four B rows, which halves the loads per multiply-add; the sums wrap in the integer type as
    torch's do. (Every index in the inner loop is a plain range variable: indexing with
    `j0 + j` instead, numba's negative-index wraparound kept LLVM from a unit-stride vector
    loop.)"""
    for i in range(0, mp, 2):
        ar, cr = a[ai, i0 + i], a[ai, i0 + i + 1]
        for p in range(0, kp, 4):
            q = p0 + p
            a0, a1, a2, a3 = ar[q], ar[q + 1], ar[q + 2], ar[q + 3]
            c0, c1, c2, c3 = cr[q], cr[q + 1], cr[q + 2], cr[q + 3]
            for j in range(nc):
                b0, b1, b2, b3 = bp[p, j], bp[p + 1, j], bp[p + 2, j], bp[p + 3, j]
                acc[i, j] += a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3
                acc[i + 1, j] += c0 * b0 + c1 * b1 + c2 * b2 + c3 * b3


@register_jitable
def _gemm_tasks(w, workers, out, a, b, ia, ib):
    """Output tiles w, w + workers, ... of the (matrix, row block, column block) grid, through
    buffers allocated once per worker."""
    nmat, m, n = out.shape
    mp, kp = a.shape[1], a.shape[2]
    rb, cb = (m + MC - 1) // MC, (n + NC - 1) // NC
    acc = np.empty((min(MC, mp), min(NC, n)), out.dtype)
    bp = np.empty((min(KC, kp), min(NC, n)), b.dtype)
    for task in range(w, nmat * rb * cb, workers):
        t, rest = task // (rb * cb), task % (rb * cb)
        i0, j0 = rest // cb * MC, rest % cb * NC
        mc, nc = min(MC, m - i0), min(NC, n - j0)
        mpad = min(MC, mp - i0)
        acc[:mpad, :nc] = 0
        for p0 in range(0, kp, KC):
            kc = min(KC, kp - p0)
            for p in range(kc):
                _put(bp[p, :nc], b[ib[t], p0 + p, j0:j0 + nc])
            _tile(a, ia[t], bp, acc, i0, mpad, p0, kc, nc)
        for i in range(mc):
            _put(out[t, i0 + i, j0:j0 + nc], acc[i, :nc])


@register_jitable
def _put(dst, src):
    """dst[:] = src, 1-D arrays of one size. A loop: an array-to-array slice assignment
    compiles Numba's shape-mismatch message, whose int formatting is seconds of compiling in
    every kernel signature that has one (docs/design.md, "Cold start")."""
    for i in range(dst.size):
        dst[i] = src[i]


@twins(one_worker)
@njit(cache=True, parallel=prange_only())
def gemm_tiled(out, a, b, ia, ib, workers):
    """out[t] = a[ia[t]] @ b[ib[t]] for integer stacks, C-contiguous and zero-padded: a
    (na, m rounded up to 2, k rounded up to 4), b (nb, k rounded up to 4, n); spread over
    `workers` threads (1: a plain loop, no thread pool)."""
    if workers == 1:
        _gemm_tasks(0, 1, out, a, b, ia, ib)
    else:
        for w in prange(workers):
            _gemm_tasks(w, workers, out, a, b, ia, ib)


@register_jitable
def _gemv_task(out, a, ta, b, ia, ib, task, rb):
    """Rows block `task % rb` of out[t] = A[ia[t]] @ b[ib[t]], t = task // rb: dot products
    along contiguous rows of A, or axpy along contiguous rows of A^T when the stack holds
    that; either way the inner loop is unit-stride."""
    t, i0 = task // rb, task % rb * MV
    mc = min(MV, out.shape[1] - i0)
    x, v, o = a[ia[t]], b[ib[t]], out[t, i0:i0 + mc]
    if ta:
        acc = np.zeros(mc, out.dtype)
        k4 = v.size - v.size % 4
        for p in range(0, k4, 4):  # four rows of A^T per pass: one load and store of acc
            c0, c1, c2, c3 = x[p, i0:i0 + mc], x[p + 1, i0:i0 + mc], x[p + 2, i0:i0 + mc], \
                x[p + 3, i0:i0 + mc]
            v0, v1, v2, v3 = v[p], v[p + 1], v[p + 2], v[p + 3]
            for i in range(mc):
                acc[i] += c0[i] * v0 + c1[i] * v1 + c2[i] * v2 + c3[i] * v3
        for p in range(k4, v.size):
            col, vp = x[p, i0:i0 + mc], v[p]
            for i in range(mc):
                acc[i] += col[i] * vp
        _put(o, acc)
    else:
        for i in range(mc):
            row = x[i0 + i]
            s = row[0] * v[0]  # the first product types the sum (uint8: uint64, not float64)
            for p in range(1, v.size):
                s += row[p] * v[p]
            o[i] = s


@twins(one_worker)
@njit(cache=True, parallel=prange_only())
def gemv_tiled(out, a, ta, b, ia, ib, workers):
    """out[t] = A[ia[t]] @ b[ib[t]] for integer stacks: out (t, m) and b (nb, k) C-contiguous, a
    C-contiguous holding A (na, m, k) or, with `ta`, A^T (na, k, m). Blocks of MV rows are
    spread over the threads when `workers` > 1."""
    rb = (out.shape[1] + MV - 1) // MV
    if workers == 1:
        for task in range(out.shape[0] * rb):
            _gemv_task(out, a, ta, b, ia, ib, task, rb)
    else:
        for task in prange(out.shape[0] * rb):
            _gemv_task(out, a, ta, b, ia, ib, task, rb)


def _gemm_blas_shell(name, parallel):
    def gemm(out, a, b, ia, ib, ta, tb, parts, bias):
        """out[t] = A[ia[t]] @ B[ib[t]] (+ bias) through cblas_?gemm; `ta`/`tb`: the
        C-contiguous stack holds A^T / B^T, which BLAS reads with its transpose flag. m, n, k
        >= 1. `bias`: empty, or n values each row of out starts from, BLAS adding the product
        to them (beta = 1, as torch's addmm: no second pass over out). A matrix times a column
        (or a row times a matrix) goes to cblas_?gemv: ?gemm with n = 1 ran slower. Each
        product is split into `parts` slabs of out's rows (or columns, if it has more of
        those), the slabs of all products shared by Numba's threads.

        OpenBLAS runs on one thread meanwhile: its own threads and Numba's OpenMP ones, which
        spin for a while after each parallel kernel, fought over the cores (on 2 cores a
        product next to a parallel add ran many times slower: docs/design.md)."""
        m, n = out.shape[1], out.shape[2]
        k = a.shape[1] if ta else a.shape[2]
        lda, tra = (m, blas.TRANS) if ta else (k, blas.NO_TRANS)
        ldb, trb = (k, blas.TRANS) if tb else (n, blas.NO_TRANS)
        size = out.itemsize
        beta = 1.0 if bias.size else 0.0
        threads = blas.get_num_threads()
        blas.set_num_threads(1)
        for task in prange(out.shape[0] * parts):
            t, part = task // parts, task % parts
            pa = a.ctypes.data + ia[t] * a.strides[0]
            pb = b.ctypes.data + ib[t] * b.strides[0]
            po = out.ctypes.data + t * out.strides[0]
            if n == 1:  # y = A x, x contiguous either way; the stored matrix is A or A^T
                i0, i1 = _slab(m, part, parts)
                _start(out, t, bias, i0, i1, 0, 1)
                rows, cols = (k, m) if ta else (m, k)
                _gemv(out, tra, rows, cols, pa, lda, pb, po, i0, i1, beta)
                continue
            if m == 1:  # y = B^T x
                j0, j1 = _slab(n, part, parts)
                _start(out, t, bias, 0, 1, j0, j1)
                rows, cols = (n, k) if tb else (k, n)
                _gemv(out, blas.NO_TRANS if tb else blas.TRANS, rows, cols, pb, ldb, pa, po,
                      j0, j1, beta)
                continue
            ms, ns = m, n
            if m >= n:  # rows i0:i1 of A (a column block of a stored A^T) and of out
                i0, i1 = _slab(m, part, parts)
                _start(out, t, bias, i0, i1, 0, n)
                pa += i0 * (1 if ta else lda) * size
                po += i0 * n * size
                ms = i1 - i0
            else:  # columns j0:j1 of B (a row block of a stored B^T) and of out
                j0, j1 = _slab(n, part, parts)
                _start(out, t, bias, 0, m, j0, j1)
                pb += j0 * (ldb if tb else 1) * size
                po += j0 * size
                ns = j1 - j0
            if size == 4:  # float32
                blas.sgemm(blas.ROW_MAJOR, tra, trb, ms, ns, k, 1.0, pa, lda, pb, ldb, beta,
                           po, n)
            else:
                blas.dgemm(blas.ROW_MAJOR, tra, trb, ms, ns, k, 1.0, pa, lda, pb, ldb, beta,
                           po, n)
        blas.set_num_threads(threads)
    gemm.__name__ = gemm.__qualname__ = name  # (keys its disk cache)
    return njit(cache=True, parallel=prange_only() if parallel else False)(gemm)


# the serial build serves what one thread does (entering the parallel one's OpenMP region cost
# 2.5 us of a tiny product's 4)
gemm_blas, gemm_blas_serial = _gemm_blas_shell("gemm_blas", True), \
    _gemm_blas_shell("gemm_blas_serial", False)


@register_jitable
def _slab(size, part, parts):
    """The range of `size` rows (or columns) that slab `part` of `parts` covers."""
    return size * part // parts, size * (part + 1) // parts


@register_jitable
def _start(out, t, bias, i0, i1, j0, j1):
    """out[t, i0:i1, j0:j1] = bias[j0:j1] (each row), where there is a bias."""
    if bias.size:
        for i in range(i0, i1):
            _put(out[t, i, j0:j1], bias[j0:j1])


@register_jitable
def _gemv(out, trans, rows, cols, pm, ld, px, py, j0, j1, beta):
    """Entries j0:j1 of y = op(M) x (+ y, beta = 1), for the row-major rows x cols matrix at pm
    (leading dim ld), x and y contiguous, in out's float type: a slab of M's rows (no
    transpose) or of its columns (transposed)."""
    py += j0 * out.itemsize
    if trans == blas.NO_TRANS:
        pm, rows = pm + j0 * ld * out.itemsize, j1 - j0
    else:
        pm, cols = pm + j0 * out.itemsize, j1 - j0
    if out.itemsize == 4:
        blas.sgemv(blas.ROW_MAJOR, trans, rows, cols, 1.0, pm, ld, px, 1, beta, py, 1)
    else:
        blas.dgemv(blas.ROW_MAJOR, trans, rows, cols, 1.0, pm, ld, px, 1, beta, py, 1)


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def outer_kernel(out, a, b):
    """out[i, j] = a[i] * b[j]; `a`, `b` already hold the result dtype, so products wrap (or
    round) as torch's do before the store."""
    m, n = out.shape
    if serial(m * n):
        for i in range(m):
            for j in range(n):
                out[i, j] = a[i] * b[j]
    else:
        for i in prange(m):
            for j in range(n):
                out[i, j] = a[i] * b[j]


def _dense(x, shape=None):
    """`x` as a writeable C-contiguous array of `shape` (default: its own), zero-padded at the
    end of each dim: itself when it already is one, else a copy made by the package's generic
    copy kernel. (Numba types read-only arrays apart: passing one would compile every kernel
    again.)"""
    shape = x.shape if shape is None else shape
    if x.flags.c_contiguous and x.flags.writeable and x.shape == shape:
        return x
    from . import copy  # imported late: the package imports this module
    dense = np.zeros(shape, x.dtype) if x.shape != shape else np.empty(shape, x.dtype)
    copy(dense[tuple(slice(0, d) for d in x.shape)], x)
    return dense


def _stack(x):
    """`x` (a 3-D stack) as (C-contiguous stack, stored transposed?): itself, its transpose
    (free), or else a contiguous copy."""
    flags = x.flags
    if flags.writeable:
        if flags.c_contiguous:
            return x, False
        xt = x.transpose(0, 2, 1)
        if xt.flags.c_contiguous:
            return xt, True
    return _dense(x), False


def _workers(work, tasks):
    """Threads for `work` multiply-adds split into `tasks`: one below PARALLEL_MIN."""
    return 1 if serial(work) else min(num_threads(), tasks)


def matmul(out, a, b, ia, ib, bias=None):
    """out[t] = a[ia[t]] @ b[ib[t]] for every t: out C-contiguous in a's (and b's) dtype, a and b
    of any strides, ia and ib int64 arrays of out.shape[0] indices; k >= 1. Returns whether it
    also added `bias` (1-D, out's last dim, out's dtype) to every row: BLAS products do."""
    if out.dtype.kind == "f" and blas.AVAILABLE:
        if out.size:
            given, bias = bias is not None, out.reshape(-1)[:0] if bias is None else _dense(bias)
            (a, ta), (b, tb) = _stack(a), _stack(b)
            nmat, m, n = out.shape
            k = a.shape[1] if ta else a.shape[2]
            # Slabs fixed by the shape, however many threads share them: OpenBLAS's result
            # for a row depends on where the row falls in its call's micro-tiles, so a split
            # by the thread count gave other bits at other thread counts. Each slab packs the
            # other operand again and runs a smaller call, so few slabs, none small
            # (docs/design.md, "Small-op latency").
            slabs = max(1, max(m, n) // BLAS_SLAB)
            parts = max(1, min(slabs, BLAS_PARTS, m * n * k // BLAS_PART_WORK))
            parallel = nmat * m * n * k * out.itemsize >= BLAS_PARALLEL_MIN \
                and not single_thread() and nmat * parts > 1
            kernel = gemm_blas if parallel else gemm_blas_serial
            kernel(out, a, b, ia, ib, ta, tb, parts, bias)
            return given
        return False
    nmat, m, n = out.shape
    k = a.shape[2]
    if m == 1 < n:  # a row times a matrix runs as (B^T a^T)^T, a matrix-vector product
        out = out.reshape(nmat, n, 1)
        a, b, ia, ib = b.transpose(0, 2, 1), a.transpose(0, 2, 1), ib, ia
        m, n = n, 1
    if n == 1:
        a, ta = _stack(a)
        gemv_tiled(out[:, :, 0], a, ta, _dense(b[:, :, 0]), ia, ib,
                   _workers(nmat * m * k, nmat * -(-m // MV)))
        return False
    # Transposed, strided or unpadded operands are made dense and padded once: O(mk + kn)
    # copies against O(mnk) multiply-adds (strided reads are slow: 0.3-0.5 G elements/s).
    a = _dense(a, (a.shape[0], m + m % 2, k + -k % 4))
    b = _dense(b, (b.shape[0], k + -k % 4, n))
    gemm_tiled(out, a, b, ia, ib, _workers(nmat * m * n * k, nmat * -(-m // MC) * -(-n // NC)))
    return False


def outer(out, a, b):
    """out[i, j] = a[i] * b[j]; out C-contiguous, a and b 1-D (any strides) in out's dtype."""
    outer_kernel(out, _dense(a), _dense(b))
