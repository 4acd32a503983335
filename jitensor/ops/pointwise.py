"""torch's remaining pointwise functions, predicates and small creation routines, composed from
the public ops (so they differentiate and run wherever those do; no kernel of their own).

- Simple ops (deg2rad, frac, sgn, signbit, heaviside, gcd, ldexp, sinc, nextafter, ...): a few
  elementwise ops each, with torch's dtypes (integers promote as torch promotes them) and errors.
- Special functions (lgamma, digamma, polygamma, erfinv, i0): digamma, polygamma and i0 are
  the algorithms torch runs (Cephes', torch's own) written as masked tensor ops, so that values
  match torch's to a few ulps in float64 -- including polygamma(1)'s, which torch computes to
  only ~1e-9 of the truth; lgamma (torch calls the C library) is a series about 2, a recurrence
  and Stirling's series; erfinv starts from torch's rational approximation and refines it on
  erfc in the tails, where Newton on erf stops short.
  Their gradients are torch's formulas (lgamma' = digamma, digamma' = polygamma(1, x), erfinv'
  = sqrt(pi)/2 exp(erfinv(x)^2), i0' = i1), recorded as nodes of their own: differentiating
  through a series would be slower and less accurate.
- torch's module-level in-place functions (torch.abs_, torch.zero_, ...), thin wrappers around
  the Tensor methods.
- Predicates (is_tensor, is_nonzero, ...) and creation routines (logspace, the window functions,
  scalar_tensor, empty_strided).

Parts derived from the Cephes Math Library (zeta, digamma, i0/i1 and their coefficients, by way
of PyTorch's ATen/native/Math.h) are under its 3-clause BSD license, Copyright (c) 2018, Steven
Moshier."""
import functools
import math

import numpy as np

from .. import creation, dtypes
from ..autograd.grad_mode import _enabled as _grad_enabled
from ..autograd.graph import needs_grad, node_class, record
from ..backends.registry import backend
from ..device import device as _to_device
from ..tensor import Tensor
from . import elementwise as E
from ._common import in_place, write_out
from .shape import strided_view

# -- shared checks ----------------------------------------------------------------------------
_TORCH_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double"}


