"""CPU kernels of sparse COO tensors (`ops/sparse.py`).

`coalesce_order` sorts the entries by C-order position (a stable merge sort, so entries at
one position keep their order) and finds each position's run; `segment_sum` adds each run's
values in that order. sparse @ dense (`spmm`) takes the matrix as CSR, its coalesced entries
sorted by row, `crow[r]:crow[r + 1]` being row r's. The parallel kernels run one output row
per task, summed in the entries' order, so the bits are the same at any thread count; the
index kernels are int64 only (one compile each)."""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from .kernels import prange_only, serial, twins


@njit(cache=True)
def index_bounds(idx):
    """(each sparse dim's smallest index, its largest) of indices (sparse_dim, nnz), nnz > 0."""
    lo, hi = idx[:, 0].copy(), idx[:, 0].copy()
    for d in range(idx.shape[0]):
        for k in range(idx.shape[1]):
            lo[d] = min(lo[d], idx[d, k])
            hi[d] = max(hi[d], idx[d, k])
    return lo, hi


@njit(cache=True)
def coalesce_order(idx, sizes):
    """(order, starts, unique, inverse) of indices (sparse_dim, nnz) in a tensor of `sizes`:
    the stable order that sorts the entries by position, where each position's run starts in
    it (and nnz last), the runs' indices, and each entry's run."""
    sd, nnz = idx.shape
    keys = np.zeros(nnz, np.int64)
    for k in range(nnz):
        key = 0
        for d in range(sd):
            key = key * sizes[d] + idx[d, k]
        keys[k] = key
    order = np.argsort(keys, kind="mergesort")
    starts = np.empty(nnz + 1, np.int64)
    inverse = np.empty(nnz, np.int64)
    u = 0
    for k in range(nnz):
        if k == 0 or keys[order[k]] != keys[order[k - 1]]:
            starts[u] = k
            u += 1
        inverse[order[k]] = u - 1
    starts[u] = nnz
    unique = np.empty((sd, u), np.int64)
    for r in range(u):
        for d in range(sd):
            unique[d, r] = idx[d, order[starts[r]]]
    return order, starts[:u + 1].copy(), unique, inverse


@njit(cache=True)
def row_starts(rows, m):
    """crow (m + 1) of sorted row indices: row r's entries are crow[r]:crow[r + 1]."""
    crow = np.zeros(m + 1, np.int64)
    for k in range(rows.size):
        crow[rows[k] + 1] += 1
    for r in range(m):
        crow[r + 1] += crow[r]
    return crow


@register_jitable
def _segment(out, vals, order, starts, u):
    first = order[starts[u]]
    for j in range(out.shape[1]):
        out[u, j] = vals[first, j]
    for k in range(starts[u] + 1, starts[u + 1]):
        e = order[k]
        for j in range(out.shape[1]):
            out[u, j] += vals[e, j]


@twins(lambda out, vals, order, starts: serial(vals.size))
@njit(cache=True, parallel=prange_only())
def segment_sum(out, vals, order, starts):
    """out[u] = vals[order[k]] summed for k in starts[u]:starts[u + 1], in that order; out
    (runs, d) and vals (nnz, d) C-contiguous, of one dtype."""
    if serial(vals.size):
        for u in range(out.shape[0]):
            _segment(out, vals, order, starts, u)
    else:
        for u in prange(out.shape[0]):
            _segment(out, vals, order, starts, u)


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
