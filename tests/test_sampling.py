"""Random sampling (jitensor/ops/sampling.py): bernoulli, normal, poisson, multinomial,
randperm, randint_like and the Tensor's in-place samplers. torch is the oracle for shapes,
dtypes, gradients and the errors (their types, both libraries asked the same bad question);
the values are checked statistically with fixed seeds (not torch's numbers: jitensor's
generator is its own), with bounds of 5-6 standard errors, which pass on every seed of a
correct sampler and fail on a wrong mean, variance or shape of distribution."""
import math
import re

import numpy as np
import pytest
from conftest import to_torch_dtype

import jitensor as jt

torch = pytest.importorskip("torch")

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")


def gen(seed=0):
    return jt.Generator().manual_seed(seed)


def chi2(counts, expected):
    """Pearson's statistic and a generous bound (df + 6 sqrt(2 df), beyond the 1e-6 quantile
    for every df used here)."""
    counts, expected = np.asarray(counts, float), np.asarray(expected, float)
    keep = expected > 0
    assert counts[~keep].sum() == 0, "a category of probability 0 was drawn"
    stat = ((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum()
    df = keep.sum() - 1
    return stat, df + 6 * math.sqrt(2 * df)


def assert_mean_var(x, mean, var, n_sigma=6):
    x = np.asarray(x, np.float64).ravel()
    n = x.size
    assert abs(x.mean() - mean) < n_sigma * math.sqrt(var / n), (x.mean(), mean)
    # the sample variance's standard error, from the normal approximation (+ a margin)
    assert abs(x.var() - var) < n_sigma * var * math.sqrt(2 / n) * 1.5, (x.var(), var)


# -- determinism: same seed, same draw; the generator advances -----------------------------------
DRAWS = {
    "bernoulli": lambda g: jt.bernoulli(jt.full((50,), 0.5), generator=g),
    "bernoulli_p": lambda g: jt.bernoulli(jt.zeros(50), 0.3, generator=g),
    "normal_tt": lambda g: jt.normal(jt.zeros(6), jt.ones(6), generator=g),
    "normal_tf": lambda g: jt.normal(jt.zeros(6), 2.0, generator=g),
    "normal_ft": lambda g: jt.normal(1.0, jt.ones(6), generator=g),
    "normal_ffs": lambda g: jt.normal(1.0, 2.0, (6,), generator=g),
    "poisson": lambda g: jt.poisson(jt.tensor([0.5, 4.0, 20.0, 1e4]), generator=g),
    "multinomial": lambda g: jt.multinomial(jt.ones(2, 20), 5, generator=g),
    "multinomial_r": lambda g: jt.multinomial(jt.ones(20), 5, True, generator=g),
    "randperm": lambda g: jt.randperm(20, generator=g),
    "randint_like": lambda g: jt.randint_like(jt.zeros(8), 100, generator=g),
    "uniform_": lambda g: jt.zeros(8).uniform_(-1, 1, generator=g),
    "normal_": lambda g: jt.zeros(8).normal_(generator=g),
    "exponential_": lambda g: jt.zeros(8).exponential_(generator=g),
    "geometric_": lambda g: jt.zeros(8).geometric_(0.2, generator=g),
    "log_normal_": lambda g: jt.zeros(8).log_normal_(generator=g),
    "cauchy_": lambda g: jt.zeros(8).cauchy_(generator=g),
    "random_": lambda g: jt.zeros(8, dtype=jt.int64).random_(generator=g),
    "random_wide": lambda g: jt.zeros(8, dtype=jt.int64).random_(-2 ** 63, None, generator=g),
    "bernoulli_": lambda g: jt.zeros(50).bernoulli_(0.5, generator=g),
}


@pytest.mark.parametrize("name", DRAWS)
def test_same_seed_same_draw_and_the_generator_advances(name):
    draw = DRAWS[name]
    g = gen(7)
    first, second = draw(g).numpy(), draw(g).numpy()
    np.testing.assert_array_equal(first, draw(gen(7)).numpy())
    assert not np.array_equal(first, second), "the generator did not advance"
    # without generator=, the default generator (manual_seed) decides
    jt.manual_seed(11)
    a = draw(None).numpy()
    jt.manual_seed(11)
    np.testing.assert_array_equal(a, draw(None).numpy())


# -- shapes and dtypes, as torch's ---------------------------------------------------------------
def _same_kind(mine, theirs):
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert to_torch_dtype(mine.dtype) == theirs.dtype
    assert mine.requires_grad == theirs.requires_grad


@pytest.mark.parametrize("call", [
    "bernoulli(T([[0.2, 0.8]], dtype=float64))", "bernoulli(T([0.2, 0.8]), 0.5)",
    "normal(T([1., 2.]), T([[1.], [2.]]))", "normal(T([1., 2.], dtype=float64), T([1., 2.]))",
    "normal(T([1., 2.], dtype=float64), 2.)", "normal(2., T([[1., 2.]]))",
    "normal(1, 2, (2, 3))", "normal(1., 2., size=(4,), dtype=float64)",
    "normal(1., 2., (3,), requires_grad=True)", "poisson(T([1., 20.], dtype=float64))",
    "poisson(T([[1.], [2.]]))", "multinomial(T([1., 2., 3.]), 2)",
    "multinomial(T([[1., 2., 3.]] * 4), 5, True)", "multinomial(zeros(0, 3), 2)",
    "randperm(7)", "randperm(7, dtype=float32)", "randperm(0)", "randperm(5, dtype=int16)",
    "randperm(4, dtype=float64, requires_grad=True)", "randint_like(zeros(2, 3), 5)",
    "randint_like(zeros(2, dtype=int32), 2, 9)", "randint_like(zeros(2), 9, dtype=int8)",
    "randint_like(zeros(2), high=9)", "randint_like(zeros(2), low=2, high=9)",
])
def test_shapes_and_dtypes_match_torch(call):
    env = lambda lib: {"T": lib.tensor, "zeros": lib.zeros, "float64": lib.float64,  # noqa: E731
                       "float32": lib.float32, "int32": lib.int32, "int16": lib.int16,
                       "int8": lib.int8}
    mine = eval("jt." + call, {"jt": jt, **env(jt)})
    theirs = eval("torch." + call, {"torch": torch, **env(torch)})
    _same_kind(mine, theirs)


def test_out_and_in_place_forms_keep_the_tensor():
    out = jt.empty(3, dtype=jt.int64)
    assert jt.multinomial(jt.ones(5), 3, out=out) is out and len(set(out.tolist())) == 3
    out = jt.empty(6, dtype=jt.float32)
    assert jt.randperm(6, out=out) is out
    assert sorted(out.tolist()) == list(range(6))
    out = jt.empty(4, dtype=jt.float64)
    assert jt.normal(1.0, 1.0, (4,), out=out) is out
    assert jt.normal(jt.zeros(4, dtype=jt.float64), 1.0, out=out) is out
    assert jt.bernoulli(jt.full((4,), 0.5, dtype=jt.float64), out=out) is out
    for method, args in [("uniform_", ()), ("normal_", ()), ("exponential_", ()),
                         ("geometric_", (0.5,)), ("log_normal_", ()), ("cauchy_", ()),
                         ("random_", ()), ("bernoulli_", ())]:
        x = jt.zeros(4, 4)
        x._autograd()  # a tensor with autograd state counts its versions
        version = x._version
        assert getattr(x, method)(*args) is x
        assert x._version == version + 1, method
    # a strided view is written in place, through its base
    base = jt.zeros(4, 6)
    view = base[:, ::2]
    view.uniform_(1, 2)
    assert (base[:, ::2] >= 1).all().item() and (base[:, 1::2] == 0).all().item()
    view.random_(3, 5)
    assert set(base[:, ::2].numpy().ravel().tolist()) <= {3.0, 4.0}


# -- statistics ----------------------------------------------------------------------------------
def test_bernoulli_frequencies():
    p = jt.tensor([0.0, 1e-9, 0.1, 0.5, 0.9, 1.0], dtype=jt.float64)
    n = 20000
    x = jt.bernoulli(p.expand(n, 6).contiguous(), generator=gen(1)).numpy()
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert x[:, 0].sum() == 0 and x[:, 5].sum() == n and x[:, 1].sum() <= 1
    for j, q in [(2, 0.1), (3, 0.5), (4, 0.9)]:
        assert abs(x[:, j].mean() - q) < 6 * math.sqrt(q * (1 - q) / n)
    y = jt.zeros(n, dtype=jt.int64).bernoulli_(0.25, generator=gen(2)).numpy()
    assert abs(y.mean() - 0.25) < 6 * math.sqrt(0.25 * 0.75 / n)
    z = jt.zeros(n // 4, 4, dtype=jt.bool).bernoulli_(jt.tensor([0.0, 0.2, 0.7, 1.0]),
                                                       generator=gen(3)).numpy()
    assert z.dtype == np.bool_ and not z[:, 0].any() and z[:, 3].all()
    assert abs(z[:, 2].mean() - 0.7) < 6 * math.sqrt(0.21 / (n // 4))


def test_normal_moments_for_every_form():
    n = 20000
    mean = jt.tensor([-3.0, 0.0, 5.0], dtype=jt.float64)
    std = jt.tensor([0.5, 1.0, 4.0], dtype=jt.float64)
    x = jt.normal(mean.expand(n, 3), std.expand(n, 3), generator=gen(1)).numpy()
    for j in range(3):
        assert_mean_var(x[:, j], mean[j].item(), std[j].item() ** 2)
    assert_mean_var(jt.normal(mean.expand(n, 3), 2.0, generator=gen(2)).numpy()[:, 2], 5.0, 4.0)
    assert_mean_var(jt.normal(1.0, std.expand(n, 3), generator=gen(3)).numpy()[:, 0], 1.0, 0.25)
    assert_mean_var(jt.normal(2.0, 3.0, (n,), generator=gen(4)).numpy(), 2.0, 9.0)
    assert_mean_var(jt.zeros(n).normal_(-1.0, 0.5, generator=gen(5)).numpy(), -1.0, 0.25)
    assert (jt.normal(jt.arange(4.0), 0.0).numpy() == np.arange(4.0)).all()


@pytest.mark.parametrize("rate", [0.3, 3.0, 9.99, 10.0, 42.0, 1e3, 1e7])
def test_poisson_mean_and_variance(rate):
    n = 20000
    x = jt.poisson(jt.full((n,), rate, dtype=jt.float64), generator=gen(int(rate * 7))).numpy()
    assert (x >= 0).all() and (x == np.round(x)).all()
    assert_mean_var(x, rate, rate)


@pytest.mark.parametrize("rate", [2.5, 17.0])
def test_poisson_matches_its_pmf(rate):
    """Chi-square of the histogram against the exact pmf: a sampler with the right mean and
    variance but the wrong shape (a rounded normal, a bad squeeze) fails here."""
    n = 20000
    x = jt.poisson(jt.full((n,), rate), generator=gen(5)).numpy().astype(int)
    top = int(rate + 6 * math.sqrt(rate)) + 1
    ks = np.arange(top)
    pmf = np.exp(-rate + ks * math.log(rate) - np.array([math.lgamma(k + 1) for k in ks]))
    counts = np.bincount(np.minimum(x, top), minlength=top + 1)
    expected = np.append(pmf, 1 - pmf.sum()) * n
    # pool the sparse tail so that every expected count is at least 5
    while expected[-1] < 5:
        expected[-2] += expected[-1]
        counts[-2] += counts[-1]
        expected, counts = expected[:-1], counts[:-1]
    stat, bound = chi2(counts, expected)
    assert stat < bound, (stat, bound)


def test_poisson_edges_and_dtypes():
    x = jt.poisson(jt.tensor([0.0, float("inf"), 0.0, 1e15], dtype=jt.float64), generator=gen())
    got = x.numpy()
    assert got[0] == 0 and got[2] == 0 and got[1] == np.inf
    assert abs(got[3] - 1e15) < 6 * math.sqrt(1e15)
    x = jt.poisson(jt.full((3, 4), 12.0))
    assert x.dtype is jt.float32 and x.shape == (3, 4)


def test_multinomial_with_replacement_frequencies():
    w = jt.tensor([[1.0, 0.0, 2.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0, 5.0]])
    n = 12000
    x = jt.multinomial(w, n, replacement=True, generator=gen(2)).numpy()
    assert x.shape == (2, n) and x.dtype == np.int64
    stat, bound = chi2(np.bincount(x[0], minlength=5), np.array([1, 0, 2, 3, 0]) / 6 * n)
    assert stat < bound
    assert (x[1] == 4).all()
    # a single row, float64, one heavy category
    y = jt.multinomial(jt.tensor([1e-3, 1.0, 0.0], dtype=jt.float64), 4000, True,
                       generator=gen(3)).numpy()
    assert (y != 2).all() and abs((y == 0).mean() - 1e-3 / 1.001) < 0.003


def test_multinomial_without_replacement_is_sequential_sampling():
    """Distinct draws per row in the order drawn: P(first = i) = w_i / W and P(second = j) =
    sum_i P(first = i) w_j / (W - w_i)."""
    w = np.array([1.0, 2.0, 3.0, 0.0])
    n = 12000
    x = jt.multinomial(jt.tensor(w).expand(n, 4).contiguous(), 2, generator=gen(4)).numpy()
    assert (x[:, 0] != x[:, 1]).all() and (x != 3).all()
    p1 = w / w.sum()
    p2 = np.array([sum(p1[i] * w[j] / (w.sum() - w[i]) for i in range(4) if i != j)
                   for j in range(4)])
    for col, p in ((0, p1), (1, p2)):
        stat, bound = chi2(np.bincount(x[:, col], minlength=4), p * n)
        assert stat < bound, (col, stat, bound)
    # zero-weight categories follow the positive ones once those run out (torch's CPU too)
    z = jt.multinomial(jt.tensor([[0.0, 3.0, 0.0, 1.0]] * 200), 4, generator=gen(6)).numpy()
    assert (np.sort(z[:, :2], 1) == [1, 3]).all() and (np.sort(z[:, 2:], 1) == [0, 2]).all()
    assert 0 < (z[:, 2] == 0).sum() < 200
    # every category once when num_samples equals their number
    full = jt.multinomial(jt.tensor([[5.0, 1.0, 1.0, 1.0]] * 50), 4, generator=gen(5)).numpy()
    assert (np.sort(full, 1) == np.arange(4)).all()


def test_randperm_is_uniform_over_permutations():
    g = gen(9)
    perms = [tuple(jt.randperm(4, generator=g).tolist()) for _ in range(1200)]
    assert all(sorted(p) == [0, 1, 2, 3] for p in perms)
    counts = np.array(list({p: perms.count(p) for p in set(perms)}.values()))
    assert len(counts) == 24
    stat, bound = chi2(counts, np.full(24, 1200 / 24))
    assert stat < bound
    big = jt.randperm(1000, generator=g).numpy()
    assert (np.sort(big) == np.arange(1000)).all()


def test_in_place_continuous_samplers_moments():
    n = 20000
    u = jt.zeros(n, dtype=jt.float64).uniform_(-2, 3, generator=gen(1)).numpy()
    assert u.min() >= -2 and u.max() < 3
    assert_mean_var(u, 0.5, 25 / 12)
    e = jt.zeros(n).exponential_(4.0, generator=gen(2)).numpy()
    assert e.min() >= 0 and e.dtype == np.float32
    assert_mean_var(e, 0.25, 1 / 16)
    ln = jt.zeros(n, dtype=jt.float64).log_normal_(0.5, 0.25, generator=gen(3)).numpy()
    assert ln.min() > 0
    assert_mean_var(np.log(ln), 0.5, 0.0625)
    c = jt.zeros(n, dtype=jt.float64).cauchy_(2.0, 3.0, generator=gen(4)).numpy()
    q1, med, q3 = np.quantile(c, [0.25, 0.5, 0.75])  # Cauchy quartiles: median -+ sigma
    assert abs(med - 2.0) < 0.15 and abs(q1 + 1.0) < 0.2 and abs(q3 - 5.0) < 0.2


def test_geometric_counts_trials():
    n = 20000
    p = 0.3
    x = jt.zeros(n, dtype=jt.int64).geometric_(p, generator=gen(5)).numpy()
    assert x.min() >= 1
    assert_mean_var(x, 1 / p, (1 - p) / p ** 2)
    top = 12
    expected = np.array([(1 - p) ** (k - 1) * p for k in range(1, top)] + [(1 - p) ** (top - 1)])
    counts = np.bincount(np.minimum(x, top) - 1, minlength=top)
    stat, bound = chi2(counts, expected * n)
    assert stat < bound
    f = jt.zeros(100, dtype=jt.float32).geometric_(0.9).numpy()
    assert f.dtype == np.float32 and (f >= 1).all() and (f == np.round(f)).all()


@pytest.mark.parametrize("dtype, lo, hi", [
    (jt.uint8, 0, 255), (jt.int8, 0, 127), (jt.int16, 0, 2 ** 15 - 1), (jt.bool, 0, 1),
    (jt.float32, 0, 2 ** 24), (jt.float64, 0, 2 ** 53), (jt.int32, 0, 2 ** 31 - 1),
])
def test_random_default_range_per_dtype(dtype, lo, hi):
    x = jt.zeros(4000, dtype=dtype).random_(generator=gen(6)).numpy().astype(np.float64)
    assert x.min() >= lo and x.max() <= hi and (x == np.round(x)).all()
    if hi - lo < 1000:  # small ranges: both ends are drawn, and the spread is uniform
        assert x.min() == lo and x.max() == hi
    assert abs(x.mean() - (lo + hi) / 2) < 6 * (hi - lo) / math.sqrt(12 * 4000)


def test_random_ranges_and_int64_extremes():
    x = jt.zeros(6000, dtype=jt.int16).random_(-3, 4, generator=gen(1)).numpy()
    stat, bound = chi2(np.bincount(x + 3, minlength=7), np.full(7, 6000 / 7))
    assert stat < bound and x.min() == -3 and x.max() == 3
    y = jt.zeros(6000).random_(5, generator=gen(2)).numpy()
    assert set(np.unique(y)) == {0.0, 1.0, 2.0, 3.0, 4.0}
    z = jt.zeros(2000, dtype=jt.int64).random_(generator=gen(3)).numpy()
    assert z.min() >= 0 and z.max() > 2 ** 62  # [0, 2^63 - 1]
    w = jt.zeros(2000, dtype=jt.int64).random_(-2 ** 63, None, generator=gen(4)).numpy()
    assert w.min() < -2 ** 62 and w.max() > 2 ** 62  # the full range, both signs
    v = jt.zeros(2000, dtype=jt.int64).random_(-5, 2 ** 63 - 1, generator=gen(5)).numpy()
    assert v.min() >= -5 and v.max() < 2 ** 63 - 1 and v.max() > 2 ** 62  # wider than 2^63
    s = jt.zeros(500, dtype=jt.int64).random_(-2 ** 63, -2 ** 63 + 2, generator=gen(6)).numpy()
    assert set(s.tolist()) == {-2 ** 63, -2 ** 63 + 1}
    t = jt.zeros(2000, dtype=jt.int8).random_(**{"from": -100}, generator=gen(7)).numpy()
    assert t.min() >= -100 and t.max() == 127 and t.min() < -90
    r = jt.zeros(10).random_(to=3).numpy()
    assert r.min() >= 0 and r.max() <= 2


def test_randint_like_range_and_dtype():
    x = jt.randint_like(jt.zeros(3000, dtype=jt.int32), -2, 3, generator=gen(1))
    assert x.dtype is jt.int32
    values = x.numpy()
    assert set(np.unique(values)) == {-2, -1, 0, 1, 2}
    f = jt.randint_like(jt.zeros(100, dtype=jt.float64), 4).numpy()
    assert set(np.unique(f)) <= {0.0, 1.0, 2.0, 3.0}


# -- gradients: samples are constants of their parameters, as in torch ---------------------------
@pytest.mark.parametrize("call", [
    lambda lib, a, b: lib.normal(a, b), lambda lib, a, b: lib.normal(a, 2.0),
    lambda lib, a, b: lib.normal(1.0, b), lambda lib, a, b: lib.normal(a[:1], b.expand(3, 2)),
    lambda lib, a, b: lib.bernoulli(b / 4), lambda lib, a, b: lib.poisson(b),
])
def test_sample_gradients_are_zero_like_torch(call):
    mine = [jt.tensor([0.5, 1.5], requires_grad=True) for _ in range(2)]
    theirs = [torch.tensor([0.5, 1.5], requires_grad=True) for _ in range(2)]
    y, ty = call(jt, *mine), call(torch, *theirs)
    assert y.requires_grad == ty.requires_grad is True
    y.sum().backward()
    ty.sum().backward()
    for m, t in zip(mine, theirs, strict=False):
        if t.grad is None:
            assert m.grad is None
        else:
            np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


def test_in_place_sampler_on_a_leaf_that_requires_grad_raises_as_torch():
    for lib in (jt, torch):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            lib.zeros(3, requires_grad=True).uniform_()
    x = jt.zeros(3, requires_grad=True)
    with jt.no_grad():
        x.normal_()
    assert x.requires_grad and (x != 0).any().item()


# -- errors: the type torch raises, a message naming the problem ---------------------------------
ERRORS = [
    ("multinomial(T([-1., 2.]), 1)", RuntimeError, "inf.*nan.*< 0"),
    ("multinomial(T([1., float('nan')]), 1)", RuntimeError, "inf.*nan.*< 0"),
    ("multinomial(T([1., float('inf')]), 1)", RuntimeError, "inf.*nan.*< 0"),
    ("multinomial(T([0., 0.]), 1)", RuntimeError, "sum of probabilities <= 0"),
    ("multinomial(T([[1., 2.], [0., 0.]]), 1, True)", RuntimeError, "sum of probabilities"),
    ("multinomial(T([1., 2.]), 3)", RuntimeError, "n_sample > prob_dist.size"),
    ("multinomial(T([[[1.]]]), 1)", RuntimeError, "1 or 2 dim"),
    ("multinomial(T([1., 2.]), 0)", RuntimeError, "n_sample <= 0"),
    ("multinomial(T([1, 2]), 1)", RuntimeError, "floating-point"),
    ("poisson(T([-1.]))", RuntimeError, "non-negative"),
    ("poisson(T([float('nan')]))", RuntimeError, "non-negative"),
    ("poisson(T([1, 2]))", NotImplementedError, "floating-point"),
    ("normal(T([1.]), T([-1.]))", RuntimeError, "all elements of std >= 0.0"),
    ("normal(T([1.]), -1.)", RuntimeError, "std >= 0.0, but found std -1"),
    ("normal(1., -1., (2,))", RuntimeError, "std >= 0.0"),
    ("normal(1., T([-1.]))", RuntimeError, "all elements of std"),
    ("normal(T([1., 2.]), T([1., 2., 3.]))", RuntimeError, "must match"),
    ("normal(T([1, 2]), T([1, 2]))", NotImplementedError, "floating-point"),
    ("bernoulli(T([2.]))", RuntimeError, r"\[0, 1\]"),
    ("bernoulli(T([-0.5]))", RuntimeError, r"\[0, 1\]"),
    ("bernoulli(T([0.5]), 2.)", RuntimeError, "p=2"),
    ("bernoulli(T([1, 0]))", NotImplementedError, "floating-point"),
    ("zeros(3).bernoulli_(2.)", RuntimeError, "p=2"),
    ("zeros(3).bernoulli_(T([0.5, 0.5]))", RuntimeError, "expand"),
    ("zeros(3).bernoulli_(T([0.5, 0.5, 2.]))", RuntimeError, r"\[0, 1\]"),
    ("zeros(3).exponential_(0.)", RuntimeError, "lambda > 0.0, but found lambda=0"),
    ("zeros(3, dtype=int64).exponential_()", RuntimeError, "floating-point"),
    ("zeros(3).geometric_(0.)", RuntimeError, r"\(0, 1\), but got p=0"),
    ("zeros(3).geometric_(1.)", RuntimeError, "p=1"),
    ("zeros(3).log_normal_(1., 0.)", RuntimeError, "std > 0.0, but found std=0"),
    ("zeros(3, dtype=int64).log_normal_()", NotImplementedError, "floating-point"),
    ("zeros(3).cauchy_(0., -1.)", RuntimeError, "sigma > 0.0, but found sigma=-1"),
    ("zeros(3, dtype=int64).cauchy_()", RuntimeError, "floating-point"),
    ("zeros(3).uniform_(2., 1.)", RuntimeError, "from=2.0 > to=1.0"),
    ("zeros(3, dtype=int64).uniform_()", NotImplementedError, "floating-point"),
    ("zeros(3).normal_(0., -1.)", RuntimeError, "std >= 0.0"),
    ("zeros(3, dtype=int64).normal_()", NotImplementedError, "floating-point"),
    ("zeros(3).random_(5, 2)", RuntimeError, "from=5 >= to=2"),
    ("zeros(3).random_(0)", RuntimeError, "from=0 >= to=0"),
    ("zeros(3, dtype=uint8).random_(300)", RuntimeError, "to - 1.*out of bounds"),
    ("zeros(3, dtype=uint8).random_(-1, 3)", RuntimeError, "from.*out of bounds"),
    ("zeros(3, dtype=int8).random_(-200, 3)", RuntimeError, "from.*out of bounds"),
    ("zeros(3, dtype=bool).random_(3)", RuntimeError, "to - 1.*out of bounds"),
    ("zeros(3).random_(1.5)", TypeError, "must be int"),
    ("randperm(-1)", RuntimeError, "negative dimension"),
    ("randperm(300, dtype=uint8)", RuntimeError, "overflow"),
    ("randperm(5, dtype=bool)", NotImplementedError, "bool"),
    ("randperm(5, requires_grad=True)", RuntimeError, "floating point"),
    ("randperm(2**24 + 2, dtype=float32)", RuntimeError, r"greater than 2\^24\+1"),
    ("randperm(5.)", TypeError, "must be int"),
    ("randint_like(zeros(3), 5, 2)", RuntimeError, "from=5 >= to=2"),
]


@pytest.mark.parametrize("call, kind, message", ERRORS)
def test_errors_match_torch(call, kind, message):
    def env(lib):
        return {"T": lib.tensor, "zeros": lib.zeros, "int64": lib.int64, "uint8": lib.uint8,
                "int8": lib.int8, "bool": lib.bool, "float32": lib.float32}
    with pytest.raises(kind):
        eval("torch." + call, {"torch": torch, **env(torch)})
    with pytest.raises(kind) as info:
        eval("jt." + call, {"jt": jt, **env(jt)})
    assert re.search(message, str(info.value)), str(info.value)


def test_float_random_beyond_exact_integers_warns_as_torch():
    with pytest.warns(UserWarning, match="out of bounds"):
        torch.zeros(3).random_(2 ** 25)
    with pytest.warns(UserWarning, match="out of bounds"):
        jt.zeros(3).random_(2 ** 25)


def test_normal_needs_a_size_with_numbers():
    with pytest.raises(TypeError, match="size"):
        jt.normal(0.0, 1.0)
    with pytest.raises(TypeError, match="size"):
        jt.normal(jt.zeros(2), 1.0, (2,))


# -- CUDA: the same stream, so the same draws as on the CPU --------------------------------------
@needs_cuda
def test_samplers_on_cuda_draw_what_the_cpu_draws():
    cases = [
        lambda dev, g: jt.bernoulli(jt.full((8,), 0.5, device=dev), generator=g),
        lambda dev, g: jt.normal(jt.zeros(6, device=dev), jt.ones(6, device=dev), generator=g),
        lambda dev, g: jt.poisson(jt.tensor([0.5, 3.0, 25.0], device=dev), generator=g),
        lambda dev, g: jt.multinomial(jt.ones(2, 6, device=dev), 3, generator=g),
        lambda dev, g: jt.multinomial(jt.ones(6, device=dev), 4, True, generator=g),
        lambda dev, g: jt.randperm(8, device=dev, generator=g),
        lambda dev, g: jt.zeros(6, device=dev).exponential_(generator=g),
        lambda dev, g: jt.zeros(6, dtype=jt.int32, device=dev).random_(-4, 4, generator=g),
        lambda dev, g: jt.zeros(6, device=dev).bernoulli_(
            jt.tensor([0.2, 0.9, 0.5, 0.5, 0.0, 1.0], device=dev), generator=g),
    ]
    for case in cases:
        cuda, cpu = case("cuda", gen(3)), case("cpu", gen(3))
        assert cuda.device.type == "cuda" and cuda.dtype is cpu.dtype
        np.testing.assert_allclose(cuda.cpu().numpy(), cpu.numpy(), rtol=1e-6)
