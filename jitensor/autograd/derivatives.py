"""The derivative rule of every differentiable op (wrap.py installs them on the ops).

A rule is called as `rule(grad, result, *args, **kwargs)` with the op's own arguments (and the
op's result when the rule is registered with uses_result, else None) and returns
`(input, gradient)` pairs (see graph.py). Rules are built from the public ops, so
backward runs the same @njit/@cuda.jit kernels as forward, on the tensors' own device, and is
itself differentiable (create_graph=True). The engine sums gradients back over broadcast dims
and converts them to each input's dtype, so rules never do either.
"""
import math

from .. import creation
from ..backends.registry import backend
from ..backends.scalar import elementwise as K  # (op codes)
from ..backends.scalar import loss as LC  # (reduction codes)
from ..ops import activation as A, conv as C, elementwise as E, factor as Fa, indexing as I, \
    linalg as L, loss as Lo, matrix as M, norm as N, pool as Po, reduction as R, scatter as P, \
    shape as S
from ..ops._common import broadcast_shapes
from ..tensor import Tensor
from . import grad_mode
from .graph import node_class, record

RULES = {}  # op name -> Node class


def rule(*names, uses_inputs=True, uses_result=True):
    """Register the decorated function as the rule of ops `names`. `uses_*`: whether it reads
    the inputs' or the result's values (those are checked for in-place changes); `uses_inputs`
    may instead be a function of the call's arguments giving the input tensors it reads, and
    `uses_result` a tuple of the numbers of the outputs it reads, or a function of the call's
    arguments giving True, False or such a tuple."""
    def register(fn):
        for name in names:
            RULES[name] = node_class(name, fn, uses_inputs, uses_result)
        return fn
    return register


# -- helpers ----------------------------------------------------------------------------------
def _zero(t):
    return creation.zeros_like(t)


def _pass(mask, g):
    """g where mask holds, else 0 -- by selection: g * mask would turn an infinite g into NaN
    where mask is False (torch gives 0 there)."""
    return E.where(mask, g, 0.0)


