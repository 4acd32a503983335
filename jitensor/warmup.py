"""`python -m jitensor warmup`: compile the kernels of common programs into the on-disk kernel
cache ahead of their first run.

Each job runs a representative workload in a process of its own (several at once when there
are several cores: Numba compiles on one thread): training steps of a small GPT, an MLP and a
CNN (forward, backward, AdamW / Adam / SGD), and elementwise ops, reductions, indexing and
copies of float32, float64, int64 and bool tensors, small (the serial kernels) and, in
float32, large (the parallel ones). A last pass in this process runs every job again from the
cache: processes that saved the same kernel at once may have dropped one's index entry."""
import os
import subprocess
import sys
import time

SMALL, LARGE = (4, 8), (256, 512)  # below and above kernels.PARALLEL_MIN elements


def _steps(jt, make, n=2):
    step = make(jt)
    for _ in range(n):
        step()


def gpt(jt):
    from .bench.compile_report import gpt_step
    _steps(jt, gpt_step)


def mlp_cnn(jt):
    from .bench.autograd import _mlp, cnn_step
    _steps(jt, _mlp)
    _steps(jt, cnn_step)


def _ops(jt, dtype, shape):
    x = (jt.rand(*shape) * 10).to(dtype)
    y = (jt.rand(*shape) * 10 + 1).to(dtype)
    row = y[0]
    mask = x > y
    for z in (x + y, x - y if dtype is not jt.bool else x ^ y, x * y, x * 2, x + row, x == y,
              x < y, x >= 1, jt.where(mask, x, y), jt.maximum(x, y), x.t().contiguous(),
              x.sum(), x.sum(0), x.sum(-1), x.max(), x.max(-1).values,
              x.argmax(-1) if dtype is not jt.bool else x, x.any(), x.all(-1), x[mask],
              x[jt.tensor([0, 1])], x[:, 1:].clone(),
              jt.cat([x, y]), x.clone().fill_(1), jt.zeros_like(x), jt.ones_like(x)):
        del z
    if dtype.is_floating_point:
        for z in (x / y, x.exp(), x.log(), x.sqrt(), x.abs(), -x, x.neg().relu(), x.mean(-1),
                  x.pow(2), x.softmax(-1), x.tanh(), x.sigmoid(), x.clamp(0, 1), x.mean()):
            del z
    elif dtype is jt.int64:
        for z in (x // y, x % y, x.float(), x.abs(), -x):
            del z


def float32(jt):
    _ops(jt, jt.float32, SMALL)
    _ops(jt, jt.float32, LARGE)


def other_dtypes(jt):
    for dtype in (jt.float64, jt.int64, jt.bool):
        _ops(jt, dtype, SMALL)


# the longest first; large float64, int64 and bool operands (parallel kernels) are left to
# the programs that use them: each op's parallel kernel is a compile of its own
JOBS = {"gpt": gpt, "other_dtypes": other_dtypes, "mlp_cnn": mlp_cnn, "float32": float32}


def run_job(name):
    import jitensor as jt
    JOBS[name](jt)


def main(jobs=None):
    """Run every job, `jobs` processes at a time (default: one per core)."""
    if not jobs:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            os.cpu_count()
    t0 = time.perf_counter()
    pending, running = list(JOBS), []
    while pending or running:
        while pending and len(running) < jobs:
            name = pending.pop(0)
            running.append((name, subprocess.Popen([sys.executable, "-m", "jitensor.warmup",
                                                    name])))
        name, proc = running.pop(0)
        failed = proc.wait()
        print(f"warmup: {name} {'failed' if failed else 'done'} "
              f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    for name in JOBS:  # from the cache now; recompiles what racing saves dropped
        run_job(name)
    print(f"warmup: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    run_job(sys.argv[1])
