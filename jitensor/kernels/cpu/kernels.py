"""@njit kernels for filling, copying and generating buffers.

Each kernel is one module-level function with `cache=True` (closures made in a factory miss the
on-disk cache) and `parallel=prange_only()`; below PARALLEL_MIN elements, or on one thread, it
runs a plain loop (`serial`), because starting the thread pool costs several times what filling
a small tensor does (the crossover is measured by `python -m jitensor.bench.threshold`). Small
work runs a plain build of each parallel kernel, which compiles several times faster (`Twins`,
used by the parallel kernels of the other modules too); the flat fill and copy are two
kernels each instead, a plain one and a parallel one. Flat
kernels take C-contiguous buffers of any ndim and view them as 1-D inside (a reshape in Python
would cost more than the fill of a small tensor); the `_4d` kernels take the coalesced 4-D
views of `strided.as_4d`, so one compiled kernel per dtype serves every other layout."""
import os
import sys
import threading

import numba
import numpy as np
from numba import cfunc, njit, prange, types
from numba.core.caching import NullCache
from numba.extending import overload, register_jitable
from numba.np.ufunc import parallel as _pool  # Numba's thread pool (its private names: below)

from ..scalar import creation as scalar
from . import blas, narrow
from .strided import AnyLayout
from .vector import call

PARALLEL_MIN = 1 << 16  # float32 fill on 2 cores: serial 3.5 µs, parallel 3.3 µs
# Flat fills and copies compute nothing and go parallel from a larger size: TBB's workers (the
# threading layer, kernels/cpu/__init__.py) join a loop late enough that a fill crosses over at
# 2^18 elements (`python -m jitensor.bench.threshold`; docs/design.md, "Threads and fork"). Ops
# that compute per element gain from PARALLEL_MIN.
MOVE_PARALLEL_MIN = 1 << 18

# The calling thread's Numba thread count, read at run time from the C function that Numba's
# parallel loops call themselves (registered when its thread pool starts, which loading any
# parallel kernel does first). numba.get_num_threads() in a kernel would stop it being cached.
_num_threads = types.ExternalFunction("get_num_threads", types.intp())


def num_threads():
    """The calling thread's Numba thread count. Once the pool has started it is read from
    Numba's C function directly: numba.get_num_threads() takes two process-wide locks, and a
    child forked while another thread held them waited for them for ever."""
    return _pool._get_num_threads() if _pool._is_initialized else numba.get_num_threads()


def single_thread():
    """Whether the calling thread has one Numba thread: after jt.set_num_threads(1), and in a
    child forked from a process whose GNU OpenMP pool had started (see `_one_thread_after_fork`).
    Parallel kernels then run their plain loops and never enter the pool. Launchers and kernels
    both call it."""
    return num_threads() == 1


FORKED = [False]  # whether this process was forked after its parent's GNU OpenMP pool started


def _one_thread_after_fork():
    """In a child forked after the parent's GNU OpenMP pool started, every thread runs the
    kernels on itself: the pool's threads stayed in the parent, and Numba kills a child that
    enters the pool. Numba's counts are per thread, so this thread is set now and every thread
    the child starts at its first Python event. Only lock-free calls: a lock another thread of
    the parent held at the fork stays held in the child."""
    if not _pool._is_initialized or _pool._threading_layer != "omp":
        return  # no pool yet: the child may start its own
    FORKED[0] = True
    _pool._set_num_threads(1)
    threading.setprofile(_one_thread_here)


def _one_thread_here(frame, event, arg):
    _pool._set_num_threads(1)
    sys.setprofile(None)


os.register_at_fork(after_in_child=_one_thread_after_fork)


@overload(single_thread)
def _single_thread_in_kernels():
    if not _pool._is_initialized:
        numba.get_num_threads()  # starts the pool: the symbol must exist when this compiles
    return lambda: _num_threads() == 1


def prange_only():
    """njit's `parallel` option for these kernels: their prange loops, and nothing else. Numba
    would also make array expressions (a slice assignment, np.full) parallel loops of their own,
    which enter the thread pool even in a kernel's plain-loop branch. (A new dict each time:
    Numba empties the one it is given.)"""
    return dict(comprehension=False, reduction=False, inplace_binop=False, setitem=False,
                numpy=False, stencil=False, fusion=False)


@register_jitable
def serial(n):
    """Whether `n` elements' work runs as a plain loop rather than on the thread pool."""
    return n < PARALLEL_MIN or single_thread()


