"""jitensor.distributed (MPI) against torch.distributed with gloo, in the same processes:
``mpiexec -n 2 python -m jitensor.bench.distributed [--section allreduce|ddp|all]`` (any rank
count; torch joins through tcp:// on MASTER_PORT, default 29511). Prints, on rank 0:

- allreduce: the best time of `--repeat` all-reduces of float32 tensors of 1 to 256 MiB, the
  bus bandwidth (2(n-1)/n bytes per byte reduced, as nccl-tests count it) and the ratio of
  torch's time to jitensor's.
- ddp: the time of a DistributedDataParallel training step (forward, backward with the
  gradient all-reduce, Adam) of a small MLP and a tiny GPT on a fixed global batch, on 1 rank
  (rank 0 alone, DDP on a group of one, the whole batch) and on every rank (each its share of
  the batch); the speedup is the 1-rank step time over the n-rank one (the throughput ratio on
  the same global batch; n is perfect scaling) and the efficiency the speedup over n. One
  thread a rank in both libraries (`--threads`), so n ranks use n cores; a rank with nothing to
  do sleeps (an MPI barrier would spin on a core). Measured numbers: docs/design.md,
  "Distributed"."""
import argparse
import os
import time

import numpy as np

from .compile_report import gpt_model


def best(fn, repeat, barrier):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        barrier()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def allreduce(args, jt, dist, torch, tdist, rank, n):
    if rank == 0:
        print(f"all_reduce float32, {n} ranks: best of {args.repeat}")
        print(f"{'MiB':>5} {'jitensor ms':>12} {'GB/s':>7} {'torch ms':>10} {'GB/s':>7} "
              f"{'torch/jt':>9}")
    for mib in map(int, args.sizes_mib.split(",")):
        count = mib * 2**20 // 4
        mine = jt.tensor(np.ones(count, np.float32))
        theirs = torch.ones(count)
        t_jt = best(lambda: dist.all_reduce(mine), args.repeat, dist.barrier)  # noqa: B023
        t_torch = best(lambda: tdist.all_reduce(theirs), args.repeat, tdist.barrier)  # noqa: B023
        bus = 2 * (n - 1) / n * mib * 2**20 / 1e9
        if rank == 0:
            print(f"{mib:>5} {t_jt * 1e3:>12.2f} {bus / t_jt:>7.2f} {t_torch * 1e3:>10.2f} "
                  f"{bus / t_torch:>7.2f} {t_torch / t_jt:>9.2f}")


# -- DDP step time -----------------------------------------------------------------------------
def mlp(lib, width=512, depth=3, features=256, classes=10):
    nn = lib.nn
    layers, d = [], features
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    model = nn.Sequential(*layers, nn.Linear(d, classes))

    def data(rng, batch):
        return (rng.standard_normal((batch, features)).astype(np.float32),
                rng.integers(0, classes, batch))

    def loss(model, x, y):
        return nn.functional.cross_entropy(model(x), y)
    return model, data, loss


def gpt(lib, n_layer=2, n_embd=64, n_head=4, block=32, vocab=65):
    """compile_report's small GPT (nanoGPT's layout)."""
    F = lib.nn.functional

    def data(rng, batch):
        tokens = rng.integers(0, vocab, (batch, block + 1))
        return tokens[:, :-1], tokens[:, 1:]

    def loss(model, x, y):
        return F.cross_entropy(model(x).view(-1, vocab), y.reshape(-1))
    return gpt_model(lib, n_layer, n_embd, n_head, block, vocab), data, loss


WORKLOADS = {"mlp": (mlp, "MLP 256-512x3-10", 256), "gpt": (gpt, "GPT 2x64, block 32", 16)}


def sleep_barrier(comm, timeout=600):
    """MPI's barrier without spinning: the waiting rank leaves its core to the working ones."""
    request, deadline = comm.Ibarrier(), time.monotonic() + timeout
    while not request.Test():
        if time.monotonic() > deadline:
            raise RuntimeError(f"a rank did not reach the barrier within {timeout} s")
        time.sleep(0.002)


