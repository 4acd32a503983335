"""torch.set_num_threads / get_num_threads: how many of Numba's threads the CPU kernels use.

Numba starts NUMBA_NUM_THREADS threads (default: one per core) the first time a parallel kernel
loads, and each Python thread may use any number of them: the count set here is the calling
thread's (Numba's counts are per thread; a thread started later uses all of them). With one
thread the kernels run their plain loops and never enter the thread pool. Under GNU OpenMP (where
TBB is not installed) a process forked after its parent's pool started has one thread in all its
threads (kernels/cpu/kernels.py).

Also here, for Python threads and fork: parallel kernels run one at a time under Numba's
workqueue threading layer, and a fork waits for other threads' kernel compiles and loads.
(Here rather than in kernels/cpu: a change there recompiles every CPU kernel.)"""
import builtins
import ctypes
import operator
import os
import threading

import llvmlite.binding
import numba
from numba.core.compiler_lock import global_compiler_lock
from numba.np.ufunc import parallel as _pool  # Numba's thread pool (its private names: below)
from numba.np.ufunc import workqueue

from .kernels.cpu import kernels


def get_num_threads():
    """The number of threads the calling thread's CPU kernels run on."""
    return kernels.num_threads()


def set_num_threads(n):
    """Run the calling thread's CPU kernels on `n` threads (1 to NUMBA_NUM_THREADS)."""
    if isinstance(n, builtins.bool) or not hasattr(n, "__index__"):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    n = operator.index(n)
    if n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n}")
    limit = numba.config.NUMBA_NUM_THREADS
    if n > limit:
        raise RuntimeError(
            f"set_num_threads({n}): Numba runs at most {limit} threads in this process; to use "
            f"more, set the environment variable NUMBA_NUM_THREADS={n} before importing jitensor")
    if kernels.FORKED[0] and n > 1:
        raise RuntimeError(
            f"set_num_threads({n}): this process was forked after its parent started the thread "
            f"pool, and GNU OpenMP cannot run in such a child: its CPU kernels run on one thread "
            f"(start worker processes with the 'spawn' or 'forkserver' method for more)")
    numba.set_num_threads(n)
    _REQUESTED[0] = n


_REQUESTED = [None]  # the count set_num_threads was last given, in any thread


def init_num_threads():
    """torch.init_num_threads: give the calling thread the count set_num_threads was last
    given (in any thread: Numba's counts are per thread, and a new thread starts with all)."""
    n = _REQUESTED[0]
    if n is not None and not (kernels.FORKED[0] and n > 1):
        numba.set_num_threads(n)


# Numba's workqueue threading layer (NUMBA_THREADING_LAYER=workqueue, or the fallback when
# neither omp nor tbb loads) aborts the process ("Concurrent access has been detected") when
# two threads run parallel loops at once. Every parallel loop calls the symbol
# numba_parallel_for, which Numba binds to the layer's `parallel_for` when the pool starts:
# workqueue's is replaced here, before that, by one that runs the loops one at a time. The omp
# and tbb layers take concurrent loops, and are left alone.
_LAUNCH_LOCK = threading.Lock()
_PARALLEL_FOR = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 5, *[ctypes.c_ssize_t] * 3)
_workqueue_parallel_for = _PARALLEL_FOR(workqueue.parallel_for)


@_PARALLEL_FOR
def _one_at_a_time(fn, args, dimensions, steps, data, inner_ndim, array_count, num_threads):
    with _LAUNCH_LOCK:  # (the GIL is let go while waiting here and while the loop runs)
        _workqueue_parallel_for(fn, args, dimensions, steps, data, inner_ndim, array_count,
                                num_threads)


workqueue.parallel_for = ctypes.cast(_one_at_a_time, ctypes.c_void_p).value
if _pool._is_initialized and _pool._threading_layer == "workqueue":  # started before jitensor
    llvmlite.binding.add_symbol("numba_parallel_for", workqueue.parallel_for)


def _fork_locks():
    """The locks another thread may hold when this process forks, outermost first. The child
    has the forking thread only, so a lock held at the fork stays held there for ever: a child
    forked while another thread compiled or loaded a kernel hung on Numba's compiler lock. So
    a fork takes them all first, waiting for such work to end, and parent and child release
    them after. Not among them: the CPU memory pool's lock, made anew in the child
    (kernels/cpu/memory.py), and Numba's pool locks, which a child never takes
    (kernels.num_threads)."""
    return [global_compiler_lock._lock,
            llvmlite.binding.ffi.lib._lock._lock,  # held in every call into LLVM
            _LAUNCH_LOCK]


_held = []  # the locks a fork in progress holds


def _before_fork():
    locks = _fork_locks()
    for lock in locks:
        lock.acquire()
    _held[:] = locks


def _after_fork():
    for lock in reversed(_held):
        lock.release()
    _held.clear()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork, after_in_child=_after_fork)
