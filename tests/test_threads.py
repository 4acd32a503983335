"""Thread counts: jt.set_num_threads / get_num_threads as torch's (errors included), every
parallel kernel's one-thread path against NumPy and against its threads' results, and forked
children (multiprocessing, data loader workers) that run kernels after their parent's thread
pool started: under TBB with all their threads; GNU OpenMP cannot run there, and Numba killed
such a child at its first parallel loop."""
import importlib.metadata

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
    """Under GNU OpenMP (the layer where TBB is not installed) a child runs on one thread."""
    assert run_python(FORKED, {"NUMBA_THREADING_LAYER": "omp"}, timeout=300).splitlines()[-4:] \
        == ["fresh child 0", "child 0", "threads 0", "locked 0"]


FORKED_TBB = """
import os, numba, numpy as np, sys
sys.path.insert(0, "tests")
import jitensor as jt
from test_threads import _results
parent = _results()
print(numba.threading_layer())
pid = os.fork()
if pid == 0:
    try:
        assert jt.get_num_threads() == numba.config.NUMBA_NUM_THREADS
        for name, value in _results().items():
            np.testing.assert_array_equal(value, parent[name], err_msg=name)
    except BaseException as e:
        print("child failed:", repr(e), flush=True)
        os._exit(1)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""


def test_tbb_is_the_layer_where_installed_and_forked_children_keep_their_threads():
    """jitensor picks TBB where the tbb wheel is installed (a dependency on Linux x86_64), whose
    pool a forked child restarts: the child keeps every thread, and its results the same bits."""
    try:
        importlib.metadata.version("tbb")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the tbb wheel is not installed: GNU OpenMP is the layer")
    assert run_python(FORKED_TBB, {"NUMBA_NUM_THREADS": "2"}, timeout=300).splitlines()[-2:] == [
        "tbb", "child 0"]


# -- Python threads: grad mode per thread, the shared generator, parallel kernels ------------------
N_THREADS = 6


def _in_threads(fn, n=N_THREADS):
    """[fn(0), ..., fn(n - 1)], each called on a thread of its own, all started together."""
    import threading
    start = threading.Barrier(n)
    results, errors = [None] * n, []

    def run(i):
        try:
            start.wait()
            results[i] = fn(i)
        except BaseException as e:  # reported by the caller's thread, where pytest sees it
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _train_linear(i, steps=25):
    """A Linear layer trained with Adam on data of its own (seeded by `i`): its parameters
    after."""
    rng = np.random.default_rng(i)
    x = jt.tensor(rng.standard_normal((16, 8)).astype(np.float32))
    y = jt.tensor(rng.standard_normal((16, 4)).astype(np.float32))
    model = jt.nn.Linear(8, 4)  # its init draws under no_grad; then set from `rng`
    with jt.no_grad():
        model.weight.copy_(jt.tensor(rng.standard_normal((4, 8)).astype(np.float32)))
        model.bias.copy_(jt.tensor(rng.standard_normal(4).astype(np.float32)))
    opt = jt.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()  # (under no_grad)
    assert jt.is_grad_enabled()
    return model.weight.detach().numpy(), model.bias.detach().numpy()


def _train_by_hand(i, steps=25):
    """Gradient descent written out: autograd with no_grad sections around the updates."""
    rng = np.random.default_rng(100 + i)
    x = jt.tensor(rng.standard_normal((12, 5)))
    y = jt.tensor(rng.standard_normal(12))
    w = jt.tensor(rng.standard_normal(5), requires_grad=True)
    for _ in range(steps):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        with jt.no_grad():
            w -= 0.1 * w.grad
            assert not (w * 2).requires_grad
        w.grad = None
        assert (w * 2).requires_grad
    return (w.detach().numpy(),)


@pytest.mark.parametrize("train", [_train_linear, _train_by_hand])
def test_threads_training_their_own_models_match_one_thread(train):
    """One thread's no_grad (an optimizer step, an init, backward's own) switches off
    recording in that thread only: each thread's model trains as it would alone."""
    alone = [train(i) for i in range(N_THREADS)]
    together = _in_threads(train)
    for mine, its in zip(alone, together, strict=True):
        for a, b in zip(mine, its, strict=True):
            np.testing.assert_array_equal(a, b)