def step_time(lib, ddp_class, group, name, share, rank_in_group, steps, to_tensor):
    """Seconds per DDP step of workload `name` on `group`, this rank taking the `share`-th
    part of each global batch."""
    build, _, batch = WORKLOADS[name]
    lib.manual_seed(0)
    model, data, loss = build(lib)
    ddp = ddp_class(model, process_group=group)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    part = batch // share
    mine = slice(rank_in_group * part, (rank_in_group + 1) * part)
    batches = [tuple(to_tensor(a[mine]) for a in data(rng, batch)) for _ in range(4)]

    def step(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss(ddp, x, y).backward()
        opt.step()
    for i in range(3):  # warm-up: kernels, buffers, buckets
        step(i)
    times = []
    for _ in range(5):  # the best of 5 runs of `steps` steps
        start = time.perf_counter()
        for i in range(steps):
            step(i)
        times.append((time.perf_counter() - start) / steps)
    return min(times)


def ddp(args, jt, dist, torch, tdist, rank, n):
    from mpi4py import MPI

    from jitensor.nn.parallel import DistributedDataParallel as JDDP
    comm = MPI.COMM_WORLD
    jt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    libs = {"jitensor": (jt, JDDP, dist, lambda a: jt.tensor(a))}
    if torch is not None:
        from torch.nn.parallel import DistributedDataParallel as TDDP
        libs["torch"] = (torch, TDDP, tdist, lambda a: torch.from_numpy(np.ascontiguousarray(a)))
    results = {}
    for lib_name, (lib, ddp_class, d, to_tensor) in libs.items():
        solo = d.new_group([0])  # every rank makes it; rank 0 alone is in it
        for name in WORKLOADS:
            if rank == 0:
                results[lib_name, name, 1] = step_time(lib, ddp_class, solo, name, 1, 0,
                                                       args.steps, to_tensor)
            sleep_barrier(comm)
            t = step_time(lib, ddp_class, None, name, n, rank, args.steps, to_tensor)
            results[lib_name, name, n] = t
            sleep_barrier(comm)
    if rank != 0:
        return
    print(f"DDP training step (forward, backward, Adam), {args.threads} thread(s) a rank; "
          f"speedup = step time at 1 rank / at {n} ranks on the same global batch")
    print(f"{'workload':<20} {'batch':>5} {'lib':<9} {'1 rank ms':>10} {f'{n} ranks ms':>11} "
          f"{'speedup':>8} {'eff.':>5} {'torch/jt':>9}")
    for name, (_, title, batch) in WORKLOADS.items():
        for lib_name in libs:
            t1, tn = results[lib_name, name, 1], results[lib_name, name, n]
            ratio = ""
            if lib_name == "torch":
                ratio = f"{tn / results['jitensor', name, n]:>9.2f}"
            print(f"{title:<20} {batch:>5} {lib_name:<9} {t1 * 1e3:>10.2f} {tn * 1e3:>11.2f} "
                  f"{t1 / tn:>8.2f} {t1 / tn / n:>5.2f} {ratio}")
    print("(torch/jt: torch's step time over jitensor's at", n, "ranks)")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--section", choices=("allreduce", "ddp", "all"), default="all")
    p.add_argument("--sizes-mib", default="1,4,16,64,256")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--steps", type=int, default=10, help="DDP steps a timed run")
    p.add_argument("--threads", type=int, default=1, help="threads a rank in the DDP section")
    args = p.parse_args()
    import torch
    import torch.distributed as tdist

    import jitensor as jt
    import jitensor.distributed as dist
    dist.init_process_group()
    rank, n = dist.get_rank(), dist.get_world_size()
    port = os.environ.get("MASTER_PORT", "29511")
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                             world_size=n)
    try:
        if args.section in ("allreduce", "all"):
            allreduce(args, jt, dist, torch, tdist, rank, n)
        if args.section in ("ddp", "all"):
            if rank == 0 and args.section == "all":
                print()
            ddp(args, jt, dist, torch, tdist, rank, n)
    except BaseException:
        import traceback

        from mpi4py import MPI
        traceback.print_exc()
        MPI.COMM_WORLD.Abort(1)  # the other ranks would wait for this one forever
    tdist.destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
