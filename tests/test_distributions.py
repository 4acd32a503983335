"""jitensor.distributions against torch.distributions with identical parameters: log_prob,
cdf/icdf, entropy, moments, shapes, expand, enumerate_support, KL values, validate_args
errors and gradients; samples (jitensor's own draws) checked statistically with a fixed
seed."""
import math

import numpy as np
import pytest

import jitensor as jt
import jitensor.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions

RNG = np.random.default_rng(5)
POS = RNG.uniform(0.5, 3.0, (2, 3))
POS2 = RNG.uniform(0.5, 3.0, (2, 3))
REAL = RNG.standard_normal((2, 3))
PROB = RNG.uniform(0.1, 0.9, (2, 3))
SIMPLEX = RNG.dirichlet(np.ones(4), (2,))
LOWER = np.array([[1.0, 0, 0], [0.5, 2.0, 0], [-0.3, 0.2, 0.7]])
COV = LOWER @ LOWER.T

# name: (constructor arguments, keyword arguments (numpy arrays become tensors of both kinds))
CASES = {
    "Normal": ((REAL, POS), {}),
    "Bernoulli": ((), {"probs": PROB}),
    "Bernoulli-logits": ((), {"logits": REAL}),
    "Categorical": ((), {"probs": SIMPLEX}),
    "Categorical-logits": ((), {"logits": np.log(SIMPLEX) + 0.3}),
    "OneHotCategorical": ((), {"probs": SIMPLEX}),
    "Uniform": ((REAL, REAL + POS), {}),
    "Beta": ((POS, POS2), {}),
    "Gamma": ((POS, POS2), {}),
    "Dirichlet": ((SIMPLEX * 5,), {}),
    "Exponential": ((POS,), {}),
    "Laplace": ((REAL, POS), {}),
    "LogNormal": ((REAL * 0.3, POS * 0.3), {}),
    "Poisson": ((POS * 4,), {}),
    "Binomial": ((), {"total_count": np.array([[5.0], [30.0]]), "probs": PROB}),
    "Binomial-logits": ((), {"total_count": 12, "logits": REAL}),
    "MultivariateNormal": ((REAL[0],), {"covariance_matrix": COV}),
    "MultivariateNormal-precision": ((REAL,), {"precision_matrix": np.linalg.inv(COV)}),
    "MultivariateNormal-tril": ((REAL,), {"scale_tril": LOWER}),
    "Cauchy": ((REAL, POS), {}),
    "Gumbel": ((REAL, POS), {}),
    "HalfNormal": ((POS,), {}),
    "HalfCauchy": ((POS,), {}),
    "Geometric": ((PROB,), {}),
    "Pareto": ((POS, POS2 + 2), {}),
    "StudentT": ((POS + 2, REAL, POS2), {}),
    "Chi2": ((POS * 2,), {}),
    "Weibull": ((POS, POS2), {}),
    "Kumaraswamy": ((POS, POS2), {}),
    "InverseGamma": ((POS + 2, POS2), {}),
    "FisherSnedecor": ((POS + 4, POS2 + 4), {}),
    "ContinuousBernoulli": ((PROB,), {}),
    "VonMises": ((REAL, POS), {}),
    "NegativeBinomial": ((POS * 3, PROB), {}),
    "Multinomial": ((10, SIMPLEX), {}),
    "LowRankMultivariateNormal": ((REAL, RNG.standard_normal((2, 3, 2)), POS), {}),
}
# sample-statistics tolerances in standard errors would need variances torch lacks for some;
# these are in units of the analytic standard deviation (n = 20000 draws: 0.03 is ~4 sigma)
HEAVY_TAILED = {"Cauchy", "HalfCauchy", "Pareto", "StudentT", "FisherSnedecor", "InverseGamma",
                "LogNormal", "Categorical", "Categorical-logits",
                "VonMises"}  # (and an angle's linear mean is not its circular mean)


