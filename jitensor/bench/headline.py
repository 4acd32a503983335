"""The headline of `python -m jitensor`: one table of jitensor against NumPy and torch on the
CPU, float32, measured in one run -- empty / zeros / ones / full at three sizes, the per-call
cost of tiny tensors, add / mul / exp / sum / softmax / matmul, and one MLP training step.

Sizes are smaller and timing shorter (a few repeats, three alternating rounds) than in the
sections that `--full` runs. Every callable is called once before it is timed, so kernel
compilation (or loading from the disk cache) is never measured. empty has no GB/s: it touches
no memory."""
from functools import partial

import numpy as np

from . import compare, optional, per_call, timeit
from .autograd import _mlp
from .creation import PAGE, _cpu_peers, _warm_memory
from .reduction import _np_softmax

CREATION = (10**3, 10**5, 10**7)  # per-call cost, a pooled block, memory bandwidth
N = 1 << 22  # elementwise and sum: 16 MiB an operand, far above the per-call cost
SQUARE = 1024  # softmax rows
MATMUL = 512
BUDGET = 0.03  # seconds of repeats per timeit; compare keeps each peer's best of 3 rounds
TINY_CALLS = 2_000  # per_call: calls per repeat


def size_text(n):
    """'2^22' for a power of two, else '1e5' (for a power of ten)."""
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:.0e}".replace("+0", "")


def _small():
    """The sizes of the hidden `--small` switch: the same rows on tiny tensors, for tests."""
    return {"creation": (10**3, 10**4), "n": 1 << 12, "square": 32, "matmul": 16}


def cases(small=False):
    """(row, {peer: callable}, measure) for every headline row, in the order printed; row is
    {op, shape[, bytes | flops]} and measure the helper that times it (timeit or per_call)."""
    import jitensor as jt
    torch = optional("torch")
    sizes = _small() if small else {"creation": CREATION, "n": N, "square": SQUARE,
                                    "matmul": MATMUL}
    _warm_memory(3 * max(sizes["creation"]) * 4)
    out = []
    for n in sizes["creation"]:
        peers = _cpu_peers(n)  # fill routines timed with the first touch of every page
        for routine in ("empty", "zeros", "ones", "full"):
            work = {} if routine == "empty" else {"bytes": 4 * n}
            out.append(({"op": routine, "shape": size_text(n), **work},
                        {peer: fns[routine] for peer, fns in peers.items()}, timeit))

    # tiny tensors: the Python path from call to kernel, which dominates small models
    a, b = jt.ones(2, 3), jt.ones(2, 3)
    na, nb = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    zeros = {"jitensor": lambda: jt.zeros(2, 3), "numpy": lambda: np.zeros((2, 3), np.float32)}
    add = {"jitensor": lambda: a + b, "numpy": lambda: na + nb}
    if torch is not None:
        ta, tb = torch.ones(2, 3), torch.ones(2, 3)
        zeros["torch"], add["torch"] = lambda: torch.zeros(2, 3), lambda: ta + tb
    out += [({"op": "zeros(2, 3)", "shape": (2, 3)}, zeros, per_call),
            ({"op": "x + y", "shape": (2, 3)}, add, per_call)]

    # large operands written into a preallocated output (out=): kernel speed, not page faults
    rng = np.random.default_rng(0)
    n = sizes["n"]
    x, y, dst = rng.random(n, np.float32), rng.random(n, np.float32), np.empty(n, np.float32)
    jx, jy, jdst = jt.from_numpy(x), jt.from_numpy(y), jt.from_numpy(dst)
    operands = {"jitensor": (jx, jy, jdst), "numpy": (x, y, dst)}
    kernels = {"add": (12, {"jitensor": jt.add, "numpy": np.add}),
               "mul": (12, {"jitensor": jt.mul, "numpy": np.multiply}),
               "exp": (8, {"jitensor": jt.exp, "numpy": np.exp})}
    if torch is not None:
        operands["torch"] = tuple(torch.from_numpy(v) for v in (x, y, dst))
        for op, (_, fns) in kernels.items():
            fns["torch"] = getattr(torch, op)
    for op, (width, fns) in kernels.items():
        inputs = 2 if width == 12 else 1
        out.append(({"op": op, "shape": size_text(n), "bytes": width * n},
                    {peer: partial(fn, *operands[peer][:inputs], out=operands[peer][2])
                     for peer, fn in fns.items()}, timeit))
    out.append(({"op": "sum", "shape": size_text(n), "bytes": 4 * n},
                {peer: args[0].sum for peer, args in operands.items()}, timeit))

    m = sizes["square"]
    sq = rng.standard_normal((m, m), dtype=np.float32)
    js = jt.from_numpy(sq)
    softmax = {"jitensor": lambda: jt.softmax(js, -1), "numpy": lambda: _np_softmax(sq)}
    k = sizes["matmul"]
    ma, mb = rng.random((k, k), np.float32), rng.random((k, k), np.float32)
    jma, jmb = jt.from_numpy(ma), jt.from_numpy(mb)
    matmul = {"jitensor": lambda: jma @ jmb, "numpy": lambda: ma @ mb}
    if torch is not None:
        ts, tma, tmb = torch.from_numpy(sq), torch.from_numpy(ma), torch.from_numpy(mb)
        softmax["torch"] = lambda: torch.softmax(ts, -1)
        matmul["torch"] = lambda: tma @ tmb
    out += [({"op": "softmax(dim=-1)", "shape": (m, m), "bytes": 8 * m * m}, softmax, timeit),
            ({"op": "matmul", "shape": (k, k, k), "flops": 2 * k ** 3}, matmul, timeit)]

    mlp = {"jitensor": _mlp(jt)}  # NumPy has no autograd: torch is the only peer
    if torch is not None:
        mlp["torch"] = _mlp(torch)
    out.append(({"op": "MLP train step (Adam)", "shape": "64x784-128-10"}, mlp, timeit))
    return out


def measure(small=False, progress=None):
    """Rows {op, shape[, bytes | flops], and seconds per peer}, measured in this run.
    progress(cases) wraps the loop over the cases (a progress bar)."""
    todo = cases(small)
    rows = []
    for row, fns, how in (progress(todo) if progress else todo):
        for fn in fns.values():  # compile (or load) every kernel before any timing
            fn()
        if how is per_call:
            row.update(compare(fns, measure=per_call, number=200 if small else TINY_CALLS,
                               repeat=3))
        else:
            row.update(compare(fns, budget=BUDGET))
        rows.append(row)
    return rows


NOTE = (f"empty is timed alone; zeros / ones / full with a first write to every {PAGE // 1024} KiB "
        "page of the result, NumPy's and torch's too;\nzeros(2, 3) and x + y allocate their "
        "results; add / mul / exp write into a preallocated output; NumPy's softmax is composed "
        "(max, sub, exp, sum, div).")
