"""CPU kernels of the factorisations over stacks of matrices: `a` (t, m, n) and `b` (t, n, k)
C-contiguous, in place, a matrix per task of Numba's threads. The ops hand over C-contiguous
copies of their own, so one signature serves a dtype.

Matrices larger than SMALL call LAPACK's getrf/potrf and BLAS's trsm (blas.py: the OpenBLAS
that NumPy ships; OpenBLAS's own threads for one matrix, one thread each for a stack), and
geqrf/orgqr, syevd and gesdd (OpenBLAS on one thread: _lapack_decompose says why); small
ones, and all where NumPy ships no LAPACK, run the scalar definitions of
kernels/scalar/factor.py (CUDA's too). Those kernels use error_model="numpy": a division by a
zero pivot gives inf/NaN, as in LAPACK (the ops raise or report it through info), where
Numba's default would raise ZeroDivisionError."""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..scalar import factor as S
from . import blas, narrow
from .kernels import prange_only, serial, twins


@twins(lambda a, piv, info: serial(a.size * piv.shape[1]))
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def _lu(a, piv, info):
    """a (t, m, n) = its LU factors in place; piv (t, min(m, n)) int64 and info (t,) int64
    out."""
    t, m, n = a.shape
    k = piv.shape[1]
    a, piv = a.reshape(-1), piv.reshape(-1)
    if serial(t * m * n * k):
        for s in range(t):
            info[s] = S.lu(a, s * m * n, m, n, piv, s * k)
    else:
        for s in prange(t):
            info[s] = S.lu(a, s * m * n, m, n, piv, s * k)


@twins(lambda a, piv, b: serial(b.size * b.shape[1]))
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def _lu_solve(a, piv, b):
    """b (t, n, k) = A^-1 b in place, from the LU factors a (t, n, n) and pivots piv."""
    t, n, k = b.shape
    a, piv, b = a.reshape(-1), piv.reshape(-1), b.reshape(-1)
    if serial(t * n * n * k):
        for m in range(t):
            S.lu_solve(a, m * n * n, n, piv, m * n, b, m * n * k, k)
    else:
        for m in prange(t):
            S.lu_solve(a, m * n * n, n, piv, m * n, b, m * n * k, k)


@twins(lambda a, b, upper, unit: serial(b.size * b.shape[1]))
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def _triangular(a, b, upper, unit):
    """b (t, n, k) = T^-1 b in place, T a's upper or lower triangle (unit diagonal)."""
    t, n, k = b.shape
    a, b = a.reshape(-1), b.reshape(-1)
    if serial(t * n * n * k):
        for m in range(t):
            S.triangular(a, m * n * n, n, b, m * n * k, k, upper, unit)
    else:
        for m in prange(t):
            S.triangular(a, m * n * n, n, b, m * n * k, k, upper, unit)


@twins(lambda a, info: serial(a.size * a.shape[1]))
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def _cholesky(a, info):
    """a (t, n, n) = its lower Cholesky factor in place; info (t,) int64 out."""
    t, n = a.shape[0], a.shape[1]
    a = a.reshape(-1)
    if serial(t * n * n * n):
        for m in range(t):
            info[m] = S.cholesky(a, m * n * n, n)
    else:
        for m in prange(t):
            info[m] = S.cholesky(a, m * n * n, n)


@twins(lambda a, tau, q: serial(a.size * max(tau.shape[1], 1)))
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def _qr(a, tau, q):
    """a (t, m, n) = its Householder QR in place (geqrf's form), tau (t, min(m, n)) the
    reflectors' scales, q (t, m, k) Q's first k columns (k = 0: Q is not wanted)."""
    t, m, n = a.shape
    r, k = tau.shape[1], q.shape[2]
    a, tau, q = a.reshape(-1), tau.reshape(-1), q.reshape(-1)
    if serial(t * m * n * max(r, 1)):
        for s in range(t):
            S.qr(a, s * m * n, m, n, tau, s * r)
            S.qr_q(a, s * m * n, m, n, tau, s * r, q, s * m * k, k)
    else:
        for s in prange(t):
            S.qr(a, s * m * n, m, n, tau, s * r)
            S.qr_q(a, s * m * n, m, n, tau, s * r, q, s * m * k, k)