def _tensor(fn, x, name="input", position=1):
    """x, which must be a Tensor (torch's TypeError otherwise)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _not_for(fn, dtype, fix):
    return NotImplementedError(f'"{fn}" not implemented for \'{_TORCH_NAMES[dtype.name]}\' '
                               f"tensors; {fix}")


def _floating(x):
    """x itself when floating point, else x converted to the default float dtype (torch's
    rule for unary float functions of integer and bool tensors)."""
    return x if x._dtype.is_floating_point else x.to(dtypes.get_default_dtype())


def _bool_out(fn, out, result):
    """`result` (bool), or out= (which must be a bool tensor, as torch requires) holding it."""
    if out is not None and isinstance(out, Tensor) and out._dtype is not dtypes.bool_:
        raise RuntimeError(f"{fn} does not support non-boolean outputs; pass out with dtype "
                           f"jitensor.bool (got {out._dtype})")
    return write_out(fn, out, result)


def _with_rule(name, rule, uses_result=True):
    """Decorator: `fn` records itself as one node whose derivative is `rule(grad, result,
    *args, **kwargs)` (graph.py's convention) when grad mode is on and an input requires grad;
    inside, nothing is recorded."""
    cls = node_class(name, rule, uses_inputs=True, uses_result=uses_result)

    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if _grad_enabled[0] and needs_grad(args, kwargs):
                return record(cls, fn, args, kwargs)
            return fn(*args, **kwargs)
        op.node_class = cls
        return op
    return decorate


def _computing(x, wide=False):
    """(x in the dtype a special function computes in, dtype of its result): float16 computes
    in float32 as torch's kernels do; `wide`: float32 computes in float64 (torch's CPU zeta
    accumulates in double)."""
    result = x._dtype
    if result is dtypes.float16 or wide and result is dtypes.float32:
        x = x.to(dtypes.float64 if wide else dtypes.float32)
    return x, result


def _done(y, result, out, fn):
    return write_out(fn, out, y if y._dtype is result else y.to(result))


# -- simple pointwise ops ---------------------------------------------------------------------
def deg2rad(input, *, out=None):
    """Degrees to radians: input * pi / 180 (integer and bool inputs give the default float
    dtype)."""
    x = _floating(_tensor("deg2rad", input))
    return write_out("deg2rad", out, E.mul(x, math.pi / 180))


def rad2deg(input, *, out=None):
    """Radians to degrees: input * 180 / pi."""
    x = _floating(_tensor("rad2deg", input))
    return write_out("rad2deg", out, E.mul(x, 180 / math.pi))


def frac(input, *, out=None):
    """The fractional part, input - trunc(input), with input's sign (floating point only, as
    in torch; +-inf gives NaN)."""
    x = _tensor("frac", input)
    if not x._dtype.is_floating_point:
        raise _not_for("frac", x._dtype, "convert the tensor with .float() first")
    return write_out("frac", out, E.sub(x, E.trunc(x)))


fix = E.trunc  # torch's alias (trunc keeps integers as they are; bool is refused)
sgn = E.sign   # for real tensors torch's sgn is sign (NaN gives 0, as torch's)


def signbit(input, *, out=None):
    """Whether the sign bit is set (bool): true for negatives, -0.0 and NaNs with the sign bit;
    never for unsigned and bool tensors."""
    x = _tensor("signbit", input)
    if x._dtype.is_floating_point:  # copysign reads the bit itself: -0.0 and -NaN count
        result = E.lt(E.copysign(1.0, x.detach()), 0)
    elif x._dtype.is_signed:
        result = E.lt(x, 0)
    else:
        result = creation.zeros(x.shape, dtype=dtypes.bool_, device=x.device)
    return _bool_out("signbit", out, result)


def heaviside(input, values, *, out=None):
    """The Heaviside step: 0 where input < 0, `values` where input == 0, 1 where input > 0
    (and 0 for NaN, as torch's kernel gives). Both tensors must have one dtype; broadcast. Not
    differentiable (torch defines no derivative): the result does not require grad."""
    x = _tensor("heaviside", input)
    v = _tensor("heaviside", values, "values", 2)
    if x._dtype is not v._dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes "
                           f"({x._dtype} and {v._dtype}); convert values with "
                           f".to({x._dtype})")
    x, v = x.detach(), v.detach()
    step = E.gt(x, 0) if x._dtype is dtypes.bool_ else E.gt(x, 0).to(x._dtype)
    return write_out("heaviside", out, E.where(E.eq(x, 0), v, step))


def _integers(fn, input, other):
    x = _tensor(fn, input)
    y = _tensor(fn, other, "other", 2)
    dtype = dtypes.result_type(x, y)
    if dtype.is_floating_point or dtype is dtypes.bool_:
        raise _not_for(fn, dtype, f"{fn} needs integer tensors")
    return x.detach().to(dtype), y.detach().to(dtype)


def _gcd(a, b):
    """Euclid's algorithm as torch's calc_gcd runs it (|a|, |b|, then a, b = b % a, a until a
    is 0; C's truncated remainder), on every element at once: a bounded loop, as the remainders
    fall at least as fast as Fibonacci numbers rise (92 steps cover int64)."""
    a, b = E.abs(a), E.abs(b)
    a, b = E.add(a, E.mul(b, 0)), E.add(b, E.mul(a, 0))  # (broadcast against each other)
    for _ in range(a._dtype.itemsize * 12 + 2):
        live = E.ne(a, 0)
        if not bool(live.any()):
            break
        a, b = E.where(live, E.fmod(b, E.where(live, a, 1)), 0), E.where(live, a, b)
    return b


def gcd(input, other, *, out=None):
    """Greatest common divisor of integer tensors, elementwise (broadcast; gcd(0, 0) = 0)."""
    a, b = _integers("gcd", input, other)
    return write_out("gcd", out, _gcd(a, b))


def lcm(input, other, *, out=None):
    """Least common multiple of integer tensors: |a / gcd(a, b) * b| (0 when both are 0),
    wrapping on overflow as torch's (whose C++ computes 8- and 16-bit types in int)."""
    a, b = _integers("lcm", input, other)
    g = _gcd(a, b)
    zero = E.eq(g, 0)
    dtype = a._dtype
    if dtype.itemsize < 4:  # C++ promotes small integers to int for the arithmetic
        a, b, g = a.to(dtypes.int32), b.to(dtypes.int32), g.to(dtypes.int32)
    m = E.abs(E.mul(E.div(a, E.where(zero, 1, g), rounding_mode="trunc"), b))
    return write_out("lcm", out, E.where(zero, 0, m).to(dtype))


def _logit_rule(g, result, input, eps=None, *, out=None):
    x = input
    d = g / (x * (1 - x))
    if eps is None or eps < 0:  # torch: NaN outside [0, 1]
        return ((x, E.where(E.logical_or(E.lt(x, 0), E.gt(x, 1)), math.nan, d)),)
    return ((x, E.where(E.logical_or(E.lt(x, eps), E.gt(x, 1 - eps)), 0.0, d)),)


@_with_rule("logit", _logit_rule, uses_result=False)
def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)); with `eps`, p is first clamped to [eps, 1 - eps] (where the gradient
    is 0 outside, as torch's). Integer and bool inputs give the default float dtype."""
    x = _floating(_tensor("logit", input))
    if eps is not None and eps >= 0:
        x = E.clamp(x, eps, 1 - eps)
    return write_out("logit", out, E.log(E.div(x, E.sub(1, x))))


def float_power(input, exponent, *, out=None):
    """input ** exponent computed in float64 whatever the dtypes (either may be a number);
    out= must be float64, as torch requires."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"float_power(): expected a Tensor for input or exponent, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    if isinstance(out, Tensor) and out._dtype is not dtypes.float64:
        raise RuntimeError(f"the output given to float_power has dtype "
                           f"{_TORCH_NAMES[out.dtype.name]} but the operation's result requires "
                           f"dtype Double; pass out with dtype jitensor.float64")
    base = input.to(dtypes.float64) if isinstance(input, Tensor) else float(input)
    exp = exponent.to(dtypes.float64) if isinstance(exponent, Tensor) else exponent
    if not isinstance(exp, Tensor) and not isinstance(exp, bool):
        exp = float(exp)
    return write_out("float_power", out, E.pow(base, exp))


def _double_base(self):
    """`self`, which float_power_ writes its float64 result into: float64 itself, as torch."""
    if self._dtype is not dtypes.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_TORCH_NAMES[self.dtype.name]} but the operation's result requires "
                           f"dtype Double; convert it with .double() first")
    return self


def _float_power_(self, exponent):
    return in_place(float_power)(_double_base(self), exponent)


_float_power_.out_of_place = lambda self, exponent: float_power(_double_base(self), exponent)


def _exact_pow2(x, e):
    """x * 2**e for float x and integer e, as C's ldexp: one multiply by an exact power of two
    where 2**e is representable (subnormals included), two halves beyond (so 1e-300 * 2**1100
    does not overflow on the way)."""
    info = np.finfo(x._dtype.np)
    low, high = int(info.minexp) - int(info.nmant), int(info.maxexp) - 1
    e = E.clamp(e.to(dtypes.int64), 2 * low - 2, 2 * high + 2)
    inside = E.logical_and(E.ge(e, low), E.le(e, high))
    half = E.div(e, 2, rounding_mode="floor")
    first = E.where(inside, e, half).to(x._dtype)
    second = E.where(inside, 0, E.sub(e, half)).to(x._dtype)
    return E.mul(E.mul(x, E.pow(2.0, first)), E.pow(2.0, second))


def ldexp(input, other, *, out=None):
    """input * 2 ** other. A float input with an integer `other` is scaled exactly (C's ldexp,
    in input's dtype); otherwise torch's product with a power of two computed in float32 for
    integer and float32 inputs, in input's dtype (promoted with other's) for the rest."""
    x = _tensor("ldexp", input)
    e = _tensor("ldexp", other, "other", 2)
    if out is not None and isinstance(out, Tensor) and not out._dtype.is_floating_point:
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{_TORCH_NAMES[out.dtype.name]}; pass a floating-point out")
    if x._dtype.is_floating_point and not e._dtype.is_floating_point:
        result = _exact_pow2(x, e.detach())
    else:
        # torch's _pow2: a float32 power for integer and float32 inputs, input's dtype else
        base = 2.0 if not x._dtype.is_floating_point or x._dtype is dtypes.float32 else \
            creation.full((), 2.0, dtype=x._dtype, device=x.device)
        result = E.mul(x, E.pow(base, e))
    return write_out("ldexp", out, result)


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0 (gradient 0 there, as torch's)."""
    x = _floating(_tensor("sinc", input))
    zero = E.eq(x, 0)
    px = E.mul(x, math.pi)
    return write_out("sinc", out, E.where(zero, 1.0, E.div(E.sin(px), E.where(zero, 1.0, px))))


_BITS = {dtypes.float16: dtypes.int16, dtypes.float32: dtypes.int32,
         dtypes.float64: dtypes.int64}


def nextafter(input, other, *, out=None):
    """The next representable value after input towards other (floating point, promoted;
    broadcast), by stepping the bit pattern viewed as an integer. Not differentiable (torch
    defines no derivative)."""
    x = _tensor("nextafter", input)
    y = _tensor("nextafter", other, "other", 2)
    dtype = dtypes.result_type(x, y)
    if not dtype.is_floating_point:
        raise _not_for("nextafter", dtype, "nextafter needs floating-point tensors")
    x, y = x.detach().to(dtype), y.detach().to(dtype)
    shape = tuple(E.add(x, y).shape) if x.shape != y.shape else tuple(x.shape)
    x, y = x.expand(shape).contiguous(), y.expand(shape).contiguous()
    bits = x.view(_BITS[dtype])
    # away from zero: +1 on the bit pattern when moving up from a positive or down from a
    # negative, -1 otherwise; from +-0 the smallest subnormal with y's sign
    away = E.eq(E.lt(x, y), E.gt(x, 0))
    stepped = E.add(bits, E.where(away, 1, -1).to(bits.dtype)).view(dtype)
    tiny = float(np.nextafter(dtype.np.type(0), dtype.np.type(1)))
    result = E.where(E.eq(x, 0), E.copysign(tiny, y), stepped)
    result = E.where(E.eq(x, y), y, result)
    result = E.where(E.logical_or(E.isnan(x), E.isnan(y)), math.nan, result)
    return write_out("nextafter", out, result)


def positive(input):
    """input itself (torch's unary +); bool tensors are refused as torch refuses them."""
    x = _tensor("positive", input)
    if x._dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


def rsub(input, other, *, alpha=1):
    """other - alpha * input (other may be a number)."""
    return E.sub(other, _tensor("rsub", input), alpha=alpha)


def isposinf(input, *, out=None):
    """Whether each element is +inf (bool; never for integer tensors)."""
    x = _tensor("isposinf", input).detach()
    if not x._dtype.is_floating_point:
        return _bool_out("isposinf", out, creation.zeros(x.shape, dtype=dtypes.bool_,
                                                         device=x.device))
    return _bool_out("isposinf", out, E.eq(x, math.inf))


def isneginf(input, *, out=None):
    """Whether each element is -inf (bool; never for integer tensors)."""
    x = _tensor("isneginf", input).detach()
    if not x._dtype.is_floating_point:
        return _bool_out("isneginf", out, creation.zeros(x.shape, dtype=dtypes.bool_,
                                                         device=x.device))
    return _bool_out("isneginf", out, E.eq(x, -math.inf))


def isreal(input):
    """Whether each element has no imaginary part: all True, jitensor having no complex
    dtypes."""
    x = _tensor("isreal", input)
    return creation.ones(x.shape, dtype=dtypes.bool_, device=x.device)


# -- lgamma -----------------------------------------------------------------------------------
# lgamma(2 + z) = (1 - euler_gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) / k z^k, |z| <= 1/2: 25
# terms reach 2e-17 (coefficients from mpmath at 40 digits)
_LGAMMA2 = (0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
            -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261,
            0.0005096695247430425, -0.00022315475845357939, 9.945751278180853e-05,
            -4.492623673813314e-05, 2.050721277567069e-05, -9.439488275268397e-06,
            4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
            -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07,
            4.7698101693639804e-08, -2.2711094608943164e-08, 1.0838659214896955e-08,
            -5.183475041970047e-09, 2.4836745438024785e-09, -1.1921401405860912e-09,
            5.731367241678862e-10)
# Stirling's series B_2k / (2k (2k - 1) x^(2k-1)), k = 1..8: below 2e-18 from x = 10 on
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _horner(z, coefficients):
    """sum_i coefficients[i] z^i."""
    acc = None
    for c in reversed(coefficients):
        acc = creation.full_like(z, c) if acc is None else E.add(E.mul(acc, z), c)
    return acc


def _lgamma_from_half(y):
    """lgamma(y) for y >= 1/2 (NaN passes): the series about 2 for y in [1/2, 10) (shifted
    there by the recurrence lgamma(y) = lgamma(y - n) + log((y-1)...(y-n)), or from below by
    lgamma(y) = lgamma(y + 1) - log1p(y - 1), accurate near the zeros at 1 and 2), Stirling's
    series from 10 on."""
    big = E.ge(y, 10)
    mid = E.logical_and(E.ge(y, 1.5), E.logical_not(big))
    # [3/2, 10): z = y - n - 2 in [-1/2, 1/2) exactly (the subtractions are exact there);
    # [1/2, 3/2): z = y - 1
    n = E.where(mid, E.floor(E.sub(y, 1.5)), 0.0)
    z = E.where(big, 0.0, E.where(mid, E.sub(E.sub(y, n), 2), E.sub(y, 1)))
    series = E.mul(z, _horner(z, _LGAMMA2))
    product = None
    for i in range(1, 9):
        factor = E.where(E.le(i, n), E.sub(y, i), 1.0)
        product = factor if product is None else E.mul(product, factor)
    small = E.sub(series, E.log1p(z))  # y < 1.5: lgamma(y + 1) - log(y), z = y - 1
    near = E.where(mid, E.add(series, E.log(product)), small)
    # [10, inf): (y - 1/2) log y - y + log(2 pi) / 2 + the series in 1 / y
    yb = E.where(big, y, 10.0)
    r = E.reciprocal(yb)
    stirling = E.add(E.add(E.sub(E.mul(E.sub(yb, 0.5), E.log(yb)), yb), _HALF_LOG_2PI),
                     E.mul(r, _horner(E.mul(r, r), _STIRLING)))
    stirling = E.where(E.isinf(yb), math.inf, stirling)
    return E.where(big, stirling, near)


def _log_abs_sinpi(x):
    """log|sin(pi x)|, reduced exactly to sin(pi a) with a in [0, 1/2] first (pi x itself would
    lose the fraction of a large x); log(pi) + log(a) for a below 1e-8, where pi a would lose
    the bits of a subnormal a."""
    a = E.abs(E.sub(x, E.mul(E.round(E.mul(x, 0.5)), 2)))
    a = E.where(E.gt(a, 0.5), E.sub(1, a), a)
    return E.where(E.lt(a, 1e-8), E.add(E.log(a), math.log(math.pi)),
                   E.log(E.sin(E.mul(a, math.pi))))


def _lgamma_rule(g, result, input, *, out=None):
    return ((input, g * digamma(input)),)


@_with_rule("lgamma", _lgamma_rule, uses_result=False)
def lgamma(input, *, out=None):
    """log|Gamma(input)|: +inf at the poles (0 and the negative integers) and at +-inf.
    Arguments below 1/2 by the reflection lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x)
    (the logarithms apart: pi / sin(pi x) overflows for subnormal x)."""
    x, result = _computing(_floating(_tensor("lgamma", input)))
    reflect = E.lt(x, 0.5)
    pos = _lgamma_from_half(E.where(reflect, E.sub(1, x), x))
    y = E.where(reflect, E.sub(E.sub(math.log(math.pi), _log_abs_sinpi(x)), pos), pos)
    return _done(E.where(E.isinf(x), math.inf, y), result, out, "lgamma")


# -- digamma and polygamma --------------------------------------------------------------------
_PSI_10 = 2.25175258906672110764
_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)  # Cephes' psi asymptotic series, highest power first


