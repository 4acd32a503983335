"""The autograd report: jitensor against torch on the CPU.

``python -m jitensor.bench.autograd [--quick]``: the bookkeeping autograd adds to an op on 2x3
tensors (the op with inputs that require grad, minus the same op without), a tiny forward and
backward, nn.functional activations of 2^20 elements with and without their backward,
cross-entropy, an embedding lookup, LayerNorm and RMSNorm with and without their backward, and
training steps (forward, backward, optimizer): a 784-128-10 MLP at batch 64, a small CNN, a tiny
GPT, and the GPT again with another process spinning on one core (a busy machine)."""
import contextlib
import sys

from . import busy_neighbour, compare, optional, per_call, print_rows, timeit
from .compile_report import gpt_step


def _tiny(jt, torch):
    """Rows for 2x3 float32 tensors: x * y without and with grad, their difference, and
    (x * y).sum().backward()."""
    def fns(lib):
        x, y = lib.ones(2, 3), lib.ones(2, 3)
        gx, gy = lib.ones(2, 3, requires_grad=True), lib.ones(2, 3, requires_grad=True)

        def step():
            (gx * gy).sum().backward()
        return lambda: x * y, lambda: gx * gy, step

    peers = {"jitensor": fns(jt)}
    if torch is not None:
        peers["torch"] = fns(torch)
    rows = {}
    for peer, (plain, graded, step) in peers.items():
        t0, t1, t2 = (per_call(f, number=5_000) for f in (plain, graded, step))
        for op, t in (("x * y, no grad", t0), ("x * y, grad", t1),
                      ("autograd bookkeeping", t1 - t0), ("(x*y).sum().backward()", t2)):
            rows.setdefault(op, {"op": op, "shape": (2, 3)})[peer] = t
    return list(rows.values())


