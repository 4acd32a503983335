"""Convolutions, poolings and batch norm (nn/functional.py, nn/modules/conv.py, pooling.py and
batchnorm.py): values against NumPy references built on sliding_window_view for any shape,
stride, padding, dilation and groups; values, gradients, indices, running statistics and reprs
against torch (skipped where not installed); finite differences; the errors."""
import math

import numpy as np
import pytest
from conftest import at_thread_counts, run_python
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

import jitensor as jt
from jitensor import nn
from jitensor.nn import functional as F


def conv_reference(x, w, b, stride, padding, dilation, groups):
    """Cross-correlation in NumPy float64: windows of the zero-padded input, one einsum per
    group."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    o, per_group, kh, kw = w.shape
    windows = sliding_window_view(x, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(2, 3))
    windows = windows[:, :, ::sh, ::sw, ::dh, ::dw]  # (N, C, OH, OW, kh, kw)
    outs = []
    for g in range(groups):
        part = windows[:, g * per_group:(g + 1) * per_group]
        weight = w[g * (o // groups):(g + 1) * (o // groups)]
        outs.append(np.einsum("nchwij,ocij->nohw", part, weight))
    out = np.concatenate(outs, axis=1)
    return out if b is None else out + b.reshape(1, -1, 1, 1)


@st.composite
def convolutions(draw):
    groups = draw(st.sampled_from([1, 2]))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 3))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    h = draw(st.integers(dilation[0] * (kh - 1) + 1, 7))
    w = draw(st.integers(dilation[1] * (kw - 1) + 1, 7))
    return (draw(st.integers(1, 2)), c, h, w), (o, c // groups, kh, kw), stride, padding, \
        dilation, groups, draw(st.booleans()), draw(st.integers(0, 2 ** 32 - 1))


@given(convolutions())
def test_conv2d_matches_numpy(case):
    shape, wshape, stride, padding, dilation, groups, bias, seed = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(shape), rng.standard_normal(wshape)
    b = rng.standard_normal(wshape[0]) if bias else None
    got = F.conv2d(jt.tensor(x), jt.tensor(w), None if b is None else jt.tensor(b), stride,
                   padding, dilation, groups)
    want = conv_reference(x, w, b, stride, padding, dilation, groups)
    assert got.dtype is jt.float64 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


@given(convolutions(), st.sampled_from(["float64", "float32", "int64"]))
def test_conv2d_kernels_match_torch(case, dtype):
    """Forward, the three gradients and second derivatives (the gradient ops differentiated
    again), in float64, float32 and (forward only) int64, against torch."""
    torch = pytest.importorskip("torch")
    shape, wshape, stride, padding, dilation, groups, bias, seed = case
    rng = np.random.default_rng(seed)
    x, w, b = (rng.integers(-4, 5, s).astype(dtype) for s in (shape, wshape, wshape[:1]))
    floats = dtype != "int64"
    mine = [jt.tensor(v, requires_grad=floats) for v in (x, w, b)]
    theirs = [torch.tensor(v, requires_grad=floats) for v in (x, w, b)]
    results = []
    for lib, (a, c, d) in ((F, mine), (torch.nn.functional, theirs)):
        y = lib.conv2d(a, c, d if bias else None, stride, padding, dilation, groups)
        outs = [y]
        if floats:
            grads = (torch.autograd if lib is not F else jt.autograd).grad(
                (y * y).sum(), (a, c, d) if bias else (a, c), create_graph=True)
            outs += [*grads, *(torch.autograd if lib is not F else jt.autograd).grad(
                sum(g.square().sum() for g in grads), (a, c))]
        results.append([o.detach().numpy() for o in outs])
    tol = 1e-12 if dtype == "float64" else 1e-5
    for got, want in zip(*results, strict=False):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1, np.abs(want).max()))


@pytest.mark.parametrize("padding,stride", [(1, 1), (0, 1), ("same", 1), (2, 2)])
def test_conv_kernels_blocks_and_threads_give_the_same_bits(monkeypatch, padding, stride):
    """Small images whole, side by side in one block, and images split into several blocks of
    output rows (BLOCK made small), on one thread or two: the same bits, forward and both
    gradients (the weight's summed in runs fixed by the shape); 'same' padding at stride 1
    takes the long-copy path, the others the row path."""
    from jitensor.kernels.cpu import conv
    rng = np.random.default_rng(4)
    x = jt.tensor(rng.standard_normal((3, 4, 9, 7)).astype(np.float32), requires_grad=True)
    w = jt.tensor(rng.standard_normal((6, 2, 3, 3)).astype(np.float32), requires_grad=True)
    b = jt.tensor(rng.standard_normal(6).astype(np.float32), requires_grad=True)

    def run():
        x.grad = w.grad = b.grad = None
        y = F.conv2d(x, w, b, stride, padding, groups=2)
        (y * y).sum().backward()
        return [t.detach().numpy().copy() for t in (y, x.grad, w.grad, b.grad)]

    def same_bits_on_one_and_two_workers():
        workers = conv._workers
        runs = []
        for n in (1, 2):  # the launchers' choice, forced
            monkeypatch.setattr(conv, "_workers", lambda tasks, work, n=n: min(n, tasks))
            runs.append(run())
        monkeypatch.setattr(conv, "_workers", workers)
        for got, want in zip(*runs, strict=False):
            np.testing.assert_array_equal(got, want)

    assert conv._blocking(2 * 9, (3, 6, 9, 7))[1] == 3  # the three images in one block
    whole = run()
    same_bits_on_one_and_two_workers()
    monkeypatch.setattr(conv, "BLOCK", 40)  # a row or two of windows per block
    monkeypatch.setattr(conv, "PARTS", 3)
    blocks = run()
    for got, want in zip(blocks[:2], whole[:2], strict=False):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    want = conv_reference(x.detach().numpy().astype(np.float64), w.detach().numpy(),
                          b.detach().numpy(), (stride,) * 2, (1, 1) if padding == "same" else
                          (padding,) * 2, (1, 1), 2)
    np.testing.assert_allclose(blocks[0], want, rtol=1e-5, atol=1e-5)
    same_bits_on_one_and_two_workers()


def test_conv_dtypes_empty_inputs_and_errors_follow_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = np.arange(2 * 2 * 5 * 4).reshape(2, 2, 5, 4) % 7 - 3
    w = np.arange(3 * 2 * 2 * 3).reshape(3, 2, 2, 3) % 5 - 2
    for dtype in (np.int64, np.int32, np.uint8, np.int8):
        a, c = x.astype(dtype), w.astype(dtype)
        mine = F.conv2d(jt.tensor(a), jt.tensor(c), stride=(1, 2), padding=1)
        theirs = tf.conv2d(torch.tensor(a), torch.tensor(c), stride=(1, 2), padding=1)
        assert mine.dtype.name == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())  # (wrapping as torch)
    # an empty batch; no input channels (torch gives an empty result there): the bias alone
    a, c = jt.zeros(0, 2, 5, 4, requires_grad=True), jt.ones(3, 2, 3, 3, requires_grad=True)
    y = F.conv2d(a, c, padding=1)
    assert y.shape == tf.conv2d(torch.zeros(0, 2, 5, 4), torch.ones(3, 2, 3, 3), padding=1).shape
    y.sum().backward()
    assert a.grad.shape == a.shape and c.grad.shape == c.shape and not c.grad.abs().sum().item()
    y = F.conv2d(jt.ones(2, 0, 4, 4), jt.ones(3, 0, 3, 3), jt.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(y.numpy(), np.broadcast_to(np.array([1.0, 2.0, 3.0],
                                                                      np.float32)[:, None, None],
                                                             (2, 3, 2, 2)))
    with pytest.raises(RuntimeError, match="only zero batch or zero channel inputs"):
        F.conv2d(jt.ones(1, 2, 0, 0), jt.ones(3, 2, 1, 1), padding=1)
    with pytest.raises(RuntimeError, match=r"input type \(float32\) and weight type "
                                           r"\(float64\) should be the same"):
        F.conv2d(jt.ones(1, 2, 4, 4), jt.ones(3, 2, 2, 2, dtype=jt.float64))
    with pytest.raises(RuntimeError, match=r"and bias type \(float64\)"):
        F.conv2d(jt.ones(1, 2, 4, 4), jt.ones(3, 2, 2, 2), jt.ones(3, dtype=jt.float64))
    for shape in ((3, 2, 0, 2), (0, 2, 2, 2)):  # torch refuses these weights too
        with pytest.raises(RuntimeError, match="at least one output channel and a kernel"):
            F.conv2d(jt.ones(1, 2, 4, 4), jt.ones(shape))
    with pytest.raises(NotImplementedError, match="not implemented for bool"):
        F.conv2d(jt.ones(1, 2, 4, 4, dtype=jt.bool), jt.ones(3, 2, 2, 2, dtype=jt.bool))
    # an upstream gradient of another dtype is converted, as torch does
    x, w = jt.ones(1, 2, 4, 4, requires_grad=True), jt.ones(3, 2, 2, 2, requires_grad=True)
    y = F.conv2d(x, w)
    y.backward(jt.ones(y.shape, dtype=jt.float64))
    assert x.grad.dtype is jt.float32 and x.grad.sum().item() == 216  # (torch: 216)


def test_conv_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    x = jt.tensor(rng.standard_normal((2, 4, 5, 4)), requires_grad=True)
    w = jt.tensor(rng.standard_normal((2, 2, 3, 2)), requires_grad=True)
    b = jt.tensor(rng.standard_normal(2), requires_grad=True)
    assert jt.autograd.gradcheck(
        lambda p, q, r: F.conv2d(p, q, r, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
        (x, w, b))
    assert jt.autograd.gradcheck(lambda p: F.max_pool2d(p, 2, 1, 1), (x,))
    assert jt.autograd.gradcheck(lambda p: F.avg_pool2d(p, 3, 2, 1, ceil_mode=True,
                                                        count_include_pad=False), (x,))
    assert jt.autograd.gradcheck(lambda p: F.adaptive_avg_pool2d(p, (3, 2)), (x,))
    m, v = jt.zeros(4, dtype=jt.float64), jt.ones(4, dtype=jt.float64)
    assert jt.autograd.gradcheck(lambda p: F.batch_norm(p, m, v, training=True), (x,))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, ceil_mode=True),
                                dict(kernel_size=(2, 3), stride=(2, 1), dilation=(1, 2)),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)])
def test_poolings_match_torch(kw):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((2, 3, 7, 6))
    a, b = jt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (mine, at), (theirs, where) = F.max_pool2d(a, return_indices=True, **kw), \
        torch.nn.functional.max_pool2d(b, return_indices=True, **kw)
    np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
    assert at.dtype is jt.int64
    np.testing.assert_array_equal(at.numpy(), where.numpy())
    average = {k: v for k, v in kw.items() if k != "dilation"}
    for include in (True, False):
        mine = mine + F.avg_pool2d(a, count_include_pad=include, **average).sum()
        theirs = theirs + torch.nn.functional.avg_pool2d(b, count_include_pad=include,
                                                         **average).sum()
    mine.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_one_d_forms_and_adaptive_pooling_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 4, 9)), rng.standard_normal((4, 2, 3))
    pairs = [(F.conv1d(jt.tensor(x), jt.tensor(w), stride=2, padding=1, groups=2),
              tf.conv1d(torch.tensor(x), torch.tensor(w), stride=2, padding=1, groups=2)),
             (F.conv1d(jt.tensor(x), jt.tensor(w), padding="same", dilation=2, groups=2),
              tf.conv1d(torch.tensor(x), torch.tensor(w), padding="same", dilation=2,
                        groups=2)),
             (F.max_pool1d(jt.tensor(x), 3, 2, 1), tf.max_pool1d(torch.tensor(x), 3, 2, 1)),
             (F.avg_pool1d(jt.tensor(x), 3, 2, 1), tf.avg_pool1d(torch.tensor(x), 3, 2, 1)),
             (F.adaptive_avg_pool1d(jt.tensor(x), 4), tf.adaptive_avg_pool1d(torch.tensor(x),
                                                                             4)),
             (F.conv2d(jt.tensor(x[0, :, None]), jt.tensor(w[:, :, None]), groups=2),  # 3-D
              tf.conv2d(torch.tensor(x[0, :, None]), torch.tensor(w[:, :, None]), groups=2))]
    x2 = rng.standard_normal((2, 3, 7, 5))
    for size in ((1, 1), (3, 2), (5, 4), 2, (None, 3)):
        pairs.append((F.adaptive_avg_pool2d(jt.tensor(x2), size),
                      tf.adaptive_avg_pool2d(torch.tensor(x2), size)))
    for mine, theirs in pairs:
        assert mine.shape == tuple(theirs.shape)
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_batch_norm_statistics_follow_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).standard_normal((4, 3, 5, 2)).astype(np.float32)
    for momentum in (0.1, None):
        mine, theirs = nn.BatchNorm2d(3, momentum=momentum), \
            torch.nn.BatchNorm2d(3, momentum=momentum)
        for step in range(3):
            a = jt.tensor(x * (step + 1), requires_grad=True)
            b = torch.tensor(x * (step + 1), requires_grad=True)
            (mine(a) * jt.tensor(x)).sum().backward()
            (theirs(b) * torch.tensor(x)).sum().backward()
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(mine.state_dict()[key].numpy(), value.numpy(),
                                       rtol=1e-6, atol=1e-7)
        mine.eval()
        theirs.eval()
        np.testing.assert_allclose(mine(jt.tensor(x)).detach().numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    plain = nn.BatchNorm1d(3, affine=False, track_running_stats=False).eval()
    y = jt.tensor(x[:, :, 0, 0])  # no running statistics: batch statistics even in eval
    np.testing.assert_allclose(plain(y).numpy(), ((y - y.mean(0)) / (y.var(0, correction=0)
                                                                      + 1e-5).sqrt()).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_modules_match_torch_values_and_reprs():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal((2, 4, 9, 8)).astype(np.float32)
    cases = [("Conv2d", (4, 6, 3), {}),
             ("Conv2d", (4, 6, (3, 2)), dict(stride=2, padding=1, bias=False)),
             ("Conv2d", (4, 6, 3), dict(padding="same", padding_mode="reflect", groups=2)),
             ("Conv2d", (4, 6, 3), dict(padding=1, padding_mode="circular", dilation=2)),
             ("MaxPool2d", (3, 2, 1), {}), ("AvgPool2d", (3, 2, 1), {}),
             ("AdaptiveAvgPool2d", ((1, 1),), {}), ("BatchNorm2d", (4,), dict(bias=False))]
    for name, args, kw in cases:
        mine, theirs = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
        assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")
        mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        np.testing.assert_allclose(mine(jt.tensor(x)).detach().numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
    conv = nn.Conv1d(4, 3, 3, padding=2, padding_mode="replicate")
    assert repr(conv) == "Conv1d(4, 3, kernel_size=(3,), stride=(1,), padding=(2,), " \
        "padding_mode=replicate)"
    bound = 1 / math.sqrt(4 * 3)  # torch's init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert conv.weight.abs().max().item() <= bound and conv.bias.abs().max().item() <= bound


def test_bad_arguments_raise_clearly():
    x = jt.randn(1, 4, 5, 5)
    with pytest.raises(RuntimeError, match="expected a 4-D weight"):
        F.conv2d(x, jt.randn(3, 4, 3))
    with pytest.raises(RuntimeError, match="input of 4 channels, groups=3"):
        F.conv2d(x, jt.randn(3, 4, 3, 3), groups=3)
    with pytest.raises(RuntimeError, match="is larger than the padded input"):
        F.conv2d(x, jt.randn(3, 4, 7, 7))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv2d(x, jt.randn(3, 4, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Invalid padding string: 'full'"):
        F.conv2d(x, jt.randn(3, 4, 3, 3), padding="full")
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv2d(4, 6, 3, padding="full")
    with pytest.raises(ValueError, match="groups must be a positive integer, got 0"):
        nn.Conv2d(4, 6, 3, groups=0)
    with pytest.raises(RuntimeError, match="expected a bias of shape \\(3,\\)"):
        F.conv2d(x, jt.randn(3, 4, 3, 3), jt.randn(3, 1))
    with pytest.raises(RuntimeError, match="pad must be non-negative"):
        F.max_pool2d(x, 2, padding=-1)
    with pytest.raises(RuntimeError, match="dilation must be positive"):
        F.max_pool2d(x, 2, dilation=0)
    with pytest.raises(RuntimeError, match="divisor must be a non-zero int, got 2.5"):
        F.avg_pool2d(x, 2, divisor_override=2.5)
    with pytest.raises(RuntimeError, match="expected a 3-D \\(unbatched\\) or 4-D"):
        F.conv2d(jt.randn(4, 5), jt.randn(3, 4, 3, 3))
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(jt.randn(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match="expected 4D input \\(got 3D input\\)"):
        nn.BatchNorm2d(3)(jt.randn(2, 3, 4))
    with pytest.raises(ValueError, match="must be divisible by groups"):
        nn.Conv2d(4, 6, 3, groups=4)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(4, 6, 3, padding_mode="mirror")


def test_integer_inputs_empty_batches_and_argument_forms_follow_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = np.arange(18).reshape(1, 2, 3, 3) - 9
    for dtype in (np.int64, np.int32, np.uint8):
        a = (x + 9).astype(dtype) if dtype == np.uint8 else x.astype(dtype)
        pairs = [(F.max_pool2d(jt.tensor(a), 2, 1, 1, ceil_mode=True),
                  tf.max_pool2d(torch.tensor(a), 2, 1, 1, ceil_mode=True))]
        if dtype == np.int64:  # (torch averages no other integer type)
            pairs.append((F.avg_pool2d(jt.tensor(a), 2, 1, 1),
                          tf.avg_pool2d(torch.tensor(a), 2, 1, 1)))
        for mine, theirs in pairs:
            assert mine.dtype.name == str(theirs.dtype).removeprefix("torch.")
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    empty = jt.zeros(0, 3, 4, 4)
    assert nn.BatchNorm2d(3)(empty).shape == (0, 3, 4, 4)
    assert F.adaptive_avg_pool2d(jt.ones(2, 3, 4, 4), 0).shape == (2, 3, 0, 0)
    y = np.random.default_rng(6).standard_normal((1, 2, 5, 5))
    w = np.random.default_rng(7).standard_normal((2, 2, 3, 3))
    np.testing.assert_allclose(
        F.conv2d(jt.tensor(y), jt.tensor(w), stride=(2,), padding=np.int64(1)).numpy(),
        tf.conv2d(torch.tensor(y), torch.tensor(w), stride=2, padding=1).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(F.max_pool1d(jt.tensor(y[0]), 2, []).numpy(),
                                  tf.max_pool1d(torch.tensor(y[0]), 2).numpy())
    assert not isinstance(nn.AdaptiveAvgPool2d(1), nn.AdaptiveAvgPool1d)


@given(st.lists(st.integers(1, 5), min_size=2, max_size=4), st.booleans(), st.booleans(),
       st.sampled_from(["float64", "float32"]), st.integers(0, 2 ** 32 - 1))
def test_batch_norm_kernels_match_torch(shape, affine, strided, dtype, seed):
    """Training-mode batch_norm (N, C, ...) against torch: values, running statistics, the
    input's, weight's and bias's gradients (one kernel) and second derivatives (composed)."""
    torch = pytest.importorskip("torch")
    if math.prod(shape) // shape[1] < 2:
        shape[0] += 1
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 20).astype(dtype)
    w, b = (rng.standard_normal(shape[1]).astype(dtype) for _ in range(2))
    upstream = rng.standard_normal(shape).astype(dtype)
    results = []
    for lib, kind in ((jt, dtype), (torch, "float64")):  # (float32 against the exact values)
        x, w, b, upstream = (v.astype(kind) for v in (x, w, b, upstream))
        a = lib.tensor(x)  # (torch's gradients of some strided layouts differ from its own)
        if strided and lib is jt:
            a = jt.tensor(x.swapaxes(0, -1).copy()).swapaxes(0, -1)
        a.requires_grad_()
        c, d = (lib.tensor(v, requires_grad=True) if affine else None for v in (w, b))
        stats = [lib.tensor(np.zeros(shape[1], kind)), lib.tensor(np.ones(shape[1], kind))]
        y = lib.nn.functional.batch_norm(a, *stats, c, d, training=True, momentum=0.3)
        params = (a, c, d) if affine else (a,)
        g = lib.tensor(upstream)
        first = lib.autograd.grad(y, params, g, retain_graph=True)
        again = lib.autograd.grad(y, params, g, create_graph=True)
        second = lib.autograd.grad(sum((t * t).sum() for t in again), params[:2])
        results.append([t.detach().numpy() for t in (y, *stats, *first, *second)])
    tol = 1e-9 if dtype == "float64" else 2e-4
    for got, want in zip(*results, strict=False):
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1, np.abs(want).max()))


