"""CUDA indexing: views, flip, masked_fill, gather, and advanced indexing.

Advanced indexing plans its rows as the CPU backend does (kernels/cpu/indexing.py) from host
copies of the index tensors -- their values must be checked before anything is written, which
reads them anyway, as torch's nonzero and bool masks synchronise too -- then copies the rows on
the device."""
import numpy as np
from numba import cuda

from ..cpu import indexing as cpu
from ..cpu.strided import as_4d
from ..scalar import elementwise as s
from . import driver
from .access import atomic_add, load, offset4, store
from .memory import DeviceArray, pointer, strides


def as_strided(buf, shape, strides_, offset=0):
    return cpu.as_strided(buf, shape, strides_, offset).view(DeviceArray)


def view_dtype(buf, np_dtype):
    return buf.view(np_dtype)


def flip(out, src, dims):
    """out = src reversed along `dims`: a copy from a view walking those dims backwards."""
    if out.size:
        from . import copy
        es = strides(src)
        start = sum((src.shape[d] - 1) * es[d] for d in dims)
        copy(out, as_strided(src, src.shape,
                             [-x if d in dims else x for d, x in enumerate(es)], start))


def masked_fill(buf, mask, value):
    """buf[mask] = value; `mask` is bool with buf's shape (broadcast views are fine)."""
    if buf.size:
        from .elementwise import launch
        launch("ternary", s.WHERE, buf, mask, buf.dtype.type(value), buf)


def flatnonzero(buf):
    """int64 C-order positions of `buf`'s non-zero elements, as a new 1-D DeviceArray (the
    count decides the result's size, so it is read on the host, as torch.nonzero does)."""
    from . import from_numpy, to_numpy
    return from_numpy(np.flatnonzero(to_numpy(buf)).astype(np.int64))


def unravel(out, lin, shape):
    """out[k, :] = the coordinates in `shape` of the C-order position lin[k]."""
    if out.size:
        from . import copy, from_numpy, to_numpy
        coords = np.stack(np.unravel_index(to_numpy(lin), shape), axis=1).astype(out.dtype)
        copy(out, from_numpy(coords))


@driver.jit
def gather_kernel(o, oo, o0, o1, o2, o3, x, xo, x0, x1, x2, x3, ix, io, i0, i1, i2, i3,
                  n, n1, n2, n3, dstride, dsize, bad, bo):
    """o = x[..., ix[...], ...] along one dim (x walked with stride 0 there); the first
    position of an index out of range is stored into bad (left alone when all are fine)."""
    e = cuda.grid(1)
    while e < n:
        j = load(ix, io + offset4(e, n1, n2, n3, i0, i1, i2, i3))
        if j < 0 or j >= dsize:
            store(bad, bo, e)
        else:
            store(o, oo + offset4(e, n1, n2, n3, o0, o1, o2, o3),
                  load(x, xo + offset4(e, n1, n2, n3, x0, x1, x2, x3) + j * dstride))
        e += cuda.gridsize(1)


def gather(out, src, dim, index):
    """torch.gather; returns None, or an index value out of [0, src.shape[dim])."""
    if not out.size:
        return None
    from . import from_numpy, to_numpy
    es = strides(src)
    along = as_strided(src, out.shape, [0 if d == dim else x for d, x in enumerate(es)])
    flag = from_numpy(np.full(1, -1, np.int64))
    for o, x, i in as_4d(out, along, index):
        shape = o.shape
        driver.launch_1d(gather_kernel, o.size, *pointer(o), *strides(o), *pointer(x),
                         *strides(x), *pointer(i), *strides(i), o.size, *shape[1:],
                         es[dim], src.shape[dim], *pointer(flag))
    bad = int(to_numpy(flag)[0])
    if bad < 0:
        return None
    return int(to_numpy(index).reshape(-1)[0]) if index.size == 1 else \
        int(next(v for v in to_numpy(index).reshape(-1) if not 0 <= v < src.shape[dim]))


