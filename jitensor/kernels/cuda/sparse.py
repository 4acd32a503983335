"""CUDA side of sparse COO tensors (`ops/sparse.py`; see the CPU's). Sorting the entries and
finding their runs is index metadata whose size the data decides, so it is done on the host,
as `indexing.flatnonzero` does; the values' sums and sparse @ dense are kernels, one thread
per output element summing in the entries' order."""
import numpy as np
from numba import cuda

from . import driver
from .access import load, store
from .memory import pointer


def _host(buf):
    from . import to_numpy
    return to_numpy(buf)


def _device(array):
    from . import from_numpy
    return from_numpy(np.ascontiguousarray(array, np.int64))


def index_bounds(idx):
    host = _host(idx)
    return host.min(1), host.max(1)


def coalesce_order(idx, sizes):
    host = _host(idx)
    keys = np.zeros(host.shape[1], np.int64)
    for d, n in enumerate(sizes):
        keys = keys * n + host[d]
    order = np.argsort(keys, kind="stable")
    new = np.ones(keys.size, bool)  # where a position's run starts
    new[1:] = keys[order][1:] != keys[order][:-1]
    first = np.flatnonzero(new)
    inverse = np.empty_like(order)
    inverse[order] = np.cumsum(new) - 1
    return (_device(order), _device(np.append(first, keys.size)),
            _device(host[:, order[first]]), _device(inverse))


def row_starts(rows, m):
    return _device(np.searchsorted(_host(rows), np.arange(m + 1)))


@driver.jit
def _segment_sum(out, oo, vals, vo, order, ro, starts, so, runs, d):
    t = cuda.grid(1)
    while t < runs * d:
        u, j = t // d, t % d
        first = load(starts, so + u)
        acc = load(vals, vo + load(order, ro + first) * d + j)
        for k in range(first + 1, load(starts, so + u + 1)):
            acc += load(vals, vo + load(order, ro + k) * d + j)
        store(out, oo + t, acc)
        t += cuda.gridsize(1)


def segment_sum(out, vals, order, starts):
    runs, d = out.shape
    if runs * d:
        driver.launch_1d(_segment_sum, runs * d, *pointer(out), *pointer(vals), *pointer(order),
                         *pointer(starts), runs, d)


@driver.jit
def _spmm(out, oo, crow, co, col, cc, val, vo, dense, do, m, n, zero):
    t = cuda.grid(1)
    while t < m * n:
        r = t // n
        acc = zero
        for k in range(load(crow, co + r), load(crow, co + r + 1)):
            acc += load(val, vo + k) * load(dense, do + load(col, cc + k) * n + t % n)
        store(out, oo + t, acc)
        t += cuda.gridsize(1)


def spmm(out, crow, col, val, dense):
    """out (m, n) = the CSR matrix (crow, col, val) @ dense (k, n); out and dense C-contiguous,
    of val's dtype."""
    m, n = out.shape
    if m * n:
        driver.launch_1d(_spmm, m * n, *pointer(out), *pointer(crow), *pointer(col),
                         *pointer(val), *pointer(dense), m, n, out.dtype.type(0))