def test_batch_norm_threads_give_the_same_bits_and_errors():
    x = jt.tensor(np.random.default_rng(5).standard_normal((64, 8, 16, 16)).astype(np.float32),
                  requires_grad=True)
    w = jt.ones(8, requires_grad=True)

    def run():
        x.grad = w.grad = None
        y = F.batch_norm(x, None, None, w, None, training=True)
        (y * y).sum().backward()
        return [t.detach().numpy().copy() for t in (y, x.grad, w.grad)]
    results = at_thread_counts(run)
    for got, want in zip(results[0], results[-1], strict=False):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(RuntimeError, match="not implemented for int64 input"):
        F.batch_norm(jt.ones(4, 2, dtype=jt.int64), None, None, training=True)
    with pytest.raises(RuntimeError, match="weight should contain 2 elements on cpu, not 3"):
        F.batch_norm(jt.ones(4, 2), None, None, jt.ones(3), training=True)
    mean, var = jt.ones(3), jt.ones(2)  # a bad running_var: neither statistic is touched
    with pytest.raises(RuntimeError, match="running_var should contain 3 elements"):
        F.batch_norm(jt.randn(4, 3), mean, var, training=True)
    assert mean.tolist() == [1.0] * 3
    with pytest.raises(RuntimeError, match="expected weight to have input's dtype float32"):
        F.batch_norm(jt.randn(4, 3), None, None, jt.ones(3, dtype=jt.float64), training=True)
    y = F.batch_norm(jt.randn(4, 3), None, None, jt.ones(3, 1), training=True)  # (as torch)
    assert y.shape == (4, 3)


