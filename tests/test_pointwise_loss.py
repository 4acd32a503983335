"""The pointwise losses (l1, smooth_l1, huber, binary_cross_entropy with and without logits,
kl_div; mse_loss's new arguments): values against NumPy references written from torch's
documentation on any shape, dtype and reduction; gradients against finite differences and
torch (skipped where not installed), second derivatives included; the parallel kernels, the
modules and the errors."""
import warnings

import numpy as np
import pytest
from conftest import at_thread_counts
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
from jitensor import nn
from jitensor.kernels.cpu.kernels import PARALLEL_MIN
from jitensor.nn import functional as F

NAMES = ("l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
         "binary_cross_entropy_with_logits", "kl_div")


def reference(name, x, y, param=1.0, log_target=False, pos_weight=None):
    """The unreduced loss in float64 NumPy."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    z = np.abs(x - y)
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "l1_loss":
            return z
        if name == "mse_loss":
            return z * z
        if name == "smooth_l1_loss":
            return np.where(z < param, 0.5 * z * z / param, z - 0.5 * param)
        if name == "huber_loss":
            return np.where(z < param, 0.5 * z * z, param * (z - 0.5 * param))
        if name == "binary_cross_entropy":
            return -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
        if name == "binary_cross_entropy_with_logits":
            pw = 1.0 if pos_weight is None else pos_weight.astype(np.float64)
            log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
            return (1 - y) * x - (1 + (pw - 1) * y) * log_sigmoid
        if log_target:
            return np.exp(y) * (y - x)
        return np.where(y == 0, 0.0, y * np.log(np.where(y == 0, 1, y))) - y * x


def data(name, rng, shape, dtype):
    """(input, target) of the kinds each loss reads."""
    x = rng.standard_normal(shape) * 2
    y = rng.standard_normal(shape) * 2
    if name == "binary_cross_entropy":
        x, y = 1 / (1 + np.exp(-x)), rng.random(shape)
    elif name == "binary_cross_entropy_with_logits":
        y = rng.random(shape)
    elif name == "kl_div":
        x, y = np.log(rng.random(shape) + 0.01), rng.random(shape)
    return x.astype(dtype), y.astype(dtype)


def call(name, x, y, reduction="mean", param=None, **kw):
    if param is not None:
        kw["beta" if name == "smooth_l1_loss" else "delta"] = param
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warns, as torch's
        return getattr(F, name)(x, y, reduction=reduction, **kw)


def reduced(loss, reduction, n0=None):
    if reduction == "none":
        return loss
    if reduction == "batchmean":
        return loss.sum() / n0
    return loss.sum() if reduction == "sum" else loss.mean()


@st.composite
def problems(draw):
    name = draw(st.sampled_from(NAMES))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=3)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    reductions = ["none", "mean", "sum"] + (["batchmean"] if name == "kl_div" and shape else [])
    return (name, shape, dtype, draw(st.sampled_from(reductions)),
            draw(st.sampled_from([0.5, 1.0, 2.5])), draw(st.booleans()),
            draw(st.integers(0, 2 ** 32 - 1)))


@given(problems())
def test_values_match_numpy_on_any_shape_dtype_and_reduction(problem):
    name, shape, dtype, reduction, param, flag, seed = problem
    rng = np.random.default_rng(seed)
    x, y = data(name, rng, shape, dtype)
    kw, ref = {}, {}
    if name in ("smooth_l1_loss", "huber_loss"):
        kw["param"] = ref["param"] = param
    if name == "kl_div" and flag:
        y = np.log(y + 0.01).astype(dtype)
        kw["log_target"] = ref["log_target"] = True
    if name == "binary_cross_entropy_with_logits" and flag and shape:
        pw = rng.uniform(0.2, 3, shape[-1:]).astype(dtype)  # one per class, broadcast
        kw["pos_weight"], ref["pos_weight"] = jt.tensor(pw), pw
    got = call(name, jt.tensor(x), jt.tensor(y), reduction, **kw)
    want = reduced(reference(name, x, y, **ref), reduction, shape[0] if shape else None)
    assert got.dtype.np == dtype and got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-5 if dtype == np.float32 else 1e-12,
                               atol=2e-6 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradients_match_finite_differences(name, reduction):
    """By the input and the target, through broadcasting (the regression losses broadcast the
    target as torch does)."""
    rng = np.random.default_rng(5)
    x, y = data(name, rng, (3, 4), np.float64)
    if name not in ("binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"):
        y = y[:1]  # (1, 4) against (3, 4)
    if name == "binary_cross_entropy":
        x = np.clip(x, 0.05, 0.95)  # away from the kinks of the clamped logs
    a, b = (jt.tensor(v, requires_grad=True) for v in (x, y))
    if name == "kl_div":
        b = jt.tensor(y + 0.1, requires_grad=True)  # (the target's log-derivative at 0 is NaN)
    assert jt.autograd.gradcheck(lambda p, q: call(name, p, q, reduction), (a, b))


def test_weights_and_pos_weight_get_gradients():
    rng = np.random.default_rng(6)
    x, y = data("binary_cross_entropy_with_logits", rng, (3, 4), np.float64)
    w, pw = (jt.tensor(rng.uniform(0.2, 2, s), requires_grad=True) for s in ((3, 4), (4,)))
    a, b = jt.tensor(x, requires_grad=True), jt.tensor(y)
    assert jt.autograd.gradcheck(
        lambda p, q, r: F.binary_cross_entropy_with_logits(p, b, q, pos_weight=r), (a, w, pw))
    p = jt.tensor(np.clip(1 / (1 + np.exp(-x)), 0.05, 0.95), requires_grad=True)
    assert jt.autograd.gradcheck(lambda p, q: F.binary_cross_entropy(p, b, q), (p, w))
    for name in ("l1_loss", "mse_loss", "huber_loss"):
        assert jt.autograd.gradcheck(lambda p, q, name=name: getattr(F, name)(p, b, weight=q),
                                     (a, w))


@pytest.mark.parametrize("name", NAMES)
def test_gradients_and_second_derivatives_match_torch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x, y = data(name, rng, (4, 5), np.float64)
    x.reshape(-1)[:2] = y.reshape(-1)[:2]  # ties: the l1 kinks' gradient is 0, as torch's
    for reduction in ("mean", "sum", "none"):
        a, b = jt.tensor(x, requires_grad=True), jt.tensor(y)
        p, q = torch.tensor(x, requires_grad=True), torch.tensor(y)
        mine = call(name, a, b, reduction)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = getattr(torch.nn.functional, name)(p, q, reduction=reduction)
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
        g, = jt.autograd.grad(mine.sum(), a, create_graph=True)
        h, = torch.autograd.grad(theirs.sum(), p, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), h.detach().numpy(), rtol=1e-12)
        probe = rng.standard_normal(x.shape)  # second derivatives (l1's are none: 0)
        gg = jt.autograd.grad((g * jt.tensor(probe)).sum(), a, allow_unused=True)[0] \
            if g.requires_grad else None
        hh = torch.autograd.grad((h * torch.tensor(probe)).sum(), p, allow_unused=True)[0] \
            if h.requires_grad else None
        np.testing.assert_allclose(np.zeros_like(x) if gg is None else gg.numpy(),
                                   np.zeros_like(x) if hh is None else hh.numpy(force=True),
                                   rtol=1e-10, atol=1e-12)


def test_second_derivatives_at_the_kinks_match_torch():
    """|x - y| == beta (delta) is on the linear side: second derivative 0, as torch's."""
    torch = pytest.importorskip("torch")
    for name, param in (("smooth_l1_loss", 1.0), ("huber_loss", 0.5)):
        key = "beta" if name == "smooth_l1_loss" else "delta"
        x = np.array([param, -param, 0.3 * param, 2 * param])
        a, p = jt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        g, = jt.autograd.grad(getattr(F, name)(a, jt.zeros(4, dtype=jt.float64), **{key: param},
                                               reduction="sum"),
                              a, create_graph=True)
        h, = torch.autograd.grad(getattr(torch.nn.functional, name)(
            p, torch.zeros(4, dtype=torch.float64), **{key: param}, reduction="sum"), p,
            create_graph=True)
        gg, = jt.autograd.grad(g.sum(), a)
        hh, = torch.autograd.grad(h.sum(), p)
        np.testing.assert_array_equal(g.detach().numpy(), h.detach().numpy())
        np.testing.assert_array_equal(gg.numpy(), hh.numpy())


