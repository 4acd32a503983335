"""The fused class losses (nll_loss, cross_entropy with class indices): values against a NumPy
reference on any shape, dtype, weighting, ignore_index, label smoothing and reduction; their
gradients against finite differences and torch (skipped where not installed), second
derivatives included; the parallel kernels, strided scores and the errors."""
import numpy as np
import pytest
from conftest import at_thread_counts, run_python
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
from jitensor.kernels.cpu import loss as cpu_loss
from jitensor.kernels.cpu.kernels import PARALLEL_MIN
from jitensor.nn import functional as F


def reference(x, t, w, ignore_index, reduction, smoothing, log_probs):
    """The loss in float64 NumPy, written from torch's documentation."""
    d = 0 if x.ndim == 1 else 1
    n_classes = x.shape[d]
    rows = np.moveaxis(x.astype(np.float64), d, -1).reshape(-1, n_classes)
    if not log_probs:
        m = rows.max(1, keepdims=True)
        rows = rows - m - np.log(np.exp(rows - m).sum(1, keepdims=True))
    weight = np.ones(n_classes) if w is None else w.astype(np.float64)
    targets = t.reshape(-1)
    kept = targets != ignore_index
    picked = np.where(kept, targets, 0)
    t_weight = weight[picked] * kept
    nll = -rows[np.arange(len(targets)), picked] * t_weight
    smooth = -(rows * weight).sum(1) * kept
    loss = (1 - smoothing) * nll + smoothing / n_classes * smooth
    if reduction == "none":
        return loss.reshape(t.shape)
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.float64(loss.sum() / t_weight.sum())


def losses(x, t, w=None, *, ignore_index=-100, reduction="mean", smoothing=0.0):
    """(cross_entropy of x, nll_loss of x read as log-probabilities)."""
    return (F.cross_entropy(x, t, w, ignore_index=ignore_index, reduction=reduction,
                            label_smoothing=smoothing),
            F.nll_loss(x, t, w, ignore_index=ignore_index, reduction=reduction))


