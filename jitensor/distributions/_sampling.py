"""The samplers torch keeps in ATen for its distributions: standard gamma draws with their
reparameterised gradient (`_standard_gamma`), Dirichlet draws, and binomial draws.

Each is composed from jitensor's uniform and normal draws (so `jt.manual_seed` makes it
reproducible on any device) and tensor ops, in float64, as `ops/sampling.py`'s poisson: a
rejection sampler runs in rounds, each drawing once for the elements still rejected."""
import math

import jitensor as jt

from ..autograd import Function

_MAX_ROUNDS = 1000  # each round accepts most of what is left: reaching this is a bug
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _rounds(fn):
    raise RuntimeError(f"{fn}: sampling did not finish within {_MAX_ROUNDS} rounds; this "
                       f"cannot happen with a working generator (please report it)")


def _marsaglia_tsang(alpha):
    """Gamma(alpha, 1) draws for float64 alpha >= 1 (1-D): Marsaglia and Tsang (2000)."""
    n = alpha.numel()
    out = jt.zeros(n, dtype=jt.float64, device=alpha.device)
    idx = jt.arange(n, device=alpha.device)
    d = alpha - 1.0 / 3
    c = (9 * d).rsqrt()
    for _ in range(_MAX_ROUNDS):
        m = idx.numel()
        if not m:
            return out
        d_i, c_i = d[idx], c[idx]
        x = jt.randn(m, dtype=jt.float64, device=alpha.device)
        u = jt.rand(m, dtype=jt.float64, device=alpha.device)
        v = (1 + c_i * x) ** 3
        positive = v > 0
        log_v = jt.where(positive, v, jt.ones_like(v)).log()
        accept = positive & ((1 - u).log() < 0.5 * x * x + d_i - d_i * v + d_i * log_v)
        out[idx[accept]] = (d_i * v)[accept]
        idx = idx[~accept]
    _rounds("_standard_gamma")


def _sample_standard_gamma(concentration):
    """Gamma(concentration, 1) draws in concentration's dtype, no gradient. Below 1, a draw
    of Gamma(alpha + 1) scaled by U^(1/alpha) (Marsaglia and Tsang's boost)."""
    alpha = concentration.detach().to(jt.float64).reshape(-1)
    small = alpha < 1
    x = _marsaglia_tsang(jt.where(small, alpha + 1, alpha))
    u = 1 - jt.rand(alpha.shape, dtype=jt.float64, device=alpha.device)  # (0, 1]
    boost = jt.where(small, (u.log() / alpha).exp(), jt.ones_like(u))
    x = jt.where(alpha > 0, x * boost, jt.zeros_like(x))
    tiny = jt.finfo(concentration.dtype).tiny
    return x.reshape(concentration.shape).to(concentration.dtype).clamp(min=tiny)