def _digamma_rule(g, result, input, *, out=None):
    return ((input, g * polygamma(1, input)),)


@_with_rule("digamma", _digamma_rule, uses_result=False)
def digamma(input, *, out=None):
    """The logarithmic derivative of Gamma, as torch computes it (Cephes' psi): shifted up to
    10 by psi(x) = psi(x + 1) - 1/x, then its asymptotic series; negative arguments by the
    reflection psi(1 - x) - pi / tan(pi frac(x)). -inf at +0, +inf at -0 and NaN at the
    negative integers, as torch."""
    x, result = _computing(_floating(_tensor("digamma", input)))
    negative = E.lt(x, 0)
    y = E.where(negative, E.sub(1, x), x)
    acc = creation.zeros_like(y)
    for _ in range(10):  # y > 0 reaches 10 within 10 steps
        low = E.lt(y, 10)
        acc = E.sub(acc, E.where(low, E.reciprocal(y), 0.0))
        y = E.where(low, E.add(y, 1), y)
    z = E.reciprocal(E.mul(y, y))
    tail = E.where(E.lt(y, 1e17), E.mul(z, _horner(z, _PSI_A[::-1])), 0.0)
    psi = E.sub(E.sub(E.add(acc, E.log(y)), E.div(0.5, y)), tail)
    psi = E.where(E.eq(y, 10), E.add(acc, _PSI_10), psi)
    # pi / tan(pi r) of the fraction r, in float64 (as torch computes it for float32 too)
    r = E.sub(x, E.trunc(x)).to(dtypes.float64)
    cot = E.div(math.pi, E.tan(E.mul(r, math.pi))).to(x._dtype)
    psi = E.where(negative, E.sub(psi, cot), psi)
    psi = E.where(E.eq(x, 0), E.copysign(math.inf, E.neg(x)), psi)
    psi = E.where(E.logical_and(negative, E.eq(x, E.trunc(x))), math.nan, psi)
    return _done(psi, result, out, "digamma")