def _dims(dim, ndim):
    """Reduced dims as a sorted tuple of non-negative ints (None or () -> all)."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(d % ndim if ndim else 0 for d in dims))


def _unreduce(g, input, dim, keepdim):
    """`g` of a reduction over `dim` reshaped so that it broadcasts against `input` again."""
    if keepdim or g.ndim == input.ndim or g.ndim == 0:  # (a 0-d g broadcasts as it is)
        return g
    shape = list(input.shape)
    for d in _dims(dim, input.ndim):
        shape[d] = 1
    return S.reshape(g, shape)  # (one op, not an unsqueeze per dim: backward is Python-bound)


def _count(input, dim):
    return math.prod(input.shape[d] for d in _dims(dim, input.ndim)) if input.ndim else 1


def _accumulate(input, positions, g):
    """A tensor like `input`: zeros plus g[i] added at flat position positions[i] (repeated
    positions add up, as gradients of repeated indices must). Recorded when g requires grad
    (create_graph=True): its own derivative is a gather at the same positions."""
    if grad_mode._enabled[0] and g.requires_grad:
        return record(RULES["accumulate"], _accumulate, (input, positions, g), {})
    out = creation.zeros(input.numel(), dtype=g.dtype, device=g.device)
    backend(g.device).indexing.accumulate(out._data, positions.contiguous().reshape(-1)._data,
                                          g.contiguous().reshape(-1)._data)
    return out.reshape(input.shape)


@rule("accumulate", uses_inputs=False, uses_result=False)
def _accumulate_rule(gg, result, input, positions, g):
    return ((g, I.take(gg, positions)),)


# -- elementwise --------------------------------------------------------------------------------
@rule("add", uses_inputs=False, uses_result=False)
def _add(g, result, input, other, *, alpha=1, out=None):
    return (input, g), (other, g if alpha == 1 else g * alpha)


@rule("sub", "subtract", uses_inputs=False, uses_result=False)
def _sub(g, result, input, other, *, alpha=1, out=None):
    return (input, g), (other, -g if alpha == 1 else g * -alpha)


def _other_operands(input, other, **kwargs):
    """The operands a product's gradient reads: each one only where the other needs its
    gradient (torch's), so `z = y * 2; y.add_(1)` leaves z's backward valid."""
    return [t for t, o in ((input, other), (other, input))
            if isinstance(t, Tensor) and isinstance(o, Tensor) and o.requires_grad]


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
    return (input, g), (other, -g * E.floor(input / other) if isinstance(other, Tensor) else None)


@rule("fmod", uses_result=False)
def _fmod(g, result, input, other, *, out=None):
    return (input, g), (other, -g * E.trunc(input / other) if isinstance(other, Tensor) else None)


def _pow_reads_result(input, exponent, **kwargs):
    """Only the exponent's gradient reads pow's result (torch saves it for that alone)."""
    return isinstance(exponent, Tensor) and exponent.requires_grad


@rule("pow", uses_result=_pow_reads_result)
def _pow(g, result, input, exponent, *, out=None):
    pairs = []
    if isinstance(input, Tensor):
        d = E.where(exponent == 0, 0.0, g * exponent * input ** (exponent - 1)) \
            if isinstance(exponent, Tensor) else \
            (_zero(g) if exponent == 0 else g * exponent * input ** (exponent - 1))
        pairs.append((input, d))
    if isinstance(exponent, Tensor) and result is not None:
        base = input if isinstance(input, Tensor) else math.log(input) if input > 0 else None
        d = g * result * E.log(input) if isinstance(input, Tensor) else \
            (g * result * base if base is not None else
             E.where(result == 0, 0.0, g * result * math.log(abs(input) or 1)))
        pairs.append((exponent, E.where((input == 0) & (exponent >= 0), 0.0, d)
                      if isinstance(input, Tensor) else d))
    return pairs


def _extremum(larger):
    def extremum(g, result, input, other, *, out=None):
        # ties split the gradient evenly, as torch does
        wins = (input > other) if larger else (input < other)
        tie = input == other
        half = g * 0.5
        return (input, E.where(tie, half, _pass(wins, g))), \
            (other, E.where(tie, half, _pass(~wins, g)))
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
    return ((input, g * E.sign(input)),)


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
    return ((input, g * E.cos(input)),)


@rule("cos", uses_result=False)
def _cos(g, result, input, *, out=None):
    return ((input, -g * E.sin(input)),)


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
    return ((input, g * E.rsqrt(1 - input * input)),)


@rule("acos", "arccos", uses_result=False)
def _acos(g, result, input, *, out=None):
    return ((input, -g * E.rsqrt(1 - input * input)),)


@rule("atan", "arctan", uses_result=False)
def _atan(g, result, input, *, out=None):
    return ((input, g / (1 + input * input)),)


@rule("sinh", uses_result=False)
def _sinh(g, result, input, *, out=None):
    return ((input, g * E.cosh(input)),)


@rule("cosh", uses_result=False)
def _cosh(g, result, input, *, out=None):
    return ((input, g * E.sinh(input)),)


@rule("asinh", "arcsinh", uses_result=False)
def _asinh(g, result, input, *, out=None):
    return ((input, g * E.rsqrt(input * input + 1)),)


@rule("acosh", "arccosh", uses_result=False)
def _acosh(g, result, input, *, out=None):
    return ((input, g * E.rsqrt((input - 1) * (input + 1))),)


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
    return ((input, g * (2 / math.sqrt(math.pi)) * E.exp(-input * input)),)


@rule("erfc", uses_result=False)
def _erfc(g, result, input, *, out=None):
    return ((input, g * (-2 / math.sqrt(math.pi)) * E.exp(-input * input)),)


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
    return (input, g * E.exp(input - result)), (other, g * E.exp(other - result))


@rule("logaddexp2")
def _logaddexp2(g, result, input, other, *, out=None):
    return (input, g * E.exp2(input - result)), (other, g * E.exp2(other - result))


def _nan_ignoring(larger):
    def extremum(g, result, input, other, *, out=None):
        # torch: the gradient goes to input where it won or other is NaN, else to other
        first = ((input >= other) if larger else (input <= other)) | E.isnan(other)
        return (input, _pass(first, g)), (other, _pass(~first, g))
    return extremum


rule("fmax", uses_result=False)(_nan_ignoring(True))
rule("fmin", uses_result=False)(_nan_ignoring(False))


@rule("xlogy", uses_result=False)
def _xlogy(g, result, input, other, *, out=None):
    pairs = [(other, g * input / other)]
    if isinstance(input, Tensor):  # torch: 0 where input is 0 and other <= 0
        pairs.append((input, _pass(~((input == 0) & (other <= 0)), E.xlogy(g, other))))
    return pairs


@rule("relu", uses_inputs=False)
def _relu(g, result, input, *, out=None):
    # torch's threshold_backward of the result: g unless it is <= 0 (a NaN passes g), in one
    # kernel (a comparison and a selection took two passes)
    if not _recorded(g, result):
        return ((input, A.backward(K.THRESHOLD, g, result, 0)),)
    return ((input, E.where(result <= 0, 0.0, g)),)


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
    return ((input, _pass(E.isfinite(input), g)),)


# -- activations (ops/activation.py): one fused kernel (A.backward) unless the backward is
# itself recorded (create_graph=True); then the same formulas composed from ops, differentiable
_SQRT_HALF, _INV_SQRT_2PI = math.sqrt(0.5), 1 / math.sqrt(2 * math.pi)
_TANH_K, _TANH_C = math.sqrt(2 / math.pi), 0.044715


def _recorded(g, input):
    return grad_mode._enabled[0] and (g.requires_grad or input.requires_grad)


@rule("gelu", uses_result=False)
def _gelu(g, result, input, approximate="none"):
    x = input
    if not _recorded(g, x):
        return ((x, A.backward(K.GELU_TANH if approximate == "tanh" else K.GELU, g, x)),)
    if approximate == "tanh":
        x2 = x * x
        t = E.tanh(_TANH_K * (x + _TANH_C * x2 * x))
        slope = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_TANH_K * (1 + 3 * _TANH_C * x2))
    else:
        slope = 0.5 * (1 + E.erf(x * _SQRT_HALF)) + x * _INV_SQRT_2PI * E.exp(-0.5 * x * x)
    return ((x, g * slope),)


@rule("silu", uses_result=False)
def _silu(g, result, input):
    if not _recorded(g, input):
        return ((input, A.backward(K.SILU, g, input)),)
    s = E.sigmoid(input)
    return ((input, g * s * (1 + input * (1 - s))),)


@rule("mish", uses_result=False)
def _mish(g, result, input):
    if not _recorded(g, input):
        return ((input, A.backward(K.MISH, g, input)),)
    t = E.tanh(A.softplus(input))
    return ((input, g * (t + input * E.sigmoid(input) * (1 - t * t))),)


@rule("softplus", uses_result=False)
def _softplus(g, result, input, beta=1.0, threshold=20.0):
    if not _recorded(g, input):
        return ((input, A.backward(K.SOFTPLUS, g, input, beta, threshold)),)
    z = input * beta
    return ((input, E.where(z > threshold, g, g * E.sigmoid(z))),)


@rule("leaky_relu", uses_result=False)
def _leaky_relu(g, result, input, negative_slope=0.01):
    if not _recorded(g, input):
        return ((input, A.backward(K.LEAKY_RELU, g, input, negative_slope)),)
    return ((input, E.where(input > 0, g, g * negative_slope)),)


def _elu_rule(g, input, alpha, scale, input_scale):
    if not _recorded(g, input):
        grad = A.backward(K.SELU, g, input) if scale != 1 else \
            A.backward(K.ELU, g, input, alpha * input_scale, input_scale)
        return ((input, grad),)
    negative = g * (alpha * scale * input_scale) * E.exp(input * input_scale)
    return ((input, E.where(input > 0, g * scale, negative)),)


@rule("elu", uses_result=False)
def _elu(g, result, input, alpha=1.0):
    return _elu_rule(g, input, alpha, 1, 1)


@rule("selu", uses_result=False)
def _selu(g, result, input):
    return _elu_rule(g, input, A.SELU_ALPHA, A.SELU_SCALE, 1)


@rule("celu", uses_result=False)
def _celu(g, result, input, alpha=1.0):
    return _elu_rule(g, input, alpha, 1, 1 / alpha)


@rule("logsigmoid", uses_result=False)
def _logsigmoid(g, result, input):
    if not _recorded(g, input):
        return ((input, A.backward(K.LOGSIGMOID, g, input)),)
    return ((input, g * E.sigmoid(-input)),)


@rule("hardsigmoid", uses_result=False)
def _hardsigmoid(g, result, input):
    if not _recorded(g, input):
        return ((input, A.backward(K.HARDSIGMOID, g, input)),)
    return ((input, _pass((input > -3) & (input < 3), g / 6)),)


@rule("hardswish", uses_result=False)
def _hardswish(g, result, input):
    if not _recorded(g, input):
        return ((input, A.backward(K.HARDSWISH, g, input)),)
    # (torch's bounds: 0 up to -3 included, g from 3 on)
    middle = E.where(input < 3, g * (input / 3 + 0.5), g)
    return ((input, _pass(input > -3, middle)),)


@rule("threshold", uses_result=False)
def _threshold(g, result, input, threshold, value):
    if not _recorded(g, input):
        return ((input, A.backward(K.THRESHOLD, g, input, threshold)),)
    return ((input, E.where(input <= threshold, 0.0, g)),)


@rule("hardtanh", uses_result=False)
def _hardtanh(g, result, input, min_val=-1.0, max_val=1.0):
    if not _recorded(g, input):
        return ((input, A.backward(K.HARDTANH, g, input, min_val, max_val)),)
    return ((input, E.where((input <= min_val) | (input >= max_val), 0.0, g)),)


# -- reductions ---------------------------------------------------------------------------------
@rule("sum", uses_inputs=False, uses_result=False)
def _sum(g, result, input, dim=None, keepdim=False, *, dtype=None, out=None):
    return ((input, S.expand(_unreduce(g, input, dim, keepdim), input.shape)),)


@rule("mean", uses_inputs=False, uses_result=False)
def _mean(g, result, input, dim=None, keepdim=False, *, dtype=None, out=None):
    g = _unreduce(g, input, dim, keepdim) / _count(input, dim)
    return ((input, S.expand(g, input.shape)),)


@rule("prod")
def _prod(g, result, input, dim=None, keepdim=False, *, dtype=None, out=None):
    g, p = _unreduce(g, input, dim, keepdim), _unreduce(result, input, dim, keepdim)
    # the product of the others: result / x where x != 0; where x is the slice's only zero, the
    # product of the slice's other elements; with two zeros or more, 0
    zero = input == 0
    over = {} if dim is None else {"dim": dim, "keepdim": True}
    zeros, others = R.sum(zero, **over), R.prod(E.where(zero, 1.0, input), **over)
    d = E.where(zero, E.where(zeros == 1, others, 0.0), p / E.where(zero, 1.0, input))
    return ((input, g * d),)


@rule("amax", "amin")
def _amax(g, result, input, dim=(), keepdim=False, *, out=None):
    hit = input == _unreduce(result, input, dim, keepdim)  # ties share the gradient evenly
    dims = _dims(dim, input.ndim) if input.ndim else None
    ties = R.sum(hit, dim=dims, keepdim=True) if dims else 1
    return ((input, _pass(hit, _unreduce(g, input, dim, keepdim) / ties)),)


@rule("norm")
def _norm(g, result, input, p="fro", dim=None, keepdim=False, dtype=None):
    x = input if dtype is None else input.to(dtype)  # (the engine converts the gradient back)
    p = 2 if p == "fro" else p
    norm, g = _unreduce(result, x, dim, keepdim), _unreduce(g, x, dim, keepdim)
    if p == 0:
        return ((input, _zero(x)),)
    if p == 1:
        return ((input, g * E.sign(x)),)
    if p == math.inf or p == -math.inf:  # ties share the gradient evenly, as in amax
        hit = x.abs() == norm
        ties = R.sum(hit, dim=_dims(dim, x.ndim), keepdim=True) if x.ndim else 1
        return ((input, _pass(hit, g * E.sign(x) / ties)),)
    if p == 2:
        return ((input, _pass(norm != 0, g * x / norm)),)  # a zero norm: 0, as in torch
    # (zero elements get 0, as in torch: |x| ** (p - 1) is infinite there for p < 1)
    return ((input, _pass(x != 0, g * E.sign(x) * x.abs() ** (p - 1) / norm ** (p - 1))),)


def _max(larger):
    def max_rule(g, result, input, dim=None, keepdim=False, *, out=None, other=None):
        if other is not None or isinstance(dim, Tensor):  # the binary form: maximum
            return _extremum(larger)(g, result, input, dim if other is None else other)
        return _max_along(g, result, input, dim, keepdim)
    return max_rule


rule("max")(_max(True))
rule("min")(_max(False))


def _max_along(g, result, input, dim, keepdim):
    if dim is None:
        return _amax(g, result, input)
    values, indices = result
    g = g[0]
    if g is None:
        return ()
    d = dim % input.ndim if input.ndim else 0
    g, idx = _unreduce(g, input, d, keepdim), _unreduce(indices, input, d, keepdim)
    shape = [1] * input.ndim
    if input.ndim:
        shape[d] = input.shape[d]
    span = creation.arange(input.shape[d] if input.ndim else 1, device=input.device).reshape(shape)
    return ((input, _pass(span == idx, g)),)


def _correction(unbiased, correction):
    return correction if correction is not None else 0 if unbiased is False else 1


@rule("var", uses_result=False)
def _var(g, result, input, dim=None, unbiased=None, keepdim=False, *, correction=None,
         out=None):
    n = _count(input, dim) - _correction(unbiased, correction)
    centred = input - R.mean(input, dim=_dims(dim, input.ndim), keepdim=True)
    return ((input, _unreduce(g, input, dim, keepdim) * centred * (2.0 / n)),)


@rule("std")
def _std(g, result, input, dim=None, unbiased=None, keepdim=False, *, correction=None,
         out=None):
    n = _count(input, dim) - _correction(unbiased, correction)
    centred = input - R.mean(input, dim=_dims(dim, input.ndim), keepdim=True)
    scale = _unreduce(g / result, input, dim, keepdim) / n
    return ((input, centred * scale),)


@rule("logsumexp")
def _logsumexp(g, result, input, dim, keepdim=False, *, out=None):
    lse = _unreduce(result, input, dim, keepdim)
    return ((input, _unreduce(g, input, dim, keepdim) * E.exp(input - lse)),)


@rule("softmax", uses_inputs=False)
def _softmax(g, result, input, dim, dtype=None):
    return ((input, result * (g - R.sum(g * result, dim=dim, keepdim=True))),)


@rule("log_softmax", uses_inputs=False)
def _log_softmax(g, result, input, dim, dtype=None):
    return ((input, g - E.exp(result) * R.sum(g, dim=dim, keepdim=True)),)


@rule("nll_loss", uses_result=False)
def _nll_loss(g, result, input, target, weight, d, ignore_index, reduction, smoothing, log_probs,
              saved):
    """One kernel (Lo.nll_loss_grad) unless the backward is recorded; then the same formula
    (backends/scalar/loss.py) composed from ops, the softmax differentiable."""
    if weight is not None and weight.requires_grad:
        raise RuntimeError("the derivative for 'weight' is not implemented")
    if not _recorded(g, input):
        return ((input, Lo.nll_loss_grad(g, input, target, weight, d, ignore_index, reduction,
                                         smoothing, log_probs, saved)),)
    n_classes = input.shape[d]
    kept = target != ignore_index
    t = target.masked_fill(~kept, 0)
    g = E.where(kept, g / saved[1] if reduction == LC.MEAN else g, 0.0).unsqueeze(d)
    along = [-1 if k == d else 1 for k in range(input.ndim)]
    t_weight, w, class_total = (1.0, 1.0, n_classes) if weight is None else \
        (weight[t].unsqueeze(d), weight.reshape(along), weight.sum())
    share = smoothing / n_classes
    h = g * ((1.0 - smoothing) * t_weight)
    hit = creation.arange(n_classes, device=input.device).reshape(along) == t.unsqueeze(d)
    grad = E.where(hit, -h, 0.0)
    if smoothing:
        grad = grad - g * share * w
    if not log_probs:
        grad = grad + (h + g * (share * class_total)) * R.softmax(input, d)
    return ((input, grad),)


@rule("pointwise_loss", uses_result=False)
def _pointwise_loss(g, result, input, target, extra, code, param):
    """The input's derivative in one kernel (Lo.pointwise_loss_grad) unless the backward is
    recorded, then composed from ops; the target's and pos_weight's (rarely asked for) composed
    too, as torch's formulas."""
    x, y = input, target
    pw = 1.0 if extra is None else extra
    wanted = _wanted(x), _wanted(y), _wanted(extra)
    piecewise = code == LC.SMOOTH_L1 or code == LC.HUBER  # (the target's is -dx)
    dx = None
    if wanted[0] or wanted[1] and piecewise:
        if not grad_mode._enabled[0]:
            dx = Lo.pointwise_loss_grad(x, y, extra, code, param)
        elif piecewise:  # linear from |d| = param on, as the forward (and torch)
            d = x - y
            top = 1.0 if code == LC.SMOOTH_L1 else float(param)
            linear = E.where(d > 0, top, E.where(d < 0, -top, d))  # (NaN stays NaN)
            dx = E.where(d.abs() < param, d / param if code == LC.SMOOTH_L1 else d, linear)
        elif code == LC.BCE:
            dx = (x - y) / E.clamp_min((1 - x) * x, LC.BCE_EPSILON)
        elif code == LC.BCE_LOGITS:
            dx = (1 - y) - ((pw - 1) * y + 1) * E.sigmoid(-x)
        else:
            dx = -y if code == LC.KL_DIV else -E.exp(y)
    grads = [(x, g * dx)] if wanted[0] else []
    if wanted[1]:
        if piecewise:
            dy = -dx
        elif code == LC.BCE:  # -logit(x), as torch's (infinite at 0 and 1)
            dy = E.log1p(-x) - E.log(x)
        elif code == LC.BCE_LOGITS:
            dy = -x - (pw - 1) * A.logsigmoid(x)
        elif code == LC.KL_DIV:  # (of xlogy(y, y): NaN at y = 0, as torch's)
            dy = E.where(y != 0, E.log(y) + 1, math.nan) - x
        else:
            dy = E.exp(y) * (y - x + 1)
        grads.append((y, g * dy))
    if wanted[2]:
        grads.append((extra, g * -(y * A.logsigmoid(x))))
    return grads


# -- the convolution (ops/conv.py): bilinear in (input, weight), so each op's derivatives are the
# other two ops, with the same geometry
@rule("convolution", uses_result=False)
def _convolution(g, result, input, weight, bias, *geometry):
    pairs = [(bias, g.sum((0, 2, 3)))] if _wanted(bias) else []
    if _wanted(input):
        pairs.append((input, C.convolution_input_grad(g, weight, input.shape, *geometry)))
    if _wanted(weight):
        pairs.append((weight, C.convolution_weight_grad(g, input, weight.shape, *geometry)))
    return pairs


@rule("convolution_input_grad", uses_result=False)
def _convolution_input_grad(u, result, grad, weight, shape, *geometry):
    """The input's gradient gx(g, w) = J^T g: <u, gx> = <g, conv(u, w)>."""
    pairs = []
    if _wanted(grad):
        pairs.append((grad, C.convolution(u, weight, None, *geometry)))
    if _wanted(weight):
        pairs.append((weight, C.convolution_weight_grad(grad, u, weight.shape, *geometry)))
    return pairs


@rule("convolution_weight_grad", uses_result=False)
def _convolution_weight_grad(v, result, grad, input, shape, *geometry):
    """The weight's gradient gw(g, x): <v, gw> = <g, conv(x, v)>."""
    pairs = []
    if _wanted(grad):
        pairs.append((grad, C.convolution(input, v, None, *geometry)))
    if _wanted(input):
        pairs.append((input, C.convolution_input_grad(grad, v, input.shape, *geometry)))
    return pairs


# -- max pooling (ops/pool.py): the gradient goes back to each window's max, by its index; the
# backward is linear in its gradient, which its own derivative gathers at the same indices
@rule("max_pool2d_with_indices", uses_inputs=False, uses_result=(1,))
def _max_pool2d_with_indices(g, result, input, kernel, stride, padding, dilation, size):
    g = g[0]  # (the indices have no gradient)
    if g is None:
        return ()
    return ((input, Po.max_pool2d_backward(g, result[1], input.shape, kernel, stride, padding,
                                           dilation)),)


@rule("max_pool2d_backward", uses_inputs=lambda grad, indices, *geometry: (indices,),
      uses_result=False)
def _max_pool2d_backward(u, result, grad, indices, shape, *geometry):
    n, c, oh, ow = indices.shape
    return ((grad, u.reshape(n, c, -1).gather(2, indices.reshape(n, c, -1)).view(n, c, oh, ow)),)


@rule("native_layer_norm", uses_result=False)
def _native_layer_norm(g, result, input, weight, bias, normalized_shape, eps, stats):
    return _normalization(g, input, weight, bias, normalized_shape, eps, stats, True)


@rule("fused_rms_norm", uses_result=False)
def _fused_rms_norm(g, result, input, weight, normalized_shape, eps, stats):
    return _normalization(g, input, weight, None, normalized_shape, eps, stats, False)


@rule("native_batch_norm", uses_result=False)
def _native_batch_norm(g, result, input, weight, bias, eps, stats):
    """One kernel (N.batch_norm_grad) unless the backward is recorded; then the same formulas
    composed from ops over every dim but the channels'."""
    params = _wanted(weight) or _wanted(bias)
    if not (_recorded(g, input) or grad_mode._enabled[0] and params):
        dx, dw, db = N.batch_norm_grad(g, input, weight, stats, _wanted(input))
        return (input, dx), (weight, dw), (bias, db)
    dims = (0, *range(2, input.ndim))
    first = input[(slice(0, 1), slice(None)) + (slice(0, 1),) * (input.ndim - 2)].detach()
    centre = input - first  # less each channel's first element, as the kernels
    centre = centre - R.mean(centre, dims, keepdim=True)
    rstd = E.rsqrt(R.mean(E.square(centre), dims, keepdim=True) + eps)
    xhat = centre * rstd
    pairs = [(bias, g.sum(dims))] if _wanted(bias) else []
    if _wanted(weight):
        pairs.append((weight, (g * xhat).sum(dims)))
    if _wanted(input):
        gw = g if weight is None else g * weight.reshape((1, -1) + (1,) * (input.ndim - 2))
        pairs.append((input, rstd * (gw - R.mean(gw, dims, keepdim=True)
                                     - xhat * R.mean(gw * xhat, dims, keepdim=True))))
    return pairs


def _normalization(g, input, weight, bias, shape, eps, stats, centred):
    """One kernel (N.norm_grad) unless the backward is recorded; then the same formulas
    (backends/scalar/norm.py) composed from ops, mean and rstd recomputed differentiably."""
    params = _wanted(weight) or _wanted(bias)
    if not (_recorded(g, input) or grad_mode._enabled[0] and params):
        dx, dw, db = N.norm_grad(g, input, weight, shape, stats, centred, _wanted(input),
                                 params)
        return (input, dx), (weight, dw), (bias, db)
    dims = tuple(range(-len(shape), 0))
    centre = input
    if centred:  # less each row's first element, a constant: as exact as the kernels' sums
        centre = input - input[(...,) + (slice(0, 1),) * len(shape)].detach()
        centre = centre - R.mean(centre, dims, keepdim=True)
    rstd = E.rsqrt(R.mean(E.square(centre), dims, keepdim=True) + eps)
    xhat = centre * rstd
    pairs = [(bias, g)]  # (the engine sums over the rows)
    if _wanted(weight):
        pairs.append((weight, g * xhat))
    if _wanted(input):
        gw = g if weight is None else g * weight
        slope = R.mean(gw * xhat, dims, keepdim=True)
        pairs.append((input, rstd * ((gw - R.mean(gw, dims, keepdim=True) if centred else gw)
                                     - xhat * slope)))
    return pairs


@rule("cumsum", uses_inputs=False, uses_result=False)
def _cumsum(g, result, input, dim, *, dtype=None, out=None):
    return ((input, S.flip(R.cumsum(S.flip(g, [dim]), dim), [dim])),)


# -- matrix products ----------------------------------------------------------------------------
def _wanted(t):
    """Whether input `t` takes a gradient: products skip the ones nobody asked for (the input
    batch of a first layer, say), as the engine would drop them anyway."""
    return isinstance(t, Tensor) and t.requires_grad


@rule("matmul", "mm", "bmm", "mv", "dot", uses_inputs=_other_operands, uses_result=False)
def _matmul(g, result, a, b, *, out=None):
    if a.ndim == 1 and b.ndim == 1:  # a dot product: g is 0-d
        return (a, g * b), (b, g * a)
    a2 = S.unsqueeze(a, 0) if a.ndim == 1 else a
    b2 = S.unsqueeze(b, -1) if b.ndim == 1 else b
    g2 = S.unsqueeze(g, -2) if a.ndim == 1 else g
    g2 = S.unsqueeze(g2, -1) if b.ndim == 1 else g2
    pairs = []
    if _wanted(a):
        ga = L.matmul(g2, S.transpose(b2, -1, -2))
        pairs.append((a, S.squeeze(ga, -2) if a.ndim == 1 else ga))
    if _wanted(b):
        gb = L.matmul(S.transpose(a2, -1, -2), g2)
        pairs.append((b, S.squeeze(gb, -1) if b.ndim == 1 else gb))
    return pairs


@rule("linear", uses_result=False)
def _linear(g, result, input, weight, bias=None):
    x = S.reshape(input, (-1, input.shape[-1]))  # every row of input
    pairs = [(bias, g)]  # the engine sums g over the rows for the bias
    if weight.ndim == 1:  # one output per row
        if _wanted(input):
            pairs.append((input, S.unsqueeze(g, -1) * weight))
        if _wanted(weight):
            pairs.append((weight, L.matmul(S.reshape(g, (-1,)), x)))
        return pairs
    if _wanted(input):
        pairs.append((input, L.matmul(g, weight)))
    if _wanted(weight):
        pairs.append((weight, L.matmul(S.transpose(S.reshape(g, (-1, g.shape[-1])), 0, 1), x)))
    return pairs


@rule("outer", "ger", uses_result=False)
def _outer(g, result, input, vec2, *, out=None):
    return (input, L.mv(g, vec2)), (vec2, L.mv(S.transpose(g, 0, 1), input))


# -- views and shape ops ------------------------------------------------------------------------
@rule("view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze",
      "unsqueeze", uses_inputs=False, uses_result=False)
def _reshape(g, result, input, *args, **kwargs):
    return ((input, S.reshape(g, input.shape)),)


@rule("expand", "expand_as", "broadcast_to", "contiguous", "clone", "to", uses_inputs=False,
      uses_result=False)
def _identity(g, result, input, *args, **kwargs):
    return ((input, g),)  # the engine sums expanded dims and converts dtype and device back


@rule("permute", uses_inputs=False, uses_result=False)
def _permute(g, result, input, *dims):
    order = [d % input.ndim for d in (S._ints(dims, "permute", "dims") if input.ndim else [])]
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return ((input, S.permute(g, inverse)),)


@rule("transpose", "swapaxes", "swapdims", uses_inputs=False, uses_result=False)
def _transpose(g, result, input, dim0, dim1):
    return ((input, S.transpose(g, dim0, dim1)),)


@rule("t", uses_inputs=False, uses_result=False)
def _t(g, result, input):
    return ((input, S.transpose(g, 0, 1) if input.ndim == 2 else g),)


@rule("_T", uses_inputs=False, uses_result=False)
def _T(g, result, input):
    return ((input, S.permute(g, list(range(input.ndim - 1, -1, -1)))),)


@rule("_mT", uses_inputs=False, uses_result=False)
def _mT(g, result, input):
    return ((input, S.transpose(g, -2, -1)),)


@rule("movedim", "moveaxis", uses_inputs=False, uses_result=False)
def _movedim(g, result, input, source, destination):
    return ((input, S.movedim(g, destination, source)),)


@rule("flip", uses_inputs=False, uses_result=False)
def _flip(g, result, input, dims):
    return ((input, S.flip(g, dims)),)


@rule("narrow", uses_inputs=False, uses_result=False)
def _narrow(g, result, input, dim, start, length):
    grad = creation.zeros(input.shape, dtype=g.dtype, device=g.device)
    S.narrow(grad, dim, int(start), length).copy_(g)
    return ((input, grad),)


def _pieces(g, result, input, dim):
    """One gradient per piece of a split of `input` along `dim` (zeros for pieces unused); a
    split into one piece is a node of one output, whose gradient comes bare."""
    g = g if isinstance(g, tuple) else (g,)
    return [gi if gi is not None else creation.zeros(r.shape, dtype=r.dtype, device=r.device)
            for gi, r in zip(g, result)]


@rule("split", "chunk", uses_inputs=False)  # the result: the shapes of unused pieces
def _split(g, result, input, size_or_count, dim=0):
    return ((input, S.cat(_pieces(g, result, input, dim), dim)),)


@rule("unbind", uses_inputs=False)
def _unbind(g, result, input, dim=0):
    return ((input, S.stack(_pieces(g, result, input, dim), dim)),)


@rule("cat", "concat", "concatenate", uses_inputs=False, uses_result=False)
def _cat(g, result, tensors, dim=0, *, out=None):
    skipped = [t for t in tensors if t.ndim == 1 and t.shape[0] == 0]  # cat skips these
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    return list(zip(kept, S.split(g, [t.shape[dim] for t in kept], dim))) + \
        [(t, creation.zeros(0, dtype=g.dtype, device=g.device)) for t in skipped]


@rule("stack", uses_inputs=False, uses_result=False)
def _stack(g, result, tensors, dim=0, *, out=None):
    return list(zip(tensors, S.unbind(g, dim)))


@rule("broadcast_tensors", uses_inputs=False, uses_result=False)
def _broadcast_tensors(g, result, *tensors):
    return list(zip(tensors, g))


# -- indexing -----------------------------------------------------------------------------------
def _is_basic(key):
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, slice))
               and not isinstance(k, bool) for k in keys)


