"""What every benchmark shares: sizes, dtypes, devices, and the libraries measured side by side.

Each benchmark class takes a `library` and a `device` parameter, so one asv run shows jitensor,
NumPy and torch on the same inputs. Combinations this machine cannot run (torch not installed,
no GPU, NumPy on a GPU) raise NotImplementedError in `setup`, which asv reports as skipped."""
import os

import numpy as np

import jitensor as jt

try:
    import torch
except ImportError:   # optional: its benchmarks skip
    torch = None

# CI's smoke run (`.ci/run`: every benchmark once, numbers discarded) sets JITENSOR_ASV_SMOKE=1
# and runs jitensor's parameter sets only: two thirds of its time went to the peers', whose
# code is theirs; a measuring run compares all three.
SMOKE = bool(os.environ.get("JITENSOR_ASV_SMOKE"))
LIBRARIES = ("jitensor",) if SMOKE else ("jitensor", "numpy", "torch")
DEVICES = ("cpu", "cuda")
SIZES = (10**3, 10**5, 10**7)     # call overhead, cache-resident, memory-bound
FLOATS = ("float32", "float64")
DTYPES = FLOATS + ("int32",)
SQUARE = (2048, 2048)             # 2-D operands: rows long enough to thread, 16 MiB in float32
PAGE = 4096


def _returned(result):
    """The CPU 'synchronize': CPU calls have finished when they return."""
    return result


def _waited(synchronize):
    """A sync that waits for the device, then passes the result through."""
    def sync(result):
        synchronize()
        return result
    return sync


class Peer:
    """One library on one device: its module, dtypes, device arrays and synchronize."""

    def __init__(self, library, device):
        if library == "torch" and torch is None:
            raise NotImplementedError("torch is not installed")
        if device == "cuda":
            if library == "numpy":
                raise NotImplementedError("NumPy has no CUDA device")
            if library == "jitensor" and not jt.cuda.is_available():
                raise NotImplementedError("jitensor: no CUDA device")
            if library == "torch" and not torch.cuda.is_available():
                raise NotImplementedError("torch: no CUDA device")
        self.mod = {"jitensor": jt, "numpy": np, "torch": torch}[library]
        self.library, self.device = library, device
        # Kernel launches are asynchronous: a timed call on CUDA must wait for its kernel.
        self.sync = _waited(self.mod.cuda.synchronize) if device == "cuda" else _returned

    def dtype(self, name):
        return np.dtype(name) if self.library == "numpy" else getattr(self.mod, name)

    def kw(self, dtype):
        """Creation keywords; NumPy < 2 has no `device=`, and NumPy only has the CPU."""
        kw = {"dtype": self.dtype(dtype)}
        if self.library != "numpy":
            kw["device"] = self.device
        return kw

    def asarray(self, a):
        """The NumPy array `a` as this library's array on this device (sharing its memory on
        the CPU: no copy inflates `peakmem_` benchmarks)."""
        if self.library == "numpy":
            return a
        if self.library == "torch":
            return torch.from_numpy(a).to(self.device)
        return jt.from_numpy(a).to(self.device)

    def random(self, shape, dtype, seed=0):
        """Standard normal floats, or integers in [-100, 100), as this library's array."""
        rng = np.random.default_rng(seed)
        if np.dtype(dtype).kind == "f":
            return self.asarray(rng.standard_normal(shape, dtype=dtype))
        return self.asarray(rng.integers(-100, 100, shape, dtype=dtype))


def touch(a):
    """Write one element per 4 KiB page of the CPU array `a` (any of the three libraries),
    through NumPy so every library pays the same. calloc'ed memory (np.zeros) is only zeroed
    when a page is first written: timing the call alone would flatter it."""
    flat = np.asarray(a).reshape(-1)
    flat[::PAGE // flat.itemsize] = 1


def warm(benchmark, prefix="time_"):
    """Call each `prefix*` method of `benchmark` once, from its setup: kernels compile (or load
    from Numba's disk cache) and allocators warm up outside the measurement."""
    for name in dir(benchmark):
        if name.startswith(prefix):
            getattr(benchmark, name)()