@twins(lambda a, v, w, eps: serial(a.size * w.shape[1]))
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def _eigh(a, v, w, eps):
    """w (t, n) = the eigenvalues (ascending) of the symmetric a (t, n, n; destroyed), v (t, n,
    n) their eigenvectors as columns."""
    t, n = w.shape
    a, v, w = a.reshape(-1), v.reshape(-1), w.reshape(-1)
    if serial(t * n * n * n):
        for s in range(t):
            S.eigh(a, s * n * n, n, v, s * n * n, w, s * n, eps)
    else:
        for s in prange(t):
            S.eigh(a, s * n * n, n, v, s * n * n, w, s * n, eps)


@twins(lambda a, v, s, eps: serial(a.size * a.shape[2]))
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def _svd(a, v, s, eps):
    """s (t, n) = the singular values (descending) of a (t, m, n), m >= n; a = the left
    singular vectors, v (t, n, n) the right ones, as columns."""
    t, m, n = a.shape
    a, v, s = a.reshape(-1), v.reshape(-1), s.reshape(-1)
    if serial(t * m * n * n):
        for k in range(t):
            S.svd(a, k * m * n, m, n, v, k * n * n, s, k * n, eps)
    else:
        for k in prange(t):
            S.svd(a, k * m * n, m, n, v, k * n * n, s, k * n, eps)



# -- LAPACK --------------------------------------------------------------------------------------
@register_jitable
def _at(x, s, size):
    """The address of matrix s of the stack x, whose matrices hold `size` elements."""
    return x.ctypes.data + s * size * x.itemsize


@register_jitable
def _getrf(a, piv, s, m, n, k):
    if a.itemsize == 4:
        return blas.sgetrf(blas.ROW_MAJOR, m, n, _at(a, s, m * n), max(n, 1), _at(piv, s, k))
    return blas.dgetrf(blas.ROW_MAJOR, m, n, _at(a, s, m * n), max(n, 1), _at(piv, s, k))


@register_jitable
def _trsm(a, b, s, n, k, uplo, diag):
    if a.itemsize == 4:
        blas.strsm(blas.ROW_MAJOR, blas.LEFT, uplo, blas.NO_TRANS, diag, n, k, 1.0,
                   _at(a, s, n * n), max(n, 1), _at(b, s, n * k), max(k, 1))
    else:
        blas.dtrsm(blas.ROW_MAJOR, blas.LEFT, uplo, blas.NO_TRANS, diag, n, k, 1.0,
                   _at(a, s, n * n), max(n, 1), _at(b, s, n * k), max(k, 1))


@register_jitable
def _potrf(a, s, n):
    """a's matrix s = its lower Cholesky factor (potrf leaves the upper triangle: zeroed)."""
    if a.itemsize == 4:
        info = blas.spotrf(blas.ROW_MAJOR, ord("L"), n, _at(a, s, n * n), max(n, 1))
    else:
        info = blas.dpotrf(blas.ROW_MAJOR, ord("L"), n, _at(a, s, n * n), max(n, 1))
    for i in range(n):
        for j in range(i + 1, n):
            a[s, i, j] = 0
    return info


@register_jitable
def _run(op, a, piv, b, info, s, uplo, diag):
    if op == 0:
        info[s] = _getrf(a, piv, s, a.shape[1], a.shape[2], piv.shape[1])
    elif op == 1:  # getrs, but without LAPACKE's transposed copies (5x slower at 256^2)
        n, k = a.shape[2], b.shape[2]
        S.permute(b[s].reshape(-1), 0, n, k, piv[s], 0)
        _trsm(a, b, s, n, k, blas.LOWER, blas.UNIT)
        _trsm(a, b, s, n, k, blas.UPPER, blas.NON_UNIT)
    elif op == 2:
        _trsm(a, b, s, a.shape[2], b.shape[2], uplo, diag)
    else:
        info[s] = _potrf(a, s, a.shape[2])


@twins(lambda op, a, piv, b, *args: a.shape[0] == 1 or serial(a.size * max(b.shape[2], 1)))
@njit(cache=True, parallel=prange_only())
def _lapack(op, a, piv, b, info, upper, unit):
    """Run `op` (0 getrf, 1 the solve from getrf's factors, 2 trsm, 3 potrf) on each matrix:
    OpenBLAS's threads for one matrix or little work, else one OpenBLAS thread per task of
    Numba's threads."""
    t = a.shape[0]
    uplo = blas.UPPER if upper else blas.LOWER
    diag = blas.UNIT if unit else blas.NON_UNIT
    if t == 1 or serial(t * a.shape[1] * a.shape[2] * max(b.shape[2], 1)):
        for s in range(t):
            _run(op, a, piv, b, info, s, uplo, diag)
    else:
        threads = blas.get_num_threads()
        blas.set_num_threads(1)
        for s in prange(t):
            _run(op, a, piv, b, info, s, uplo, diag)
        blas.set_num_threads(threads)