def _trigamma(x):
    """torch's trigamma: the reflection below 1/2, six steps of psi1(x) = psi1(x + 1) + 1/x^2,
    then four terms of the asymptotic series (torch's own accuracy, ~1e-9 relative)."""
    reflect = E.lt(x, 0.5)
    s = E.sin(E.mul(x, math.pi))
    acc = E.where(reflect, E.neg(E.div(math.pi * math.pi, E.mul(s, s))), 0.0)
    y = E.where(reflect, E.sub(1, x), x)
    for _ in range(6):
        acc = E.add(acc, E.reciprocal(E.mul(y, y)))
        y = E.add(y, 1)
    ixx = E.reciprocal(E.mul(y, y))
    series = E.mul(ixx, E.sub(1 / 6, E.mul(ixx, E.sub(1 / 30, E.mul(ixx, 1 / 42)))))
    acc = E.add(acc, E.div(E.add(E.add(E.div(1, E.mul(y, 2)), 1), series), y))
    return E.where(reflect, E.neg(acc), acc)


_MACHEP = 1.11022302462515654042E-16
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


_MAX_TERMS = 1 << 22


def _zeta(s, q):
    """Hurwitz zeta(s, q) for an integer s >= 2, as Cephes' zeta that torch runs: the direct
    sum over q, q + 1, ..., q + K (K the first of at least 9 steps past 9), then the
    Euler-Maclaurin tail with its early stop. +inf where q is a non-positive integer. (The
    direct sum is taken whole, where Cephes may stop once a term is below 1e-16 of the sum.)"""
    pole = E.logical_and(E.le(q, 0), E.eq(q, E.floor(q)))
    start = E.where(E.logical_or(E.logical_or(E.isnan(q), pole), E.gt(q, 9)), 9.0, q)
    last = E.maximum(E.add(E.floor(E.sub(9, start)), 1), 9.0)  # K, per element
    total = creation.zeros_like(q)
    if q.numel():
        kmax = int(last.max().item())
        if kmax > _MAX_TERMS:
            raise RuntimeError(f"polygamma(): n >= 2 below x = -{_MAX_TERMS - 9} is not supported "
                               f"(got x = {float(q.min().item())!r}): Cephes' series would sum "
                               f"|x| terms, and cancels to noise there")
        chunk = max(16, (1 << 20) // q.numel())  # (a negative q may need many terms)
        qs, ls = q.unsqueeze(-1), last.unsqueeze(-1)
        for lo in range(0, kmax + 1, chunk):
            k = creation.arange(lo, min(kmax + 1, lo + chunk), dtype=q.dtype, device=q.device)
            terms = E.where(E.le(k, ls), E.pow(E.add(qs, k), -float(s)), 0.0)
            total = E.add(total, terms.sum(-1))
    w = E.add(q, last)
    b = E.pow(w, -float(s))
    total = E.sub(E.add(total, E.div(E.mul(b, w), s - 1)), E.mul(b, 0.5))
    a, k, done = 1.0, 0.0, None
    for coefficient in _ZETA_A:
        a *= s + k
        b = E.div(b, w)
        t = E.div(E.mul(b, a), coefficient)
        new = E.add(total, t)
        total = new if done is None else E.where(done, total, new)
        small = E.lt(E.abs(E.div(t, new)), _MACHEP)
        done = small if done is None else E.logical_or(done, small)
        k += 1
        a *= s + k
        b = E.div(b, w)
        k += 1
    return E.where(pole, math.inf, total)


def _polygamma_rule(g, result, n, input, *, out=None):
    return ((input, g * polygamma(n + 1, input)),)


@_with_rule("polygamma", _polygamma_rule, uses_result=False)
def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma: digamma for n = 0, torch's trigamma for n = 1, and
    (-1)^(n+1) n! zeta(n + 1, x) for n >= 2 (Cephes' Hurwitz zeta, in float64 for float32
    inputs as torch's CPU kernel accumulates)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    x = _floating(_tensor("polygamma", input, position=2))
    if n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got n={n})")
    if n == 0:
        return digamma(x, out=out)
    if n == 1:
        x, result = _computing(x)
        return _done(_trigamma(x), result, out, "polygamma")
    x, result = _computing(x, wide=True)
    sign = 1.0 if n % 2 else -1.0
    # (zeta in the result dtype before the product, as torch's: a float32 result underflows
    # where zeta does)
    return write_out("polygamma", out, E.mul(_zeta(n + 1, x).to(result),
                                             sign * float(math.factorial(n))))


def _polygamma_(self, n):
    def op(x):
        return polygamma(n, x)
    op.__name__ = "polygamma"  # (the name in_place's messages give)
    return in_place(op)(self)


_polygamma_.out_of_place = lambda self, n: polygamma(n, self)  # (n comes first)


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma of dimension p: p(p-1)/4 log(pi) + sum_{j<p} lgamma(input -
    j/2) (integer inputs give the default float dtype)."""
    x = _floating(_tensor("mvlgamma", input))
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1 (got p={p})")
    shifts = creation.arange(-(p - 1) / 2, 0.25, 0.5, dtype=x.dtype, device=x.device)
    terms = lgamma(E.add(x.unsqueeze(-1), shifts))
    return write_out("mvlgamma", out, E.add(terms.sum(-1), p * (p - 1) / 4 * math.log(math.pi)))


# -- erfinv -----------------------------------------------------------------------------------
_ERFINV_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_ERFINV_B = (1.0, -2.118377725, 1.442710462, -0.329097515, 0.012229801)
_ERFINV_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ERFINV_D = (1.0, 3.543889200, 1.637067800)


def _erfinv_rule(g, result, input, *, out=None):
    return ((input, g * (math.sqrt(math.pi) / 2) * E.exp(result * result)),)


@_with_rule("erfinv", _erfinv_rule)
def erfinv(input, *, out=None):
    """The inverse error function on [-1, 1] (+-inf at +-1, NaN outside): the rational
    approximation torch starts from (central for |y| <= 0.7, in sqrt(-log((1 - |y|) / 2))
    beyond), refined by Newton steps -- two on erf in the centre, four on erfc against the exact
    1 - |y| in the tails, where erf(x) is within an ulp of 1 for a range of x wide as 1e-4 and
    Newton on it stops short (torch's float64 values are the exact ones there too)."""
    y, result = _computing(_floating(_tensor("erfinv", input)))
    ay = E.abs(y)
    central = E.le(ay, 0.7)
    z = E.mul(y, y)
    xc = E.div(E.mul(y, _horner(z, _ERFINV_A)), _horner(z, _ERFINV_B))
    rest = E.sub(1, E.where(central, 0.0, ay))  # 1 - |y|, exact for |y| >= 1/2
    t = E.sqrt(E.neg(E.log(E.div(rest, 2))))
    xt = E.div(_horner(t, _ERFINV_C), _horner(t, _ERFINV_D))  # |x| in the tails
    for _ in range(2):
        xc = E.sub(xc, E.div(E.sub(E.erf(xc), y), _erf_slope(xc)))
    for _ in range(4):  # the tail's start is off by up to 1e-2 (near |y| = 1 - 1e-16), and
        # Newton's error there goes as x e^2: four steps reach 1e-16
        xt = E.add(xt, E.div(E.sub(E.erfc(xt), rest), _erf_slope(xt)))
    x = E.where(central, xc, E.copysign(xt, y))
    x = E.where(E.eq(ay, 1), E.copysign(math.inf, y), x)
    return _done(E.where(E.gt(ay, 1), math.nan, x), result, out, "erfinv")


def _erf_slope(x):
    return E.mul(E.exp(E.neg(E.mul(x, x))), 2 / math.sqrt(math.pi))


# -- i0 ---------------------------------------------------------------------------------------
# Cephes' Chebyshev coefficients: exp(-x) I0(x) on [0, 8], exp(-x) sqrt(x) I0(x) on (8, inf),
# and the same for I1 (whose [0, 8] series is of exp(-x) I1(x) / x)
_I0_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
         1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
         -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
         9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
         -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
         1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
         -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
         1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
         -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
         1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
         3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
         1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
         -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
         7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
         -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
         3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
         2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
         8.04490411014108831608E-1)
_I1_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
         -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
         3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
         -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
         9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
         -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
         4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
         -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
         2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
         -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
         -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
         -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
         4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
         -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
         3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
         -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
         -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
         7.78576235018280120474E-1)


