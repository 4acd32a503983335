"""DataLoader with worker processes: batches in num_workers=0's order, get_worker_info and the
seeds torch gives workers, iterable datasets sharded by worker, persistent workers, errors
raised again in the main process with the worker's traceback, timeout, spawn, shutdown."""
import os
import random
import time

import numpy as np
import pytest

import jitensor as jt
from jitensor.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    TensorDataset,
    get_worker_info,
)
from jitensor.utils.data._worker import WorkerInfo

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


def data():
    return TensorDataset(jt.arange(26.0).reshape(13, 2), jt.arange(13))


def batches(loader):
    return [b[1].tolist() if isinstance(b, (list, tuple)) else b if isinstance(b, int)
            else b.tolist() for b in loader]


@pytest.mark.parametrize("options", [dict(batch_size=3), dict(batch_size=4, drop_last=True),
                                     dict(batch_size=None), dict(batch_size=2, shuffle=True)])
def test_batches_in_the_order_of_one_process(options):
    ref = DataLoader(data(), generator=jt.Generator().manual_seed(3), **options)
    par = DataLoader(data(), num_workers=3, generator=jt.Generator().manual_seed(3), **options)
    assert batches(par) == batches(ref)
    assert len(par) == len(ref)


class Report(Dataset):
    """Each item reports the worker that loaded it, its seeds and its random draws."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = get_worker_info() or WorkerInfo(-1, 0, 0, self)
        return {"i": i, "id": info.id, "n": info.num_workers, "seed": info.seed,
                "same": info.dataset is self or type(info.dataset) is Report,
                "py": random.random(), "np": float(np.random.rand()),
                "jt": float(jt.rand(()).item()), "pid": os.getpid(),
                "init": os.environ.get("WORKER_INIT", "")}


def _init(worker_id):
    os.environ["WORKER_INIT"] = f"ran {worker_id}"


def test_worker_info_seeds_and_init_fn_as_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data._utils.worker import _generate_state
    base = jt.empty((), dtype=jt.int64).random_(generator=jt.Generator().manual_seed(7)).item()
    loader = DataLoader(Report(), batch_size=None, num_workers=2, worker_init_fn=_init,
                        generator=jt.Generator().manual_seed(7))
    assert get_worker_info() is None
    items = list(loader)
    assert [x["i"] for x in items] == list(range(6))
    assert [x["id"] for x in items] == [0, 1, 0, 1, 0, 1]
    for worker in (0, 1):
        first = next(x for x in items if x["id"] == worker)
        assert first["n"] == 2 and first["same"] and first["init"] == f"ran {worker}"
        assert first["seed"] == base + worker
        random.seed(base + worker)
        assert first["py"] == random.random()
        np.random.seed(_generate_state(base, worker))
        assert first["np"] == np.random.rand()
        jt.manual_seed(base + worker)
        assert first["jt"] == jt.rand(()).item()
        torch.manual_seed(0)  # (torch only provides _generate_state here)
    assert len({x["pid"] for x in items}) == 2 and os.getpid() not in {x["pid"] for x in items}


class Shards(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


@pytest.mark.filterwarnings("ignore:This DataLoader will create")  # (torch's, on 2 cores)
@pytest.mark.parametrize("workers, batch_size, drop_last", [(2, 2, False), (3, 2, True),
                                                             (2, None, False), (4, 3, False)])
def test_iterable_dataset_sharded_as_torch(workers, batch_size, drop_last):
    torch = pytest.importorskip("torch")

    class TorchShards(torch.utils.data.IterableDataset):
        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            return iter(range(info.id, 9, info.num_workers))

    mine = DataLoader(Shards(9), batch_size=batch_size, num_workers=workers, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(TorchShards(), batch_size=batch_size,
                                         num_workers=workers, drop_last=drop_last)
    assert batches(mine) == batches(theirs)


def test_persistent_workers_keep_their_processes_and_order():
    # torch draws the workers' base seed once, not at each pass: the shuffles after it
    g = jt.Generator().manual_seed(1)
    jt.empty((), dtype=jt.int64).random_(generator=g)
    ref = BatchSampler(RandomSampler(Report(), generator=g), 2, False)
    loader = DataLoader(Report(), batch_size=2, shuffle=True, num_workers=2,
                        persistent_workers=True, generator=jt.Generator().manual_seed(1))
    epochs = [list(loader) for _ in range(3)]
    for epoch, expected in zip(epochs, [list(ref) for _ in range(3)], strict=True):
        assert [b["i"].tolist() for b in epoch] == expected
    pids = [{int(p) for b in epoch for p in b["pid"].tolist()} for epoch in epochs]
    assert pids[0] == pids[1] == pids[2] and len(pids[0]) == 2
    it = iter(loader)
    next(it)  # an unfinished pass, then a new one
    list(ref)  # (the unfinished pass's shuffle)
    assert [b["i"].tolist() for b in loader] == list(ref)
    workers = loader._workers_iter._workers
    loader._workers_iter._shutdown_workers()
    assert not any(w.is_alive() for w in workers)
    stream = DataLoader(Shards(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert batches(stream) == batches(stream) == [[0, 2], [1, 3], [4]]


class Failing(Dataset):
    def __init__(self, error):
        self.error = error

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise self.error
        return i


@pytest.mark.parametrize("error", [ValueError("bad item 5"), KeyError("missing")])
def test_worker_errors_are_raised_with_the_worker_traceback(error):
    loader = DataLoader(Failing(error), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(type(error)) as got:
        next(it)
    text = str(got.value)
    assert f"Caught {type(error).__name__} in DataLoader worker process 0." in text
    assert "Original Traceback (most recent call last):" in text and "__getitem__" in text
    assert not any(w.is_alive() for w in it._workers)


def _failing_init(worker_id):
    raise RuntimeError(f"init of {worker_id}")


def test_worker_init_fn_error_and_context_checks():
    with pytest.raises(RuntimeError, match="init of 0"):
        list(DataLoader(data(), num_workers=1, worker_init_fn=_failing_init))
    with pytest.raises(ValueError, match="multiprocessing_context option should specify"):
        DataLoader(data(), num_workers=1, multiprocessing_context="nope")
    with pytest.raises(ValueError, match="multiprocessing_context can only be used"):
        DataLoader(data(), multiprocessing_context="fork")


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(3)
        return i


def test_timeout_and_early_exit_shut_the_workers_down():
    loader = DataLoader(Slow(), num_workers=1, timeout=0.5)
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        next(iter(loader))
    it = iter(DataLoader(data(), batch_size=2, num_workers=2))
    next(it)
    workers = it._workers
    del it
    assert not any(w.is_alive() for w in workers)


def test_spawn_context():
    loader = DataLoader(data(), batch_size=5, num_workers=2, multiprocessing_context="spawn")
    assert batches(loader) == batches(DataLoader(data(), batch_size=5))