def _selected(shape, dim, index, g):
    """The gradient of index_select(input, dim, index), of input[index] for a vector index
    (negatives counting from the end) and of embedding (index of any shape, dim 0): zeros like
    input plus g's slices at the selected positions, repeats adding up, in one pass over g;
    `shape`: input's. (The general form, a gather of every position of input, costs the whole
    of it: an embedding table's backward.)"""
    grad = creation.zeros(shape, dtype=g.dtype, device=g.device)
    if g.numel():
        backend(g.device).indexing.take_add(grad._data, g.contiguous()._data,
                                            index.contiguous()._data, shape[dim],
                                            math.prod(shape[dim + 1:]))
    return grad


@rule("getitem", uses_inputs=False, uses_result=False)
def _getitem(g, result, input, key):
    if _is_basic(key):  # a view: each element of the result is a distinct element of input
        grad = creation.zeros(input.shape, dtype=g.dtype, device=g.device)
        grad[key] = g
        return ((input, grad),)
    if I.vector_key(input, key) and not (grad_mode._enabled[0] and g.requires_grad):
        # (with create_graph, the general form below, which records itself)
        return ((input, _selected(input.shape, 0, key, g)),)
    return ((input, _accumulate(input, P.positions(input)[key], g)),)


@rule("index_select", uses_inputs=False, uses_result=False)
def _index_select(g, result, input, dim, index, *, out=None):
    if input.ndim and not (grad_mode._enabled[0] and g.requires_grad):
        return ((input, _selected(input.shape, dim % input.ndim, index.reshape(-1), g)),)
    return ((input, _accumulate(input, I.index_select(P.positions(input), dim, index), g)),)


