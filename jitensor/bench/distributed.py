"""all_reduce bandwidth of jitensor.distributed (MPI) against torch.distributed with gloo, in the
same processes: ``mpiexec -n 2 python -m jitensor.bench.distributed`` (any rank count; torch
joins through tcp:// on MASTER_PORT, default 29511). Prints, on rank 0, the best time of
`--repeat` all-reduces of float32 tensors of 1 to 256 MiB, the bus bandwidth (2(n-1)/n bytes per
byte reduced, as nccl-tests count it) and the ratio of torch's time to jitensor's."""
import argparse
import os
import time

import numpy as np


def best(fn, repeat, barrier):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        barrier()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes-mib", default="1,4,16,64,256")
    p.add_argument("--repeat", type=int, default=5)
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
    tdist.destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