def _both(name):
    args, kwargs = CASES[name]
    cls = name.split("-")[0]

    def conv(f, v):
        return f(v) if isinstance(v, np.ndarray) else v

    mine = getattr(D, cls)(*[conv(jt.tensor, a) for a in args],
                           **{k: conv(jt.tensor, v) for k, v in kwargs.items()})
    theirs = getattr(TD, cls)(*[conv(torch.tensor, a) for a in args],
                              **{k: conv(torch.tensor, v) for k, v in kwargs.items()})
    return mine, theirs


def _close(mine, theirs, rtol=1e-7, atol=1e-9):
    assert isinstance(mine, jt.Tensor), type(mine)
    assert tuple(mine.shape) == tuple(theirs.shape), (mine.shape, theirs.shape)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                               atol=atol, equal_nan=True)


def _jt(x):
    return jt.tensor(x.detach().numpy())


def _value(theirs):
    torch.manual_seed(0)
    return theirs.sample((5,))


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    mine, theirs = _both(name)
    assert mine.batch_shape == theirs.batch_shape
    assert mine.event_shape == theirs.event_shape
    assert mine.has_rsample == theirs.has_rsample
    assert type(mine.support).__name__ == type(theirs.support).__name__
    x = _value(theirs)
    _close(mine.log_prob(_jt(x)), theirs.log_prob(x))
    for attr in ("mean", "variance", "stddev", "mode"):
        try:
            expected = getattr(theirs, attr)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(mine, attr)
            continue
        _close(getattr(mine, attr), expected)
    for method in ("entropy", "perplexity"):
        try:
            expected = getattr(theirs, method)()
        except NotImplementedError:
            continue
        _close(getattr(mine, method)(), expected, rtol=1e-6)
    for method in ("cdf", "icdf"):
        arg = x if method == "cdf" else torch.tensor(PROB[0])
        try:
            expected = getattr(theirs, method)(arg)
        except NotImplementedError:
            continue
        _close(getattr(mine, method)(_jt(arg)), expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_expand(name):
    mine, theirs = _both(name)
    shape = (4, *theirs.batch_shape)
    e_mine, e_theirs = mine.expand(shape), theirs.expand(shape)
    assert e_mine.batch_shape == e_theirs.batch_shape == shape
    assert type(e_mine) is type(mine)
    x = _value(e_theirs)
    _close(e_mine.log_prob(_jt(x)), e_theirs.log_prob(x))
    jt.manual_seed(1)
    assert tuple(e_mine.sample((2,)).shape) == tuple(e_theirs.sample((2,)).shape)


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if n not in HEAVY_TAILED])
def test_sample_statistics(name):
    mine, _ = _both(name)
    jt.manual_seed(1234)
    n = 20000
    s = mine.sample((n,))
    assert tuple(s.shape) == (n, *mine.batch_shape, *mine.event_shape)
    s = s.to(jt.float64)
    sd = mine.stddev.numpy()
    assert np.all(np.abs(s.mean(0).numpy() - mine.mean.numpy()) <= 0.03 * sd + 1e-12), name
    rel = s.var(0).numpy() / mine.variance.numpy()
    assert np.all(np.abs(rel - 1) < 0.15), (name, rel)
    jt.manual_seed(1234)
    assert np.array_equal(mine.sample((n,)).numpy(), s.to(mine.mean.dtype).numpy())
    assert mine.support.check(mine.sample((3,))).all().item()


@pytest.mark.parametrize("name", ["Bernoulli", "Categorical", "OneHotCategorical",
                                  "Binomial-logits"])
def test_enumerate_support(name):
    mine, theirs = _both(name)
    assert mine.has_enumerate_support
    for expand in (True, False):
        _close(mine.enumerate_support(expand), theirs.enumerate_support(expand))


def _grad_params(name):
    """Both distributions built from parameters that require grad, and those parameters."""
    args, kwargs = CASES[name]
    cls = name.split("-")[0]
    jp, tp = [], []

    def conv(v, f, out):
        if isinstance(v, np.ndarray):
            t = f(v)
            t.requires_grad_(True)
            out.append(t)
            return t
        return v

    mine = getattr(D, cls)(*[conv(a, jt.tensor, jp) for a in args],
                           **{k: conv(v, jt.tensor, jp) for k, v in kwargs.items()})
    theirs = getattr(TD, cls)(*[conv(a, torch.tensor, tp) for a in args],
                              **{k: conv(v, torch.tensor, tp) for k, v in kwargs.items()})
    return mine, theirs, jp, tp