@rule("embedding", uses_inputs=False, uses_result=False)
def _embedding(g, result, input, weight, padding_idx, scale_grad_by_freq):
    if padding_idx is not None:  # (zeroed, not multiplied: an inf there must not give NaN)
        g = g.masked_fill((input == padding_idx).unsqueeze(-1), 0)
    if scale_grad_by_freq:
        ones = creation.ones(input.shape, dtype=g.dtype, device=g.device)
        g = g / _selected(weight.shape[:1], 0, input, ones)[input].unsqueeze(-1)
    if grad_mode._enabled[0] and g.requires_grad:  # create_graph: the recorded general form
        return ((weight, _accumulate(weight, P.positions(weight)[input], g)),)
    return ((weight, _selected(weight.shape, 0, input, g)),)


@rule("gather", uses_inputs=False, uses_result=False)
def _gather(g, result, input, dim, index, *, sparse_grad=False, out=None):
    return ((input, _accumulate(input, I.gather(P.positions(input), dim, index), g)),)


@rule("take", uses_inputs=False, uses_result=False)
def _take(g, result, input, index):
    return ((input, _accumulate(input, I.take(P.positions(input), index), g)),)


def _gathered(g, dim, index, src):
    """The gradient of a scatter's src: g read back where src went, zero where src was not
    read (beyond index's shape)."""
    got = I.gather(g, dim, index)
    if got.shape == src.shape:
        return got
    grad = creation.zeros(src.shape, dtype=g.dtype, device=g.device)
    grad[tuple(slice(0, n) for n in index.shape)] = got
    return grad


