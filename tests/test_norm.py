"""The fused normalisations (layer_norm, rms_norm and their modules): values against a NumPy
reference on any shape, dtype and affine option; gradients against the NumPy formulas, finite
differences and torch (skipped where not installed), second derivatives included; the parallel
kernels against the serial ones, hard rows, empty inputs and the errors."""
import warnings

import numpy as np
import pytest
from conftest import at_thread_counts, run_python
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
from jitensor import nn
from jitensor.kernels.cpu.kernels import PARALLEL_MIN
from jitensor.nn import functional as F


def reference(x, k, w, b, eps, centred):
    """(y, a function of g giving d/dx, d/dw, d/db of sum(y * g)) from torch's documentation,
    in NumPy's long double (64-bit mantissas here): the rows are the last k dims."""
    wide = np.longdouble
    x = x.astype(wide)
    dims = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(dims, keepdims=True) if centred else 0.0
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(dims, keepdims=True) + wide(eps))
    xhat = (x - mean) * rstd
    w64 = 1.0 if w is None else w.astype(wide)
    y = xhat * w64 + (0.0 if b is None else b.astype(wide))

    def grads(g):
        gw = g * w64
        centre = gw.mean(dims, keepdims=True) if centred else 0.0
        dx = rstd * (gw - centre - xhat * (gw * xhat).mean(dims, keepdims=True))
        lead = tuple(range(x.ndim - k))
        return dx, (g * xhat).sum(lead), g.sum(lead)
    return y, grads


def norm(x, k, w, b, eps, centred):
    shape = tuple(x.shape[x.ndim - k:])
    return F.layer_norm(x, shape, w, b, eps) if centred else F.rms_norm(x, shape, w, eps)


