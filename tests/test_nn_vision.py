"""torch.nn's vision pieces (group, instance and local response norms, resampling, padding,
transposed convolutions, Unflatten: nn/functional.py and nn/modules/) against torch:
values, dtypes, shapes, gradients in float64 (one random upstream gradient), which input
positions interpolate picks (exactly, in float32 and float64), running statistics, parameter
and buffer names, initialisation, reprs and errors; a tiny case of each group on CUDA."""
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
few = settings(max_examples=20, deadline=None)


def both(arrays, grad=True, dtype="float64"):
    """The arrays as (jitensor leaves, torch leaves)."""
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    return ([jt.tensor(a, requires_grad=grad) for a in arrays],
            [torch.tensor(a, requires_grad=grad) for a in arrays])


def check(mine_fn, theirs_fn, arrays, seed=0, rtol=1e-10, atol=1e-12, grad=True,
          dtype="float64"):
    """Values, dtype and shape of mine_fn(*jt tensors) against theirs_fn(*torch tensors), then
    (grad) the gradients of every input."""
    mine, theirs = both(arrays, grad, dtype)
    out, expected = mine_fn(*mine), theirs_fn(*theirs)
    assert tuple(out.shape) == tuple(expected.shape)
    assert out.dtype.name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=rtol,
                               atol=atol)
    if grad:
        assert_grads_match_torch(torch, np.random.default_rng(seed), out, expected, mine,
                                 theirs, rtol, atol)
    return out


def same_error(mine, theirs, match=None):
    """mine() raises the exception type theirs() raises (torch's), with `match` in it."""
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value), match=match):
        mine()


