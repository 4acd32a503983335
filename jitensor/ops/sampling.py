"""Random sampling with torch's signatures: bernoulli, normal, poisson, multinomial, randperm,
randint_like and the Tensor's in-place samplers (uniform_, normal_, exponential_, geometric_,
log_normal_, cauchy_, random_, bernoulli_).

Everything is composed from rand / randn / randint (one draw of the counter-based generator
each, so a seed gives the same values on any device and thread count) and existing tensor ops,
on the device of the tensor given. Uniforms that feed a transform are drawn in float64 (53
random bits) and the result is cast to the output dtype: a float32 uniform has 24 bits, which
would make bernoulli(p) wrong for p below 2^-24 and cut the exponential's tail at 16.6.

As in torch, a sample has no gradient with respect to its parameters: a result computed from
tensors that require grad carries a graph whose gradient is zero (torch's BernoulliBackward,
NormalBackward, PoissonBackward), so backward() through it runs and leaves zeros."""
import math
import operator
import warnings

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.versions import reset
from ..creation import (
    _like,
    _random,
    _target,
    allocate,
    arange,
    rand,
    randint,
    randn,
    tensor,
    zeros,
)
from ..dtypes import to_dtype
from ..kernels.registry import backend
from ..random import default_generator
from ..tensor import Tensor, preserve_format
from ._common import broadcast_shapes, same_device, write_out
from .elementwise import where
from .indexing import masked_select, nonzero, take
from .reduction import cumsum
from .shape import cat
from .sort import sort, topk

__all__ = ["bernoulli", "multinomial", "normal", "poisson", "randint_like", "randperm"]

# A loop of rejection or counting rounds stops after this many: each round finishes all but a
# geometrically shrinking share of the elements (PTRS accepts > 85% a round; Knuth's count for a
# rate below 10 passes 1000 with probability far below 1e-300), so reaching it means a bug.
_MAX_ROUNDS = 1000


def _gen(generator):
    return default_generator if generator is None else generator


