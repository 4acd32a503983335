"""`python -m jitensor`: how fast jitensor is next to NumPy and PyTorch, measured in one run.

By default, the headline: one table of empty / zeros / ones / full at three sizes, zeros(2, 3)
and x + y on tiny tensors, add / mul / exp / sum / softmax / matmul and an MLP training step,
each with its ratio to NumPy and torch, at small sizes and short timing.

--full runs every section at full size: creation (empty / zeros / ones / full from 1e3 to 1e8
float32 elements on every available device, the per-call cost of tiny tensors, import and first
call in a fresh process), then elementwise, reductions and softmax, matmul, indexing, autograd,
user kernels, recurrent layers, float16/bfloat16, FFTs and jt.compile's fusion. --only picks
sections; --quick runs them at fewer sizes, shorter timing.

--compile-report [gpt|mlp|cnn|gcn] runs one training step instead and lists the kernels Numba
compiled or loaded for it (jitensor/bench/compile_report.py): on an empty kernel cache
(NUMBA_CACHE_DIR), where a cold start spends its time.

`python -m jitensor warmup` compiles the kernels of common programs into the on-disk cache
ahead of their first run (jitensor/warmup.py)."""
import argparse
import functools
import importlib
import json
import subprocess
import sys

import numpy as np

from .bench import compare, compile_report, creation, headline, optional, per_call, print_rows

# (title, module under jitensor.bench) of the compute sections, each with measure(quick)
SECTIONS = [("elementwise, float32", "elementwise"), ("reductions and softmax", "reduction"),
            ("matmul", "linalg"), ("views and indexing", "indexing"), ("autograd", "autograd"),
            ("user kernels", "custom"), ("recurrent layers", "recurrent"),
            ("float16 and bfloat16 (CPU)", "half"), ("FFT and complex", "spectral"),
            ("jt.compile, eager and fused", "compile")]

_FRESH = ("import time; t0 = time.perf_counter(); import jitensor as jt; t1 = time.perf_counter();"
          " jt.zeros(2, 3); t2 = time.perf_counter(); print(t1 - t0, t2 - t1)")


def latency():
    """Per-call µs for tiny tensors, and import / first zeros(2, 3) in a new process."""
    import jitensor as jt
    calls = {
        "zeros(2, 3)": {"jitensor": lambda: jt.zeros(2, 3),
                        "numpy": lambda: np.zeros((2, 3), np.float32)},
        "empty(2, 3)": {"jitensor": lambda: jt.empty(2, 3),
                        "numpy": lambda: np.empty((2, 3), np.float32)},
    }
    torch = optional("torch")
    if torch is not None:
        calls["zeros(2, 3)"]["torch"] = lambda: torch.zeros(2, 3)
        calls["empty(2, 3)"]["torch"] = lambda: torch.empty(2, 3)
    rows = {name: compare(fns, measure=per_call, repeat=2) for name, fns in calls.items()}
    subprocess.run([sys.executable, "-c", _FRESH], check=True, capture_output=True)  # warm cache
    runs = [subprocess.run([sys.executable, "-c", _FRESH], check=True, capture_output=True,
                           text=True).stdout.split() for _ in range(3)]
    imp, first = (sorted(float(r[i]) for r in runs)[1] for i in (0, 1))
    return rows, {"import jitensor (s)": imp, "first zeros(2, 3) (s)": first}


def report(rows, tiny, fresh):
    peers = [p for p in ("numpy", "torch") if p in rows[0]]
    lines = []
    for device in dict.fromkeys(r["device"] for r in rows):
        lines.append(f"\n== creation on {device}: float32, median ms (GB/s); ratio = peer time / "
                     f"jitensor time (>1: jitensor faster)")
        lines.append("   fill routines timed with first touch; empty timed alone")
        head = f"{'routine':8}{'n':>7} {'jitensor':>18}" + "".join(
            f"{p:>18}{'ratio':>7}" for p in peers)
        lines.append(head)
        for r in (r for r in rows if r["device"] == device):
            def cell(t, r=r):
                return f"{t * 1e3:9.3f} ({r['bytes'] / t / 1e9:5.1f})"
            line = f"{r['routine']:8}{headline.size_text(r['n']):>7} {cell(r['jitensor']):>18}"
            for p in peers:
                line += f"{cell(r[p]):>18}{r[p] / r['jitensor']:7.2f}"
            lines.append(line)
    lines.append("\n== tiny tensors, µs per call (ratio = jitensor / peer)")
    for name, t in tiny.items():
        lines.append(f"{name:12} jitensor {t['jitensor'] * 1e6:6.2f}" + "".join(
            f"   {p} {t[p] * 1e6:6.2f} ({t['jitensor'] / t[p]:.2f}x)" for p in peers if p in t))
    lines.append("\n== fresh process (warm kernel cache), median of 3")
    lines += [f"{k:24} {v:.3f}" for k, v in fresh.items()]
    return "\n".join(lines)