def test_target_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    for name in NAMES:
        x, y = data(name, rng, (3, 4), np.float64)
        kw = dict(log_target=True) if name == "kl_div" else {}
        if name == "kl_div":
            y = np.log(y)
        a, b = jt.tensor(x), jt.tensor(y, requires_grad=True)
        p, q = torch.tensor(x), torch.tensor(y, requires_grad=True)
        call(name, a, b, "sum", **kw).backward()
        getattr(torch.nn.functional, name)(p, q, reduction="sum", **kw).backward()
        np.testing.assert_allclose(b.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_binary_cross_entropy_at_saturated_probabilities_is_finite():
    """Each log is clamped at -100, as torch: p = 0 or 1 gives a loss of at most 100 and a
    finite input gradient, torch's (x - y) / max(x (1 - x), 1e-12); the target's is torch's
    -logit(x), infinite there."""
    x = jt.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
    y = jt.tensor([0.0, 1.0, 1.0, 0.0], requires_grad=True)
    loss = F.binary_cross_entropy(x, y, reduction="none")
    np.testing.assert_array_equal(loss.detach().numpy(), [0, 0, 100, 100])
    loss.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.float32([0, 0, -1e12, 1e12]))
    np.testing.assert_array_equal(y.grad.numpy(), [np.inf, -np.inf, np.inf, -np.inf])
    big = jt.tensor([-200.0, 200.0, 0.0], requires_grad=True)  # logits: no overflow either
    F.binary_cross_entropy_with_logits(big, jt.tensor([1.0, 0.0, 0.5]), reduction="sum") \
        .backward()
    assert np.isfinite(big.grad.numpy()).all()


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits", "kl_div"])
def test_the_parallel_kernels_match_the_serial_ones_exactly(name):
    rng = np.random.default_rng(9)
    x, y = data(name, rng, (PARALLEL_MIN // 16 + 3, 40), np.float32)
    a = jt.tensor(x, requires_grad=True)

    def run():
        a.grad = None
        loss = call(name, a, jt.tensor(y), "none")
        loss.backward(jt.ones_like(loss))
        return loss.detach().numpy(), a.grad.numpy()
    results = at_thread_counts(run)
    for got in results[1:]:
        for u, v in zip(got, results[0], strict=False):
            np.testing.assert_array_equal(u, v)
    np.testing.assert_allclose(results[0][0], reference(name, x, y), rtol=2e-5, atol=1e-6)


def test_strided_and_broadcast_operands_read_in_place():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 8))
    t = jt.tensor(x).T  # a transpose
    y = jt.tensor(rng.standard_normal(6))  # broadcast along rows
    with pytest.warns(UserWarning, match="Using a target size"):
        got = F.smooth_l1_loss(t, y, reduction="none", beta=0.5)
    want = reference("smooth_l1_loss", x.T, np.broadcast_to(y.numpy(), (8, 6)), 0.5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_reductions_empty_inputs_and_kl_batchmean():
    e = jt.zeros(0, 3)
    assert np.isnan(F.smooth_l1_loss(e, e).item()) and F.huber_loss(e, e, "sum").item() == 0
    assert F.binary_cross_entropy(e, e, reduction="none").shape == (0, 3)
    x, y = jt.tensor([[-1.0, -2.0], [-0.5, -3.0]]), jt.tensor([[0.3, 0.7], [0.5, 0.5]])
    assert F.kl_div(x, y, reduction="batchmean").item() == pytest.approx(
        F.kl_div(x, y, reduction="sum").item() / 2)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, y)


