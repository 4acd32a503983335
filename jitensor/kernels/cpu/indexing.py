"""CPU indexing: strided views, gathers and scatters through offset tables, masks, flips.

Kernels see every operand as a flat 1-D C array (`_flat`: the memory of a view from its first
element to its last) plus int64 sizes and strides in elements, so one compiled signature serves
every ndim and layout without copying a non-contiguous input. Sizes and strides are coalesced
first (`strided.coalesce`), so most walks run over one or two dims. Kernels that only move
elements see them as unsigned ints of the same width (`_bits`): four signatures, not eight, to
compile on a cold cache.

Advanced indexing is one kernel, `index_copy`, over rows: every element of the result but its
innermost (coalesced) dim is a row, copied as a strided run of `k` elements. Each side gives
its row offsets as an int64 table or, when they are evenly spaced (a dense result, say), as a
step, so the same loop gathers (`index`: indexed source -> result) and scatters (`index_put`:
value -> indexed destination) with one load and one store per element, which keeps many random
reads in flight."""
import math

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from .kernels import _unravel, copy_4d, first_small, prange_only, serial, twins
from .strided import AnyLayout, as_4d, coalesce

CHUNK = 1 << 14  # elements per task in the kernels that walk a strided operand in parallel

# A call that passes arrays increments and decrements their reference counts atomically; with
# threads sharing those arrays, a random gather ran 10x slower (250 ms instead of 25 ms for 1e6
# floats). So helpers called per element or per row are inlined into the numba IR
# (inline="always"), and `_offset` gets thread-local copies of its arrays.


# -- views -------------------------------------------------------------------------------------
class _Memory:
    """What np.asarray reads a view from: an __array_interface__, and the array it points
    into (kept alive as the view's base)."""

    __slots__ = ("__array_interface__", "base")


def as_strided(buf, shape, strides, offset=0):
    """A view of `buf`'s memory; `strides` and `offset` (from buf's first element) count
    elements. The caller keeps every address inside buf's memory."""
    size = buf.itemsize
    if buf.flags.c_contiguous:  # an ndarray over buf's own buffer: 0.3 us, the interface 2-3
        try:
            return np.ndarray(shape, buf.dtype, buf, offset * size,
                              tuple(s * size for s in strides))
        except ValueError:  # an empty view whose offset lies past buf's end: NumPy refuses
            pass
    face = buf.__array_interface__
    ptr, readonly = face["data"]
    mem = _Memory()
    mem.base = buf
    mem.__array_interface__ = {"version": 3, "typestr": face["typestr"], "shape": tuple(shape),
                               "strides": tuple(s * size for s in strides),
                               "data": (ptr + offset * size, readonly)}
    view = np.asarray(mem)
    # (the interface's typestr names a bfloat16 only as 2 bytes of void)
    return view if view.dtype is buf.dtype else view.view(buf.dtype)


def view_dtype(buf, np_dtype):
    """`buf` reinterpreted as `np_dtype` (the caller checked torch's layout rules)."""
    return buf.view(np_dtype)


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(a):
    """`a` viewed as unsigned ints of its width: what copies see (no value changes); complex128
    as it is (copying its numbers changes no bit either)."""
    return a.view(_UINT[a.itemsize]) if a.itemsize in _UINT else a


def _truthy_bits(dtype):
    """The bits of an element that make it non-zero (a float's sign alone does not: -0.0)."""
    ones = np.iinfo(_UINT[dtype.itemsize]).max
    return _UINT[dtype.itemsize](ones >> 1 if dtype.kind == "f" else ones)