@st.composite
def problems(draw):
    """(x, targets, weights or None, ignore_index, reduction, smoothing, dtype)."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    n_classes = draw(st.one_of(st.integers(1, 7), st.sampled_from([127, 128, 300])))
    batch = draw(st.sampled_from([(), (draw(st.integers(0, 5)),)]))
    spatial = tuple(draw(st.lists(st.integers(1, 3), max_size=2))) if batch else ()
    shape = batch[:1] + (n_classes,) + spatial
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    x = (rng.standard_normal(shape) * draw(st.sampled_from([1.0, 30.0]))).astype(dtype)
    t = rng.integers(0, n_classes, batch + spatial)
    ignore_index = draw(st.sampled_from([-100, 0, n_classes - 1]))
    if t.ndim and draw(st.booleans()):
        t.reshape(-1)[::2] = ignore_index
    w = rng.uniform(0.1, 2.0, n_classes).astype(dtype) if draw(st.booleans()) else None
    return (x, t, w, ignore_index, draw(st.sampled_from(["mean", "sum", "none"])),
            draw(st.sampled_from([0.0, 0.3, 1.0])), dtype)


@given(problems())
def test_values_match_numpy_on_any_shape_and_options(problem):
    x, t, w, ignore_index, reduction, smoothing, dtype = problem
    ce, nll = losses(jt.tensor(x), jt.tensor(t), None if w is None else jt.tensor(w),
                     ignore_index=ignore_index, reduction=reduction, smoothing=smoothing)
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    for got, log_probs, s in ((ce, False, smoothing), (nll, True, 0.0)):
        want = reference(x, t, w, ignore_index, reduction, s, log_probs)
        assert got.dtype is jt.dtypes.to_dtype(dtype) and tuple(got.shape) == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol)


def test_strided_and_transposed_scores_read_in_place():
    rng = np.random.default_rng(1)
    base = jt.tensor(rng.standard_normal((7, 9)).astype(np.float32))
    t = jt.tensor(rng.integers(0, 3, 9))
    for x in (base.t()[:, 2:5], base[::2].t().contiguous()[:, ::1], base.t()[::2, 1:7:2]):
        want = reference(x.numpy(), t[:x.shape[0]].numpy(), None, -100, "none", 0.0, False)
        np.testing.assert_allclose(F.cross_entropy(x, t[:x.shape[0]], reduction="none").numpy(),
                                   want, rtol=1e-5)
    images = jt.tensor(rng.standard_normal((2, 5, 3, 4)).astype(np.float32))
    labels = jt.tensor(rng.integers(0, 5, (2, 3, 4)))
    for x, y in ((images, labels), (images.permute(0, 1, 3, 2), labels.permute(0, 2, 1)),
                 (images[:, :, 1:], labels[:, 1:])):  # classes strided by S
        np.testing.assert_allclose(F.cross_entropy(x, y, label_smoothing=0.1).numpy(),
                                   reference(x.numpy(), y.numpy(), None, -100, "mean", 0.1, False),
                                   rtol=1e-5)


@pytest.mark.parametrize("shape", [(3000, 40), (400, 200), (4, 21, 30, 30)])
def test_the_parallel_kernels_match_the_serial_ones_exactly(shape):
    """Above PARALLEL_MIN elements the kernels run in parallel: the same values to the bit
    whatever the thread count (each task's totals add up in order). Short rows, long rows and
    a segmentation map: the kernels' three layouts."""
    rng = np.random.default_rng(2)
    x = jt.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    t = rng.integers(0, shape[1], shape[:1] + shape[2:])
    t.reshape(-1)[::7] = -100
    t = jt.tensor(t)
    assert x.numel() >= PARALLEL_MIN

    def run():
        x.grad = None
        loss = F.cross_entropy(x, t, label_smoothing=0.2)
        loss.backward()
        return loss.item(), x.grad.numpy().copy()
    results = at_thread_counts(run)
    assert results[0][0] == results[-1][0]
    np.testing.assert_array_equal(results[0][1], results[-1][1])
    np.testing.assert_allclose(results[0][0], reference(x.detach().numpy(), t.numpy(), None,
                                                        -100, "mean", 0.2, False), rtol=1e-5)
    # the serial kernels (below PARALLEL_MIN) give the same bits as the parallel ones
    args = cpu_loss._args(x.detach().numpy().reshape(shape[0], shape[1], -1), t.numpy().ravel(),
                          None)
    outs = []
    built = cpu_loss.kernels(args[1], False)
    for kernel in (built["loss_kernel"], built["loss_kernel_parallel"]):
        out, saved = np.empty(1, np.float32), np.empty(3 + 2 * t.numel())
        assert kernel(*args, -100, 0.2, out, 1, saved) == -1
        outs.append((out, saved))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    torch = pytest.importorskip("torch")
    theirs = torch.tensor(x.detach().numpy(), requires_grad=True)
    torch.nn.functional.cross_entropy(theirs, torch.tensor(t.numpy()),
                                      label_smoothing=0.2).backward()
    np.testing.assert_allclose(results[0][1], theirs.grad.numpy(), rtol=1e-4, atol=1e-9)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", [dict(), dict(weight=True), dict(smoothing=0.25),
                                     dict(weight=True, smoothing=0.4, ignore_index=1)])
def test_gradients_match_finite_differences(reduction, options):
    rng = np.random.default_rng(3)
    t = jt.tensor([0, 2, 1, 1, 3])
    w = jt.tensor(rng.uniform(0.5, 2.0, 4)) if options.get("weight") else None
    for shape, target in (((5, 4), t), ((1, 4, 5), t.reshape(1, 5)), ((4,), t[1])):
        x = jt.tensor(rng.standard_normal(shape), dtype=jt.float64, requires_grad=True)
        for log_probs in (False, True):
            def fn(a, target=target, log_probs=log_probs):
                ce, nll = losses(a, target, w, ignore_index=options.get("ignore_index", -100),
                                 reduction=reduction, smoothing=options.get("smoothing", 0.0))
                return nll if log_probs else ce
            assert jt.autograd.gradcheck(fn, (x,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradients_and_second_derivatives_match_torch(reduction):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5, 2))
    t = rng.integers(0, 5, (6, 2))
    t[0, 0] = -100
    w = rng.uniform(0.5, 2.0, 5)
    for weight, smoothing in ((None, 0.0), (w, 0.3)):
        a = jt.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        args = dict(reduction=reduction, label_smoothing=smoothing)
        mine = F.cross_entropy(a, jt.tensor(t), None if weight is None else jt.tensor(weight),
                               **args)
        theirs = torch.nn.functional.cross_entropy(
            b, torch.tensor(t), None if weight is None else torch.tensor(weight), **args)
        g, = jt.autograd.grad(mine.sum(), a, create_graph=True)
        h, = torch.autograd.grad(theirs.sum(), b, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), h.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
        probe = rng.standard_normal(x.shape)
        gg, = jt.autograd.grad((g * jt.tensor(probe)).sum(), a)
        hh, = torch.autograd.grad((h * torch.tensor(probe)).sum(), b)
        np.testing.assert_allclose(gg.numpy(), hh.numpy(), rtol=1e-10, atol=1e-12)


