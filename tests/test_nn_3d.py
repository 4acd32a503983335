"""The 3-d convolutions and poolings, the adaptive max poolings, unpooling, power-average
pooling, bilinear, embedding_bag and gumbel_softmax (nn/functional.py, nn/modules/): values and
gradients against torch for hypothesis' shapes, strides, paddings and dtypes; torch's errors;
the modules' reprs; a CUDA run of each (the simulator without a GPU)."""
import numpy as np
import pytest
from conftest import at_thread_counts
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
from jitensor import nn
from jitensor.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")
TOLERANCE = {"float64": 1e-9, "float32": 2e-4}


def compare(fn, arrays, *args, grad=True, rtol=1e-9, seed=0, **kwargs):
    """fn (a name of both functionals) on jitensor and torch copies of arrays: every output,
    then the gradients of the float inputs for one random upstream gradient."""
    floats = [grad and a.dtype.kind == "f" for a in arrays]
    mine = [jt.tensor(a, requires_grad=f) for a, f in zip(arrays, floats, strict=True)]
    theirs = [torch.tensor(a, requires_grad=f) for a, f in zip(arrays, floats, strict=True)]
    got, want = getattr(F, fn)(*mine, *args, **kwargs), getattr(TF, fn)(*theirs, *args, **kwargs)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for a, b in zip(got, want, strict=True):
        assert tuple(a.shape) == tuple(b.shape) and a.dtype.name == str(b.dtype)[6:], fn
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol,
                                   atol=rtol, err_msg=fn)
    if any(floats):
        g = np.random.default_rng(seed).standard_normal(tuple(want[0].shape))
        got[0].backward(jt.tensor(g.astype(arrays[0].dtype)))
        want[0].backward(torch.tensor(g.astype(arrays[0].dtype)))
        for a, b, f in zip(mine, theirs, floats, strict=True):
            if f:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol * 10,
                                           atol=rtol * 10, err_msg=fn)
    return got


def raises_like_torch(fn, *args, **kwargs):
    """fn raises torch's exception type; the message's gist (its first words) matches."""
    def call(lib, convert):
        getattr(lib, fn)(*(convert(a) if isinstance(a, np.ndarray) else a for a in args),
                         **{k: convert(a) if isinstance(a, np.ndarray) else a
                            for k, a in kwargs.items()})
    with pytest.raises(Exception) as theirs:
        call(TF, torch.tensor)
    with pytest.raises(type(theirs.value)) as ours:
        call(F, jt.tensor)
    assert str(ours.value).split()[:2] == str(theirs.value).split()[:2], \
        (str(ours.value), str(theirs.value))


# -- convolutions ----------------------------------------------------------------------------------
@st.composite
def conv3d_cases(draw):
    groups = draw(st.sampled_from([1, 2]))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(3))
    stride = tuple(draw(st.integers(1, 2)) for _ in range(3))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3))
    padding = draw(st.sampled_from(["same", "valid", "ints"]))
    if padding == "same":
        stride = (1, 1, 1)
    elif padding == "ints":
        padding = tuple(draw(st.integers(0, 2)) for _ in range(3))
    size = tuple(draw(st.integers(d * (k - 1) + 1, d * (k - 1) + 3))
                 for k, d in zip(kernel, dilation, strict=True))
    batch = draw(st.sampled_from([(), (1,), (2,)]))
    return (*batch, c, *size), (o, c // groups, *kernel), stride, padding, dilation, groups, \
        draw(st.booleans()), draw(st.sampled_from(["float64", "float32"])), \
        draw(st.integers(0, 2 ** 32 - 1))


@given(conv3d_cases())
def test_conv3d_matches_torch(case):
    shape, wshape, stride, padding, dilation, groups, bias, dtype, seed = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in (shape, wshape)]
    if bias:
        arrays.append(rng.standard_normal(wshape[0]).astype(dtype))
    compare("conv3d", arrays, stride=stride, padding=padding, dilation=dilation, groups=groups,
            rtol=TOLERANCE[dtype], seed=seed)


