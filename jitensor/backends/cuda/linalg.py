"""CUDA matrix products.

float32: shared-memory tiles and 4x4 register tiles per thread (a 64x64 block of the output
per 16x16 threads; ../shared/ANCHORS.md measured this design at 13 TFLOP/s on the H200, where
cuBLAS reaches 48-51: 128-bit shared loads and double buffering are the known next steps).
Every other dtype: one thread per output element, the k loop reading both operands through
their strides, accumulating in the result dtype as torch does (float16 in float32)."""
import numpy as np
from numba import cuda, float32

from . import driver
from .access import load, store
from .memory import pointer, strides

# Tile shapes: threads per block side, outputs per thread side, k per step. The simulator runs
# one Python thread per GPU thread: it runs the same kernel on small tiles.
SIDE, REG, STEP = (2, 2, 4) if driver.SIM else (16, 4, 16)
TILE = SIDE * REG  # output rows (and columns) per block
LOADS = TILE * STEP // (SIDE * SIDE)  # tile elements each thread loads per operand and step


@driver.jit
def matmul_f32(o, oo, m, n, kk, a, ao, a0, a1, a2, b, bo, b0, b1, b2, ia, iao, ib, ibo):
    """o[t] = a[ia[t]] @ b[ib[t]] for t = blockIdx.z, o dense (nmat, m, n), float32."""
    sa = cuda.shared.array((STEP, TILE), float32)  # a's tile, k-major: rows read as a vector
    sb = cuda.shared.array((STEP, TILE), float32)
    acc = cuda.local.array((REG, REG), float32)
    ra = cuda.local.array(REG, float32)
    rb = cuda.local.array(REG, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = cuda.blockIdx.z
    row0, col0 = cuda.blockIdx.y * TILE, cuda.blockIdx.x * TILE
    pa = ao + load(ia, iao + t) * a0
    pb = bo + load(ib, ibo + t) * b0
    tid = ty * SIDE + tx
    for x in range(REG):
        for y in range(REG):
            acc[x, y] = 0
    for k0 in range(0, kk, STEP):
        for q in range(LOADS):  # consecutive threads read consecutive k of a, columns of b
            e = tid + q * SIDE * SIDE
            i, p = row0 + e // STEP, k0 + e % STEP
            sa[e % STEP, e // STEP] = load(a, pa + i * a1 + p * a2) if i < m and p < kk else 0
            p, j = k0 + e // TILE, col0 + e % TILE
            sb[e // TILE, e % TILE] = load(b, pb + p * b1 + j * b2) if p < kk and j < n else 0
        cuda.syncthreads()
        for p in range(STEP):
            for x in range(REG):
                ra[x] = sa[p, ty * REG + x]
                rb[x] = sb[p, tx * REG + x]
            for x in range(REG):
                for y in range(REG):
                    acc[x, y] += ra[x] * rb[y]
        cuda.syncthreads()
    for x in range(REG):
        i = row0 + ty * REG + x
        for y in range(REG):
            j = col0 + tx * REG + y
            if i < m and j < n:
                store(o, oo + (t * m + i) * n + j, acc[x, y])


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
    if out.dtype == np.float32:
        grid = (-(-n // TILE), -(-m // TILE), nmat)
        driver.launch(matmul_f32, grid, (SIDE, SIDE), *pointer(out), m, n, a.shape[2],
                      *pointer(a), *strides(a), *pointer(b), *strides(b), *pointer(dia),
                      *pointer(dib))
        return
    driver.launch_1d(matmul_kernel, out.size, *pointer(out), nmat, m, n, a.shape[2],
                     *pointer(a), *strides(a), *pointer(b), *strides(b), *pointer(dia),
                     *pointer(dib), _zero(out.dtype))


def outer(out, a, b):
    if out.size:
        m, n = out.shape
        driver.launch_1d(outer_kernel, out.size, *pointer(out), m, n, *pointer(a), *strides(a),
                         *pointer(b), *strides(b))