def test_legacy_size_average_and_reduce_arguments_follow_torch():
    x, y = jt.tensor([1.0, 2.0, 4.0]), jt.tensor([0.0, 0.0, 0.0])
    for kw, reduction, want in ((dict(size_average=False), "sum", 7.0),
                                (dict(reduce=False), "none", [1, 2, 4]),
                                (dict(size_average=True, reduce=True), "mean", 7 / 3)):
        with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
            got = F.l1_loss(x, y, **kw)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            assert nn.L1Loss(**kw).reduction == reduction
    assert F.mse_loss(x, y, None, None, "sum").item() == 21  # torch's positional order


def test_modules_hold_their_options_and_weights():
    w, pw = jt.tensor([1.0, 2.0]), jt.tensor([3.0, 0.5])
    bce = nn.BCEWithLogitsLoss(weight=w, pos_weight=pw, reduction="sum")
    assert set(bce.state_dict()) == {"weight", "pos_weight"}
    x, y = jt.tensor([[0.3, -1.0]]), jt.tensor([[1.0, 0.0]])
    assert bce(x, y).item() == F.binary_cross_entropy_with_logits(
        x, y, w, reduction="sum", pos_weight=pw).item()
    assert set(nn.BCELoss(weight=w).state_dict()) == {"weight"}
    p = jt.tensor([[0.3, 0.9]])
    assert nn.BCELoss()(p, y).item() == F.binary_cross_entropy(p, y).item()
    assert nn.SmoothL1Loss(beta=0.2)(x, y).item() == F.smooth_l1_loss(x, y, beta=0.2).item()
    assert nn.HuberLoss(delta=0.3)(x, y).item() == F.huber_loss(x, y, delta=0.3).item()
    assert nn.L1Loss(reduction="sum")(x, y).item() == F.l1_loss(x, y, reduction="sum").item()
    kl = nn.KLDivLoss(reduction="batchmean", log_target=True)
    assert kl(x, y).item() == F.kl_div(x, y, reduction="batchmean", log_target=True).item()
    with pytest.raises(ValueError, match="'avg' is not a valid value for reduction"):
        nn.HuberLoss(reduction="avg")
    with pytest.raises(ValueError, match="'batchmean'"):
        nn.L1Loss(reduction="batchmean")  # kl_div's only


