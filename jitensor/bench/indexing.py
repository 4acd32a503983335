"""The indexing report: cat, stack, advanced indexing (elements, and rows: a batch, an embedding
lookup), mask selection, index_add_, a transposing copy and a sort against NumPy and torch, all
in one run: ``python -m jitensor.bench.indexing [--quick]``.

Each row times one call that allocates its result; ratios are peer time / jitensor time, so
above 1 means jitensor is faster."""
import argparse

import numpy as np

from . import compare, optional

FULL = {"cat": (8, 1024), "index": (10**7, 10**6), "mask": 10**7, "transpose": 4096}
QUICK = {"cat": (8, 256), "index": (10**6, 10**5), "mask": 10**6, "transpose": 1024}


def _cases(sizes):
    """(op, shape text, {peer: callable}) for every benchmark row."""
    import jitensor as jt
    torch = optional("torch")
    rng = np.random.default_rng(0)

    k, n = sizes["cat"]
    parts = [rng.random((n, n), np.float32) for _ in range(k)]
    jparts = [jt.from_numpy(p) for p in parts]
    cat = {"jitensor": lambda: jt.cat(jparts), "numpy": lambda: np.concatenate(parts)}

    rowlist = list(rng.random((1024, 64), np.float32))  # a DataLoader batch's collate
    jrowlist = [jt.from_numpy(r) for r in rowlist]
    stack = {"jitensor": lambda: jt.stack(jrowlist), "numpy": lambda: np.stack(rowlist)}

    size, count = sizes["index"]
    src, idx = rng.random(size, np.float32), rng.integers(0, size, count)
    jsrc, jidx = jt.from_numpy(src), jt.from_numpy(idx)
    index = {"jitensor": lambda: jsrc[jidx], "numpy": lambda: src[idx]}

    tables = [rng.random(shape, np.float32) for shape in ((64, 10), (100000, 64))]
    picks = [rng.integers(0, 64, 64), rng.integers(0, 100000, 4096)]

    def take(t, i):
        return lambda: t[i]
    rows = [{"jitensor": take(jt.from_numpy(t), jt.from_numpy(i)), "numpy": take(t, i)}
            for t, i in zip(tables, picks, strict=False)]

    msrc = rng.random(sizes["mask"], np.float32)
    mask = msrc < 0.5
    jmsrc, jmask = jt.from_numpy(msrc), jt.from_numpy(mask)
    select = {"jitensor": lambda: jmsrc[jmask], "numpy": lambda: msrc[mask]}

    bins = count // 10  # message passing: many values summed into fewer nodes
    vals = rng.random(count, np.float32)
    acc, jacc, jvals = np.zeros(bins, np.float32), jt.zeros(bins), jt.from_numpy(vals)
    jbins = jt.from_numpy(idx % bins)
    add_at = {"jitensor": lambda: jacc.index_add_(0, jbins, jvals),
              "numpy": lambda: np.add.at(acc, idx % bins, vals)}

    m = sizes["transpose"]
    square = rng.random((m, m), np.float32)
    jsquare = jt.from_numpy(square)
    sort = {"jitensor": lambda: jsquare.sort(dim=-1),  # stable: NumPy's stable sort is the peer
            "numpy": lambda: np.argsort(square, axis=-1, kind="stable")}
    transpose = {"jitensor": lambda: jsquare.t().contiguous(),
                 "numpy": lambda: np.ascontiguousarray(square.T)}

    if torch is not None:
        tparts = [torch.from_numpy(p) for p in parts]
        cat["torch"] = lambda: torch.cat(tparts)
        trowlist = [torch.from_numpy(r) for r in rowlist]
        stack["torch"] = lambda: torch.stack(trowlist)
        tsrc, tidx = torch.from_numpy(src), torch.from_numpy(idx)
        index["torch"] = lambda: tsrc[tidx]
        for peers, t, i in zip(rows, tables, picks, strict=False):
            peers["torch"] = take(torch.from_numpy(t), torch.from_numpy(i))
        tmsrc, tmask = torch.from_numpy(msrc), torch.from_numpy(mask)
        select["torch"] = lambda: tmsrc[tmask]
        tacc, tbins, tvals = torch.zeros(bins), torch.from_numpy(idx % bins), \
            torch.from_numpy(vals)
        add_at["torch"] = lambda: tacc.index_add_(0, tbins, tvals)
        tsquare = torch.from_numpy(square)
        transpose["torch"] = lambda: tsquare.t().contiguous()
        sort["torch"] = lambda: tsquare.sort(dim=-1, stable=True)
    return [
        ("cat", f"{k} x ({n}, {n}) float32", cat),
        ("stack", "1024 x (64,) float32", stack),
        ("x[idx]", f"{count:.0e} of {size:.0e} float32", index),
        ("x[rows]", "64 rows of (64, 10) float32", rows[0]),
        ("x[rows]", "4096 rows of (100000, 64) float32", rows[1]),
        ("x[mask]", f"{sizes['mask']:.0e} float32, half true", select),
        ("index_add_", f"{count:.0e} float32 into {bins:.0e}", add_at),
        ("t().contiguous()", f"({m}, {m}) float32", transpose),
        ("sort(dim=-1)", f"({m}, {m}) float32", sort),
    ]


def measure(quick=False):
    """Rows of {op, shape, and median seconds per peer}, measured in this run."""
    budget = 0.04 if quick else 0.17
    return [{"op": op, "shape": shape, **compare(peers, budget=budget)}
            for op, shape, peers in _cases(QUICK if quick else FULL)]


def report(rows):
    peers = [p for p in ("numpy", "torch") if p in rows[0]]
    lines = ["median ms; ratio = peer time / jitensor time (>1: jitensor faster)",
             f"{'op':18}{'shape':30}{'jitensor':>10}" + "".join(f"{p:>10}{'ratio':>7}"
                                                              for p in peers)]
    for r in rows:
        line = f"{r['op']:18}{r['shape']:30}{r['jitensor'] * 1e3:10.2f}"
        for p in peers:
            line += f"{r[p] * 1e3:10.2f}{r[p] / r['jitensor']:7.2f}"
        lines.append(line)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, shorter timing")
    print(report(measure(quick=parser.parse_args().quick)))


if __name__ == "__main__":
    main()
