"""Thread counts: jt.set_num_threads / get_num_threads as torch's (errors included), every
parallel kernel's one-thread path against NumPy and against its threads' results, and forked
children (multiprocessing, data loader workers) that run kernels after their parent's thread
pool started: GNU OpenMP cannot run there, and Numba killed such a child at its first parallel
loop."""
import numba
import numpy as np
import pytest
from conftest import run_python

import jitensor as jt
from jitensor.kernels.cpu.kernels import PARALLEL_MIN
from jitensor.nn import functional as F


@pytest.fixture
def one_thread():
    threads = jt.get_num_threads()
    jt.set_num_threads(1)
    yield
    jt.set_num_threads(threads)


def test_get_and_set_num_threads():
    threads = jt.get_num_threads()
    assert threads == numba.get_num_threads() >= 1
    try:
        jt.set_num_threads(1)
        assert jt.get_num_threads() == numba.get_num_threads() == 1
        jt.set_num_threads(np.int64(numba.config.NUMBA_NUM_THREADS))
        assert jt.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    finally:
        jt.set_num_threads(threads)


@pytest.mark.parametrize("n, message", [
    (0, "expects a positive integer, got 0"), (-1, "expects a positive integer, got -1"),
    (2.5, "expects an int, but got float"), ("2", "expects an int, but got str"),
    (True, "expects an int, but got bool")])
def test_set_num_threads_rejects_what_torch_rejects(n, message):
    threads = jt.get_num_threads()
    with pytest.raises(RuntimeError, match=message):
        jt.set_num_threads(n)
    assert jt.get_num_threads() == threads


def test_set_num_threads_above_numbas_names_the_environment_variable():
    threads, limit = jt.get_num_threads(), numba.config.NUMBA_NUM_THREADS
    with pytest.raises(RuntimeError, match=f"at most {limit} threads.*NUMBA_NUM_THREADS="
                                           f"{limit + 1} before importing jitensor"):
        jt.set_num_threads(limit + 1)
    assert jt.get_num_threads() == threads