@register_jitable
def _always(n):
    return True


@register_jitable
def _one_thread():
    return True


@register_jitable
def _one():
    return 1


_making = threading.Lock()  # held while a kernel's copy or twin is made, or a worker compiled


# -- workers: parallel work through one driver compiled once -------------------------------------
# A prange kernel compiles its loop body again, as a function of its own, for every signature:
# conv2d's forward took 5.8 s to compile as a parallel kernel, 2.4 s as its plain twin. A
# *worker* is a cfunc of one signature, worker(context, first, step), which runs tasks first,
# first + step, ... of its work with the arguments packed at `context` (an int64 array:
# `context()`); `run_tasks` runs it on any number of threads through two drivers that compile
# once for the package. Its tasks never depend on the thread count, so neither do its bits.
WORKER = types.void(types.int64, types.int64, types.int64)


@njit(cache=True)
def _run_serial(worker, context):
    call(worker, (context, np.int64(0), np.int64(1)))


@njit(cache=True, parallel=prange_only())
def _run_parallel(worker, context, workers):
    for first in prange(workers):
        call(worker, (context, np.int64(first), workers))


def run_tasks(worker, context, workers):
    """Run the worker at address `worker` with the arguments in `context` on `workers` threads
    (1: on this one, without the thread pool)."""
    address = context.__array_interface__["data"][0]
    if workers == 1:
        _run_serial(worker, address)
    else:
        _run_parallel(worker, address, workers)


def run_worker(worker, threads, *arguments):
    """Run `worker` (a Worker) on `threads` threads with `arguments` packed by `context`, and
    OpenBLAS on one thread meanwhile: a worker's tasks call it on Numba's threads
    (linalg.gemm_blas says why)."""
    blas.on_one_thread(run_tasks, worker.address, context(*arguments), threads)


class Worker:
    """A worker's cfunc (signature WORKER), compiled on first use: a Specialised build makes
    one for each of its workers, and most programs run only some of them."""

    def __init__(self, function, options):
        self.function, self.options, self._cfunc = function, options, None

    @property
    def cfunc(self):
        if self._cfunc is None:
            with _making:
                if self._cfunc is None:
                    self._cfunc = cfunc(WORKER, **self.options)(self.function)
        return self._cfunc

    @property
    def address(self):
        return (self._cfunc or self.cfunc).address


def worker(**options):
    """The `jit` of a worker recorded on a Specialised: `@per_dtype(worker, cache=True)`."""
    return lambda function: Worker(function, options)


def context(*arguments):
    """The int64 array a worker reads its arguments from: an array (C-contiguous: the callers'
    own) as its address then its shape, anything else as an integer."""
    values = []
    for x in arguments:
        if x.__class__ is np.ndarray:
            if narrow.is_narrow_dtype(x.dtype):
                narrow.refuse(x)
            values.append(x.__array_interface__["data"][0])
            values += x.shape
        else:
            values.append(x)
    return np.array(values, np.int64)


def _variant(f, suffix, names):
    """A copy of the Python function f, named f's name + suffix, whose globals are `names`: the
    same code compiled with other helpers or constants. The name keeps its cache files apart
    (Numba names them after the function and its line)."""
    copy = type(f)(f.__code__, names, f.__name__ + suffix, f.__defaults__, f.__closure__)
    copy.__qualname__, copy.__module__, copy.__doc__ = (f.__qualname__ + suffix, f.__module__,
                                                        f.__doc__)
    return copy


class Specialised:
    """Functions compiled once per value of the module globals they branch on: Numba drops the
    branches of a test of a constant (a global included) before typing them, but of an
    argument only when it is None, so a flag passed down as an argument has every branch
    compiled. Decorate them with an instance made on the module's globals, the names of the
    globals that vary, and `suffix(*values)` naming a build (`per_op = Specialised(globals(),
    ("OP",), suffix)`): `@per_op(fastmath=...)` records a `register_jitable` helper,
    `@per_op(njit, cache=True)` a kernel. `build(*values)` gives name -> the copy of each,
    named name + suffix, compiled with those globals set to `values` and calling each other's
    copies (made once per values: later calls are one dict lookup)."""

    def __init__(self, names, constants, suffix):
        self.names, self.constants, self.suffix = names, constants, suffix
        self.functions, self._builds = {}, {}

    def __call__(self, jit=register_jitable, **options):
        def record(f):
            self.functions[f.__name__] = f, jit, options
            return f
        return record

    def build(self, *values):
        names = self._builds.get(values)
        if names is None:
            with _making:
                if values not in self._builds:
                    names = dict(self.names, **dict(zip(self.constants, values, strict=True)))
                    suffix = self.suffix(*values)
                    for name, (f, jit, options) in self.functions.items():
                        copy = _variant(f, suffix, names)
                        names[name] = jit(**options)(copy) if options else jit(copy)
                    self._builds[values] = names
                names = self._builds[values]
        return names


