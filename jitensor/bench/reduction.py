"""The reduction report: sums, mean, var, max with indices, softmax, logsumexp and cumsum on
float32 against NumPy and torch, all measured in one run.

`python -m jitensor.bench.reduction [--quick]` prints median ms per call and each peer's ratio
(peer time / jitensor time: above 1, jitensor is faster). NumPy has no softmax or logsumexp:
its column times the usual composition (max, subtract, exp, sum, divide)."""
import sys

import numpy as np

from . import compare, optional

BIG = 1 << 26
SQUARE = (4096, 4096)
SHORT = (1 << 16, 16)  # many short rows: per-row costs, not bandwidth


def _np_softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_logsumexp(a):
    m = a.max(-1, keepdims=True)
    return np.log(np.exp(a - m).sum(-1)) + m[..., 0]


def _cases(jt, torch, quick):
    """(op, shape, {peer: callable}) for each measured row, on shared float32 inputs."""
    rng = np.random.default_rng(0)
    big = rng.standard_normal(BIG, dtype=np.float32)
    sq = rng.standard_normal(SQUARE, dtype=np.float32)
    short = rng.standard_normal(SHORT, dtype=np.float32)
    jb, js, jr = jt.from_numpy(big), jt.from_numpy(sq), jt.from_numpy(short)
    tb, ts, tr = (torch.from_numpy(big), torch.from_numpy(sq), torch.from_numpy(short)) if torch \
        else (None, None, None)
    rows = [
        ("sum", "2^26", lambda: jb.sum(), lambda: big.sum(), lambda: tb.sum()),
        ("sum(dim=0)", "4096^2", lambda: js.sum(0), lambda: sq.sum(0), lambda: ts.sum(0)),
        ("sum(dim=1)", "4096^2", lambda: js.sum(1), lambda: sq.sum(1), lambda: ts.sum(1)),
        ("mean", "4096^2", lambda: js.mean(), lambda: sq.mean(), lambda: ts.mean()),
        ("var(dim=-1)", "4096^2", lambda: js.var(-1), lambda: sq.var(-1, ddof=1),
         lambda: ts.var(-1)),
        ("max(dim=-1)", "4096^2", lambda: js.max(dim=-1),
         lambda: (sq.max(-1), sq.argmax(-1)), lambda: ts.max(dim=-1)),
        ("softmax(dim=-1)", "4096^2", lambda: jt.softmax(js, -1), lambda: _np_softmax(sq),
         lambda: torch.softmax(ts, -1)),
        ("sum(dim=-1)", "2^16x16", lambda: jr.sum(-1), lambda: short.sum(-1),
         lambda: tr.sum(-1)),
    ]
    if not quick:
        rows += [
            ("amax", "2^26", lambda: jb.amax(), lambda: big.max(), lambda: tb.amax()),
            ("argmax", "2^26", lambda: jb.argmax(), lambda: big.argmax(), lambda: tb.argmax()),
            ("max(dim=0)", "4096^2", lambda: js.max(dim=0),
             lambda: (sq.max(0), sq.argmax(0)), lambda: ts.max(dim=0)),
            ("var", "4096^2", lambda: js.var(), lambda: sq.var(ddof=1), lambda: ts.var()),
            ("logsumexp(dim=-1)", "4096^2", lambda: js.logsumexp(-1), lambda: _np_logsumexp(sq),
             lambda: ts.logsumexp(-1)),
            ("softmax(dim=0)", "4096^2", lambda: jt.softmax(js, 0),
             lambda: _np_softmax(sq.T).T, lambda: torch.softmax(ts, 0)),
            ("cumsum(dim=-1)", "4096^2", lambda: js.cumsum(-1), lambda: sq.cumsum(-1),
             lambda: ts.cumsum(-1)),
            ("max(dim=-1)", "2^16x16", lambda: jr.max(dim=-1),
             lambda: (short.max(-1), short.argmax(-1)), lambda: tr.max(dim=-1)),
            ("var(dim=-1)", "2^16x16", lambda: jr.var(-1), lambda: short.var(-1, ddof=1),
             lambda: tr.var(-1)),
        ]
    return rows


def measure(quick=False):
    """Rows of {op, shape, jitensor, numpy[, torch]}: median seconds per call."""
    import jitensor as jt
    torch = optional("torch")
    budget = 0.04 if quick else 0.17
    rows = []
    for op, shape, j, n, t in _cases(jt, torch, quick):
        fns = {"jitensor": j, "numpy": n, **({"torch": t} if torch is not None else {})}
        rows.append({"op": op, "shape": shape, **compare(fns, budget=budget)})
    return rows


def report(rows):
    peers = [p for p in ("numpy", "torch") if p in rows[0]]
    lines = ["== reductions, float32, median ms; ratio = peer time / jitensor time "
             "(>1: jitensor faster)",
             f"{'op':18}{'shape':>8}{'jitensor':>10}" + "".join(f"{p:>9}{'ratio':>7}"
                                                              for p in peers)]
    for r in rows:
        line = f"{r['op']:18}{r['shape']:>8}{r['jitensor'] * 1e3:10.2f}"
        for p in peers:
            line += f"{r[p] * 1e3:9.2f}{r[p] / r['jitensor']:7.2f}"
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(measure(quick="--quick" in sys.argv)))