def gpu_simulated():
    from .kernels.cuda import driver
    return driver.SIM


def progress(items, desc="benchmark", label=None):
    """Yield `items` while a tqdm bar on stderr counts them (with label(item) beside it); without
    tqdm (it comes with the `bench` extra), a line on stderr per item."""
    items = list(items)
    tqdm = optional("tqdm")
    if tqdm is None:
        for i, item in enumerate(items, 1):
            text = f": {label(item)}" if label else ""
            print(f"{desc} {i}/{len(items)}{text}", file=sys.stderr, flush=True)
            yield item
        return
    with tqdm.tqdm(items, desc=desc, file=sys.stderr, leave=False) as bar:
        for item in bar:
            if label:
                bar.set_postfix_str(label(item), refresh=True)
            yield item


def _case_label(case):
    row = case[0]
    shape = row["shape"] if isinstance(row["shape"], str) else "x".join(map(str, row["shape"]))
    return f"{row['op']} {shape}"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m jitensor", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    names = ["creation"] + [m for _, m in SECTIONS]
    ap.add_argument("command", nargs="?", choices=["warmup"],
                    help="warmup: compile the kernels of common programs (float32, float64, "
                         "int64 and bool ops, MLP, CNN and GPT training steps) into the on-disk "
                         "cache, in parallel processes, instead of measuring")
    ap.add_argument("--jobs", type=int, help="warmup's processes (default: one per core)")
    ap.add_argument("--full", action="store_true",
                    help="every section at full size instead of the headline (a long run)")
    ap.add_argument("--only", choices=names, action="append",
                    help="run only these sections (repeatable) instead of the headline")
    ap.add_argument("--quick", action="store_true",
                    help="the sections of --full / --only at fewer sizes and shorter timing; "
                         "alone, the headline (the default)")
    ap.add_argument("--device", choices=("all", "cpu", "cuda"), default="all",
                    help="which devices to measure (default: every available one)")
    ap.add_argument("--json", nargs="?", const="-", metavar="FILE",
                    help="write the results as JSON to FILE (or stdout) instead of a table")
    ap.add_argument("--compile-report", nargs="?", const="gpt", metavar="WORKLOAD",
                    choices=compile_report.WORKLOADS,
                    help="build a workload (gpt, the default; mlp; cnn) and run its first "
                         "training step, listing every kernel Numba compiled or loaded from "
                         "the disk cache, with times (run it on an empty cache to see a cold "
                         "start)")
    # tiny sizes for the headline, to check the report quickly (tests/test_main_job.py)
    ap.add_argument("--small", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.command == "warmup":
        from . import warmup
        warmup.main(args.jobs)
        return
    if args.compile_report:
        compile_report.main(args.compile_report)
        return

    import jitensor as jt
    devices = ["cpu", "cuda"] if args.device == "all" else [args.device]
    if "cuda" in devices and not jt.cuda.is_available():
        if args.device == "cuda":
            ap.error("--device cuda: CUDA is not available on this machine")
        devices.remove("cuda")
    if "cuda" in devices:  # the GPU report: jitensor against torch and CuPy on the device
        from .bench import gpu
        gpu_rows = gpu.measure(small=gpu_simulated())  # the simulator runs tiny sizes only
        if not args.json:
            print_rows("GPU (CUDA)", gpu_rows)
        devices.remove("cuda")
        if args.device == "cuda":
            if args.json:
                print(json.dumps({"gpu": gpu_rows}, indent=1, default=str))
            sys.exit(any("errors" in r for r in gpu_rows))  # failed ops are in the table
    wanted = set(args.only or (names if args.full else ()))
    results = {}
    if not wanted:
        rows = headline.measure(args.small, functools.partial(progress, desc="headline",
                                                              label=_case_label))
        results["headline"] = rows
        if not args.json:
            print_rows("headline, float32 on the CPU", rows)
            print(f"\n{headline.NOTE}", flush=True)
    if "creation" in wanted:
        rows = [r for d in devices for r in creation.measure(
            d, args.quick, functools.partial(progress, desc="creation"))]
        tiny, fresh = latency()
        results["creation"] = {"rows": rows, "tiny_seconds": tiny, "fresh_process": fresh}
        if not args.json:
            print(report(rows, tiny, fresh), flush=True)
    chosen = [(title, name) for title, name in SECTIONS if name in wanted]
    for i, (title, name) in enumerate(chosen, 1):
        print(f"section {i}/{len(chosen)}: {title}", file=sys.stderr, flush=True)
        module = importlib.import_module(f"jitensor.bench.{name}")
        results[name] = module.measure(args.quick)
        if not args.json:
            print_rows(f"{title} (CPU)", results[name])
            sys.stdout.flush()
    if args.json:
        text = json.dumps(results, indent=1, default=str)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
