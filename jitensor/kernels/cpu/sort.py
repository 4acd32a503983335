"""CPU sorting: each row's (value, position) pairs merge-sorted under the shared order
(kernels/scalar/sort.py), rows in parallel: runs of RUN by insertion, then bottom-up merges
that move the pairs themselves (sorting positions and reading values through them ran slower:
every comparison was an indirect load). topk of up to SELECT elements keeps the best k of each
row in order as it reads the row instead of sorting it all (as fast as torch's)."""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..scalar.sort import precedes, search
from .kernels import prange_only, serial, twins

RUN = 16
SELECT = 64  # topk's selection inserts each better element: O(n k) at worst


@register_jitable
def _merge_sort(keys, order, keys2, order2, descending):
    """Sort the pairs (keys[i], order[i]); returns the arrays holding the result (the inputs
    or the two work arrays)."""
    n = keys.size
    for lo in range(0, n, RUN):  # insertion sort of each run
        for i in range(lo + 1, min(lo + RUN, n)):
            key, pos = keys[i], order[i]
            j = i
            while j > lo and precedes(key, pos, keys[j - 1], order[j - 1], descending):
                keys[j], order[j] = keys[j - 1], order[j - 1]
                j -= 1
            keys[j], order[j] = key, pos
    width = RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                if j < hi and (i == mid or precedes(keys[j], order[j], keys[i], order[i],
                                                    descending)):
                    keys2[k], order2[k] = keys[j], order[j]
                    j += 1
                else:
                    keys2[k], order2[k] = keys[i], order[i]
                    i += 1
        keys, keys2, order, order2 = keys2, keys, order2, order
        width *= 2
    return keys, order


@register_jitable
def _sort_row(values, indices, src, r, descending):
    n = src.shape[1]
    keys, order = _merge_sort(src[r].copy(), np.arange(n), np.empty(n, src.dtype),
                              np.empty(n, np.int64), descending)
    values[r] = keys
    indices[r] = order


@register_jitable
def _select_row(values, indices, src, r, descending):
    """values[r], indices[r] = the best k = values.shape[1] of src[r] and their positions."""
    row, best, at = src[r], values[r], indices[r]
    k = best.size
    m = 0  # how many of best hold elements
    for i in range(row.size):
        v = row[i]
        if m == k and not precedes(v, i, best[k - 1], at[k - 1], descending):
            continue
        j = m if m < k else k - 1
        m = min(m + 1, k)
        while j > 0 and precedes(v, i, best[j - 1], at[j - 1], descending):
            best[j], at[j] = best[j - 1], at[j - 1]
            j -= 1
        best[j], at[j] = v, i


@register_jitable
def _row(values, indices, src, r, descending, select):
    if select:
        _select_row(values, indices, src, r, descending)
    else:
        _sort_row(values, indices, src, r, descending)


@twins(lambda values, indices, src, *args: serial(src.size))
@njit(cache=True, parallel=prange_only())
def rows_kernel(values, indices, src, descending, select):
    """Each row r of src, sorted (or its best values.shape[1] selected, with `select`) into
    values[r] and the positions they came from into indices[r]."""
    if serial(src.size):
        for r in range(src.shape[0]):
            _row(values, indices, src, r, descending, select)
    else:
        for r in prange(src.shape[0]):
            _row(values, indices, src, r, descending, select)


def sort_rows(values, indices, src, descending):
    """values[r] = src[r] sorted, indices[r] = the positions they came from; all (rows, n),
    src and the outputs C-contiguous."""
    rows_kernel(values, indices, src, descending, False)


def topk_rows(values, indices, src, descending):
    """The first k = values.shape[1] of each row of src in sorted order (see sort_rows)."""
    k = values.shape[1]
    if k <= SELECT:
        rows_kernel(values, indices, src, descending, True)
        return
    full, at = np.empty(src.shape, src.dtype), np.empty(src.shape, np.int64)
    sort_rows(full, at, src, descending)
    values[...], indices[...] = full[:, :k], at[:, :k]


_NO_ORDER = np.zeros(1, np.int64)


@register_jitable
def _search_at(out, seq, order, sorted_, values, right, i, m, n):
    r = i // m
    out[i] = search(seq, r * n, n, order, r * n, sorted_, values[i], right)


@twins(lambda out, seq, order, sorted_, values, right: serial(values.size * 16))
@njit(cache=True, parallel=prange_only())
def _search_rows(out, seq, order, sorted_, values, right):
    n, m = seq.shape[1], values.shape[1]
    flat_out, flat_seq, flat_values = out.reshape(-1), seq.reshape(-1), values.reshape(-1)
    flat_order = order.reshape(-1)
    if serial(flat_values.size * 16):  # (a search: some 16 probes, each a load and a compare)
        for i in range(flat_values.size):
            _search_at(flat_out, flat_seq, flat_order, sorted_, flat_values, right, i, m, n)
    else:
        for i in prange(flat_values.size):
            _search_at(flat_out, flat_seq, flat_order, sorted_, flat_values, right, i, m, n)


def searchsorted(out, seq, order, values, right):
    """out[r, j] (int64) = where values[r, j] goes into row r of seq (r, n), read through the
    positions `order` (int64 (r, n)) unless it is None; all C-contiguous."""
    _search_rows(out, seq, _NO_ORDER if order is None else order, order is None, values,
                 bool(right))
