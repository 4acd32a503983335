"""The GPU report: jitensor's CUDA backend against torch and CuPy on the same GPU, timed with a
device synchronize around every call (the figures issue #4 asks for).

``python -m jitensor --device cuda`` runs it; ``python -m jitensor.bench.gpu --small`` runs the
same code on tiny sizes (so it also runs, slowly, in numba's CUDA simulator)."""
import sys

from . import optional, per_call, print_rows, timeit


def _peers():
    import jitensor as jt
    peers = {"jitensor": (jt, jt.cuda.synchronize)}
    torch = optional("torch")
    if torch is not None and torch.cuda.is_available():
        peers["torch"] = (torch, torch.cuda.synchronize)
    cupy = optional("cupy")
    if cupy is not None:
        try:
            cupy.cuda.runtime.getDeviceCount()
            peers["cupy"] = (cupy, cupy.cuda.runtime.deviceSynchronize)
        except Exception:
            pass
    return peers


def _cases(small):
    """(op, shape, work key, work amount, fn(lib) -> callable)."""
    big, rows = (1 << 10, 16) if small else (1 << 28, 4096)
    gib = (1 << 10) if small else (1 << 28)  # float32 elements of 1 GiB

    def dev(lib):
        return {} if lib.__name__ == "cupy" else {"device": "cuda"}  # CuPy: the current GPU

    def rand(lib, *shape):
        return lib.ones(shape, dtype=lib.float32, **dev(lib))

    return [
        ("zeros", (gib,), "bytes", 4 * gib, lambda lib: lambda: lib.zeros(gib, dtype=lib.float32,
                                                                           **dev(lib))),
        ("ones", (gib,), "bytes", 4 * gib, lambda lib: lambda: lib.ones(gib, dtype=lib.float32,
                                                                         **dev(lib))),
        ("full", (gib,), "bytes", 4 * gib, lambda lib: lambda: lib.full((gib,), 2.0,
                                                                         dtype=lib.float32,
                                                                         **dev(lib))),
        ("add", (big,), "bytes", 12 * big, lambda lib: (lambda x: lambda: x + x)(rand(lib, big))),
        ("sum", (big,), "bytes", 4 * big, lambda lib: (lambda x: lambda: x.sum())(rand(lib, big))),
        ("softmax(dim=-1)", (rows, rows), "bytes", 8 * rows * rows,
         lambda lib: (lambda x: lambda: _softmax(lib, x))(rand(lib, rows, rows))),
        ("matmul f32", (rows, rows, rows), "flops", 2 * rows ** 3,
         lambda lib: (lambda x: lambda: x @ x)(rand(lib, rows, rows))),
    ]


def _softmax(lib, x):
    if hasattr(lib, "softmax"):
        return lib.softmax(x, dim=-1)
    e = lib.exp(x - x.max(axis=-1, keepdims=True))  # CuPy has no softmax: composed
    return e / e.sum(axis=-1, keepdims=True)


def _time(row, peer, measure):
    """row[peer] = measure(), or the error it raised noted in row["errors"]: on a GPU run that
    is the only one for a while, one failing op must not cost the rest of the report."""
    try:
        row[peer] = measure()
    except Exception as e:  # noqa: BLE001 - reported in the table and in the exit status
        row.setdefault("errors", []).append(f"{peer}: {type(e).__name__}: {e}"[:300])


class _Rows(list):
    """The report's rows, each also printed to stderr as it is measured: a crash part way
    through a GPU run still leaves the rows before it."""

    def append(self, row):
        super().append(row)
        times = ", ".join(f"{k} {v * 1e3:.4f} ms" for k, v in row.items()
                          if isinstance(v, float))
        print(f"  {row['op']}: {times} {row.get('errors', '')}", file=sys.stderr, flush=True)

    def __iadd__(self, rows):
        for row in rows:
            self.append(row)
        return self