# -- launchers: LAPACK where NumPy ships it, else the scalar definitions -------------------------
_PIV, _INFO = np.zeros((1, 1), np.int64), np.zeros(1, np.int64)  # (arguments an op ignores)
SMALL = 8  # up to 8 x 8 the scalar kernels win (2000 4x4 inverses: 0.26 ms, by LAPACK 3.7)


def _lapack_for(a):
    """Whether LAPACK runs a's matrices: large real ones (complex ones run the scalar
    definitions, which are written for any number type)."""
    return blas.LAPACK and a.dtype.kind != "c" and max(a.shape[1], a.shape[2]) > SMALL


@narrow.in_float32
def lu(a, piv, info):
    """a (t, m, n) = its LU factors in place; piv (t, min(m, n)) int64 and info (t,) int64
    out."""
    if _lapack_for(a):
        _lapack(0, a, piv, a, info, False, False)
    else:
        _lu(a, piv, info)


@narrow.in_float32
def lu_solve(a, piv, b):
    """b (t, n, k) = A^-1 b in place, from the LU factors a (t, n, n) and pivots piv."""
    if _lapack_for(a):
        _lapack(1, a, piv, b, _INFO, False, False)
    else:
        _lu_solve(a, piv, b)


@narrow.in_float32
def triangular(a, b, upper, unit):
    """b (t, n, k) = T^-1 b in place, T a's upper or lower triangle (unit diagonal)."""
    if _lapack_for(a):
        _lapack(2, a, _PIV, b, _INFO, bool(upper), bool(unit))
    else:
        _triangular(a, b, bool(upper), bool(unit))


@narrow.in_float32
def cholesky(a, info):
    """a (t, n, n) = its lower Cholesky factor in place; info (t,) int64 out."""
    if _lapack_for(a):
        _lapack(3, a, _PIV, a, info, False, False)
    else:
        _cholesky(a, info)


# -- decompositions ------------------------------------------------------------------------------
@register_jitable
def _transpose(src, dst):
    """dst = src^T by 32 x 32 tiles (a plain loop misses the cache on every element of one side
    at 1024^2)."""
    p, q = src.shape
    for i0 in range(0, p, 32):
        for j0 in range(0, q, 32):
            for i in range(i0, min(i0 + 32, p)):
                for j in range(j0, min(j0 + 32, q)):
                    dst[j, i] = src[i, j]


@register_jitable
def _size(query):
    # (float32 holds a large workspace size rounded, possibly down)
    return max(int(query[0] * (1 + 1e-6)) + 1, 1)


@register_jitable
def _geqrf(a, m, n, x, tau, work, lwork):
    if a.itemsize == 4:
        return blas.sgeqrf(blas.COL_MAJOR, m, n, x, max(m, 1), tau, work, lwork)
    return blas.dgeqrf(blas.COL_MAJOR, m, n, x, max(m, 1), tau, work, lwork)


@register_jitable
def _orgqr(a, m, k, r, x, tau, work, lwork):
    if a.itemsize == 4:
        return blas.sorgqr(blas.COL_MAJOR, m, k, r, x, max(m, 1), tau, work, lwork)
    return blas.dorgqr(blas.COL_MAJOR, m, k, r, x, max(m, 1), tau, work, lwork)


@register_jitable
def _qr_lapack(a, tau, q, s):
    """geqrf + orgqr on a column-major copy of matrix s (k = q.shape[2] columns of Q)."""
    m, n = a.shape[1], a.shape[2]
    r, k = tau.shape[1], q.shape[2]
    w = np.empty((n, m), a.dtype)  # A column-major
    _transpose(a[s], w)
    qc = np.zeros((k, m), a.dtype)  # Q column-major
    t = _at(tau, s, r)
    query = np.zeros(2, a.dtype)
    _geqrf(a, m, n, w.ctypes.data, t, query.ctypes.data, -1)
    if k:
        _orgqr(a, m, k, r, qc.ctypes.data, t, query[1:].ctypes.data, -1)
    lwork = max(_size(query[:1]), _size(query[1:]))
    work = np.empty(lwork, a.dtype)
    _geqrf(a, m, n, w.ctypes.data, t, work.ctypes.data, lwork)
    _transpose(w, a[s])
    if k:
        qc[:r] = w[:r]  # the reflectors: A's first r columns
        _orgqr(a, m, k, r, qc.ctypes.data, t, work.ctypes.data, lwork)
        _transpose(qc, q[s])
    return 0


