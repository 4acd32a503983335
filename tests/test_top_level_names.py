"""torch's top-level names beyond the ops: finfo/iinfo, the legacy tensor types (FloatTensor,
...), typename, the constants, and the top-level spellings of nn.functional ops
(`torch.conv2d`, `torch.layer_norm`, `torch.dropout`, ...), each against torch."""
import copy
import math

import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")

FLOATS = (jt.float16, jt.float32, jt.float64)
INTS = (jt.uint8, jt.int8, jt.int16, jt.int32, jt.int64)


@pytest.mark.parametrize("d", FLOATS, ids=str)
def test_finfo_matches_torch(d):
    mine, theirs = jt.finfo(d), torch.finfo(getattr(torch, d.name))
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(mine, name) == getattr(theirs, name), name
        assert type(getattr(mine, name)) is type(getattr(theirs, name)), name
    assert mine.dtype == theirs.dtype
    assert repr(mine) == repr(theirs)
    assert mine == jt.finfo(d) and mine != jt.finfo(jt.float64 if d is not jt.float64 else
                                                    jt.float32)


def test_finfo_default_follows_the_default_dtype():
    assert jt.finfo().dtype == "float32"
    jt.set_default_dtype(jt.float64)
    try:
        assert jt.finfo().dtype == "float64"
    finally:
        jt.set_default_dtype(jt.float32)


@pytest.mark.parametrize("d", INTS, ids=str)
def test_iinfo_matches_torch(d):
    mine, theirs = jt.iinfo(d), torch.iinfo(getattr(torch, d.name))
    assert (mine.bits, mine.min, mine.max, mine.dtype) == \
        (theirs.bits, theirs.min, theirs.max, theirs.dtype)
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("call", [lambda m: m.finfo(m.int32), lambda m: m.iinfo(m.float32),
                                  lambda m: m.iinfo(m.bool), lambda m: m.finfo(3)],
                         ids=["finfo-int", "iinfo-float", "iinfo-bool", "finfo-int-value"])
def test_info_errors_match_torch(call):
    with pytest.raises(TypeError) as theirs:
        call(torch)
    with pytest.raises(TypeError) as mine:
        call(jt)
    assert str(mine.value).replace("jitensor", "torch") == str(theirs.value)


LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
          "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_types_construct_as_torch(name):
    mine, theirs = getattr(jt, name), getattr(torch, name)
    assert str(mine.dtype) == str(theirs.dtype).replace("torch", "jitensor")
    got, want = mine([[1, 0], [3, 1]]), theirs([[1, 0], [3, 1]])
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy(), strict=True)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    for args in [(), (2, 3), (jt.Size([4]),)]:
        targs = tuple(torch.Size(a) if isinstance(a, jt.Size) else a for a in args)
        got = mine(*args)
        assert tuple(got.shape) == tuple(theirs(*targs).shape)
        assert got.dtype is mine.dtype
        assert isinstance(got, mine) and isinstance(got, jt.Tensor)
    assert got.type() == f"jitensor.{name}" and theirs(1).type() == f"torch.{name}"


def test_legacy_type_isinstance_and_aliasing():
    x = jt.zeros(3)
    assert isinstance(x, jt.FloatTensor)
    assert not isinstance(x, jt.DoubleTensor) and not isinstance(3.0, jt.FloatTensor)
    same = jt.FloatTensor(x)
    same[0] = 5
    assert x[0].item() == 5  # torch's constructor aliases a tensor of its own type
    with pytest.raises(TypeError):
        jt.FloatTensor(jt.zeros(2, dtype=jt.int64))
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.zeros(2, dtype=torch.int64))


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "HalfTensor", "BoolTensor"])
def test_cuda_legacy_types_construct_and_convert(name):
    kind = getattr(jt.cuda, name)
    assert kind.__module__ == "jitensor.cuda" and kind.dtype is getattr(jt, name).dtype
    x = kind(2, 3)
    assert x.device.type == "cuda" and x.dtype is kind.dtype and x.shape == (2, 3)
    assert isinstance(x, kind) and not isinstance(x, getattr(jt, name))
    assert not isinstance(jt.zeros(2, dtype=kind.dtype), kind)
    assert x.type() == f"jitensor.cuda.{name}"
    y = jt.tensor([1, 0]).type(kind)
    assert y.device.type == "cuda" and y.dtype is kind.dtype and y.cpu().tolist() == [1, 0]
    assert kind([1, 0]).cpu().tolist() == [1, 0]
    assert getattr(torch.cuda, name).__name__ == name  # (torch has them, CUDA or not)