@rule("scatter", uses_result=False)
def _scatter(g, result, input, dim, index, src=None, *, value=None):
    pairs = [(input, P.scatter(g, dim, index, 0))]  # overwritten elements get no gradient
    if isinstance(src, Tensor):
        pairs.append((src, _gathered(g, dim, index, src)))
    return pairs


@rule("scatter_add", uses_result=False)
def _scatter_add(g, result, input, dim, index, src):
    return (input, g), (src, _gathered(g, dim, index, src))


@rule("index_add", uses_result=False)
def _index_add(g, result, input, dim, index, source, *, alpha=1):
    taken = I.index_select(g, dim, index)
    return (input, g), (source, taken if alpha == 1 else taken * alpha)


@rule("index_copy", uses_result=False)
def _index_copy(g, result, input, dim, index, source):
    return (input, P.index_fill(g, dim, index, 0)), (source, I.index_select(g, dim, index))


@rule("index_fill", uses_result=False)
def _index_fill(g, result, input, dim, index, value):
    return ((input, P.index_fill(g, dim, index, 0)),)


@rule("diagonal", uses_inputs=False, uses_result=False)
def _diagonal(g, result, input, offset=0, dim1=0, dim2=1):
    return ((input, _accumulate(input, M.diagonal(P.positions(input), offset, dim1, dim2), g)),)