def _chbevl(x, coefficients):
    """Cephes' Chebyshev series sum (Clenshaw's recurrence, in its order of operations)."""
    b0, b1, b2 = creation.full_like(x, coefficients[0]), creation.zeros_like(x), None
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = E.add(E.sub(E.mul(x, b1), b2), c)
    return E.mul(E.sub(b0, b2), 0.5)


def _bessel(x, a, b, order):
    """Cephes' i0 (order 0) or i1 (order 1) of a float tensor."""
    ax = E.abs(x)
    small = E.le(ax, 8)
    near = E.mul(E.exp(ax), _chbevl(E.sub(E.div(E.where(small, ax, 0.0), 2), 2), a))
    if order:
        near = E.mul(near, ax)
    far_x = E.where(small, 8.0, ax)
    far = E.div(E.mul(E.exp(ax), _chbevl(E.sub(E.div(32.0, far_x), 2), b)), E.sqrt(ax))
    out = E.where(small, near, far)
    return E.where(E.lt(x, 0), E.neg(out), out) if order else out


def _i0_rule(g, result, input, *, out=None):
    x, _ = _computing(input)
    return ((input, g * _bessel(x, _I1_A, _I1_B, 1).to(input.dtype)),)


@_with_rule("i0", _i0_rule, uses_result=False)
def i0(input, *, out=None):
    """The modified Bessel function of the first kind of order 0, by Cephes' Chebyshev
    expansions on [0, 8] and (8, inf) as torch computes it (which gives NaN at +-inf, and inf
    once exp(|x|) overflows). Its derivative is i1, computed the same way."""
    x, result = _computing(_floating(_tensor("i0", input)))
    return _done(_bessel(x, _I0_A, _I0_B, 0), result, out, "i0")


