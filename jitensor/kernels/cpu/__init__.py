"""The CPU backend: NumPy allocates, @njit kernels fill, copy and generate.

Buffers are NumPy arrays (views included); every launcher takes them as they are and picks the
flat kernel for contiguous buffers or the coalesced 4-D kernel for any other layout."""
import ctypes
import os
import sys

import numba
import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import (  # noqa: F401,E501 (op families)
    attention,
    complex_ops,
    conv,
    ctc,
    custom,  # noqa: F401 (user-written kernels: jitensor/custom.py)
    elementwise,
    factor,
    fft,
    indexing,
    kernels,
    linalg,
    loss,
    memory,
    narrow,  # noqa: F401 (float16 and bfloat16 kernels compute in float32)
    norm,
    optim,
    pool,
    recurrent,
    reduction,
    sort,
    sparse,
)
from .strided import as_4d

# The threading layer: TBB where the `tbb` wheel is installed (a dependency on Linux x86_64),
# else GNU OpenMP. With a busy process beside it, OpenMP's spinning pool waits for its thread on
# the busy core, where TBB's calling thread takes the work itself (docs/design.md, "Threads and
# fork"). Both are thread-safe, which parallel kernels called from several Python threads need
# (numba's `workqueue` is not).
# Numba's "threadsafe" tries TBB first, but finds the wheel's library only on the loader's
# path: loaded here by its path, it is found. A user's explicit NUMBA_THREADING_LAYER stands.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "threadsafe"
    _tbb = os.path.join(sys.prefix, "lib", "libtbb.so.12")
    if os.path.exists(_tbb):
        ctypes.CDLL(_tbb, mode=ctypes.RTLD_GLOBAL)


# The first call of any kernel in a process sets up Numba's CPU target (~0.15 s, 0.3 s when SciPy
# is installed, which Numba then imports): pay it at import, so that a user's first op runs in
# milliseconds from the on-disk cache. With a serial kernel: loading a parallel one would start
# the thread pool, and children forked from then on run on one thread (kernels.FORKED).
indexing.accumulate_kernel(np.empty(0, np.float32), np.empty(0, np.int64),
                           np.empty(0, np.float32))


empty = memory.empty  # (shape, np_dtype): NumPy's allocator, large blocks pooled




def _read_only(out):
    """The error for a write into memory NumPy marks read-only (Numba would report a typing
    error instead)."""
    return RuntimeError("cannot write into this tensor: its memory is read-only (it came from a "
                        "read-only NumPy array); copy it first with .clone()")


def fill(out, value):
    if not out.flags.writeable:
        raise _read_only(out)
    if out.flags.c_contiguous:  # 1-D or 2-D as it is, else raveled (see elementwise.FLAT_NDIM)
        flat = out if elementwise.FLAT_NDIM[out.ndim] else out.ravel()
        if out.size < kernels.MOVE_PARALLEL_MIN:
            kernels.fill_flat(flat, value)
        else:
            kernels.fill_flat_parallel(flat, value)
    elif out.size:
        for (view,) in as_4d(out):
            kernels.fill_4d(view, value)


def copy(out, src):
    """out[...] = src with C casting; `src` has out's shape (broadcast views are fine) and may
    overlap `out`, in which case it is read from a snapshot first."""
    if not out.size:
        return
    if not out.flags.writeable:
        raise _read_only(out)
    if src.dtype.kind == "c" and out.dtype.kind != "c":  # complex to real: the real part
        src = src.real
    if not any(src.strides):  # one element seen everywhere (an expand of a scalar): a fill,
        fill(out, src[(0,) * src.ndim])  # vectorised (the 4-D copy's stride-0 rows were not)
        return
    if np.may_share_memory(out, src):
        snapshot = np.empty(src.shape, src.dtype)
        copy(snapshot, src)
        src = snapshot
    if out.flags.c_contiguous and src.flags.c_contiguous:  # as in fill
        if not elementwise.FLAT_NDIM[out.ndim]:
            out, src = out.ravel(), src.ravel()
        if out.size < kernels.MOVE_PARALLEL_MIN:
            kernels.copy_flat(out, src)
        else:
            kernels.copy_flat_parallel(out, src)
    elif out.dtype == src.dtype and src.nbytes <= 1 << 21 and kernels.serial(out.size):
        # strided, on one thread: NumPy's copy (a permute to 8x32x4x16 float32 12.7 -> 5.1 us,
        # a 3x4 transpose 5.9 -> 0.3 us: the 4-D loop indexes every element through its
        # strides); the bits are the same
        np.copyto(out, src)
    else:
        for o, s in as_4d(out, src):
            # a transposed read of more than L2 holds (4096^2 float32: 2.5x faster tiled; a
            # 128 x 784 one runs faster untiled, from cache)
            tiled = abs(s.strides[3]) > abs(s.strides[2]) > 0 and s.nbytes > 1 << 21
            (kernels.copy_4d_tiled if tiled else kernels.copy_4d)(o, s)


