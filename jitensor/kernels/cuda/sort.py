"""CUDA sorting: a bitonic network over each row, padded to a power of two, under the shared
order (kernels/scalar/sort.py). Every step is one launch over all rows' elements in global
memory, log2(p) * (log2(p) + 1) / 2 launches for rows padded to p. Padding slots hold
positions >= n and sort after every real element by position alone (their values, never
initialised, move with them but decide nothing)."""
import numpy as np
from numba import cuda

from ..scalar.sort import precedes, search
from . import driver
from .access import load, store
from .memory import pointer


@driver.jit
def _positions(idx, io, m, p):
    t = cuda.grid(1)
    while t < m:
        store(idx, io + t, t % p)
        t += cuda.gridsize(1)


@driver.jit
def _bitonic_step(keys, ko, idx, io, m, p, n, j, k, descending):
    """One compare-and-swap step of the network: element i against i ^ j of its row, toward
    ascending order of the network where i & k is 0."""
    t = cuda.grid(1)
    while t < m:
        i = t % p
        other = i ^ j
        if other > i:
            a, b = load(idx, io + t), load(idx, io + t - i + other)
            va, vb = load(keys, ko + t), load(keys, ko + t - i + other)
            first = a < b if a >= n or b >= n else precedes(va, a, vb, b, descending)
            if first != ((i & k) == 0):
                store(keys, ko + t, vb)
                store(keys, ko + t - i + other, va)
                store(idx, io + t, b)
                store(idx, io + t - i + other, a)
        t += cuda.gridsize(1)


def sort_rows(values, indices, src, descending):
    """values[r] = src[r] sorted, indices[r] = the positions they came from (see the CPU's)."""
    from . import copy, empty
    rows, n = src.shape
    p = 1 << max(n - 1, 0).bit_length()
    keys, idx = empty((rows, p), src.dtype), empty((rows, p), np.int64)
    copy(keys[:, :n], src)
    m = rows * p
    driver.launch_1d(_positions, m, *pointer(idx), m, p)
    k = 2
    while k <= p:
        j = k // 2
        while j:
            driver.launch_1d(_bitonic_step, m, *pointer(keys), *pointer(idx), m, p, n, j, k,
                             bool(descending))
            j //= 2
        k *= 2
    copy(values, keys[:, :n])
    copy(indices, idx[:, :n])


def topk_rows(values, indices, src, descending):
    """The first k = values.shape[1] of each row of src in sorted order: the whole sort."""
    from . import copy, empty
    full, at = empty(src.shape, src.dtype), empty(src.shape, np.int64)
    sort_rows(full, at, src, descending)
    k = values.shape[1]
    copy(values, full[:, :k])
    copy(indices, at[:, :k])


@driver.jit
def _search(out, oo, seq, so, order, po, sorted_, values, vo, total, m, n, right):
    t = cuda.grid(1)
    while t < total:
        r = t // m
        store(out, oo + t, search(seq, so + r * n, n, order, po + r * n, sorted_,
                                  load(values, vo + t), right))
        t += cuda.gridsize(1)


def searchsorted(out, seq, order, values, right):
    """See the CPU's: a thread per value."""
    from . import empty
    n, (total, m) = seq.shape[1], (values.size, values.shape[1])
    sorted_ = order is None
    order = empty((1,), np.int64) if sorted_ else order
    driver.launch_1d(_search, total, *pointer(out), *pointer(seq), *pointer(order), sorted_,
                     *pointer(values), total, m, n, bool(right))