# -- interpolate -------------------------------------------------------------------------------
@st.composite
def resamplings(draw):
    mode = draw(st.sampled_from(["nearest", "nearest-exact", "linear", "bilinear", "bicubic",
                                 "trilinear", "area"]))
    dims = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(
        mode, draw(st.integers(1, 3)))
    spatial = tuple(draw(st.integers(1, 5 if dims < 3 else 3)) for _ in range(dims))
    kw = {}
    if draw(st.booleans()):
        kw["size"] = tuple(draw(st.integers(1, 7 if dims < 3 else 4)) for _ in range(dims))
    else:
        scales = [draw(st.sampled_from([0.5, 0.7, 1.0, 1.3, 1.5, 2.0, 2.5, 3.0, 1 / 3]))
                  for _ in range(dims)]
        if any(int(n * s) < 1 for n, s in zip(spatial, scales, strict=False)):
            scales = [max(s, 1.0) for s in scales]
        kw["scale_factor"] = tuple(scales) if draw(st.booleans()) or dims == 1 else scales[0]
        if not isinstance(kw["scale_factor"], tuple):
            kw["scale_factor"] = max(kw["scale_factor"], 1.0)
        kw["recompute_scale_factor"] = draw(st.sampled_from([None, False, True]))
    if mode not in ("nearest", "nearest-exact", "area"):
        kw["align_corners"] = draw(st.booleans())
    return mode, (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + spatial, kw, \
        draw(st.integers(0, 2 ** 32 - 1))


@few
@given(resamplings())
def test_interpolate_matches_torch(case):
    """Every mode, size or scale factor (recomputed or not) and align_corners: values and
    gradients in float64; float32 values too."""
    mode, shape, kw, seed = case
    x = np.random.default_rng(seed).standard_normal(shape)
    # torch's nearest backward passes the gradient straight through a dim whose output has the
    # input's size, even where its forward picked other positions (scale_factor 1.3 on 2
    # elements: [x0, x0] forward, [g0, g1] back); jitensor's is the derivative of its forward
    sizes = TF.interpolate(torch.tensor(x), mode=mode, **kw).shape[2:]
    same = mode.startswith("nearest") and any(
        o == i for o, i in zip(sizes, shape[2:], strict=True))
    check(lambda t: F.interpolate(t, mode=mode, **kw),
          lambda t: TF.interpolate(t, mode=mode, **kw), [x], seed, grad=not same)
    check(lambda t: F.interpolate(t, mode=mode, **kw),
          lambda t: TF.interpolate(t, mode=mode, **kw), [x], seed, rtol=1e-5, atol=1e-5,
          grad=False, dtype="float32")


@few
@given(st.sampled_from(["nearest", "nearest-exact"]), st.integers(1, 40), st.integers(1, 90),
       st.sampled_from([None, 0.3, 0.7, 1.1, 1.7, 2.0, 2.9, 3.3, 7.0]),
       st.sampled_from(["float32", "float64"]))
def test_nearest_picks_torch_positions(mode, n_in, n_out, scale, dtype):
    """The positions chosen are torch's exactly (input = its own positions), from a size or a
    scale factor, in each dtype's precision."""
    kw = {"size": n_out} if scale is None else {"scale_factor": scale}
    if scale is not None and int(n_in * scale) < 1:
        return
    x = np.arange(n_in, dtype=dtype).reshape(1, 1, n_in)
    got = F.interpolate(jt.tensor(x), mode=mode, **kw)
    np.testing.assert_array_equal(got.numpy(), TF.interpolate(torch.tensor(x), mode=mode,
                                                              **kw).numpy())


@pytest.mark.parametrize("mode, n_in, n_out", [("nearest", 2, 82), ("nearest", 6, 74),
                                                ("nearest-exact", 2, 61),
                                                ("nearest-exact", 4, 41)])
def test_nearest_positions_in_each_precision(mode, n_in, n_out):
    """Sizes where torch's float32 and float64 kernels pick different positions (the scale's
    rounding): each dtype picks torch's."""
    for dtype in ("float32", "float64"):
        x = np.arange(n_in, dtype=dtype).reshape(1, 1, n_in)
        got = F.interpolate(jt.tensor(x), size=n_out, mode=mode)
        np.testing.assert_array_equal(got.numpy(), TF.interpolate(torch.tensor(x), size=n_out,
                                                                  mode=mode).numpy())


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_positions_follow_torch_kernels(mode):
    """Every output size to 90 from inputs where rounding decides: torch's generic kernel (3-D,
    or 4-D with output height + width > 128; the position rounded to float, nearest-exact's
    product fused) and its channels-last kernel (a float scale; 4-D outputs of height + width
    <= 128, channels-last inputs of more than 3 channels)."""
    for dtype in ("float32", "float64"):
        for n_in in (2, 3, 4, 6, 10, 18, 22, 26):
            line = np.arange(n_in, dtype=dtype)
            for shape, size in [((1, 1, n_in), lambda n: n), ((1, 1, 1, n_in), lambda n: (1, n)),
                                ((1, 1, 2, n_in), lambda n: (2, n + 127))]:
                x = np.broadcast_to(line, shape).copy()
                for n_out in range(1, 91):
                    got = F.interpolate(jt.tensor(x), size=size(n_out), mode=mode)
                    want = TF.interpolate(torch.tensor(x), size=size(n_out), mode=mode)
                    np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = np.arange(4 * 3 * 22, dtype=np.float64).reshape(1, 4, 3, 22)
    for fmt, tfmt in ((jt.contiguous_format, torch.contiguous_format),
                      (jt.channels_last, torch.channels_last)):
        got = F.interpolate(jt.tensor(x).contiguous(memory_format=fmt), size=(90, 81), mode=mode)
        want = TF.interpolate(torch.tensor(x).contiguous(memory_format=tfmt), size=(90, 81),
                              mode=mode)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_interpolate_uint8_and_dtypes():
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    for mode in ("nearest", "nearest-exact"):
        got = F.interpolate(jt.tensor(x), size=(5, 7), mode=mode)
        assert got.dtype is jt.uint8
        np.testing.assert_array_equal(got.numpy(), TF.interpolate(torch.tensor(x), size=(5, 7),
                                                                  mode=mode).numpy())
    for mode in ("bilinear", "nearest"):
        with pytest.raises(NotImplementedError, match="int64"):
            F.interpolate(jt.tensor(x.astype(np.int64)), size=3, mode=mode)


def test_interpolate_errors_as_torch():
    x3, x4 = np.zeros((1, 2, 3)), np.zeros((1, 2, 3, 3))
    cases = [(x3, dict(scale_factor=2, mode="bilinear"), "needs 4D"),
             (x4, dict(scale_factor=2, mode="linear"), "needs 3D"),
             (x4, dict(scale_factor=2, mode="trilinear"), "needs 5D"),
             (x4, dict(scale_factor=2, mode="foo"), "Only 3D, 4D and 5D"),
             (np.zeros((2, 3)), dict(size=4), "Only 3D, 4D and 5D"),
             (x3, dict(mode="linear"), "either size or scale_factor"),
             (x3, dict(size=3, scale_factor=2), "only one of size"),
             (x3, dict(size=(3, 3)), "same number of spatial dimensions"),
             (x3, dict(scale_factor=(2, 2)), "same number of spatial dimensions"),
             (x3, dict(size=3, align_corners=True), "align_corners option"),
             (x3, dict(size=0), "greater than 0"),
             (np.zeros((1, 2, 0)), dict(size=4), "greater than 0"),
             (x3, dict(size=4, recompute_scale_factor=True), "not meaningful"),
             (x3, dict(size=(2.5,)), "expected size"),
             (x3, dict(scale_factor=2, mode="linear", antialias=True), "Anti-alias")]
    for x, kw, match in cases:
        same_error(lambda x=x, kw=kw: F.interpolate(jt.tensor(x), **kw),
                   lambda x=x, kw=kw: TF.interpolate(torch.tensor(x), **kw), match)
    with pytest.raises(NotImplementedError, match="antialias"):
        F.interpolate(jt.tensor(x4), scale_factor=0.5, mode="bilinear", antialias=True)


def test_upsample_forms_and_modules():
    x = np.random.default_rng(1).standard_normal((1, 2, 3, 4))
    for fn, kw in ((F.upsample, dict(scale_factor=2, mode="bicubic")),
                   (F.upsample_nearest, dict(size=(5, 6))),
                   (F.upsample_bilinear, dict(scale_factor=1.5))):
        with pytest.warns(UserWarning, match="deprecated"):
            got = fn(jt.tensor(x), **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(TF, fn.__name__)(torch.tensor(x), **kw)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    pairs = [(nn.Upsample(scale_factor=2), torch.nn.Upsample(scale_factor=2)),
             (nn.Upsample(size=(4, 5), mode="bilinear", align_corners=True),
              torch.nn.Upsample(size=(4, 5), mode="bilinear", align_corners=True)),
             (nn.Upsample(scale_factor=(2, 1.5), mode="area"),
              torch.nn.Upsample(scale_factor=(2, 1.5), mode="area")),
             (nn.UpsamplingNearest2d(scale_factor=3), torch.nn.UpsamplingNearest2d(scale_factor=3)),
             (nn.UpsamplingBilinear2d(size=(3, 4)), torch.nn.UpsamplingBilinear2d(size=(3, 4)))]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)
        assert mine.scale_factor == theirs.scale_factor and mine.name == theirs.name
        check(mine, theirs, [x])


# -- shuffles, fold, unfold --------------------------------------------------------------------
@few
@given(st.integers(1, 3), st.integers(1, 2), st.integers(1, 3), st.integers(1, 3),
       st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_pixel_and_channel_shuffles_match_torch(r, c, h, w, batched, seed):
    rng = np.random.default_rng(seed)
    lead = (2,) if batched else ()
    x = rng.standard_normal(lead + (c * r * r, h, w))
    check(lambda t: F.pixel_shuffle(t, r), lambda t: TF.pixel_shuffle(t, r), [x], seed)
    y = rng.standard_normal(lead + (c, h * r, w * r))
    check(lambda t: F.pixel_unshuffle(t, r), lambda t: TF.pixel_unshuffle(t, r), [y], seed)
    z = rng.standard_normal((2, c * r, h, w)[:3 + batched])
    check(lambda t: F.channel_shuffle(t, r), lambda t: TF.channel_shuffle(t, r), [z], seed)
    for mine, theirs in ((nn.PixelShuffle(r), torch.nn.PixelShuffle(r)),
                         (nn.PixelUnshuffle(r), torch.nn.PixelUnshuffle(r)),
                         (nn.ChannelShuffle(r), torch.nn.ChannelShuffle(r))):
        assert repr(mine) == repr(theirs)
    check(nn.PixelUnshuffle(r), torch.nn.PixelUnshuffle(r), [y], seed)


def test_shuffle_errors_as_torch():
    for fn, shape, arg, match in (("pixel_shuffle", (2, 5, 3, 3), 2, "divisible by the square"),
                                  ("pixel_shuffle", (5, 3), 2, "at least 3 dimensions"),
                                  ("pixel_shuffle", (2, 4, 3, 3), 0, "positive upscale_factor"),
                                  ("pixel_unshuffle", (2, 4, 3, 4), 2, "height to be divisible"),
                                  ("pixel_unshuffle", (2, 4, 4, 3), 2, "width to be divisible"),
                                  ("channel_shuffle", (2, 5, 3), 2, "divisible by groups"),
                                  ("channel_shuffle", (2, 5), 5, "> 2 dims"),
                                  ("channel_shuffle", (2, 4, 3), 0, "must be positive")):
        same_error(lambda fn=fn, shape=shape, arg=arg: getattr(F, fn)(jt.zeros(*shape), arg),
                   lambda fn=fn, shape=shape, arg=arg: getattr(TF, fn)(torch.zeros(*shape), arg),
                   match)


@st.composite
def blocks(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    size = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 6))
                 for k, d, p in zip(kernel, dilation, padding, strict=False))
    return (draw(st.integers(1, 2)), draw(st.integers(1, 2))), size, kernel, dilation, \
        padding, stride, draw(st.booleans()), draw(st.integers(0, 2 ** 32 - 1))