def test_bad_input_raises_clearly():
    x, y = jt.tensor([0.2, 0.4]), jt.tensor([0.0, 1.0])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(jt.tensor([0.5, 1.5]), y)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(jt.tensor([0.5, float("nan")]), y)
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(x, jt.tensor([0.5, -0.5]))
    with pytest.raises(ValueError, match="Using a target size .* different to the input size"):
        F.binary_cross_entropy(x, y[:1])
    with pytest.raises(ValueError, match=r"Target size \(jitensor.Size\(\[1\]\)\) must be the "):
        F.binary_cross_entropy_with_logits(x, y[:1])
    with pytest.raises(RuntimeError, match="negative values for beta, got -1"):
        F.smooth_l1_loss(x, y, beta=-1)
    with pytest.raises(RuntimeError, match="negative values for beta, got nan"):
        F.smooth_l1_loss(x, y, beta=float("nan"))
    with pytest.raises(RuntimeError, match="pos_weight of shape \\[2, 2\\] broadcasts the loss"):
        F.binary_cross_entropy_with_logits(x, y, pos_weight=jt.ones(2, 2))
    with pytest.raises(RuntimeError, match="weight of shape \\[3, 2\\] broadcasts the loss"):
        F.binary_cross_entropy(x, y, jt.ones(3, 2))
    with pytest.raises(RuntimeError, match="non-positive values for delta, got 0"):
        F.huber_loss(x, y, delta=0)
    with pytest.raises(RuntimeError, match="expected floating point input and target, got "
                                           "int64, int64"):
        F.smooth_l1_loss(jt.tensor([1, 2]), jt.tensor([1, 3]))
    with pytest.raises(TypeError, match="argument 'target' must be Tensor, not list"):
        F.huber_loss(x, [0.0, 1.0])
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.l1_loss(x, y, weight=jt.ones(3))
    with pytest.raises(ValueError, match="'avg' is not a valid value for reduction"):
        F.kl_div(x, y, reduction="avg")
    with pytest.warns(UserWarning, match="Using a target size"):
        F.smooth_l1_loss(jt.zeros(2, 3), jt.zeros(3))
    assert F.smooth_l1_loss(x, y, beta=0.0).item() == F.l1_loss(x, y).item()  # beta 0: l1
    # a float32 input against a float64 target computes in float64, as torch promotes
    assert F.huber_loss(x, y.double()).dtype is jt.float64
