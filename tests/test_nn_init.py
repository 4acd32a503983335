"""nn.init's trunc_normal_, eye_, dirac_, sparse_ and orthogonal_ against torch: the
deterministic fills exactly, the random ones by their distributions (bounds, moments, counts) on
large tensors, and the error texts."""
import math
import warnings

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn
from jitensor.nn import init

torch = pytest.importorskip("torch")


def values(t):
    return t.detach().numpy()


def _filled(fn, shape, dtype=jt.float32, **kwargs):
    """values of a tensor that `fn` fills in place, checking that a (float) parameter stays a
    leaf."""
    floating = dtype.is_floating_point
    p = jt.zeros(*shape, dtype=dtype)
    p = nn.Parameter(p) if floating else p
    assert fn(p, **kwargs) is p
    assert p.is_leaf and p.requires_grad == floating and p.grad_fn is None and p.dtype is dtype
    return values(p)


def _raises_as_torch(jt_call, torch_call):
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        jt_call()
    assert str(got.value) == str(expected.value)


def _truncated_moments(mean, std, a, b):
    """mean and std of N(mean, std^2) truncated to [a, b]."""
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    al, be = (a - mean) / std, (b - mean) / std
    z = cdf(be) - cdf(al)
    m = (pdf(al) - pdf(be)) / z
    var = 1 + (al * pdf(al) - be * pdf(be)) / z - m * m
    return mean + std * m, std * math.sqrt(var)


# -- trunc_normal_ ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mean, std, a, b", [
    (0.0, 1.0, -2.0, 2.0),      # the defaults: the redraw-the-outliers sampler
    (1.0, 2.0, -1.0, 6.0),
    (0.0, 1.0, 1.5, 2.5),       # a window holding < 30% of the mass: uniform proposals
    (1.0, 0.5, -3.0, -1.0),     # far off the mean (torch warns)
])
def test_trunc_normal_distribution(mean, std, a, b):
    g = jt.Generator().manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = _filled(init.trunc_normal_, (400, 300), mean=mean, std=std, a=a, b=b, generator=g)
        t = torch.nn.init.trunc_normal_(torch.empty(400, 300), mean, std, a, b,
                                        generator=torch.Generator().manual_seed(1)).numpy()
    expected_mean, expected_std = _truncated_moments(mean, std, a, b)
    for sample in (v, t):  # torch's own draws pass the same tolerances
        sample = sample.astype(np.float64)
        assert sample.min() >= a and sample.max() <= b
        assert abs(sample.mean() - expected_mean) < 0.01 * (b - a)
        assert abs(sample.std() / expected_std - 1) < 0.01


def test_trunc_normal_defaults_dtype_and_reproducibility():
    a = _filled(init.trunc_normal_, (50, 40), jt.float64, generator=jt.Generator().manual_seed(3))
    b = _filled(init.trunc_normal_, (50, 40), jt.float64, generator=jt.Generator().manual_seed(3))
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float64 and a.min() >= -2 and a.max() <= 2
    jt.manual_seed(7)
    c = _filled(init.trunc_normal_, (50, 40))
    jt.manual_seed(7)
    np.testing.assert_array_equal(c, _filled(init.trunc_normal_, (50, 40)))
    view = jt.zeros(6, 8)[:, ::2]  # a non-contiguous target
    init.trunc_normal_(view, mean=5.0, a=4.0, b=6.0)
    assert 4.0 <= values(view).min() and values(view).max() <= 6.0


def test_trunc_normal_warns_as_torch():
    with pytest.warns(UserWarning, match="mean is more than 2 std from") as expected:
        torch.nn.init.trunc_normal_(torch.empty(3), mean=5.0, a=-1.0, b=1.0)
    with pytest.warns(UserWarning) as got:
        init.trunc_normal_(jt.empty(3), mean=5.0, a=-1.0, b=1.0)
    assert str(got[0].message) == str(expected[0].message)
    assert got[0].filename == __file__  # stacklevel points at the caller


# -- eye_, dirac_ ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (0, 3)])
@pytest.mark.parametrize("dtype", [jt.float32, jt.float64, jt.int64])
def test_eye_exactly_as_torch(shape, dtype):
    expected = torch.nn.init.eye_(torch.full(shape, 7, dtype=getattr(torch, dtype.name)))
    np.testing.assert_array_equal(_filled(init.eye_, shape, dtype), expected.numpy())


@pytest.mark.parametrize("shape, groups", [
    ((3, 16, 5), 1), ((16, 3, 4), 1), ((4, 4, 3, 3), 1), ((6, 4, 3, 2), 2), ((6, 2, 3, 3), 3),
    ((2, 3, 3, 3, 3), 1), ((4, 1, 2, 3, 4), 2), ((0, 2, 3), 1),
])
def test_dirac_exactly_as_torch(shape, groups):
    expected = torch.nn.init.dirac_(torch.full(shape, 7.0), groups)
    got = _filled(init.dirac_, shape, groups=groups)
    np.testing.assert_array_equal(got, expected.numpy())
    ints = init.dirac_(jt.full(shape, 7, dtype=jt.int32), groups)
    np.testing.assert_array_equal(values(ints), expected.numpy().astype(np.int32))