def _estrides(a):
    return [s // a.itemsize for s in a.strides]


def _flat(a):
    """The 1-D C array over `a`'s memory, from its first element to its last."""
    if a.flags.c_contiguous:
        return a.reshape(-1)  # a NumPy view, ten times cheaper to make than as_strided's
    span = (1 + sum((n - 1) * s for n, s in zip(a.shape, _estrides(a), strict=False))
            if a.size else 0)
    return as_strided(a, (span,), (1,))


def _meta(shape, *strides):
    """Coalesced int64 (shape, strides) arrays for the walking kernels: strides is 2-D, one row
    per operand."""
    merged, per_operand = coalesce(shape, *strides)
    return np.array(merged, np.int64), np.array(per_operand, np.int64).reshape(len(strides), -1)


# -- scalar helpers shared by the kernels ------------------------------------------------------
@register_jitable
def _offset(i, shape, strides):
    """Offset of the C-order position `i` of a block of `shape` with `strides`."""
    off = 0
    for d in range(shape.size - 1, 0, -1):
        off += (i % shape[d]) * strides[d]
        i //= shape[d]
    return off + i * strides[0]


@register_jitable
def _seek(i, shape, strides, pos, offs):
    """Set `pos` to the coordinates of C-order position `i` and offs[k] to operand k's offset."""
    offs[:] = 0
    for d in range(shape.size - 1, -1, -1):
        c = i % shape[d]
        i //= shape[d]
        pos[d] = c
        for k in range(offs.size):
            offs[k] += c * strides[k, d]


@register_jitable
def _chunk(c, n, shape, strides):
    """(first, end, pos, offs) to walk chunk `c` of `n` positions."""
    lo = c * CHUNK
    pos = np.empty(shape.size, np.int64)
    offs = np.empty(strides.shape[0], np.int64)
    _seek(lo, shape, strides, pos, offs)
    return lo, min(n, lo + CHUNK), pos, offs


@register_jitable(inline="always")
def _run(i, hi, shape, pos):
    """How many positions from `i` (before `hi`) lie in the current innermost row: the
    walking kernels loop over such runs with plain strided indexing."""
    return min(hi - i, shape[shape.size - 1] - pos[shape.size - 1])


@register_jitable(inline="always")
def _advance(run, shape, strides, pos, offs):
    """Move `pos` and `offs` on by `run` positions along the innermost dim, carrying into the
    outer dims at the end of a row (an odometer: no divisions)."""
    d = shape.size - 1
    pos[d] += run
    for k in range(offs.size):
        offs[k] += run * strides[k, d]
    while d > 0 and pos[d] == shape[d]:
        for k in range(offs.size):
            offs[k] -= shape[d] * strides[k, d]
        pos[d] = 0
        d -= 1
        pos[d] += 1
        for k in range(offs.size):
            offs[k] += strides[k, d]


# The walking kernels below loop over unit-stride runs through a slice (buf[at:at + run]):
# LLVM vectorizes that, not buf[at + j * step] (0.5 ms against 7.6 ms to count 1e7 bools).

@register_jitable
def _count_true(buf, truthy, shape, strides, c, n):
    i, hi, pos, offs = _chunk(c, n, shape, strides)
    step = strides[0, shape.size - 1]
    count = 0
    while i < hi:
        run, at = _run(i, hi, shape, pos), offs[0]
        if step == 1:
            run_of = buf[at:at + run]
            for j in range(run):
                count += (run_of[j] & truthy) != 0
        else:
            for j in range(run):
                count += (buf[at + j * step] & truthy) != 0
        i += run
        _advance(run, shape, strides, pos, offs)
    return count


@register_jitable
def _write_true(buf, truthy, shape, strides, c, n, out, written, end):
    """Write the positions of chunk c's true elements to out[written:end]. Branch-free (4x
    faster on random masks): every position is stored, and the count of true ones decides
    where the next one goes; once the chunk's slots are full, stores go to out's last slot."""
    i, hi, pos, offs = _chunk(c, n, shape, strides)
    step = strides[0, shape.size - 1]
    spare = out.size - 1
    while i < hi:
        run, at = _run(i, hi, shape, pos), offs[0]
        if step == 1:
            run_of = buf[at:at + run]
            for j in range(run):
                out[written if written < end else spare] = i + j
                written += (run_of[j] & truthy) != 0
        else:
            for j in range(run):
                out[written if written < end else spare] = i + j
                written += (buf[at + j * step] & truthy) != 0
        i += run
        _advance(run, shape, strides, pos, offs)


@register_jitable
def _add_chunk(mid, first, idx, shape, strides, gshape, gstrides, gsize, negative, c, n):
    """mid[i] (+)= offset of index idx[i] in the indexed block; the first bad position or -1."""
    i, hi, pos, offs = _chunk(c, n, shape, strides)
    step = strides[0, shape.size - 1]
    one_dim, g0 = gshape.size == 1, gstrides[0]
    gshape, gstrides = gshape.copy(), gstrides.copy()  # this thread's own (see _offset)
    while i < hi:
        run, at = _run(i, hi, shape, pos), offs[0]
        for j in range(run):
            v = np.int64(idx[at + j * step])
            if v < 0 and negative:
                v += gsize
            if v < 0 or v >= gsize:
                return i + j
            off = v * g0 if one_dim else _offset(v, gshape, gstrides)
            if first:
                mid[i + j] = off
            else:
                mid[i + j] += off
        i += run
        _advance(run, shape, strides, pos, offs)
    return -1


@register_jitable(inline="always")
def _copy_run(dst, d, dk, src, s, sk, k):
    """k elements from src[s + j * sk] to dst[d + j * dk] (unit strides in a loop of their
    own, which vectorises)."""
    if k == 1:
        dst[d] = src[s]
    elif dk == 1 and sk == 1:
        run, source = dst[d:d + k], src[s:s + k]  # indexed from 0: no negative-index tests
        for j in range(k):
            run[j] = source[j]
    else:
        for j in range(k):
            dst[d + j * dk] = src[s + j * sk]


@register_jitable
def _offsets_chunk(out, shape, strides, c, n):
    i, hi, pos, offs = _chunk(c, n, shape, strides)
    step = strides[0, shape.size - 1]
    while i < hi:
        run, at = _run(i, hi, shape, pos), offs[0]
        for j in range(run):
            out[i + j] = at + j * step
        i += run
        _advance(run, shape, strides, pos, offs)


@register_jitable
def _gather_chunk(out, idx, src, shape, strides, dstride, dsize, c, n):
    i, hi, pos, offs = _chunk(c, n, shape, strides)
    last = shape.size - 1
    ostep, istep, sstep = strides[0, last], strides[1, last], strides[2, last]
    while i < hi:
        run, o, x, s = _run(i, hi, shape, pos), offs[0], offs[1], offs[2]
        for j in range(run):
            v = idx[x + j * istep]
            if v < 0 or v >= dsize:
                return i + j
            out[o + j * ostep] = src[s + j * sstep + v * dstride]
        i += run
        _advance(run, shape, strides, pos, offs)
    return -1


@register_jitable
def _first_bad(bad):
    for c in range(bad.size):
        if bad[c] >= 0:
            return bad[c]
    return -1


# -- kernels -----------------------------------------------------------------------------------
@twins(lambda buf, truthy, shape, strides, n: serial(n))
@njit(cache=True, parallel=prange_only())
def count_true_kernel(buf, truthy, shape, strides, n):
    """Per chunk of CHUNK positions, how many elements of the walked operand have some
    `truthy` bit set."""
    chunks = (n + CHUNK - 1) // CHUNK
    counts = np.empty(chunks, np.int64)
    if serial(n):
        for c in range(chunks):
            counts[c] = _count_true(buf, truthy, shape, strides, c, n)
    else:
        for c in prange(chunks):
            counts[c] = _count_true(buf, truthy, shape, strides, c, n)
    return counts


@twins(lambda out, starts, buf, truthy, shape, strides, n: serial(n))
@njit(cache=True, parallel=prange_only())
def write_true_kernel(out, starts, buf, truthy, shape, strides, n):
    """The C-order positions of those elements, chunk c's from out[starts[c]] on; `out` has
    one slot more than there are positions."""
    chunks = starts.size - 1
    if serial(n):
        for c in range(chunks):
            _write_true(buf, truthy, shape, strides, c, n, out, starts[c], starts[c + 1])
    else:
        for c in prange(chunks):
            _write_true(buf, truthy, shape, strides, c, n, out, starts[c], starts[c + 1])


@twins(lambda out, row_stride, col_stride, lin, shape: serial(lin.size * shape.size))
@njit(cache=True, parallel=prange_only())
def unravel_kernel(out, row_stride, col_stride, lin, shape):
    """out[k, d] = coordinate d of the C-order position lin[k] in `shape`."""
    n = lin.size
    if serial(n * shape.size):
        for k in range(n):
            i = lin[k]
            for d in range(shape.size - 1, -1, -1):
                out[k * row_stride + d * col_stride] = i % shape[d]
                i //= shape[d]
    else:
        for k in prange(n):
            i = lin[k]
            for d in range(shape.size - 1, -1, -1):
                out[k * row_stride + d * col_stride] = i % shape[d]
                i //= shape[d]


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def offsets_kernel(out, shape, strides):
    """out[i] = the offset of C-order position i of a block of `shape` with `strides` (2-D,
    one row)."""
    n = out.size
    chunks = (n + CHUNK - 1) // CHUNK
    if serial(n):
        for c in range(chunks):
            _offsets_chunk(out, shape, strides, c, n)
    else:
        for c in prange(chunks):
            _offsets_chunk(out, shape, strides, c, n)


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def add_offsets_kernel(mid, first, idx, shape, strides, gshape, gstrides, gsize, negative):
    """Set (`first`) or add each index's offset in the indexed block into `mid`; the first
    C-order position of an index out of range (callers then discard `mid`), or -1."""
    n = mid.size
    chunks = (n + CHUNK - 1) // CHUNK
    bad = np.empty(chunks, np.int64)
    if serial(n):
        for c in range(chunks):
            bad[c] = _add_chunk(mid, first, idx, shape, strides, gshape, gstrides, gsize,
                                negative, c, n)
    else:
        for c in prange(chunks):
            bad[c] = _add_chunk(mid, first, idx, shape, strides, gshape, gstrides, gsize,
                                negative, c, n)
    return _first_bad(bad)


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def outer_sum_kernel(out, a, b, c):
    """out[(i * b.size + j) * c.size + l] = a[i] + b[j] + c[l]: row offsets from the offsets of
    the dims before, in and after the indexed block."""
    nb, nc = b.size, c.size
    n = out.size
    if serial(n):
        for r in range(n):
            out[r] = a[r // (nb * nc)] + b[r // nc % nb] + c[r % nc]
    else:
        for r in prange(n):
            out[r] = a[r // (nb * nc)] + b[r // nc % nb] + c[r % nc]


@twins(lambda *args: serial(args[-2] * args[-1]))  # rows * k
@njit(cache=True, parallel=prange_only())
def index_copy_kernel(dst, drows, dstep, dk, src, srows, sstep, sk, rows, k):
    """For each row r: k elements from src[srows[r] + j * sk] to dst[drows[r] + j * dk]; an
    empty table stands for the evenly spaced rows r * step."""
    if serial(rows * k):
        for r in range(rows):
            _copy_run(dst, drows[r] if drows.size else r * dstep, dk,
                      src, srows[r] if srows.size else r * sstep, sk, k)
    else:
        for r in prange(rows):
            _copy_run(dst, drows[r] if drows.size else r * dstep, dk,
                      src, srows[r] if srows.size else r * sstep, sk, k)


TAKE_BLOCK = 4096  # elements of out per task


@register_jitable(_nrt=False)
def _take_block(out, src, idx, size, inner, lo, hi):
    """Rows lo..hi-1 of take_kernel's out, row o * m + i taking src's row o * size + idx[i]:
    runs of i for one o at a time, the 1-D gather (a row per element) a loop of its own."""
    m = idx.size
    r = lo
    while r < hi:
        o = r // m
        first = r - o * m
        last = min(m, first + hi - r)
        out_row, src_row = o * m, o * size
        if inner == 1:
            for i in range(first, last):
                j = idx[i]
                out[out_row + i] = src[src_row + (j + size if j < 0 else j)]
        else:
            for i in range(first, last):
                j = idx[i]
                _copy_run(out, (out_row + i) * inner, 1, src,
                          (src_row + (j + size if j < 0 else j)) * inner, 1, inner)
        r += last - first


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def take_kernel(out, src, idx, size, inner, negative):
    """out (outer, m, inner) = src (outer, size, inner) at the positions idx (m) of its middle
    dim, all flat and C-contiguous (negative positions count from the end when `negative`):
    x[idx] and index_select in one pass. Returns the first i with idx[i] out of range, before
    writing anything, or -1."""
    low = -size if negative else 0
    for i in range(idx.size):
        if not low <= idx[i] < size:
            return i
    rows = out.size // inner if inner else 0
    per_task = max(1, TAKE_BLOCK // max(inner, 1))
    tasks = (rows + per_task - 1) // per_task
    if serial(out.size):
        _take_block(out, src, idx, size, inner, 0, rows)
    else:
        for t in prange(tasks):
            _take_block(out, src, idx, size, inner, t * per_task, min(rows, (t + 1) * per_task))
    return -1


@twins(lambda out, idx, src, shape, *args: serial(math.prod(shape)))
@njit(cache=True, parallel=prange_only())
def gather_kernel(out, idx, src, shape, strides, dstride, dsize):
    """torch.gather over a walk of (out, idx, src with stride 0 along dim); the first C-order
    position of an index out of [0, dsize), or -1."""
    n = 1
    for s in shape:
        n *= s
    chunks = (n + CHUNK - 1) // CHUNK
    bad = np.empty(chunks, np.int64)
    if serial(n):
        for c in range(chunks):
            bad[c] = _gather_chunk(out, idx, src, shape, strides, dstride, dsize, c, n)
    else:
        for c in prange(chunks):
            bad[c] = _gather_chunk(out, idx, src, shape, strides, dstride, dsize, c, n)
    return _first_bad(bad)


@njit(cache=True)
def accumulate_kernel(out, positions, values):
    # serial: repeated positions must add up, and no two threads may race on one element
    for i in range(positions.size):
        out[positions[i]] += values[i]


@njit(cache=True)
def take_add_kernel(out, values, idx, size, inner):
    """out (outer, size, inner) += values (outer, m, inner) at the positions idx (m, in range,
    negatives counting from the end) of out's middle dim, all flat and C-contiguous: the
    backward of take_kernel. Serial, as accumulate_kernel: repeated positions add up."""
    m = idx.size
    for r in range(values.size // inner if inner else 0):
        j = idx[r % m]
        row = (r // m * size + (j + size if j < 0 else j)) * inner
        for k in range(inner):
            out[row + k] += values[r * inner + k]


@twins(first_small, AnyLayout)
@njit(cache=True, parallel=prange_only())
def masked_fill_4d(out, mask, value):
    n0, n1, n2, n3 = out.shape
    rows = n0 * n1 * n2
    if serial(rows * n3):
        for r in range(rows):
            a, b, c = _unravel(r, n1, n2)
            for d in range(n3):
                if mask[a, b, c, d]:
                    out[a, b, c, d] = value
    else:
        for r in prange(rows):
            a, b, c = _unravel(r, n1, n2)
            for d in range(n3):
                if mask[a, b, c, d]:
                    out[a, b, c, d] = value


# -- launchers ---------------------------------------------------------------------------------
def flatnonzero(buf):
    """int64 C-order positions of `buf`'s non-zero (true) elements, as a new 1-D buffer."""
    if not buf.size:
        return np.empty(0, np.int64)
    bits, truthy = _bits(_flat(buf)), _truthy_bits(buf.dtype)
    shape, strides = _meta(buf.shape, _estrides(buf))
    counts = count_true_kernel(bits, truthy, shape, strides, buf.size)
    starts = np.zeros(counts.size + 1, np.int64)
    np.cumsum(counts, out=starts[1:])  # chunk offsets: index metadata, one per 16K elements
    out = np.empty(starts[-1] + 1, np.int64)  # + the slot false elements are stored to
    write_true_kernel(out, starts, bits, truthy, shape, strides, buf.size)
    return out[:-1]


def unravel(out, lin, shape):
    """out[k, :] = the coordinates in `shape` of the C-order position lin[k]; `out` is
    (n, len(shape)) in any layout (nonzero passes the transpose of a (len(shape), n) buffer)."""
    if out.size:
        rows, cols = _estrides(out)
        unravel_kernel(_flat(out), rows, cols, lin, np.array(shape, np.int64))


_NO_TABLE = np.empty(0, np.int64)


def _offsets(shape, strides):
    """Offset table (int64, C order) of a block of `shape` with `strides`."""
    n = math.prod(shape)
    if n <= 1:
        return np.zeros(n, np.int64)
    out = np.empty(n, np.int64)
    offsets_kernel(out, *_meta(shape, strides))
    return out


def _rows(shape, strides):
    """(table, step) for the row offsets of a block: no table when the rows are evenly spaced."""
    merged, (steps,) = coalesce(shape, strides)
    if len(merged) == 1:
        return _NO_TABLE, steps[0]
    return _offsets(shape, strides), 0


def index_offsets(v, bshape, entries, negative):
    """(offsets in `v` of every element of the broadcast index block, None), or (None,
    (k, value)) for the first index of entries[k] out of range."""
    vstr = _estrides(v)
    mid = np.empty(math.prod(bshape), np.int64)
    for k, (dims, idx) in enumerate(entries):
        gshape, gstrides = _meta([v.shape[d] for d in dims], [vstr[d] for d in dims])
        bidx = np.broadcast_to(idx, bshape)
        shape, strides = _meta(bshape, _estrides(bidx))
        bad = add_offsets_kernel(mid, k == 0, _flat(idx), shape, strides, gshape, gstrides[0],
                                 math.prod(v.shape[d] for d in dims), negative)
        if bad >= 0:
            return None, (k, bidx[np.unravel_index(bad, bshape)].item())
    return mid, None


def _outer_sum(a, b, c):
    out = np.empty(a.size * b.size * c.size, np.int64)
    outer_sum_kernel(out, a, b, c)
    return out


def row_plan(v, r, pre, post, mid, gather):
    """The rows index_copy runs between the indexed tensor `v` (its block offsets in `mid`) and
    the operand `r` shaped [v dims pre] + index block + [v dims post], r <- v when `gather`:
    (dst, dst row table, dst row step, dst element stride, the same four for src, rows, k).
    Shared with the CUDA backend."""
    vstr, rstr = _estrides(v), _estrides(r)
    outer = r.ndim - len(post)
    shape, (vpost, rpost) = coalesce([v.shape[d] for d in post], [vstr[d] for d in post],
                                     rstr[outer:])
    vpre = _offsets([v.shape[d] for d in pre], [vstr[d] for d in pre])
    vtail = _offsets(shape[:-1], vpost[:-1])
    vrows = mid if vpre.size == vtail.size == 1 else _outer_sum(vpre, mid, vtail)
    rrows, rstep = _rows(list(r.shape[:outer]) + shape[:-1], rstr[:outer] + rpost[:-1])
    k = shape[-1]
    v, r = (v, vrows, 0, vpost[-1]), (r, rrows, rstep, rpost[-1])
    (dst, drows, dstep, dk), (src, srows, sstep, sk) = (r, v) if gather else (v, r)
    return dst, drows, dstep, dk, src, srows, sstep, sk, r[0].size // k, k


def _copy_rows(v, r, pre, post, mid, gather):
    dst, drows, dstep, dk, src, srows, sstep, sk, rows, k = row_plan(v, r, pre, post, mid, gather)
    index_copy_kernel(_bits(_flat(dst)), drows, dstep, dk, _bits(_flat(src)), srows, sstep, sk,
                      rows, k)


def index(out, src, entries, pre, post, negative=True):
    """Advanced indexing: out = src[...] where entries are (dims of src, int index buffer)
    pairs, each index a C-order position in the block of those dims, broadcast together to the
    index block of `out` (shaped [src dims pre] + block + [src dims post]). Returns None, or
    (k, value) for an index of entries[k] out of range (negative ones count from the end when
    `negative`)."""
    if not out.size:  # as in torch, indices are only checked where an element is read
        return None
    d, idx = len(pre), entries[0][1]
    if len(entries) == 1 and entries[0][0] == (d,) and idx.ndim == 1 and idx.flags.c_contiguous \
            and src.flags.c_contiguous and out.flags.c_contiguous:  # one index vector: a take
        bad = take_kernel(_bits(out.reshape(-1)), _bits(src.reshape(-1)), idx, src.shape[d],
                          math.prod(src.shape[d + 1:]), negative)
        return None if bad < 0 else (0, int(idx[bad]))
    mid, bad = index_offsets(src, out.shape[len(pre):out.ndim - len(post)], entries, negative)
    if bad is None:
        _copy_rows(src, out, pre, post, mid, gather=True)
    return bad


def index_put(dst, entries, pre, post, value, negative=True):
    """dst[...] = value, the scatter of `index`: `value` has dst's dtype and the indexing
    result's shape (broadcast views are fine) and does not overlap dst. Every index is checked
    before anything is written; returns None or (k, value) as `index` does."""
    if not value.size:
        return None
    mid, bad = index_offsets(dst, value.shape[len(pre):value.ndim - len(post)], entries,
                             negative)
    if bad is None:
        _copy_rows(dst, value, pre, post, mid, gather=False)
    return bad


def accumulate(out, positions, values):
    """out[positions[i]] += values[i] for every i, repeated positions included: the backward of
    every gather (indexing, index_select, gather, take). All 1-D and contiguous."""
    accumulate_kernel(out, positions, values)


def take_add(out, values, index, size, inner):
    """out += values at the rows `index` of its middle dim (see take_add_kernel); out, values
    and index C-contiguous, index checked."""
    take_add_kernel(out.reshape(-1), values.reshape(-1), index.reshape(-1), size, inner)


def gather(out, src, dim, index):
    """torch.gather: out[i][j] = src[index[i][j]][j] (dim 0); `index` is int64 and no larger
    than src outside `dim`. Returns None, or the first index out of [0, src.shape[dim])."""
    if not out.size:
        return None
    sstr = _estrides(src)
    along = [0 if d == dim else s for d, s in enumerate(sstr)]  # src walked beside index
    shape, strides = _meta(out.shape, _estrides(out), _estrides(index), along)
    bad = gather_kernel(_bits(_flat(out)), _flat(index), _bits(_flat(src)), shape, strides,
                        sstr[dim], src.shape[dim])
    return None if bad < 0 else index[np.unravel_index(bad, index.shape)].item()


def masked_fill(buf, mask, value):
    """buf[mask] = value; `mask` is bool with buf's shape (broadcast views are fine)."""
    if buf.size:
        bits = _bits(np.array(value, buf.dtype))[()]
        for out, m in as_4d(_bits(buf), mask):
            masked_fill_4d(out, m, bits)


def flip(out, src, dims):
    """out = src reversed along `dims`: a copy from a view walking those dims backwards."""
    if not out.size:
        return
    strides = _estrides(src)
    start = sum((src.shape[d] - 1) * strides[d] for d in dims)
    backwards = as_strided(src, src.shape, [-s if d in dims else s for d, s in enumerate(strides)],
                           start)
    for o, s in as_4d(out, backwards):
        copy_4d(o, s)
