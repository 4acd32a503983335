"""CUDA matrix products.

float32: each block of 16x16 threads computes a 128x128 tile of the output, each thread an 8x8
register tile: 4 adjacent rows (columns) in each half of the tile, read from shared memory in
128-bit loads (see _lane). The k dimension goes in steps of 8
through shared memory, double buffered: the next step's tile is fetched from global memory into
registers while the current one is multiplied, so one barrier per step suffices.
Every other dtype: one thread per output element, the k loop reading both operands through
their strides, accumulating in the result dtype as torch does (float16 in float32)."""
import numpy as np
from numba import cuda, float32
from numba.extending import register_jitable

from . import driver
from .access import load, load4, store
from .memory import pointer, strides

# Tile shapes: threads per block side, outputs per thread side, k per step. The simulator
# runs one Python thread per GPU thread: it runs the same kernel on small tiles.
SIDE, REG, STEP = (2, 2, 4) if driver.SIM else (16, 8, 8)
ALIGN = None if driver.SIM else 16  # 128-bit shared loads (the simulator takes no alignment)
TILE = SIDE * REG  # output rows (and columns) per block
LOADS = TILE * STEP // (SIDE * SIDE)  # tile elements each thread loads per operand and step
A_ROWS, B_ROWS = SIDE * SIDE // STEP, SIDE * SIDE // TILE  # rows between a thread's loads