def test_eye_dirac_errors_as_torch():
    for shape in [(3,), (2, 3, 4)]:
        _raises_as_torch(lambda shape=shape: init.eye_(jt.zeros(*shape)),
                         lambda shape=shape: torch.nn.init.eye_(torch.zeros(*shape)))
    for shape in [(3, 3), (1, 2, 3, 4, 5, 6)]:
        _raises_as_torch(lambda shape=shape: init.dirac_(jt.zeros(*shape)),
                         lambda shape=shape: torch.nn.init.dirac_(torch.zeros(*shape)))
    _raises_as_torch(lambda: init.dirac_(jt.zeros(5, 2, 3), groups=2),
                     lambda: torch.nn.init.dirac_(torch.zeros(5, 2, 3), groups=2))


# -- sparse_ ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("rows, cols, sparsity", [(100, 300, 0.1), (7, 500, 0.5), (10, 3, 0.0),
                                                 (10, 3, 1.0), (10, 4, 1.5), (10, 4, -0.25)])
def test_sparse_zeros_per_column_as_torch(rows, cols, sparsity):
    v = _filled(init.sparse_, (rows, cols), sparsity=sparsity, std=0.5,
                generator=jt.Generator().manual_seed(2))
    t = torch.nn.init.sparse_(torch.empty(rows, cols), sparsity, std=0.5).numpy()
    # every column has exactly ceil(sparsity * rows) zeros (as slicing a randperm counts them)
    np.testing.assert_array_equal((v == 0).sum(0), (t == 0).sum(0))
    nonzero = v[v != 0].astype(np.float64)
    if nonzero.size > 10000:
        assert abs(nonzero.mean()) < 0.02 and abs(nonzero.std() / 0.5 - 1) < 0.02
        # each row is zeroed about equally often: the zeros are a uniform subset per column
        per_row = (v == 0).sum(1) / cols
        assert np.abs(per_row - sparsity).max() < 0.06


def test_sparse_reproducible_and_errors():
    a = _filled(init.sparse_, (20, 30), sparsity=0.3, generator=jt.Generator().manual_seed(4))
    b = _filled(init.sparse_, (20, 30), sparsity=0.3, generator=jt.Generator().manual_seed(4))
    np.testing.assert_array_equal(a, b)
    for shape in [(3,), (2, 3, 4)]:
        _raises_as_torch(lambda shape=shape: init.sparse_(jt.zeros(*shape), 0.1),
                         lambda shape=shape: torch.nn.init.sparse_(torch.zeros(*shape), 0.1))


# -- orthogonal_ -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(6, 6), (10, 4), (4, 10), (6, 2, 3), (3, 2, 2, 2), (1, 5)])
@pytest.mark.parametrize("gain", [1, 2.5])
@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
def test_orthogonal_is_orthogonal_times_gain(shape, gain, dtype):
    w = _filled(init.orthogonal_, shape, dtype, gain=gain,
                generator=jt.Generator().manual_seed(5)).astype(np.float64)
    flat = w.reshape(shape[0], -1)
    rows, cols = flat.shape
    # the smaller side's Gram matrix is gain^2 I: orthonormal rows when rows < cols, else columns
    gram = flat @ flat.T if rows < cols else flat.T @ flat
    tol = 1e-5 if dtype is jt.float32 else 1e-12
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=tol * gain ** 2)
    t = torch.nn.init.orthogonal_(torch.empty(shape, dtype=getattr(torch, dtype.name)), gain)
    flat_t = t.numpy().astype(np.float64).reshape(rows, cols)
    np.testing.assert_allclose(np.linalg.svd(flat, compute_uv=False),
                               np.linalg.svd(flat_t, compute_uv=False), atol=tol * gain)


def test_orthogonal_is_haar_and_reproducible():
    a = _filled(init.orthogonal_, (8, 8), generator=jt.Generator().manual_seed(6))
    np.testing.assert_array_equal(
        a, _filled(init.orthogonal_, (8, 8), generator=jt.Generator().manual_seed(6)))
    # With R's diagonal signs fixed, Q is Haar: its entries average 0 with variance 1/n.
    g = jt.Generator().manual_seed(7)
    draws = np.stack([_filled(init.orthogonal_, (8, 8), jt.float64, generator=g)
                      for _ in range(200)])
    assert abs(draws.mean()) < 0.01 and abs(draws.var() * 8 - 1) < 0.05
    assert np.abs(draws[:, np.arange(8), np.arange(8)].mean()) < 0.03  # no positive diagonal


def test_orthogonal_empty_and_errors():
    empty = jt.zeros(0, 3)
    assert init.orthogonal_(empty) is empty
    _raises_as_torch(lambda: init.orthogonal_(jt.zeros(3)),
                     lambda: torch.nn.init.orthogonal_(torch.zeros(3)))


@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "xavier_uniform",
                                  "xavier_normal", "kaiming_uniform", "kaiming_normal",
                                  "orthogonal", "sparse", "dirac"])
def test_deprecated_names_warn_as_torch_and_run_the_new_ones(name):
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
    shape = (4, 3, 3) if name == "dirac" else (4, 3)
    with pytest.warns(FutureWarning) as theirs:
        getattr(torch.nn.init, name)(torch.empty(shape), *args)
    jt.manual_seed(3)
    with pytest.warns(FutureWarning) as mine:
        got = getattr(init, name)(jt.empty(shape), *args)
    assert str(mine[0].message) == str(theirs[0].message).replace("torch.", "jitensor.")
    jt.manual_seed(3)
    expected = getattr(init, name + "_")(jt.empty(shape), *args)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
