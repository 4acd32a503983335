"""A tiny nanoGPT (tests/programs/nanogpt/model.py, imported through jitensor.run's torch alias)
trained for a few Adam steps, for test_distributed_gpt.py: ``python distributed_gpt_worker.py
single OUT`` trains one process on each whole global batch; ``mpiexec -n 2 python
distributed_gpt_worker.py ddp OUT`` trains DistributedDataParallel, each rank on its share of
the same batches. Each writes its losses (the global batch's) and final weights to
OUT/<mode><rank>.npz, for the test to compare. Not collected by pytest (no test_ prefix)."""
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np

import jitensor as jt
from jitensor.run import install

install()  # `import torch` in model.py is jitensor
sys.path.insert(0, str(Path(__file__).with_name("programs") / "nanogpt"))

from model import GPT, GPTConfig  # noqa: E402

CONFIG = GPTConfig(block_size=16, vocab_size=32, n_layer=2, n_head=2, n_embd=32, dropout=0.0,
                   bias=True)
BATCH, STEPS, LR = 4, 3, 1e-3  # global batch; steps of Adam


def batches():
    """The global batches: the same on every process."""
    rng = np.random.default_rng(0)
    for _ in range(STEPS):
        data = rng.integers(0, CONFIG.vocab_size, (BATCH, CONFIG.block_size + 1))
        yield data[:, :-1], data[:, 1:]


def main():
    mode, out = sys.argv[1], Path(sys.argv[2])
    if mode == "single":
        rank, n = 0, 1
        jt.manual_seed(0)
        model = net = GPT(CONFIG)
    else:
        import jitensor.distributed as dist
        from jitensor.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("gloo", timeout=timedelta(seconds=120))
        rank, n = dist.get_rank(), dist.get_world_size()
        jt.manual_seed(rank)  # rank 1 starts from other weights: DDP broadcasts rank 0's
        net = GPT(CONFIG)
        model = DDP(net)
    opt = jt.optim.Adam(net.parameters(), lr=LR)
    share = BATCH // n
    losses = []
    for x, y in batches():
        mine = slice(rank * share, (rank + 1) * share)
        _, loss = model(jt.tensor(x[mine]), jt.tensor(y[mine]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        if n > 1:  # the global batch's loss: the mean of the ranks' equal shares
            dist.all_reduce(total, op=dist.ReduceOp.AVG)
        losses.append(total.item())
    np.savez(out / f"{mode}{rank}.npz", losses=np.array(losses),
             **{name: p.detach().numpy() for name, p in net.named_parameters()})
    if n > 1:
        dist.barrier()
        dist.destroy_process_group()
    print(f"ok {mode} {rank}", flush=True)


if __name__ == "__main__":
    main()
