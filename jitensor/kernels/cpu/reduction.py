"""CPU kernels for reductions, softmax and cumsum, on any layout without copying the input.

Launchers take NumPy arrays as they are (views with any strides) and show the work to the
kernels as flat buffers plus a 4-D *frame*: sizes (A, R1, R2, C) and element strides, where
A and C are the kept dims and R1, R2 the reduced ones (a softmax/cumsum dim is R2), each
coalesced from the tensor's dims. Flat 1-D buffers keep one compiled kernel per dtype pair
whatever the layout; a contiguous stretch is sliced as a C-layout segment, which LLVM
vectorises.

Two shapes of work: *rows* reduce each output's range in blocks of BLOCK elements (vectorised
folds, then the blocks' states merged in order; few long rows spread their blocks over the
threads); *columns*, used when a kept dim (C) is the one laid out densest, merge each reduced
row into a vector of CHUNK output states at once, e.g. sum(dim=0) of a C-contiguous matrix.

The kernels are compiled per op (`_per_op`): the op is a constant in each copy, and Numba
compiles only that op's branches. Per-row costs matter for many short rows: helpers called per
row are compiled without reference counting (`_nrt=False`, which saves atomic updates on every
array they touch), take (array, offset, length) rather than a slice, and never return arrays.
Dense rows (x.sum(-1)) run a loop whose helpers LLVM must inline (vector.always_inline): it
left them as calls, which cost more than the fold itself on rows of 8-64 float32."""
import functools
import math
import threading

import numba
import numpy as np
from numba import carray, cfunc, njit, prange, types
from numba.extending import register_jitable

from ..scalar import reduction as scalar
from ..scalar.reduction import (
    ALL,
    ANY,
    ARGMAX,
    ARGMIN,
    CUMSUM,
    LSE,
    MAX,
    MEAN,
    MIN,
    PROD,
    SOFTMAX,
    STD,
    SUM,
    VAR,
    add_compensated,
    better,
    cast_like,
    combine,
    exp,
    finalize,
    is_float,
    is_float64,
    lift,
    merge,
    merge_lse,
    merge_moments,
    shift,
    to_float,
)
from . import narrow
from .kernels import (
    PARALLEL_MIN,
    Specialised,
    first_small,
    num_threads,
    prange_only,
    serial,
    twins,
)
from .strided import coalesce
from .vector import always_inline, call, pointer, wide

BLOCK = 4096  # elements a row is folded by: in L1 for a second pass (argmax, var, logsumexp)
CHUNK = 4096  # columns per task of a columns kernel: rows stream in runs this long
COLUMNS_MIN = 16  # fewer dense kept columns than this: rows of strided elements do better
SUM_RUN = 128  # float64 elements per compensated run (see _sum)
SUM_RUN32 = 1024  # float32 elements per float32 run of a float32 sum (see _sum)
_REASSOC = {"reassoc"}  # lets LLVM split a float fold over vector lanes (a blocked sum)


# -- one copy of the kernels per op -----------------------------------------------------------
# The functions decorated `_per_op` branch on the global OP, None here: each op gets copies of
# them in which it is the op's code (`_per_op.build(op)`), a constant, so Numba compiles only
# that op's branches (kernels.Specialised). With the op an argument, every helper was typed and
# compiled for all 12 ops, for every dtype, though a program calls two or three
# (docs/design.md, "Cold start").
OP = None
_per_op = Specialised(globals(), ("OP",), lambda op: "_" + scalar.NAMES[op])


# -- vectorised loops over one segment (a C-layout array) ----------------------------------------
# A loop with the op switch inside does not vectorise, so the dispatchers below call their loop
# with the op as a constant: LLVM inlines the loop per op, folds the switch and vectorises.
@register_jitable(fastmath=_REASSOC, _nrt=False)
def _fold_loop(op, seg, acc):
    wide()
    for i in range(seg.size):
        acc = combine(op, acc, seg[i])
    return acc


@register_jitable(_nrt=False)
def _sum(seg, acc):
    """(acc + the sum of seg, the rounding error left over). float64 data is summed in runs of
    SUM_RUN (each vector lane adds 4 elements) whose totals add with Neumaier's compensation,
    at full speed: an error bound below NumPy's pairwise summation's. A float32 acc (a float32
    sum's rows, see _launch) takes float32 runs of SUM_RUN32 (16 elements per vector lane, as
    in NumPy's pairwise leaves) added up in float64, and returns that total split into a float32
    value and its rounding error: as accurate, and faster streamed from memory than
    converting every element to float64 (fewer instructions per cache line keep more loads in
    flight). Other data is summed in acc's type and leaves no error term. A segment of at most
    SUM_RUN elements is a single run of either kind: one fold, the same bits as the runs when
    acc is 0 (every caller's: a segment's state starts from the identity)."""
    always_inline()
    if seg.size <= SUM_RUN:
        return _fold_loop(SUM, seg, acc), 0.0
    if is_float64(seg[0]) and is_float(acc):
        total, error = acc, 0.0
        for c in range(0, seg.size, SUM_RUN):
            total, error = add_compensated(total, error, _fold_loop(SUM, seg[c:c + SUM_RUN], 0.0))
        return total, error
    if is_float(acc) and not is_float64(acc):
        total, zero = np.float64(acc), cast_like(0.0, acc)
        for c in range(0, seg.size, SUM_RUN32):
            total += _fold_loop(SUM, seg[c:c + SUM_RUN32], zero)
        value = cast_like(total, acc)
        error = total - value
        return value, error if error - error == 0.0 else 0.0  # (an inf total: inf - inf)
    return _fold_loop(SUM, seg, acc), 0.0


