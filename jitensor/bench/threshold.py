"""Measure where a parallel @njit kernel starts beating a serial one (the PARALLEL_MIN of
`kernels/cpu/kernels.py`): ``python -m jitensor.bench.threshold``."""
import numba
import numpy as np
from numba import njit, prange

from . import timeit

numba.config.THREADING_LAYER = "threadsafe"


@njit
def _serial(out, value):
    for i in range(out.size):
        out[i] = value


@njit(parallel=True)
def _parallel(out, value):
    for i in prange(out.size):
        out[i] = value


def crossover(dtype=np.float32, exponents=range(10, 23)):
    """Rows of (n, serial µs, parallel µs) and the smallest n where parallel wins from then on."""
    rows = []
    for e in exponents:
        a = np.empty(1 << e, dtype)
        s = timeit(lambda a=a: _serial(a, 0), budget=0.1)
        p = timeit(lambda a=a: _parallel(a, 0), budget=0.1)
        rows.append((1 << e, s * 1e6, p * 1e6))
    first = next((n for i, (n, _, _) in enumerate(rows) if all(p < s for _, s, p in rows[i:])),
                 None)
    return rows, first


def main():
    print(f"fill kernel, {numba.config.NUMBA_NUM_THREADS} threads: serial vs parallel")
    rows, first = crossover()
    for n, s, p in rows:
        print(f"  n = 2^{n.bit_length() - 1:<3} serial {s:9.2f} µs   parallel {p:9.2f} µs"
              f"   {'parallel' if p < s else 'serial'} wins")
    print(f"parallel wins from n = {first} on" if first else "parallel never wins here")


if __name__ == "__main__":
    main()