def arange(out, start, step):
    kernels.arange(out, start, step)


def linspace(out, start, end):
    kernels.linspace(out, start, end)


def eye(out):
    kernels.eye(out)


def _generate(kernel, out, *args):
    """Run a flat generator kernel into `out`, through a contiguous buffer if `out` has gaps."""
    if out.flags.c_contiguous:
        kernel(out, *args)
    else:
        tmp = np.empty(out.shape, out.dtype)
        kernel(tmp, *args)
        copy(out, tmp)


def uniform(out, seed, offset, low, high):
    _generate(kernels.uniform, out, seed, offset, low, high, 24 if out.itemsize == 4 else 53)


def normal(out, seed, offset, mean, std):
    _generate(kernels.normal, out, seed, offset, mean, std)


def randint(out, seed, offset, low, high):
    _generate(kernels.randint, out, seed, offset, low, float(high - low))


def to_numpy(buf):
    return buf


def from_numpy(array):
    return array


def join(out, pieces, dim, new_dim=False):
    """out = pieces (out's dtype) joined along `dim` (stacked along a new one with `new_dim`)
    by NumPy, one C loop, where that serves: on one thread or below the parallel copy's size.
    False where cat's copy per piece is left to do it (a copy through Python per piece made a
    DataLoader's collate slow: docs/design.md, "Small-op latency")."""
    if out.size >= kernels.MOVE_PARALLEL_MIN and not kernels.single_thread() \
            or not out.flags.writeable:
        return False
    if new_dim and dim < pieces[0].ndim:  # new dim and the next merged: a concatenation
        shape = pieces[0].shape  # (np.stack reshapes each piece in Python: twice the time)
        out = out.reshape(shape[:dim] + (len(pieces) * shape[dim],) + shape[dim + 1:])
        new_dim = False
    (np.stack if new_dim else np.concatenate)(pieces, axis=dim, out=out)
    return True


def empty_like(buf, np_dtype):
    """Uninitialised, keeping a dense permuted layout (torch's preserve_format)."""
    return np.empty_like(buf, np_dtype, order="K")


def broadcast_to(buf, shape):
    """A stride-0 view of `buf` with `shape`. Writeable (unlike np.broadcast_to's) because Numba
    types read-only arrays apart and would compile every kernel twice; kernels only read it."""
    lead = len(shape) - buf.ndim
    strides = tuple([0] * lead + [0 if n == 1 and m != 1 else s
                                  for n, m, s in zip(buf.shape, shape[lead:], buf.strides,
                                                     strict=False)])
    if buf.flags.c_contiguous and buf.size:  # an ndarray over buf's buffer: 0.3 us, not 2.3
        return np.ndarray(shape, buf.dtype, buf, 0, strides)
    return as_strided(buf, shape, strides)


def item(buf):
    """The element of a one-element buffer, as a NumPy scalar of its dtype."""
    return buf.reshape(-1)[0]


def one_element(buf, shape):
    """What an elementwise kernel reads for an operand of one element broadcast to `shape`
    (a 0-d tensor; the expanded gradient of a full reduction, stride 0 everywhere): the
    element as a number, which skips the strided 4-D path, its view building and the copy of
    each row it would gather."""
    return buf[(0,) * buf.ndim]


def data_ptr(buf):
    return buf.ctypes.data
