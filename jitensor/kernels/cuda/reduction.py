"""CUDA reductions, softmax and cumsum: one block of threads per output row, as a rule.

The input is seen as M rows of K reduced elements (the reduced dims moved last; a copy only
when they cannot be viewed that way). Each thread folds its strided share of a row into a
state with the shared scalar definitions (`lift`/`merge`/`finalize` of
kernels/scalar/reduction.py: the same NaN, index-tie and compensation rules as the CPU), then
the block merges its states in shared memory as a tree, in thread order, so ARGMAX keeps the
first index of a tie. Reductions whose outputs are adjacent in memory (over leading dims), and
many short rows, run one thread per output instead. Few long reductions (a full sum) would
leave most of the GPU idle: they are split into parts, each folded into a partial state, and
a second kernel (`merge_parts`) merges each output's parts in order."""
import math

import numpy as np
from numba import cuda, float64, int64
from numba.extending import register_jitable

from ..scalar import libm
from ..scalar import reduction as scalar
from ..scalar.reduction import CUMSUM, LOG_SOFTMAX, MAX, SUM, cast_like, is_float
from . import driver
from .access import load, store
from .memory import pointer

THREADS = driver.threads_per_row()
COLUMNS_MIN = 4 if driver.SIM else 1024  # outputs that keep a GPU busy one thread each
SHORT = 2 if driver.SIM else 32  # rows this short, when many, run one thread each
# (items that keep the GPU busy, least elements an item folds) when reductions are split:
# blocks of rows, threads of columns
ROW_SPLIT = (4, 8) if driver.SIM else (1024, 4096)
COLUMN_SPLIT = (16, 2) if driver.SIM else (1 << 18, 16)


NO_INDEX = 1 << 62  # the index of a state that saw no element yet


@register_jitable
def _merge(op, a, b):
    """scalar.merge, except that ARGMAX/ARGMIN break ties by the smaller index: threads hold
    interleaved elements, so a later thread may hold the earlier one."""
    if op == scalar.ARGMAX or op == scalar.ARGMIN:
        if scalar.better(op, b[0], a[0]) or not scalar.better(op, a[0], b[0]) and b[2] < a[2]:
            return b
        return a
    return scalar.merge(op, a, b)


@cuda.jit(device=True)
def _block_merge(op, state):
    """Merge the states of all threads of the block; thread 0 gets the total."""
    sv = cuda.shared.array(THREADS, float64)
    si = cuda.shared.array(THREADS, int64)
    sw = cuda.shared.array(THREADS, float64)
    sk = cuda.shared.array(THREADS, int64)
    t = cuda.threadIdx.x
    v, w, k = state
    step = cuda.blockDim.x // 2
    while step > 0:
        if t < 2 * step:  # threads [step, 2 step) publish, [0, step) merge
            if t >= step:
                if is_float(v):  # one of the two: a float state does not fit an int
                    sv[t] = v
                else:
                    si[t] = v
                sw[t], sk[t] = w, k
        cuda.syncthreads()
        if t < step:
            other = (cast_like(sv[t + step], v) if is_float(v) else cast_like(si[t + step], v),
                     sw[t + step], sk[t + step])
            v, w, k = _merge(op, (v, w, k), other)
        cuda.syncthreads()
        step //= 2
    return v, w, k


# Row helpers for other kernels are inlined: as device functions of their own, each would link
# a copy of _block_merge's shared arrays, and NVVM refuses a second definition of a symbol.
@cuda.jit(device=True, inline="always")
def shared_total(total, slot):
    """Thread 0's `total` (a block merge's), seen by every thread of the block (`slot`: a
    one-element shared array)."""
    if cuda.threadIdx.x == 0:
        slot[0] = total
    cuda.syncthreads()
    total = slot[0]
    cuda.syncthreads()  # (before the slot is written again)
    return total