@pytest.mark.parametrize("name", sorted(set(CASES) - {"Binomial", "Multinomial"}))
def test_log_prob_entropy_gradients(name):
    mine, theirs, jp, tp = _grad_params(name)
    x = _value(theirs).detach()
    loss_t = theirs.log_prob(x).sum()
    try:
        loss_t = loss_t + theirs.entropy().sum()
        with_entropy = True
    except NotImplementedError:
        with_entropy = False
    loss_j = mine.log_prob(_jt(x)).sum() + (mine.entropy().sum() if with_entropy else 0)
    gt = torch.autograd.grad(loss_t, tp, allow_unused=True)
    gj = jt.autograd.grad(loss_j, jp, allow_unused=True)
    for a, b in zip(gj, gt, strict=True):
        if b is None:
            assert a is None or not a.numpy().any()
        else:
            _close(a, b, rtol=1e-6, atol=1e-8)


# the gradient of E[f(rsample)] by pathwise derivatives is the gradient of the analytic
# expectation: checked with f = identity (and x^2 for the scales) over many draws
RSAMPLE = ["Normal", "Uniform", "LogNormal", "Laplace", "Exponential", "Gamma", "Beta",
           "Dirichlet", "MultivariateNormal", "MultivariateNormal-tril", "Gumbel", "Weibull",
           "Kumaraswamy", "HalfNormal", "Chi2", "LowRankMultivariateNormal"]


@pytest.mark.parametrize("name", RSAMPLE)
def test_rsample_pathwise_gradient(name):
    mine, theirs, jp, tp = _grad_params(name)
    assert mine.has_rsample
    jt.manual_seed(7)
    n = 20000
    s = mine.rsample((n,))
    assert s.requires_grad
    loss = (s.mean(0) + (s * s).mean(0)).sum()
    got = jt.autograd.grad(loss, jp, allow_unused=True)
    m, v = theirs.mean, theirs.variance
    want = torch.autograd.grad((m + v + m * m).sum(), tp, allow_unused=True)
    for a, b in zip(got, want, strict=True):
        scale = np.abs(b.numpy()).max() + 1
        assert np.all(np.abs(a.numpy() - b.numpy()) < 0.06 * scale), (name, a, b)


def test_rsample_location_scale_exact():
    loc = jt.tensor([0.5, -1.0], dtype=jt.float64, requires_grad=True)
    scale = jt.tensor([2.0, 0.3], dtype=jt.float64, requires_grad=True)
    jt.manual_seed(0)
    x = D.Normal(loc, scale).rsample((3,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-12)


def test_standard_gamma_grad_against_torch():
    from jitensor.distributions._sampling import _standard_gamma_grad
    alpha = np.repeat([0.05, 0.3, 1.0, 2.5, 7.9, 8.5, 30.0, 200.0], 7)
    x = alpha * np.tile([0.01, 0.5, 0.95, 1.0, 1.05, 2.0, 4.0], 8) + 1e-3
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x))
    _close(_standard_gamma_grad(jt.tensor(alpha), jt.tensor(x)), want, rtol=1e-9, atol=1e-12)


def test_no_rsample_for_discrete():
    with pytest.raises(NotImplementedError):
        D.Bernoulli(jt.tensor(0.3)).rsample()
    with pytest.raises(NotImplementedError):
        D.Poisson(jt.tensor(3.0)).rsample()


