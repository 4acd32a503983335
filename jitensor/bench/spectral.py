"""The FFT and complex report: jitensor.fft's transforms at power-of-two, smooth, prime and
batched 2-D sizes, and complex elementwise ops, against numpy.fft and torch in one run:
``python -m jitensor.bench.spectral [--quick]``.

Each row times one call that allocates its result; ratios are peer time / jitensor time, so
above 1 means jitensor is faster. (NumPy computes complex64 transforms in complex64 too.)"""
import sys

import numpy as np

from . import compare, optional, print_rows

FULL = {"sizes": (1 << 10, 1 << 16, 1 << 20, 1 << 22, 1000, 3 * 5 ** 7, 10007),
        "batched": (64, 1024), "image": (512, 512), "complex": 1 << 20}
QUICK = {"sizes": (1 << 10, 1 << 16, 1000, 10007), "batched": (16, 256), "image": (128, 128),
         "complex": 1 << 16}


def _cases(sizes):
    """(op, shape text, {peer: callable}) for every benchmark row."""
    import jitensor as jt
    torch = optional("torch")
    rng = np.random.default_rng(0)

    def signal(shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)

    rows = []

    def row(op, text, x, mine, numpy_fn, torch_fn):
        jx = jt.from_numpy(x)
        peers = {"jitensor": lambda: mine(jx), "numpy": lambda: numpy_fn(x)}
        if torch is not None:
            tx = torch.from_numpy(x)
            peers["torch"] = lambda: torch_fn(tx)
        rows.append((op, text, peers))

    for n in sizes["sizes"]:
        row("fft", f"{n} complex64", signal(n), jt.fft.fft, np.fft.fft,
            torch and torch.fft.fft)
    n = sizes["sizes"][1]
    real = rng.standard_normal(n).astype(np.float32)
    row("rfft", f"{n} float32", real, jt.fft.rfft, np.fft.rfft, torch and torch.fft.rfft)
    b, n = sizes["batched"]
    row("fft(dim=-1)", f"({b}, {n}) complex64", signal((b, n)), jt.fft.fft, np.fft.fft,
        torch and torch.fft.fft)
    image = rng.standard_normal(sizes["image"]).astype(np.float32)
    row("rfft2", f"{sizes['image']} float32", image, jt.fft.rfft2, np.fft.rfft2,
        torch and torch.fft.rfft2)
    row("fft2", f"{sizes['image']} complex64", signal(sizes["image"]), jt.fft.fft2,
        np.fft.fft2, torch and torch.fft.fft2)
    z = signal(sizes["complex"])
    row("z * z", f"{sizes['complex']} complex64", z, lambda t: t * t, lambda a: a * a,
        lambda t: t * t)
    row("z.exp()", f"{sizes['complex']} complex64", z, lambda t: t.exp(), np.exp,
        lambda t: t.exp())
    return rows


def measure(quick=False):
    """Rows of {op, shape, and median seconds per peer}, measured in this run."""
    return [{"op": op, "shape": shape, **compare(peers, budget=0.04 if quick else 0.17)}
            for op, shape, peers in _cases(QUICK if quick else FULL)]


if __name__ == "__main__":
    print_rows("FFT and complex", measure("--quick" in sys.argv))