# -- module-level in-place functions (torch.abs_(x), ...) -------------------------------------
_TORCH_INPLACE = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clip_", "cos_",
    "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
    "floor_", "frac_", "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "xlogy_", "zero_")


def _module_inplace(name):
    def fn(input, *args, **kwargs):
        # the method looked up per call: autograd's wrapper (version counter, graph) is attached
        # to Tensor after this module is imported
        return getattr(_tensor(name, input), name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: torch's module-level form of the in-place method."
    return fn


globals().update({name: _module_inplace(name) for name in _TORCH_INPLACE})


# -- predicates -------------------------------------------------------------------------------
def is_tensor(obj):
    """Whether obj is a jitensor Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """Whether input's dtype is a floating-point dtype."""
    return _tensor("is_floating_point", input)._dtype.is_floating_point


def is_complex(input):
    """Whether input's dtype is complex: never, jitensor having no complex dtypes."""
    return _tensor("is_complex", input)._dtype.is_complex


def is_signed(input):
    """Whether input's dtype is signed (not bool or uint8)."""
    return _tensor("is_signed", input)._dtype.is_signed


def is_nonzero(input):
    """Whether the single element of input is nonzero (NaN is); errors for zero or several
    elements, as torch's."""
    n = _tensor("is_nonzero", input).numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if not n else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.detach().item() != 0)