@few
@given(blocks())
def test_fold_and_unfold_match_torch(case):
    (n, c), size, kernel, dilation, padding, stride, batched, seed = case
    rng = np.random.default_rng(seed)
    args = (kernel, dilation, padding, stride)
    x = rng.standard_normal(((n,) if batched else ()) + (c,) + size)
    cols = check(lambda t: F.unfold(t, *args), lambda t: TF.unfold(t, *args), [x], seed)
    check(lambda t: F.fold(t, size, *args), lambda t: TF.fold(t, size, *args),
          [rng.standard_normal(tuple(cols.shape))], seed)
    mine, theirs = nn.Fold(size, *args), torch.nn.Fold(size, *args)
    assert repr(mine) == repr(theirs)
    assert repr(nn.Unfold(*args)) == repr(torch.nn.Unfold(*args))


def test_fold_unfold_errors_as_torch():
    same_error(lambda: F.fold(jt.zeros(1, 5, 9), 4, 2), lambda: TF.fold(torch.zeros(1, 5, 9), 4, 2),
               "divisible by the product of kernel_size")
    same_error(lambda: F.fold(jt.zeros(1, 4, 8), 4, 2), lambda: TF.fold(torch.zeros(1, 4, 8), 4, 2),
               "3 \\* 3 = 9")
    same_error(lambda: F.unfold(jt.zeros(1, 1, 2, 2), 3),
               lambda: TF.unfold(torch.zeros(1, 1, 2, 2), 3), "at least one")


