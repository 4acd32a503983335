"""Benchmark helpers shared by `python -m jitensor` and the threshold probe: adaptive repeat
timing with a median, and the peers (NumPy, torch) that are importable here."""
import gc
import importlib
import statistics
import time


def timeit(fn, budget=0.2, min_reps=3, max_reps=10_000, sync=None):
    """Median seconds per call of `fn()`, repeating until ~`budget` seconds have passed.
    Results are dropped (and collected) between calls so each call allocates afresh."""
    fn()  # warm: compile, first-call costs
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


def optional(name):
    """The module `name`, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None