@register_jitable(_nrt=False)
def _fold(op, seg, acc):
    """acc folded with every element of seg."""
    always_inline()
    if op == PROD:
        return _fold_loop(PROD, seg, acc)
    if op == MAX or op == ARGMAX or op == LSE:
        return _fold_loop(MAX, seg, acc)
    if op == MIN or op == ARGMIN:
        return _fold_loop(MIN, seg, acc)
    if op == ALL:
        return _fold_loop(ALL, seg, acc)
    if op == ANY:
        return _fold_loop(ANY, seg, acc)
    return _fold_loop(SUM, seg, acc)


@_per_op(fastmath=_REASSOC, _nrt=False)
def _merge_row(v, w, k, src, off, r):
    """Column j's state (v[j], w[j], k[j]) takes in element src[off + j] of reduced row r (the
    folds leave the count in k to the caller). Spelled out per op: LLVM did not inline a shared
    loop helper here, and the loops stayed scalar."""
    wide()
    n = v.size
    seg = src[off:off + n]
    if OP == PROD:
        for j in range(n):
            v[j] = combine(PROD, v[j], seg[j])
    elif OP == MAX:
        for j in range(n):
            v[j] = combine(MAX, v[j], seg[j])
    elif OP == MIN:
        for j in range(n):
            v[j] = combine(MIN, v[j], seg[j])
    elif OP == ALL:
        for j in range(n):
            v[j] = combine(ALL, v[j], seg[j])
    elif OP == ANY:
        for j in range(n):
            v[j] = combine(ANY, v[j], seg[j])
    elif OP == ARGMAX or OP == ARGMIN:
        for j in range(n):
            x = cast_like(seg[j], v[j])
            take = better(OP, x, v[j])
            v[j], k[j] = (x, r) if take else (v[j], k[j])
    elif OP == VAR or OP == STD:
        for j in range(n):
            v[j], w[j], k[j] = merge_moments((v[j], w[j], k[j]), lift(VAR, seg[j], r, v[j]))
    elif OP == LSE:
        for j in range(n):
            v[j], w[j], k[j] = merge_lse((v[j], w[j], k[j]), lift(LSE, seg[j], r, v[j]))
    elif is_float64(seg[0]) and is_float(v[0]):  # float64 sums: compensated, as in _sum
        for j in range(n):
            v[j], w[j] = add_compensated(v[j], w[j], seg[j])
    else:
        for j in range(n):
            v[j] = combine(SUM, v[j], seg[j])


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _sum_sq_dev(seg, mean):
    wide()
    s = 0.0
    for i in range(seg.size):
        d = np.float64(seg[i]) - mean
        s += d * d
    return s


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _sum_exp(seg, offset):
    """The sum of exp(x - offset), exp in x's float type (float32 has twice the lanes)."""
    wide()
    offset = cast_like(offset, to_float(seg[0]))
    s = 0.0
    for i in range(seg.size):
        s += exp(to_float(seg[i]) - offset)
    return s


@register_jitable(_nrt=False)
def _find(seg, value):
    """The first index of `value` (of a NaN when value is NaN) in seg, as a min-reduction over
    the matching indices: it vectorises, where a loop that returns early would not."""
    wide()
    n = seg.size
    first = n
    nan = value != value
    for i in range(n):
        x = seg[i]
        first = min(first, i if (x == value) | (nan & (x != x)) else n)
    return first


@_per_op(_nrt=False)
def _segment_state(src, off, n, start, init, bar):
    """The state of src[off:off + n], whose first element is at index `start` of its reduced
    range. ARGMAX/ARGMIN look for the index only if the segment's extreme beats `bar`, the
    value of the state it will be merged into (else that state wins, or, when bar is the
    identity, every element equals it and the first is the answer)."""
    always_inline()
    seg = src[off:off + n]
    if OP == MAX or OP == MIN or OP == ARGMAX or OP == ARGMIN or OP == LSE:
        # extremes in seg's own type: exact, and float32 / small ints fill more vector lanes
        best = _fold(MIN if OP == MIN or OP == ARGMIN else MAX, seg, seg[0])
        if OP == ARGMAX or OP == ARGMIN:
            wins = better(OP, cast_like(best, init), bar)
            return cast_like(best, init), 0.0, np.int64(start + (_find(seg, best) if wins else 0))
        if OP == LSE:
            return cast_like(best, init), _sum_exp(seg, shift(best)), np.int64(0)
        return cast_like(best, init), 0.0, np.int64(n)
    if OP == VAR or OP == STD:  # two passes over the block in L1: exact and vectorised
        total, error = _sum(seg, 0.0)
        mean = (total + error) / n
        return cast_like(mean, init), _sum_sq_dev(seg, mean), np.int64(n)
    if OP == SUM or OP == MEAN:
        total, error = _sum(seg, init)
        return total, error, np.int64(n)
    return _fold(OP, seg, init), 0.0, np.int64(n)


@register_jitable(_nrt=False)
def _gather(scratch, src, off, n, stride):
    """scratch[:n] = src[off + i * stride], so that loops over strided elements run on a
    contiguous copy and compile (and vectorise) for one layout. (Helpers without reference
    counting must not return arrays: their callers would release a reference never taken.)"""
    for i in range(n):
        scratch[i] = src[off + i * stride]


@_per_op(_nrt=False)
def _block_state(src, off, n, stride, start, init, bar, scratch):
    """_segment_state of src[off + i * stride], i < n: strided elements are first gathered
    into `scratch`, so the folds compile (and vectorise) for one layout."""
    if stride == 1:
        return _segment_state(src, off, n, start, init, bar)
    _gather(scratch, src, off, n, stride)
    return _segment_state(scratch, 0, n, start, init, bar)


