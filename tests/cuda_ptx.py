"""Compile CUDA kernel signatures to PTX for sm_90 without a GPU: `python tests/cuda_ptx.py
FILE` reads a pickled list of (module, kernel, argument types) and exits non-zero, naming each
kernel that fails. Run without NUMBA_ENABLE_CUDASIM (the simulator has no compiler)."""
import pickle
import sys
import traceback
import types
from importlib import import_module

import numba.cuda.dispatcher
from numba import cuda

# Device functions ask the current GPU for its compute capability; there is none here.
numba.cuda.dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))


def main(path):
    with open(path, "rb") as f:
        signatures = pickle.load(f)
    failed = 0
    for module, name, argtypes in signatures:
        kernel = getattr(import_module(module), name)
        try:
            cuda.compile_ptx(kernel.py_func, argtypes, cc=(9, 0))
        except Exception:
            failed += 1
            print(f"FAILED {module}.{name}{argtypes}:\n{traceback.format_exc(limit=-3)}")
    print(f"{len(signatures) - failed} compiled, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