def test_tensor_type_converts_by_legacy_type_or_name():
    x = jt.arange(3)
    for spec, tspec in [(jt.FloatTensor, torch.FloatTensor), ("torch.DoubleTensor",) * 2,
                        ("jitensor.ShortTensor", "torch.ShortTensor"), (jt.float64, torch.float64)]:
        got, want = x.type(spec), torch.arange(3).type(tspec)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert x.type() == "jitensor.LongTensor"


def test_typename_matches_torch():
    assert jt.typename(jt.zeros(2, dtype=jt.float64)) == "jitensor.DoubleTensor"
    for obj in [3, "a", [1], math.sqrt, np.float32(1), copy.deepcopy]:
        assert jt.typename(obj) == torch.typename(obj)


def test_constants_and_flags():
    for name in ("pi", "e", "inf", "nan", "newaxis"):
        assert repr(getattr(jt, name)) == repr(getattr(torch, name))
    assert jt.ones(2, 3)[:, jt.newaxis].shape == (2, 1, 3)
    assert jt.has_lapack is True and jt.has_mkl is False and jt.has_spectral is True
    assert isinstance(jt.has_openmp, bool)
    x = jt.ones(2, requires_grad=True) * 2
    assert not jt.detach(x).requires_grad


# -- torch's top-level spellings of nn.functional ops --------------------------------------------
def _pair(rng, *shapes):
    arrays = [rng.standard_normal(s).astype(np.float64) for s in shapes]
    return [jt.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10,
                               atol=1e-12)


