"""torch.nn's remaining activations (softmin, softsign, the shrinkages, prelu, rrelu, glu,
Softmax2d), pdist and the distance modules, the channel-wise and alpha dropouts, and the
margin / embedding / Poisson / Gaussian losses: values, dtypes and shapes against torch, every
reduction, float64 gradients against torch's, reprs, warnings and errors; the random forms by
their statistics and structure (whole channels, scale, eval identity, p = 0 and 1, gradient =
mask * scale), not torch's random numbers; one tiny CUDA check per group."""
import math
import warnings

import numpy as np
import pytest
from conftest import assert_grads_match_torch
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt
from jitensor import nn
from jitensor.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")

REDUCTIONS = ("none", "mean", "sum")
TOL = {jt.float32: dict(rtol=2e-5, atol=2e-6), jt.float64: dict(rtol=1e-11, atol=1e-12)}


def pair(a, dtype=None, grad=False):
    """(jitensor tensor, torch tensor) of the NumPy array a (converted to dtype, a jt dtype)."""
    a = np.asarray(a)
    if dtype is not None:
        a = a.astype(dtype.np)
    return (jt.tensor(a, requires_grad=grad),
            torch.tensor(a, requires_grad=grad))


def check(got, expected, **tol):
    """got (jitensor) has expected's (torch) shape, dtype and values (NaN equal to NaN)."""
    assert isinstance(got, jt.Tensor)
    assert tuple(got.shape) == tuple(expected.shape), (got.shape, expected.shape)
    assert got.dtype.name == str(expected.dtype).split(".")[-1], (got.dtype, expected.dtype)
    np.testing.assert_allclose(got.detach().cpu().numpy(), expected.detach().numpy(),
                               **(tol or dict(rtol=1e-6, atol=1e-7)), equal_nan=True)


def grads_match(rng, out, theirs_out, mine, theirs, rtol=1e-9, atol=1e-11):
    assert_grads_match_torch(torch, rng, out, theirs_out, mine, theirs, rtol, atol)


# -- activations -------------------------------------------------------------------------------
SPECIAL = [np.nan, 0.0, -0.0, 0.5, -0.5, 0.25, -0.25, 1.0, -1.0, 3.0, -3.0, 1e-3]

ACTIVATIONS = {  # name: (jitensor call, torch call)
    "softmin": (lambda x: F.softmin(x, 1), lambda x: TF.softmin(x, 1)),
    "softmin_dtype": (lambda x: F.softmin(x, 0, dtype=jt.float64),
                      lambda x: TF.softmin(x, 0, dtype=torch.float64)),
    "softsign": (F.softsign, TF.softsign),
    "tanhshrink": (F.tanhshrink, TF.tanhshrink),
    "softshrink": (F.softshrink, TF.softshrink),
    "softshrink_1": (lambda x: F.softshrink(x, 1.0), lambda x: TF.softshrink(x, 1.0)),
    "softshrink_0": (lambda x: F.softshrink(x, 0), lambda x: TF.softshrink(x, 0)),
    "hardshrink": (F.hardshrink, TF.hardshrink),
    "hardshrink_neg": (lambda x: F.hardshrink(x, -0.3), lambda x: TF.hardshrink(x, -0.3)),
    "hardshrink_0.25": (lambda x: F.hardshrink(x, 0.25), lambda x: TF.hardshrink(x, 0.25)),
    "rrelu_eval": (lambda x: F.rrelu(x, 0.1, 0.3), lambda x: TF.rrelu(x, 0.1, 0.3)),
    "glu": (lambda x: F.glu(x, 1), lambda x: TF.glu(x, 1)),
    "glu_last": (F.glu, TF.glu),
    "prelu_1": (lambda x: F.prelu(x, jt.tensor([0.3], dtype=x.dtype)),
                lambda x: TF.prelu(x, torch.tensor([0.3], dtype=x.dtype))),
    "prelu_c": (lambda x: F.prelu(x, jt.tensor([0.3, -2.0, 0.0, 1.5], dtype=x.dtype)),
                lambda x: TF.prelu(x, torch.tensor([0.3, -2.0, 0.0, 1.5], dtype=x.dtype))),
}


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_values_match_torch(name, dtype):
    rng = np.random.default_rng(0)
    a = np.concatenate([SPECIAL, rng.standard_normal(36) * 2]).reshape(3, 4, 4)
    x, tx = pair(a, dtype)
    mine, theirs = ACTIVATIONS[name]
    check(mine(x), theirs(tx), **TOL[dtype])


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_gradients_match_torch(name):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 4)) * 2
    a[0, 0, :3] = [0.5, -0.5, 0.0]  # ties with the shrinkages' thresholds and the kink
    x, tx = pair(a, jt.float64, grad=True)
    mine, theirs = ACTIVATIONS[name]
    grads_match(rng, mine(x), theirs(tx), [x], [tx])


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=3), seed=st.integers(0, 2 ** 16),
       lambd=st.sampled_from([0.0, 0.5, 2.0]))
def test_pointwise_activations_on_any_shape(shape, seed, lambd):
    a = np.random.default_rng(seed).standard_normal(shape) * 3
    x, tx = pair(a, jt.float32)
    for mine, theirs in ((F.softsign, TF.softsign), (F.tanhshrink, TF.tanhshrink),
                         (lambda t: F.softshrink(t, lambd), lambda t: TF.softshrink(t, lambd)),
                         (lambda t: F.hardshrink(t, lambd), lambda t: TF.hardshrink(t, lambd))):
        check(mine(x), theirs(tx), **TOL[jt.float32])


def test_integer_inputs_promote_or_raise_as_torch():
    i, ti = pair(np.arange(-3, 3).reshape(2, 3))
    check(F.softsign(i), TF.softsign(ti))
    check(F.tanhshrink(i), TF.tanhshrink(ti))
    for fn in (F.softshrink, F.hardshrink, lambda t: F.glu(t, 0)):
        with pytest.raises(NotImplementedError, match="int64"):
            fn(i)


