"""The user-kernel report: ops written with `@jt.elementwise` / `@jt.reduction` against the
same formula composed from built-in ops, NumPy and torch, on float32.

``python -m jitensor.bench.custom [--quick]``: the tanh GELU on 2^24 elements (torch's
`gelu(approximate="tanh")` is its own fused kernel), forward and backward, and a sum of squares
by rows and over everything. Every call allocates its result, as user code does. The ops are
defined at module level, so their kernels load from the disk cache after the first run."""
import math
import sys

import numpy as np

import jitensor as jt

from . import optional, print_rows, timeit

N = 1 << 24
ROWS = (4096, 4096)
C = 0.7978845608  # sqrt(2 / pi)


@jt.elementwise
def gelu(x):
    return 0.5 * x * (1.0 + math.tanh(C * (x + 0.044715 * x ** 3)))


@gelu.derivative
def gelu_grad(x):
    t = math.tanh(C * (x + 0.044715 * x ** 3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * C * (1.0 + 0.134145 * x * x)


@jt.reduction(identity=0.0)
def sum_of_squares(acc, x):
    return acc + x * x


def gelu_composed(x):
    """The same formula from built-in ops: one kernel launch (and temporary) per operation."""
    return 0.5 * x * (1.0 + (C * (x + 0.044715 * x ** 3)).tanh())


def _np_gelu(x):
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(np.float32(C) * (
        x + np.float32(0.044715) * x ** 3)))


def _backward(fn, x):
    """One forward and backward through `fn` from a fresh leaf (x shares x's memory)."""
    def run():
        leaf = x.detach().requires_grad_()
        fn(leaf).sum().backward()
        return leaf.grad
    return run


def measure(quick=False):
    """Rows {op, shape, bytes, and seconds per peer} measured in this run."""
    torch = optional("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N, dtype=np.float32)
    m = rng.standard_normal(ROWS, dtype=np.float32)
    jx, jm = jt.from_numpy(x), jt.from_numpy(m)
    cases = [
        ("gelu: user kernel", (N,), 8 * N, {
            "jitensor": lambda: gelu(jx), "numpy": lambda: _np_gelu(x)}),
        ("gelu: composed jt ops", (N,), 8 * N, {
            "jitensor": lambda: gelu_composed(jx), "numpy": lambda: _np_gelu(x)}),
        ("gelu fwd+bwd: user", (N,), 16 * N, {"jitensor": _backward(gelu, jx)}),
        ("gelu fwd+bwd: composed", (N,), 16 * N, {"jitensor": _backward(gelu_composed, jx)}),
        ("sum sq(dim=1): user", ROWS, 4 * m.size, {
            "jitensor": lambda: sum_of_squares(jm, 1), "numpy": lambda: (m * m).sum(1)}),
        ("sum sq(dim=1): composed", ROWS, 4 * m.size, {
            "jitensor": lambda: (jm * jm).sum(1), "numpy": lambda: (m * m).sum(1)}),
        ("sum sq: user", (N,), 4 * N, {
            "jitensor": lambda: sum_of_squares(jx), "numpy": lambda: np.dot(x, x)}),
        ("sum sq: composed", (N,), 4 * N, {
            "jitensor": lambda: (jx * jx).sum(), "numpy": lambda: np.dot(x, x)}),
    ]
    if torch is not None:
        tx, tm = torch.from_numpy(x), torch.from_numpy(m)
        tgelu = torch.nn.functional.gelu
        for (_, _, _, fns), fn in zip(cases, [
                lambda: tgelu(tx, approximate="tanh"), lambda: tgelu(tx, approximate="tanh"),
                _backward(lambda t: tgelu(t, approximate="tanh"), tx),
                _backward(lambda t: tgelu(t, approximate="tanh"), tx),
                lambda: (tm * tm).sum(1), lambda: (tm * tm).sum(1),
                lambda: torch.dot(tx, tx), lambda: torch.dot(tx, tx)], strict=False):
            fns["torch"] = fn
    for _, _, _, fns in cases:  # compile, load and warm everything first: a fresh process
        for fn in fns.values():  # runs its first large calls several times slower
            fn()
    rows = []
    for op, shape, nbytes, fns in cases:
        row = {"op": op, "shape": shape, "bytes": nbytes}
        row.update({peer: timeit(fn, budget=0.3 if quick else 1.0) for peer, fn in fns.items()})
        rows.append(row)
    return rows


def _speedups(rows):
    """User kernel vs composed ops, the figure the report is about."""
    by = {r["op"]: r["jitensor"] for r in rows}
    return [f"{user}: {by[composed] / by[user]:.2f}x faster than composed ops"
            for user, composed in (("gelu: user kernel", "gelu: composed jt ops"),
                                   ("gelu fwd+bwd: user", "gelu fwd+bwd: composed"),
                                   ("sum sq(dim=1): user", "sum sq(dim=1): composed"),
                                   ("sum sq: user", "sum sq: composed"))]


if __name__ == "__main__":
    results = measure("--quick" in sys.argv)
    print_rows("user kernels, float32 (CPU)", results)
    print("\n".join(_speedups(results)))
