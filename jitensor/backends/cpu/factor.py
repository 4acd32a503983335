"""CPU kernels of the factorisations (formulas: backends/scalar/factor.py) over stacks of
matrices: `a` (t, n, n) and `b` (t, n, k) C-contiguous, a matrix per task of Numba's threads,
in place. The ops hand over C-contiguous copies of their own, so one signature serves a dtype.
error_model="numpy": a division by a zero pivot gives inf/NaN, as in LAPACK (the ops raise or
report it through info), where Numba's default would raise ZeroDivisionError."""
from numba import njit, prange

from ..scalar import factor as S
from .kernels import prange_only, serial


@njit(cache=True, parallel=prange_only(), error_model="numpy")
def lu(a, piv, info):
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


@njit(cache=True, parallel=prange_only(), error_model="numpy")
def lu_solve(a, piv, b):
    """b (t, n, k) = A^-1 b in place, from the LU factors a (t, n, n) and pivots piv."""
    t, n, k = b.shape
    a, piv, b = a.reshape(-1), piv.reshape(-1), b.reshape(-1)
    if serial(t * n * n * k):
        for m in range(t):
            S.lu_solve(a, m * n * n, n, piv, m * n, b, m * n * k, k)
    else:
        for m in prange(t):
            S.lu_solve(a, m * n * n, n, piv, m * n, b, m * n * k, k)


@njit(cache=True, parallel=prange_only(), error_model="numpy")
def triangular(a, b, upper, unit):
    """b (t, n, k) = T^-1 b in place, T a's upper or lower triangle (unit diagonal)."""
    t, n, k = b.shape
    a, b = a.reshape(-1), b.reshape(-1)
    if serial(t * n * n * k):
        for m in range(t):
            S.triangular(a, m * n * n, n, b, m * n * k, k, upper, unit)
    else:
        for m in prange(t):
            S.triangular(a, m * n * n, n, b, m * n * k, k, upper, unit)


@njit(cache=True, parallel=prange_only(), error_model="numpy")
def cholesky(a, info):
    """a (t, n, n) = its lower Cholesky factor in place; info (t,) int64 out."""
    t, n = a.shape[0], a.shape[1]
    a = a.reshape(-1)
    if serial(t * n * n * n):
        for m in range(t):
            info[m] = S.cholesky(a, m * n * n, n)
    else:
        for m in prange(t):
            info[m] = S.cholesky(a, m * n * n, n)