def _check_tensor(fn, x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got {type(x).__name__}")


def _uniform64(shape, device, g):
    """Uniforms in [0, 1) with 53 random bits."""
    return rand(shape, dtype=dtypes.float64, device=device, generator=g)


def _open_uniform64(shape, device, g):
    """Uniforms in (0, 1]: their log is finite."""
    return _uniform64(shape, device, g).neg_().add_(1.0)


def _zero_grad(result, *params):
    """`result` joined to the graph of `params` with a zero gradient (torch's samplers
    differentiate as constants of their parameters but still record a node), when grad is on
    and a parameter requires it. `where` with an all-False condition keeps the sample's values
    exactly and sends zeros back."""
    params = [p for p in params if isinstance(p, Tensor) and p.requires_grad]
    if not params or not is_grad_enabled():
        return result
    never = zeros(result.shape, dtype=dtypes.bool_, device=result.device)
    for p in params:
        result = where(never, p, result)
    return result


def _float_input(fn, x, error=NotImplementedError):
    if not x.dtype.is_floating_point:
        raise error(f"{fn}(): expected a floating-point tensor, got dtype {x.dtype}; convert "
                    f"it first, e.g. x.to(jitensor.float32)")


def _number(fn, value, name):
    if isinstance(value, Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{fn}(): argument '{name}' must be a number, got "
                        f"{type(value).__name__}")
    return value


def _fill(self, sample):
    """Write `sample` (self's shape) into self's buffer, in self's dtype, outside autograd (the
    in-place wrapper of autograd/wrap.py bumps the version and checks grad rules)."""
    if sample.dtype is not self.dtype:
        sample = sample.to(self.dtype)
    backend(self._device).copy(self._data, sample._data)
    return self


# -- bernoulli ----------------------------------------------------------------------------------
def _check_probabilities(fn, p):
    if p.numel() and not ((p >= 0) & (p <= 1)).all().item():
        raise RuntimeError(f"{fn}(): expected every probability to be in [0, 1] (torch: "
                           f"'Expected p_in >= 0 && p_in <= 1'), but some are below 0, above 1 "
                           f"or NaN; clamp them with p.clamp(0, 1)")


def _check_p(fn, p):
    p = _number(fn, p, "p")
    if not 0 <= p <= 1:
        raise RuntimeError(f"{fn} expects p to be in [0, 1], but got p={p}")
    return p


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 draws in input's dtype: each element is 1 with probability input[i] (or, given a
    number `p`, with probability p for every element of input's shape)."""
    _check_tensor("bernoulli", input)
    if isinstance(p, Tensor):
        raise TypeError("bernoulli(): argument 'p' must be a number; for per-element "
                        "probabilities pass them as input: bernoulli(p_tensor)")
    _float_input("bernoulli", input)
    u = _uniform64(input.shape, input.device, _gen(generator))
    if p is None:
        probs = input.detach()
        _check_probabilities("bernoulli", probs)
        result = (u < probs).to(input.dtype)
    else:
        result = (u < _check_p("bernoulli_", p)).to(input.dtype)
    return write_out("bernoulli", out, _zero_grad(result, input))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill self with 0/1 draws that are 1 with probability `p` (a number, or a tensor that
    broadcasts to self's shape). Any dtype: integers and bools get 0 and 1."""
    g = _gen(generator)
    if isinstance(p, Tensor):
        same_device("bernoulli_", self, p)
        probs = p.detach()
        _check_probabilities("bernoulli_", probs)
        if broadcast_shapes(probs.shape, self.shape) != tuple(self.shape):
            raise RuntimeError(f"bernoulli_(): p of shape {list(p.shape)} does not broadcast "
                               f"to self's shape {list(self.shape)} (the expanded size must "
                               f"match the existing size); pass p of a shape that expands")
        if probs.dtype is not dtypes.float64:
            probs = probs.to(dtypes.float64)
    else:
        probs = _check_p("bernoulli_", p)
    return _fill(self, _uniform64(self.shape, self.device, g) < probs)


# -- normal ---------------------------------------------------------------------------------------
def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Normal samples, torch's four forms: ``normal(mean_tensor, std_tensor)`` (shapes
    broadcast), ``normal(mean_tensor, std=1.0)``, ``normal(mean, std_tensor)`` (each element
    with its own mean and std; the dtype is the tensors' float dtype), and
    ``normal(mean, std, size)`` with numbers (dtype/device/layout/requires_grad as randn)."""
    g = _gen(generator)
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        mean, std = _number("normal", mean, "mean"), _number("normal", std, "std")
        if size is None:
            raise TypeError("normal(): with a number mean and std, argument 'size' is "
                            "required; write normal(mean, std, (n,)) or pass a tensor mean or "
                            "std")
        _check_std(std)
        t, g = _random("normal", (size,), g, out, dtype, layout, device, requires_grad,
                       pin_memory)
        backend(t._device).normal(t._data, *g.take(2 * t.numel()), float(mean), float(std))
        return t
    if size is not None or dtype is not None or device is not None or requires_grad:
        raise TypeError("normal(): size, dtype, device and requires_grad apply only to "
                        "normal(mean, std, size) with numbers; with a tensor mean or std the "
                        "result takes their shape, dtype and device")
    dev = same_device("normal", *tensors)
    for t in tensors:
        _float_input("normal", t)
    result_dtype = tensors[0].dtype if len(tensors) == 1 else \
        dtypes.promote_types(mean.dtype, std.dtype)
    m = mean.detach() if isinstance(mean, Tensor) else _number("normal", mean, "mean")
    s = std.detach() if isinstance(std, Tensor) else _number("normal", std, "std")
    if isinstance(s, Tensor):
        if s.numel() and not (s >= 0).all().item():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std(s)
    shape = broadcast_shapes(*(t.shape for t in tensors))
    z = randn(shape, dtype=result_dtype, device=dev, generator=g)
    result = (z * s + m).to(result_dtype)
    return write_out("normal", out, _zero_grad(result, mean, std))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill self with samples of N(mean, std^2)."""
    _float_input("normal_", self)
    mean, std = _number("normal_", mean, "mean"), _number("normal_", std, "std")
    _check_std(std)
    g = _gen(generator)
    backend(self._device).normal(self._data, *g.take(2 * self.numel()), float(mean), float(std))
    return self


# -- poisson --------------------------------------------------------------------------------------
# log(k!) for k < 16; above, Stirling's series (its first omitted term is below 3e-12 there)
_LOG_FACTORIAL = [math.lgamma(k + 1) for k in range(16)]
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _log_poisson_pmf(k, lam):
    """log P(K = k) for K ~ Poisson(lam), float64 tensors with k >= 0 integral. Above the table
    it is rearranged so that the large terms cancel exactly: with x = k + 1,
    -lam + k log lam - log k! = (x - lam) + k log1p((lam - x) / x) - log(x) / 2 - log(2 pi) / 2
    - (Stirling's corrections), accurate for rates far beyond where k log lam and log k! alone
    lose every digit to their difference."""
    table = _log_factorial_table(k.device)
    small = -lam + k * lam.log() - take(table, k.clamp(0, 15).to(dtypes.int64))
    x = k + 1.0
    ix2 = (x * x).reciprocal()
    corr = (ix2 * (ix2 * (1.0 / 1260) - 1.0 / 360) + 1.0 / 12) / x
    large = (x - lam) + k * ((lam - x) / x).log1p() - 0.5 * x.log() - _HALF_LOG_2PI - corr
    return where(k < 16, small, large)


_TABLES = {}  # device -> the table as a tensor there, made on first use


def _log_factorial_table(device):
    key = str(device)
    if key not in _TABLES:
        _TABLES[key] = tensor(_LOG_FACTORIAL, dtype=dtypes.float64, device=device)
    return _TABLES[key]


def _rounds(fn):
    raise RuntimeError(f"{fn}(): sampling did not finish within {_MAX_ROUNDS} rounds; this "
                       f"cannot happen with a working generator (please report it)")


def _poisson_knuth(lam, g):
    """Knuth's counting for rates below 10: the number of unit-rate exponential arrivals before
    `lam`, i.e. of uniforms multiplied before their product drops to exp(-lam). Each round draws
    one uniform per element still counting and keeps only those."""
    n, device = lam.numel(), lam.device
    out = zeros(n, dtype=dtypes.float64, device=device)
    idx = nonzero(lam > 0).reshape(-1)
    limit = (-lam[idx]).exp()
    prod = zeros(idx.numel(), dtype=dtypes.float64, device=device).add_(1.0)
    k = zeros(idx.numel(), dtype=dtypes.float64, device=device)
    for _ in range(_MAX_ROUNDS):
        if not idx.numel():
            return out
        prod = prod * _uniform64(idx.numel(), device, g)
        alive = prod > limit
        k = k + alive
        done = ~alive
        out[idx[done]] = k[done]
        idx, prod, limit, k = idx[alive], prod[alive], limit[alive], k[alive]
    _rounds("poisson")


def _poisson_ptrs(lam, g):
    """Hörmann's transformed rejection with squeeze (PTRS, 1993) for rates of 10 and more, as
    NumPy's: a candidate k from a transformed uniform, accepted at once inside the squeeze box,
    otherwise against the exact log-pmf; rejected elements draw again in the next round."""
    n, device = lam.numel(), lam.device
    out = zeros(n, dtype=dtypes.float64, device=device)
    idx = arange(n, device=device)
    for _ in range(_MAX_ROUNDS):
        m = idx.numel()
        if not m:
            return out
        lam_i = lam[idx]
        slam = lam_i.sqrt()
        b = slam * 2.53 + 0.931
        a = b * 0.02483 - 0.059
        inv_alpha = (b - 3.4).reciprocal() * 1.1328 + 1.1239
        vr = 0.9277 - (b - 2.0).reciprocal() * 3.6224
        uv = _uniform64((2, m), device, g)
        u, v = uv[0] - 0.5, uv[1]
        us = 0.5 - u.abs()
        k = ((2.0 * a / us + b) * u + lam_i + 0.43).floor()
        quick = (us >= 0.07) & (v <= vr)
        possible = (k >= 0) & ~((us < 0.013) & (v > us))
        kk = k.clamp(min=0.0)
        lhs = v.log() + inv_alpha.log() - (a / (us * us) + b).log()
        accept = quick | (possible & (lhs <= _log_poisson_pmf(kk, lam_i)))
        out[idx[accept]] = kk[accept]
        idx = idx[~accept]
    _rounds("poisson")


def poisson(input, generator=None):
    """Poisson samples with rates `input` (a float tensor of non-negative rates), in its dtype:
    exact for every rate (Knuth's counting below 10, PTRS rejection from 10 on; an infinite
    rate gives inf). Rates above about 2^52 give samples whose spacing is float64's."""
    _check_tensor("poisson", input)
    _float_input("poisson", input)
    lam = input.detach().to(dtypes.float64).reshape(-1)
    if lam.numel() and not (lam >= 0).all().item():
        raise RuntimeError("poisson(): invalid Poisson rate, expected rate to be non-negative "
                           "(some rates are negative or NaN)")
    g = _gen(generator)
    out = zeros(lam.numel(), dtype=dtypes.float64, device=input.device)
    small = nonzero(lam < 10).reshape(-1)
    if small.numel():
        out[small] = _poisson_knuth(lam[small], g)
    large = nonzero((lam >= 10) & lam.isfinite()).reshape(-1)
    if large.numel():
        out[large] = _poisson_ptrs(lam[large], g)
    out = where(lam.isinf(), lam, out)
    return _zero_grad(out.reshape(input.shape).to(input.dtype), input)


# -- multinomial ----------------------------------------------------------------------------------
def _searchsorted_right(cdf, u):
    """For each row r and sample j, the number of cdf[r] entries <= u[r, j] (searchsorted with
    right=True), from one stable sort of each row's cdf followed by its samples: ties keep the
    cdf entries first, so the cdf entries seen up to a sample's place are exactly those <= it."""
    rows, k = cdf.shape
    s = u.shape[1]
    order = sort(cat([cdf, u], 1), 1, stable=True).indices
    is_sample = order >= k
    seen = cumsum((~is_sample).to(dtypes.int64), 1)
    where_from = masked_select(order, is_sample).reshape(rows, s) - k
    counts = masked_select(seen, is_sample).reshape(rows, s)
    result = zeros((rows, s), dtype=dtypes.int64, device=cdf.device)
    return result.scatter_(1, where_from, counts)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """`num_samples` category indices per row of `input` (1-D or 2-D non-negative weights, not
    necessarily summing to 1), as int64. Without replacement each row draws distinct categories
    in the order drawn (an exponential race: the largest w / E with E ~ Exp(1) wins, which is
    sequential sampling without replacement; a row with fewer positive weights than
    num_samples continues with its zero-weight categories, as torch's CPU kernel); with
    replacement each draw inverts the row's cumulative weights."""
    _check_tensor("multinomial", input)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial(): prob_dist must be 1 or 2 dim, got {input.ndim} dims "
                           f"(shape {list(input.shape)})")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype}")
    if isinstance(num_samples, bool) or not hasattr(num_samples, "__index__"):
        raise TypeError(f"multinomial(): argument 'num_samples' must be int, got "
                        f"{type(num_samples).__name__}")
    s, k = operator.index(num_samples), input.shape[-1]
    if s <= 0:
        raise RuntimeError(f"multinomial(): cannot sample n_sample <= 0 samples (got "
                           f"num_samples={s})")
    if not replacement and s > k:
        raise RuntimeError(f"multinomial(): cannot sample n_sample > prob_dist.size(-1) samples "
                           f"without replacement (num_samples={s}, {k} categories); pass "
                           f"replacement=True")
    w = input.detach().to(dtypes.float64).reshape(-1, k)
    rows, device = w.shape[0], input.device
    if rows == 0:
        result = allocate((0, s), dtypes.int64, device)
        return write_out("multinomial", out, result, exact=True)
    if w.numel() and not ((w >= 0) & w.isfinite()).all().item():
        raise RuntimeError("multinomial(): probability tensor contains either `inf`, `nan` or "
                           "element < 0")
    if not (w.sum(1) > 0).all().item():
        raise RuntimeError("multinomial(): invalid multinomial distribution (sum of "
                           "probabilities <= 0) in some row")
    g = _gen(generator)
    if replacement:
        cdf = cumsum(w, 1)
        u = _uniform64((rows, s), device, g) * cdf[:, k - 1:]
        # u < total in exact arithmetic; a rounding up to the total must not pick a trailing
        # zero-weight category: cap at each row's last category of positive weight
        last = (k - 1) - (w > 0).flip([1]).to(dtypes.int64).argmax(1, keepdim=True)
        result = _searchsorted_right(cdf, u).minimum(last)
    else:
        # zero-weight categories come after every positive one (torch's CPU kernel draws them
        # too once the positive ones run out), in a random order of their own
        e = _open_uniform64((rows, k), device, g).log().neg_()
        keys = where(w > 0, w / e, -e)
        result = topk(keys, s, 1).indices
    if input.ndim == 1:
        result = result.reshape(s)
    return write_out("multinomial", out, result, exact=True)


