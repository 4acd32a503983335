"""Tensors in shared memory (`share_memory_`, `Module.share_memory`) and tensors sent between
processes through torch.multiprocessing (jitensor/multiprocessing/reductions.py): the receiver
maps the sender's memory, as in torch."""
import os
import pickle
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import jitensor as jt
import jitensor.multiprocessing as mp


def _sent(t):
    """t pickled and unpickled by multiprocessing's pickler in this process (the descriptor is
    duplicated, so the result maps the same memory)."""
    return pickle.loads(ForkingPickler.dumps(t))


def test_share_memory_keeps_values_geometry_and_identity():
    base = jt.arange(24, dtype=jt.float64).view(4, 6)
    t = base.t()[1:, ::2]  # (a strided view with an offset; the only one once base is gone)
    del base
    values, stride, offset = t.tolist(), t.stride(), t.storage_offset()
    assert not t.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and t.untyped_storage().is_shared()
    assert (t.tolist(), t.stride(), t.storage_offset(), t.dtype) == \
        (values, stride, offset, jt.float64)
    ptr = t.data_ptr()
    t.share_memory_()  # already shared: nothing moves
    assert t.data_ptr() == ptr
    t.mul_(2)  # ops keep writing into the shared memory
    assert t.is_shared() and t.tolist() == (np.array(values) * 2).tolist()


@pytest.mark.parametrize("dtype", [jt.bool, jt.uint8, jt.int64, jt.float16, jt.bfloat16,
                                   jt.float32])
def test_every_dtype_and_empty_tensors_cross_sharing_memory(dtype):
    t = (jt.arange(6) % 3).to(dtype).view(2, 3)
    got = _sent(t)
    assert got.dtype is dtype and got.shape == t.shape and got.is_shared() and t.is_shared()
    assert got.to(jt.float32).tolist() == t.to(jt.float32).tolist()
    got[0, 0] = 1
    assert t[0, 0].item() == got[0, 0].item()  # one memory
    empty = _sent(jt.empty(0, 3, dtype=dtype))
    assert empty.shape == (0, 3) and empty.dtype is dtype


def test_a_view_crosses_with_its_place_in_the_storage():
    t = jt.arange(10.)
    t.share_memory_()
    v = t[2:8:2]
    got = _sent(v)
    assert got.tolist() == [2.0, 4.0, 6.0]
    got.fill_(-1)
    assert t.tolist() == [0, 1, -1, 3, -1, 5, -1, 7, 8, 9]


def test_share_memory_refuses_a_storage_other_tensors_view():
    t = jt.ones(4)
    view = t[1:]
    with pytest.raises(RuntimeError, match=r"share_memory_: 1 other tensor.*t.clone\(\)"):
        t.share_memory_()
    assert not t.is_shared()  # nothing moved
    t.add_(1)
    assert view.tolist() == [2, 2, 2]
    # sent anyway, it travels as a shared copy and the sender keeps its memory
    got = _sent(t)
    assert got.is_shared() and not t.is_shared() and got.tolist() == t.tolist()


def test_parameters_and_leaves_keep_their_kind_and_non_leaves_are_refused_as_torch():
    p = jt.nn.Parameter(jt.ones(3))
    got = _sent(p)
    assert type(got) is jt.nn.Parameter and got.requires_grad and p.is_shared()
    frozen = _sent(jt.nn.Parameter(jt.ones(2), requires_grad=False))
    assert type(frozen) is jt.nn.Parameter and not frozen.requires_grad
    leaf = _sent(jt.ones(2, requires_grad=True))
    assert leaf.requires_grad and leaf.is_leaf
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(jt.ones(2, requires_grad=True) * 2)
    # plain pickle (jt.save, deepcopy) still copies
    assert not pickle.loads(pickle.dumps(jt.ones(2))).is_shared()


def test_module_share_memory_shares_parameters_grads_and_buffers():
    model = jt.nn.Sequential(jt.nn.Linear(3, 4), jt.nn.BatchNorm1d(4))
    model(jt.randn(5, 3)).pow(2).sum().backward()
    opt = jt.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    assert model.share_memory() is model
    tensors = [*model.parameters(), *model.buffers(), *(p.grad for p in model.parameters())]
    assert all(t.is_shared() for t in tensors)
    opt.step()  # the optimizer holds the same parameters, now in shared memory
    for p, b in zip(model.parameters(), before, strict=True):
        assert p.is_shared() and not jt.equal(p, b)


