"""The creation report: empty / zeros / ones / full against NumPy and torch on each device.

Every fill routine is timed as *create + first touch* (one write per 4 KiB page): np.zeros
returns calloc'ed pages that the kernel pays for only when they are first written, so timing the
call alone would flatter it. `empty` is timed as the call alone: it is meant to cost O(1)."""
import numpy as np

from . import compare, optional

PAGE = 4096
FULL_SIZES = (10**3, 10**4, 10**5, 10**6, 10**7, 1 << 26, 10**8)
QUICK_SIZES = (10**3, 10**5, 10**7, 1 << 26)
ROUTINES = ("empty", "zeros", "ones", "full")


def _touch(a, step):
    """Write one element per page of the NumPy view `a` (flat, contiguous)."""
    a[::step] = 1
    return a


def _cpu_peers(n):
    """name -> {routine: callable making a fresh n-element float32 array, touched}."""
    import jitensor as jt
    step = PAGE // 4
    peers = {"jitensor": {
        "empty": lambda: jt.empty(n),
        "zeros": lambda: _touch(jt.zeros(n).numpy(), step),
        "ones": lambda: _touch(jt.ones(n).numpy(), step),
        "full": lambda: _touch(jt.full((n,), 7.0).numpy(), step),
    }, "numpy": {
        "empty": lambda: np.empty(n, np.float32),
        "zeros": lambda: _touch(np.zeros(n, np.float32), step),
        "ones": lambda: _touch(np.ones(n, np.float32), step),
        "full": lambda: _touch(np.full(n, 7.0, np.float32), step),
    }}
    torch = optional("torch")
    if torch is not None:
        peers["torch"] = {
            "empty": lambda: torch.empty(n),
            "zeros": lambda: _touch(torch.zeros(n).numpy(), step),
            "ones": lambda: _touch(torch.ones(n).numpy(), step),
            "full": lambda: _touch(torch.full((n,), 7.0).numpy(), step),
        }
    return peers


def _warm_memory(nbytes):
    """Fault in `nbytes` once before timing. On virtual machines the first touch of memory the
    process never had costs several µs a page (the host backs it lazily); freed and re-faulted
    pages are cheap. Without this the first routine measured pays for everyone."""
    np.ones(nbytes, np.uint8)


def measure(device="cpu", quick=False, progress=None):
    """Rows of {device, routine, n, bytes, and seconds per peer}, measured in this run."""
    if device != "cpu":
        raise ValueError(f"no creation benchmark for device {device!r} yet")
    sizes = QUICK_SIZES if quick else FULL_SIZES
    budget = 0.05 if quick else 0.25
    _warm_memory(3 * max(sizes) * 4)
    rows = []
    work = [(n, r) for n in sizes for r in ROUTINES]
    for n, routine in (progress(work) if progress else work):
        fns = {name: routines[routine] for name, routines in _cpu_peers(n).items()}
        rows.append({"device": device, "routine": routine, "n": n, "bytes": 4 * n,
                     **compare(fns, budget=budget / 3)})
    return rows