# -- padding modules ---------------------------------------------------------------------------
PADS = ["ConstantPad", "ZeroPad", "ReflectionPad", "ReplicationPad", "CircularPad"]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kind", PADS)
def test_padding_modules_match_torch(kind, n):
    rng = np.random.default_rng(n)
    sizes = (1, 2, 0, 1, 2, 1)[:2 * n]
    args = (lambda p: (p, 2.5)) if kind == "ConstantPad" else (lambda p: (p,))
    for padding in (sizes, 1):
        mine = getattr(nn, f"{kind}{n}d")(*args(padding))
        theirs = getattr(torch.nn, f"{kind}{n}d")(*args(padding))
        assert repr(mine) == repr(theirs) and mine.padding == theirs.padding
        for batched in (False, True):
            x = rng.standard_normal((2,) * batched + (2,) + (3,) * n)
            check(mine, theirs, [x])
    if kind == "CircularPad":
        same_error(lambda: mine(jt.zeros(3)), lambda: theirs(torch.zeros(3)), "expected")


def test_padding_reprs():
    assert repr(nn.ZeroPad2d((1, 1, 2, 0))) == "ZeroPad2d((1, 1, 2, 0))"
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    assert repr(nn.CircularPad2d([1, 2, 3, 4])) == "CircularPad2d((1, 2, 3, 4))"
    x = jt.arange(4.).reshape(1, 2, 2)
    np.testing.assert_array_equal(nn.ConstantPad1d((1, 0), -1)(x).numpy(),
                                  [[[-1, 0, 1], [-1, 2, 3]]])