def test_nested_no_grad_in_two_threads():
    """Two threads entering and leaving no_grad / enable_grad interleaved (the barrier orders
    the steps): each sees its own mode, and both end, as the main thread does, with grad on."""
    import threading
    step = threading.Barrier(2)
    seen = {0: [], 1: []}

    def run(i):
        record = seen[i].append
        if i == 0:
            with jt.no_grad():
                step.wait()  # 1: both inside a no_grad
                step.wait()  # 2: thread 1 entered enable_grad
                record(jt.is_grad_enabled())
                with jt.set_grad_enabled(True):
                    record(jt.is_grad_enabled())
                step.wait()  # 3
            record(jt.is_grad_enabled())
            step.wait()  # 4: thread 0 left its no_grad, thread 1 is still inside its own
        else:
            with jt.no_grad():
                step.wait()  # 1
                with jt.enable_grad():
                    record(jt.is_grad_enabled())
                    step.wait()  # 2
                    step.wait()  # 3
                record(jt.is_grad_enabled())
                step.wait()  # 4
                record(jt.is_grad_enabled())
                x = jt.ones(2, requires_grad=True)
                record((x * 2).requires_grad)
            record(jt.is_grad_enabled())
        return i

    _in_threads(run, 2)
    assert seen == {0: [False, True, True], 1: [True, False, False, False, True]}
    assert jt.is_grad_enabled()


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_a_new_thread_starts_with_grad_on(mode):
    """Whatever the mode of the thread that starts it, a thread starts with grad on and
    inference mode off, as in torch."""
    import threading
    torch = pytest.importorskip("torch")

    def modes(lib):
        enter = {"no_grad": lib.no_grad, "inference_mode": lib.inference_mode,
                 "set_grad_enabled": lambda: lib.set_grad_enabled(False)}[mode]
        found = {}
        with enter():
            t = threading.Thread(target=lambda: found.update(
                grad=lib.is_grad_enabled(), inference=lib.is_inference_mode_enabled()))
            t.start()
            t.join()
            found["outer"] = lib.is_grad_enabled(), lib.is_inference_mode_enabled()
        return found

    assert modes(jt) == modes(torch)
    assert modes(jt)["grad"] is True


def test_draws_from_threads_share_the_generator():
    """Draws from several threads at once take disjoint stretches of the generator's stream:
    together they are the numbers of one draw of their total size."""
    jt.manual_seed(3)
    parts = _in_threads(lambda i: [jt.randn(5).numpy() for _ in range(200)])
    drawn = np.sort(np.concatenate([np.concatenate(p) for p in parts]))
    jt.manual_seed(3)
    np.testing.assert_array_equal(drawn, np.sort(jt.randn(N_THREADS * 200 * 5).numpy()))
    assert jt.default_generator.get_state().numpy().view(np.uint64)[1] == N_THREADS * 200 * 10


def test_parallel_kernels_from_threads():
    """Parallel kernels (above PARALLEL_MIN) called from several threads at once, on this
    process's threading layer."""
    def run(i):
        return [(jt.ones(300, 300) + i).sum().item() for _ in range(10)]

    assert _in_threads(run, 4) == [[90000.0 * (1 + i)] * 10 for i in range(4)]


WORKQUEUE = """
import threading, numba, jitensor as jt
def run(i, out):
    out[i] = [(jt.ones(300, 300) + i).sum().item() for _ in range(20)]
out = [None] * 4
threads = [threading.Thread(target=run, args=(i, out)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert out == [[90000.0 * (1 + i)] * 20 for i in range(4)], out
print(numba.threading_layer())
"""


def test_parallel_kernels_from_threads_under_workqueue():
    """Numba's workqueue layer aborts a process that runs two parallel loops at once: jitensor
    runs them one at a time there."""
    assert run_python(WORKQUEUE, {"NUMBA_THREADING_LAYER": "workqueue"}) == "workqueue"


FORK_WHILE_COMPILING = """
import os, sys, threading, time
import numba
import jitensor as jt
sys.path.insert(0, sys.argv[1])
import cached_kernel

numba.njit(cache=True)(cached_kernel.f)(1.0)  # saved: a new dispatcher of it loads it from disk
stop = threading.Event()

def compile_and_load():
    i = 0
    while not stop.is_set():
        i += 1
        numba.njit(eval(f"lambda x: x * {i} + 1"))(1.0)  # a new function: compiled
        numba.njit(cache=True)(cached_kernel.f)(1.0)  # loaded
        time.sleep(0.001)

worker = threading.Thread(target=compile_and_load, daemon=True)
worker.start()
hung = []
for k in range(20):
    time.sleep(0.02)
    pid = os.fork()
    if pid == 0:  # the child compiles and runs a kernel, which takes Numba's locks
        numba.njit(lambda x: x - 1)(2.0)
        os._exit(0 if (jt.ones(3) + 1).sum().item() == 6 else 1)
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0, status
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            hung.append(k)
            break
        time.sleep(0.01)
stop.set()
print("hung", hung)
"""


def test_fork_while_another_thread_compiles(tmp_path):
    """A fork while another thread compiles or loads a kernel: the child, which compiles too,
    finishes (it waited for ever on Numba's compiler lock, inherited held)."""
    (tmp_path / "cached_kernel.py").write_text("def f(x):\n    return x * 2.0 + 1.0\n")
    assert run_python(FORK_WHILE_COMPILING.replace("sys.argv[1]", repr(str(tmp_path))),
                      timeout=600) == "hung []"


def test_saved_tensors_hooks_belong_to_the_thread_that_entered_them():
    import threading

    from jitensor.autograd.graph import saved_tensor_hooks, saved_tensors_hooks
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen["other"] = saved_tensor_hooks()
        x = jt.ones(2, requires_grad=True)
        (x * 2).sum().backward()  # a built-in op records here: only the hooks' thread refuses
        seen["grad"] = x.grad.tolist()
        done.set()

    worker = threading.Thread(target=other)
    worker.start()
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        assert saved_tensor_hooks() is not None
        inside.set()
        done.wait(30)
    worker.join()
    assert seen == {"other": None, "grad": [2.0, 2.0]}
    assert saved_tensor_hooks() is None