KL_PAIRS = [("Normal", "Normal"), ("Bernoulli", "Bernoulli-logits"),
            ("Categorical", "Categorical-logits"), ("Beta", "Beta"), ("Gamma", "Gamma"),
            ("Dirichlet", "Dirichlet"), ("Exponential", "Exponential"), ("Laplace", "Laplace"),
            ("Poisson", "Poisson"), ("Uniform", "Uniform"), ("Gumbel", "Gumbel"),
            ("HalfNormal", "HalfNormal"), ("Geometric", "Geometric"), ("Pareto", "Pareto"),
            ("OneHotCategorical", "OneHotCategorical"), ("Normal", "Laplace"),
            ("Normal", "Gumbel"), ("Exponential", "Gamma"), ("Gamma", "Normal"),
            ("Beta", "Normal"), ("Uniform", "Normal"), ("Exponential", "Normal"),
            ("Laplace", "Normal"), ("MultivariateNormal", "MultivariateNormal-tril"),
            ("LowRankMultivariateNormal", "MultivariateNormal-tril"),
            ("ContinuousBernoulli", "ContinuousBernoulli"), ("Binomial-logits", "Binomial-logits"),
            ("Normal", "Uniform"), ("Beta", "Uniform")]


@pytest.mark.parametrize("p,q", KL_PAIRS)
def test_kl_divergence(p, q):
    pm, pt = _both(p)
    qm, qt = _both(q)
    if p == q:  # a second, different member of the family
        qm, qt = qm.expand(qm.batch_shape), qt.expand(qt.batch_shape)
        jt.manual_seed(3)
        torch.manual_seed(3)
    _close(D.kl_divergence(pm, qm), TD.kl_divergence(pt, qt), rtol=1e-6, atol=1e-9)


def test_kl_values_between_different_members():
    a = (np.array([0.3, -1.0]), np.array([1.5, 0.7]))
    b = (np.array([-0.2, 0.4]), np.array([0.5, 2.0]))
    for cls in ("Normal", "Laplace", "Gumbel", "Gamma", "Beta", "Uniform"):
        lo = np.abs if cls in ("Gamma", "Beta") else (lambda v: v)
        args = [lo(v) for v in a]
        args2 = [lo(v) + (1e-1 if cls in ("Gamma", "Beta") else 0) for v in b]
        if cls == "Uniform":
            args, args2 = [a[0], a[0] + 1], [a[0] - 1, a[0] + 3]
        pm = getattr(D, cls)(*map(jt.tensor, args))
        qm = getattr(D, cls)(*map(jt.tensor, args2))
        pt = getattr(TD, cls)(*map(torch.tensor, args))
        qt = getattr(TD, cls)(*map(torch.tensor, args2))
        _close(D.kl_divergence(pm, qm), TD.kl_divergence(pt, qt), rtol=1e-7)
        _close(D.kl_divergence(qm, pm), TD.kl_divergence(qt, pt), rtol=1e-7)


def test_kl_gradient_and_register():
    loc = jt.tensor([0.3, -1.0], requires_grad=True)
    tloc = torch.tensor([0.3, -1.0], requires_grad=True)
    kl = D.kl_divergence(D.Normal(loc, jt.tensor(1.5)), D.Normal(jt.tensor(0.0), jt.tensor(1.0)))
    tkl = TD.kl_divergence(TD.Normal(tloc, torch.tensor(1.5)),
                           TD.Normal(torch.tensor(0.0), torch.tensor(1.0)))
    kl.sum().backward()
    tkl.sum().backward()
    _close(loc.grad, tloc.grad)

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return jt.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Poisson(jt.tensor(1.0)))