def _unsort(g, result, input, dim):
    """The gradient of sort's or topk's values: g back where each value came from."""
    g = g[0]
    if g is None:
        return ()
    if not input.ndim:
        return ((input, g),)
    return ((input, P.scatter_add(_zero(input), dim % input.ndim, result[1], g)),)


@rule("sort", uses_inputs=False)
def _sort(g, result, input, dim=-1, descending=False, *, stable=False):
    return _unsort(g, result, input, dim)


@rule("topk", uses_inputs=False)
def _topk(g, result, input, k, dim=-1, largest=True, sorted=True):
    return _unsort(g, result, input, dim)


@rule("masked_select", uses_inputs=False, uses_result=False)
def _masked_select(g, result, input, mask):
    shape = broadcast_shapes(input.shape, mask.shape)
    return ((input, _accumulate(S.broadcast_to(input, shape),
                                I.masked_select(P.positions(S.broadcast_to(input, shape)), mask),
                                g)),)


@rule("masked_fill", uses_inputs=False, uses_result=False)
def _masked_fill(g, result, input, mask, value):
    return (input, _pass(~mask, g)), (value, R.sum(_pass(mask, g)))


# -- factorisations and solvers (ops/factor.py) -------------------------------------------------
# (An _ex form's result is (value, info): info, an integer, has no gradient.)
def _batched_outer(u, v):
    return S.unsqueeze(u, -1) * S.unsqueeze(v, -2)


def _matrices_of(t):
    return S.unsqueeze(S.unsqueeze(t, -1), -1)


@rule("solve")
def _solve(g, X, A, B, *, left=True, out=None):
    # A X = B: dX = A^-1 (dB - dA X), so gB = A^-T g and gA = -gB X^T (X A = B: mirrored)
    gB = Fa.solve(S.transpose(A, -2, -1), g, left=left)
    if not left:
        return (A, -L.matmul(S.transpose(X, -2, -1), gB)), (B, gB)
    if Fa._vector_case(A, B):
        return (A, -_batched_outer(gB, X)), (B, gB)
    return (A, -L.matmul(gB, S.transpose(X, -2, -1))), (B, gB)


@rule("solve_ex")
def _solve_ex(g, result, A, B, *, left=True, check_errors=False, out=None):
    return _solve(g[0], result[0], A, B, left=left)


@rule("inv", uses_inputs=False)
def _inv(g, Y, A, *, out=None):
    Yt = S.transpose(Y, -2, -1)
    return ((A, -L.matmul(L.matmul(Yt, g), Yt)),)


@rule("inv_ex", uses_inputs=False)
def _inv_ex(g, result, A, *, check_errors=False, out=None):
    return _inv(g[0], result[0], A)


