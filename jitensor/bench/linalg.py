"""The matmul report: jitensor against NumPy and torch on the CPU, in GOP/s (2 x multiply-adds per
second: GFLOP/s for floats) and as ratios peer time / jitensor time (above 1: jitensor faster).

Run ``python -m jitensor.bench.linalg [--quick]``. Each case is timed in several rounds that
alternate the peers, keeping each peer's best median: on a shared machine a burst of load then
hits one round, not one peer."""
import sys

import numpy as np

from . import compare, optional

# (op, dtype, shape of a, shape of b); integer matmuls run NumPy's slow non-BLAS loop.
FULL = [
    ("matmul", "float32", (256, 256), (256, 256)),
    ("matmul", "float32", (1024, 1024), (1024, 1024)),
    ("matmul", "float32", (2048, 2048), (2048, 2048)),
    ("matmul", "float64", (256, 256), (256, 256)),
    ("matmul", "float64", (1024, 1024), (1024, 1024)),
    ("matmul", "float32", (1024, 1024), "T"),  # b is a transposed view
    ("matmul", "int64", (512, 512), (512, 512)),
    ("matmul", "int32", (512, 512), (512, 512)),
    ("matmul", "int8", (512, 512), (512, 512)),
    ("matmul", "int64", (512, 512), "T"),
    ("matmul", "float32", (64, 64, 64), (64, 64, 64)),
    ("matmul", "int64", (64, 64, 64), (64, 64, 64)),
    ("matmul", "float32", (8, 8), (8, 8)),
    ("matmul", "float32", (4096, 4096), (4096,)),
]
QUICK = [FULL[i] for i in (0, 1, 6, 7, 10, 12)]
ROUNDS = 3


def _operands(dtype, sa, sb, rng):
    """NumPy operands: uniform floats, or small integers (NumPy and torch wrap the same)."""
    def make(shape):
        if dtype.startswith("float"):
            return rng.random(shape, dtype=np.float32).astype(dtype)
        return rng.integers(-8, 8, shape).astype(dtype)
    a = make(sa)
    b = make(sa[::-1]).T if sb == "T" else make(sb)
    return a, b


def _peers(a, b):
    import jitensor as jt
    ja, jb = jt.from_numpy(a), jt.from_numpy(b)
    peers = {"jitensor": lambda: ja @ jb, "numpy": lambda: a @ b}
    torch = optional("torch")
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        peers["torch"] = lambda: ta @ tb
    return peers


def measure(quick=False):
    """Rows {op, dtype, shape, ops, and seconds per peer} measured in this run."""
    rng = np.random.default_rng(0)
    rows = []
    for op, dtype, sa, sb in (QUICK if quick else FULL):
        a, b = _operands(dtype, sa, sb, rng)
        peers = _peers(a, b)
        best = compare(peers, rounds=1 if quick else ROUNDS, budget=0.05 if quick else 0.3)
        shape = f"{a.shape} @ {b.shape}{' b.T view' if sb == 'T' else ''}"
        ops = 2 * a.shape[-1] * peers["jitensor"]().numel()  # 2 x multiply-adds
        rows.append({"op": op, "dtype": dtype, "shape": shape, "ops": ops, **best})
    return rows


def report(rows):
    peers = [p for p in ("numpy", "torch") if p in rows[0]]
    head = f"{'dtype':8} {'shape':42} {'jitensor':>14}" + "".join(
        f" {p:>10} {p + '/jt':>9}" for p in peers)
    lines = [head, "-" * len(head)]
    for r in rows:
        rate = r["ops"] / r["jitensor"] / 1e9
        line = f"{r['dtype']:8} {r['shape']:42} {rate:8.1f} GOP/s"
        for p in peers:
            line += f" {r['ops'] / r[p] / 1e9:10.1f} {r[p] / r['jitensor']:8.2f}x"
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(measure(quick="--quick" in sys.argv)))
