"""The rules of ops/activation.py's ops: one fused kernel (activation.backward) unless the
backward is itself recorded (create_graph=True); then the same formulas composed from ops,
differentiable."""
import math

from ...kernels.scalar.elementwise import (
    ELU,
    GELU,
    GELU_TANH,
    HARDSIGMOID,
    HARDSWISH,
    HARDTANH,
    LEAKY_RELU,
    LOGSIGMOID,
    MISH,
    SELU,
    SILU,
    SOFTPLUS,
    THRESHOLD,
)
from ...ops import activation, elementwise
from ._common import _pass, _recorded, rule

_SQRT_HALF, _INV_SQRT_2PI = math.sqrt(0.5), 1 / math.sqrt(2 * math.pi)
_TANH_K, _TANH_C = math.sqrt(2 / math.pi), 0.044715


@rule("gelu", uses_result=False)
def _gelu(g, result, input, approximate="none"):
    x = input
    if not _recorded(g, x):
        return ((x, activation.backward(GELU_TANH if approximate == "tanh" else GELU, g, x)),)
    if approximate == "tanh":
        x2 = x * x
        t = elementwise.tanh(_TANH_K * (x + _TANH_C * x2 * x))
        slope = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_TANH_K * (1 + 3 * _TANH_C * x2))
    else:
        slope = 0.5 * (1 + elementwise.erf(x * _SQRT_HALF)) \
            + x * _INV_SQRT_2PI * elementwise.exp(-0.5 * x * x)
    return ((x, g * slope),)


@rule("silu", uses_result=False)
def _silu(g, result, input):
    if not _recorded(g, input):
        return ((input, activation.backward(SILU, g, input)),)
    s = elementwise.sigmoid(input)
    return ((input, g * s * (1 + input * (1 - s))),)


@rule("mish", uses_result=False)
def _mish(g, result, input):
    if not _recorded(g, input):
        return ((input, activation.backward(MISH, g, input)),)
    t = elementwise.tanh(activation.softplus(input))
    return ((input, g * (t + input * elementwise.sigmoid(input) * (1 - t * t))),)


@rule("softplus", uses_result=False)
def _softplus(g, result, input, beta=1.0, threshold=20.0):
    if not _recorded(g, input):
        return ((input, activation.backward(SOFTPLUS, g, input, beta, threshold)),)
    z = input * beta
    return ((input, elementwise.where(z > threshold, g, g * elementwise.sigmoid(z))),)


@rule("leaky_relu", uses_result=False)
def _leaky_relu(g, result, input, negative_slope=0.01):
    if not _recorded(g, input):
        return ((input, activation.backward(LEAKY_RELU, g, input, negative_slope)),)
    return ((input, elementwise.where(input > 0, g, g * negative_slope)),)


def _elu_rule(g, input, alpha, scale, input_scale):
    if not _recorded(g, input):
        grad = activation.backward(SELU, g, input) if scale != 1 else \
            activation.backward(ELU, g, input, alpha * input_scale, input_scale)
        return ((input, grad),)
    negative = g * (alpha * scale * input_scale) * elementwise.exp(input * input_scale)
    return ((input, elementwise.where(input > 0, g * scale, negative)),)


@rule("elu", uses_result=False)
def _elu(g, result, input, alpha=1.0):
    return _elu_rule(g, input, alpha, 1, 1)


@rule("selu", uses_result=False)
def _selu(g, result, input):
    return _elu_rule(g, input, activation.SELU_ALPHA, activation.SELU_SCALE, 1)


@rule("celu", uses_result=False)
def _celu(g, result, input, alpha=1.0):
    return _elu_rule(g, input, alpha, 1, 1 / alpha)


@rule("logsigmoid", uses_result=False)
def _logsigmoid(g, result, input):
    if not _recorded(g, input):
        return ((input, activation.backward(LOGSIGMOID, g, input)),)
    return ((input, g * elementwise.sigmoid(-input)),)


@rule("hardsigmoid", uses_result=False)
def _hardsigmoid(g, result, input):
    if not _recorded(g, input):
        return ((input, activation.backward(HARDSIGMOID, g, input)),)
    return ((input, _pass((input > -3) & (input < 3), g / 6)),)


@rule("hardswish", uses_result=False)
def _hardswish(g, result, input):
    if not _recorded(g, input):
        return ((input, activation.backward(HARDSWISH, g, input)),)
    # (torch's bounds: 0 up to -3 included, g from 3 on)
    middle = elementwise.where(input < 3, g * (input / 3 + 0.5), g)
    return ((input, _pass(input > -3, middle)),)


@rule("threshold", uses_result=False)
def _threshold(g, result, input, threshold, value):
    if not _recorded(g, input):
        return ((input, activation.backward(THRESHOLD, g, input, threshold)),)
    return ((input, elementwise.where(input <= threshold, 0.0, g)),)


@rule("hardtanh", uses_result=False)
def _hardtanh(g, result, input, min_val=-1.0, max_val=1.0):
    if not _recorded(g, input):
        return ((input, activation.backward(HARDTANH, g, input, min_val, max_val)),)
    return ((input, elementwise.where((input <= min_val) | (input >= max_val), 0.0, g)),)