@register_jitable
def _syevd(a, n, x, w, work, lwork, iwork, liwork):
    if a.itemsize == 4:
        return blas.ssyevd(blas.COL_MAJOR, ord("V"), ord("L"), n, x, max(n, 1), w, work, lwork,
                           iwork, liwork)
    return blas.dsyevd(blas.COL_MAJOR, ord("V"), ord("L"), n, x, max(n, 1), w, work, lwork,
                       iwork, liwork)


@register_jitable
def _eigh_lapack(a, w, v, s):
    """syevd on matrix s (symmetric: column-major is itself); its eigenvectors come back as the
    columns of a column-major matrix, transposed into v's row-major s."""
    n = a.shape[1]
    x, ws = _at(a, s, n * n), _at(w, s, n)
    query, iquery = np.zeros(1, a.dtype), np.zeros(1, np.int64)
    _syevd(a, n, x, ws, query.ctypes.data, -1, iquery.ctypes.data, -1)
    lwork, liwork = _size(query), max(iquery[0], 1)
    work, iwork = np.empty(lwork, a.dtype), np.empty(liwork, np.int64)
    info = _syevd(a, n, x, ws, work.ctypes.data, lwork, iwork.ctypes.data, liwork)
    _transpose(a[s], v[s])
    return info


@register_jitable
def _gesdd(a, m, n, x, sv, u, vt, work, lwork, iwork):
    # jobz "S": U (m, min) and V^T (min, n)
    ld = max(m, 1)
    if a.itemsize == 4:
        return blas.sgesdd(blas.COL_MAJOR, ord("S"), m, n, x, ld, sv, u, ld, vt, ld, work, lwork,
                           iwork)
    return blas.dgesdd(blas.COL_MAJOR, ord("S"), m, n, x, ld, sv, u, ld, vt, ld, work, lwork,
                       iwork)


@register_jitable
def _svd_lapack(a, sv, v, s):
    """gesdd on matrix s (m, n), m >= n, read column-major: A^T (n, m) = V S U^T, so LAPACK's
    V^T (n x m column-major) is U row-major and its U (n x n column-major) is V^T row-major."""
    m, n = a.shape[1], a.shape[2]
    u, vc = np.empty((m, n), a.dtype), np.empty((n, n), a.dtype)
    iwork = np.empty(max(8 * n, 1), np.int64)
    x, ss = _at(a, s, m * n), _at(sv, s, n)
    query = np.zeros(1, a.dtype)
    _gesdd(a, n, m, x, ss, vc.ctypes.data, u.ctypes.data, query.ctypes.data, -1,
           iwork.ctypes.data)
    lwork = _size(query)
    work = np.empty(lwork, a.dtype)
    info = _gesdd(a, n, m, x, ss, vc.ctypes.data, u.ctypes.data, work.ctypes.data, lwork,
                  iwork.ctypes.data)
    a[s] = u
    _transpose(vc, v[s])
    return info


@register_jitable
def _decompose(op, a, vec, mat, s):
    """op 0: QR (vec tau, mat Q's columns), 1: eigh (vec w, mat V), 2: svd (vec S, mat V) of
    matrix s; what LAPACK could not compute (info != 0: NaN in the input) is NaN, as the
    scalar kernels leave it."""
    if op == 0:
        return _qr_lapack(a, vec, mat, s)
    info = _eigh_lapack(a, vec, mat, s) if op == 1 else _svd_lapack(a, vec, mat, s)
    if info != 0:
        vec[s] = np.nan
        mat[s] = np.nan
        if op == 2:
            a[s] = np.nan
    return info