# -- rows: each output reduces its (R1, R2) range -------------------------------------------------
@_per_op(_nrt=False)
def _row_state(src, base, shape, ss, lo, hi, init, scratch):
    """The state of blocks lo..hi-1 of the row whose first element is src[base]. Small, so LLVM
    inlines it: a contiguous row of at most BLOCK goes straight to _segment_state, since each
    call layer is paid on every row."""
    if hi - lo == 1 and shape[2] <= BLOCK and ss[2] == 1:
        return _segment_state(src, base + lo * ss[1], shape[2], lo * shape[2], init, init)
    return _blocks_state(src, base, shape, ss, lo, hi, init, scratch)


@_per_op(_nrt=False)
def _blocks_state(src, base, shape, ss, lo, hi, init, scratch):
    """Blocks lo..hi-1 of a row (block b is the (b % per_r1)-th BLOCK of r1 = b // per_r1),
    merged in order (float sums carry the merges' rounding errors along, see scalar.merge)."""
    n_r2 = shape[2]
    per_r1 = (n_r2 + BLOCK - 1) // BLOCK
    r1, j = lo // per_r1, lo % per_r1
    state = (init, 0.0, np.int64(0))
    for _ in range(lo, hi):
        off = base + r1 * ss[1] + j * BLOCK * ss[2]
        block = _block_state(src, off, min(BLOCK, n_r2 - j * BLOCK), ss[2],
                             r1 * n_r2 + j * BLOCK, init, state[0], scratch)
        state = merge(OP, state, block)
        j += 1
        if j == per_r1:
            r1, j = r1 + 1, 0
    return state


@_per_op(_nrt=False)
def _write(out, idx, o, state, correction):
    always_inline()
    out[o] = finalize(OP, state, correction)
    if OP == ARGMAX or OP == ARGMIN:
        idx[o] = state[2]


@_per_op(_nrt=False)
def _dense_rows(src, so, n, sa, out, idx, oo, oa, init, correction, lo, hi):
    """Rows lo..hi-1 of n <= BLOCK contiguous elements, row a from src[so + a * sa] into
    out[oo + a * oa]: the loop _rows runs for such rows (x.sum(-1)), inlined, so that a short
    row costs a few ns rather than a chain of calls (~4x)."""
    always_inline()
    for a in range(lo, hi):
        _write(out, idx, oo + a * oa, _segment_state(src, so + a * sa, n, 0, init, init),
               correction)