# -- normalisations ----------------------------------------------------------------------------
@few
@given(st.integers(1, 2), st.sampled_from([(1, 2), (2, 2), (2, 4), (3, 6)]),
       st.sampled_from([(), (3,), (2, 3), (2, 1, 2)]), st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_group_and_instance_norm_match_torch(n, groups_channels, spatial, affine, seed):
    groups, c = groups_channels
    if n * c // groups * math.prod(spatial) == 1:
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c) + spatial) * 3 + 1
    w, b = rng.standard_normal(c), rng.standard_normal(c)
    params = [w, b] if affine else []
    check(lambda t, *p: F.group_norm(t, groups, *p, eps=1e-3),
          lambda t, *p: TF.group_norm(t, groups, *p, eps=1e-3), [x] + params, seed, 1e-8, 1e-10)
    if math.prod(spatial) > 1:
        check(lambda t, *p: F.instance_norm(t, None, None, *p),
              lambda t, *p: TF.instance_norm(t, None, None, *p), [x] + params, seed, 1e-8, 1e-10)
    check(lambda t: F.local_response_norm(t, groups + 1, 0.1, 0.6, 1.5),
          lambda t: TF.local_response_norm(t, groups + 1, 0.1, 0.6, 1.5),
          [x.reshape(n, c, -1)] if not spatial else [x], seed, 1e-8, 1e-10)


def test_instance_norm_running_stats_as_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 2, 5)).astype(np.float32)
    stats = [(jt.zeros(2), jt.ones(2)), (torch.zeros(2), torch.ones(2))]
    for _ in range(2):
        a = F.instance_norm(jt.tensor(x), *stats[0], momentum=0.3)
        b = TF.instance_norm(torch.tensor(x), *stats[1], momentum=0.3)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    for mine, theirs in zip(*stats, strict=False):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    a = F.instance_norm(jt.tensor(x), *stats[0], use_input_stats=False)
    b = TF.instance_norm(torch.tensor(x), *stats[1], use_input_stats=False)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_instance_norm_modules_as_torch():
    rng = np.random.default_rng(4)
    for n, cls in ((1, "InstanceNorm1d"), (2, "InstanceNorm2d"), (3, "InstanceNorm3d")):
        for kw in ({}, {"affine": True, "track_running_stats": True, "momentum": None},
                   {"track_running_stats": True, "bias": False, "affine": True}):
            mine, theirs = getattr(nn, cls)(3, **kw), getattr(torch.nn, cls)(3, **kw)
            assert repr(mine) == repr(theirs)
            assert list(mine.state_dict()) == list(theirs.state_dict())
            assert [k for k, _ in mine.named_parameters()] == \
                [k for k, _ in theirs.named_parameters()]
            for batched in (True, False):
                x = rng.standard_normal((2,) * batched + (3,) + (2,) * n).astype(np.float32)
                a, b = mine(jt.tensor(x)), theirs(torch.tensor(x))
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                           atol=1e-5)
            for key, value in theirs.state_dict().items():
                np.testing.assert_allclose(mine.state_dict()[key].numpy(), value.numpy(),
                                           rtol=1e-5, atol=1e-6)
            mine.eval(), theirs.eval()
            a, b = mine(jt.tensor(x)), theirs(torch.tensor(x))
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                       atol=1e-5)
    same_error(lambda: nn.InstanceNorm2d(3)(jt.zeros(2, 3)),
               lambda: torch.nn.InstanceNorm2d(3)(torch.zeros(2, 3)), "expected 3D or 4D")
    same_error(lambda: nn.InstanceNorm1d(3, affine=True)(jt.zeros(2, 4, 5)),
               lambda: torch.nn.InstanceNorm1d(3, affine=True)(torch.zeros(2, 4, 5)),
               "match num_features")
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(jt.randn(2, 4, 5))