@given(conv3d_cases(), st.data())
def test_conv_transpose3d_matches_torch(case, data):
    shape, wshape, stride, _, dilation, groups, bias, dtype, seed = case
    c = shape[-4]
    wshape = (c, wshape[0] // groups, *wshape[2:])
    padding = tuple(data.draw(st.integers(0, (k - 1) * d // 2))
                    for k, d in zip(wshape[2:], dilation, strict=True))
    output_padding = tuple(data.draw(st.integers(0, max(s, d) - 1))
                           for s, d in zip(stride, dilation, strict=True))
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in (shape, wshape)]
    if bias:
        arrays.append(rng.standard_normal(wshape[1] * groups).astype(dtype))
    compare("conv_transpose3d", arrays, stride=stride, padding=padding,
            output_padding=output_padding, groups=groups, dilation=dilation,
            rtol=TOLERANCE[dtype], seed=seed)


def test_conv3d_integers_and_threads_give_the_same_bits():
    rng = np.random.default_rng(1)
    x, w = rng.integers(-4, 5, (2, 2, 4, 5, 3)), rng.integers(-4, 5, (3, 2, 2, 3, 2))
    compare("conv3d", [x, w], padding=1)
    compare("conv_transpose3d", [x, w.transpose(1, 0, 2, 3, 4).copy()], stride=2)
    x, w = rng.standard_normal((2, 4, 9, 10, 11)), rng.standard_normal((8, 4, 3, 3, 3))
    runs = at_thread_counts(lambda: F.conv3d(jt.tensor(x), jt.tensor(w), padding=1).numpy())
    assert all(np.array_equal(runs[0], r) for r in runs)


def test_conv3d_errors_follow_torch():
    x = np.zeros((1, 2, 4, 4, 4))
    raises_like_torch("conv3d", x[0, 0], np.zeros((2, 2, 1, 1, 1)))
    raises_like_torch("conv3d", x, np.zeros((2, 3, 1, 1, 1)))
    raises_like_torch("conv3d", x, np.zeros((2, 2, 5, 1, 1)))
    raises_like_torch("conv3d", x, np.zeros((2, 2, 1, 1, 1)), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Invalid padding string"):
        F.conv3d(jt.tensor(x), jt.zeros(2, 2, 1, 1, 1, dtype=jt.float64), padding="full")
    raises_like_torch("conv_transpose3d", x, np.zeros((3, 2, 1, 1, 1)))
    raises_like_torch("conv_transpose3d", x, np.zeros((2, 2, 1, 1, 1)), stride=2,
                      output_padding=2)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv3d_modules_match_torch(mode):
    jt.manual_seed(0)
    rng = np.random.default_rng(2)
    for mine, theirs in (
            (nn.Conv3d(2, 4, (3, 2, 3), padding="same", padding_mode=mode, bias=False),
             torch.nn.Conv3d(2, 4, (3, 2, 3), padding="same", padding_mode=mode, bias=False)),
            (nn.Conv3d(2, 4, 3, 2, 1, padding_mode=mode, groups=2),
             torch.nn.Conv3d(2, 4, 3, 2, 1, padding_mode=mode, groups=2)),
            (nn.ConvTranspose3d(2, 4, 3, 2, 1, 1), torch.nn.ConvTranspose3d(2, 4, 3, 2, 1, 1))):
        if mode != "zeros" and isinstance(mine, nn.ConvTranspose3d):
            continue
        assert repr(mine) == repr(theirs)
        theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mine.state_dict().items()})
        x = rng.standard_normal((1, 2, 4, 5, 6)).astype(np.float32)
        np.testing.assert_allclose(mine(jt.tensor(x)).detach().numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
    out = nn.ConvTranspose3d(2, 4, 3, 2)(jt.zeros(1, 2, 3, 3, 3), output_size=(8, 7, 8))
    assert tuple(out.shape) == (1, 4, 8, 7, 8)


# -- poolings --------------------------------------------------------------------------------------
@st.composite
def pool3d_cases(draw):
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(3))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(3))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3))
    size = tuple(draw(st.integers(d * (k - 1) + 1, 6)) for k, d in zip(kernel, dilation,
                                                                         strict=True))
    batch = draw(st.sampled_from([(2,), ()]))
    return (*batch, 2, *size), kernel, stride, padding, dilation, draw(st.booleans()), \
        draw(st.sampled_from(["float64", "float32"])), draw(st.integers(0, 2 ** 32 - 1))