def test_validate_args_errors():
    cases = [
        (lambda m: m.Normal(0.0, -1.0), "scale"),
        (lambda m: m.Bernoulli(probs=1.5), "probs"),
        (lambda m: m.Categorical(probs=None), None),
        (lambda m: m.Beta(1.0, 0.0), "concentration"),  # (its Dirichlet's)
        (lambda m: m.Uniform(1.0, 0.0), "low"),
    ]
    for make, param in cases:
        with pytest.raises(ValueError) as mine:
            make(_Mods(D, jt))
        with pytest.raises(ValueError) as theirs:
            make(_Mods(TD, torch))
        if param is not None:
            assert f"Expected parameter {param}" in str(mine.value)
        assert _gist(mine.value) == _gist(theirs.value)
    # values outside the support
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        D.Normal(jt.tensor(0.0), jt.tensor(1.0)).log_prob(0.5)
    with pytest.raises(ValueError, match=r"Expected value argument \(Tensor of shape \(\)\) to be "
                       r"within the support \(GreaterThanEq\(lower_bound=0.0\)\) of the "
                       r"distribution Exponential\(rate: 1.0\), but found invalid values:\n-1.0"):
        D.Exponential(jt.tensor(1.0)).log_prob(jt.tensor(-1.0))
    with pytest.raises(ValueError, match=r"\(IntegerInterval\(lower_bound=0, upper_bound=2"):
        D.Categorical(logits=jt.zeros(3)).log_prob(jt.tensor(5))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.MultivariateNormal(jt.zeros(2), jt.eye(2)).log_prob(jt.zeros(3))
    # validate_args=False and the global switch
    assert D.Normal(jt.tensor(0.0), jt.tensor(-1.0), validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(jt.tensor(0.0), jt.tensor(-1.0))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


class _Mods:
    """One constructor namespace over either library: Normal(0., -1.) etc. with numbers made
    tensors as each library's distributions accept."""

    def __init__(self, dists, lib):
        self.dists, self.lib = dists, lib

    def __getattr__(self, name):
        if name == "tensor":
            return self.lib.tensor
        cls = getattr(self.dists, name)

        def wrap(v):
            return self.lib.tensor(v) if isinstance(v, float) else v

        def make(*args, **kwargs):
            return cls(*map(wrap, args), **{k: wrap(v) for k, v in kwargs.items()})
        return make


def _gist(err):
    """The message up to the repr of the distribution (which prints each library's tensors)."""
    return str(err).split(" of distribution")[0].replace("jitensor", "torch")


def test_mixture_same_family():
    mix = RNG.dirichlet(np.ones(3), (2,))
    locs, scales = RNG.standard_normal((2, 3)), RNG.uniform(0.5, 2, (2, 3))
    mine = D.MixtureSameFamily(D.Categorical(jt.tensor(mix)),
                               D.Normal(jt.tensor(locs), jt.tensor(scales)))
    theirs = TD.MixtureSameFamily(TD.Categorical(torch.tensor(mix)),
                                  TD.Normal(torch.tensor(locs), torch.tensor(scales)))
    x = _value(theirs)
    _close(mine.log_prob(_jt(x)), theirs.log_prob(x))
    _close(mine.cdf(_jt(x)), theirs.cdf(x))
    _close(mine.mean, theirs.mean)
    _close(mine.variance, theirs.variance)
    assert mine.batch_shape == theirs.batch_shape
    jt.manual_seed(0)
    s = mine.sample((20000,))
    assert np.all(np.abs(s.mean(0).numpy() - theirs.mean.numpy()) < 0.05 * theirs.stddev.numpy())
    # multivariate components in an Independent
    comp = D.Independent(D.Normal(jt.tensor(RNG.standard_normal((3, 2))), jt.tensor(1.0)), 1)
    tcomp = TD.Independent(TD.Normal(torch.tensor(comp.base_dist.loc.numpy()),
                                     torch.tensor(1.0)), 1)
    m2 = D.MixtureSameFamily(D.Categorical(jt.tensor(mix[0])), comp)
    t2 = TD.MixtureSameFamily(TD.Categorical(torch.tensor(mix[0])), tcomp)
    x = _value(t2)
    _close(m2.log_prob(_jt(x)), t2.log_prob(x))
    assert m2.event_shape == t2.event_shape == (2,)


def test_independent():
    mine = D.Independent(D.Normal(jt.tensor(REAL), jt.tensor(POS)), 1)
    theirs = TD.Independent(TD.Normal(torch.tensor(REAL), torch.tensor(POS)), 1)
    assert mine.batch_shape == theirs.batch_shape == (2,)
    assert mine.event_shape == theirs.event_shape == (3,)
    x = _value(theirs)
    _close(mine.log_prob(_jt(x)), theirs.log_prob(x))
    _close(mine.entropy(), theirs.entropy())
    _close(mine.mean, theirs.mean)
    assert mine.has_rsample
    b = D.Independent(D.Bernoulli(jt.tensor(PROB)), 2)
    tb = TD.Independent(TD.Bernoulli(torch.tensor(PROB)), 2)
    _close(b.enumerate_support(), tb.enumerate_support()) if tb.has_enumerate_support else None
    _close(D.kl_divergence(mine, mine), TD.kl_divergence(theirs, theirs))


TRANSFORMS = [
    ("ExpTransform", (), REAL),
    ("AffineTransform", (0.5, 2.0), REAL),
    ("SigmoidTransform", (), REAL),
    ("TanhTransform", (), REAL * 0.5),
    ("SoftplusTransform", (), REAL),
    ("AbsTransform", (), REAL),
    ("PowerTransform", (1.7,), POS),
    ("SoftmaxTransform", (), REAL),
    ("StickBreakingTransform", (), REAL),
    ("LowerCholeskyTransform", (), RNG.standard_normal((3, 3))),
    ("CorrCholeskyTransform", (), REAL),
]


@pytest.mark.parametrize("name,args,x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transforms(name, args, x):
    mine = getattr(D, name)(*[jt.tensor(a) for a in args])
    theirs = getattr(TD, name)(*[torch.tensor(a) for a in args])
    y, ty = mine(jt.tensor(x)), theirs(torch.tensor(x))
    _close(y, ty)
    if theirs.bijective or name == "SoftmaxTransform":
        _close(mine.inv(y), theirs.inv(ty), rtol=1e-6, atol=1e-8)
    try:
        expected = theirs.log_abs_det_jacobian(torch.tensor(x), ty)
    except NotImplementedError:
        expected = None
    if expected is not None:
        _close(mine.log_abs_det_jacobian(jt.tensor(x), y), expected, rtol=1e-6)
    assert mine.domain.event_dim == theirs.domain.event_dim
    assert mine.codomain.event_dim == theirs.codomain.event_dim
    assert tuple(mine.forward_shape((2, 3))) == tuple(theirs.forward_shape((2, 3))) \
        if name not in ("CorrCholeskyTransform", "LowerCholeskyTransform") else True


def test_compose_and_transformed_distribution():
    parts = [D.AffineTransform(0.5, 2.0), D.ExpTransform()]
    tparts = [TD.AffineTransform(0.5, 2.0), TD.ExpTransform()]
    mine = D.TransformedDistribution(D.Normal(jt.tensor(REAL), jt.tensor(POS)), parts)
    theirs = TD.TransformedDistribution(TD.Normal(torch.tensor(REAL), torch.tensor(POS)),
                                        tparts)
    x = _value(theirs)
    _close(mine.log_prob(_jt(x)), theirs.log_prob(x))
    _close(mine.cdf(_jt(x)), theirs.cdf(x))
    _close(mine.icdf(jt.tensor(PROB)), theirs.icdf(torch.tensor(PROB)))
    assert mine.has_rsample and mine.batch_shape == theirs.batch_shape
    c, tc = D.ComposeTransform(parts), TD.ComposeTransform(tparts)
    _close(c(jt.tensor(REAL)), tc(torch.tensor(REAL)))
    _close(c.inv(c(jt.tensor(REAL))), torch.tensor(REAL))
    # a tanh-squashed Gaussian policy, as SAC writes it
    base = D.Normal(jt.tensor(REAL), jt.tensor(POS))
    squashed = D.TransformedDistribution(base, [D.TanhTransform(cache_size=1)])
    jt.manual_seed(0)
    a = squashed.rsample()
    lp = squashed.log_prob(a)
    ta = torch.tensor(a.numpy())
    tsq = TD.TransformedDistribution(TD.Normal(torch.tensor(REAL), torch.tensor(POS)),
                                     [TD.TanhTransform()])
    _close(lp, tsq.log_prob(ta), rtol=1e-5, atol=1e-7)


CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "simplex", "lower_cholesky",
               "positive_definite", "corr_cholesky", "greater_than", "interval",
               "less_than", "greater_than_eq", "half_open_interval"]


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_biject_to(name):
    c, tc = getattr(D.constraints, name), getattr(TD.constraints, name)
    if name in ("greater_than", "less_than", "greater_than_eq"):
        c, tc = c(1.5), tc(1.5)
    elif name in ("interval", "half_open_interval"):
        c, tc = c(-1.0, 3.0), tc(-1.0, 3.0)
    for fn, tfn in ((D.biject_to, TD.biject_to), (D.transform_to, TD.transform_to)):
        try:
            tt = tfn(tc)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                fn(c)
            continue
        t = fn(c)
        shape = (3, 3) if "cholesky" in name or "definite" in name else (2, 3)
        x = RNG.standard_normal(tt.inverse_shape(shape) if name != "positive_definite"
                                else (3, 3))
        if name == "positive_definite":
            x = np.tril(x) + 3 * np.eye(3)
        y, ty = t(jt.tensor(x)), tt(torch.tensor(x))
        _close(y, ty)
        assert c.check(y).all().item()


def test_constraints_check():
    x = jt.tensor([-1.0, 0.0, 0.5, 1.0, 2.0])
    tx = torch.tensor(x.numpy())
    for name in ("real", "positive", "nonnegative", "unit_interval", "boolean",
                 "nonnegative_integer", "positive_integer"):
        c, tc = getattr(D.constraints, name), getattr(TD.constraints, name)
        np.testing.assert_array_equal(c.check(x).numpy(), tc.check(tx).numpy())
    np.testing.assert_array_equal(D.constraints.integer_interval(0, 1).check(x).numpy(),
                                  TD.constraints.integer_interval(0, 1).check(tx).numpy())
    assert D.constraints.simplex.check(jt.tensor(SIMPLEX)).all().item()
    assert D.constraints.is_dependent(D.constraints.dependent)
    assert D.Binomial.arg_constraints["probs"] is D.constraints.unit_interval


def test_categorical_policy_gradient():
    """REINFORCE as RL programs write it: sample, log_prob, entropy, backward."""
    logits = jt.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    tlogits = torch.tensor(logits.detach().numpy(), requires_grad=True)
    m, tm = D.Categorical(logits=logits), TD.Categorical(logits=tlogits)
    jt.manual_seed(0)
    a = m.sample()
    assert a.dtype == jt.int64 and tuple(a.shape) == (4,)
    adv = jt.tensor([1.0, -0.5, 2.0, 0.3], dtype=jt.float64)
    loss = -(m.log_prob(a) * adv).mean() - 0.01 * m.entropy().mean()
    tloss = (-(tm.log_prob(torch.tensor(a.numpy())) * torch.tensor(adv.numpy())).mean()
             - 0.01 * tm.entropy().mean())
    loss.backward()
    tloss.backward()
    _close(logits.grad, tlogits.grad)
    counts = np.bincount(D.Categorical(jt.tensor([0.2, 0.3, 0.5])).sample((20000,)).numpy(),
                         minlength=3) / 20000
    np.testing.assert_allclose(counts, [0.2, 0.3, 0.5], atol=0.015)


def test_lazy_import_and_names():
    assert jt.distributions is D
    assert "distributions" in jt.__all__
    missing = [n for n in TD.__all__ if not hasattr(D, n)]
    assert not missing, missing


def test_float32_parameters():
    mine = D.Normal(jt.tensor([0.0, 1.0]), jt.tensor([1.0, 2.0]))
    assert mine.sample().dtype == jt.float32
    assert mine.log_prob(jt.tensor([0.5, 0.5])).dtype == jt.float32
    assert D.Gamma(jt.tensor([2.0]), jt.tensor([1.0])).rsample().dtype == jt.float32
    lp = D.Normal(0.0, 1.0).log_prob(jt.tensor(0.5))
    assert math.isclose(lp.item(), -0.5 * 0.25 - 0.5 * math.log(2 * math.pi), rel_tol=1e-6)
