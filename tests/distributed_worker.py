"""One rank of a test_distributed.py job (``mpiexec -n N python distributed_worker.py CASE``):
runs CASE's checks against NumPy references computed here, asserting, and prints "ok RANK" at
the end. Not collected by pytest (no test_ prefix)."""
import sys
from datetime import timedelta

import numpy as np

import jitensor as jt
import jitensor.distributed as dist
from jitensor.distributed import ReduceOp


def value(r, shape=(2, 3), dtype=np.float32):
    """Rank r's tensor in the checks: distinct on every rank, exact in float32."""
    return (np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 10 * r + 1).astype(dtype)


def check(t, expected):
    np.testing.assert_array_equal(t.numpy(), expected)


def collectives(rank, n):
    ranks = range(n)
    refs = {ReduceOp.SUM: sum, ReduceOp.MAX: np.maximum.reduce, ReduceOp.MIN: np.minimum.reduce,
            ReduceOp.PRODUCT: np.multiply.reduce, ReduceOp.AVG: lambda v: sum(v) / n}
    for op, ref in refs.items():
        t = jt.tensor(value(rank))
        buffer = t._data
        dist.all_reduce(t, op=op)
        check(t, ref([value(r) for r in ranks]).astype(np.float32))
        assert t._data is buffer  # in place, zero-copy
    for dtype in (np.int64, np.int32, np.uint8, np.float64):
        t = jt.tensor(value(rank, dtype=dtype))
        dist.all_reduce(t)
        check(t, sum(value(r, dtype=dtype) for r in ranks))
    t = jt.tensor(np.array([rank == 0, False, True]))
    dist.all_reduce(t)  # bool: logical or, as torch
    check(t, np.array([True, False, True]))
    t = jt.tensor(value(rank, (4, 6)))[:, ::2]  # not contiguous: through a copy, written back
    dist.all_reduce(t)
    check(t, sum(value(r, (4, 6)) for r in ranks)[:, ::2])

    for src in ranks:
        t = jt.tensor(value(rank))
        dist.broadcast(t, src=src)
        check(t, value(src))
    dst = n - 1
    t = jt.tensor(value(rank))
    dist.reduce(t, dst=dst, op=ReduceOp.MAX)
    check(t, value(n - 1) if rank == dst else value(rank))

    out = [jt.zeros(2, 3) for _ in ranks]
    dist.all_gather(out, jt.tensor(value(rank)))
    for r in ranks:
        check(out[r], value(r))
    out = jt.zeros(2 * n, 3)
    dist.all_gather_into_tensor(out, jt.tensor(value(rank)))
    check(out, np.concatenate([value(r) for r in ranks]))

    big = [value(r, (n * 2, 3)) for r in ranks]
    out = jt.zeros(2, 3)
    dist.reduce_scatter_tensor(out, jt.tensor(big[rank]))
    check(out, sum(big)[2 * rank:2 * rank + 2])
    dist.reduce_scatter_tensor(out, jt.tensor(big[rank]), op=ReduceOp.AVG)
    check(out, (sum(big) / n)[2 * rank:2 * rank + 2])

    lst = [jt.zeros(2, 3) for _ in ranks] if rank == 0 else None
    dist.gather(jt.tensor(value(rank)), lst, dst=0)
    if rank == 0:
        for r in ranks:
            check(lst[r], value(r))
    t = jt.zeros(2, 3)
    dist.scatter(t, [jt.tensor(value(r) * 7) for r in ranks] if rank == 1 else None, src=1)
    check(t, value(rank) * 7)

    # all_to_all with sizes that differ between pairs: rank i sends i + j + 1 elements to j
    inputs = [jt.full((rank + j + 1,), float(100 * rank + j)) for j in ranks]
    outputs = [jt.zeros(j + rank + 1) for j in ranks]
    dist.all_to_all(outputs, inputs)
    for j in ranks:
        check(outputs[j], np.full(j + rank + 1, 100 * j + rank, np.float32))
    out = jt.zeros(n, 2)
    dist.all_to_all_single(out, jt.tensor(value(rank, (n, 2))))
    check(out, np.stack([value(j, (n, 2))[rank] for j in ranks]))

    # point to point around a ring, blocking and not
    right, left = (rank + 1) % n, (rank - 1) % n
    t = jt.zeros(2, 3)
    if rank % 2 == 0:
        dist.send(jt.tensor(value(rank)), dst=right)
        dist.recv(t, src=left)
    else:
        dist.recv(t, src=left)
        dist.send(jt.tensor(value(rank)), dst=right)
    check(t, value(left))
    t = jt.zeros(2, 3)
    works = [dist.isend(jt.tensor(value(rank)), dst=right, tag=5), dist.irecv(t, src=left, tag=5)]
    for w in works:
        w.wait()
    check(t, value(left))
    if rank == 0:
        got = {dist.recv(jt.zeros(2, 3)) for _ in range(n - 1)}  # from any rank
        assert got == set(range(1, n)), got
    else:
        dist.send(jt.tensor(value(rank)), dst=0)

    # async collectives: the handle, then the values
    t = jt.tensor(value(rank))
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    assert work.is_completed()
    check(t, sum(value(r) for r in ranks))
    t = jt.tensor(value(rank))
    work = dist.broadcast(t, src=0, async_op=True)
    while not work.is_completed():
        pass
    check(t, value(0))
    out = jt.zeros(2 * n, 3)
    dist.all_gather_into_tensor(out, jt.tensor(value(rank)), async_op=True).wait()
    check(out, np.concatenate([value(r) for r in ranks]))
    dist.barrier(async_op=True).wait()

    objs = [None] * n
    dist.all_gather_object(objs, {"rank": rank, "sq": rank * rank})
    assert objs == [{"rank": r, "sq": r * r} for r in ranks], objs
    objs = [rank, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(objs, src=0)
    assert objs == [0, "x"], objs

    # a group of ranks 0 and n-1; other ranks are not in it
    group = dist.new_group([0, n - 1])
    if rank in (0, n - 1):
        assert dist.get_world_size(group) == 2
        t = jt.tensor(value(rank))
        dist.all_reduce(t, group=group)
        check(t, value(0) + value(n - 1))
        t = jt.tensor(value(rank))
        dist.broadcast(t, src=n - 1, group=group)
        check(t, value(n - 1))
    else:
        assert group is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(group) == -1
    dist.barrier()


def expect_error(fn, *words):
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        for w in words:
            assert w in str(e), (str(e), w)
        return str(e)
    raise AssertionError(f"no error; expected one with {words}")


def errors(rank, n):
    # each rank raises the same error, and the group stays usable after a metadata mismatch
    shape = (2, 3) if rank == 0 else (3, 2)
    expect_error(lambda: dist.all_reduce(jt.zeros(shape)), "all_reduce", "shape", "rank 1")
    dtype = jt.float32 if rank == 0 else jt.float64
    expect_error(lambda: dist.broadcast(jt.zeros(4, dtype=dtype), src=0), "dtype")
    call = (lambda: dist.all_reduce(jt.zeros(2))) if rank == 0 else (lambda: dist.barrier())
    expect_error(call, "same collective calls")
    expect_error(lambda: dist.all_reduce(jt.zeros(3, dtype=jt.int64), op=ReduceOp.AVG), "AVG")
    if rank == 0:
        dist.send(jt.zeros(5), dst=1)
    elif rank == 1:
        expect_error(lambda: dist.recv(jt.zeros(4), src=0), "sent float32 [5]")
    t = jt.ones(3)
    dist.all_reduce(t)
    check(t, np.full(3, n, np.float32))
    # a rank that does not arrive: rank 0 names it once the timeout passes
    group = dist.new_group(timeout=timedelta(seconds=2))
    if rank == n - 1:
        import time
        time.sleep(4)
    else:
        message = expect_error(lambda: dist.all_reduce(jt.ones(2), group=group), "timeout")
        if rank == 0:
            assert f"[{n - 1}]" in message, message


def ddp(rank, n):
    from jitensor import nn
    from jitensor.nn.parallel import DistributedDataParallel as DDP

    def make():
        jt.manual_seed(rank)  # different on every rank: DDP broadcasts rank 0's
        return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).double()
    model = DDP(make(), bucket_cap_mb=0.0002)  # a few buckets
    jt.manual_seed(0)
    ref = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).double()
    for p, q in zip(model.module.parameters(), ref.parameters(), strict=True):
        check(p.detach(), q.detach().numpy())
    assert list(model.state_dict())[0] == "module.0.weight"
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((4 * n, 5)), rng.standard_normal((4 * n, 3))
    mine = slice(4 * rank, 4 * rank + 4)

    def loss(m, xs, ys):
        return ((m(jt.tensor(xs)) - jt.tensor(ys)) ** 2).mean()
    loss(model, x[mine], y[mine]).backward()
    loss(ref, x, y).backward()
    for p, q in zip(model.module.parameters(), ref.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-15)
    # no_sync: two micro-batches accumulate locally, the second syncs their sum
    model.zero_grad()
    ref.zero_grad()
    half = [slice(4 * rank, 4 * rank + 2), slice(4 * rank + 2, 4 * rank + 4)]
    with model.no_sync():
        loss(model, x[half[0]], y[half[0]]).backward()
    loss(model, x[half[1]], y[half[1]]).backward()
    for h in range(2):
        idx = np.concatenate([np.arange(4 * r + 2 * h, 4 * r + 2 * h + 2) for r in range(n)])
        loss(ref, x[idx], y[idx]).backward()
    for p, q in zip(model.module.parameters(), ref.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-15)

    # find_unused_parameters: a layer only rank 0 uses still gets its gradient averaged
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 3)

        def forward(self, x, use_b):
            return self.b(self.a(x)) if use_b else self.a(x)
    jt.manual_seed(0)
    model = DDP(Branchy(), find_unused_parameters=True)
    for _ in range(2):
        model.zero_grad()
        model(jt.ones(2, 3), rank == 0).sum().backward()
        jt.manual_seed(0)
        ref = Branchy()
        total = [None, None]
        for r in range(n):
            ref.zero_grad()
            ref(jt.ones(2, 3), r == 0).sum().backward()
            for i, layer in enumerate((ref.a, ref.b)):
                g = layer.weight.grad.numpy() if layer.weight.grad is not None else 0
                total[i] = g if total[i] is None else total[i] + g
        for layer, g in zip((model.module.a, model.module.b), total, strict=True):
            np.testing.assert_allclose(layer.weight.grad.numpy(), g / n, rtol=1e-6)