@cuda.jit(device=True, inline="always")
def block_sum(v, slot):
    """The sum of every thread's float64 `v` over the block, in every thread."""
    s, w, _ = _block_merge(SUM, (v, 0.0, np.int64(0)))
    return shared_total(s + w, slot)


@register_jitable
def _start(op, init):
    """The state of an empty range."""
    return init, 0.0, np.int64(NO_INDEX if op == scalar.ARGMAX or op == scalar.ARGMIN else 0)


@register_jitable
def _put(op, state, e, o, oo, ix, io, has_index, pw, parts, correction):
    """Item e's result: its output (and index), or with parts > 1 its partial state for
    merge_parts (v into o, w into pw, k into ix)."""
    v, w, k = state
    if parts == 1:
        store(o, oo + e, scalar.finalize(op, state, correction))
        if has_index:
            store(ix, io + e, 0 if k == NO_INDEX else k)
    else:
        store(o, oo + e, v)
        store(pw, e, w)
        store(ix, io + e, k)


@driver.jit
def reduce_rows(op, x, xo, sm, sk_, m, kk, parts, o, oo, ix, io, has_index, pw, init,
                correction):
    """o[r] = op over x[xo + r*sm + j*sk_] for j < kk, for each row r < m, one block an item:
    part b % parts of row b // parts (with parts > 1, item b's state goes to merge_parts)."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    while b < m * parts:
        r, q = b // parts, b % parts
        state = _start(op, init)
        j = q * kk // parts + t
        hi = (q + 1) * kk // parts
        base, step = xo + r * sm, cuda.blockDim.x
        while j + 3 * step < hi:  # four loads in flight before their merges, in the same order
            x0 = load(x, base + j * sk_)  # (one at a time, a 1 GiB sum moved 0.78 TB/s on
            x1 = load(x, base + (j + step) * sk_)  # the H200: latency-bound)
            x2 = load(x, base + (j + 2 * step) * sk_)
            x3 = load(x, base + (j + 3 * step) * sk_)
            state = _merge(op, state, scalar.lift(op, x0, j, init))
            state = _merge(op, state, scalar.lift(op, x1, j + step, init))
            state = _merge(op, state, scalar.lift(op, x2, j + 2 * step, init))
            state = _merge(op, state, scalar.lift(op, x3, j + 3 * step, init))
            j += 4 * step
        while j < hi:
            state = _merge(op, state, scalar.lift(op, load(x, base + j * sk_), j, init))
            j += step
        state = _block_merge(op, state)
        if t == 0:
            _put(op, state, b, o, oo, ix, io, has_index, pw, parts, correction)
        b += cuda.gridDim.x


@driver.jit
def reduce_columns(op, x, xo, sm, sk_, m, kk, parts, o, oo, ix, io, has_index, pw, init,
                   correction):
    """As reduce_rows with one thread an item, folding its range in order: item e is part
    e // m of row e % m, so for reductions whose outputs are adjacent in memory (a sum over
    dim 0) neighbouring threads read neighbouring elements."""
    e = cuda.grid(1)
    while e < m * parts:
        r, q = e % m, e // m
        state = _start(op, init)
        for j in range(q * kk // parts, (q + 1) * kk // parts):
            state = _merge(op, state, scalar.lift(op, load(x, xo + r * sm + j * sk_), j, init))
        _put(op, state, e, o, oo, ix, io, has_index, pw, parts, correction)
        e += cuda.gridsize(1)


@driver.jit
def merge_parts(op, pv, pw, pk, m, parts, rs, qs, o, oo, ix, io, has_index, init, correction):
    """Finish a split reduction: o[r] from the partial states r*rs + q*qs, q < parts, merged in
    order of q (one block a row)."""
    t = cuda.threadIdx.x
    r = cuda.blockIdx.x
    while r < m:
        state = _start(op, init)
        q = t
        while q < parts:
            s = r * rs + q * qs
            state = _merge(op, state, (load(pv, s), load(pw, s), load(pk, s)))
            q += cuda.blockDim.x
        state = _block_merge(op, state)
        if t == 0:
            _put(op, state, r, o, oo, ix, io, has_index, pw, 1, correction)
        r += cuda.gridDim.x


@register_jitable
def _softmax_out(op, o, e, x, shift, log_sum):
    y = x - shift - log_sum
    store(o, e, y if op == LOG_SOFTMAX else libm.exp(y))


@driver.jit
def rowwise(op, x, xo, sm, sk_, m, kk, o, oo, init):
    """SOFTMAX / LOG_SOFTMAX / CUMSUM along rows of kk elements (o dense, row-major): softmax
    in two passes over the row (max, then sum of exp) and one write; cumsum by one thread."""
    row = cuda.shared.array(2, float64)  # the row's shift and log-sum, for all its threads
    t = cuda.threadIdx.x
    r = cuda.blockIdx.x
    while r < m:
        base = xo + r * sm
        if op == CUMSUM:
            if t == 0:
                acc = init
                for j in range(kk):
                    acc = cast_like(acc + load(x, base + j * sk_), init)
                    store(o, oo + r * kk + j, acc)
        else:
            state = (init, 0.0, np.int64(0))
            j, step = t, cuda.blockDim.x
            while j + 3 * step < kk:  # four loads in flight, as in reduce_rows
                x0 = load(x, base + j * sk_)
                x1 = load(x, base + (j + step) * sk_)
                x2 = load(x, base + (j + 2 * step) * sk_)
                x3 = load(x, base + (j + 3 * step) * sk_)
                state = scalar.merge(scalar.LSE, state, scalar.lift(scalar.LSE, x0, j, init))
                state = scalar.merge(scalar.LSE, state, scalar.lift(scalar.LSE, x1, j, init))
                state = scalar.merge(scalar.LSE, state, scalar.lift(scalar.LSE, x2, j, init))
                state = scalar.merge(scalar.LSE, state, scalar.lift(scalar.LSE, x3, j, init))
                j += 4 * step
            while j < kk:
                state = scalar.merge(scalar.LSE, state,
                                     scalar.lift(scalar.LSE, load(x, base + j * sk_), j, init))
                j += step
            v, w, k = _block_merge(scalar.LSE, state)
            if t == 0:
                row[0] = scalar.shift(v)
                row[1] = libm.log(w)
            cuda.syncthreads()
            shift, log_sum = row[0], row[1]
            j = t
            while j + 3 * step < kk:  # the loads first: a store may alias them
                x0 = load(x, base + j * sk_)
                x1 = load(x, base + (j + step) * sk_)
                x2 = load(x, base + (j + 2 * step) * sk_)
                x3 = load(x, base + (j + 3 * step) * sk_)
                _softmax_out(op, o, oo + r * kk + j, x0, shift, log_sum)
                _softmax_out(op, o, oo + r * kk + j + step, x1, shift, log_sum)
                _softmax_out(op, o, oo + r * kk + j + 2 * step, x2, shift, log_sum)
                _softmax_out(op, o, oo + r * kk + j + 3 * step, x3, shift, log_sum)
                j += 4 * step
            while j < kk:
                _softmax_out(op, o, oo + r * kk + j, load(x, base + j * sk_), shift, log_sum)
                j += step
            cuda.syncthreads()
        r += cuda.gridDim.x


def _rows(src, dims):
    """src with `dims` moved last and seen as (rows, reduced): (array, rows, k, row stride,
    element stride); a dense copy first when no such 2-D view exists."""
    lead = src.ndim - len(dims)
    if src.flags.c_contiguous and dims == tuple(range(lead, src.ndim)):  # rows as they lie
        k = math.prod(src.shape[lead:])
        return src, math.prod(src.shape[:lead]), k, k, 1
    kept = [d for d in range(src.ndim) if d not in dims]
    moved = src.transpose(kept + list(dims))
    m = math.prod([src.shape[d] for d in kept])
    k = math.prod([src.shape[d] for d in dims])
    try:
        flat = moved.reshape(m, k)
    except ValueError:  # no view: copy into that order
        from . import copy, empty
        dense = empty(moved.shape, src.dtype)
        copy(dense, moved)
        flat = dense.reshape(m, k)
    sm, sk = (s // src.itemsize for s in flat.strides)
    return flat, m, k, sm, sk


def _launch(kernel, m, *args):
    driver.launch(kernel, max(1, min(m, 65535)), THREADS, *args)


def _parts(m, k, busy, least):
    """How many parts to split each of m reductions of k elements into, so that about `busy`
    items keep the GPU busy, each folding at least `least` elements."""
    return max(1, min(-(-k // least), busy // m))


def reduce(op, out, src, reduced, index=None, correction=0.0):
    """out = op over the `reduced` dims of src (see the CPU backend's `reduce`). Few long
    reductions (a full sum) are split into parts whose states a second kernel merges."""
    if not out.size:
        return
    from . import empty
    acc, init = scalar.fold_start(op, out.dtype)
    flat, m, k, sm, sk = _rows(src, tuple(reduced))
    o = pointer(out)
    p, po = pointer(flat) if flat.size else o
    ix = o if index is None else pointer(index)
    # one thread per output where outputs are adjacent in memory (coalesced reads) or rows are
    # short (a block a row would idle); else a block a row
    columns = m >= COLUMNS_MIN and (sm == 1 and sk != 1 or k <= SHORT)
    parts = 1 if k <= SHORT else _parts(m, k, *(COLUMN_SPLIT if columns else ROW_SPLIT))
    if parts == 1:
        targets = (*o, *ix, index is not None, o[0])
    else:  # the partial states (v, w, k): fresh buffers, so element offset 0; kept alive here
        states = [empty((m * parts,), t) for t in (acc, np.float64, np.int64)]
        pv, pw, pk = (pointer(a)[0] for a in states)
        targets = (pv, 0, pk, 0, False, pw)
    args = (op, p, po, sm, sk, m, k, parts, *targets, init, float(correction))
    if columns:
        driver.launch_1d(reduce_columns, m * parts, *args)
    else:
        _launch(reduce_rows, m * parts, *args)
    if parts > 1:  # states of rows: r*parts + q; of columns: q*m + r
        rs, qs = (1, m) if columns else (parts, 1)
        _launch(merge_parts, m, op, pv, pw, pk, m, parts, rs, qs, *o, *ix, index is not None,
                init, float(correction))


def reduce_all(op, out, src):
    """`reduce` over every dim of a non-empty src into the 0-d out (the small-op path)."""
    reduce(op, out, src, tuple(range(src.ndim)))


def along(op, out, src, dim):
    """out = op(src) along `dim` for SOFTMAX, LOG_SOFTMAX and CUMSUM; out C-contiguous."""
    if not out.size:
        return
    init = scalar.identity(MAX if op != CUMSUM else SUM, scalar.acc_dtype(out.dtype))
    last = src.ndim - 1
    if dim != last:  # work on rows along `dim`, then put the result back in place
        from . import copy, empty
        order = [d for d in range(src.ndim) if d != dim] + [dim]
        tmp = empty([src.shape[d] for d in order], out.dtype)
        along(op, tmp, src.transpose(order), last)
        copy(out, tmp.transpose(np.argsort(order)))
        return
    flat, m, k, sm, sk = _rows(src, (dim,))
    _launch(rowwise, m, op, *pointer(flat), sm, sk, m, k, *pointer(out), init)


def any_true(buf):
    """Whether any element of the bool DeviceArray `buf` is true (a host bool)."""
    from . import empty, to_numpy
    out = empty((), np.bool_)
    reduce(scalar.ANY, out, buf, tuple(range(buf.ndim)))
    return bool(to_numpy(out))