@driver.jit
def rows_kernel(d, do, drows, dro, dstep, dk, x, xo, srows, sro, sstep, sk, has_d, has_s,
                rows, k):
    """For each row r: k elements from x[srows[r] + j * sk] to d[drows[r] + j * dk]; rows
    without a table are evenly spaced (r * step)."""
    e = cuda.grid(1)
    while e < rows * k:
        r = e // k
        j = e % k
        to = load(drows, dro + r) if has_d else r * dstep
        fr = load(srows, sro + r) if has_s else r * sstep
        store(d, do + to + j * dk, load(x, xo + fr + j * sk))
        e += cuda.gridsize(1)


def _copy_rows(v, r, pre, post, mid, gather):
    from . import from_numpy
    dst, drows, dstep, dk, src, srows, sstep, sk, rows, k = cpu.row_plan(v, r, pre, post, mid,
                                                                          gather)
    if rows * k:
        tables = [from_numpy(t) if t.size else from_numpy(np.zeros(1, np.int64))
                  for t in (drows, srows)]
        driver.launch_1d(rows_kernel, rows * k, *pointer(dst), *pointer(tables[0]), dstep, dk,
                         *pointer(src), *pointer(tables[1]), sstep, sk, drows.size > 0,
                         srows.size > 0, rows, k)


def _host(entries):
    from . import to_numpy
    return [(dims, to_numpy(idx)) for dims, idx in entries]


def index(out, src, entries, pre, post, negative=True):
    """Advanced indexing (see the CPU backend's `index`)."""
    if not out.size:
        return None
    mid, bad = cpu.index_offsets(src, out.shape[len(pre):out.ndim - len(post)], _host(entries),
                                 negative)
    if bad is None:
        _copy_rows(src, out, pre, post, mid, gather=True)
    return bad


def index_put(dst, entries, pre, post, value, negative=True):
    """dst[...] = value (see the CPU backend's `index_put`)."""
    if not value.size:
        return None
    mid, bad = cpu.index_offsets(dst, value.shape[len(pre):value.ndim - len(post)],
                                 _host(entries), negative)
    if bad is None:
        _copy_rows(dst, value, pre, post, mid, gather=False)
    return bad


@driver.jit
def accumulate_kernel(o, oo, p, po, v, vo, n):
    """o[p[i]] += v[i] for every i, by atomic adds: positions may repeat."""
    i = cuda.grid(1)
    while i < n:
        atomic_add(o, oo + load(p, po + i), load(v, vo + i))
        i += cuda.gridsize(1)


@driver.jit
def take_add_kernel(o, oo, v, vo, p, po, n, m, size, inner):
    """o (outer, size, inner) += v (outer, m, inner) at the positions p (m) of o's middle dim,
    a thread per element of v, by atomic adds: positions may repeat."""
    e = cuda.grid(1)
    while e < n:
        r = e // inner
        j = load(p, po + r % m)
        row = r // m * size + (j + size if j < 0 else j)
        atomic_add(o, oo + row * inner + e % inner, load(v, vo + e))
        e += cuda.gridsize(1)


# the dtypes the GPU adds atomically; others add in a wider one (float16 in float32)
_ATOMIC = {np.dtype(d): np.dtype(d) for d in (np.float32, np.float64, np.int32, np.int64)}
_ATOMIC[np.dtype(np.float16)] = np.dtype(np.float32)


def _atomically(out, launch):
    """Run `launch(target)`, which adds into target atomically: `out` itself, or a copy in the
    dtype the GPU adds atomically, copied back after."""
    from . import copy, empty
    wide = _ATOMIC.get(out.dtype, np.dtype(np.int64))
    target = out
    if wide != out.dtype:
        target = empty(out.shape, wide)
        copy(target, out)
    launch(target)
    if target is not out:
        copy(out, target)


def accumulate(out, positions, values):
    """out[positions[i]] += values[i], repeated positions included (the backward of every
    gather); all three 1-D and contiguous, positions int64 and in range."""
    if positions.size:
        _atomically(out, lambda target: driver.launch_1d(
            accumulate_kernel, positions.size, *pointer(target), *pointer(positions),
            *pointer(values), positions.size))


def take_add(out, values, index, size, inner):
    """out += values at the rows `index` of its middle dim (see the CPU backend's take_add)."""
    if values.size:
        _atomically(out, lambda target: driver.launch_1d(
            take_add_kernel, values.size, *pointer(target), *pointer(values), *pointer(index),
            values.size, index.size, size, inner))