def cuda(rank, n):
    """CUDA tensors (staged through host memory): the NumPy references, in place, on the device
    (Numba's simulator without a GPU: the test sets NUMBA_ENABLE_CUDASIM=1)."""
    ranks = range(n)

    def on_device(a):
        t = jt.tensor(a).to("cuda")
        assert t.device.type == "cuda", t.device
        return t

    def check_cuda(t, expected, buffer=None):
        assert t.device.type == "cuda", t.device
        assert buffer is None or t._data is buffer  # written into the tensor's own memory
        check(t.cpu(), expected)
    for dtype in (np.float32, np.float64, np.int64):
        t = on_device(value(rank, dtype=dtype))
        buffer = t._data
        dist.all_reduce(t)
        check_cuda(t, sum(value(r, dtype=dtype) for r in ranks), buffer)
    for op, ref in ((ReduceOp.AVG, lambda v: sum(v) / n), (ReduceOp.MAX, np.maximum.reduce)):
        t = on_device(value(rank))
        dist.all_reduce(t, op=op)
        check_cuda(t, ref([value(r) for r in ranks]).astype(np.float32))
    t = on_device(value(rank, (4, 6)))[:, ::2]  # not contiguous
    dist.all_reduce(t)
    check_cuda(t, sum(value(r, (4, 6)) for r in ranks)[:, ::2])
    t = on_device(value(rank))
    dist.all_reduce(t, async_op=True).wait()
    check_cuda(t, sum(value(r) for r in ranks))
    for src in ranks:
        t = on_device(value(rank))
        buffer = t._data
        dist.broadcast(t, src=src)
        check_cuda(t, value(src), buffer)
    t = on_device(value(rank))
    dist.broadcast(t, src=n - 1, async_op=True).wait()
    check_cuda(t, value(n - 1))

    # DistributedDataParallel on a CUDA module: rank 0's weights, then averaged gradients
    from jitensor import nn
    from jitensor.nn.parallel import DistributedDataParallel as DDP
    jt.manual_seed(rank)
    model = DDP(nn.Linear(3, 2).to("cuda"))
    jt.manual_seed(0)
    ref = nn.Linear(3, 2)
    x = np.arange(3 * n * 2, dtype=np.float32).reshape(2 * n, 3) / 7
    model(on_device(x[2 * rank:2 * rank + 2])).square().mean().backward()
    ref(jt.tensor(x)).square().mean().backward()
    for p, q in zip(model.module.parameters(), ref.parameters(), strict=True):
        assert p.device.type == "cuda" and p.grad.device.type == "cuda"
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().numpy())
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-6)


def main():
    case = sys.argv[1]
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, n = dist.get_rank(), dist.get_world_size()
    {"collectives": collectives, "errors": errors, "ddp": ddp, "cuda": cuda}[case](rank, n)
    if case != "errors":
        dist.barrier()
    dist.destroy_process_group()
    print(f"ok {rank}", flush=True)


if __name__ == "__main__":
    main()