@twins(lambda op, a, vec, mat: a.shape[0] == 1 or serial(a.size * a.shape[2]))
@njit(cache=True, parallel=prange_only())
def _lapack_decompose(op, a, vec, mat):
    """_decompose on each matrix, OpenBLAS on one thread (as gemm_blas, linalg.py, and for the
    same reason: its threads fight Numba's spinning OpenMP ones, which made 256^2 QR, eigh and
    svd several times slower on 2 cores), the matrices of a stack split over Numba's threads."""
    t, m, n = a.shape
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    if t == 1 or serial(t * m * n * n):
        for s in range(t):
            _decompose(op, a, vec, mat, s)
    else:
        for s in prange(t):
            _decompose(op, a, vec, mat, s)
    blas.set_num_threads(threads)


@register_jitable
def _geqrf_complex(a, m, n, x, tau, work, lwork):
    if a.itemsize == 8:
        return blas.cgeqrf(blas.COL_MAJOR, m, n, x, max(m, 1), tau, work, lwork)
    return blas.zgeqrf(blas.COL_MAJOR, m, n, x, max(m, 1), tau, work, lwork)


@register_jitable
def _ungqr(a, m, k, r, x, tau, work, lwork):
    if a.itemsize == 8:
        return blas.cungqr(blas.COL_MAJOR, m, k, r, x, max(m, 1), tau, work, lwork)
    return blas.zungqr(blas.COL_MAJOR, m, k, r, x, max(m, 1), tau, work, lwork)


@njit(cache=True)
def _qr_complex(a, tau, q):
    """_qr_lapack's steps with LAPACK's complex geqrf and ungqr, for each matrix of a."""
    m, n = a.shape[1], a.shape[2]
    r, k = tau.shape[1], q.shape[2]
    w = np.empty((n, m), a.dtype)  # A column-major
    qc = np.zeros((k, m), a.dtype)  # Q column-major
    query = np.zeros(2, a.dtype)
    _geqrf_complex(a, m, n, w.ctypes.data, tau.ctypes.data, query.ctypes.data, -1)
    if k:
        _ungqr(a, m, k, r, qc.ctypes.data, tau.ctypes.data, query[1:].ctypes.data, -1)
    lwork = max(_size(query[:1].real), _size(query[1:].real))
    work = np.empty(lwork, a.dtype)
    for s in range(a.shape[0]):
        t = _at(tau, s, r)
        _transpose(a[s], w)
        _geqrf_complex(a, m, n, w.ctypes.data, t, work.ctypes.data, lwork)
        _transpose(w, a[s])
        if k:
            qc[:] = 0
            qc[:r] = w[:r]  # the reflectors: A's first r columns
            _ungqr(a, m, k, r, qc.ctypes.data, t, work.ctypes.data, lwork)
            _transpose(qc, q[s])


@narrow.in_float32
def qr(a, tau, q):
    """a (t, m, n) = its Householder QR in place (geqrf's form), tau (t, min(m, n)) out, q
    (t, m, k) out: Q's first k columns (k = 0 where Q is not wanted). Complex matrices by
    LAPACK's complex geqrf/ungqr, as torch's."""
    if a.dtype.kind == "c":
        if not blas.COMPLEX_QR:
            raise NotImplementedError("linalg.qr of complex matrices needs LAPACK's geqrf and "
                                      "ungqr, from the OpenBLAS NumPy's wheels ship; this NumPy "
                                      "has none")
        _qr_complex(a, tau, q)
    elif _lapack_for(a):
        _lapack_decompose(0, a, tau, q)
    else:
        _qr(a, tau, q)


@register_jitable
def _heevd(a, n, x, w, work, lwork, rwork, lrwork, iwork, liwork):
    if a.itemsize == 8:
        return blas.cheevd(blas.COL_MAJOR, ord("V"), ord("L"), n, x, max(n, 1), w, work, lwork,
                           rwork, lrwork, iwork, liwork)
    return blas.zheevd(blas.COL_MAJOR, ord("V"), ord("L"), n, x, max(n, 1), w, work, lwork,
                       rwork, lrwork, iwork, liwork)