class Twins:
    """A parallel kernel and its plain twin, called as one kernel: the twin runs the calls that
    `plain_when(*args)` says are serial work (below PARALLEL_MIN, or on one thread), the parallel
    kernel the rest. The twin is the same code compiled without `parallel` and without a thread
    test (its `serial()` and `single_thread()` answer True, `num_threads()` 1: a serial kernel
    that calls the pool's symbol crashes when loaded from the disk cache, docs/design.md), so
    its prange loops run as plain loops. It compiles several times faster: a parallel kernel
    also compiles each prange loop as a function of its own, for every signature, and most
    signatures only ever see small work. `wrap` (strided.AnyLayout) wraps both builds.
    Attributes are the parallel kernel's; `plain` is the twin."""

    def __init__(self, kernel, plain_when, wrap=None):
        self.kernel, self.plain_when, self.wrap = kernel, plain_when, wrap or (lambda k: k)
        self.parallel = self.wrap(kernel)
        self._plain = None

    def __getattr__(self, name):
        return getattr(self.parallel, name)

    @property
    def plain(self):
        """The twin, made on first use (when the kernel's module has all its globals)."""
        return self._plain or self._make_plain()

    def _make_plain(self):
        with _making:
            if self._plain is None:
                options = {k: v for k, v in self.kernel.targetoptions.items()
                           if k not in ("parallel", "nopython")}
                cache = not isinstance(self.kernel._cache, NullCache)
                self._plain = self.wrap(njit(cache=cache, **options)(self._twin()))
        return self._plain

    def _twin(self):
        """The kernel's Python function with one-thread answers to its thread tests."""
        f = self.kernel.py_func
        return _variant(f, "_plain", dict(f.__globals__, serial=_always,
                                          single_thread=_one_thread, num_threads=_one))

    @property
    def builds(self):
        """Both dispatchers, the twin's first (their `stats`, `signatures`)."""
        return self.plain, self.parallel

    def __call__(self, *args):
        if self.plain_when(*args):
            return (self._plain or self._make_plain())(*args)
        return self.parallel(*args)


def twins(plain_when, wrap=None):
    """Decorate a parallel kernel as `Twins(kernel, plain_when, wrap)`."""
    return lambda kernel: Twins(kernel, plain_when, wrap)


def first_small(first, *args):
    """`plain_when` of the kernels whose work is their first argument's size."""
    return serial(first.size)


def one_worker(*args):
    """`plain_when` of the kernels whose last argument is the number of threads to use, chosen
    by their launcher (1: their plain loop)."""
    return args[-1] == 1


@register_jitable
def _unravel(r, n1, n2):
    return r // (n1 * n2), r // n2 % n1, r % n2


# The flat fill and copy come as two kernels each: `fill_flat` and `copy_flat`, plain loops for
# the small buffers (below PARALLEL_MIN) that most fills and copies are, and `*_parallel` for
# the rest. A parallel kernel also compiles its prange loop as a function of its own, for every
# signature, and few signatures ever need it (docs/design.md, "Cold start"). The plain ones
# must not call `serial()`: a serial kernel that does crashes when loaded from the disk cache.
@njit(cache=True)
def fill_flat(out, value):
    out = out.reshape(-1)
    for i in range(out.size):
        out[i] = value


@njit(cache=True, parallel=prange_only())
def fill_flat_parallel(out, value):
    out = out.reshape(-1)
    n = out.size
    if single_thread():
        for i in range(n):
            out[i] = value
    else:
        for i in prange(n):
            out[i] = value


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def fill_4d(out, value):
    n0, n1, n2, n3 = out.shape
    rows = n0 * n1 * n2
    if serial(rows * n3):  # nested loops: no division per row (see copy_4d)
        for a in range(n0):
            for b in range(n1):
                for c in range(n2):
                    out[a, b, c, :] = value
    else:
        for r in prange(rows):
            a, b, c = _unravel(r, n1, n2)
            out[a, b, c, :] = value