CALLS = {
    "conv1d": ([(2, 3, 9), (4, 3, 3), (4,)], lambda m, x, w, b: m.conv1d(x, w, b, 2, 1)),
    "conv2d": ([(2, 3, 7, 7), (4, 3, 3, 3)], lambda m, x, w: m.conv2d(x, w, None, 1, "same")),
    "conv_transpose1d": ([(2, 3, 5), (3, 2, 3)],
                         lambda m, x, w: m.conv_transpose1d(x, w, None, 2, 1, 1)),
    "conv_transpose2d": ([(1, 3, 4, 4), (3, 2, 3, 3)],
                         lambda m, x, w: m.conv_transpose2d(x, w, None, 2)),
    "conv3d": ([(1, 2, 4, 5, 5), (3, 2, 2, 2, 2)], lambda m, x, w: m.conv3d(x, w, None, 1, 1)),
    "conv_transpose3d": ([(1, 2, 3, 3, 3), (2, 2, 2, 2, 2)],
                         lambda m, x, w: m.conv_transpose3d(x, w, None, 2)),
    "max_pool3d": ([(1, 2, 4, 4, 4)], lambda m, x: m.max_pool3d(x, 2)),
    "adaptive_max_pool1d": ([(2, 3, 9)], lambda m, x: m.adaptive_max_pool1d(x, 4)),
    "bilinear": ([(4, 3), (4, 5), (2, 3, 5), (2,)], lambda m, a, b, w, c: m.bilinear(a, b, w, c)),
    "grid_sampler": ([(1, 2, 5, 5), (1, 3, 4, 2)],
                     lambda m, x, g: m.grid_sampler(x, g.tanh(), 0, 2, True)),
    "affine_grid_generator": ([(2, 2, 3)],
                              lambda m, t: m.affine_grid_generator(t, [2, 1, 4, 5], False)),
    "max_pool1d": ([(2, 3, 9)], lambda m, x: m.max_pool1d(x, 3)),
    "max_pool1d_with_indices": ([(2, 3, 9)], lambda m, x: m.max_pool1d_with_indices(x, 3, 2)),
    "max_pool2d": ([(2, 3, 8, 8)], lambda m, x: m.max_pool2d(x, [2, 2], [], 1)),
    "avg_pool1d": ([(2, 3, 9)], lambda m, x: m.avg_pool1d(x, 3, 2, 1, False, False)),
    "adaptive_avg_pool1d": ([(2, 3, 9)], lambda m, x: m.adaptive_avg_pool1d(x, 4)),
    "batch_norm": ([(4, 3, 5), (3,), (3,)],
                   lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True)),
    "instance_norm": ([(4, 3, 5), (3,), (3,)],
                      lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         False)),
    "layer_norm": ([(4, 6), (6,), (6,)], lambda m, x, w, b: m.layer_norm(x, [6], w, b, 1e-3)),
    "group_norm": ([(4, 6, 3)], lambda m, x: m.group_norm(x, 2)),
    "rms_norm": ([(4, 6), (6,)], lambda m, x, w: m.rms_norm(x, [6], w, 1e-6)),
    "constant_pad_nd": ([(2, 3)], lambda m, x: m.constant_pad_nd(x, [1, 2], 7.5)),
    "celu": ([(5,)], lambda m, x: m.celu(x, 0.5)),
    "selu": ([(5,)], lambda m, x: m.selu(x)),
    "threshold": ([(5,)], lambda m, x: m.threshold(x, 0.1, -2.0)),
    "hardshrink": ([(5,)], lambda m, x: m.hardshrink(x, 0.3)),
    "prelu": ([(2, 3, 4), (3,)], lambda m, x, w: m.prelu(x, w)),
    "rrelu": ([(5,)], lambda m, x: m.rrelu(x)),
    "channel_shuffle": ([(1, 6, 2)], lambda m, x: m.channel_shuffle(x, 3)),
    "native_channel_shuffle": ([(1, 6, 2)], lambda m, x: m.native_channel_shuffle(x, 2)),
    "pixel_shuffle": ([(1, 8, 2, 2)], lambda m, x: m.pixel_shuffle(x, 2)),
    "pixel_unshuffle": ([(1, 2, 4, 4)], lambda m, x: m.pixel_unshuffle(x, 2)),
    "cosine_similarity": ([(4, 5), (4, 5)], lambda m, a, b: m.cosine_similarity(a, b, 0)),
    "pairwise_distance": ([(4, 5), (4, 5)],
                          lambda m, a, b: m.pairwise_distance(a, b, 1.0, 1e-6, True)),
    "pdist": ([(4, 5)], lambda m, x: m.pdist(x, 3.0)),
    "bce_with_logits": ([(4, 3), (4, 3), (3,)],
                        lambda m, x, t, pw: m.binary_cross_entropy_with_logits(
                            x, t.sigmoid(), None, pw.abs(), 2)),
    "kl_div": ([(4, 3), (4, 3)], lambda m, x, t: m.kl_div(x, t, 0, log_target=True)),
    "poisson_nll_loss": ([(4, 3), (4, 3)],
                         lambda m, x, t: m.poisson_nll_loss(x, t.abs(), True, True, 1e-8, 1)),
    "margin_ranking_loss": ([(5,), (5,), (5,)],
                            lambda m, a, b, t: m.margin_ranking_loss(a, b, t.sign(), 0.2, 2)),
    "hinge_embedding_loss": ([(5,), (5,)],
                             lambda m, x, t: m.hinge_embedding_loss(x, t.sign(), 0.5, 0)),
    "cosine_embedding_loss": ([(4, 3), (4, 3), (4,)],
                              lambda m, a, b, t: m.cosine_embedding_loss(a, b, t.sign(), 0.1)),
    "triplet_margin_loss": ([(4, 3), (4, 3), (4, 3)],
                            lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 0.5, 2.0, 1e-6,
                                                                     True, 1)),
    "dropout-eval": ([(5,)], lambda m, x: m.dropout(x, 0.5, False)),
    "alpha_dropout-p0": ([(5,)], lambda m, x: m.alpha_dropout(x, 0.0, True)),
    "feature_dropout-eval": ([(2, 3, 4)], lambda m, x: m.feature_dropout(x, 0.3, False)),
}


@pytest.mark.parametrize("name", CALLS)
def test_top_level_nn_functions_match_torch(name):
    shapes, call = CALLS[name]
    mine, theirs = _pair(np.random.default_rng(len(name)), *shapes)
    _same(call(jt, *mine), call(torch, *theirs))


def test_embedding_takes_the_weight_first():
    w = np.random.default_rng(0).standard_normal((5, 3))
    idx = np.array([[0, 4], [2, 2]])
    for padding_idx in (-1, 2):
        wm, wt = jt.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
        got = jt.embedding(wm, jt.tensor(idx), padding_idx)
        want = torch.embedding(wt, torch.tensor(idx), padding_idx)
        _same(got, want)
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_array_equal(wm.grad.numpy(), wt.grad.numpy())


