"""torch.set_num_threads / get_num_threads: how many of Numba's threads the CPU kernels use.

Numba starts NUMBA_NUM_THREADS threads (default: one per core) the first time a parallel kernel
loads, and each Python thread may use any number of them: the count set here is the calling
thread's (Numba's counts are per thread; a thread started later uses all of them). With one
thread the kernels run their plain loops and never enter the thread pool. A process forked
after its parent's pool started has one thread in all its threads (kernels/cpu/kernels.py)."""
import builtins
import operator

import numba

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