@njit(cache=True)
def copy_flat(out, src):
    """out[i] = src[i], converting the dtype as a C cast does (float -> int truncates)."""
    out, src = out.reshape(-1), src.reshape(-1)
    for i in range(out.size):
        out[i] = src[i]


@njit(cache=True, parallel=prange_only())
def copy_flat_parallel(out, src):
    out, src = out.reshape(-1), src.reshape(-1)
    n = out.size
    if single_thread():
        for i in range(n):
            out[i] = src[i]
    else:
        for i in prange(n):
            out[i] = src[i]


@twins(first_small, AnyLayout)
@njit(cache=True, parallel=prange_only())
def copy_4d(out, src):
    n0, n1, n2, n3 = out.shape
    rows = n0 * n1 * n2
    if serial(rows * n3):
        # nested loops: a transpose's short rows paid more for their index's divisions
        # (`_unravel`) than for their copy (16x4x32x16 float32 out of a permute: 23.7 -> 8.2 us)
        for a in range(n0):
            for b in range(n1):
                for c in range(n2):
                    for d in range(n3):
                        out[a, b, c, d] = src[a, b, c, d]
    else:
        for r in prange(rows):
            a, b, c = _unravel(r, n1, n2)
            for d in range(n3):
                out[a, b, c, d] = src[a, b, c, d]


TILE = 32  # a 32 x 32 float64 tile of the source spans 32 cache lines: it stays in L1


@twins(first_small, AnyLayout)
@njit(cache=True, parallel=prange_only())
def copy_4d_tiled(out, src):
    """copy_4d for a source read across its last dim (a transpose): tiles of the last two dims,
    so each cache line of the source is read once, not once per element."""
    n0, n1, n2, n3 = out.shape
    tc = (n2 + TILE - 1) // TILE
    tasks = n0 * n1 * tc
    if serial(tasks * TILE * n3):
        for t in range(tasks):
            _copy_tiles(out, src, t, tc, n1, n2, n3)
    else:
        for t in prange(tasks):
            _copy_tiles(out, src, t, tc, n1, n2, n3)


@register_jitable(inline="always")
def _copy_tiles(out, src, t, tc, n1, n2, n3):
    """Task t: rows c0..c0+TILE of out[a, b], tile by tile along the last dim."""
    a, b, c0 = t // (n1 * tc), t // tc % n1, t % tc * TILE
    for d0 in range(0, n3, TILE):
        for c in range(c0, min(c0 + TILE, n2)):
            for d in range(d0, min(d0 + TILE, n3)):
                out[a, b, c, d] = src[a, b, c, d]


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def arange(out, start, step):
    """out[i] = start + i * step, in start's type (float64 or int64) before the store."""
    n = out.size
    if serial(n):
        for i in range(n):
            out[i] = start + i * step
    else:
        for i in prange(n):
            out[i] = start + i * step


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def linspace(out, start, end):
    n = out.size
    if serial(n):
        for i in range(n):
            out[i] = scalar.linspace_at(i, n, start, end)
    else:
        for i in prange(n):
            out[i] = scalar.linspace_at(i, n, start, end)


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def eye(out):
    """Ones on the diagonal, zeros elsewhere, in one pass over the 2-D C-contiguous `out`."""
    rows, cols = out.shape
    if serial(rows * cols):
        for i in range(rows):
            for j in range(cols):
                out[i, j] = i == j
    else:
        for i in prange(rows):
            for j in range(cols):
                out[i, j] = i == j


@twins(first_small)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def uniform(out, seed, offset, low, high, bits):
    out = out.reshape(-1)
    n = out.size
    if serial(n):
        for i in range(n):
            out[i] = low + (high - low) * scalar.uniform(seed, offset + i, bits)
    else:
        for i in prange(n):
            out[i] = low + (high - low) * scalar.uniform(seed, offset + i, bits)


@twins(first_small)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def normal(out, seed, offset, mean, std):
    out = out.reshape(-1)
    n = out.size
    if serial(n):
        for i in range(n):
            out[i] = mean + std * scalar.normal(seed, offset + 2 * i)
    else:
        for i in prange(n):
            out[i] = mean + std * scalar.normal(seed, offset + 2 * i)


@twins(first_small)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def randint(out, seed, offset, low, span):
    out = out.reshape(-1)
    n = out.size
    if serial(n):
        for i in range(n):
            out[i] = scalar.randint(seed, offset + i, low, span)
    else:
        for i in prange(n):
            out[i] = scalar.randint(seed, offset + i, low, span)