def _results():
    """Every family of parallel kernel on operands above PARALLEL_MIN, as NumPy arrays."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((320, 300)).astype(np.float32)
    assert a.size >= PARALLEL_MIN
    x = jt.tensor(a, requires_grad=True)
    t = jt.tensor(rng.integers(0, 300, 320))
    loss = F.cross_entropy(x, t)
    loss.backward()
    w = jt.nn.Parameter(jt.tensor(a))
    w.grad = jt.ones_like(w)
    jt.optim.Adam([w], lr=0.1).step()
    y = x.detach()
    return {
        "full": jt.full((320, 300), 1.5).numpy(), "arange": jt.arange(100000).numpy(),
        "copy": y.T.contiguous().numpy(), "add": (y + y[0]).numpy(), "exp": y.exp().numpy(),
        "where": jt.where(y > 0, y, 0.0).numpy(), "sum0": y.sum(0).numpy(),
        "sum1": y.sum(1).numpy(), "max1": y.max(1)[1].numpy(), "softmax0": y.softmax(0).numpy(),
        "softmax1": y.softmax(1).numpy(), "cumsum": y.cumsum(1).numpy(),
        "sort": y.sort(1)[0].numpy(), "argsort": y.sort(1, descending=True)[1].numpy(),
        "topk": y.topk(5)[1].numpy(), "masked": y[y > 1].numpy(),
        "nonzero": (y > 1).nonzero().numpy(), "gather": y.gather(1, t[:, None]).numpy(),
        "index": y[t].numpy(), "mm": (y[:64] @ y[:300, :64]).numpy(),
        "bmm": (y.reshape(32, 10, 300) @ y[:300].reshape(1, 300, 300)).numpy(),
        "mv": (y @ y[0]).numpy(), "int_mm": (t[:300, None] @ t[None, :300]).numpy(),
        "outer": jt.outer(y[0], y[:, 0]).numpy(), "loss": loss.detach().numpy(),
        "loss_grad": x.grad.numpy(), "adam": w.detach().numpy(),
    }


def test_one_thread_matches_numpy(one_thread):
    """The plain loops that parallel kernels run on one thread, against NumPy."""
    r = _results()
    rng = np.random.default_rng(7)
    a = rng.standard_normal((320, 300)).astype(np.float32)
    t = rng.integers(0, 300, 320)
    np.testing.assert_array_equal(r["full"], np.full((320, 300), 1.5, np.float32))
    np.testing.assert_array_equal(r["arange"], np.arange(100000))
    np.testing.assert_array_equal(r["copy"], a.T)
    np.testing.assert_array_equal(r["add"], a + a[0])
    np.testing.assert_allclose(r["exp"], np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(r["where"], np.where(a > 0, a, 0))
    np.testing.assert_allclose(r["sum0"], a.sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r["sum1"], a.sum(1), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(r["max1"], a.argmax(1))
    e0, e1 = np.exp(a - a.max(0)), np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(r["softmax0"], e0 / e0.sum(0), rtol=1e-5)
    np.testing.assert_allclose(r["softmax1"], e1 / e1.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(r["cumsum"], a.cumsum(1), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(r["sort"], np.sort(a, 1))
    np.testing.assert_array_equal(r["argsort"], np.argsort(-a, 1, kind="stable"))
    np.testing.assert_array_equal(r["topk"], np.argsort(-a, 1, kind="stable")[:, :5])
    np.testing.assert_array_equal(r["masked"], a[a > 1])
    np.testing.assert_array_equal(r["nonzero"], np.argwhere(a > 1))
    np.testing.assert_array_equal(r["gather"], a[np.arange(320), t][:, None])
    np.testing.assert_array_equal(r["index"], a[t])
    np.testing.assert_allclose(r["mm"], a[:64] @ a[:300, :64], rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(r["bmm"], a.reshape(32, 10, 300) @ a[:300], rtol=1e-4,
                               atol=1e-3)
    np.testing.assert_allclose(r["mv"], a @ a[0], rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(r["int_mm"], t[:300, None] @ t[None, :300])
    np.testing.assert_array_equal(r["outer"], np.outer(a[0], a[:, 0]))
    rows = a.astype(np.float64)
    lse = np.log(np.exp(rows - rows.max(1, keepdims=True)).sum(1)) + rows.max(1)
    np.testing.assert_allclose(r["loss"], np.mean(lse - rows[np.arange(320), t]), rtol=1e-5)


def test_one_thread_matches_the_threads(one_thread):
    """Same results on one thread as on all of them: bit for bit where the work is split
    without changing any sum (elementwise, copies, sorts, indexing, the loss), close where
    the split sets the order of additions."""
    serial = _results()
    jt.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    threaded = _results()
    rounded = {"sum0", "sum1", "cumsum", "softmax0", "mm", "bmm", "mv"}
    for name, value in serial.items():
        assert value.dtype == threaded[name].dtype and value.shape == threaded[name].shape, name
        if name in rounded:
            np.testing.assert_allclose(value, threaded[name], rtol=1e-5, atol=1e-4, err_msg=name)
        else:
            np.testing.assert_array_equal(value, threaded[name], err_msg=name)


FORKED = """
import os, sys, numba, numpy as np
sys.path.insert(0, "tests")
import jitensor as jt
from test_threads import _results

def in_child(check):
    pid = os.fork()
    if pid == 0:
        try:
            check()
        except BaseException as e:
            print("child failed:", repr(e), flush=True)
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)

# the pool not started yet: a child may start its own, with every thread
assert not numba.np.ufunc.parallel._is_initialized
def fresh():
    assert jt.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    assert (jt.ones(1 << 17) * 2).sum().item() == 1 << 18
print("fresh child", in_child(fresh))

parent = _results()
def child():
    assert jt.get_num_threads() == 1
    for name, value in _results().items():
        np.testing.assert_allclose(value, parent[name], rtol=1e-5, atol=1e-4, err_msg=name)
print("child", in_child(child))

# threads the child starts have one thread too, and it cannot ask for more
def threads_in_child():
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        counts = list(pool.map(lambda _: (jt.get_num_threads(),
                                          (jt.ones(1 << 17) * 2).sum().item()), range(4)))
    assert counts == [(1, 1 << 18)] * 4, counts
    if numba.config.NUMBA_NUM_THREADS > 1:
        try:
            jt.set_num_threads(2)
        except RuntimeError as e:
            assert "forked after its parent started the thread pool" in str(e)
        else:
            raise AssertionError("set_num_threads(2) was accepted in a forked child")
print("threads", in_child(threads_in_child))

# a fork while another thread holds Numba's pool locks (as numba.get_num_threads() takes them):
# the child never waits for them
import threading
from numba.np.ufunc import parallel as pool
held, done = threading.Event(), threading.Event()
def hold():
    with pool._backend_init_process_lock, pool._backend_init_thread_lock:
        held.set()
        done.wait()
holder = threading.Thread(target=hold)
holder.start()
held.wait()
print("locked", in_child(child))
done.set()
holder.join()
"""


def test_forked_children_run_kernels_after_the_pool_started():
    assert run_python(FORKED, timeout=300).splitlines()[-4:] == [
        "fresh child 0", "child 0", "threads 0", "locked 0"]
