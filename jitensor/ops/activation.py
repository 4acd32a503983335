"""torch.nn.functional's pointwise activations: each is one launch of the "activation" kernel
family (the formulas are in kernels/scalar/elementwise.py), except hardtanh (and so relu6),
a clamp with a derivative of its own. Integer and bool inputs are refused as torch does
(threshold and hardtanh take integers).

torch has these as functions, not Tensor methods: TENSOR_METHODS here only carries the
in-place forms for autograd's `install` (which records them as their out-of-place op), and
ops/__init__ does not attach it to Tensor; nn.functional calls them."""
from ..creation import allocate
from ..dtypes import bool_
from ..kernels.registry import backend
from ..kernels.scalar import elementwise as k
from ..tensor import Tensor
from ._common import same_device
from .elementwise import FLOATS_ONLY, _clamp, _Op, _operand, _scalar, _unary, gt, where

_OPS = {name: _Op(name.split(":")[0], "activation", code, rule=FLOATS_ONLY) for name, code in (
    ("gelu", k.GELU), ("gelu:tanh", k.GELU_TANH), ("silu", k.SILU), ("mish", k.MISH),
    ("softplus", k.SOFTPLUS), ("leaky_relu", k.LEAKY_RELU), ("elu", k.ELU), ("selu", k.ELU),
    ("celu", k.ELU), ("logsigmoid", k.LOGSIGMOID), ("hardsigmoid", k.HARDSIGMOID),
    ("hardswish", k.HARDSWISH), ("threshold", k.THRESHOLD))}

SELU_ALPHA, SELU_SCALE = k.SELU_ALPHA, k.SELU_SCALE  # (Klambauer et al. 2017, as torch)


def _tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input


def _run(key, input, params=(0, 0, 0), inplace=False):
    op = _OPS[key]
    _tensor(op.name, input)
    return _unary(op, input, inplace=input if inplace else None, params=params)


def gelu(input, *, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; approximate="tanh" uses the tanh form."""
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not "
                        f"{type(approximate).__name__}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu: approximate argument must be either 'none' or 'tanh', got "
                           f"{approximate!r}")
    return _run("gelu:tanh" if approximate == "tanh" else "gelu", input)


def silu(input):
    """x * sigmoid(x) (swish)."""
    return _run("silu", input)


def mish(input):
    """x * tanh(softplus(x))."""
    return _run("mish", input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    return _run("softplus", input, (beta, threshold, 0))


def leaky_relu(input, negative_slope=0.01):
    """x for x > 0, else negative_slope * x."""
    return _run("leaky_relu", input, (negative_slope, 0, 0))


def elu(input, alpha=1.0):
    """x for x > 0, else alpha (exp(x) - 1)."""
    return _run("elu", input, (alpha, 1, 1))


def selu(input):
    """scale * elu(x, alpha) with selu's fixed alpha and scale."""
    return _run("selu", input, (SELU_ALPHA, SELU_SCALE, 1))


def _celu_params(alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU; pass a nonzero alpha")
    return alpha, 1, 1 / alpha


def celu(input, alpha=1.0):
    """x for x > 0, else alpha (exp(x / alpha) - 1)."""
    return _run("celu", input, _celu_params(alpha))


def logsigmoid(input):
    """log(sigmoid(x)), without overflow."""
    return _run("logsigmoid", input)


def hardsigmoid(input):
    """clamp(x / 6 + 1 / 2, 0, 1)."""
    return _run("hardsigmoid", input)


def hardswish(input):
    """x * hardsigmoid(x)."""
    return _run("hardswish", input)


def _in_dtype(input, values):
    """Scalar parameters as the input's dtype takes them: integer inputs truncate, as torch."""
    return values if input.dtype.is_floating_point else tuple(int(v) for v in values)


def threshold(input, threshold, value):
    """x where x > threshold, else value."""
    return _threshold(input, threshold, value)


def _threshold(input, threshold, value, inplace=False):
    _tensor("threshold", input)
    if input.dtype.is_floating_point or input.dtype is bool_:
        return _run("threshold", input, (threshold, value, 0), inplace)
    # integers (rare): composed, so that the activation kernels compile for floats only
    th, value = _in_dtype(input, (threshold, value))
    result = where(gt(input, th), input, value)
    if not inplace:
        return result
    backend(input._device).copy(input._data, result._data)
    return input


def _bounds(input, min_val, max_val):
    _tensor("hardtanh", input)
    if input.dtype is bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh; convert with .float() first")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    return _in_dtype(input, (min_val, max_val))


def hardtanh(input, min_val=-1.0, max_val=1.0):
    """clamp(x, min_val, max_val), whose gradient is 0 at the bounds (clamp's passes there)."""
    return _clamp(input, *_bounds(input, min_val, max_val))


def backward(code, g, input, c=0, d=0):
    """g * f'(input), f the activation of op `code` with parameters c, d (see the
    "activation_grad" formulas), in one kernel: the derivative rules' path when the backward
    itself is not recorded."""
    dtype, shape = input._dtype, tuple(input._data.shape)
    b = backend(same_device("backward", g, input))
    out = allocate(shape, dtype, input._device)
    b.elementwise.launch("activation_grad", code, out._data, _operand(g, dtype, shape, b),
                         _operand(input, dtype, shape, b), _scalar(c, dtype), _scalar(d, dtype))
    return out


TENSOR_METHODS = dict(
    silu_=lambda self: _run("silu", self, inplace=True),
    mish_=lambda self: _run("mish", self, inplace=True),
    leaky_relu_=lambda self, negative_slope=0.01:
        _run("leaky_relu", self, (negative_slope, 0, 0), inplace=True),
    elu_=lambda self, alpha=1.0: _run("elu", self, (alpha, 1, 1), inplace=True),
    selu_=lambda self: _run("selu", self, (SELU_ALPHA, SELU_SCALE, 1), inplace=True),
    celu_=lambda self, alpha=1.0: _run("celu", self, _celu_params(alpha), inplace=True),
    hardsigmoid_=lambda self: _run("hardsigmoid", self, inplace=True),
    hardswish_=lambda self: _run("hardswish", self, inplace=True),
    threshold_=lambda self, threshold, value: _threshold(self, threshold, value, inplace=True),
    hardtanh_=lambda self, min_val=-1.0, max_val=1.0:
        _clamp(self, *_bounds(self, min_val, max_val), inplace=self),
)