@njit(cache=True)
def _eigh_complex(a, v, w):
    """heevd on each Hermitian matrix of a, as torch's CPU kernel; what it could not compute
    (NaN in the input) is NaN."""
    n = a.shape[1]
    x = np.empty((n, n), a.dtype)
    query, rquery, iquery = np.zeros(1, a.dtype), np.zeros(1, w.dtype), np.zeros(1, np.int64)
    _heevd(a, n, x.ctypes.data, w.ctypes.data, query.ctypes.data, -1, rquery.ctypes.data, -1,
           iquery.ctypes.data, -1)
    work = np.empty(_size(query.real), a.dtype)
    rwork = np.empty(_size(rquery), w.dtype)
    iwork = np.empty(max(iquery[0], 1), np.int64)
    for s in range(a.shape[0]):
        _column_major(a, s, x)
        info = _heevd(a, n, x.ctypes.data, w[s].ctypes.data, work.ctypes.data, work.size,
                      rwork.ctypes.data, rwork.size, iwork.ctypes.data, iwork.size)
        if info != 0:
            w[s] = np.nan
            v[s] = np.nan
        else:
            _transpose(x, v[s])


@narrow.in_float32
def eigh(a, v, w):
    """w (t, n) = the ascending eigenvalues of the symmetric (Hermitian) a (t, n, n;
    destroyed), v (t, n, n) their unit eigenvectors as columns."""
    if a.dtype.kind == "c":
        if not blas.HEEVD:
            raise NotImplementedError("linalg.eigh of complex matrices needs LAPACK's heevd, "
                                      "from the OpenBLAS NumPy's wheels ship; this NumPy has "
                                      "none")
        _eigh_complex(a, v, w)
    elif _lapack_for(a):
        _lapack_decompose(1, a, w, v)
    else:
        _eigh(a, v, w, float(np.finfo(a.dtype).eps))


@register_jitable
def _gesdd_complex(a, m, n, x, sv, u, vt, work, lwork, rwork, iwork):
    ld = max(m, 1)
    if a.itemsize == 8:
        return blas.cgesdd(blas.COL_MAJOR, ord("S"), m, n, x, ld, sv, u, ld, vt, ld, work, lwork,
                           rwork, iwork)
    return blas.zgesdd(blas.COL_MAJOR, ord("S"), m, n, x, ld, sv, u, ld, vt, ld, work, lwork,
                       rwork, iwork)


@njit(cache=True)
def _svd_complex(a, v, sv):
    """_svd_lapack's steps with LAPACK's complex gesdd: read column-major, matrix s is A^T =
    conj(V) S U^T, so LAPACK's V^H is U row-major and its U is V^H row-major."""
    t, m, n = a.shape
    u, vc = np.empty((m, n), a.dtype), np.empty((n, n), a.dtype)
    iwork = np.empty(max(8 * n, 1), np.int64)
    rwork = np.empty(max(1, n * max(5 * n + 7, 2 * m + 2 * n + 1)), sv.dtype)
    query = np.zeros(1, a.dtype)
    _gesdd_complex(a, n, m, a.ctypes.data, sv.ctypes.data, vc.ctypes.data, u.ctypes.data,
                   query.ctypes.data, -1, rwork.ctypes.data, iwork.ctypes.data)
    work = np.empty(_size(query.real), a.dtype)
    for s in range(t):
        info = _gesdd_complex(a, n, m, _at(a, s, m * n), _at(sv, s, n), vc.ctypes.data,
                              u.ctypes.data, work.ctypes.data, work.size, rwork.ctypes.data,
                              iwork.ctypes.data)
        if info != 0:  # (NaN in the input: NaN out, as the real kernels leave it)
            a[s] = np.nan
            v[s] = np.nan
            sv[s] = np.nan
            continue
        a[s] = u
        _transpose(vc, v[s])
        v[s] = np.conj(v[s])


@narrow.in_float32
def svd(a, v, s):
    """s (t, n) = the descending singular values of a (t, m, n), m >= n; a = the left singular
    vectors (LAPACK's complete them where s is 0; the scalar kernels leave zero columns), v
    (t, n, n) the right ones, as columns. Complex matrices by LAPACK's complex gesdd."""
    if a.dtype.kind == "c":
        if not blas.COMPLEX_SVD:
            raise NotImplementedError("linalg.svd of complex matrices needs LAPACK's gesdd, from "
                                      "the OpenBLAS NumPy's wheels ship; this NumPy has none")
        _svd_complex(a, v, s)
    elif _lapack_for(a):
        _lapack_decompose(2, a, s, v)
    else:
        _svd(a, v, s, float(np.finfo(a.dtype).eps))