def test_large_scores_lose_nothing_to_their_size():
    """-log p = (max - x) + log(sum(exp(x - max))) with the max kept apart from the log-sum:
    rounding max + log-sum to float32 lost most of the log-sum at scores of 1e5."""
    for offset, dtype in ((1e5, np.float32), (1e7, np.float32), (1e16, np.float64)):
        x = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]]) + offset
        a = jt.tensor(x.astype(dtype), requires_grad=True)
        t = np.array([0, 2])
        loss = F.cross_entropy(a, jt.tensor(t), reduction="none")
        loss.sum().backward()
        shifted = a.detach().numpy().astype(np.float64) - offset  # the scores as stored
        shifted -= shifted.max(1, keepdims=True)
        p = np.exp(shifted) / np.exp(shifted).sum(1, keepdims=True)
        np.testing.assert_allclose(loss.detach().numpy(), -np.log(p[[0, 1], t]), rtol=1e-6)
        p[[0, 1], t] -= 1
        np.testing.assert_allclose(a.grad.numpy(), p, rtol=1e-6, atol=1e-7)
    huge = F.cross_entropy(jt.tensor([[3e38, 3e38, 3e38]]), jt.tensor([0]))
    np.testing.assert_allclose(huge.item(), np.log(3), rtol=1e-6)


def test_nll_loss_gradient_reaches_the_targets_only():
    """nll_loss has no softmax term: an infinite upstream gradient, or a 'mean' over targets of
    weight 0, spreads to the targets alone, as in torch (not NaN from inf * 0 everywhere)."""
    x = jt.tensor(np.log(np.full((2, 3), 1 / 3)), requires_grad=True)
    F.nll_loss(x, jt.tensor([0, 2]), reduction="none").backward(jt.tensor([np.inf, 1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [[-np.inf, 0, 0], [0, 0, -1]])
    x.grad = None
    F.nll_loss(x, jt.tensor([0, 0]), jt.tensor([0.0, 1.0, 1.0])).backward()
    grad = x.grad.numpy()
    assert np.isnan(grad[:, 0]).all() and (grad[:, 1:] == 0).all()  # 0 * (1 / 0), as torch


def test_an_empty_batch_and_all_ignored_targets_follow_torch():
    x = jt.zeros(0, 3)
    t = jt.zeros(0, dtype=jt.int64)
    assert np.isnan(F.cross_entropy(x, t).item())  # 0 / 0, as torch
    assert F.cross_entropy(x, t, reduction="sum").item() == 0.0
    assert tuple(F.cross_entropy(x, t, reduction="none").shape) == (0,)
    x = jt.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, jt.full((4,), 7), ignore_index=7)
    assert np.isnan(loss.item())
    F.cross_entropy(x, jt.full((4,), 7), ignore_index=7, reduction="sum").backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((4, 3), np.float32))


def test_bad_input_raises_and_nothing_is_recorded():
    x = jt.randn(4, 3, requires_grad=True)
    for bad in (3, -1):
        with pytest.raises(IndexError, match=rf"cross_entropy\(\): target {bad} is out of bounds "
                                             rf"for 3 classes; targets must lie in \[0, 2\]"):
            F.cross_entropy(x, jt.tensor([0, 1, bad, 0]))
    with pytest.raises(IndexError, match="nll_loss"):
        F.nll_loss(x, jt.tensor([0, 1, 5, 0]), ignore_index=1)
    with pytest.raises(RuntimeError, match="expected floating point scores, got int64"):
        F.cross_entropy(jt.tensor([[1, 2]]), jt.tensor([0]))
    w = jt.ones(3, requires_grad=True)
    loss = F.cross_entropy(x, jt.tensor([0, 1, 2, 0]), w)
    with pytest.raises(RuntimeError, match="the derivative for 'weight' is not implemented"):
        loss.backward()
    assert x.grad is None


