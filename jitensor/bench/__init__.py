"""Benchmark helpers shared by `python -m jitensor` and the threshold probe: adaptive repeat
timing with a median, and the peers (NumPy, torch) that are importable here."""
import contextlib
import gc
import importlib
import statistics
import subprocess
import sys
import time


def timeit(fn, budget=0.2, min_reps=3, max_reps=10_000, sync=None):
    """Median seconds per call of `fn()`, repeating until ~`budget` seconds have passed.
    Results are dropped (and collected) between calls so each call allocates afresh."""
    for _ in range(3):  # warm: compile and first-call costs (one call left the MLP step's
        fn()  # first timings at 1.5 ms against 0.65 warm: first touches of fresh memory)
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or (time.perf_counter() - start < budget and len(times) < max_reps):
        t0 = time.perf_counter()
        result = fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
        del result
        if times[-1] > 1e-3:
            gc.collect()
    return statistics.median(times)


def per_call(fn, number=20_000, repeat=5):
    """Best-of-`repeat` mean seconds per call for tiny, fast calls."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def compare(fns, rounds=3, measure=timeit, **options):
    """{peer: seconds} for {peer: fn}: `rounds` rounds that each time every peer in turn with
    `measure(fn, **options)`, keeping each peer's best round. These shared machines change
    speed within seconds (2x on tiny ops, seen here): a slow spell then costs one round, not
    one peer."""
    # timeit collects garbage after every slow call, and a full collection walks every object
    # alive: numba, torch and jitensor make that a few hundred thousand, a tenth of a second
    # each time -- most of a report's wall time. Freezing what is alive now (after collecting
    # it) leaves each collection only this row's new objects; refcounts still free the frozen.
    gc.collect()
    gc.freeze()
    best = {}
    for _ in range(rounds):
        for peer, fn in fns.items():
            t = measure(fn, **options)
            best[peer] = min(best.get(peer, t), t)
    return best


def optional(name):
    """The module `name`, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None


@contextlib.contextmanager
def busy_neighbour():
    """Another process spinning on one core while the block runs (the context's value): the
    shared machine a researcher's program often meets, where a thread pool that waits for its
    thread on the busy core stalls every parallel op (docs/design.md, "Threads and fork")."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)  # (its interpreter started and spinning)
        yield spinner
    finally:
        spinner.kill()
        spinner.wait()


def print_rows(title, rows, file=None):
    """A table of rows {op, shape, [bytes | flops], jitensor, numpy, torch}: time per call,
    throughput where the row says how much work it is, and ratio = peer time / jitensor time
    (above 1: jitensor is faster)."""
    peers = [p for p in ("numpy", "torch", "cupy") if any(p in r for r in rows)]
    print(f"\n== {title}: median time; ratio = peer time / jitensor time (>1: jitensor faster)",
          file=file)
    print(f"{'op':24}{'shape':>16}{'jitensor':>26}" + "".join(f"{p:>26}{'ratio':>7}"
                                                            for p in peers), file=file)
    for r in rows:
        shape = r["shape"] if isinstance(r["shape"], str) else "x".join(map(str, r["shape"]))
        op = f"{r['op']} {r['dtype']}" if "dtype" in r else r["op"]
        mine = r.get("jitensor")
        line = f"{op:24}{shape:>16} {_cell(r, mine) if mine else 'failed':>25}"
        for p in peers:
            if p in r:
                line += f"{_cell(r, r[p]):>26}" + (_ratio(r[p] / mine) if mine else " " * 7)
            else:
                line += " " * 33
        print(line, file=file)
        for error in r.get("errors", ()):
            print(f"    {error}", file=file)


def _ratio(x):
    """Seven characters: two decimals, or one significant digit where two decimals would read
    0.00 or overflow the column."""
    return f"{x:7.2f}" if 0.01 <= x < 1000 else f"{x:7.1g}"


def _cell(row, seconds):
    """'1.234 ms (12.3 GB/s)', or µs for tiny calls; the rate from the row's bytes/flops."""
    text = f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.2f} µs"
    if "bytes" in row:
        text += f" ({row['bytes'] / seconds / 1e9:5.1f} GB/s)"
    elif "flops" in row:
        text += f" ({row['flops'] / seconds / 1e9:5.1f} GF/s)"
    return text
