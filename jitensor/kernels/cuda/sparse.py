"""CUDA kernel of sparse COO x dense products (`ops/sparse.py`), the sparse operand as CSR (see
the CPU's): one thread per output element, summing its row's entries in their order."""
from numba import cuda

from . import driver
from .access import load, store
from .memory import pointer


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