# -- the general eigenproblem: LAPACK's geev, as torch's CPU kernel -----------------------------
@register_jitable
def _column_major(a, s, x):
    """x (n, n) = matrix s of a, transposed: x's memory is the matrix column-major."""
    n = a.shape[1]
    for i in range(n):
        for j in range(n):
            x[j, i] = a[s, i, j]


@register_jitable
def _geev_real(a, job, n, x, wr, wi, vr, work, lwork):
    ld = max(n, 1)
    if a.itemsize == 4:
        return blas.sgeev(blas.COL_MAJOR, ord("N"), job, n, x, ld, wr, wi, 0, 1, vr, ld, work,
                          lwork)
    return blas.dgeev(blas.COL_MAJOR, ord("N"), job, n, x, ld, wr, wi, 0, 1, vr, ld, work,
                      lwork)


@register_jitable
def _geev_complex(a, job, n, x, ws, vr, work, lwork, rwork):
    ld = max(n, 1)
    if a.itemsize == 8:
        return blas.cgeev(blas.COL_MAJOR, ord("N"), job, n, x, ld, ws, 0, 1, vr, ld, work, lwork,
                          rwork)
    return blas.zgeev(blas.COL_MAJOR, ord("N"), job, n, x, ld, ws, 0, 1, vr, ld, work, lwork,
                      rwork)


@njit(cache=True)
def _eig_real(a, w, v, vectors):
    n = a.shape[1]
    job = ord("V") if vectors else ord("N")
    x, vr = np.empty((n, n), a.dtype), np.empty((n, n), a.dtype)
    wr, wi, query = np.empty(n, a.dtype), np.empty(n, a.dtype), np.zeros(1, a.dtype)
    _geev_real(a, job, n, x.ctypes.data, wr.ctypes.data, wi.ctypes.data, vr.ctypes.data,
               query.ctypes.data, -1)
    work = np.empty(_size(query), a.dtype)
    for s in range(a.shape[0]):
        _column_major(a, s, x)
        info = _geev_real(a, job, n, x.ctypes.data, wr.ctypes.data, wi.ctypes.data,
                          vr.ctypes.data, work.ctypes.data, work.size)
        if info != 0:
            return info
        for j in range(n):
            w[s, j] = wr[j] + 1j * wi[j]
        j = 0
        while vectors and j < n:  # vr's row j is column j; a pair's is re, im in j, j + 1
            if wi[j] == 0:
                for i in range(n):
                    v[s, i, j] = vr[j, i]
                j += 1
            else:
                for i in range(n):
                    v[s, i, j] = vr[j, i] + 1j * vr[j + 1, i]
                    v[s, i, j + 1] = vr[j, i] - 1j * vr[j + 1, i]
                j += 2
    return 0


@njit(cache=True)
def _eig_complex(a, w, v, vectors):
    n = a.shape[1]
    job = ord("V") if vectors else ord("N")
    x, vr = np.empty((n, n), a.dtype), np.empty((n, n), a.dtype)
    ws, query = np.empty(n, a.dtype), np.zeros(1, a.dtype)
    rwork = np.empty(max(2 * n, 1), np.float64)  # (2n reals: room for cgeev's float32 too)
    _geev_complex(a, job, n, x.ctypes.data, ws.ctypes.data, vr.ctypes.data, query.ctypes.data,
                  -1, rwork.ctypes.data)
    work = np.empty(_size(query.real), a.dtype)
    for s in range(a.shape[0]):
        _column_major(a, s, x)
        info = _geev_complex(a, job, n, x.ctypes.data, ws.ctypes.data, vr.ctypes.data,
                             work.ctypes.data, work.size, rwork.ctypes.data)
        if info != 0:
            return info
        w[s] = ws
        if vectors:
            _transpose(vr, v[s])
    return 0


def eig(a, w, v):
    """w (t, n) = the eigenvalues of each matrix of a (t, n, n), complex; v (t, n, n) their
    unit eigenvectors as columns, each with its largest component real (LAPACK's geev), or
    None for the eigenvalues alone. Returns LAPACK's info: 0, or > 0 where the QR algorithm
    did not converge."""
    if not blas.GEEV:
        raise NotImplementedError("linalg.eig needs LAPACK's geev, from the OpenBLAS NumPy's "
                                  "wheels ship; this NumPy has none")
    kernel = _eig_complex if a.dtype.kind == "c" else _eig_real
    return kernel(a, w, w[:, :, None] if v is None else v, v is not None)
