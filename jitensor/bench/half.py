"""The half-precision report: float16 and bfloat16 against float32 and torch on the CPU.

``python -m jitensor.bench.half [--quick]``: an add and a GELU over 2^20 elements, a 256^3
product, a sum, and a small MLP's training step (Linear, GELU, LayerNorm, cross-entropy, SGD),
each in float32, float16 and bfloat16; jitensor and torch in one process. jitensor computes
the narrow dtypes in float32 and converts every kernel's operands (kernels/cpu/narrow.py), so
the float32 row is the one to compare them with."""
import sys

from . import compare, optional, print_rows
from .autograd import classifier_step

DTYPES = ("float32", "float16", "bfloat16")


def _ops(lib, name):
    import numpy as np
    d = getattr(lib, name)
    rng = np.random.default_rng(0)
    x, y = (lib.tensor(rng.standard_normal(1 << 20).astype(np.float32)).to(d) for _ in range(2))
    a, b = (lib.tensor(rng.standard_normal((256, 256)).astype(np.float32)).to(d)
            for _ in range(2))
    return {"x + y": (lambda: x + y, "2^20"), "gelu(x)": (lambda: lib.nn.functional.gelu(x),
                                                        "2^20"),
            "x.sum()": (lambda: x.sum(), "2^20"), "a @ b": (lambda: a @ b, "256^3"),
            "MLP step": (mlp_step(lib, name), "64x256, 256 hidden")}


def mlp_step(lib, name, batch=64, width=256, classes=10):
    """One SGD step of Linear-GELU-LayerNorm-Linear with cross-entropy in dtype `name`."""
    import numpy as np
    lib.manual_seed(0)
    nn, d = lib.nn, getattr(lib, name)
    model = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width),
                          nn.Linear(width, classes)).to(d)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((batch, width)).astype(np.float32)).to(d)
    return classifier_step(lib, model, opt, x, lib.tensor(rng.integers(0, classes, batch)))


def measure(quick=False):
    """Rows {op, shape, and seconds per peer} measured in this run."""
    import jitensor as jt
    torch = optional("torch")
    libs = {"jitensor": jt} if torch is None else {"jitensor": jt, "torch": torch}
    rows = []
    for name in DTYPES:
        ops = {peer: _ops(lib, name) for peer, lib in libs.items()}
        for op, (_, shape) in ops["jitensor"].items():
            fns = {peer: ops[peer][op][0] for peer in libs}
            rows.append({"op": f"{op} {name}", "shape": shape,
                         **compare(fns, budget=0.1 if quick else 0.5)})
    return rows


if __name__ == "__main__":
    print_rows("float16 and bfloat16 (CPU)", measure("--quick" in sys.argv))