def _singular_cofactors(A):
    """The cofactor matrix adj(A)^T of one n x n A whose LU has a zero pivot, exactly, where
    det(A) A^-T is 0 * inf. With A = P L U, adj(A)^T = det(P) P L^-T adj(U)^T, and for U with
    zero pivots at z0 < ... < z1 only, adj(U) = c x y^T: x spans U's null space (x[z0] = 1,
    x = 0 below), y its left null space (y[z1] = 1, y = 0 above), c is (-1)^(z0+z1) times U's
    pivots before z0 and after z1 times det(U[a:b, a+1:b+1]) for each pair of consecutive
    zero pivots a < b (U's cofactors factor into those blocks; c = 0 where rank(A) < n-1)."""
    n = A.shape[-1]
    P, Lo_, U = Fa.lu(A)
    pivots = M.diagonal(U, 0, -2, -1)
    zero = [k for k, u in enumerate(pivots.tolist()) if u == 0]
    z0, z1 = zero[0], zero[-1]
    c = (-1) ** (z0 + z1) * Fa.det(P) * R.prod(pivots[:z0]) * R.prod(pivots[z1 + 1:])
    for a, b in zip(zero, zero[1:]):
        c = c * Fa.det(U[a:b, a + 1:b + 1])

    def unit(k):
        return creation.eye(n, dtype=A.dtype, device=A.device)[k]
    x = unit(z0) - S.cat([Fa.solve_triangular(U[:z0, :z0], U[:z0, z0:z0 + 1], upper=True)[:, 0],
                          creation.zeros(n - z0, dtype=A.dtype, device=A.device)])
    y = unit(z1) - S.cat([creation.zeros(z1 + 1, dtype=A.dtype, device=A.device),
                          Fa.solve_triangular(U[z1 + 1:, z1 + 1:], U[z1:z1 + 1, z1 + 1:],
                                              upper=True, left=False)[0]])
    w = Fa.solve_triangular(S.transpose(Lo_, -2, -1), S.unsqueeze(y, -1), upper=True,
                            unitriangular=True)
    return c * _batched_outer(L.matmul(P, w)[:, 0], x)


@rule("det")
def _det(g, d, A, *, out=None):
    """g adj(A)^T, the cofactors: det(A) A^-T where A is invertible, and from the LU where it
    is not (torch's, which differentiates an SVD there; its first-order backward without
    create_graph gives 0 instead where det is exactly 0 and n > 1)."""
    inverse, info = Fa.inv_ex(A)
    cofactors = _matrices_of(d) * S.transpose(inverse, -2, -1)
    singular = [b for b, k in enumerate(info.reshape(-1).tolist()) if k]
    if singular:
        n = A.shape[-1]
        flat, cofactors = A.reshape(-1, n, n), cofactors.reshape(-1, n, n).clone()
        for b in singular:
            cofactors[b] = _singular_cofactors(flat[b])
        cofactors = cofactors.reshape(A.shape)
    return ((A, _matrices_of(g) * cofactors),)


@rule("slogdet", uses_result=False)
def _slogdet(g, result, A, *, out=None):
    """g A^-T; at a singular A (log|det| = -inf) inf and NaN, as torch's: no derivative."""
    g = g[1]  # sign is piecewise constant
    if g is None:
        return ()
    # (A^T's LU, as torch's: its infs and NaNs at a singular A fall where torch's do)
    return ((A, _matrices_of(g) * Fa.inv_ex(S.transpose(A, -2, -1)).inverse),)


@rule("cholesky", uses_inputs=False)
def _cholesky(g, result, A, *, upper=False, out=None):
    # A = L L^T: gA = sym(L^-T Phi(L^T gL) L^-1), Phi the lower triangle with half its diagonal
    Lo_, gL = (S.transpose(result, -2, -1), S.transpose(g, -2, -1)) if upper else (result, g)
    phi = M.tril(L.matmul(S.transpose(Lo_, -2, -1), gL))
    phi = phi - 0.5 * M.diag_embed(M.diagonal(phi, 0, -2, -1))
    X = Fa.solve_triangular(Lo_, phi, upper=False, left=False)  # Phi L^-1
    gA = Fa.solve_triangular(S.transpose(Lo_, -2, -1), X, upper=True)  # L^-T Phi L^-1
    return ((A, 0.5 * (gA + S.transpose(gA, -2, -1))),)


@rule("cholesky_ex", uses_inputs=False)
def _cholesky_ex(g, result, A, *, upper=False, check_errors=False, out=None):
    return _cholesky(g[0], result[0], A, upper=upper)


@rule("solve_triangular")
def _solve_triangular(g, X, A, B, *, upper, left=True, unitriangular=False, out=None):
    At = S.transpose(A, -2, -1)
    gB = Fa.solve_triangular(At, g, upper=not upper, left=left, unitriangular=unitriangular)
    Xt = S.transpose(X, -2, -1)
    gA = -(L.matmul(gB, Xt) if left else L.matmul(Xt, gB))
    k = int(unitriangular)
    return (A, M.triu(gA, k) if upper else M.tril(gA, -k)), (B, gB)


