"""The rules of ops/elementwise.py's ops."""
import math

from ...backends.scalar.elementwise import THRESHOLD
from ...ops import activation, elementwise
from ...tensor import Tensor
from ._common import _other_operands, _pass, _recorded, _zero, rule


@rule("add", uses_inputs=False, uses_result=False)
def _add(g, result, input, other, *, alpha=1, out=None):
    return (input, g), (other, g if alpha == 1 else g * alpha)


@rule("sub", "subtract", uses_inputs=False, uses_result=False)
def _sub(g, result, input, other, *, alpha=1, out=None):
    return (input, g), (other, -g if alpha == 1 else g * -alpha)


def _quotient_operands(input, other, **kwargs):
    """The operands a quotient's gradient reads: the divisor, and the dividend where the
    divisor needs its gradient (torch's)."""
    if not isinstance(other, Tensor):
        return []
    return [input, other] if isinstance(input, Tensor) and other.requires_grad else [other]


@rule("mul", "multiply", uses_inputs=_other_operands, uses_result=False)
def _mul(g, result, input, other, *, out=None):
    return (input, g * other), (other, g * input)


@rule("div", "divide", uses_inputs=_quotient_operands, uses_result=False)
def _div(g, result, input, other, *, rounding_mode=None, out=None):
    if rounding_mode is not None:
        return (input, _zero(g)), (other, _zero(g))
    if not (isinstance(other, Tensor) and other.requires_grad):
        return ((input, g / other),)
    return (input, g / other), (other, -g * ((input / other) / other))  # (torch's order)


@rule("remainder", uses_result=False)
def _remainder(g, result, input, other, *, out=None):
    return (input, g), \
        (other, -g * elementwise.floor(input / other) if isinstance(other, Tensor) else None)


@rule("fmod", uses_result=False)
def _fmod(g, result, input, other, *, out=None):
    return (input, g), \
        (other, -g * elementwise.trunc(input / other) if isinstance(other, Tensor) else None)


def _pow_reads_result(input, exponent, **kwargs):
    """Only the exponent's gradient reads pow's result (torch saves it for that alone)."""
    return isinstance(exponent, Tensor) and exponent.requires_grad


@rule("pow", uses_result=_pow_reads_result)
def _pow(g, result, input, exponent, *, out=None):
    pairs = []
    if isinstance(input, Tensor):
        d = elementwise.where(exponent == 0, 0.0, g * exponent * input ** (exponent - 1)) \
            if isinstance(exponent, Tensor) else \
            (_zero(g) if exponent == 0 else g * exponent * input ** (exponent - 1))
        pairs.append((input, d))
    if isinstance(exponent, Tensor) and result is not None:
        base = input if isinstance(input, Tensor) else math.log(input) if input > 0 else None
        d = g * result * elementwise.log(input) if isinstance(input, Tensor) else \
            (g * result * base if base is not None else
             elementwise.where(result == 0, 0.0, g * result * math.log(abs(input) or 1)))
        pairs.append((exponent, elementwise.where((input == 0) & (exponent >= 0), 0.0, d)
                      if isinstance(input, Tensor) else d))
    return pairs


def _extremum(larger):
    def extremum(g, result, input, other, *, out=None):
        # ties split the gradient evenly, as torch does
        wins = (input > other) if larger else (input < other)
        tie = input == other
        half = g * 0.5
        return (input, elementwise.where(tie, half, _pass(wins, g))), \
            (other, elementwise.where(tie, half, _pass(~wins, g)))
    return extremum


rule("maximum", uses_result=False)(_extremum(True))
rule("minimum", uses_result=False)(_extremum(False))


@rule("atan2", "arctan2", uses_result=False)
def _atan2(g, result, input, other, *, out=None):
    denom = input * input + other * other
    return (input, g * other / denom), (other, -g * input / denom)


@rule("neg", "negative", uses_inputs=False, uses_result=False)
def _neg(g, result, input, *, out=None):
    return ((input, -g),)


@rule("abs", "absolute", uses_result=False)
def _abs(g, result, input, *, out=None):
    return ((input, g * elementwise.sign(input)),)


@rule("sign", "floor", "ceil", "round", "trunc", uses_inputs=False, uses_result=False)
def _flat_steps(g, result, input, *args, **kwargs):
    return ((input, _zero(g)),)


@rule("exp", uses_inputs=False)
def _exp(g, result, input, *, out=None):
    return ((input, g * result),)


@rule("expm1", uses_inputs=False)
def _expm1(g, result, input, *, out=None):
    return ((input, g * (result + 1)),)


@rule("log", uses_result=False)
def _log(g, result, input, *, out=None):
    return ((input, g / input),)


@rule("log1p", uses_result=False)
def _log1p(g, result, input, *, out=None):
    return ((input, g / (input + 1)),)


@rule("sqrt", uses_inputs=False)
def _sqrt(g, result, input, *, out=None):
    return ((input, g / (2 * result)),)


@rule("rsqrt", uses_inputs=False)
def _rsqrt(g, result, input, *, out=None):
    return ((input, g * -0.5 * result * result * result),)


@rule("reciprocal", uses_inputs=False)
def _reciprocal(g, result, input, *, out=None):
    return ((input, -g * result * result),)


@rule("square", uses_result=False)
def _square(g, result, input, *, out=None):
    return ((input, 2 * g * input),)


@rule("sin", uses_result=False)
def _sin(g, result, input, *, out=None):
    return ((input, g * elementwise.cos(input)),)


@rule("cos", uses_result=False)
def _cos(g, result, input, *, out=None):
    return ((input, -g * elementwise.sin(input)),)