def test_conv_kernels_load_from_the_disk_cache():
    """A second process runs the convolution's three workers, and the drivers that run them
    on one thread and on several, without compiling them."""
    code = ("import numpy as np, jitensor as jt\n"
            "from jitensor.kernels.cpu import conv as k, kernels\n"
            "for n in (2, 64):  # one thread, then several\n"
            "    x = jt.randn(n, 4, 16, 16, requires_grad=True)\n"
            "    jt.nn.Conv2d(4, 8, 3, padding=1)(x).sum().backward()\n"
            "built = k.workers(np.dtype(np.float32))\n"
            "print(sum(built[name].cfunc.cache_hits for name in\n"
            "          ('conv_forward', 'conv_input_grad', 'conv_weight_grad')),\n"
            "      *[sum(d.stats.cache_misses.values()) for d in\n"
            "        (kernels._run_serial, kernels._run_parallel)])")
    run_python(code)
    hits, *misses = map(int, run_python(code).split())
    assert hits == 3 and misses == [0, 0]



@st.composite
def max_poolings(draw):
    """A max pooling's (input, arguments) as torch accepts them, with ties, infinities and
    NaNs among the values."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    size = [draw(st.integers(d * (k - 1) + 1 - 2 * p, 7)) for k, d, p in
            zip(kernel, dilation, padding, strict=False)]
    shape = (draw(st.integers(0, 2)), draw(st.integers(1, 3)), *(max(1, s) for s in size))
    x = np.random.default_rng(draw(st.integers(0, 2 ** 16))).integers(-3, 4, shape)
    x = x.astype(np.float64)
    special = draw(st.sampled_from([None, np.nan, np.inf, -np.inf]))
    if special is not None and x.size:
        x.flat[::5] = special
    return x, dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
                   ceil_mode=draw(st.booleans()))


@given(max_poolings(), st.sampled_from(["float64", "float32", "int64"]))
def test_max_pooling_matches_torch_with_ties_and_nans(case, dtype):
    """Values, indices (torch's rule: the first largest, the last NaN; -inf or the integer
    minimum where a window lies wholly in the padding) and the gradient, which goes to the
    winner alone; integers pool too."""
    torch = pytest.importorskip("torch")
    x, kw = case
    if dtype == "int64":
        x = np.nan_to_num(x, nan=0, posinf=9, neginf=-9)
    try:
        theirs, where = torch.nn.functional.max_pool2d(torch.tensor(x.astype(dtype)),
                                                       return_indices=True, **kw)
    except RuntimeError:  # an output of size 0, which torch refuses
        with pytest.raises(RuntimeError):
            F.max_pool2d(jt.tensor(x.astype(dtype)), **kw)
        return
    floating = dtype != "int64"
    a = jt.tensor(x.astype(dtype), requires_grad=floating)
    mine, at = F.max_pool2d(a, return_indices=True, **kw)
    assert (mine.dtype, at.dtype, tuple(mine.shape)) == (a.dtype, jt.int64, tuple(theirs.shape))
    np.testing.assert_array_equal(mine.detach().numpy(), theirs.numpy())
    np.testing.assert_array_equal(at.numpy(), where.numpy())
    # (a window wholly in the padding points past its plane, where torch's backward then adds
    # into the next plane's gradient; jitensor's drops it)
    if floating and not (where >= x.shape[2] * x.shape[3]).any():
        b = torch.tensor(x.astype(dtype), requires_grad=True)
        g = np.random.default_rng(0).standard_normal(tuple(theirs.shape)).astype(dtype)
        mine.backward(jt.tensor(g))
        torch.nn.functional.max_pool2d(b, **kw).backward(torch.tensor(g))
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_max_pooling_saves_only_its_indices_and_differentiates_twice():
    """Its output may be changed in place (torch saves the indices, not the values), and its
    backward is differentiable (a gather at the same indices), as torch's."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).standard_normal((2, 2, 5, 6))
    grads = []
    for lib in (jt, torch):
        a = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.max_pool2d(a * a, 3, stride=2, padding=1, ceil_mode=True)
        lib.nn.functional.relu(y, inplace=True)
        g, = lib.autograd.grad((y * y).sum(), a, create_graph=True)
        (g * g).sum().backward()
        grads += [g.detach().numpy(), a.grad.numpy()]
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-12)
    np.testing.assert_allclose(grads[1], grads[3], rtol=1e-12)
    with pytest.raises(RuntimeError, match="Bool"):
        F.max_pool2d(jt.ones(1, 1, 2, 2, dtype=jt.bool), 2)
