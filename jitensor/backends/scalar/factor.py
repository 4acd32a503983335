"""LU and Cholesky factorisations of one dense matrix and the triangular solves that use them,
shared by the CPU kernels (a matrix per task) and the CUDA ones (a matrix per thread).

A matrix is n x n (m x n for `lu`), row-major, at a[o:]; right-hand sides are n x k,
row-major, at b[bo:]. The
conventions are LAPACK's (getrf, potrf, trtrs), which torch returns: after `lu`, the strict
lower triangle holds L's multipliers (L's diagonal is 1) and the upper triangle U, piv[po + i]
is the 1-based row that row i was swapped with at step i, and the result ("info") is 0, or the
1-based index of the first zero pivot (the factorisation still completes: such a U is
singular). Rows are scanned in order, so the inner loops run along rows: unit stride."""
from numba.extending import register_jitable

from . import libm


@register_jitable
def _swap_rows(a, o, width, i, j):
    for c in range(width):
        t = a[o + i * width + c]
        a[o + i * width + c] = a[o + j * width + c]
        a[o + j * width + c] = t


@register_jitable
def lu(a, o, m, n, piv, po):
    """a (m x n) = P L U in place by Gaussian elimination with partial pivoting (the largest
    magnitude in the column; the first of equals, as LAPACK's i?amax); min(m, n) pivots."""
    info = 0
    for k in range(min(m, n)):
        p = k
        best = abs(a[o + k * n + k])
        for i in range(k + 1, m):
            v = abs(a[o + i * n + k])
            if v > best:
                best = v
                p = i
        piv[po + k] = p + 1
        if p != k:
            _swap_rows(a, o, n, k, p)
        d = a[o + k * n + k]
        if d == 0:
            if info == 0:
                info = k + 1
            continue
        for i in range(k + 1, m):
            f = a[o + i * n + k] / d
            a[o + i * n + k] = f
            for j in range(k + 1, n):
                a[o + i * n + j] -= f * a[o + k * n + j]
    return info


@register_jitable
def permute(b, bo, n, k, piv, po):
    """B = P^T B: the row swaps of `lu`, in its order."""
    for i in range(n):
        p = piv[po + i] - 1
        if p != i:
            _swap_rows(b, bo, k, i, p)


@register_jitable
def triangular(a, o, n, b, bo, k, upper, unit):
    """B = T^-1 B in place, T the upper or lower triangle of a (its diagonal read as ones
    where `unit`) by substitution; a zero on the diagonal gives inf/nan, as LAPACK's trsm."""
    for step in range(n):
        i = n - 1 - step if upper else step
        lo, hi = (i + 1, n) if upper else (0, i)
        for r in range(lo, hi):
            f = a[o + i * n + r]
            for j in range(k):
                b[bo + i * k + j] -= f * b[bo + r * k + j]
        if not unit:
            d = a[o + i * n + i]
            for j in range(k):
                b[bo + i * k + j] /= d


@register_jitable
def lu_solve(a, o, n, piv, po, b, bo, k):
    """B = A^-1 B from A's `lu` factors."""
    permute(b, bo, n, k, piv, po)
    triangular(a, o, n, b, bo, k, False, True)
    triangular(a, o, n, b, bo, k, True, False)


@register_jitable
def cholesky(a, o, n):
    """a = L (lower, with the upper triangle zeroed) where a's lower triangle is that of a
    positive-definite A = L L^T; else 0 < the order of the first leading minor that is not
    positive-definite (a NaN counts as not), a left partly factored."""
    for j in range(n):
        s = a[o + j * n + j]
        for c in range(j):
            s -= a[o + j * n + c] * a[o + j * n + c]
        if not s > 0:
            return j + 1
        d = libm.sqrt(s)
        a[o + j * n + j] = d
        for i in range(j + 1, n):
            v = a[o + i * n + j]
            for c in range(j):
                v -= a[o + i * n + c] * a[o + j * n + c]
            a[o + i * n + j] = v / d
    for i in range(n):
        for j in range(i + 1, n):
            a[o + i * n + j] = 0
    return 0