def test_group_norm_and_lrn_modules_as_torch():
    for kw in ({}, {"affine": False}, {"bias": False, "eps": 1e-3}):
        mine, theirs = nn.GroupNorm(2, 4, **kw), torch.nn.GroupNorm(2, 4, **kw)
        assert repr(mine) == repr(theirs)
        assert list(mine.state_dict()) == list(theirs.state_dict())
        x = np.random.default_rng(5).standard_normal((2, 4, 3))
        check(mine.double(), theirs.double(), [x], rtol=1e-8, atol=1e-10)
    assert repr(nn.LocalResponseNorm(3)) == repr(torch.nn.LocalResponseNorm(3))
    check(nn.LocalResponseNorm(2, k=2.0), torch.nn.LocalResponseNorm(2, k=2.0),
          [np.random.default_rng(6).standard_normal((1, 3, 2, 2, 2))])


def test_normalization_errors_as_torch():
    same_error(lambda: F.group_norm(jt.zeros(2, 5, 3), 2),
               lambda: TF.group_norm(torch.zeros(2, 5, 3), 2), "divisible by num_groups")
    same_error(lambda: F.group_norm(jt.zeros(3), 1), lambda: TF.group_norm(torch.zeros(3), 1),
               "at least 2 dimensions")
    same_error(lambda: F.group_norm(jt.zeros(1, 2), 2), lambda: TF.group_norm(torch.zeros(1, 2), 2),
               "more than 1 value")
    same_error(lambda: nn.GroupNorm(2, 5), lambda: torch.nn.GroupNorm(2, 5), "divisible")
    same_error(lambda: F.instance_norm(jt.zeros(2, 3, 1)),
               lambda: TF.instance_norm(torch.zeros(2, 3, 1)), "more than 1 spatial")
    same_error(lambda: F.local_response_norm(jt.zeros(2, 3), 2),
               lambda: TF.local_response_norm(torch.zeros(2, 3), 2), "3D or higher")


# -- transposed convolutions -------------------------------------------------------------------
@st.composite
def transposed(draw):
    groups = draw(st.sampled_from([1, 2]))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1))
                           for s, d in zip(stride, dilation, strict=False))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 1)))
    size = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    if any((i - 1) * s - 2 * p + d * (k - 1) + op + 1 <= 0 for i, s, p, d, k, op in
           zip(size, stride, padding, dilation, kernel, output_padding, strict=False)):
        padding = (0, 0)
    return (draw(st.integers(1, 2)), c) + size, (c, o // groups) + kernel, stride, padding, \
        output_padding, groups, dilation, draw(st.booleans()), draw(st.integers(0, 2 ** 32 - 1))


@few
@given(transposed())
def test_conv_transpose_matches_torch(case):
    shape, wshape, stride, padding, output_padding, groups, dilation, bias, seed = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape), rng.standard_normal(wshape)]
    if bias:
        arrays.append(rng.standard_normal(wshape[1] * groups))
    args = (stride, padding, output_padding, groups, dilation)
    check(lambda x, w, *b: F.conv_transpose2d(x, w, *b, *args) if b else
          F.conv_transpose2d(x, w, None, *args),
          lambda x, w, *b: TF.conv_transpose2d(x, w, *b, *args) if b else
          TF.conv_transpose2d(x, w, None, *args), arrays, seed, 1e-9, 1e-10)
    # the same along the width as 1-d (unbatched too)
    one = (stride[1], padding[1], output_padding[1], groups, dilation[1])
    check(lambda x, w: F.conv_transpose1d(x, w, None, *one),
          lambda x, w: TF.conv_transpose1d(x, w, None, *one),
          [arrays[0][0, :, 0], arrays[1][:, :, 0]], seed, 1e-9, 1e-10)


