"""The jt.compile report: elementwise chains written with built-in ops, run eagerly and compiled
(fused, jitensor/fusion.py), against the same code in torch's eager mode, float32 on the CPU.

``python -m jitensor.bench.compile [--quick]``: the tanh GELU spelled out (torch's `gelu` is
its own kernel; here both libraries run the formula's eight ops), bias + GELU + residual,
RMSNorm, forward and forward + backward, an Adam update spelled out; and the small GPT's step
(`compile_report.gpt_step`), whose elementwise work is mostly built-in fused ops already.
Each pair of rows is eager then compiled; the ratio is torch's time over that row's."""
import sys

import numpy as np

from . import compare, optional, print_rows
from .compile_report import gpt_step

C = 0.7978845608  # sqrt(2 / pi)


def gelu(lib):
    def f(x):
        return 0.5 * x * (1.0 + lib.tanh(C * (x + 0.044715 * x * x * x)))
    return f


def bias_gelu_residual(lib):
    g = gelu(lib)

    def f(h, b, r):
        return r + g(h + b)
    return f


def rms_norm(lib, eps=1e-6):
    """RMSNorm as LLaMA-style code writes it."""
    def f(x, weight):
        return x * lib.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight
    return f


def adam(lib, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, step=10):
    def f(p, g, m, v):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        update = (m / (1 - b1 ** step)) / ((v / (1 - b2 ** step)).sqrt() + eps)
        return p - lr * update, m, v
    return f


def _cases(lib, compile, n, rows):
    """{case: fn} for one library, compiled by `compile` (identity for eager)."""
    rng = np.random.default_rng(0)

    def t(*shape, grad=False):
        return lib.tensor(rng.standard_normal(shape, dtype=np.float32), requires_grad=grad)
    x, xg = t(n), t(n, grad=True)
    h, b, r = t(rows, 384), t(384), t(rows, 384)
    hg, bg = t(rows, 384, grad=True), t(384, grad=True)
    p, g, m, v = t(n), t(n), t(n), t(n).abs()
    fg, fr, fa, fn = (compile(make(lib)) for make in (gelu, bias_gelu_residual, adam,
                                                        rms_norm))
    step = compile(gpt_step(lib))
    return {"gelu": lambda: fg(x), "gelu+bwd": lambda: fg(xg).sum().backward(),
            "bias+gelu+res": lambda: fr(h, b, r),
            "bias+gelu+res+bwd": lambda: fr(hg, bg, r).sum().backward(),
            "rms norm": lambda: fn(r, b), "rms norm+bwd": lambda: fn(hg, bg).sum().backward(),
            "adam update": lambda: fa(p, g, m, v), "GPT step": step}


def _eager(fn):
    return fn


def measure(quick=False):
    import jitensor as jt
    torch = optional("torch")
    n, rows = (1 << 18, 512) if quick else (1 << 20, 2048)
    eager, fused = _cases(jt, _eager, n, rows), _cases(jt, jt.compile, n, rows)
    peer = _cases(torch, _eager, n, rows) if torch is not None else {}
    shapes = {"gelu": (n,), "bias": (rows, 384), "rms": (rows, 384), "adam": (n,),
              "GPT": "2x64 block 32"}
    out = []
    for case in eager:
        for mode, mine in (("eager", eager[case]), ("fused", fused[case])):
            fns = {"jitensor": mine, **({"torch": peer[case]} if case in peer else {})}
            for fn in fns.values():  # compile, load and warm first
                fn()
            out.append({"op": f"{case} {mode}", "shape": shapes[case.split()[0].split("+")[0]],
                        **compare(fns, budget=0.05 if quick else 0.2)})
    return out


if __name__ == "__main__":
    print_rows("jt.compile: eager and compiled jitensor, torch eager (float32, CPU)",
               measure("--quick" in sys.argv))