@rule("tanh", uses_inputs=False)
def _tanh(g, result, input, *, out=None):
    return ((input, g * (1 - result * result)),)


@rule("sigmoid", uses_inputs=False)
def _sigmoid(g, result, input, *, out=None):
    return ((input, g * result * (1 - result)),)


@rule("tan", uses_inputs=False)
def _tan(g, result, input, *, out=None):
    return ((input, g * (1 + result * result)),)


@rule("asin", "arcsin", uses_result=False)
def _asin(g, result, input, *, out=None):
    return ((input, g * elementwise.rsqrt(1 - input * input)),)


@rule("acos", "arccos", uses_result=False)
def _acos(g, result, input, *, out=None):
    return ((input, -g * elementwise.rsqrt(1 - input * input)),)


@rule("atan", "arctan", uses_result=False)
def _atan(g, result, input, *, out=None):
    return ((input, g / (1 + input * input)),)


@rule("sinh", uses_result=False)
def _sinh(g, result, input, *, out=None):
    return ((input, g * elementwise.cosh(input)),)


@rule("cosh", uses_result=False)
def _cosh(g, result, input, *, out=None):
    return ((input, g * elementwise.sinh(input)),)


@rule("asinh", "arcsinh", uses_result=False)
def _asinh(g, result, input, *, out=None):
    return ((input, g * elementwise.rsqrt(input * input + 1)),)


@rule("acosh", "arccosh", uses_result=False)
def _acosh(g, result, input, *, out=None):
    return ((input, g * elementwise.rsqrt((input - 1) * (input + 1))),)


@rule("atanh", "arctanh", uses_result=False)
def _atanh(g, result, input, *, out=None):
    return ((input, g / (1 - input * input)),)


@rule("log2", uses_result=False)
def _log2(g, result, input, *, out=None):
    return ((input, g / (input * math.log(2))),)


@rule("log10", uses_result=False)
def _log10(g, result, input, *, out=None):
    return ((input, g / (input * math.log(10))),)


@rule("exp2", uses_inputs=False)
def _exp2(g, result, input, *, out=None):
    return ((input, g * result * math.log(2)),)


@rule("erf", uses_result=False)
def _erf(g, result, input, *, out=None):
    return ((input, g * (2 / math.sqrt(math.pi)) * elementwise.exp(-input * input)),)


@rule("erfc", uses_result=False)
def _erfc(g, result, input, *, out=None):
    return ((input, g * (-2 / math.sqrt(math.pi)) * elementwise.exp(-input * input)),)


@rule("hypot")
def _hypot(g, result, input, other, *, out=None):
    return (input, g * input / result), (other, g * other / result)


@rule("copysign")
def _copysign(g, result, input, other, *, out=None):
    # d|x|sign(y)/dx = sign(x) sign(y) = result / x where x != 0 (torch gives 0 there);
    # the sign's source gets zeros, as in torch
    return (input, _pass(input != 0, g * result / input)), (other, _zero(g))


@rule("logaddexp")
def _logaddexp(g, result, input, other, *, out=None):
    return (input, g * elementwise.exp(input - result)), \
        (other, g * elementwise.exp(other - result))


@rule("logaddexp2")
def _logaddexp2(g, result, input, other, *, out=None):
    return (input, g * elementwise.exp2(input - result)), \
        (other, g * elementwise.exp2(other - result))


def _nan_ignoring(larger):
    def extremum(g, result, input, other, *, out=None):
        # torch: the gradient goes to input where it won or other is NaN, else to other
        first = ((input >= other) if larger else (input <= other)) | elementwise.isnan(other)
        return (input, _pass(first, g)), (other, _pass(~first, g))
    return extremum


rule("fmax", uses_result=False)(_nan_ignoring(True))
rule("fmin", uses_result=False)(_nan_ignoring(False))


@rule("xlogy", uses_result=False)
def _xlogy(g, result, input, other, *, out=None):
    pairs = [(other, g * input / other)]
    if isinstance(input, Tensor):  # torch: 0 where input is 0 and other <= 0
        pairs.append((input, _pass(~((input == 0) & (other <= 0)), elementwise.xlogy(g, other))))
    return pairs


@rule("relu", uses_inputs=False)
def _relu(g, result, input, *, out=None):
    # torch's threshold_backward of the result: g unless it is <= 0 (a NaN passes g), in one
    # kernel (a comparison and a selection took two passes)
    if not _recorded(g, result):
        return ((input, activation.backward(THRESHOLD, g, result, 0)),)
    return ((input, elementwise.where(result <= 0, 0.0, g)),)


@rule("clamp", uses_result=False)
def _clamp(g, result, input, min=None, max=None, *, out=None):
    keep = None
    pairs = []
    if min is not None:
        keep = input >= min
        pairs.append((min, _pass(input < min, g)))
    if max is not None:
        below = input <= max
        keep = below if keep is None else keep & below
        pairs.append((max, _pass(input > max, g)))
    pairs.append((input, g if keep is None else _pass(keep, g)))
    return pairs


@rule("clamp_min", uses_result=False)
def _clamp_min(g, result, input, min):
    return _clamp(g, result, input, min=min)


@rule("clamp_max", uses_result=False)
def _clamp_max(g, result, input, max):
    return _clamp(g, result, input, max=max)


@rule("where", uses_result=False)
def _where(g, result, condition, input=None, other=None, *, out=None):
    return (input, _pass(condition, g)), (other, _pass(~condition, g))


@rule("nan_to_num", uses_result=False)
def _nan_to_num(g, result, input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return ((input, _pass(elementwise.isfinite(input), g)),)
