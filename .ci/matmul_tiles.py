"""GPU probe: the float32 matmul kernel's tile shape against cuBLAS (torch) on the same GPU.

`python .ci/matmul_tiles.py [N]` times an N^3 (default 4096) float32 product for each tile shape
(threads per block side, outputs per thread side, k per step) of kernels/cuda/linalg.py, one
fresh process each (its own kernel cache: the shape is frozen into the compiled kernel), and
prints TFLOP/s and the ratio to torch.matmul. The shipped shape is the first."""
import os
import subprocess
import sys
import tempfile

SHAPES = [(16, 8, 8), (16, 8, 16), (16, 8, 4), (8, 8, 8)]

_ONE = """
import sys, time
import torch
from jitensor.kernels.cuda import linalg
side, reg, step, n = map(int, sys.argv[1:5])
linalg.SIDE, linalg.REG, linalg.STEP = side, reg, step
linalg.TILE = side * reg
linalg.LOADS = linalg.TILE * step // (side * side)
linalg.A_ROWS, linalg.B_ROWS = side * side // step, side * side // linalg.TILE
import jitensor as jt
a = torch.randn(n, n, device="cuda")
b = torch.randn(n, n, device="cuda")
ja, jb = jt.from_dlpack(a), jt.from_dlpack(b)
err = (torch.from_dlpack(ja @ jb) - a @ b).abs().max().item()

def best(fn, sync, reps=10):
    fn(); sync()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter(); fn(); sync(); out.append(time.perf_counter() - t0)
    return min(out)

tj = best(lambda: ja @ jb, jt.cuda.synchronize)
tt = best(lambda: a @ b, torch.cuda.synchronize)
f = 2 * n ** 3
print(f"tile {side}x{side} threads, {reg}x{reg} per thread, k step {step}: "
      f"{f / tj / 1e12:6.2f} TFLOP/s, cuBLAS {f / tt / 1e12:6.2f}, ratio {tt / tj:.3f}, "
      f"max |err| {err:.2e}")
"""


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    for shape in SHAPES:
        env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp())
        r = subprocess.run([sys.executable, "-c", _ONE, *map(str, shape), str(n)], env=env,
                           capture_output=True, text=True, timeout=120)
        print(r.stdout.strip() or f"tile {shape}: failed\n{r.stderr[-1500:]}", flush=True)


if __name__ == "__main__":
    main()