def measure(small=False):
    peers = _peers()
    rows = _Rows()
    for op, shape, key, amount, make in _cases(small):
        row = {"op": op, "shape": shape, key: amount}
        for name, (lib, sync) in peers.items():
            _time(row, name, lambda make=make, lib=lib, sync=sync:
                  timeit(make(lib), sync=sync, budget=0.05 if small else 0.3))
        rows.append(row)
    for op, make in (("empty(2, 3)", lambda lib: lambda: lib.empty((2, 3), dtype=lib.float32,
                                                                     **{"device": "cuda"})),
                     ("x + y on 2x3", lambda lib: (lambda x: lambda: x + x)(
                         lib.ones((2, 3), dtype=lib.float32, device="cuda")))):
        row = {"op": op, "shape": (2, 3)}
        for name, (lib, sync) in peers.items():
            if name == "cupy":  # cupy takes no device= argument
                continue

            def tiny(make=make, lib=lib, sync=sync):
                fn = make(lib)
                t = per_call(fn, number=200 if small else 5000)
                sync()
                return t
            _time(row, name, tiny)
        rows.append(row)
    rows += [_cross_entropy(peers, small), _bce_with_logits(peers, small),
             _embedding(peers, small), *_modules(peers, small)]
    return rows


def _nn_row(op, shape, peers, small, make):
    """A row for a torch.nn op (CuPy has none): make(lib) -> the callable to time."""
    row = {"op": op, "shape": shape}
    for name, (lib, sync) in peers.items():
        if name != "cupy":
            _time(row, name, lambda lib=lib, sync=sync: timeit(make(lib), sync=sync,
                                                               budget=0.05 if small else 0.3))
    return row


def _cross_entropy(peers, small):
    """F.cross_entropy of float32 scores with its backward."""
    n, c = (8, 10) if small else (4096, 1000)

    def make(lib):
        x = lib.ones((n, c), dtype=lib.float32, device="cuda", requires_grad=True)
        y = lib.zeros((n,), dtype=lib.int64, device="cuda")
        return lambda: lib.nn.functional.cross_entropy(x, y).backward()
    return _nn_row("cross_entropy + bwd", (n, c), peers, small, make)


def _bce_with_logits(peers, small):
    """F.binary_cross_entropy_with_logits of float32 logits with its backward (one fused
    kernel each way, the mean's gradient read without a host sync)."""
    shape = (4, 6) if small else (8192, 1024)

    def make(lib):
        x = lib.randn(shape, device="cuda", requires_grad=True)
        y = lib.rand(shape, device="cuda")
        return lambda: lib.nn.functional.binary_cross_entropy_with_logits(x, y).backward()
    return _nn_row("bce_with_logits + bwd", shape, peers, small, make)


def _embedding(peers, small):
    """F.embedding of a token batch (random tokens: the backward's atomic adds spread over the
    table) with its backward."""
    n, dim, tokens = (16, 4, (2, 3)) if small else (50000, 256, (64, 128))

    def make(lib):
        w = lib.ones((n, dim), dtype=lib.float32, device="cuda", requires_grad=True)
        i = lib.randint(0, n, tokens, device="cuda")
        return lambda: lib.nn.functional.embedding(i, w).sum().backward()
    return _nn_row("embedding + bwd", (n, dim, *tokens), peers, small, make)


def _modules(peers, small):
    """torch.nn modules on float32 activations, forward alone and with the backward into the
    input and the parameters: nn.LayerNorm over the last dim of 16 sequences of 512 tokens of
    768 features; a ResNet stage's 3x3 nn.Conv2d and nn.BatchNorm2d (32 x 64 x 56 x 56)."""
    rows = []
    for op, shape, build in (
            ("layer_norm", (4, 6) if small else (8192, 768),
             lambda lib, shape: lib.nn.LayerNorm(shape[-1], device="cuda")),
            ("conv2d 3x3", (2, 3, 5, 5) if small else (32, 64, 56, 56),
             lambda lib, shape: lib.nn.Conv2d(shape[1], shape[1], 3, padding=1, device="cuda")),
            ("batch_norm2d", (2, 3, 5, 5) if small else (32, 64, 56, 56),
             lambda lib, shape: lib.nn.BatchNorm2d(shape[1], device="cuda"))):
        def make(lib, backward, shape=shape, build=build):
            module = build(lib, shape)
            x = lib.randn(shape, device="cuda", requires_grad=backward)
            if backward:
                g = lib.ones(module(x).shape, device="cuda")
                return lambda: module(x).backward(g)

            def forward():
                with lib.no_grad():
                    return module(x)
            return forward
        rows += [_nn_row(op, shape, peers, small, lambda lib, make=make: make(lib, False)),
                 _nn_row(op + " + bwd", shape, peers, small,
                         lambda lib, make=make: make(lib, True))]
    return rows


def main(argv=None):
    small = "--small" in (argv if argv is not None else sys.argv[1:])
    rows = measure(small)
    print_rows("GPU", rows)
    sys.exit(any("errors" in r for r in rows))


if __name__ == "__main__":
    main()
