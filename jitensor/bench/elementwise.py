"""The elementwise report: jitensor against NumPy and torch on the CPU.

``python -m jitensor.bench.elementwise [--quick]``: float32 throughput of add/mul/exp/log/sin on
large tensors (same shape, with a scalar, broadcast, transposed) and the per-op cost on 2x3 tensors.
Large operands are written into a preallocated output by every peer (`out=`), so the figures
are kernel bandwidth, not page faults of fresh allocations; the tiny case allocates."""
import sys

import numpy as np

from . import compare, optional, per_call, print_rows

FULL_N = (1 << 24, 1 << 26)
QUICK_N = (1 << 24,)


def _cases(n, rng):
    """(op, shape, bytes moved, {peer: fn}) for n float32 elements."""
    import jitensor as jt
    torch = optional("torch")
    x = 1 - rng.random(n, dtype=np.float32)  # (0, 1]: no log of 0
    y = rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    side = int(n ** 0.5)
    m = x[:side * side].reshape(side, side)
    row = y[:side].copy()
    mout = np.empty_like(m)
    jx, jy, jo = jt.from_numpy(x), jt.from_numpy(y), jt.from_numpy(out)
    jm, jrow, jmo = jt.from_numpy(m), jt.from_numpy(row), jt.from_numpy(mout)
    cases = [
        ("add", (n,), 12 * n, {"jitensor": lambda: jt.add(jx, jy, out=jo),
                               "numpy": lambda: np.add(x, y, out=out)}),
        ("mul", (n,), 12 * n, {"jitensor": lambda: jt.mul(jx, jy, out=jo),
                               "numpy": lambda: np.multiply(x, y, out=out)}),
        ("add scalar", (n,), 8 * n, {"jitensor": lambda: jt.add(jx, 2.0, out=jo),
                                     "numpy": lambda: np.add(x, np.float32(2), out=out)}),
        ("exp", (n,), 8 * n, {"jitensor": lambda: jt.exp(jx, out=jo),
                              "numpy": lambda: np.exp(x, out=out)}),
        ("log", (n,), 8 * n, {"jitensor": lambda: jt.log(jx, out=jo),
                              "numpy": lambda: np.log(x, out=out)}),
        ("sin", (n,), 8 * n, {"jitensor": lambda: jt.sin(jx, out=jo),
                              "numpy": lambda: np.sin(x, out=out)}),
        ("add row (broadcast)", (side, side), 8 * side * side,
         {"jitensor": lambda: jt.add(jm, jrow, out=jmo),
          "numpy": lambda: np.add(m, row, out=mout)}),
        ("add transposed", (side, side), 12 * side * side,
         {"jitensor": lambda: jt.add(jm.mT if hasattr(jm, "mT") else jt.from_numpy(m.T), jm,
                                     out=jmo),
          "numpy": lambda: np.add(m.T, m, out=mout)}),
    ]
    if torch is not None:
        tx, ty, to = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(out)
        tm, trow, tmo = torch.from_numpy(m), torch.from_numpy(row), torch.from_numpy(mout)
        for (_, _, _, fns), fn in zip(cases, [
                lambda: torch.add(tx, ty, out=to), lambda: torch.mul(tx, ty, out=to),
                lambda: torch.add(tx, 2.0, out=to), lambda: torch.exp(tx, out=to),
                lambda: torch.log(tx, out=to), lambda: torch.sin(tx, out=to),
                lambda: torch.add(tm, trow, out=tmo),
                lambda: torch.add(tm.T, tm, out=tmo)], strict=False):
            fns["torch"] = fn
    return cases


def measure(quick=False):
    """Rows {op, shape, bytes, and seconds per peer} measured in this run."""
    rng = np.random.default_rng(0)
    rows = []
    for n in (QUICK_N if quick else FULL_N):
        for op, shape, nbytes, fns in _cases(n, rng):
            row = {"op": op, "shape": shape, "bytes": nbytes}
            row.update(compare(fns, budget=0.04 if quick else 0.15))
            rows.append(row)
    rows += tiny()
    return rows


def tiny():
    """Per-op seconds on 2x3 float32 tensors: the Python path from operator to kernel."""
    import jitensor as jt
    torch = optional("torch")
    a, b = jt.ones(2, 3), jt.ones(2, 3)
    na, nb = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    add = {"jitensor": lambda: a + b, "numpy": lambda: na + nb}
    scale = {"jitensor": lambda: a * 2, "numpy": lambda: na * 2}
    exp = {"jitensor": lambda: a.exp(), "numpy": lambda: np.exp(na)}
    total = {"jitensor": lambda: a.sum(), "numpy": lambda: na.sum()}
    if torch is not None:
        ta, tb = torch.ones(2, 3), torch.ones(2, 3)
        add["torch"], scale["torch"], exp["torch"] = lambda: ta + tb, lambda: ta * 2, ta.exp
        total["torch"] = ta.sum
    return [{"op": "x + y (tiny)", "shape": (2, 3), **compare(add, measure=per_call, repeat=2)},
            {"op": "x * 2 (tiny)", "shape": (2, 3), **compare(scale, measure=per_call, repeat=2)},
            {"op": "x.exp() (tiny)", "shape": (2, 3), **compare(exp, measure=per_call, repeat=2)},
            {"op": "x.sum() (tiny)", "shape": (2, 3), **compare(total, measure=per_call, repeat=2)}]


if __name__ == "__main__":
    print_rows("elementwise, float32 (CPU)", measure("--quick" in sys.argv))