def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    return _tensor("is_same_size", input).shape == \
        _tensor("is_same_size", other, "other", 2).shape


def get_device(input):
    """The CUDA device index of input, or -1 for a CPU tensor (torch's convention)."""
    d = _tensor("get_device", input)._device
    return -1 if d.type == "cpu" else (d.index or 0)


# -- creation ---------------------------------------------------------------------------------
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`steps` powers base ** e, e evenly spaced from start to end, as torch computes them:
    exponents and powers in float64 from bounds rounded to the dtype (integer dtypes: the
    bounds truncated, base taken as float32, the powers truncated)."""
    start = creation._number(start, "logspace", "start")
    end = creation._number(end, "logspace", "end")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"logspace(): argument 'steps' (position 3) must be int, not "
                        f"{type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative (got steps={steps})")
    t = creation._target("logspace", (int(steps),), out, dtype, layout, device, requires_grad,
                         False)
    if t._dtype is dtypes.bool_:
        raise _not_for("logspace", t._dtype, "pass a numeric dtype")
    if not steps:
        return t
    if t._dtype.is_floating_point:
        lo, hi, base = float(t._dtype.np.type(start)), float(t._dtype.np.type(end)), float(base)
    else:
        lo, hi, base = float(int(start)), float(int(end)), float(np.float32(base))
    i = creation.arange(steps, dtype=dtypes.float64, device=t.device)
    if steps == 1:
        exponent = E.add(E.mul(i, 0), lo)
    else:  # torch's two halves: from start up to the middle, from end down after it
        step = (hi - lo) / (steps - 1)
        exponent = E.where(E.lt(i, steps // 2), E.add(E.mul(i, step), lo),
                           E.sub(hi, E.mul(E.sub(steps - 1, i), step)))
    backend(t._device).copy(t._data, E.pow(base, exponent)._data)
    return t


def _window_length(fn, window_length, dtype, layout, device):
    if isinstance(window_length, bool) or not isinstance(window_length, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{fn} requires non-negative window_length, got "
                           f"window_length={window_length}")
    creation._check_layout(layout, None, fn)
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{fn} expects floating point dtypes, got: {dtype}")
    return dtype, creation.CPU if device is None else _to_device(device)


def _window(fn, window_length, periodic, dtype, layout, device, requires_grad, make):
    """torch's frame for the window functions: checks, [] for length 0, [1] for length 1, one
    extra point dropped when periodic; `make(n, dtype, device)` gives the symmetric window of
    n >= 2 points."""
    dtype, device = _window_length(fn, window_length, dtype, layout, device)
    if window_length <= 1:
        w = creation.ones(int(window_length), dtype=dtype, device=device)
    else:
        n = int(window_length) + 1 if periodic else int(window_length)
        w = make(n, dtype, device)
        if periodic:
            w = w[:n - 1].contiguous()
    return w.requires_grad_(requires_grad) if requires_grad else w


def _cosine_window(alpha, beta):
    def make(n, dtype, device):
        k = creation.arange(n, dtype=dtype, device=device)
        return E.add(E.mul(E.cos(E.mul(k, math.pi * 2 / (n - 1))), -beta), alpha)
    return make


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """0.5 - 0.5 cos(2 pi k / (N - 1)) (N = window_length, + 1 when periodic)."""
    return _window("hann_window", window_length, periodic, dtype, layout, device, requires_grad,
                   _cosine_window(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """alpha - beta cos(2 pi k / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _cosine_window(alpha, beta))