def _train_step(model, seed):
    jt.manual_seed(seed)
    model.zero_grad()
    model(jt.randn(8, 3)).pow(2).mean().backward()
    with jt.no_grad():
        for p in model.parameters():
            p.sub_(0.1 * p.grad)


def _hold(t, q, done):
    t.add_(1)
    q.put(t * 10)  # a new tensor, sent back through shared memory
    done.wait()  # (the receiver takes the memory from this process: keep it alive till then)


def _round_trip(method, t):
    """What a child started by `method` with t sends back (see _hold)."""
    ctx = mp.get_context(method)
    q, done = ctx.Queue(), ctx.Event()
    p = ctx.Process(target=_hold, args=(t, q, done))
    p.start()
    try:
        got = q.get(timeout=120)
    finally:
        done.set()
        p.join(timeout=120)
    assert p.exitcode == 0
    return got


@pytest.mark.subprocess
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_processes_write_into_the_memory_they_share(method):
    t = jt.arange(6.).view(2, 3).share_memory_()
    got = _round_trip(method, t)
    assert t.tolist() == [[1, 2, 3], [4, 5, 6]]  # the child's add_ is seen here
    assert got.tolist() == [[10, 20, 30], [40, 50, 60]] and got.is_shared()


@pytest.mark.subprocess
def test_hogwild_training_updates_the_parent_model():
    """Two spawned processes train one model in shared memory: the parent's weights move by
    the sum of their (sequential, here) updates, as one process taking both steps would."""
    ctx = mp.get_context("spawn")
    jt.manual_seed(0)
    model = jt.nn.Linear(3, 2)
    reference = jt.nn.Linear(3, 2)
    reference.load_state_dict(model.state_dict())
    model.share_memory()
    for seed in (1, 2):  # one after the other: the result is then exact
        p = ctx.Process(target=_train_step, args=(model, seed))
        p.start()
        p.join(timeout=120)
        assert p.exitcode == 0
        _train_step(reference, seed)
    for a, b in zip(model.parameters(), reference.parameters(), strict=True):
        assert jt.equal(a, b)
    assert not jt.equal(model.weight, jt.nn.Linear(3, 2).weight)


@pytest.mark.subprocess
@pytest.mark.parametrize("context", [None, "spawn"])
def test_data_loader_workers_hand_batches_over_in_shared_memory(context):
    data = jt.utils.data.TensorDataset(jt.arange(300.).view(30, 10), jt.arange(30))
    loader = jt.utils.data.DataLoader(data, batch_size=7, num_workers=2,
                                      multiprocessing_context=context)
    batches = list(loader)
    assert all(x.is_shared() and y.is_shared() for x, y in batches)
    assert jt.equal(jt.cat([x for x, _ in batches]), data.tensors[0])
    assert jt.equal(jt.cat([y for _, y in batches]), data.tensors[1])


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_received_tensors_hold_no_file_descriptors():
    """A loop that keeps every batch it receives must not run out of descriptors (torch's
    "Too many open files"); a received tensor sent on goes as a shared copy."""
    before = len(os.listdir("/proc/self/fd"))
    kept = [_sent(jt.full((3,), float(i))) for i in range(2000)]
    assert len(os.listdir("/proc/self/fd")) - before < 20
    assert [t[0].item() for t in kept[::500]] == [0, 500, 1000, 1500]
    again = _sent(kept[0])
    again.fill_(-1)
    assert again.is_shared() and kept[0].tolist() == [0, 0, 0]


@pytest.mark.subprocess
def test_a_spawned_process_gets_copies_of_tensors_that_cannot_move():
    t = jt.arange(6.)
    view = t[2:]  # (t's storage has another view: t goes as a shared copy)
    got = _round_trip("spawn", t)
    assert got.tolist() == [10, 20, 30, 40, 50, 60]
    assert t.tolist() == [0, 1, 2, 3, 4, 5] and view.tolist() == [2, 3, 4, 5]