@st.composite
def problems(draw):
    """(x, k, weight or None, bias or None, eps, centred) as NumPy arrays."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    lead = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    rows = tuple(draw(st.lists(st.integers(1, 7), min_size=1, max_size=2)))
    if draw(st.booleans()):
        rows = (draw(st.sampled_from([64, 300, 1031])),)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    scale, offset = draw(st.sampled_from([(1.0, 0.0), (30.0, 5.0), (1e-3, 100.0)]))
    x = (rng.standard_normal(lead + rows) * scale + offset).astype(dtype)
    centred = draw(st.booleans())
    w = rng.standard_normal(rows).astype(dtype) if draw(st.booleans()) else None
    b = rng.standard_normal(rows).astype(dtype) if centred and draw(st.booleans()) else None
    return x, len(rows), w, b, draw(st.sampled_from([1e-5, 1e-2])), centred


@given(problems())
def test_values_and_gradients_match_numpy_on_any_shape_and_options(problem):
    x, k, w, b, eps, centred = problem
    params = [None if p is None else jt.tensor(p, requires_grad=True) for p in (w, b)]
    a = jt.tensor(x, requires_grad=True)
    y = norm(a, k, *params, eps, centred)
    want, grads = reference(x, k, w, b, eps, centred)
    f32 = x.dtype == np.float32
    rtol = 1e-5 if f32 else 1e-12
    assert y.dtype is a.dtype and tuple(y.shape) == x.shape
    assert type(y.grad_fn).__name__ == ("NativeLayerNormBackward0" if centred else
                                        "FusedRmsNormBackward0")
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=rtol, atol=rtol * 10)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(x.dtype)
    y.backward(jt.tensor(g))
    for got, expected in zip([a] + params, grads(g.astype(np.float64)), strict=False):
        if got is None:
            continue
        assert got.grad.dtype is got.dtype and tuple(got.grad.shape) == tuple(got.shape)
        scale = np.abs(expected).max() if expected.size else 1.0
        np.testing.assert_allclose(got.grad.numpy(), expected, rtol=rtol * 10,
                                   atol=rtol * 10 * (1 + scale) * (x.shape[-1] if f32 else 1))


def test_strided_input_and_upstream_gradients_read_as_dense_ones():
    rng = np.random.default_rng(2)
    base = rng.standard_normal((6, 8))
    for centred in (True, False):
        dense = jt.tensor(base.T.copy(), requires_grad=True)
        strided = jt.tensor(base, requires_grad=True)
        w = jt.tensor(rng.standard_normal(6), requires_grad=True)
        y1 = norm(dense, 1, w, None, 1e-5, centred)
        y2 = norm(strided.T, 1, w, None, 1e-5, centred)
        np.testing.assert_array_equal(y1.detach().numpy(), y2.detach().numpy())
        y1.sum().backward()  # an expanded (stride-0) upstream gradient
        y2.sum().backward()
        np.testing.assert_array_equal(dense.grad.numpy(), strided.grad.numpy().T)


@pytest.mark.parametrize("shape", [(4096, 64), (64, 3000), (300, 7, 50)])
def test_the_parallel_kernels_match_the_serial_ones_exactly(shape):
    """Above PARALLEL_MIN elements rows run on the thread pool: the same bits whatever the
    thread count (the weight and bias gradients are summed in runs fixed by the shape)."""
    rng = np.random.default_rng(3)
    x = jt.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    k = len(shape) - 1
    w = jt.tensor(rng.standard_normal(shape[1:]).astype(np.float32), requires_grad=True)
    b = jt.tensor(rng.standard_normal(shape[1:]).astype(np.float32), requires_grad=True)
    g = jt.tensor(rng.standard_normal(shape).astype(np.float32))
    assert x.numel() >= PARALLEL_MIN

    def run():
        for t in (x, w, b):
            t.grad = None
        y = norm(x, k, w, b, 1e-5, True)
        y.backward(g)
        return [t.detach().numpy().copy() for t in (y, x.grad, w.grad, b.grad)]
    results = at_thread_counts(run)
    for one, many in zip(results[0], results[-1], strict=False):
        np.testing.assert_array_equal(one, many)
    want, grads = reference(x.detach().numpy(), k, w.detach().numpy(), b.detach().numpy(), 1e-5,
                            True)
    np.testing.assert_allclose(results[0][0], want, rtol=1e-5, atol=1e-5)
    for got, expected in zip(results[0][1:], grads(g.numpy().astype(np.float64)), strict=False):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("centred", [True, False])
def test_gradients_match_finite_differences(centred):
    rng = np.random.default_rng(4)
    x = jt.tensor(rng.standard_normal((3, 2, 5)), requires_grad=True)
    w = jt.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    b = jt.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    if centred:
        assert jt.autograd.gradcheck(lambda x, w, b: F.layer_norm(x, (2, 5), w, b), (x, w, b))
        assert jt.autograd.gradcheck(lambda x: F.layer_norm(x, 5, eps=0.1), (x,))
    else:
        assert jt.autograd.gradcheck(lambda x, w: F.rms_norm(x, (2, 5), w), (x, w))
        assert jt.autograd.gradcheck(lambda x: F.rms_norm(x, 5, eps=0.1), (x,))


@pytest.mark.parametrize("centred", [True, False])
def test_gradients_and_second_derivatives_match_torch(centred):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x, w, b, g = (rng.standard_normal(s) for s in ((4, 3, 6), (6,), (6,), (4, 3, 6)))
    mine = [jt.tensor(v, requires_grad=True) for v in (x, w, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, w, b)]
    if centred:
        y = F.layer_norm(mine[0], (6,), mine[1], mine[2])
        ty = torch.nn.functional.layer_norm(theirs[0], (6,), theirs[1], theirs[2])
    else:
        mine, theirs = mine[:2], theirs[:2]
        y = F.rms_norm(mine[0], (6,), mine[1], 1e-6)
        ty = torch.nn.functional.rms_norm(theirs[0], (6,), theirs[1], 1e-6)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    got = jt.autograd.grad((y * jt.tensor(g)).sum(), mine, create_graph=True)
    want = torch.autograd.grad((ty * torch.tensor(g)).sum(), theirs, create_graph=True)
    probe = [rng.standard_normal(t.shape) for t in got]
    for a, e in zip(got, want, strict=False):
        np.testing.assert_allclose(a.detach().numpy(), e.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    second = jt.autograd.grad(sum((a * jt.tensor(p)).sum()
                                  for a, p in zip(got, probe, strict=False)), mine,
                              allow_unused=True)
    expected = torch.autograd.grad(sum((e * torch.tensor(p)).sum()
                                       for e, p in zip(want, probe, strict=False)),
                                   theirs, allow_unused=True)
    for a, e in zip(second, expected, strict=False):
        if e is None:
            assert a is None or not a.numpy().any()
        else:
            np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-9, atol=1e-11)


def test_recorded_backward_keeps_the_kernels_accuracy_far_from_zero():
    """With create_graph the rule composes its formulas from ops, centring each row on its
    first element first: float32 rows of 1e4 + noise get the kernel's gradients (a plain mean
    cost dw 1.6e-2 of relative error)."""
    rng = np.random.default_rng(7)
    a = (1e4 + 1e-2 * rng.standard_normal((4, 256))).astype(np.float32)
    g = rng.standard_normal((4, 256)).astype(np.float32)
    w0 = rng.standard_normal(256).astype(np.float32)
    _, grads = reference(a, 1, w0, None, 1e-5, True)
    want = grads(g.astype(np.float64))
    for create_graph in (False, True):
        x, w = jt.tensor(a, requires_grad=True), jt.tensor(w0, requires_grad=True)
        dx, dw = jt.autograd.grad((F.layer_norm(x, 256, w) * jt.tensor(g)).sum(), (x, w),
                                  create_graph=create_graph)
        for got, expected in ((dx, want[0]), (dw, want[1])):
            err = np.abs(got.detach().numpy() - expected).max() / np.abs(expected).max()
            assert err < 1e-5, (create_graph, err)


def test_hard_rows_constant_far_from_zero_and_large():
    """A constant row has variance 0 (y = bias); rows far from 0 keep their small variance
    (the sums are float64 and two-pass); a row of 1e30 does not overflow (float64 squares)."""
    rows = np.array([[3.0] * 4, [1e4 + 1e-3 * i for i in range(4)], [1e30, -1e30, 1e30, 0.0]])
    for dtype in (np.float32, np.float64):
        x = jt.tensor(rows.astype(dtype), requires_grad=True)
        b = jt.tensor(np.arange(4.0).astype(dtype))
        y = F.layer_norm(x, 4, None, b)
        want, grads = reference(x.detach().numpy(), 1, None, b.numpy(), 1e-5, True)
        np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-3, atol=1e-5)
        np.testing.assert_array_equal(y.detach().numpy()[0], np.arange(4.0))
        y.sum().backward()
        assert np.isfinite(x.grad.numpy()).all()
        r = F.rms_norm(jt.tensor(rows.astype(dtype)), 4)
        np.testing.assert_allclose(r.numpy(), reference(rows.astype(dtype), 1, None, None,
                                                        np.finfo(dtype).eps, False)[0],
                                   rtol=1e-5, atol=1e-6)


def test_empty_inputs_follow_torch():
    x = jt.zeros(0, 5, requires_grad=True)
    w, b = jt.ones(5, requires_grad=True), jt.zeros(5, requires_grad=True)
    y = F.layer_norm(x, 5, w, b)
    assert tuple(y.shape) == (0, 5)
    y.sum().backward()
    assert x.grad.shape == (0, 5) and w.grad.tolist() == [0.0] * 5 and b.grad.tolist() == [0] * 5
    z = jt.zeros(3, 0, requires_grad=True)
    for out in (F.layer_norm(z, 0), F.rms_norm(z, (0,))):
        assert tuple(out.shape) == (3, 0)
        out.sum().backward()
        assert tuple(z.grad.shape) == (3, 0)


def test_rms_norm_defaults_and_weights_of_another_dtype_follow_torch():
    """eps defaults to the epsilon of input's dtype; a weight of another dtype is converted
    (the result has input's dtype, as torch 2.13's)."""
    a = np.full((1, 4), 1e-4, np.float32)
    x = jt.tensor(a)
    eps32 = float(np.finfo(np.float32).eps)
    want = a / np.sqrt((a.astype(np.float64) ** 2).mean() + eps32)
    np.testing.assert_allclose(F.rms_norm(x, 4).numpy(), want, rtol=1e-6)
    w = jt.ones(4, dtype=jt.float64, requires_grad=True)
    got = F.rms_norm(x, 4, w)
    assert got.dtype is jt.float32
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-6)
    got.sum().backward()
    assert w.grad.dtype is jt.float64
    assert F.rms_norm(x.double(), 4, jt.ones(4)).dtype is jt.float64
    module = nn.RMSNorm([1, 4], eps=1e-3, elementwise_affine=False)
    assert module.weight is None and list(module.parameters()) == []
    np.testing.assert_allclose(module(x.reshape(1, 1, 4)).numpy().ravel(),
                               a.ravel() / np.sqrt((a ** 2).mean() + 1e-3), rtol=1e-6)
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():  # (torch: "Mismatch dtype ... Cannot dispatch to fused")
        warnings.simplefilter("ignore")
        theirs = torch.nn.functional.rms_norm(torch.tensor(a), (4,),
                                              torch.ones(4, dtype=torch.float64))
    assert theirs.dtype is torch.float32
    np.testing.assert_allclose(got.detach().numpy(), theirs.numpy(), rtol=1e-6)


def test_modules_match_torch_reprs_parameters_and_training():
    norm_ = nn.RMSNorm(4, dtype=jt.float64)
    assert norm_.weight.dtype is jt.float64 and norm_.weight.tolist() == [1.0] * 4
    assert [n for n, _ in norm_.named_parameters()] == ["weight"]
    assert repr(norm_) == "RMSNorm((4,), eps=None, elementwise_affine=True)"
    assert repr(nn.RMSNorm([2, 3], eps=0.001, elementwise_affine=False)) == \
        "RMSNorm((2, 3), eps=0.001, elementwise_affine=False)"
    torch = pytest.importorskip("torch")
    for mine, theirs in ((nn.RMSNorm(4), torch.nn.RMSNorm(4)),
                         (nn.RMSNorm((2, 3), 1e-3, False), torch.nn.RMSNorm((2, 3), 1e-3, False)),
                         (nn.LayerNorm(4, bias=False), torch.nn.LayerNorm(4, bias=False))):
        assert repr(mine) == repr(theirs)
        assert list(mine.state_dict()) == list(theirs.state_dict())
    # a pre-norm residual block learns: the loss falls
    jt.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.RMSNorm(16), nn.GELU(), nn.Linear(16, 8),
                          nn.LayerNorm(8), nn.Linear(8, 1))
    opt = jt.optim.Adam(model.parameters(), lr=1e-2)
    x, target = jt.randn(32, 8), jt.randn(32, 1)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 2


def test_bad_input_raises_a_clear_error_and_records_nothing():
    x = jt.randn(3, 5, requires_grad=True)
    with pytest.raises(NotImplementedError, match=r"layer_norm\(\): not implemented for "
                                                  r"jitensor.int64 input; convert it"):
        F.layer_norm(jt.ones(2, 5, dtype=jt.int64), 5)
    with pytest.raises(NotImplementedError, match=r"rms_norm\(\)"):
        F.rms_norm(jt.ones(2, 5, dtype=jt.int32), 5)
    with pytest.raises(RuntimeError, match=r"at least 1-dimensional.* normalized_shape = \[\]"):
        F.layer_norm(x, ())
    with pytest.raises(RuntimeError, match=r"rms_norm\(\): given normalized_shape=\[3\], expected "
                                           r"input with shape \[\*, 3\], but got input of size "
                                           r"\[3, 5\]"):
        F.rms_norm(x, 3)
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[2, 3, 5\]"):
        F.layer_norm(x, (2, 3, 5))
    with pytest.raises(RuntimeError, match=r"bias of shape \[4\] does not match "
                                           r"normalized_shape \[5\]"):
        F.layer_norm(x, 5, None, jt.ones(4))
    with pytest.raises(RuntimeError, match=r"expected weight to have input's dtype "
                                           r"jitensor.float32, got jitensor.float64; convert"):
        F.layer_norm(x, 5, jt.ones(5, dtype=jt.float64))
    for shape in ((5.0,), "5", jt.tensor([5]), (True,)):
        with pytest.raises(TypeError, match="normalized_shape must be an int or a sequence"):
            F.layer_norm(x, shape)
    with pytest.raises(TypeError, match=r"argument 'weight' must be a Tensor or None, got list"):
        F.rms_norm(x, 5, [1.0] * 5)
    with pytest.raises(TypeError, match=r"argument 'input' must be a Tensor"):
        F.layer_norm(np.ones((2, 5)), 5)
    assert nn.LayerNorm(np.int64(5)).normalized_shape == (5,)
    assert nn.RMSNorm(jt.Size([2, 5])).normalized_shape == (2, 5)
    assert x.grad is None
    y = F.layer_norm(x, 5)
    with jt.no_grad():
        x.add_(1.0)  # the input the backward reads has changed: backward refuses
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_kernels_load_from_the_disk_cache():
    """A second process runs the norm kernels, serial and parallel, without compiling them."""
    code = ("import jitensor as jt\n"
            "from jitensor.kernels.cpu import norm as k\n"
            "for n in (4, 4096):\n"
            "    x = jt.randn(n, 32, requires_grad=True)\n"
            "    jt.nn.LayerNorm(32)(x).sum().backward()\n"
            "kernels = [k.norm_rows, k.norm_rows_grad]\n"
            "print(sum(sum(f.stats.cache_misses.values()) for f in kernels),\n"
            "      sum(sum(f.stats.cache_hits.values()) for f in kernels))")
    run_python(code)
    misses, hits = map(int, run_python(code).split())
    assert misses == 0 and hits == 2