def _pool_input(shape, dtype, seed):
    """Values with ties (few levels) and, in float, a NaN or two."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, shape).astype(dtype)
    x += rng.standard_normal(shape).astype(dtype) * (rng.random() < 0.5)
    if rng.random() < 0.3:
        x.reshape(-1)[rng.integers(0, x.size, 2)] = np.nan
    return x


@given(pool3d_cases())
def test_max_pool3d_matches_torch(case):
    shape, kernel, stride, padding, dilation, ceil_mode, dtype, seed = case
    x = _pool_input(shape, dtype, seed)
    compare("max_pool3d", [x], kernel, stride, padding, dilation, ceil_mode, True,
            rtol=TOLERANCE[dtype], seed=seed)
    compare("max_pool3d_with_indices", [x], kernel, stride, padding, dilation, ceil_mode,
            rtol=TOLERANCE[dtype], seed=seed)


@given(pool3d_cases(), st.booleans(), st.sampled_from([None, 3]))
def test_avg_and_lp_pool3d_match_torch(case, include_pad, divisor):
    shape, kernel, stride, padding, _, ceil_mode, dtype, seed = case
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    compare("avg_pool3d", [x], kernel, stride, padding, ceil_mode, include_pad, divisor,
            rtol=TOLERANCE[dtype], seed=seed)
    compare("lp_pool3d", [np.abs(x) + 0.5], 2.0, kernel, stride, ceil_mode,
            rtol=TOLERANCE[dtype], seed=seed)


@given(st.integers(1, 3), st.lists(st.integers(1, 7), min_size=3, max_size=3),
       st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=3, max_size=3),
       st.sampled_from(["float64", "float32"]), st.integers(0, 2 ** 32 - 1))
def test_adaptive_poolings_match_torch(n, size, out, dtype, seed):
    x = _pool_input((2, 3, *size[:n]), dtype, seed)
    out = tuple(out[:n])
    rtol = TOLERANCE[dtype]
    compare(f"adaptive_max_pool{n}d", [x], out if n > 1 else out[0] or 2, True, rtol=rtol,
            seed=seed)
    compare(f"adaptive_max_pool{n}d_with_indices", [x[0]], out if n > 1 else out[0] or 2,
            rtol=rtol, seed=seed)
    if n == 3:
        compare("adaptive_avg_pool3d", [np.nan_to_num(x)], out, rtol=rtol, seed=seed)
        compare("adaptive_avg_pool3d", [x[0]], out, rtol=rtol, seed=seed)


def test_one_and_two_d_forms_unpooling_and_lp_pooling_match_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 7))
    compare("max_pool2d_with_indices", [x], 3, 2, 1)
    compare("max_pool1d_with_indices", [x[0]], 2, 1, 1, 2, True)
    compare("lp_pool2d", [x], 3, (2, 3), (1, 2), True)
    compare("lp_pool1d", [np.abs(x[0])], 1.5, 2)
    for n in (1, 2, 3):
        for shape, size in (((2, 3, 6, 4, 8)[:2 + n], None), ((2, 3, 7, 5, 6)[:2 + n], "same")):
            values, at = getattr(TF, f"max_pool{n}d")(torch.tensor(rng.standard_normal(shape)),
                                                     2, return_indices=True)
            compare(f"max_unpool{n}d", [values.numpy(), at.numpy()], 2,
                    output_size=shape if size else None)
    values, at = TF.max_pool2d(torch.tensor(x[0]), 2, return_indices=True)  # unbatched
    compare("max_unpool2d", [values.numpy(), at.numpy()], 2, output_size=(6, 7))


def test_integer_poolings_follow_torch():
    x = np.random.default_rng(4).integers(-9, 9, (1, 2, 5, 4, 6))
    compare("max_pool3d", [x], 2, 1, 1, return_indices=True)
    compare("avg_pool3d", [x], 3, 2, 1)
    compare("avg_pool3d", [x], 2, divisor_override=3)


def test_pooling_errors_follow_torch():
    x = np.zeros((1, 2, 4, 4, 4))
    raises_like_torch("max_pool3d", x, 5)
    raises_like_torch("avg_pool3d", x, 5)
    raises_like_torch("adaptive_max_pool3d", x[0, 0], 2)
    raises_like_torch("adaptive_max_pool2d", x[0].astype(np.int64), 2)
    with pytest.raises(NotImplementedError, match="not implemented for"):
        F.adaptive_avg_pool3d(jt.tensor(x.astype(np.int64)), 2)
    raises_like_torch("max_unpool2d", x[0], np.zeros((2, 4, 4), np.int64), 2)
    raises_like_torch("max_unpool2d", x[0, 0], np.full((4, 4, 4), 99), 2)
    raises_like_torch("max_unpool2d", x[0, 0], np.zeros((4, 4, 4), np.int64), 2,
                      output_size=(3, 3))


def test_pooling_modules_match_torch():
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    pairs = [(nn.MaxPool3d(2, 1, 1), torch.nn.MaxPool3d(2, 1, 1)),
             (nn.AvgPool3d(3, 2, 1, True, False), torch.nn.AvgPool3d(3, 2, 1, True, False)),
             (nn.AdaptiveAvgPool3d((2, None, 3)), torch.nn.AdaptiveAvgPool3d((2, None, 3))),
             (nn.AdaptiveMaxPool3d(2), torch.nn.AdaptiveMaxPool3d(2)),
             (nn.LPPool3d(2, 2), torch.nn.LPPool3d(2, 2)),
             (nn.BatchNorm3d(3), torch.nn.BatchNorm3d(3))]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)
        np.testing.assert_allclose(mine(jt.tensor(x)).detach().numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6,
                                   atol=1e-6)
    for n in (1, 2):
        y = x[0] if n == 2 else x[0, 0]
        for mine, theirs in ((getattr(nn, f"AdaptiveMaxPool{n}d")(3, True),
                              getattr(torch.nn, f"AdaptiveMaxPool{n}d")(3, True)),
                             (getattr(nn, f"LPPool{n}d")(1, 2),
                              getattr(torch.nn, f"LPPool{n}d")(1, 2))):
            assert repr(mine) == repr(theirs)
            a, b = mine(jt.tensor(y)), theirs(torch.tensor(y))
            a, b = (a, b) if isinstance(b, tuple) else ((a,), (b,))
            # max pooling is exact; LPPool's sums round in torch's order, which torch's
            # kernels pick by CPU (its AVX2 and AVX-512 sums differ in the last bit)
            exact = "Max" in type(mine).__name__
            for p, q in zip(a, b, strict=True):
                np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=0 if exact else 1e-6,
                                           atol=0 if exact else 1e-6)
    for n in (1, 2, 3):
        mine, theirs = getattr(nn, f"MaxUnpool{n}d")(2), getattr(torch.nn, f"MaxUnpool{n}d")(2)
        assert repr(mine) == repr(theirs)
        values, at = getattr(TF, f"max_pool{n}d")(torch.tensor(x[0, :, :4, :4, :4][
            (0,) * (3 - n)]), 2, return_indices=True)
        got = mine(jt.tensor(values.numpy()), jt.tensor(at.numpy()))
        np.testing.assert_array_equal(got.numpy(), theirs(values, at).numpy())


# -- bilinear, embedding_bag, gumbel_softmax -----------------------------------------------------
@given(st.lists(st.integers(1, 3), max_size=2), st.integers(1, 4), st.integers(1, 4),
       st.integers(1, 4), st.booleans(), st.sampled_from(["float64", "float32"]),
       st.integers(0, 2 ** 32 - 1))
def test_bilinear_matches_torch(lead, in1, in2, out, bias, dtype, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype)
              for s in ((*lead, in1), (*lead, in2), (out, in1, in2))]
    if bias:
        arrays.append(rng.standard_normal(out).astype(dtype))
    compare("bilinear", arrays, rtol=TOLERANCE[dtype], seed=seed)


def test_bilinear_module_and_errors_follow_torch():
    jt.manual_seed(0)
    mine, theirs = nn.Bilinear(2, 3, 4), torch.nn.Bilinear(2, 3, 4)
    assert repr(mine) == repr(theirs)
    bound = 1 / np.sqrt(2)
    assert float(mine.weight.abs().max()) <= bound and float(mine.bias.abs().max()) <= bound
    x, y = np.zeros((2, 3)), np.zeros((2, 4))
    raises_like_torch("bilinear", x, np.zeros((3, 4)), np.zeros((5, 3, 4)))
    raises_like_torch("bilinear", x, y, np.zeros((5, 2, 4)))
    raises_like_torch("bilinear", x, y, np.zeros((5, 3, 5)))
    raises_like_torch("bilinear", x, y, np.zeros((5, 3, 4)), np.zeros(4))


@given(st.lists(st.integers(0, 9), min_size=0, max_size=10), st.data(),
       st.sampled_from(["sum", "mean", "max"]), st.booleans(),
       st.sampled_from(["float64", "float32"]))
def test_embedding_bag_matches_torch(indices, data, mode, weighted, dtype):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(indices)), max_size=4)))
    include_last = data.draw(st.booleans()) and len(indices) > 0
    # (torch's float64 kernel reads past a last offset short of the end: end it there)
    offsets = [0, *cuts, len(indices)] if include_last else [0, *cuts]
    padding_idx = data.draw(st.one_of(st.none(), st.integers(0, 9)))
    rng = np.random.default_rng(len(indices))
    weight = rng.standard_normal((10, 3)).astype(dtype)
    psw = rng.standard_normal(len(indices)).astype(dtype) if weighted and mode == "sum" \
        else None
    kwargs = dict(mode=mode, include_last_offset=include_last, padding_idx=padding_idx)
    mine = jt.tensor(weight, requires_grad=True)
    theirs = torch.tensor(weight, requires_grad=True)
    got = F.embedding_bag(jt.tensor(indices, dtype=jt.int64), mine, jt.tensor(offsets),
                          per_sample_weights=None if psw is None else jt.tensor(psw), **kwargs)
    want = TF.embedding_bag(torch.tensor(indices, dtype=torch.int64), theirs,
                            torch.tensor(offsets),
                            per_sample_weights=None if psw is None else torch.tensor(psw),
                            **kwargs)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                               rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])
    g = rng.standard_normal(tuple(want.shape)).astype(dtype)
    got.backward(jt.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype])


def test_embedding_bag_two_d_module_and_errors_follow_torch():
    weight = np.random.default_rng(6).standard_normal((10, 3))
    rows = np.array([[1, 2, 0], [4, 5, 0]])
    for mode in ("sum", "mean", "max"):
        compare("embedding_bag", [rows, weight], mode=mode, padding_idx=0)
    compare("embedding_bag", [rows, weight], max_norm=1.0, grad=False)
    jt.manual_seed(0)
    mine = nn.EmbeddingBag(10, 3, mode="max", padding_idx=2)
    assert repr(mine) == repr(torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=2))
    assert float(mine.weight[2].abs().sum()) == 0
    bag = nn.EmbeddingBag.from_pretrained(jt.tensor(weight), mode="sum")
    np.testing.assert_allclose(bag(jt.tensor([1, 2, 3]), jt.tensor([0, 1])).numpy(),
                               [weight[1], weight[2] + weight[3]])
    w, one_d = np.zeros((10, 3)), np.array([1, 2])
    raises_like_torch("embedding_bag", one_d, w)
    raises_like_torch("embedding_bag", one_d, w, np.array([1]))
    raises_like_torch("embedding_bag", one_d, w, np.array([0, 3]))
    raises_like_torch("embedding_bag", rows, w, np.array([0]))
    raises_like_torch("embedding_bag", one_d, w, np.array([0]), mode="foo")
    raises_like_torch("embedding_bag", one_d, w, np.array([0]), per_sample_weights=np.ones(2))
    raises_like_torch("embedding_bag", one_d.astype(np.float64), w, np.array([0]))


def test_gumbel_softmax_samples_and_straight_through_gradient():
    jt.manual_seed(0)
    logits = jt.tensor(np.log([[0.7, 0.2, 0.1]] * 4000), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1, rtol=1e-12)
    hard = F.gumbel_softmax(logits, hard=True, dim=1)
    assert set(np.unique(hard.detach().numpy())) == {0.0, 1.0}
    np.testing.assert_allclose(hard.detach().numpy().mean(0), [0.7, 0.2, 0.1], atol=0.03)
    (hard * jt.tensor([1.0, 2.0, 3.0], dtype=jt.float64)).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0
    with pytest.warns(UserWarning, match="deprecated"):
        F.gumbel_softmax(logits, eps=1e-3)


# -- CUDA ----------------------------------------------------------------------------------------
def on_cuda_as_on_cpu(fn, *arrays):
    """fn's value and float inputs' gradients on CUDA equal those on the CPU."""
    cpu = [jt.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    gpu = [jt.tensor(a, device="cuda", requires_grad=a.dtype.kind == "f") for a in arrays]
    a, b = fn(*cpu), fn(*gpu)
    assert b.device.type == "cuda"
    np.testing.assert_allclose(b.cpu().detach().numpy(), a.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    (a * a).sum().backward()
    (b * b).sum().backward()
    for c, g in zip(cpu, gpu, strict=True):
        if c.requires_grad:
            np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=1e-10,
                                       atol=1e-12)


@needs_cuda
def test_cuda_3d_convolutions_and_poolings():
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((1, 2, 3, 3, 3)), rng.standard_normal((2, 1, 2, 2, 2))
    on_cuda_as_on_cpu(lambda t, v: F.conv3d(t, v, padding=1, groups=2), x, w)
    on_cuda_as_on_cpu(lambda t, v: F.conv_transpose3d(t, v, stride=2, groups=2), x, w)
    on_cuda_as_on_cpu(lambda t: F.max_pool3d(t, 2, 1), x)
    on_cuda_as_on_cpu(lambda t: F.avg_pool3d(t, 2, 1, 1) + F.lp_pool3d(t * t, 2, 2), x)
    on_cuda_as_on_cpu(lambda t: F.adaptive_max_pool3d(t, 2) + F.adaptive_avg_pool3d(t, 2), x)
    on_cuda_as_on_cpu(lambda t: F.adaptive_max_pool1d(t[0, 0], 2), x)
    on_cuda_as_on_cpu(lambda t: F.max_unpool3d(*F.max_pool3d(t, 2, return_indices=True), 2),
                      x[:, :, :2, :2, :2])


@needs_cuda
def test_cuda_bilinear_and_embedding_bag():
    rng = np.random.default_rng(8)
    a, b, w = (rng.standard_normal(s) for s in ((2, 3), (2, 2), (2, 3, 2)))
    on_cuda_as_on_cpu(F.bilinear, a, b, w)
    table = rng.standard_normal((5, 2))
    for mode in ("sum", "mean", "max"):
        on_cuda_as_on_cpu(lambda t, i, o, m=mode: F.embedding_bag(i, t, o, mode=m), table,
                          np.array([1, 2, 4, 1]), np.array([0, 1, 1]))