def test_conv_transpose_integers_as_torch():
    x, w = np.arange(18).reshape(1, 2, 3, 3), np.arange(16).reshape(2, 2, 2, 2) - 5
    got = F.conv_transpose2d(jt.tensor(x), jt.tensor(w), stride=2)
    assert got.dtype is jt.int64
    np.testing.assert_array_equal(got.numpy(), TF.conv_transpose2d(torch.tensor(x),
                                                                   torch.tensor(w), stride=2))


def test_conv_transpose_modules_as_torch():
    rng = np.random.default_rng(7)
    for n, kw in ((2, dict(stride=2, output_padding=1, groups=2)),
                  (2, dict(kernel_size=(3, 2), padding=(1, 0), dilation=(1, 2), bias=False)),
                  (1, dict(stride=3, padding=1, dilation=2, groups=1))):
        kw = {"kernel_size": 3, **kw}
        mine = getattr(nn, f"ConvTranspose{n}d")(4, 6, **kw, dtype=jt.float64)
        theirs = getattr(torch.nn, f"ConvTranspose{n}d")(4, 6, **kw, dtype=torch.float64)
        assert repr(mine) == repr(theirs)
        assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == \
            {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
        # torch's bound: 1 / sqrt(fan_in), fan_in = out / groups * kernel elements
        fan_in = theirs.weight.shape[1] * math.prod(theirs.weight.shape[2:])
        assert 0 < np.abs(mine.weight.detach().numpy()).max() <= 1 / math.sqrt(fan_in)
        mine.load_state_dict({k: jt.tensor(v.detach().numpy())
                              for k, v in theirs.state_dict().items()})
        x = rng.standard_normal((2, 4) + (3,) * n)
        check(mine, theirs, [x], rtol=1e-9, atol=1e-10)
        # every valid output_size: the smallest (no output padding) to stride - 1 more
        low = [o - op for o, op in zip(theirs(torch.tensor(x)).shape[2:], theirs.output_padding,
                                       strict=False)]
        for extra in range(max(theirs.stride)):
            size = [lo + min(extra, s - 1) for lo, s in zip(low, theirs.stride, strict=False)]
            for given_size in (size, (2, 6, *size)):
                check(lambda t, mod=mine, size=given_size: mod(t, output_size=size),
                      lambda t, mod=theirs, size=given_size: mod(t, output_size=size),
                      [x], rtol=1e-9, atol=1e-10)
        check(mine, theirs, [x[0]], rtol=1e-9, atol=1e-10)  # unbatched
    m, t = nn.ConvTranspose2d(2, 2, 3, stride=2), torch.nn.ConvTranspose2d(2, 2, 3, stride=2)
    same_error(lambda: m(jt.zeros(1, 2, 3, 3), output_size=(9, 9)),
               lambda: t(torch.zeros(1, 2, 3, 3), output_size=(9, 9)), "valid sizes range")
    same_error(lambda: m(jt.zeros(1, 2, 3, 3), output_size=(7,)),
               lambda: t(torch.zeros(1, 2, 3, 3), output_size=(7,)), "must have 2 or 4")
    same_error(lambda: nn.ConvTranspose2d(2, 2, 2, padding_mode="reflect"),
               lambda: torch.nn.ConvTranspose2d(2, 2, 2, padding_mode="reflect"),
               "Only \"zeros\"")


def test_conv_transpose_errors_as_torch():
    for x, w, kw, match in (((1, 3, 5, 5), (4, 2, 3, 3), {}, "to have 4 channels"),
                            ((1, 4, 5, 5), (4, 2, 3, 3), {"output_padding": 2}, "output padding"),
                            ((1, 4, 5, 5), (4, 2, 3, 3), {"groups": 3}, "divisible by 3")):
        same_error(
            lambda x=x, w=w, kw=kw: F.conv_transpose2d(jt.zeros(*x), jt.zeros(*w), **kw),
            lambda x=x, w=w, kw=kw: TF.conv_transpose2d(torch.zeros(*x), torch.zeros(*w), **kw),
            match)
    with pytest.raises(RuntimeError, match="input type .float64. and weight type .float32."):
        F.conv_transpose2d(jt.zeros(1, 4, 5, 5, dtype=jt.float64), jt.zeros(4, 2, 3, 3))


def test_unflatten_as_torch():
    mine, theirs = nn.Unflatten(1, (2, -1)), torch.nn.Unflatten(1, (2, -1))
    assert repr(mine) == repr(theirs) == "Unflatten(dim=1, unflattened_size=(2, -1))"
    check(mine, theirs, [np.arange(12.).reshape(2, 6)])
    same_error(lambda: nn.Unflatten(1, 3), lambda: torch.nn.Unflatten(1, 3), "tuple of ints")
    same_error(lambda: nn.Unflatten(1, (2., 3)), lambda: torch.nn.Unflatten(1, (2., 3)),
               "at pos 0")


def test_exports():
    for name in ("group_norm", "instance_norm", "local_response_norm", "interpolate", "upsample",
                 "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
                 "channel_shuffle", "fold", "unfold", "conv_transpose1d", "conv_transpose2d"):
        assert name in F.__all__ and callable(getattr(F, name))
    for name in ("GroupNorm", "InstanceNorm3d", "LocalResponseNorm", "Upsample", "Fold",
                 "ChannelShuffle", "ZeroPad3d", "CircularPad1d", "ConvTranspose1d", "Unflatten"):
        assert name in nn.__all__ and issubclass(getattr(nn, name), nn.Module)


# -- CUDA ----------------------------------------------------------------------------------------
def cuda_leaf(a):
    return jt.tensor(a, device="cuda", requires_grad=True)


def on_cuda_as_on_cpu(fn, *arrays):
    """fn's value and input gradients on CUDA equal those on the CPU."""
    cpu = [jt.tensor(a, requires_grad=True) for a in arrays]
    gpu = [cuda_leaf(a) for a in arrays]
    a, b = fn(*cpu), fn(*gpu)
    assert b.device.type == "cuda"
    np.testing.assert_allclose(b.cpu().detach().numpy(), a.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    (a * a).sum().backward()
    (b * b).sum().backward()
    for c, g in zip(cpu, gpu, strict=False):
        np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=1e-12, atol=1e-12)


@needs_cuda
def test_cuda_interpolate_and_shuffles():
    x = np.random.default_rng(8).standard_normal((1, 4, 2, 3))
    on_cuda_as_on_cpu(lambda t: F.interpolate(t, scale_factor=1.5, mode="bicubic"), x)
    on_cuda_as_on_cpu(lambda t: F.pixel_shuffle(F.channel_shuffle(t, 2), 2), x)


@needs_cuda
def test_cuda_fold_unfold_and_conv_transpose():
    x = np.random.default_rng(9).standard_normal((1, 2, 3, 3))
    w = np.random.default_rng(10).standard_normal((2, 1, 2, 2))
    on_cuda_as_on_cpu(lambda t: F.fold(F.unfold(t, 2), 3, 2), x)
    on_cuda_as_on_cpu(lambda t, v: F.conv_transpose2d(t, v, stride=2, groups=2), x, w)


@needs_cuda
def test_cuda_normalizations_and_padding():
    x = np.random.default_rng(11).standard_normal((1, 4, 2, 3))
    on_cuda_as_on_cpu(lambda t: F.group_norm(t, 2), x)
    on_cuda_as_on_cpu(lambda t: F.instance_norm(t), x)
    on_cuda_as_on_cpu(lambda t: F.local_response_norm(t, 2), x)
    on_cuda_as_on_cpu(lambda t: nn.ReflectionPad2d((1, 0, 1, 1))(t), x)


def test_nearest_gradient_follows_its_forward_where_torch_shortcuts():
    """2 elements scaled by 1.3 stay 2 but both read element 0: its gradient gets both (torch's
    backward passes g straight through there, inconsistent with its own forward)."""
    x = jt.tensor([[[1.0, 2.0]]], dtype=jt.float64, requires_grad=True)
    y = F.interpolate(x, scale_factor=1.3, mode="nearest")
    assert y.tolist() == [[[1.0, 1.0]]]
    y.backward(jt.tensor([[[10.0, 100.0]]], dtype=jt.float64))
    assert x.grad.tolist() == [[[110.0, 0.0]]]