@register_jitable
def _lane(x, t):
    """The tile row (or column) of thread t's x-th output row (column): REG // 2 adjacent ones
    in each half of the tile, so a thread's fragment reads of shared memory are 128-bit loads
    (a warp's conflict-free: each 8 threads read 128 adjacent bytes)."""
    return (x // (REG // 2)) * (TILE // 2) + t * (REG // 2) + x % (REG // 2)


@register_jitable
def _fetch(ra, rb, a, pa, da, b, pb, db, rows_a, k_a, k_b, in_b):
    """This thread's share of one step: LOADS elements of a's tile from pa, da apart (rows_a of
    them inside the matrix, and none if k_a <= 0), and of b's from pb, db apart (k_b inside;
    none unless in_b), into registers, zeros outside the matrices. Consecutive threads read
    consecutive k of a and consecutive columns of b."""
    for q in range(LOADS):
        ra[q] = load(a, pa + q * da) if q * A_ROWS < rows_a and k_a > 0 else float32(0)
        rb[q] = load(b, pb + q * db) if q * B_ROWS < k_b and in_b else float32(0)


@register_jitable
def _stash(sa, sb, buf, ra, rb, tid):
    """Registers from _fetch into shared buffer `buf`; a's tile k-major, as b's is."""
    for q in range(LOADS):
        e = tid + q * SIDE * SIDE
        sa[buf, e % STEP, e // STEP] = ra[q]
        sb[buf, e // TILE, e % TILE] = rb[q]


@driver.jit
def matmul_f32(o, oo, m, n, kk, a, ao, a0, a1, a2, b, bo, b0, b1, b2, ia, iao, ib, ibo):
    """o[t] = a[ia[t]] @ b[ib[t]] for t = blockIdx.z, o dense (nmat, m, n), float32."""
    sa = cuda.shared.array((2, STEP, TILE), float32, alignment=ALIGN)
    sb = cuda.shared.array((2, STEP, TILE), float32, alignment=ALIGN)
    acc = cuda.local.array((REG, REG), float32)  # constant indices after unrolling: registers
    fa = cuda.local.array(REG, float32)
    fb = cuda.local.array(REG, float32)
    ra = cuda.local.array(LOADS, float32)
    rb = cuda.local.array(LOADS, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = cuda.blockIdx.z
    row0, col0 = cuda.blockIdx.y * TILE, cuda.blockIdx.x * TILE
    tid = ty * SIDE + tx
    # this thread's first element of each tile: a at (row ai, k ak), b at (k bk, column bj);
    # its later loads are A_ROWS rows of a and B_ROWS rows of b further on
    ai, ak, bk, bj = row0 + tid // STEP, tid % STEP, tid // TILE, col0 + tid % TILE
    pa = ao + load(ia, iao + t) * a0 + ai * a1 + ak * a2
    pb = bo + load(ib, ibo + t) * b0 + bk * b1 + bj * b2
    da, db = A_ROWS * a1, B_ROWS * b1
    for x in range(REG):
        for y in range(REG):
            acc[x, y] = 0
    _fetch(ra, rb, a, pa, da, b, pb, db, m - ai, kk - ak, kk - bk, bj < n)
    _stash(sa, sb, 0, ra, rb, tid)
    cuda.syncthreads()
    buf = 0
    for k0 in range(0, kk, STEP):
        more = k0 + STEP < kk
        if more:  # the next step's loads are in flight while this one computes
            pa += STEP * a2
            pb += STEP * b1
            k1 = k0 + STEP
            _fetch(ra, rb, a, pa, da, b, pb, db, m - ai, kk - k1 - ak, kk - k1 - bk, bj < n)
        for p in range(STEP):
            if REG % 8 == 0:  # 128-bit reads of 4 adjacent rows (columns)
                for h in range(REG // 4):
                    ga = load4(sa, ((buf * STEP + p) * TILE + _lane(4 * h, ty)) // 4)
                    gb = load4(sb, ((buf * STEP + p) * TILE + _lane(4 * h, tx)) // 4)
                    for q in range(4):
                        fa[4 * h + q] = ga[q]
                        fb[4 * h + q] = gb[q]
            else:  # the simulator's small tiles
                for x in range(REG):
                    fa[x] = sa[buf, p, _lane(x, ty)]
                    fb[x] = sb[buf, p, _lane(x, tx)]
            for x in range(REG):
                for y in range(REG):
                    acc[x, y] += fa[x] * fb[y]
        if more:  # the other buffer: its last readers passed the previous step's barrier
            _stash(sa, sb, 1 - buf, ra, rb, tid)
        cuda.syncthreads()
        buf = 1 - buf
    for x in range(REG):
        i = row0 + _lane(x, ty)
        for y in range(REG):
            j = col0 + _lane(y, tx)
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


_maps = {}  # the bytes of a small index map -> its device copy, kept (kernels only read it)
MAPS, MAP_SIZE = 256, 64  # how many are kept, and up to how many entries each


def _device_map(index):
    """The int64 host index map `index` on the device. Small ones (most are [0]: a single
    product) are copied once and kept, sparing each product its host-to-device copies."""
    key = index.tobytes() if index.size <= MAP_SIZE else None
    found = _maps.get(key)
    if found is None:
        from . import from_numpy, streams
        found = from_numpy(index)
        # kept ones are never evicted: kernels on any stream may still be reading them
        if key is not None and len(_maps) < MAPS:
            streams.current().sync()  # the copy is done before another stream reads it
            _maps[key] = found
    return found


def matmul(out, a, b, ia, ib, bias=None):
    """out[t] = a[ia[t]] @ b[ib[t]] (see the CPU backend); ia, ib are host int64 arrays. Adds
    no `bias`: returns False, and the caller adds it."""
    if not out.size:
        return False
    nmat, m, n = out.shape
    dia, dib = _device_map(np.asarray(ia, np.int64)), _device_map(np.asarray(ib, np.int64))
    if out.dtype == np.float32:
        grid = (-(-n // TILE), -(-m // TILE), nmat)
        driver.launch(matmul_f32, grid, (SIDE, SIDE), *pointer(out), m, n, a.shape[2],
                      *pointer(a), *strides(a), *pointer(b), *strides(b), *pointer(dia),
                      *pointer(dib))
        return False
    driver.launch_1d(matmul_kernel, out.size, *pointer(out), nmat, m, n, a.shape[2],
                     *pointer(a), *strides(a), *pointer(b), *strides(b), *pointer(dia),
                     *pointer(dib), _zero(out.dtype))
    return False


def outer(out, a, b):
    if out.size:
        m, n = out.shape
        driver.launch_1d(outer_kernel, out.size, *pointer(out), m, n, *pointer(a), *strides(a),
                         *pointer(b), *strides(b))