@_per_op(_nrt=False)
def _rows(src, so, shape, ss, out, idx, oo, os, init, correction, parts, lo, hi, v, w, k,
          scratch):
    """Items lo..hi-1, item t = part t % parts of row t // parts (row = a * C + c): written out
    when parts == 1, else their states stored at v[t], w[t], k[t]."""
    n_c, parts_blocks = shape[3], shape[1] * ((shape[2] + BLOCK - 1) // BLOCK)
    if parts == 1 and n_c == 1 and shape[1] == 1 and ss[2] == 1 and 0 < shape[2] <= BLOCK:
        _dense_rows(src, so, shape[2], ss[0], out, idx, oo, os[0], init, correction, lo, hi)
        return
    for t in range(lo, hi):
        row, part = (t, 0) if parts == 1 else (t // parts, t % parts)
        a, c = (row, 0) if n_c == 1 else (row // n_c, row % n_c)
        lo_b, hi_b = (0, parts_blocks) if parts == 1 else (
            parts_blocks * part // parts, parts_blocks * (part + 1) // parts)
        state = _row_state(src, so + a * ss[0] + c * ss[3], shape, ss, lo_b, hi_b, init,
                           scratch)
        if parts == 1:
            _write(out, idx, oo + a * os[0] + c * os[3], state, correction)
        else:
            v[t], w[t], k[t] = state


@_per_op(_nrt=False)
def _rows_finish(out, idx, oo, os, shape, init, correction, parts, v, w, k):
    """Merge each row's parts in order and write the row's output."""
    for row in range(shape[0] * shape[3]):
        state = (init, 0.0, np.int64(0))
        for t in range(row * parts, (row + 1) * parts):
            state = merge(OP, state, (v[t], w[t], k[t]))
        _write(out, idx, oo + row // shape[3] * os[0] + row % shape[3] * os[3], state,
               correction)


@_per_op()
def rows_function(src, n_src, so, n_a, n_r1, n_r2, n_c, s0, s1, s2, s3, out, n_out, idx,
                  n_idx, oo, o0, o3, init, correction, parts, v, w, k, keep, lo, hi, finish):
    """The rows work of a frame, called by address (see `_function`): items lo..hi-1 of `_rows`,
    or, when `finish`, the merge of every row's parts (`_rows_finish`). Arrays come as pointers
    to their first element with their sizes; v, w, k hold `keep` states."""
    shape, ss, os = (n_a, n_r1, n_r2, n_c), (s0, s1, s2, s3), (o0, 0, 0, o3)
    src, out, idx = carray(src, n_src), carray(out, n_out), carray(idx, n_idx)
    v, w, k = carray(v, keep), carray(w, keep), carray(k, keep)
    if finish:
        _rows_finish(out, idx, oo, os, shape, init, correction, parts, v, w, k)
        return
    scratch = np.empty(0 if s2 == 1 else min(BLOCK, n_r2), src.dtype)
    _rows(src, so, shape, ss, out, idx, oo, os, init, correction, parts, lo, hi, v, w, k,
          scratch)


# -- columns: a vector of CHUNK output states takes in one reduced row at a time ----------------
@_per_op(_nrt=False)
def _columns_part(src, so, shape, ss, init, t, parts, v, w, k, scratch):
    """Set v, w, k to the states of task t = (a * chunks + chunk) * parts + part: the chunk's
    CHUNK columns of a, over the part-th share of the reduced rows."""
    n_a, n_r1, n_r2, n_c = shape
    chunks = (n_c + CHUNK - 1) // CHUNK
    g, part = t // parts, t % parts
    a, c0 = g // chunks, g % chunks * CHUNK
    n = min(CHUNK, n_c - c0)
    v, w, k = v[:n], w[:n], k[:n]
    v[:], w[:], k[:] = init, 0.0, 0
    rows = n_r1 * n_r2
    lo, hi = rows * part // parts, rows * (part + 1) // parts
    for r in range(lo, hi):
        off = so + a * ss[0] + r // n_r2 * ss[1] + r % n_r2 * ss[2] + c0 * ss[3]
        if ss[3] == 1:
            _merge_row(v, w, k, src, off, r)
        else:
            _gather(scratch, src, off, n, ss[3])
            _merge_row(v, w, k, scratch, 0, r)
    if OP != ARGMAX and OP != ARGMIN and OP != VAR and OP != STD:
        k[:] = hi - lo  # the folds' count


@_per_op(_nrt=False)
def _columns_write(out, idx, oo, os, shape, g, v, w, k, correction):
    """Write the outputs of chunk g (= a * chunks + chunk) from its states."""
    chunks = (shape[3] + CHUNK - 1) // CHUNK
    c0 = g % chunks * CHUNK
    o = oo + g // chunks * os[0] + c0 * os[3]
    for j in range(min(CHUNK, shape[3] - c0)):
        _write(out, idx, o + j * os[3], (v[j], w[j], k[j]), correction)


@_per_op()
def _columns_tasks(src, so, shape, ss, out, idx, oo, os, init, correction, parts, pv, pw,
                   pk, lo, hi):
    """Tasks lo..hi-1. With parts > 1 their states go to rows t of pv, pw, pk, for
    _columns_finish to merge; otherwise straight to the output."""
    size = pv.shape[1]
    lv, lw, lk = np.full(size, init), np.zeros(size), np.zeros(size, np.int64)
    scratch = np.empty(0 if ss[3] == 1 else size, src.dtype)
    for t in range(lo, hi):
        v, w, k = (pv[t], pw[t], pk[t]) if parts > 1 else (lv, lw, lk)
        _columns_part(src, so, shape, ss, init, t, parts, v, w, k, scratch)
        if parts == 1:
            _columns_write(out, idx, oo, os, shape, t, v, w, k, correction)


@_per_op()
def _columns_finish(pv, pw, pk, out, idx, oo, os, shape, init, correction, parts):
    """Merge each column's parts in order and write the outputs."""
    size = pv.shape[1]
    v, w, k = np.full(size, init), np.zeros(size), np.zeros(size, np.int64)
    for g in range(pv.shape[0] // parts):
        for j in range(size):
            state = (init, 0.0, np.int64(0))
            for t in range(g * parts, (g + 1) * parts):
                state = merge(OP, state, (pv[t, j], pw[t, j], pk[t, j]))
            v[j], w[j], k[j] = state
        _columns_write(out, idx, oo, os, shape, g, v, w, k, correction)


@_per_op()
def columns_function(src, n_src, so, n_a, n_r1, n_r2, n_c, s0, s1, s2, s3, out, n_out,
                     idx, n_idx, oo, o0, o3, init, correction, parts, v, w, k, keep, lo, hi,
                     finish):
    """As rows_function, for frames whose C dim is the dense one: each task streams whole rows
    of CHUNK columns, merging them into vectors of states (vectorised across the columns); v,
    w, k hold `keep` tasks' states of min(CHUNK, C) columns each."""
    shape, ss, os = (n_a, n_r1, n_r2, n_c), (s0, s1, s2, s3), (o0, 0, 0, o3)
    src, out, idx = carray(src, n_src), carray(out, n_out), carray(idx, n_idx)
    size = min(CHUNK, n_c)
    v, w, k = carray(v, (keep, size)), carray(w, (keep, size)), carray(k, (keep, size))
    if finish:
        _columns_finish(v, w, k, out, idx, oo, os, shape, init, correction, parts)
    else:
        _columns_tasks(src, so, shape, ss, out, idx, oo, os, init, correction, parts, v, w,
                       k, lo, hi)


# -- drivers: each runs a frame through the rows or columns function at address `function` ------
@register_jitable
def _run(function, src, so, shape, ss, out, idx, oo, os, init, correction, parts, v, w, k,
         keep, lo, hi, finish):
    call(function, (pointer(src, 0), src.size, so, shape[0], shape[1], shape[2], shape[3],
                    ss[0], ss[1], ss[2], ss[3], pointer(out, 0), out.size, pointer(idx, 0),
                    idx.size, oo, os[0], os[3], init, np.float64(correction), parts, pointer(v, 0),
                    pointer(w, 0), pointer(k, 0), keep, lo, hi, finish))


@njit(cache=True, error_model="numpy")
def reduce_frame(function, src, so, shape, ss, out, idx, oo, os, init, correction, items):
    """out[a, c] = op over src[a, :, :, c] (idx[a, c]: its index, for ARGMAX/ARGMIN), on this
    thread: the function's items 0..items-1."""
    v, w, k = np.full(0, init), np.empty(0), np.empty(0, np.int64)
    _run(function, src, so, shape, ss, out, idx, oo, os, init, correction, 1, v, w, k, 0, 0,
         items, 0)


@njit(cache=True, error_model="numpy")
def reduce_dense(function, src, out, idx, init, correction, n_a, n_r, n_c, items):
    """reduce_frame of a dense (A, R, C) frame (src, out and idx flat), for the small-op
    paths: numba's dispatch of its scalar arguments costs a fraction of what reduce_frame's
    frame tuples cost to pass."""
    v, w, k = np.full(0, init), np.empty(0), np.empty(0, np.int64)
    _run(function, src, 0, (n_a, 1, n_r, n_c), (n_r * n_c, 0, n_c, 1), out, idx, 0,
         (n_c, 0, 0, 1), init, correction, 1, v, w, k, 0, 0, items, 0)


@njit(cache=True, parallel=prange_only(), error_model="numpy")
def reduce_parallel(function, src, so, shape, ss, out, idx, oo, os, init, correction, units,
                    parts, size, tasks):
    """reduce_frame over `tasks` threads' worth of the function's `units` work units (rows, or
    column chunks of `size`), each split in `parts` when there are too few to go round; the
    parts' states are merged after, in order, so the result has the bits of any thread count."""
    n = units * parts
    keep = n if parts > 1 else 0
    v = np.full(keep * size, init)
    w, k = np.zeros(keep * size), np.zeros(keep * size, np.int64)
    for task in prange(tasks):
        _run(function, src, so, shape, ss, out, idx, oo, os, init, correction, parts, v, w,
             k, keep, n * task // tasks, n * (task + 1) // tasks, 0)
    if parts > 1:
        _run(function, src, so, shape, ss, out, idx, oo, os, init, correction, parts, v, w,
             k, keep, 0, 0, 1)


# -- softmax, log_softmax, cumsum: the output has the input's shape, R2 is the dim -----------------
@_per_op(fastmath=_REASSOC, _nrt=False)
def _softmax_segment(x, xo, o, oo, n):
    """o[oo:oo + n] = softmax or log_softmax of x[xo:xo + n], in o's type: a max pass, a pass
    that writes exp(x - max) to o, one that sums them, a pass that scales them (softmax) or
    shifts x (log_softmax: o must not overlap x, which every caller's fresh output holds)."""
    wide()
    x, o = x[xo:xo + n], o[oo:oo + n]
    t = cast_like(_fold(MAX, x, x[0]), o[0])
    s = 0.0
    if OP == SOFTMAX:
        for i in range(x.size):
            o[i] = exp(cast_like(x[i], t) - t)
        for i in range(x.size):  # (apart: the exponentials' loop vectorises better alone)
            s += o[i]
        scale = cast_like(1.0 / s, t)
        for i in range(x.size):
            o[i] *= scale
    else:
        for i in range(x.size):  # (o holds the exponentials until the last pass)
            o[i] = exp(cast_like(x[i], t) - t)
        for i in range(x.size):
            s += o[i]
        log_s = cast_like(np.log(s), t)
        for i in range(x.size):
            o[i] = (cast_like(x[i], t) - t) - log_s


@register_jitable(_nrt=False)
def _cumsum_segment(x, xo, o, oo, n, acc):
    x, o = x[xo:xo + n], o[oo:oo + n]
    for i in range(n):
        acc = combine(SUM, acc, x[i])
        o[i] = acc


@_per_op(_nrt=False)
def _rowwise_rows(src, so, shape, ss, out, oo, os, init, lo, hi, xs, ys):
    """Rows lo..hi-1 (row = a * C + c), gathered into xs / scattered from ys if strided."""
    n, n_c = shape[2], shape[3]
    for row in range(lo, hi):
        a, c = (row, 0) if n_c == 1 else (row // n_c, row % n_c)
        x, xo = src, so + a * ss[0] + c * ss[3]
        if ss[2] != 1:
            _gather(xs, x, xo, n, ss[2])
            x, xo = xs, 0
        off = oo + a * os[0] + c * os[3]
        y, yo = (out, off) if os[2] == 1 else (ys, 0)
        if OP == CUMSUM:
            _cumsum_segment(x, xo, y, yo, n, init)
        else:
            _softmax_segment(x, xo, y, yo, n)
        if os[2] != 1:
            for i in range(n):
                out[off + i * os[2]] = ys[i]


@_per_op(fastmath=_REASSOC, _nrt=False)
def _columns_pass(stage, acc, s, x, xo, y, yo, n):
    """One reduced row (x[xo:xo + n] in, y[yo:yo + n] out) through stage 0, 1 or 2 of OP:
    cumsum (stage 0 only); softmax's max, sum of exp, write."""
    wide()
    acc, s, x, y = acc[:n], s[:n], x[xo:xo + n], y[yo:yo + n]
    if OP == CUMSUM:
        for j in range(n):
            acc[j] = combine(SUM, acc[j], x[j])
            y[j] = acc[j]
    elif stage == 0:
        for j in range(n):
            acc[j] = combine(MAX, acc[j], x[j])
    elif stage == 1:
        for j in range(n):
            t = cast_like(acc[j], y[0])
            s[j] += exp(cast_like(x[j], t) - t)
    elif OP == SOFTMAX:
        for j in range(n):
            t = cast_like(acc[j], y[0])
            y[j] = exp(cast_like(x[j], t) - t) * cast_like(s[j], t)
    else:
        for j in range(n):
            t = cast_like(acc[j], y[0])
            y[j] = (cast_like(x[j], t) - t) - cast_like(s[j], t)


@_per_op()
def _rowwise_columns(src, so, shape, ss, out, oo, os, init, lo, hi):
    """Tasks lo..hi-1 of CHUNK columns each; softmax takes three passes over the task's rows
    (the last recomputes exp rather than read back outputs that may be strided)."""
    n_r, n_c = shape[2], shape[3]
    chunks = (n_c + CHUNK - 1) // CHUNK
    size = min(CHUNK, n_c)
    acc, s = np.full(size, init), np.empty(size)
    xs = np.empty(0 if ss[3] == 1 else size, src.dtype)
    ys = np.empty(size, out.dtype)
    for t in range(lo, hi):
        a, c0 = t // chunks, t % chunks * CHUNK
        n = min(CHUNK, n_c - c0)
        acc[:], s[:] = init, 0.0
        for stage in range(1 if OP == CUMSUM else 3):
            for r in range(n_r):
                x, xo = src, so + a * ss[0] + r * ss[2] + c0 * ss[3]
                if ss[3] != 1:
                    _gather(xs, x, xo, n, ss[3])
                    x, xo = xs, 0
                off = oo + a * os[0] + r * os[2] + c0 * os[3]
                direct = os[3] == 1 and (OP == CUMSUM or stage == 2)
                y, yo = (out, off) if direct else (ys, 0)
                _columns_pass(stage, acc, s, x, xo, y, yo, n)
                if not direct and (OP == CUMSUM or stage == 2):
                    for j in range(n):
                        out[off + j * os[3]] = ys[j]
            if stage == 1:  # the per-column factor of the last pass
                for j in range(n):
                    s[j] = 1.0 / s[j] if OP == SOFTMAX else np.log(s[j])


@_per_op()
def along_function(src, n_src, so, n_a, n_r1, n_r2, n_c, s0, s1, s2, s3, out, n_out, oo,
                   o0, o1, o2, o3, init, columns, lo, hi):
    """out[a, :, c] = OP(src[a, :, c]) for SOFTMAX, LOG_SOFTMAX, CUMSUM (shape (A, 1, R, C)),
    called by address as rows_function is: rows lo..hi-1 (row = a * C + c), or when `columns`,
    tasks lo..hi-1 of CHUNK columns each, vectorised across a dense C dim."""
    shape, ss, os = (n_a, n_r1, n_r2, n_c), (s0, s1, s2, s3), (o0, o1, o2, o3)
    src, out = carray(src, n_src), carray(out, n_out)
    if columns:
        _rowwise_columns(src, so, shape, ss, out, oo, os, init, lo, hi)
        return
    xs = np.empty(0 if s2 == 1 else n_r2, src.dtype)
    ys = np.empty(0 if o2 == 1 else n_r2, out.dtype)
    _rowwise_rows(src, so, shape, ss, out, oo, os, init, lo, hi, xs, ys)


@register_jitable
def _run_along(function, src, so, shape, ss, out, oo, os, init, columns, lo, hi):
    call(function, (pointer(src, 0), src.size, so, shape[0], shape[1], shape[2], shape[3],
                    ss[0], ss[1], ss[2], ss[3], pointer(out, 0), out.size, oo, os[0], os[1],
                    os[2], os[3], init, columns, lo, hi))


@njit(cache=True, error_model="numpy")
def along_frame(function, src, so, shape, ss, out, oo, os, init, columns, units):
    """along_function's units 0..units-1 on this thread."""
    _run_along(function, src, so, shape, ss, out, oo, os, init, columns, 0, units)


@njit(cache=True, parallel=prange_only(), error_model="numpy")
def along_parallel(function, src, so, shape, ss, out, oo, os, init, columns, units, tasks):
    """along_frame over `tasks` threads' worth of the units."""
    for task in prange(tasks):
        _run_along(function, src, so, shape, ss, out, oo, os, init, columns,
                   units * task // tasks, units * (task + 1) // tasks)


# -- launchers ------------------------------------------------------------------------------------
class _Span:
    """The array interface of `n` elements of a's dtype from a's first element."""

    def __init__(self, a, n):
        self.__array_interface__ = {"shape": (n,), "typestr": a.dtype.str, "version": 3,
                                    "data": (a.__array_interface__["data"][0], False)}
        self.base = a  # keeps a's memory alive as long as the flat view


def _flat(a):
    """a's memory as a 1-D array starting at a's first element, and a's element strides. The
    view is typed writeable even when `a` is a read-only broadcast view, so kernels see one
    array type (they never write their inputs)."""
    strides = [s // a.itemsize for s in a.strides]
    if a.flags.c_contiguous and a.flags.writeable:
        return a.reshape(-1), strides
    span = 1 + sum((n - 1) * s for n, s in zip(a.shape, strides, strict=False)) if a.size else 0
    return np.asarray(_Span(a, span)), strides


def _groups(dims):
    """Coalesce (size, src stride, out stride) dims, outer first: [] when every size is 1."""
    if not dims:
        return []
    sizes, strides = coalesce(*zip(*dims, strict=False))
    return [] if sizes == [1] else list(zip(sizes, *strides, strict=False))


def _frames(shape, ss, os, reduced, ordered):
    """The kernel frames for reducing `reduced` dims (src strides ss, out strides os): a list of
    (src offset, out offset) slabs, the 4-D sizes, src strides and out strides; None when the
    reduced dims don't coalesce into two (the caller copies the input first).

    Kept dims are ordered by src stride, densest last, so that C walks memory forward; reduced
    dims likewise unless `ordered` (argmax's flat index counts in the logical order)."""
    dims = [(shape[d], ss[d], os[d]) for d in range(len(shape))]
    kept = _groups(sorted((dims[d] for d in range(len(shape)) if d not in reduced),
                          key=lambda g: -g[1]))
    red = [dims[d] for d in reduced]
    red = _groups(red if ordered else sorted(red, key=lambda g: -g[1]))
    if len(red) > 2 or any(g[1] == 0 for g in red):  # stride 0: a broadcast reduced dim
        return None
    one = (1, 0, 0)
    a, c = ([one] + kept)[-2:] if kept else (one, one)
    r1, r2 = ([one, one] + red)[-2:]
    slabs = [(0, 0)]
    for n, s, o in kept[:-2]:
        slabs = [(so + i * s, oo + i * o) for so, oo in slabs for i in range(n)]
    frame = (a, r1, r2, c)
    return (slabs, tuple(g[0] for g in frame), tuple(g[1] for g in frame),
            tuple(g[2] for g in frame))


def _dense_sizes(src, reduced):
    """(A, R, C), the sizes before, of and after the reduced dims, when src is C-contiguous and
    they are consecutive (or none): the commonest case, whose frame needs no planning (costly,
    in general, next to a small reduction); else None."""
    if not (src.flags.c_contiguous and src.flags.writeable) or (
            reduced and reduced[-1] - reduced[0] != len(reduced) - 1):
        return None
    first, last = (reduced[0], reduced[-1] + 1) if reduced else (src.ndim, src.ndim)
    shape = src.shape
    return math.prod(shape[:first]), math.prod(shape[first:last]), math.prod(shape[last:])


def _contiguous_plan(src, reduced):
    """The plan of _frames for _dense_sizes' case, directly. Out strides as for a reduction."""
    sizes = _dense_sizes(src, reduced)
    if sizes is None:
        return None
    n_a, n_r, n_c = sizes
    return [(0, 0)], (n_a, 1, n_r, n_c), (n_r * n_c, 0, n_c, 1), (n_c, 0, 0, 1)


def _copy(out, src):
    from . import copy  # the backend's copy launcher (this module loads before it is defined)
    copy(out, src)


def _contiguous_copy(src, first):
    """A C-contiguous copy of src with dims `first` moved to the front (kernel work; NumPy
    only permutes the view)."""
    order = list(first) + [d for d in range(src.ndim) if d not in first]
    view = src.transpose(order)
    tmp = np.empty(view.shape, src.dtype)
    _copy(tmp, view)
    return tmp, order


_NO_INDEX = np.empty(1, np.int64)


def _reduce_plan(src, out, reduced, ordered):
    """(flat src, plan): src's buffer and its frames for reducing `reduced` into out, copying
    src first only when the reduced dims are broadcast or do not coalesce into two."""
    plan = _contiguous_plan(src, reduced)
    if plan is not None:
        return src.reshape(-1), plan
    flat, ss = _flat(src)
    os, kept_strides = [0] * src.ndim, iter(s // out.itemsize for s in out.strides)
    for d in range(src.ndim):
        if d not in reduced:
            os[d] = next(kept_strides)
    plan = _frames(src.shape, ss, os, reduced, ordered)
    if plan is None:
        tmp, order = _contiguous_copy(src, [d for d in range(src.ndim) if d not in reduced])
        flat, ss = _flat(tmp)
        k = src.ndim - len(reduced)
        plan = _frames(tmp.shape, ss, [os[d] for d in order], tuple(range(k, src.ndim)), ordered)
    return flat, plan


_COMPILED = {}  # (function, op, src dtype, out dtype, init dtype) -> its cfunc
_made = threading.Lock()


def _compiled(kind, op, src, out, init):
    """The cfunc of op's copy of `kind` (rows_function, columns_function or along_function) for
    these dtypes, compiled on first use (disk-cached). The drivers call it by address, so they
    compile per dtypes alone and hold no op code: an op's code compiles once for a serial and a
    parallel driver, not into each (twice into a parallel one; docs/design.md, "Cold
    start")."""
    key = (kind, op, src, out, init)
    with _made:
        if key not in _COMPILED:
            p, i = types.CPointer, types.int64
            element, result, start = (numba.from_dtype(d) for d in (src, out, init))
            frame = [p(element), i, i, i, i, i, i, i, i, i, i, p(result), i]
            if kind is along_function:  # ... oo, os (4), init, columns, lo, hi
                frame += [i] * 5 + [start] + [i] * 3
            else:  # ... idx, oo, os[0], os[3], init, correction, parts, v, w, k, keep, lo, hi,
                # finish
                frame += [p(i), i, i, i, i, start, types.float64, i, p(start), p(types.float64),
                          p(i), i, i, i, i]
            _COMPILED[key] = cfunc(types.void(*frame), cache=True, error_model="numpy")(
                _per_op.build(op)[kind.__name__])
        return _COMPILED[key]


@functools.cache
def _function(kind, op, src, out):
    """(init, address): the fold's start for op with `kind`, and the address of kind's cfunc
    for src's and out's dtypes (one cached lookup: the small-op paths run it on every call).
    A rows fold of a float32 sum starts from a float32 zero: it runs in float32 (see _sum)."""
    if narrow.is_narrow_dtype(src) or narrow.is_narrow_dtype(out):
        raise narrow.Widen  # (float16 and bfloat16 compute in float32: the launcher converts)
    if kind is along_function:
        init = scalar.identity(MAX if op != CUMSUM else SUM, scalar.acc_dtype(out))
    else:
        init = scalar.fold_start(op, out)[1]
        if kind is rows_function and op in (SUM, MEAN) and out == np.float32:
            init = np.float32(0)
    return init, _compiled(kind, op, src, out, init.dtype).address


def reduce(op, out, src, reduced, index=None, correction=0.0):
    """out = op over the `reduced` dims of src. out (C-contiguous) has src's shape without
    those dims and the result dtype; index (int64, like out) receives ARGMAX/ARGMIN indices.
    ARGMAX/ARGMIN count their index over `reduced` in logical (C) order."""
    try:
        _reduce(op, out, src, reduced, index, correction)
    except narrow.Widen:
        narrow.call(_reduce, (op, out, src, reduced, index, correction))


def _reduce(op, out, src, reduced, index, correction):
    if not out.size:
        return
    idx = _NO_INDEX if index is None else index.reshape(-1)
    flat_out = out.reshape(-1)
    if not src.size:  # every output reduces an empty range
        init, function = _function(rows_function, op, src.dtype, out.dtype)
        reduce_frame(function, np.empty(0, src.dtype), 0, (out.size, 1, 0, 1), (0, 0, 0, 0),
                     flat_out, idx, 0, (1, 0, 0, 0), init, correction, out.size)
        return
    sizes = _dense_sizes(src, reduced) if src.size < PARALLEL_MIN else None
    if sizes is not None:  # small and dense: no plan (_launch's choice of rows or columns)
        n_a, n_r, n_c = sizes
        columns = n_c >= COLUMNS_MIN
        init, function = _function(columns_function if columns else rows_function, op,
                                   src.dtype, out.dtype)
        reduce_dense(function, src.reshape(-1), flat_out, idx, init, correction, n_a, n_r, n_c,
                     n_a * -(-n_c // CHUNK) if columns else n_a * n_c)
        return
    flat, (slabs, shape, ss, os) = _reduce_plan(src, out, reduced, op in (ARGMAX, ARGMIN))
    for so, oo in slabs:
        _launch(op, flat, so, shape, ss, flat_out, idx, oo, os, correction)


def reduce_all(op, out, src):
    """`reduce` over every dim of a non-empty src into the 0-d out, for the small-op path: a
    small contiguous src is one dense row, run at once."""
    # (reduce's own dense path costs ~1.5 us more here: its checks, sizes and index buffers)
    if src.size >= PARALLEL_MIN or not (src.flags.c_contiguous and src.flags.writeable):
        return reduce(op, out, src, tuple(range(src.ndim)))  # (the second test: _dense_sizes')
    try:
        init, function = _function(rows_function, op, src.dtype, out.dtype)
    except narrow.Widen:
        return narrow.call(reduce_all, (op, out, src))
    reduce_dense(function, src.reshape(-1), out.reshape(1), _NO_INDEX, init, 0.0, 1,
                 src.size, 1, 1)


def _columns(shape, ss):
    """Whether a frame is worked as columns: C is the densest dim and wide enough to vectorise."""
    return shape[3] >= COLUMNS_MIN and 1 <= ss[3] < ss[2]


def _launch(op, src, so, shape, ss, out, idx, oo, os, correction):
    """Run one frame: columns or rows; parallel from PARALLEL_MIN elements (unless on one
    thread), with the work units (rows, or column chunks) split into parts when there are fewer
    than 8 per thread."""
    n_a, n_r1, n_r2, n_c = shape
    columns = _columns(shape, ss)
    init, function = _function(columns_function if columns else rows_function, op, src.dtype,
                               out.dtype)
    units = n_a * -(-n_c // CHUNK) if columns else n_a * n_c
    if serial(n_a * n_r1 * n_r2 * n_c):
        reduce_frame(function, src, so, shape, ss, out, idx, oo, os, init, correction, units)
        return
    threads = num_threads()  # a kernel calling this could not be cached
    pieces = n_r1 * n_r2 if columns else n_r1 * -(-n_r2 // BLOCK)
    parts = 1 if units >= 8 * threads else max(1, min(pieces, 4 * threads // units))
    reduce_parallel(function, src, so, shape, ss, out, idx, oo, os, init, correction, units,
                    parts, min(CHUNK, n_c) if columns else 1, min(units * parts, 4 * threads))


def _along_plan(src, out, dim):
    """(flat src, plan) for an op along `dim` into out (C-contiguous, src's shape)."""
    plan = _contiguous_plan(src, (dim,))
    if plan is not None:
        slabs, shape, ss, _ = plan
        return src.reshape(-1), (slabs, shape, ss, ss)  # out has src's strides
    os = [s // out.itemsize for s in out.strides]
    if src.strides[dim] == 0 and src.shape[dim] > 1:  # a broadcast dim: run on a copy
        tmp = np.empty(src.shape, src.dtype)
        _copy(tmp, src)
        src = tmp
    flat, ss = _flat(src)
    return flat, _frames(src.shape, ss, os, (dim,), True)


def along(op, out, src, dim):
    """out = op(src) along `dim` for SOFTMAX, LOG_SOFTMAX (out float) and CUMSUM; out is
    C-contiguous with src's shape. Rows (or column chunks) are the threads' work units."""
    try:
        _along(op, out, src, dim)
    except narrow.Widen:
        narrow.call(_along, (op, out, src, dim))


def _along(op, out, src, dim):
    if not out.size:
        return
    flat, (slabs, shape, ss, os) = _along_plan(src, out, dim)
    columns = _columns(shape, ss)
    init, function = _function(along_function, op, src.dtype, out.dtype)
    units = shape[0] * (-(-shape[3] // CHUNK) if columns else shape[3])
    for so, oo in slabs:
        args = (function, flat, so, shape, ss, out.reshape(-1), oo, os, init, int(columns))
        if serial(shape[0] * shape[2] * shape[3]):
            along_frame(*args, units)
        else:
            along_parallel(*args, units, min(units, 4 * num_threads()))


# -- softmax's and log_softmax's backward along the last dim of C-contiguous rows -----------------
@register_jitable(fastmath=_REASSOC, error_model="numpy", _nrt=False)
def _softmax_grad_row(g, y, out, lo, n, log):
    """out[lo:lo + n] from one row of g (upstream) and y (the result): y (g - sum(g y)), or with
    `log` g - exp(y) sum(g); the sum in float64, over vector lanes. (Slices indexed from 0:
    indices Numba knows are not negative, which LLVM vectorises.)"""
    wide()
    g, y, out = g[lo:lo + n], y[lo:lo + n], out[lo:lo + n]
    total = 0.0
    if log:
        for j in range(n):
            total += g[j]
        t = cast_like(total, g[0])
        for j in range(n):
            out[j] = g[j] - exp(y[j]) * t
    else:
        for j in range(n):
            total += np.float64(g[j]) * y[j]
        t = cast_like(total, g[0])
        for j in range(n):
            out[j] = y[j] * (g[j] - t)


@twins(first_small)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def softmax_grad_rows(g, y, out, n, log):
    """The gradient of softmax (log_softmax with `log`) along rows of n elements of the flat
    C-contiguous g, y and out: a row per task, the same bits at any thread count."""
    rows = g.size // n
    if serial(g.size):
        for r in range(rows):
            _softmax_grad_row(g, y, out, r * n, n, log)
    else:
        for r in prange(rows):
            _softmax_grad_row(g, y, out, r * n, n, log)


def softmax_grad(out, g, y, log):
    """out = softmax's (log_softmax's with `log`) gradient along the last dim, for the
    C-contiguous upstream g and result y of one float dtype (last dim >= 1)."""
    softmax_grad_rows(g.reshape(-1), y.reshape(-1), out.reshape(-1), y.shape[-1], bool(log))