def _mlp(lib, batch=64, sizes=(784, 128, 10)):
    """One training step of a 2-layer MLP with Adam and cross-entropy, for jt or torch."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(), nn.Linear(sizes[1], sizes[2]))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.randn(batch, sizes[0])
    y = lib.randint(0, sizes[2], (batch,))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def cnn_step(lib, batch=32, device="cpu"):
    """One training step of a small CNN (two conv-batch_norm-relu blocks, max pooling between,
    global average pooling, a linear head) with SGD and momentum on 32x32 RGB images; returns
    the loss (asv_bench's TrainStep times it too)."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(32, 10)).to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(batch, 3, 32, 32, device=device)
    y = lib.randint(0, 10, (batch,), device=device)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _libs(jt, torch):
    return {"jitensor": jt, "torch": torch} if torch is not None else {"jitensor": jt}


def _with_backward(op, shape, libs, make, quick):
    """Rows for `op` alone and with its backward: make(lib) -> (forward, forward + backward)."""
    forward, both = {}, {}
    for peer, lib in libs.items():
        forward[peer], both[peer] = make(lib)
    budget = 0.05 if quick else 0.2
    return [{"op": op, "shape": shape, **compare(forward, budget=budget)},
            {"op": op + " + bwd", "shape": shape, **compare(both, budget=budget)}]


def _activations(jt, torch, quick, n=1 << 20):
    """Rows for nn.functional activations of n float32 elements: forward alone, and forward
    plus backward of its sum (one fused kernel each way)."""
    import numpy as np
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    libs = _libs(jt, torch)
    rows = []
    for name, kwargs in (("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}),
                         ("softplus", {}), ("leaky_relu", {}), ("elu", {})):
        def make(lib, name=name, kwargs=kwargs):
            fn, plain = getattr(lib.nn.functional, name), lib.tensor(x)
            grad = lib.tensor(x, requires_grad=True)
            return lambda: fn(plain, **kwargs), lambda: fn(grad, **kwargs).sum().backward()
        rows += _with_backward("F." + name + (" tanh" if kwargs else ""), (n,), libs, make,
                               quick)
    return rows


def _cross_entropy(jt, torch, quick):
    """Rows for F.cross_entropy of float32 scores against class indices (a classifier's batch,
    many classes, a segmentation map): forward alone, and forward plus backward."""
    import numpy as np
    rng = np.random.default_rng(0)
    rows = []
    for shape in ((64, 10), (256, 1000), (8, 21, 64, 64)):
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.integers(0, shape[1], shape[:1] + shape[2:])

        def make(lib, x=x, y=y):
            fn, target, plain = lib.nn.functional.cross_entropy, lib.tensor(y), lib.tensor(x)
            grad = lib.tensor(x, requires_grad=True)
            return lambda: fn(plain, target), lambda: fn(grad, target).backward()
        rows += _with_backward("F.cross_entropy", shape, _libs(jt, torch), make, quick)
    return rows


def _pointwise_losses(jt, torch, quick, shape=(8192, 128)):
    """Rows for the fused pointwise losses (mean-reduced) of float32 predictions: forward
    alone, and forward plus backward into the input."""
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.random(shape).astype(np.float32)
    p = 1 / (1 + np.exp(-x))
    rows = []
    for name, inputs in (("smooth_l1_loss", x), ("binary_cross_entropy", p),
                         ("binary_cross_entropy_with_logits", x)):
        def make(lib, name=name, inputs=inputs):
            fn, plain, target = getattr(lib.nn.functional, name), lib.tensor(inputs), \
                lib.tensor(y)
            grad = lib.tensor(inputs, requires_grad=True)
            return lambda: fn(plain, target), lambda: fn(grad, target).backward()
        rows += _with_backward("F." + name, shape, _libs(jt, torch), make, quick)
    return rows


def _module_rows(op, shape, x, build, libs, quick):
    """Rows for the module build(lib) on the array x: forward under no_grad, and forward plus
    the backward of its sum."""
    def make(lib):
        module = build(lib)
        plain, grad = lib.tensor(x), lib.tensor(x, requires_grad=True)

        def forward():
            with lib.no_grad():
                return module(plain)
        return forward, lambda: module(grad).sum().backward()
    return _with_backward(op, shape, libs, make, quick)


def _conv(jt, torch, quick):
    """Rows for nn.Conv2d (3x3, padding 1) and nn.BatchNorm2d on a small CNN's batch of 32
    float32 images of 16 channels, 32 x 32: forward, and forward plus backward."""
    import numpy as np
    shape = (32, 16, 32, 32)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return _module_rows("nn.Conv2d", shape, x, lambda lib: lib.nn.Conv2d(16, 32, 3, padding=1),
                        _libs(jt, torch), quick) + \
        _module_rows("nn.BatchNorm2d", shape, x, lambda lib: lib.nn.BatchNorm2d(16),
                     _libs(jt, torch), quick)


def _embedding(jt, torch, quick):
    """Rows for an embedding lookup and its backward (a batch of 32 sequences of 16 tokens in a
    table of 10000 x 64): the gradient is the table's size, written once."""
    import numpy as np
    rng = np.random.default_rng(0)
    table, tokens = rng.standard_normal((10000, 64)).astype(np.float32), \
        rng.integers(0, 10000, (32, 16))

    def make(lib):
        fn, idx = lib.nn.functional.embedding, lib.tensor(tokens)
        plain, weight = lib.tensor(table), lib.tensor(table, requires_grad=True)
        return lambda: fn(idx, plain), lambda: fn(idx, weight).sum().backward()
    return _with_backward("F.embedding", "10000x64 [32x16]", _libs(jt, torch), make, quick)


def _attention(jt, torch, quick):
    """Rows for causal F.scaled_dot_product_attention on float32 heads, forward and forward plus
    backward into q, k and v: the small GPT's (8 x 4 heads of 32 x 16) and a 6-layer GPT's (8 x 6
    heads of 256 x 64)."""
    import numpy as np
    rng = np.random.default_rng(0)
    rows = []
    for shape in ((8, 4, 32, 16), (8, 6, 256, 64)):
        arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]

        def make(lib, arrays=arrays):
            fn = lib.nn.functional.scaled_dot_product_attention
            plain = [lib.tensor(a) for a in arrays]
            grad = [lib.tensor(a, requires_grad=True) for a in arrays]
            return (lambda: fn(*plain, is_causal=True),
                    lambda: fn(*grad, is_causal=True).sum().backward())
        rows += _with_backward("F.scaled_dot_product_attention", "x".join(map(str, shape)),
                               _libs(jt, torch), make, quick)
    return rows


def _norms(jt, torch, quick):
    """Rows for nn.LayerNorm and nn.RMSNorm over the last dim of float32 activations (a small
    batch of 64 x 512, and 16 sequences of 512 tokens of 768), forward alone and forward plus
    the backward of its sum into the input, weight and bias."""
    import numpy as np
    rng = np.random.default_rng(0)
    rows = []
    for shape in ((64, 512), (8192, 768)):
        x = rng.standard_normal(shape).astype(np.float32)
        for name in ("LayerNorm", "RMSNorm"):
            rows += _module_rows(f"nn.{name}", shape, x,
                                 lambda lib, name=name, shape=shape:
                                 getattr(lib.nn, name)(shape[-1]),
                                 _libs(jt, torch), quick)
    return rows


def measure(quick=False):
    """Rows {op, shape, and seconds per peer} measured in this run."""
    import jitensor as jt
    torch = optional("torch")
    rows = _tiny(jt, torch) + _activations(jt, torch, quick) + _cross_entropy(jt, torch, quick) \
        + _pointwise_losses(jt, torch, quick) + _embedding(jt, torch, quick) \
        + _norms(jt, torch, quick) + _attention(jt, torch, quick) + _conv(jt, torch, quick)
    steps = (("MLP train step (Adam)", "64x784-128-10", _mlp, False),
             ("CNN train step (SGD)", "32x3x32x32, 2 conv", cnn_step, False),
             ("GPT train step (AdamW)", "2x64, 8x32 tokens", gpt_step, False),
             # all threads with another process spinning on one core (robustness under load)
             ("GPT step, busy machine", "2x64, 8x32 tokens", gpt_step, True))
    for op, shape, step, busy in steps:
        row = {"op": op, "shape": shape}
        for name, lib in (("jitensor", jt), ("torch", torch)):
            if lib is not None:
                run = step(lib)
                with busy_neighbour() if busy else contextlib.nullcontext():
                    row[name] = timeit(run, budget=0.5 if quick else 2.0)
        rows.append(row)
    return rows


if __name__ == "__main__":
    print_rows("autograd (CPU)", measure("--quick" in sys.argv))