def test_prelu_weights_shapes_and_errors():
    rng = np.random.default_rng(2)
    for shape, w in (((), [0.2]), ((), 0.2), ((5,), [0.2]), ((2, 3), [0.1, 0.2, 0.3]),
                     ((2, 3, 2, 2), [0.1, -0.2, 0.3]), ((2, 3, 4), 0.4)):
        x, tx = pair(rng.standard_normal(shape), jt.float64, grad=True)
        wt, twt = pair(np.array(w), jt.float64, grad=True)
        out, theirs = F.prelu(x, wt), TF.prelu(tx, twt)
        check(out, theirs, **TOL[jt.float64])
        grads_match(rng, out, theirs, [x, wt], [tx, twt])
    x = jt.randn(2, 3)
    with pytest.raises(RuntimeError, match="parameter numbers = 2 and channel size = 3"):
        F.prelu(x, jt.ones(2))
    with pytest.raises(RuntimeError, match="parameter numbers = 3 and channel size = 1"):
        F.prelu(jt.randn(3), jt.ones(3))
    with pytest.raises(RuntimeError, match="scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(x, jt.ones(1, 3))
    with pytest.raises(RuntimeError, match="Type promoting not supported. Got float32 and "
                                           "float64"):
        F.prelu(x, jt.ones(1, dtype=jt.float64))


def test_prelu_module_parameters_and_training():
    m = nn.PReLU(3, init=0.1, dtype=jt.float64)
    assert repr(m) == repr(torch.nn.PReLU(3)) == "PReLU(num_parameters=3)"
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert m.weight.dtype is jt.float64 and m.weight.tolist() == [0.1] * 3
    x = jt.tensor([[-1.0, 2.0, -3.0]], dtype=jt.float64)
    m(x).sum().backward()
    np.testing.assert_array_equal(m.weight.grad.numpy(), [-1.0, 0.0, -3.0])
    assert nn.PReLU().weight.shape == (1,) and nn.PReLU().weight.tolist() == [0.25]


def test_rrelu_training_draws_a_slope_per_negative_element():
    jt.manual_seed(0)
    a = np.concatenate([-np.linspace(0.5, 3, 400), np.linspace(0.0, 3, 100)])
    x = jt.tensor(a, dtype=jt.float64, requires_grad=True)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = out.detach().numpy()[:400] / a[:400]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.04
    assert abs(slopes.mean() - 0.2) < 0.01
    np.testing.assert_array_equal(out.detach().numpy()[400:], a[400:])
    out.sum().backward()  # the gradient is the slope each element used
    np.testing.assert_allclose(x.grad.numpy()[:400], slopes, rtol=1e-12)
    np.testing.assert_array_equal(x.grad.numpy()[401:], 1.0)
    assert 0.1 <= x.grad.numpy()[400] <= 0.3  # x = 0 draws a slope too (torch's x <= 0)
    jt.manual_seed(0)  # the generator's stream: the same seed, the same slopes
    again = F.rrelu(jt.tensor(a, dtype=jt.float64), 0.1, 0.3, training=True)
    np.testing.assert_array_equal(again.numpy(), out.detach().numpy())


def test_rrelu_in_place_eval_module_and_errors():
    a = np.array([-2.0, -1.0, 0.5, 3.0])
    y = jt.tensor(a)
    assert F.rrelu_(y, 0.2, 0.4, training=True) is y
    assert ((y.numpy()[:2] / a[:2] >= 0.2) & (y.numpy()[:2] / a[:2] <= 0.4)).all()
    y = jt.tensor(a)
    assert F.rrelu(y, inplace=True) is y  # eval: leaky_relu of the mean slope
    check(y, TF.rrelu(torch.tensor(a)))
    m = nn.RReLU(0.1, 0.2)
    assert repr(m) == repr(torch.nn.RReLU(0.1, 0.2))
    assert repr(nn.RReLU(inplace=True)) == repr(torch.nn.RReLU(inplace=True))
    m.eval()
    check(m(jt.tensor(a)), torch.nn.RReLU(0.1, 0.2).eval()(torch.tensor(a)))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(jt.tensor(a), 0.5, 0.1)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(jt.tensor(a), 0.5, 0.1, training=True)


def test_glu_softmin_softmax2d_errors_and_warnings():
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is "
                                           "size 3"):
        F.glu(jt.ones(2, 3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(jt.ones(()))
    with pytest.raises(IndexError, match=r"range of \[-2, 1\], but got 2"):
        F.glu(jt.ones(2, 4), 2)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        out = nn.Softmin()(jt.ones(2, 3))
    check(out, torch.full((2, 3), 1 / 3))  # (dim 1 for a 2-D input)
    a = np.random.default_rng(3).standard_normal((2, 3, 2, 2))
    for shape in ((2, 3, 2, 2), (3, 2, 2)):
        x, tx = pair(a.reshape(-1)[:math.prod(shape)].reshape(shape), jt.float32)
        check(nn.Softmax2d()(x), torch.nn.Softmax2d()(tx), **TOL[jt.float32])
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(jt.ones(2, 3))
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        F.softshrink(jt.ones(2), -0.5)


def test_activation_modules_match_torch_and_their_reprs():
    rng = np.random.default_rng(4)
    x, tx = pair(rng.standard_normal((2, 4, 2)), jt.float32)
    for name, args in (("Softmin", (1,)), ("Softsign", ()), ("Softshrink", ()),
                       ("Softshrink", (0.2,)), ("Hardshrink", ()), ("Hardshrink", (1.5,)),
                       ("Tanhshrink", ()), ("GLU", ()), ("GLU", (1,)), ("Softmax2d", ()),
                       ("RReLU", ())):
        mine, theirs = getattr(nn, name)(*args).eval(), getattr(torch.nn, name)(*args).eval()
        assert repr(mine) == repr(theirs)
        check(mine(x), theirs(tx), **TOL[jt.float32])
    assert repr(nn.Softmin()) == "Softmin(dim=None)"
    assert repr(nn.Softshrink()) == "Softshrink(0.5)"


@needs_cuda
def test_activations_on_cuda():
    a = np.array([[-2.0, -0.3, 0.0, 0.4], [0.6, 1.5, -0.7, np.nan]])
    x = jt.tensor(a, device="cuda")
    for fn in (F.softsign, F.tanhshrink, F.softshrink, F.hardshrink, F.glu,
               lambda t: F.softmin(t, 1),
               lambda t: F.prelu(t, jt.tensor([0.1, -0.2, 1.0, 2.0], dtype=t.dtype,
                                               device=t.device)),
               lambda t: F.rrelu(t, 0.1, 0.3)):
        got = fn(x)
        assert got.device.type == "cuda"
        np.testing.assert_allclose(got.cpu().numpy(), fn(jt.tensor(a)).numpy(), rtol=1e-6,
                                   equal_nan=True)
    out = F.rrelu(x, 0.1, 0.3, training=True).cpu().numpy()
    assert ((out[0, :2] / a[0, :2] >= 0.1) & (out[0, :2] / a[0, :2] <= 0.3)).all()


# -- distances ---------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf])
def test_pdist_matches_torch_values_and_gradients(p):
    rng = np.random.default_rng(5)
    a = np.round(rng.standard_normal((5, 3)) * 2)  # integers: ties at p = inf
    a[3] = a[1]  # a zero distance
    for dtype in (jt.float32, jt.float64):
        x, tx = pair(a, dtype)
        check(F.pdist(x, p), TF.pdist(tx, p), **TOL[dtype])
    x, tx = pair(a, jt.float64, grad=True)
    grads_match(rng, F.pdist(x, p), TF.pdist(tx, p), [x], [tx])


def test_pdist_shapes_and_errors():
    for shape in ((0, 2), (1, 2), (3, 0), (4, 1)):
        for p in (2.0, math.inf):
            check(F.pdist(jt.ones(*shape), p), TF.pdist(torch.ones(*shape), p))
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(jt.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(jt.ones(3, 2), -1.0)
    with pytest.raises(RuntimeError, match="pdist only supports floating-point dtypes"):
        F.pdist(jt.ones(3, 2, dtype=jt.int64))


def test_distance_modules_match_torch():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((2, 3, 4))
    (x1, t1), (x2, t2) = pair(a, jt.float64, grad=True), pair(b, jt.float64, grad=True)
    for mine, theirs in ((nn.PairwiseDistance(), torch.nn.PairwiseDistance()),
                         (nn.PairwiseDistance(1.0, 0.1, True),
                          torch.nn.PairwiseDistance(1.0, 0.1, True)),
                         (nn.CosineSimilarity(), torch.nn.CosineSimilarity()),
                         (nn.CosineSimilarity(0, 1e-3), torch.nn.CosineSimilarity(0, 1e-3))):
        assert repr(mine) == repr(theirs)
        out, expected = mine(x1, x2), theirs(t1, t2)
        check(out, expected, **TOL[jt.float64])
        x1.grad = x2.grad = t1.grad = t2.grad = None
        grads_match(rng, out, expected, [x1, x2], [t1, t2])
    assert nn.PairwiseDistance(3.0).norm == 3.0


@needs_cuda
def test_distances_on_cuda():
    a = np.arange(12.0).reshape(4, 3) % 5
    x = jt.tensor(a, device="cuda")
    for p in (2.0, math.inf):
        np.testing.assert_allclose(F.pdist(x, p).cpu().numpy(), TF.pdist(torch.tensor(a), p),
                                   rtol=1e-6)
    np.testing.assert_allclose(nn.PairwiseDistance()(x[:2], x[2:]).cpu().numpy(),
                               TF.pairwise_distance(torch.tensor(a[:2]), torch.tensor(a[2:])),
                               rtol=1e-6)


# -- dropout -----------------------------------------------------------------------------------
CHANNEL_WISE = [(F.dropout1d, (4, 50, 3)), (F.dropout1d, (50, 3)), (F.dropout2d, (4, 50, 2, 2)),
                (F.dropout3d, (4, 50, 1, 2, 2)), (F.dropout3d, (50, 1, 2, 2))]


@pytest.mark.parametrize("fn,shape", CHANNEL_WISE,
                         ids=[f"{f.__name__}-{len(s)}d" for f, s in CHANNEL_WISE])
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(fn, shape):
    jt.manual_seed(1)
    p = 0.3
    x = jt.ones(*shape, dtype=jt.float64, requires_grad=True)
    out = fn(x, p)
    got = out.detach().numpy()
    assert got.shape == shape and out.dtype is jt.float64
    batched = len(shape) == {F.dropout1d: 3, F.dropout2d: 4, F.dropout3d: 5}[fn]
    channels = got.reshape(shape[:2] + (-1,)) if batched else got.reshape(1, shape[0], -1)
    first = channels[..., :1]
    assert (channels == first).all()  # one draw per channel
    assert set(np.unique(first)) <= {0.0, 1 / (1 - p)}
    dropped = (first == 0).mean()
    assert 0.1 < dropped < 0.5, dropped
    out.backward(jt.ones(*shape, dtype=jt.float64))
    np.testing.assert_array_equal(x.grad.numpy(), got)  # mask * scale
    jt.manual_seed(1)
    np.testing.assert_array_equal(fn(jt.ones(*shape, dtype=jt.float64), p).numpy(), got)


def test_channel_dropout_values_scale_the_input():
    jt.manual_seed(2)
    a = np.random.default_rng(7).standard_normal((3, 8, 5)).astype(np.float32)
    out = F.dropout1d(jt.tensor(a), 0.25).numpy()
    kept = (out != 0).all(-1)
    assert kept.any() and not kept.all()
    np.testing.assert_allclose(out[kept], a[kept] / np.float32(0.75), rtol=1e-6)
    assert (out[~kept] == 0).all()


@pytest.mark.parametrize("fn", [F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
                                F.feature_alpha_dropout], ids=lambda f: f.__name__)
def test_dropout_eval_p0_p1_empty_and_in_place(fn):
    shape = {F.dropout1d: (2, 3, 4), F.dropout2d: (2, 3, 2, 2)}.get(fn, (2, 3, 1, 2, 2))
    x = jt.randn(*shape)
    assert fn(x, 0.5, training=False) is x
    assert fn(x, 0.0, training=True) is x
    empty = jt.ones(0, *shape[1:])
    assert fn(empty, 0.5, training=True) is empty
    leaf = jt.randn(*shape, dtype=jt.float64, requires_grad=True)
    out = fn(leaf, 1.0, training=True)  # torch multiplies by 0 (alpha dropout too)
    assert (out.detach().numpy() == 0).all() and tuple(out.shape) == shape
    out.sum().backward()
    assert (leaf.grad.numpy() == 0).all()
    y = jt.ones(*shape)
    result = fn(y, 0.5, training=True, inplace=True)
    assert result is y and set(np.unique(y.numpy())) != {1.0}
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        fn(x, 1.5)


def test_alpha_dropout_keeps_zero_mean_unit_variance_and_its_affine_map():
    jt.manual_seed(3)
    p, alpha = 0.2, 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    data = np.random.default_rng(8).standard_normal(20000)
    x = jt.tensor(data, dtype=jt.float64, requires_grad=True)
    out = F.alpha_dropout(x, p, training=True)
    got = out.detach().numpy()
    dropped = np.isclose(got, -alpha * a * (1 - p), rtol=0, atol=1e-12)
    assert abs(dropped.mean() - p) < 0.02
    np.testing.assert_allclose(got[~dropped], a * data[~dropped] + alpha * a * p, rtol=1e-12)
    assert abs(got.mean()) < 0.03 and abs(got.std() - 1) < 0.03
    out.backward(jt.ones(20000, dtype=jt.float64))
    np.testing.assert_allclose(x.grad.numpy(), np.where(dropped, 0.0, a), rtol=1e-12)
    # torch's own draws keep the same statistics
    theirs = TF.alpha_dropout(torch.tensor(data), p, training=True).numpy()
    assert abs(theirs.mean() - got.mean()) < 0.05 and abs(theirs.std() - got.std()) < 0.05


def test_feature_alpha_dropout_masks_whole_channels():
    jt.manual_seed(4)
    out = F.feature_alpha_dropout(jt.zeros(3, 40, 2, 2), 0.5, training=True).numpy()
    channels = out.reshape(3, 40, -1)
    assert (channels == channels[..., :1]).all()
    assert len(np.unique(channels)) == 2
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(jt.ones(3), training=True)
    assert F.alpha_dropout(jt.ones(3)).tolist() == [1.0] * 3  # training=False by default


def _torch_warnings(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("shape", [(30,), (30, 2), (30, 2, 2), (30, 3, 2, 2), (30, 1, 3, 2, 2)])
def test_dropout2d_and_3d_warn_and_read_ranks_as_torch(shape):
    for mine, theirs in ((F.dropout2d, TF.dropout2d), (F.dropout3d, TF.dropout3d)):
        expected = _torch_warnings(theirs, torch.ones(shape), 0.5, False)
        assert _torch_warnings(mine, jt.ones(*shape), 0.5, False) == expected
        assert len(expected) == (mine is F.dropout2d and len(shape) == 3) + \
            (len(shape) not in ((3, 4) if mine is F.dropout2d else (4, 5)))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs(torch.ones(shape), 0.5, True)
        except RuntimeError as e:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(RuntimeError, match=str(e)):
                    mine(jt.ones(*shape), 0.5, True)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = mine(jt.ones(*shape), 0.5, True).numpy()
        # one draw per (N, C), or per C (dim 0) where the form reads the input as unbatched
        masked = 1 if mine is F.dropout3d and len(shape) != 5 else 2
        flat = out.reshape(shape[:masked] + (-1,))
        assert (flat == flat[..., :1]).all() and len(np.unique(out)) == 2


def test_dropout1d_rejects_other_ranks():
    for shape in ((3,), (2, 2, 2, 2)):
        with pytest.raises(RuntimeError, match=f"Expected 2D or 3D input, but received a "
                                               f"{len(shape)}D input"):
            F.dropout1d(jt.ones(*shape))


def test_dropout_modules_train_eval_and_reprs():
    for name in ("Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        mine, theirs = getattr(nn, name)(0.2), getattr(torch.nn, name)(0.2)
        assert repr(mine) == repr(theirs)
        assert repr(getattr(nn, name)(inplace=True)) == repr(getattr(torch.nn, name)(
            inplace=True))
        with pytest.raises(ValueError, match="between 0 and 1, but got 2"):
            getattr(nn, name)(2)
        x = jt.ones(2, 30, 2, 2, 2) if name == "Dropout3d" else jt.ones(2, 30, 4) \
            if name == "Dropout1d" else jt.ones(2, 30, 2, 2)
        out = mine(x)
        assert out is not x and len(np.unique(out.numpy())) == 2
        mine.eval()
        assert mine(x) is x
    y = jt.ones(2, 30, 2, 2)  # torch's alpha dropout modules ignore inplace
    assert nn.AlphaDropout(0.5, inplace=True)(y) is not y and (y.numpy() == 1).all()
    y = jt.ones(2, 30, 2, 2)
    assert nn.Dropout2d(0.5, inplace=True)(y) is y


@needs_cuda
def test_dropout_on_cuda():
    x = jt.ones(2, 8, 3, device="cuda", requires_grad=True)
    out = F.dropout1d(x, 0.5)
    got = out.detach().cpu().numpy()
    assert out.device.type == "cuda" and (got == got[..., :1]).all()
    assert set(np.unique(got)) <= {0.0, 2.0}
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), got)
    alpha = F.feature_alpha_dropout(jt.zeros(2, 8, 2, device="cuda"), 0.5, True).cpu().numpy()
    assert (alpha == alpha[..., :1]).all()


# -- losses ------------------------------------------------------------------------------------
def _cases(rng):
    """name: (jitensor fn, torch fn, args as NumPy arrays, indices of differentiable args,
    keyword arguments)."""
    x, y, z = rng.standard_normal((3, 4, 5)) * 1.5
    signs = rng.choice([-1.0, 1.0], size=4)
    labels = rng.integers(0, 5, size=4)
    multilabel = np.array([[3, 0, -1, 1, 2], [4, 4, 1, -1, -1], [-1, 2, 0, 0, 0],
                           [0, 1, 2, 3, 4]])
    counts = rng.poisson(2.0, size=(4, 5)).astype(float)
    var = rng.random((4, 5)) + 0.01
    var[0, 0] = 1e-8  # below eps: clamped
    return {
        "margin_ranking": ("margin_ranking_loss", (x[:, 0], y[:, 0], signs), (0, 1),
                           dict(margin=0.3)),
        "margin_ranking_broadcast": ("margin_ranking_loss", (x, y, signs[:1, None] * x[:1] /
                                                             abs(x[:1])), (0, 1), {}),
        "hinge_embedding": ("hinge_embedding_loss", (abs(x), np.sign(y)), (0,), {}),
        "hinge_embedding_margin": ("hinge_embedding_loss", (x, np.sign(y[0])), (0,),
                                   dict(margin=0.5)),
        "cosine_embedding": ("cosine_embedding_loss", (x, y, signs), (0, 1), dict(margin=0.2)),
        "cosine_embedding_0d": ("cosine_embedding_loss", (x[0], y[0], np.array(-1.0)), (0, 1),
                                dict(margin=-0.5)),
        "cosine_embedding_other": ("cosine_embedding_loss",
                                   (x, y[:1], np.array([1, 0, -1, 2])), (0, 1), {}),
        "soft_margin": ("soft_margin_loss", (x, np.sign(y)), (0,), {}),
        "soft_margin_broadcast": ("soft_margin_loss", (x, np.sign(y[0])), (0,), {}),
        "multilabel_soft_margin": ("multilabel_soft_margin_loss", (x, (y > 0) * 1.0), (0,), {}),
        "multilabel_soft_margin_w": ("multilabel_soft_margin_loss",
                                     (x, (y > 0) * 1.0, abs(z[0])), (0,), {}),
        "multilabel_soft_margin_1d": ("multilabel_soft_margin_loss", (x[0], (y[0] > 0) * 1.0),
                                      (0,), {}),
        "multi_margin": ("multi_margin_loss", (x, labels), (0,), {}),
        "multi_margin_p2": ("multi_margin_loss", (x, labels), (0,), dict(p=2, margin=0.7)),
        "multi_margin_w": ("multi_margin_loss", (x, labels), (0,),
                           dict(weight=abs(z[0]), margin=-0.2)),
        "multi_margin_1d": ("multi_margin_loss", (x[0], labels[:1]), (0,), {}),
        "multi_margin_0d_target": ("multi_margin_loss", (x[0], labels[0]), (0,), {}),
        "multi_margin_0d": ("multi_margin_loss", (np.array(0.3), np.array(0)), (0,), {}),
        "multilabel_margin": ("multilabel_margin_loss", (x, multilabel), (0,), {}),
        "multilabel_margin_1d": ("multilabel_margin_loss", (x[0], multilabel[1]), (0,), {}),
        "multilabel_margin_0d": ("multilabel_margin_loss", (np.array(0.3), np.array([0])), (0,),
                                 {}),
        "triplet": ("triplet_margin_loss", (x, y, z), (0, 1, 2), {}),
        "triplet_swap": ("triplet_margin_loss", (x, y, z), (0, 1, 2),
                         dict(margin=2.0, p=1, eps=1e-3, swap=True)),
        "triplet_1d": ("triplet_margin_loss", (x[0], y[0], z[0]), (0, 1, 2), dict(p=3)),
        "triplet_distance": ("triplet_margin_with_distance_loss", (x, y, z), (0, 1, 2), {}),
        "triplet_distance_swap": ("triplet_margin_with_distance_loss", (x, y, z), (0, 1, 2),
                                  dict(swap=True, margin=3.0)),
        "poisson": ("poisson_nll_loss", (x, counts), (0,), {}),
        "poisson_full": ("poisson_nll_loss", (x, counts), (0,), dict(full=True)),
        "poisson_rate": ("poisson_nll_loss", (abs(x), counts), (0,),
                         dict(log_input=False, full=True, eps=1e-3)),
        "poisson_broadcast": ("poisson_nll_loss", (x[0], counts), (0,), {}),
        "gaussian": ("gaussian_nll_loss", (x, y, var), (0, 1, 2), {}),
        "gaussian_full": ("gaussian_nll_loss", (x, y, var), (0, 1, 2), dict(full=True, eps=0.1)),
        "gaussian_row": ("gaussian_nll_loss", (x, y, var[:, 0]), (0, 1, 2), {}),
        "gaussian_ones_dim": ("gaussian_nll_loss", (x, y, var[:1]), (0, 1, 2), {}),
        "gaussian_target_broadcast": ("gaussian_nll_loss", (x, y[0], var), (0, 1, 2), {}),
    }


CASES = sorted(_cases(np.random.default_rng(0)))


def _distance(mine):
    """A custom distance function for triplet_margin_with_distance_loss."""
    lib = F if mine else TF
    return lambda a, b: 1.0 - lib.cosine_similarity(a, b, dim=-1)


def _call(name, case, args, reduction, mine):
    fn_name, _, _, kwargs = case
    kwargs = dict(kwargs)
    if "weight" in kwargs:
        w = kwargs["weight"]
        kwargs["weight"] = jt.tensor(w, dtype=args[0].dtype) if mine else \
            torch.tensor(w, dtype=args[0].dtype)
    if name.startswith("multilabel_soft_margin_w"):
        *args, w = args
        kwargs["weight"] = w
    if name == "triplet_distance_swap":
        kwargs["distance_function"] = _distance(mine)
    fn = getattr(F if mine else TF, fn_name)
    return fn(*args, reduction=reduction, **kwargs)


def _args(case, dtype, grad):
    out = []
    for k, a in enumerate(case[1]):
        a = np.asarray(a)
        if a.dtype.kind == "f":
            out.append(pair(a, dtype, grad=grad and k in case[2]))
        else:
            out.append(pair(a.astype(np.int64)))
    return [m for m, _ in out], [t for _, t in out]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", CASES)
def test_loss_values_dtypes_and_shapes_match_torch(name, reduction):
    case = _cases(np.random.default_rng(0))[name]
    for dtype in (jt.float32, jt.float64):
        mine, theirs = _args(case, dtype, grad=False)
        check(_call(name, case, mine, reduction, True), _call(name, case, theirs, reduction,
                                                              False), **TOL[dtype])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", CASES)
def test_loss_gradients_match_torch(name, reduction):
    rng = np.random.default_rng(9)
    case = _cases(np.random.default_rng(0))[name]
    mine, theirs = _args(case, jt.float64, grad=True)
    out = _call(name, case, mine, reduction, True)
    expected = _call(name, case, theirs, reduction, False)
    pick = list(case[2])
    grads_match(rng, out, expected, [mine[k] for k in pick], [theirs[k] for k in pick])


def test_margin_losses_count_ties_and_repeats_as_torch():
    # multilabel: a class listed twice counts twice, values after the first -1 are ignored
    a = np.array([[0.1, 0.9, 0.9, -0.2], [1.0, 1.0, 1.0, 1.0]])
    t = np.array([[1, 1, -1, 3], [0, 2, -1, -1]])
    (x, tx), (y, ty) = pair(a, jt.float64, grad=True), pair(t)
    out, theirs = F.multilabel_margin_loss(x, y, reduction="none"), \
        TF.multilabel_margin_loss(tx, ty, reduction="none")
    check(out, theirs, **TOL[jt.float64])
    grads_match(np.random.default_rng(10), out, theirs, [x], [tx])
    # multi_margin: a margin term of exactly 0 counts nothing and passes no gradient
    (x, tx), (y, ty) = pair([[1.0, 0.0, 2.0]], jt.float64, grad=True), pair([0])
    out, theirs = F.multi_margin_loss(x, y), TF.multi_margin_loss(tx, ty)
    check(out, theirs)
    out.backward()
    theirs.backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_loss_empty_batches():
    # torch's margin kernels leave the output uninitialised for 'mean' (and multilabel's 'sum')
    # of an empty batch; here 'mean' is NaN (the mean of nothing, as mse_loss's), 'sum' 0
    for fn, target in ((F.multi_margin_loss, jt.zeros(0, dtype=jt.int64)),
                       (F.multilabel_margin_loss, jt.zeros(0, 3, dtype=jt.int64))):
        check(fn(jt.ones(0, 3), target, reduction="none"), torch.ones(0))
        check(fn(jt.ones(0, 3), target, reduction="sum"), torch.tensor(0.0))
        check(fn(jt.ones(0, 3), target), torch.tensor(math.nan))


LOSS_ERRORS = [  # (call, exception, message fragment)
    (lambda: F.margin_ranking_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(3)), RuntimeError,
     "All input tensors should have same dimension"),
    (lambda: F.margin_ranking_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(4, 3)), RuntimeError,
     "must match the size"),
    (lambda: F.cosine_embedding_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(2, 1)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: F.cosine_embedding_loss(jt.ones(2, 3), jt.ones(2, 3), jt.tensor(1.0)),
     RuntimeError, r"0D target tensor expects 1D input tensors, but found inputs with sizes "
                   r"\[2, 3\] and \[2, 3\]"),
    (lambda: F.cosine_embedding_loss(jt.ones(3), jt.ones(3), jt.ones(3)), RuntimeError,
     "1D target tensor expects 2D input tensors"),
    (lambda: F.soft_margin_loss(jt.ones(2, 3), jt.ones(2, 2, 3)), RuntimeError,
     r"output with shape \[2, 3\] doesn't match the broadcast shape \[2, 2, 3\]"),
    (lambda: F.soft_margin_loss(jt.ones(2, 3), jt.ones(4)), RuntimeError, "must match the size"),
    (lambda: F.soft_margin_loss(jt.ones(2, dtype=jt.int64), jt.ones(2)), RuntimeError,
     "can't be cast to the desired output type int64"),
    (lambda: F.multilabel_soft_margin_loss(jt.ones(()), jt.ones(())), IndexError,
     "Dimension specified as -1 but tensor has no dimensions"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([0, 3])), RuntimeError,
     "target out of range"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([-1, 0])), RuntimeError,
     "target out of range"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([0])), RuntimeError,
     r"Expected target size \[2\], but got \[1\]. Input has shape \[2, 3\]"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([[0], [1]])), RuntimeError,
     r"Expected target size \[2\], but got \[2, 1\]"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([0.0, 1.0])), RuntimeError,
     "expected scalar type Long but found float32"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([0, 1], dtype=jt.int32)),
     RuntimeError, "expected scalar type Long but found int32"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([0, 1]), p=3), ValueError,
     "only p == 1 and p == 2 supported"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([0, 1]), weight=jt.ones(2)),
     RuntimeError, r"inconsistent weight size, expected 3 but got \[2\]"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([0, 1]), weight=jt.ones(1, 3)),
     ValueError, "weight must be one-dimensional"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3), jt.tensor([0, 1]),
                                 weight=jt.ones(3, dtype=jt.float64)), RuntimeError,
     "expected scalar type float32 but found float64"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3, 1), jt.tensor([0, 1])), RuntimeError,
     r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
     r"\[2, 3, 1\]"),
    (lambda: F.multi_margin_loss(jt.ones(2, 0), jt.tensor([0, 1])), RuntimeError,
     "Expected non-empty vector or matrix"),
    (lambda: F.multi_margin_loss(jt.ones(2, 3, dtype=jt.int64), jt.tensor([0, 1])),
     NotImplementedError, "int64"),
    (lambda: F.multilabel_margin_loss(jt.ones(2, 3), jt.tensor([[0, 3, -1], [1, -1, 0]])),
     RuntimeError, "argument #2 'target' is out of range"),
    (lambda: F.multilabel_margin_loss(jt.ones(2, 3), jt.tensor([[0, -2, -1], [1, -1, 0]])),
     RuntimeError, "argument #2 'target' is out of range"),
    (lambda: F.multilabel_margin_loss(jt.ones(2, 3), jt.tensor([[0, 2], [1, -1]])),
     RuntimeError, r"inconsistent target size: \[2, 2\] for input of size: \[2, 3\]"),
    (lambda: F.multilabel_margin_loss(jt.ones(3), jt.tensor([0, 2])), RuntimeError,
     "inconsistent target size"),
    (lambda: F.multilabel_margin_loss(jt.ones(2, 3), jt.ones(2, 3)), RuntimeError,
     "expected scalar type Long but found float32"),
    (lambda: F.triplet_margin_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(2, 3), margin=0),
     ValueError, "margin must be greater than 0, got 0"),
    (lambda: F.triplet_margin_loss(jt.ones(2, 3), jt.ones(3), jt.ones(2, 3)), RuntimeError,
     "anchor 2D, positive 1D, and negative 2D inputs"),
    (lambda: F.triplet_margin_with_distance_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(3)),
     RuntimeError, "anchor 2D, positive 2D, and negative 1D inputs"),
    (lambda: F.triplet_margin_with_distance_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(2, 3),
                                                 margin=-1), ValueError,
     "margin must be greater than 0, got -1"),
    (lambda: F.gaussian_nll_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(1, 1)), ValueError,
     "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(3)), ValueError,
     "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(jt.ones(2, 3), jt.ones(2, 3), jt.ones(2, 3, 1)), ValueError,
     "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(jt.ones(2, 3), jt.ones(2, 3), -1.0), ValueError,
     "var has negative entry/entries"),
    (lambda: F.gaussian_nll_loss(jt.ones(2, 3), jt.ones(2, 3), -jt.ones(2, 3)), ValueError,
     "var has negative entry/entries"),
    (lambda: nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2 supported"),
    (lambda: nn.MultiMarginLoss(weight=jt.ones(2, 2)), ValueError,
     "MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead"),
    (lambda: nn.TripletMarginLoss(margin=0), ValueError,
     "TripletMarginLoss: expected margin to be greater than 0, got 0 instead"),
    (lambda: nn.TripletMarginWithDistanceLoss(margin=0), ValueError,
     "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got 0 instead"),
]


