"""torch.backends.openmp: whether Numba's OpenMP threading layer, which runs jitensor's parallel
CPU kernels by default, is installed (jitensor.get_num_threads says how many threads)."""
import importlib.util


def is_available():
    return importlib.util.find_spec("numba.np.ufunc.omppool") is not None