def _unpacked(LU):
    """(L, U) of lu_factor's packed LU: L (*, m, k) unit lower, U (*, k, n) upper."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    eye = creation.eye(m, k, dtype=LU.dtype, device=LU.device)
    return M.tril(LU[..., :, :k], -1) + eye, M.triu(LU[..., :k, :])


def _lu_backward(gL, gU, Lo_, U):
    """P^T gA for A = P L U (torch's linalg_lu_backward): square, gA = P L^-T (tril(L^T gL, -1)
    + triu(gU U^T)) U^-T; for m < n (m > n) the extra columns of U (rows of L) enter too."""
    m, n = Lo_.shape[-2], U.shape[-1]
    k = min(m, n)
    gL = _zero(Lo_) if gL is None else gL
    gU = _zero(U) if gU is None else gU
    Lt, Ut = S.transpose(Lo_, -2, -1), S.transpose(U, -2, -1)
    if m <= n:
        X = L.matmul(Lt, gL) - L.matmul(M.triu(gU), Ut)
        X = Fa.solve_triangular(Ut[..., :k, :], M.tril(X, -1), upper=False, left=False)
        X = S.cat([X + M.triu(gU[..., :k]), gU[..., k:]], -1)
        return Fa.solve_triangular(Lt, X, upper=True, unitriangular=True)
    X = L.matmul(gU, Ut) - L.matmul(Lt, M.tril(gL, -1))
    X = Fa.solve_triangular(Lt[..., :k], M.triu(X), upper=True, unitriangular=True)
    X = S.cat([X + M.tril(gL[..., :k, :], -1), gL[..., k:, :]], -2)
    return Fa.solve_triangular(Ut, X, upper=False, left=False)


@rule("lu")
def _lu(g, result, A, *, pivot=True, out=None):
    P, Lo_, U = result  # (P is piecewise constant: g[0] is dropped)
    return ((A, L.matmul(P, _lu_backward(g[1], g[2], Lo_, U))),)


@rule("lu_factor", "lu_factor_ex")
def _lu_factor(g, result, A, *, pivot=True, check_errors=False, out=None):
    LU, pivots = result[0], result[1]
    k = min(LU.shape[-2:])
    Lo_, U = _unpacked(LU)
    gLU = g[0]  # L's part below the diagonal, U's on and above it
    return ((A, Fa._permuted(pivots, _lu_backward(gLU[..., :, :k], gLU[..., :k, :], Lo_, U))),)


@rule("lu_solve")
def _lu_solve(g, X, LU, pivots, B, *, left=True, adjoint=False, out=None):
    gB = Fa.lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)
    if not LU.requires_grad:  # (the usual case: spare the products below)
        return ((B, gB),)
    # torch's linalg_lu_solve_LU: gLU from L's and U's parts of the solve's A = P L U
    Lo_, U = _unpacked(LU)
    Lt, Ut = S.transpose(Lo_, -2, -1), S.transpose(U, -2, -1)
    Xt, gt = S.transpose(X, -2, -1), S.transpose(g, -2, -1)
    if left != adjoint:
        gR = Fa.solve_triangular(Ut, -(L.matmul(g, Xt) if left else L.matmul(gt, X)),
                                 upper=False)
        gL = Fa.solve_triangular(Lt, L.matmul(gR, Ut), upper=True, unitriangular=True)
        return (LU, M.tril(gL, -1) + M.triu(gR)), (B, gB)
    P = Fa._permutation(pivots, LU.shape[-1], LU.dtype, LU.device)
    Pt = S.transpose(P, -2, -1)
    gR = -L.matmul(L.matmul(L.matmul(Pt, X if left else Xt), gt if left else g), P)
    gR = Fa.solve_triangular(Lt, gR, upper=True, left=False, unitriangular=True)
    gU = Fa.solve_triangular(Ut, L.matmul(Lt, gR), upper=False, left=False)
    return (LU, M.tril(gR, -1) + M.triu(gU)), (B, gB)


def _qr_square(gQ, gR, Q, R):
    """gA for A = Q R, m >= n, Q (m x n) with orthonormal columns: with C = Q^T dA R^-1, Q^T dQ
    is the skew part of C's strict lower triangle and dR R^-1 the rest, which gives gA = (gQ +
    Q copyltu(M)) R^-T, M = gR R^T - Q^T gQ's upper triangle mirrored (torch's
    linalg_qr_backward, as its own derivation writes it)."""
    C = _zero(R) if gR is None else L.matmul(gR, S.transpose(R, -2, -1))
    if gQ is not None:
        C = C - L.matmul(S.transpose(Q, -2, -1), gQ)
    C = M.triu(C) + S.transpose(M.triu(C, 1), -2, -1)
    X = L.matmul(Q, C) if gQ is None else gQ + L.matmul(Q, C)
    return Fa.solve_triangular(S.transpose(R, -2, -1), X, upper=False, left=False)


@rule("linalg_qr", uses_inputs=False)
def _linalg_qr(g, result, A, mode="reduced", *, out=None):
    Q, R = result
    m, n = A.shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    gQ, gR = g
    if m >= n:
        return ((A, _qr_square(gQ, gR, Q, R)),)
    # A = [X | Y], R = [U | V]: X = Q U is square, and Y = Q V feeds Q's gradient through V
    gU = None if gR is None else gR[..., :m]
    gV = None if gR is None else gR[..., m:]
    if gV is not None:
        gYQ = L.matmul(A[..., m:], S.transpose(gV, -2, -1))
        gQ = gYQ if gQ is None else gQ + gYQ
    gX = _qr_square(gQ, gU, Q, R[..., :m])
    gY = _zero(A[..., m:]) if gV is None else L.matmul(Q, gV)
    return ((A, S.cat([gX, gY], -1)),)


@rule("eigh", uses_inputs=False)
def _eigh(g, result, A, UPLO="L", *, out=None):
    """gA = V (diag(gw) + skew(V^T gV) / (w_j - w_i)) V^T (torch's linalg_eigh_backward): a
    symmetric gradient, infinite where eigenvalues repeat and gV does not vanish there."""
    w, V = result
    gw, gV = g
    Vt = S.transpose(V, -2, -1)
    inner = _zero(V) if gV is None else L.matmul(Vt, gV)
    if gV is not None:
        n = w.shape[-1]
        gaps = S.unsqueeze(w, -2) - S.unsqueeze(w, -1) + creation.eye(n, dtype=w.dtype,
                                                                       device=w.device)
        inner = 0.5 * (inner - S.transpose(inner, -2, -1)) / gaps
    if gw is not None:
        inner = inner + M.diag_embed(gw)
    return ((A, L.matmul(L.matmul(V, inner), Vt)),)


def _svd_backward(gU, gS, gV, U, sv, V):
    """gA for A = U diag(sv) V^T (thin, m >= n; torch's svd_backward): U [skew(U^T gU) / E S + S
    skew(V^T gV) / E + diag(gS)] V^T + (I - U U^T) gU S^-1 V^T, E_ij = S_j^2 - S_i^2 (1 on the
    diagonal), skew(X) = X - X^T."""
    Vt = S.transpose(V, -2, -1)
    if gU is None and gV is None:
        return L.matmul(U * S.unsqueeze(gS, -2), Vt)
    n = sv.shape[-1]
    S2 = sv * sv
    E = S.unsqueeze(S2, -2) - S.unsqueeze(S2, -1) + creation.eye(n, dtype=sv.dtype,
                                                                     device=sv.device)
    inner = _zero(V) if gS is None else M.diag_embed(gS)
    if gU is not None:
        X = L.matmul(S.transpose(U, -2, -1), gU)
        inner = inner + (X - S.transpose(X, -2, -1)) / E * S.unsqueeze(sv, -2)
    if gV is not None:
        X = L.matmul(Vt, gV)
        inner = inner + S.unsqueeze(sv, -1) * ((X - S.transpose(X, -2, -1)) / E)
    gA = L.matmul(U, inner)
    if gU is not None and U.shape[-2] > n:
        gUSinv = gU / S.unsqueeze(sv, -2)
        gA = gA + gUSinv - L.matmul(U, L.matmul(S.transpose(U, -2, -1), gUSinv))
    return L.matmul(gA, Vt)


@rule("linalg_svd", uses_inputs=False)
def _linalg_svd(g, result, A, full_matrices=True, *, driver=None, out=None):
    U, Sv, Vh = result
    gU, gS, gVh = g
    k = Sv.shape[-1]
    if full_matrices:  # (the extra columns do not change A: torch narrows them away)
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    V, gV = S.transpose(Vh, -2, -1), None if gVh is None else S.transpose(gVh, -2, -1)
    if A.shape[-2] < A.shape[-1]:  # A^T = V S U^T
        return ((A, S.transpose(_svd_backward(gV, gS, gU, V, Sv, U), -2, -1)),)
    return ((A, _svd_backward(gU, gS, gV, U, Sv, V)),)


def index_put(input, key, value):
    """`input` with `input[key] = value` applied to a copy: what `t[key] = value` records."""
    out = input.clone()
    I.setitem(out, key, value)
    return out


@rule("index_put", uses_inputs=False, uses_result=False)
def _index_put(g, result, input, key, value):
    grad = g.clone()
    grad[key] = 0
    return (input, grad), (value, g[key])


@rule("copied", "filled", uses_inputs=False, uses_result=False)
def _copied(g, result, self, src, non_blocking=False):
    return (src, g), (self, _zero(g))  # self's old values are gone: its history gets zeros


def copied(self, src, non_blocking=False):
    """What `self.copy_(src)` records: src converted and broadcast to self's shape."""
    if not isinstance(src, Tensor):
        src = creation.tensor(src, dtype=self.dtype, device=self.device)
    return S.expand(src.to(self.device, self.dtype), self.shape).clone()


def filled(self, value):
    """What `self.fill_(value)` records: value (a number or 0-d tensor) in self's shape."""
    return copied(self, value)