# -- randperm / randint_like ----------------------------------------------------------------------
def _check_randperm_n(n, dtype):
    if dtype is dtypes.bool_:
        raise NotImplementedError("randperm(): not implemented for dtype bool; use an integer "
                                  "or float dtype")
    if dtype.is_floating_point:
        digits = np.finfo(dtype.np).nmant + 1
        if n > (1 << digits) + 1:
            raise RuntimeError(f"randperm(): n cannot be greater than 2^{digits}+1 for {dtype} "
                               f"(got n={n}): larger integers are not all representable")
    elif n and n - 1 > np.iinfo(dtype.np).max:
        raise RuntimeError(f"randperm(): n={n} values up to {n - 1} cannot be converted to "
                           f"{dtype} without overflow; use dtype=jitensor.int64")


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of 0..n-1 (int64 unless `dtype` or out= says otherwise): the order
    that sorts n float64 uniforms, redrawn in the (rare) case of a tie so that every order is
    equally likely."""
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"randperm(): trying to create tensor with negative dimension {n}: "
                           f"[{n}]")
    if dtype is not None:
        dtype = to_dtype(dtype)
    elif out is not None and isinstance(out, Tensor):
        dtype = out.dtype
    else:
        dtype = dtypes.int64
    _check_randperm_n(n, dtype)
    # the checks of layout, device, pin_memory and requires_grad, as creation's
    target = _target("randperm", (n,), None, dtype, layout, device, requires_grad, pin_memory)
    g = _gen(generator)
    for _ in range(_MAX_ROUNDS):
        keys, order = sort(_uniform64(n, target.device, g))
        if n < 2 or not (keys[1:] == keys[:-1]).any().item():
            break
    else:
        _rounds("randperm")
    if out is not None:
        return write_out("randperm", out, order.to(dtype), exact=True)
    backend(target._device).copy(target._data, order.to(dtype)._data)
    return target


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=preserve_format):
    """Integers uniform in [low, high) (``randint_like(input, high)`` or
    ``randint_like(input, low, high)``) with input's shape, dtype and device unless given."""
    if high is None:
        low, high = 0, low
    t = _like("randint_like", input, dtype, layout, device, requires_grad, memory_format)
    low, high = _number("randint_like", low, "low"), _number("randint_like", high, "high")
    if not low < high:
        raise RuntimeError(f"randint_like(): random_ expects 'from' to be less than 'to', but "
                           f"got from={low} >= to={high}")
    randint(int(low), int(high), t.shape, generator=generator, out=t)
    reset(t._data)
    return t