@pytest.mark.parametrize("k", range(len(LOSS_ERRORS)))
def test_loss_errors(k):
    call, exception, message = LOSS_ERRORS[k]
    with pytest.raises(exception, match=message):
        call()


@pytest.mark.parametrize("fn_name", sorted({case[0] for case in
                                            _cases(np.random.default_rng(0)).values()}))
def test_every_loss_rejects_a_bad_reduction(fn_name):
    name = next(n for n in CASES if _cases(np.random.default_rng(0))[n][0] == fn_name)
    case = _cases(np.random.default_rng(0))[name]
    mine, _ = _args(case, jt.float32, grad=False)
    with pytest.raises(ValueError, match="'bad' is not a valid value for reduction"):
        _call(name, case, mine, "bad", True)


@pytest.mark.parametrize("legacy,reduction", [(dict(size_average=False), "sum"),
                                              (dict(reduce=False), "none"),
                                              (dict(size_average=True), "mean")])
def test_legacy_size_average_and_reduce(legacy, reduction):
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal((2, 4, 3))
    labels = np.array([0, 2, 1, 1])
    for mine, theirs in ((F.margin_ranking_loss, TF.margin_ranking_loss),
                         (F.cosine_embedding_loss, TF.cosine_embedding_loss)):
        args = [pair(x[:, :1] if mine is F.margin_ranking_loss else x, jt.float64),
                pair(y[:, :1] if mine is F.margin_ranking_loss else y, jt.float64),
                pair(np.sign(y[:, :1] if mine is F.margin_ranking_loss else y[:, 0]),
                     jt.float64)]
        with pytest.warns(UserWarning, match=f"please use reduction='{reduction}'"):
            got = mine(*[a for a, _ in args], **legacy)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(got, theirs(*[b for _, b in args], **legacy), **TOL[jt.float64])
    (a, ta), (t, tt) = pair(x, jt.float64), pair(labels)
    for mine, theirs in ((nn.MultiMarginLoss, torch.nn.MultiMarginLoss),
                         (nn.SoftMarginLoss, torch.nn.SoftMarginLoss)):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            module = mine(**legacy)
        assert module.reduction == reduction
        target, ttarget = (t, tt) if mine is nn.MultiMarginLoss else pair(np.sign(y),
                                                                          jt.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(module(a, target), theirs(**legacy)(ta, ttarget), **TOL[jt.float64])


LOSS_MODULES = [
    ("MarginRankingLoss", dict(margin=0.5), "margin_ranking"),
    ("HingeEmbeddingLoss", dict(margin=2.0), "hinge_embedding"),
    ("CosineEmbeddingLoss", dict(margin=0.1), "cosine_embedding"),
    ("SoftMarginLoss", {}, "soft_margin"),
    ("MultiLabelSoftMarginLoss", {}, "multilabel_soft_margin"),
    ("MultiMarginLoss", dict(p=2, margin=0.5), "multi_margin"),
    ("MultiLabelMarginLoss", {}, "multilabel_margin"),
    ("TripletMarginLoss", dict(margin=0.5, p=1.0, swap=True), "triplet"),
    ("TripletMarginWithDistanceLoss", dict(swap=True), "triplet"),
    ("PoissonNLLLoss", dict(log_input=False, full=True), "poisson_rate"),
    ("GaussianNLLLoss", dict(full=True, eps=1e-3), "gaussian"),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs,case", LOSS_MODULES, ids=[m[0] for m in LOSS_MODULES])
def test_loss_modules_match_torch(name, kwargs, case, reduction):
    mine = getattr(nn, name)(reduction=reduction, **kwargs)
    theirs = getattr(torch.nn, name)(reduction=reduction, **kwargs)
    assert repr(mine) == repr(theirs)
    assert mine.reduction == reduction
    args, targs = _args(_cases(np.random.default_rng(0))[case], jt.float64, grad=False)
    check(mine(*args), theirs(*targs), **TOL[jt.float64])


def test_loss_module_weights_are_buffers():
    w = jt.tensor([1.0, 2.0, 0.5])
    for cls in (nn.MultiMarginLoss, nn.MultiLabelSoftMarginLoss):
        m = cls(weight=w)
        assert list(m.state_dict()) == ["weight"] and m.weight is w
        assert list(cls().state_dict()) == []
    x, tx = pair(np.random.default_rng(12).standard_normal((2, 3)), jt.float32)
    check(nn.MultiMarginLoss(weight=w)(x, jt.tensor([2, 0])),
          torch.nn.MultiMarginLoss(weight=torch.tensor([1.0, 2.0, 0.5]))(tx,
                                                                          torch.tensor([2, 0])))
    custom = nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: (a - b).abs().sum(-1))
    assert list(custom.children()) == [] and repr(custom) == "TripletMarginWithDistanceLoss()"


def test_gaussian_nll_loss_var_forms_and_clamp_gradient():
    rng = np.random.default_rng(13)
    x, y = rng.standard_normal((2, 3, 4))
    (a, ta), (b, tb) = pair(x, jt.float64), pair(y, jt.float64)
    check(F.gaussian_nll_loss(a, b, 0.5), TF.gaussian_nll_loss(ta, tb, 0.5), **TOL[jt.float64])
    check(F.gaussian_nll_loss(a, b, 1), TF.gaussian_nll_loss(ta, tb, 1.0), **TOL[jt.float64])
    v = np.array([1e-9, 0.5, 2.0])  # the first is clamped to eps: its gradient is taken there
    (vv, tv) = pair(v, jt.float64, grad=True)
    out = F.gaussian_nll_loss(a, b, vv)
    theirs = TF.gaussian_nll_loss(ta, tb, tv)
    check(out, theirs, **TOL[jt.float64])
    out.backward()
    theirs.backward()
    np.testing.assert_allclose(vv.grad.numpy(), tv.grad.numpy(), rtol=1e-10)


@needs_cuda
def test_losses_on_cuda():
    rng = np.random.default_rng(14)
    x, y, z = rng.standard_normal((3, 3, 4))
    labels = np.array([0, 3, 1])
    multilabel = np.array([[1, -1, 0, 0], [3, 2, -1, 0], [0, 1, 2, 3]])
    calls = [
        ("margin_ranking_loss", (x, y, np.sign(z))),
        ("hinge_embedding_loss", (x, np.sign(y))),
        ("cosine_embedding_loss", (x, y, np.array([1.0, -1.0, 1.0]))),
        ("soft_margin_loss", (x, np.sign(y))),
        ("multilabel_soft_margin_loss", (x, (y > 0) * 1.0)),
        ("multi_margin_loss", (x, labels)),
        ("multilabel_margin_loss", (x, multilabel)),
        ("triplet_margin_loss", (x, y, z)),
        ("poisson_nll_loss", (x, abs(y))),
        ("gaussian_nll_loss", (x, y, abs(z))),
    ]
    for fn_name, args in calls:
        mine = [jt.tensor(a, device="cuda") for a in args]
        got = getattr(F, fn_name)(*mine, reduction="none")
        assert got.device.type == "cuda"
        expected = getattr(TF, fn_name)(*[torch.tensor(a) for a in args], reduction="none")
        np.testing.assert_allclose(got.cpu().numpy(), expected.numpy(), rtol=1e-9, atol=1e-12)
    leaf = jt.tensor(x, device="cuda", requires_grad=True)
    F.multi_margin_loss(leaf, jt.tensor(labels, device="cuda")).backward()
    tx = torch.tensor(x, requires_grad=True)
    TF.multi_margin_loss(tx, torch.tensor(labels)).backward()
    np.testing.assert_allclose(leaf.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-9)


def test_sync_batch_norm_container_and_nllloss2d_as_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((4, 3, 5)).astype(np.float32)
    mine, theirs = jt.nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    np.testing.assert_allclose(mine(jt.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mine.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-6)
    assert repr(mine) == repr(theirs) and repr(jt.nn.BatchNorm2d(2)) == repr(
        torch.nn.BatchNorm2d(2))
    with pytest.raises(ValueError, match="expected at least 2D input"):
        mine(jt.zeros(3))
    net = jt.nn.Sequential(jt.nn.Linear(3, 3), jt.nn.BatchNorm1d(3))
    synced = jt.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(synced[1]) is jt.nn.SyncBatchNorm and synced[1].weight is net[1].weight
    assert list(synced.state_dict()) == list(net.state_dict())
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        box = jt.nn.Container(a=jt.nn.Linear(1, 1))
    assert list(dict(box.named_children())) == ["a"]
    with pytest.warns(FutureWarning, match="NLLLoss2d` has been deprecated"):
        loss = jt.nn.NLLLoss2d()
    logits = np.random.default_rng(4).standard_normal((2, 3, 4, 4)).astype(np.float32)
    target = np.random.default_rng(5).integers(0, 3, (2, 4, 4))
    with pytest.warns(FutureWarning):
        want = torch.nn.NLLLoss2d()(torch.tensor(logits), torch.tensor(target))
    np.testing.assert_allclose(loss(jt.tensor(logits), jt.tensor(target)).item(), want.item(),
                               rtol=1e-6)


@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_log_softmax_matches_torch(batched):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    mine = jt.nn.AdaptiveLogSoftmaxWithLoss(16, 30, [5, 12], div_value=2.0, head_bias=True)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 30, [5, 12], div_value=2.0, head_bias=True)
    mine = mine.double()
    theirs = theirs.double()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    with torch.no_grad():
        for p, q in zip(mine.parameters(), theirs.parameters(), strict=True):
            values = rng.standard_normal(tuple(p.shape))
            with jt.no_grad():
                p.copy_(jt.tensor(values))
            q.copy_(torch.tensor(values))
    x = rng.standard_normal((9, 16) if batched else (16,))
    target = rng.integers(0, 30, 9) if batched else np.int64(rng.integers(0, 30))
    xm, xt = jt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = mine(xm, jt.tensor(target)), theirs(xt, torch.tensor(target))
    np.testing.assert_allclose(got.output.detach().numpy(), want.output.detach().numpy(),
                               rtol=1e-10)
    np.testing.assert_allclose(got.loss.item(), want.loss.item(), rtol=1e-10)
    got.loss.backward()
    want.loss.backward()
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    for p, q in zip(mine.parameters(), theirs.parameters(), strict=True):
        if q.grad is None:  # a cluster no target falls in
            assert p.grad is None
            continue
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12)
    if batched:
        np.testing.assert_allclose(mine.log_prob(xm).detach().numpy(),
                                   theirs.log_prob(xt).detach().numpy(), rtol=1e-10)
        assert mine.predict(xm).tolist() == theirs.predict(xt).tolist()
    else:  # (torch 2.13's log_prob and predict fail on one unbatched example)
        np.testing.assert_array_equal(mine.log_prob(xm).detach().numpy(),
                                      mine.log_prob(xm[None])[0].detach().numpy())
        assert mine.predict(xm).item() == mine.predict(xm[None])[0].item()
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        jt.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 29\]"):
        mine(jt.tensor(rng.standard_normal((2, 16))), jt.tensor([1, 30]))


def test_deepcopy_of_a_parameter_drops_its_grad_as_torch():
    torch = pytest.importorskip("torch")
    import copy
    for lib in (jt, torch):
        layer = lib.nn.Linear(2, 2)
        layer(lib.ones(1, 2)).sum().backward()
        clone = copy.deepcopy(layer)
        assert type(clone.weight) is lib.nn.Parameter and clone.weight.grad is None
        assert clone.weight is not layer.weight and clone.weight.requires_grad
        with lib.no_grad():
            clone.weight.add_(1)
        assert not lib.equal(clone.weight, layer.weight)
