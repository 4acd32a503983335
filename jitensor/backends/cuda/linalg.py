"""CUDA matrix products: one thread per output element, the k loop reading both operands
through their strides (any layout, every dtype, products accumulated in the result dtype as
torch does; float16 accumulates in float32).

This is the correct general kernel, not yet the fast one: shared-memory and register tiling
(../shared/ANCHORS.md: 4x4 register tiles reached 13 TFLOP/s on the H200, cuBLAS 48-51) are
the next step for float32."""
import numpy as np
from numba import cuda

from . import driver
from .access import load, store
from .memory import pointer, strides


@driver.jit
def matmul_kernel(o, oo, nmat, m, n, kk, a, ao, a0, a1, a2, b, bo, b0, b1, b2, ia, iao, ib,
                  ibo, zero):
    """o[t, i, j] = sum_p a[ia[t], i, p] * b[ib[t], p, j], o dense (nmat, m, n)."""
    e = cuda.grid(1)
    while e < nmat * m * n:
        t = e // (m * n)
        i = e // n % m
        j = e % n
        pa = ao + load(ia, iao + t) * a0 + i * a1
        pb = bo + load(ib, ibo + t) * b0 + j * b2
        acc = zero
        for p in range(kk):
            acc += load(a, pa + p * a2) * load(b, pb + p * b1)
        store(o, oo + e, acc)
        e += cuda.gridsize(1)


@driver.jit
def outer_kernel(o, oo, m, n, a, ao, sa, b, bo, sb):
    e = cuda.grid(1)
    while e < m * n:
        store(o, oo + e, load(a, ao + e // n * sa) * load(b, bo + e % n * sb))
        e += cuda.gridsize(1)


def _zero(dtype):
    return np.float32(0) if dtype == np.float16 else np.zeros((), dtype)[()]


def matmul(out, a, b, ia, ib):
    """out[t] = a[ia[t]] @ b[ib[t]] (see the CPU backend); ia, ib are host int64 arrays."""
    if not out.size:
        return
    from . import from_numpy
    nmat, m, n = out.shape
    dia, dib = from_numpy(np.asarray(ia, np.int64)), from_numpy(np.asarray(ib, np.int64))
    driver.launch_1d(matmul_kernel, out.size, *pointer(out), nmat, m, n, a.shape[2],
                     *pointer(a), *strides(a), *pointer(b), *strides(b), *pointer(dia),
                     *pointer(dib), _zero(out.dtype))


def outer(out, a, b):
    if out.size:
        m, n = out.shape
        driver.launch_1d(outer_kernel, out.size, *pointer(out), m, n, *pointer(a), *strides(a),
                         *pointer(b), *strides(b))