# -- in-place samplers ----------------------------------------------------------------------------
def _from_to(fn, args, kwargs, default_from, default_to):
    """(from, to) from torch's positional/keyword forms (`from` is a Python keyword)."""
    names = ("from", "to")
    unknown = set(kwargs) - set(names)
    if unknown or len(args) > 2:
        raise TypeError(f"{fn}() takes from and to (got {len(args)} positional and keywords "
                        f"{sorted(kwargs)})")
    values = dict(zip(names, args, strict=False))
    for name in names:
        if name in kwargs:
            if name in values:
                raise TypeError(f"{fn}() got multiple values for argument '{name}'")
            values[name] = kwargs[name]
    return values.get("from", default_from), values.get("to", default_to)


def uniform_(self, *args, generator=None, **kwargs):
    """``uniform_(from=0, to=1)``: fill self with samples of U(from, to)."""
    _float_input("uniform_", self)
    lo, hi = _from_to("uniform_", args, kwargs, 0.0, 1.0)
    lo, hi = _number("uniform_", lo, "from"), _number("uniform_", hi, "to")
    if lo > hi:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={lo} > to={hi}")
    g = _gen(generator)
    backend(self._device).uniform(self._data, *g.take(self.numel()), float(lo), float(hi))
    return self


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill self with samples of Exp(lambd): -log(U) / lambd with U uniform in (0, 1]."""
    _float_input("exponential_", self, RuntimeError)
    lambd = _number("exponential_", lambd, "lambd")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    e = _open_uniform64(self.shape, self.device, _gen(generator)).log().neg_()
    return _fill(self, e.div_(lambd))


def geometric_(self, p, *, generator=None):
    """Fill self with the number of Bernoulli(p) trials up to the first success (1, 2, ...):
    1 + floor(log(U) / log(1 - p)). Integer dtypes get values capped at their maximum."""
    p = _number("geometric_", p, "p")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = _open_uniform64(self.shape, self.device, _gen(generator))
    k = u.log().div_(math.log1p(-p)).floor_().add_(1.0)
    if not self.dtype.is_floating_point and self.dtype is not dtypes.bool_:
        k = k.clamp(max=float(np.iinfo(self.dtype.np).max))
    return _fill(self, k)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill self with exp(X), X ~ N(mean, std^2)."""
    _float_input("log_normal_", self)
    mean, std = _number("log_normal_", mean, "mean"), _number("log_normal_", std, "std")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = randn(self.shape, dtype=dtypes.float64, device=self.device, generator=generator)
    return _fill(self, z.mul_(std).add_(mean).exp_())


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill self with samples of Cauchy(median, sigma): median + sigma tan(pi (U - 1/2))."""
    _float_input("cauchy_", self, RuntimeError)
    median = _number("cauchy_", median, "median")
    sigma = _number("cauchy_", sigma, "sigma")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    u = _uniform64(self.shape, self.device, _gen(generator))
    return _fill(self, u.sub_(0.5).mul_(math.pi).tan_().mul_(sigma).add_(median))


def _random_bounds(dtype):
    """(lowest, highest) value random_ may produce for `dtype`: the integer range, or for floats
    +-2^digits (every integer up to it is representable)."""
    if dtype is dtypes.bool_:
        return 0, 1
    if dtype.is_floating_point:
        top = 1 << (np.finfo(dtype.np).nmant + 1)
        return -top, top
    info = np.iinfo(dtype.np)
    return int(info.min), int(info.max)


def _full_range_int64(n, device, g):
    """n int64 values uniform over all 2^64 of them, from two exact 32-bit halves."""
    hi = randint(-(1 << 31), 1 << 31, (n,), dtype=dtypes.int64, device=device, generator=g)
    lo = randint(0, 1 << 32, (n,), dtype=dtypes.int64, device=device, generator=g)
    return hi.mul_(1 << 32).add_(lo)


def _random_wide(self, lo, hi, g):
    """int64 values in [lo, hi] for spans above 2^62 (randint's span is an int64, and its 53
    random bits would leave most such values out): exact full-range draws, those outside
    [lo, hi] (under 3/4 of them) drawn again."""
    n, device = self.numel(), self.device
    out = zeros(n, dtype=dtypes.int64, device=device)
    idx = arange(n, device=device)
    for _ in range(_MAX_ROUNDS):
        if not idx.numel():
            return _fill(self, out.reshape(self.shape))
        r = _full_range_int64(idx.numel(), device, g)
        ok = (r >= lo) & (r <= hi)
        out[idx[ok]] = r[ok]
        idx = idx[~ok]
    _rounds("random_")


def random_(self, *args, generator=None, **kwargs):
    """``random_(from, to)``: integers uniform in [from, to); ``random_(to)``: in [0, to);
    ``random_()``: over the dtype's range, [0, max] for integers, [0, 2^digits] for floats
    (2^24 for float32, 2^53 for float64), {0, 1} for bool. ``to=None`` means that top."""
    if len(args) == 1 and not kwargs:
        args = (0, args[0])  # random_(to)
    lo, hi = _from_to("random_", args, kwargs, 0, None)
    for value, name in ((lo, "from"), (hi, "to")):
        if value is not None and (isinstance(value, bool) or not hasattr(value, "__index__")):
            raise TypeError(f"random_(): argument '{name}' must be int, got "
                            f"{type(value).__name__}")
    lowest, highest = _random_bounds(self.dtype)
    lo = operator.index(lo)
    top = highest if hi is None else operator.index(hi) - 1  # the largest value drawn
    if hi is not None and not lo < top + 1:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= "
                           f"to={top + 1}")
    if self.dtype.is_floating_point:
        for value, what in ((lo, "from"), (top, "to - 1")):
            if not lowest <= value <= highest:
                warnings.warn(f"random_(): {what} = {value} is out of bounds [{lowest}, "
                              f"{highest}] for {self.dtype}: not every integer there is "
                              f"representable, so the draw is not uniform over them",
                              UserWarning, stacklevel=3)
    else:
        if not lowest <= lo <= highest:
            raise RuntimeError(f"random_(): from={lo} is out of bounds for {self.dtype} "
                               f"({lowest}..{highest})")
        if not lowest <= top <= highest:
            raise RuntimeError(f"random_(): to - 1 = {top} is out of bounds for {self.dtype} "
                               f"({lowest}..{highest})")
    g = _gen(generator)
    if top - lo + 1 > 1 << 62:  # randint's span must stay well inside int64
        return _random_wide(self, lo, top, g)
    randint(lo, top + 1, self.shape, generator=g, device=self.device, out=self)
    return self


TENSOR_METHODS = {
    "bernoulli": bernoulli, "bernoulli_": bernoulli_, "cauchy_": cauchy_,
    "exponential_": exponential_, "geometric_": geometric_, "log_normal_": log_normal_,
    "multinomial": multinomial, "normal_": normal_, "random_": random_, "uniform_": uniform_,
}