def test_dropouts_in_training_zero_and_scale():
    jt.manual_seed(0)
    x = jt.ones(1000, dtype=jt.float64)
    y = jt.dropout(x, 0.25, True)
    kept = y.numpy() != 0
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.75)
    assert 600 < kept.sum() < 900
    z = jt.ones(8, 50, 3)
    assert jt.dropout_(z, 0.5, True) is z
    channels = jt.feature_dropout(jt.ones(8, 50, 3), 0.5, True).numpy()
    assert np.all((channels == 0).all(-1) | (channels == 2).all(-1))  # whole channels


def test_losses_reduce_to_none_by_default_as_torch_bindings():
    (a, b), (ta, tb) = _pair(np.random.default_rng(1), (4, 3), (4, 3))
    _same(jt.kl_div(a, b), torch.kl_div(ta, tb))
    _same(jt.binary_cross_entropy_with_logits(a, b.sigmoid()),
          torch.binary_cross_entropy_with_logits(ta, tb.sigmoid()))
    _same(jt.triplet_margin_loss(a, b, a * 2), torch.triplet_margin_loss(ta, tb, ta * 2))


@pytest.mark.parametrize("reduction", [3, -1, "mean", True])
def test_int_reductions_refuse_other_values(reduction):
    x = jt.zeros(3)
    with pytest.raises(ValueError, match="reduction"):
        jt.kl_div(x, x, reduction)


def test_grads_flow_through_top_level_forms():
    mine, theirs = _pair(np.random.default_rng(3), (2, 3, 6, 6), (4, 3, 3, 3))
    for t in (*mine, *theirs):
        t.requires_grad_(True)
    jt.layer_norm(jt.conv2d(*mine, padding=1), [6]).pow(2).sum().backward()
    torch.layer_norm(torch.conv2d(*theirs, padding=1), [6]).pow(2).sum().backward()
    for m, t in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_tensor_new_is_the_legacy_constructor_of_its_type():
    for lib in (jt, torch):
        t = lib.ones(2, dtype=lib.float64)
        assert tuple(t.new(2, 3).shape) == (2, 3) and t.new(2, 3).dtype == lib.float64
        assert t.new([1, 2]).tolist() == [1.0, 2.0] and t.new((1, 2)).tolist() == [1.0, 2.0]
        assert tuple(t.new().shape) == (0,)
        with pytest.raises(TypeError):
            t.new(lib.zeros(2, dtype=lib.int64))


def test_max_and_min_of_two_tensors_are_elementwise_as_torch():
    a, b = np.array([1.0, 5.0, -2.0]), np.array([3.0, 2.0, -2.0])
    for name in ("max", "min"):
        mine = [jt.tensor(v, requires_grad=True) for v in (a, b)]
        theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
        got, want = getattr(jt, name)(*mine), getattr(torch, name)(*theirs)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        got.sum().backward()
        want.sum().backward()
        for m, t in zip(mine, theirs, strict=True):
            np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())
        np.testing.assert_array_equal(getattr(mine[0], name)(mine[1]).detach().numpy(),
                                      want.detach().numpy())


def test_size_arithmetic_stays_a_size():
    for lib in (jt, torch):
        assert type(lib.Size([2]) + lib.Size([3])) is lib.Size
        assert type((1,) + lib.Size([2])) is lib.Size
        assert type(lib.Size([2]) * 2) is lib.Size
        assert tuple(lib.Size([2]) + (3,)) == (2, 3)


def test_error_classes_sit_where_torchs_do():
    for name in ("AcceleratorError", "FatalError"):
        assert [c.__name__ for c in getattr(jt, name).__mro__[1:]] == \
            [c.__name__ for c in getattr(torch, name).__mro__[1:]]


def test_file_path_and_multiprocessing_helpers():
    import os
    assert jt.get_file_path("jitensor", "x.py") == os.path.join(
        os.path.dirname(os.path.dirname(os.path.realpath(jt.__file__))), "jitensor", "x.py")
    assert jt.prepare_multiprocessing_environment("/tmp") is None


def test_thread_safe_generator_is_none_outside_thread_workers():
    assert jt.thread_safe_generator() is None is torch.thread_safe_generator()
    assert jt.GradScaler is jt.amp.GradScaler and jt.windows is jt.signal.windows
