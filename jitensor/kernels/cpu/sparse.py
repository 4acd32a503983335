"""CPU kernel of sparse COO x dense products (`ops/sparse.py`): the sparse operand arrives as
CSR, its coalesced entries sorted by row, `crow[r]:crow[r + 1]` being row r's. One output row
is one task, summed in the entries' order, so the bits are the same at any thread count."""
from numba import njit, prange
from numba.extending import register_jitable

from .kernels import prange_only, serial, twins


@register_jitable
def _row(out, crow, col, val, dense, r):
    n = out.shape[1]
    for j in range(n):
        out[r, j] = 0
    for k in range(crow[r], crow[r + 1]):
        v, c = val[k], col[k]
        for j in range(n):
            out[r, j] += v * dense[c, j]


@twins(lambda out, crow, col, val, dense: serial(col.size * out.shape[1]))
@njit(cache=True, parallel=prange_only())
def spmm(out, crow, col, val, dense):
    """out (m, n) = the CSR matrix (crow, col, val) @ dense (k, n); out and dense C-contiguous,
    of val's dtype."""
    if serial(col.size * out.shape[1]):
        for r in range(out.shape[0]):
            _row(out, crow, col, val, dense, r)
    else:
        for r in prange(out.shape[0]):
            _row(out, crow, col, val, dense, r)