def _blackman(n, dtype, device):
    k = E.mul(creation.arange(n, dtype=dtype, device=device), math.pi / (n - 1))
    return E.add(E.sub(E.mul(E.cos(E.mul(k, 4)), 0.08), E.mul(E.cos(E.mul(k, 2)), 0.5)), 0.42)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _blackman)


def _bartlett(n, dtype, device):
    k = creation.arange(n, dtype=dtype, device=device)
    w = E.mul(k, 2 / (n - 1))
    return E.where(E.ge(k, ((n - 1) >> 1) + 1), E.add(E.neg(w), 2), w)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The triangle 1 - |2k / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _bartlett)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """i0(beta sqrt(1 - ((k - a) / a)^2)) / i0(beta), a = (N - 1) / 2."""
    def make(n, dtype, device):
        a = (n - 1) / 2
        k = creation.arange(n, dtype=dtype, device=device)
        r = E.sqrt(E.abs(E.sub(1, E.square(E.div(E.sub(k, a), a)))))
        beta_ = creation.full((), beta, dtype=dtype, device=device)
        return E.div(i0(E.mul(r, beta_)), i0(beta_))
    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, make)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A 0-d tensor holding the number s, of the default float dtype unless dtype says
    otherwise (even for an int or bool s, as torch's)."""
    if isinstance(s, Tensor):
        s = s.item()
    dtype = dtypes.get_default_dtype() if dtype is None else dtype
    return creation.full((), s, dtype=dtype, layout=layout, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of `size` whose strides (in elements) are `stride`: a view of a
    new buffer just large enough for its last element (strides may overlap or be 0)."""
    size, stride = list(size), list(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    for values, what in ((size, "sizes"), (stride, "strides")):
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"empty_strided(): {what} must be ints, got "
                                f"{type(v).__name__}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {size}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided(): negative strides are not supported, got "
                           f"strides={stride}")
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    buf = creation.empty(extent, dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory)
    t = strided_view(buf, [int(n) for n in size], [int(s) for s in stride])
    return t.requires_grad_(requires_grad) if requires_grad else t


# -- exports ----------------------------------------------------------------------------------
# in-place methods that run their out-of-place op (autograd/wrap.py rebases self on its graph)
COMPOSED = ("deg2rad", "rad2deg", "frac", "fix", "sgn", "heaviside", "gcd", "lcm", "logit",
            "float_power", "ldexp", "sinc", "nextafter", "lgamma", "digamma", "mvlgamma",
            "erfinv", "i0")

_FUNCTIONS = ("deg2rad", "rad2deg", "frac", "fix", "sgn", "signbit", "heaviside", "gcd", "lcm",
              "logit", "float_power", "ldexp", "sinc", "nextafter", "positive", "rsub",
              "isposinf", "isneginf", "isreal", "lgamma", "digamma", "polygamma", "mvlgamma",
              "erfinv", "i0", "is_tensor", "is_floating_point", "is_complex", "is_signed",
              "is_nonzero", "is_same_size", "get_device", "logspace", "hann_window",
              "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
              "scalar_tensor", "empty_strided")

__all__ = sorted(_FUNCTIONS + _TORCH_INPLACE)

_METHODS = ("deg2rad", "rad2deg", "frac", "fix", "sgn", "signbit", "heaviside", "gcd", "lcm",
            "logit", "float_power", "ldexp", "sinc", "nextafter", "positive", "isposinf",
            "isneginf", "isreal", "lgamma", "digamma", "mvlgamma", "erfinv", "i0", "is_complex",
            "is_signed", "is_nonzero", "is_same_size", "get_device")
TENSOR_METHODS = {name: globals()[name] for name in _METHODS}
TENSOR_METHODS.update({name + "_": in_place(globals()[name]) for name in COMPOSED})
TENSOR_METHODS.update(
    polygamma=lambda self, n, *, out=None: polygamma(n, self, out=out),
    # (not in COMPOSED: its method's argument order is not the function's, so it is not
    # differentiable in place)
    polygamma_=_polygamma_,
    float_power_=_float_power_,
    type_as=lambda self, other: self.to(_tensor("type_as", other, "other")),
    ndimension=lambda self: self.ndim,
)