def test_int32_targets_and_weights_of_another_dtype_are_converted():
    x = jt.randn(5, 4, dtype=jt.float64)
    t = jt.tensor([0, 3, 1, 2, 3])
    w = jt.tensor([1.0, 2.0, 0.5, 1.5])
    want = F.cross_entropy(x, t, w.double())
    got = F.cross_entropy(x, t.int(), w)
    assert got.dtype is jt.float64 and got.item() == want.item()


def test_kernels_load_from_the_disk_cache():
    """A second process runs the loss kernels, serial and parallel, without compiling them."""
    code = ("import jitensor as jt\n"
            "from jitensor.kernels.cpu import loss as k\n"
            "for n in (4, 4096):\n"
            "    x = jt.randn(n, 20, requires_grad=True)\n"
            "    jt.nn.functional.cross_entropy(x, jt.zeros(n, dtype=jt.int64)).backward()\n"
            "built = k.kernels((1, 20), False)\n"
            "kernels = [built[name] for name in ('loss_kernel', 'loss_kernel_parallel',\n"
            "                                    'grad_kernel', 'grad_kernel_parallel')]\n"
            "print(sum(sum(f.stats.cache_misses.values()) for f in kernels),\n"
            "      sum(sum(f.stats.cache_hits.values()) for f in kernels))")
    run_python(code)
    misses, hits = map(int, run_python(code).split())
    assert misses == 0 and hits == 4


@pytest.mark.parametrize("case", [
    dict(), dict(linear_bias=True), dict(weight=True, reduction="sum"),
    dict(label_smoothing=0.1, reduction="none"), dict(ignore_index=2),
    dict(out_features=(3,), linear_bias=True), dict(probabilities=True), dict(unbatched=True)])
def test_linear_cross_entropy_matches_torch(case):
    """torch 2.13's fused linear + cross entropy: the loss and every gradient."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    n, d, c, out = 5, 4, 6, case.get("out_features", ())
    x, w = rng.standard_normal((n, d)), rng.standard_normal((c, *out, d))
    if case.get("unbatched"):
        x = x[0]
    shape = (c, *out) if x.ndim == 1 else (n, c, *out)
    target = rng.random(shape) if case.get("probabilities") else \
        rng.integers(0, c, shape[:1] + shape[2:] if x.ndim == 2 else ())
    b, cw = rng.standard_normal((c, *out)), rng.random(c)
    results = []
    for lib in (jt, torch):
        xs = lib.tensor(x, requires_grad=True)
        ws = lib.tensor(w, requires_grad=True)
        bs = lib.tensor(b, requires_grad=True) if case.get("linear_bias") else None
        kw = dict(linear_bias=bs, weight=lib.tensor(cw) if case.get("weight") else None,
                  reduction=case.get("reduction", "mean"),
                  label_smoothing=case.get("label_smoothing", 0.0),
                  ignore_index=case.get("ignore_index"))
        loss = lib.nn.functional.linear_cross_entropy(xs, ws, lib.tensor(target), **kw)
        loss.sum().backward()
        results.append([loss, xs.grad, ws.grad] + ([bs.grad] if bs is not None else []))
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


def test_linear_cross_entropy_module_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True,
                                             dtype=torch.float64)
    mine = jt.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, dtype=jt.float64)
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert repr(mine).replace("jitensor", "torch") == repr(theirs)
    x = np.random.default_rng(0).standard_normal((5, 4))
    t = np.random.default_rng(1).integers(0, 3, (5, 2))
    np.testing.assert_allclose(mine(jt.tensor(x), jt.tensor(t)).item(),
                               theirs(torch.tensor(x), torch.tensor(t)).item(), rtol=1e-12)
    opts = jt.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    assert jt.nn.functional.linear_cross_entropy(jt.tensor(x), mine.linear.weight[:3],
                                                 jt.tensor(t[:, 0]), options=opts).ndim == 0
    for call in (lambda lib: lib.nn.functional.linear_cross_entropy(
                     lib.ones(2, 4), lib.ones(3, 5), lib.zeros(2, dtype=lib.long)),
                 lambda lib: lib.nn.functional.linear_cross_entropy(
                     lib.ones(4), lib.ones(3, 2, 4), lib.zeros(2, dtype=lib.long)),
                 lambda lib: lib.nn.LinearCrossEntropyLoss(4, 3, weight=lib.ones(2))):
        with pytest.raises(RuntimeError) as theirs_error:
            call(torch)
        with pytest.raises(RuntimeError) as mine_error:
            call(jt)
        assert str(mine_error.value) == str(theirs_error.value)