# torch's bivariate rational approximation of d(sample)/d(alpha) for alpha <= 8, x >= 0.8
_COEF_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def _standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) held at its quantile (implicit
    reparameterisation, Figurnov et al. 2018), computed as torch's `_standard_gamma_grad`:
    a Taylor series of the cdf for x < 0.8, Rice's saddle-point expansion for alpha > 8, a
    rational approximation elsewhere."""
    dtype = x.dtype
    a, x = alpha.detach().to(jt.float64), x.detach().to(jt.float64)
    with jt.no_grad():
        # Taylor series of the lower incomplete gamma function
        numer, denom = jt.ones_like(x), a.clone()
        series1, series2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-x / i)
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / (denom * denom)
        pow_x_alpha = x ** a
        gamma_pdf = x ** (a - 1) * (-x).exp()
        gamma_cdf = pow_x_alpha * series1
        gamma_cdf_alpha = (x.log() - a.digamma()) * gamma_cdf - pow_x_alpha * series2
        taylor = -gamma_cdf_alpha / gamma_pdf
        taylor = jt.where(taylor.isnan(), jt.zeros_like(taylor), taylor)

        # Rice saddle point, near the mode and away from it
        near = ((1 + 24 * a * (1 + 12 * a))
                * (1440 * a * a + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x))
                / (1244160 * a ** 4))
        denom_r = (8 * a).sqrt()
        term2 = denom_r / (a - x)
        term3 = (x - a - a * (x / a).log()) ** -1.5
        term23 = jt.where(x < a, term2 - term3, term2 + term3)
        term1 = (x / a).log() * term23 - (2 / a).sqrt() * (a + x) / ((a - x) * (a - x))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        far = -stirling * x * term1 / denom_r
        rice = jt.where((0.9 * a <= x) & (x <= 1.1 * a), near, far)

        u, v = (x / a).log(), a.log()
        cv = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_COEF_UV, strict=True)]
        p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
        q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
        rational = (p / q).exp()

        grad = jt.where(x < 0.8, taylor, jt.where(a > 8, rice, rational))
    return grad.to(dtype)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, concentration):
        x = _sample_standard_gamma(concentration)
        ctx.save_for_backward(concentration, x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        concentration, x = ctx.saved_tensors
        return grad_output * _standard_gamma_grad(concentration, x)


def _standard_gamma(concentration):
    """torch._standard_gamma: Gamma(concentration, 1) draws, differentiable with respect to
    concentration by implicit reparameterisation."""
    if concentration.requires_grad and jt.is_grad_enabled():
        return _StandardGamma.apply(concentration)
    return _sample_standard_gamma(concentration)


def _sample_dirichlet(concentration):
    """Dirichlet draws: independent gammas normalised over the last dimension (so differentiable
    through `_standard_gamma`)."""
    gammas = _standard_gamma(concentration)
    tiny = jt.finfo(gammas.dtype).tiny
    return (gammas / gammas.sum(-1, keepdim=True)).clamp(min=tiny)


# -- binomial ---------------------------------------------------------------------------------
# the tail of Stirling's series for log(k!) below 10, exactly
_STIRLING_TAIL = [math.lgamma(k + 1) - (k + 0.5) * math.log(k + 1) + (k + 1) - _HALF_LOG_2PI
                  for k in range(10)]


def _stirling_tail(k):
    table = jt.tensor(_STIRLING_TAIL, dtype=jt.float64, device=k.device)
    small = table[k.clamp(0, 9).to(jt.int64)]
    kp1sq = (k + 1) * (k + 1)
    large = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return jt.where(k <= 9, small, large)


def _binomial_inversion(n, p):
    """Counts of geometric waiting times that fit in n trials (n * p below 10): a round per
    success, each drawing one uniform for the elements still counting."""
    out = jt.zeros(n.shape, dtype=jt.float64, device=n.device)
    idx = jt.arange(n.numel(), device=n.device)
    log_q = (-p).log1p()
    total = jt.zeros(n.shape, dtype=jt.float64, device=n.device)
    for _ in range(_MAX_ROUNDS * 10):
        m = idx.numel()
        if not m:
            return out
        u = 1 - jt.rand(m, dtype=jt.float64, device=n.device)  # (0, 1]
        total[idx] = total[idx] + (u.log() / log_q[idx]).ceil()
        going = total[idx] <= n[idx]
        out[idx[going]] = out[idx[going]] + 1
        idx = idx[going]
    _rounds("binomial")


def _binomial_btrs(n, p):
    """Hörmann's transformed rejection with squeeze (BTRS, 1993) for n * p of 10 and more."""
    out = jt.zeros(n.shape, dtype=jt.float64, device=n.device)
    idx = jt.arange(n.numel(), device=n.device)
    for _ in range(_MAX_ROUNDS):
        m = idx.numel()
        if not m:
            return out
        n_i, p_i = n[idx], p[idx]
        stddev = (n_i * p_i * (1 - p_i)).sqrt()
        b = 1.15 + 2.53 * stddev
        a = -0.0873 + 0.0248 * b + 0.01 * p_i
        c = n_i * p_i + 0.5
        v_r = 0.92 - 4.2 / b
        r = p_i / (1 - p_i)
        alpha = (2.83 + 5.1 / b) * stddev
        mode = ((n_i + 1) * p_i).floor()
        uv = jt.rand((2, m), dtype=jt.float64, device=n.device)
        u, v = uv[0] - 0.5, uv[1]
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + c).floor()
        inside = (k >= 0) & (k <= n_i)
        quick = inside & (us >= 0.07) & (v <= v_r)
        kk = k.clamp(min=0.0)
        kk = jt.where(kk > n_i, n_i, kk)
        log_v = (v * alpha / (a / (us * us) + b)).log()
        bound = ((mode + 0.5) * ((mode + 1) / (r * (n_i - mode + 1))).log()
                 + (n_i + 1) * ((n_i - mode + 1) / (n_i - kk + 1)).log()
                 + (kk + 0.5) * (r * (n_i - kk + 1) / (kk + 1)).log()
                 + _stirling_tail(mode) + _stirling_tail(n_i - mode)
                 - _stirling_tail(kk) - _stirling_tail(n_i - kk))
        accept = quick | (inside & (log_v <= bound))
        out[idx[accept]] = kk[accept]
        idx = idx[~accept]
    _rounds("binomial")


def binomial(count, prob):
    """torch.binomial: draws of Binomial(count, prob), elementwise, in prob's dtype."""
    count, prob = jt.broadcast_tensors(count.detach(), prob.detach())
    dtype, shape = prob.dtype, prob.shape
    n = count.to(jt.float64).reshape(-1)
    p = prob.to(jt.float64).reshape(-1)
    flip = p > 0.5  # sample the rarer outcome; n - that is the draw
    q = jt.where(flip, 1 - p, p)
    out = jt.zeros(n.shape, dtype=jt.float64, device=n.device)
    small = ((n * q < 10) & (q > 0) & (n > 0)).nonzero().reshape(-1)
    if small.numel():
        out[small] = _binomial_inversion(n[small], q[small])
    large = (n * q >= 10).nonzero().reshape(-1)
    if large.numel():
        out[large] = _binomial_btrs(n[large], q[large])
    out = jt.where(flip, n - out, out)
    return out.reshape(shape).to(dtype)
