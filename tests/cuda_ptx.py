"""Compile CUDA kernel signatures to PTX for sm_90 without a GPU: `python tests/cuda_ptx.py
FILE` reads a pickled pair (list of (module, kernel, argument types), names of kernels whose
local arrays must live in registers) and exits non-zero, naming each kernel that fails.
Run without NUMBA_ENABLE_CUDASIM (the simulator has no compiler)."""
import pickle
import re
import sys
import traceback
import types
from importlib import import_module

import numba.cuda.dispatcher
from numba import cuda

# Device functions ask the current GPU for its compute capability; there is none here.
numba.cuda.dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))


def _load_user_kernels():
    """The generated kernel modules of the test suite's user ops (custom_ops_module.py) and
    of its fused chain, so their names import: the same code gives the same module names as
    in the tests (a chain's kernels are the same on every device: it runs on the CPU here)."""
    import custom_ops_module

    import jitensor as jt
    from jitensor import fusion
    from jitensor.custom import ElementwiseOp, ReductionOp
    from jitensor.kernels.cuda import custom
    x, y = jt.ones(2, requires_grad=True), jt.ones(2, requires_grad=True)  # (two leaves)
    custom_ops_module.fused_chain(x, y).sum().backward()
    for op in (*vars(custom_ops_module).values(), *fusion._OPS.values()):
        if isinstance(op, ElementwiseOp):
            custom.kernels(op._map.spec)
            for j in range(op.arity if op.grad is not None else 0):
                custom.kernels(op._partial(j).spec)
        elif isinstance(op, ReductionOp):
            custom.kernels(op._map.spec)


def main(path):
    with open(path, "rb") as f:
        signatures, in_registers = pickle.load(f)
    _load_user_kernels()
    failed = 0
    for module, name, argtypes in signatures:
        kernel = getattr(import_module(module), name)
        try:
            ptx, _ = cuda.compile_ptx(kernel.py_func, argtypes, cc=(9, 0))
        except Exception:
            failed += 1
            print(f"FAILED {module}.{name}{argtypes}:\n{traceback.format_exc(limit=-3)}")
            continue
        # an LLVM intrinsic NVVM did not lower stays a call of an undefined function, which
        # only the PTX assembler (on a GPU machine) rejects: llvm.maximum did, on the H200
        undefined = re.findall(r"\.extern\s+\.func[^;]*?\b(llvm\.[\w.]+)", ptx)
        if undefined:
            failed += 1
            print(f"FAILED {module}.{name}{argtypes}: calls {sorted(set(undefined))}, which "
                  f"NVVM left undefined")
            continue
        # float32 traffic only: libdevice's sin/cos keep integer words in local memory on
        # their rare huge-argument path
        if f"{module}.{name}" in in_registers and re.search(r"\.local(\.v\d)?\.f32", ptx):
            failed += 1
            print(f"FAILED {module}.{name}{argtypes}: its float32 local arrays are meant to "
                  f"live in registers, but the PTX moves them through local memory")
    print(f"{len(signatures) - failed} compiled, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
