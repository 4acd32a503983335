"""The scalar definitions of the elementwise ops whose formula is more than an expression (the
op table, table.py, calls them), and the op codes the kernels' callers name.

The CPU kernels (kernels/cpu/elementwise.py) and the CUDA kernels call these same functions,
so a formula lives in exactly one place. Inputs arrive already converted to the op's compute
dtype; the kernel's store converts the result to the output dtype."""
import math

import numpy as np
from numba.extending import overload, register_jitable

from . import libm, table
from .reduction import cast_like

# op codes the kernels' callers name (each op's position in its family: table.py)
EQ, LT, GE = table.codes("compare", "eq", "lt", "ge")
(WHERE,) = table.codes("ternary", "where")
(GELU, GELU_TANH, SILU, MISH, SOFTPLUS, LEAKY_RELU, ELU, LOGSIGMOID, HARDSIGMOID, HARDSWISH,
 THRESHOLD, SELU, HARDTANH) = table.codes(
    "activation", "gelu", "gelu_tanh", "silu", "mish", "softplus", "leaky_relu", "elu",
    "logsigmoid", "hardsigmoid", "hardswish", "threshold", "selu", "hardtanh")


# -- unary ------------------------------------------------------------------------------------
exp = libm.exp  # the vectorisable one on the CPU (kernels/scalar/libm.py)


@register_jitable
def sign(x):
    """-1, 0 or 1; NaN gives 0, as in torch."""
    return (x > 0) * 1 - (x < 0) * 1


@register_jitable
def sigmoid(x):
    """1 / (1 + e^-x) from e^-|x|, whose exponent is never positive (no overflow), with no
    branch and in x's type (a Python 1 would make float32 arithmetic float64): vectorises, 3.7x
    faster than the two-branch form."""
    e = exp(-abs(x))
    one = cast_like(1, x)
    s = one / (one + e)
    return s if x >= 0 else e * s


@register_jitable
def relu(x):
    return x if x > 0 or x != x else x - x


@register_jitable
def nan_to_num(x, nan, posinf, neginf):
    if x != x:
        return nan
    if x == np.inf:
        return posinf
    if x == -np.inf:
        return neginf
    return x


@register_jitable
def clamp(x, lo, hi):
    """torch.clamp: min(max(x, lo), hi), NaN in x propagates; lo > hi gives hi."""
    if x != x:
        return x
    y = lo if x < lo else x
    return hi if y > hi else y


# -- binary -----------------------------------------------------------------------------------
@register_jitable
def add(x, y, alpha):
    return x + alpha * y


@register_jitable
def sub(x, y, alpha):
    return x - alpha * y


@register_jitable
def floor_divide_float(x, y):
    """torch's floor division of floats: from fmod, so it is exact where x / y would round."""
    if y == 0:
        return x / y
    mod = libm.fmod(x, y)
    div = (x - mod) / y
    if mod != 0 and (y < 0) != (mod < 0):
        div -= 1
    if div == 0:
        return math.copysign(0.0, x / y)
    floordiv = libm.floor(div)
    if div - floordiv > 0.5:
        floordiv += 1
    return floordiv


@register_jitable
def fmod(x, y):
    """C's fmod for integers: the result takes the dividend's sign (torch.fmod)."""
    return x - trunc_divide(x, y) * y


@register_jitable
def floor_divide_int(x, y):
    """Python's floor division of integers, but the most negative value // -1 wraps to itself,
    as torch's (the quotient does not fit: Numba's int64 division gives 0 there)."""
    if y == -1:
        return -x
    return x // y


@register_jitable
def trunc_divide(x, y):
    """C's integer division (rounds toward zero) from Python's floor division (the same for
    y == -1, whose wrapped quotient the test below would misread)."""
    q = floor_divide_int(x, y)
    if y != -1 and q < 0 and q * y != x:
        q += 1
    return q


@register_jitable
def maximum(x, y):
    return x if x > y or x != x else y


@register_jitable
def minimum(x, y):
    return x if x < y or x != x else y


@register_jitable
def logical_xor(x, y):
    return (x != 0) != (y != 0)


def bit_width(x):
    """The number of bits of x's integer type."""
    return np.asarray(x).dtype.itemsize * 8  # the CUDA simulator runs this body


@overload(bit_width, inline="always")
def _bit_width(x):
    bits = x.bitwidth
    return lambda x: bits


# Shifts by a negative count or by the type's width or more are undefined in C and LLVM (the
# results changed with the loop's vectorisation); torch defines them, and so do these.
@register_jitable
def shift_left(x, y):
    """x << y; 0 where y is negative or at least x's width, as torch's."""
    if y < 0 or y >= bit_width(x):
        return x - x
    return x << y


@register_jitable
def shift_right(x, y):
    """x >> y (arithmetic for signed types); where y is negative or at least x's width, every
    bit is the sign bit (-1 or 0), as torch's."""
    if y < 0 or y >= bit_width(x):
        return x - x - (x < 0)
    return x >> y


@register_jitable
def int_pow(x, y):
    """Integer power by squaring, wrapping like the integer type; a negative exponent gives
    what torch gives (0 unless the base is 1 or -1). Every value is cast back to x's type:
    Numba widens small integers' products to int64 or uint64, and a uint64 meeting an int64
    is a float64 (53 bits)."""
    if y < 0:
        if x == 1:
            return x
        if x == -1:
            return x if y % 2 else cast_like(-x, x)
        return cast_like(0, x)
    result, base = cast_like(1, x), x
    while y > 0:  # (written with % and // so that float operands type-check too)
        if y % 2:
            result = cast_like(result * base, x)
        base = cast_like(base * base, x)
        y //= 2
    return result


@register_jitable
def fmax(x, y):
    """The larger of x and y, ignoring a NaN unless both are NaN; x when they compare equal
    (0.0 and -0.0), as torch.fmax."""
    return x if x >= y or y != y else y


@register_jitable
def fmin(x, y):
    """The smaller of x and y, ignoring a NaN unless both are NaN; x when they compare equal,
    as torch.fmin."""
    return x if x <= y or y != y else y


@register_jitable
def logaddexp(x, y):
    """log(e^x + e^y) without overflow: the larger plus log1p(e^-|x - y|). Equal operands
    give x + log 2, which also keeps two equal infinities (their difference is NaN)."""
    if x == y:
        return x + libm.log1p(cast_like(1, x))
    m = x if x > y else y  # (a NaN makes the difference and so the result NaN)
    return m + libm.log1p(exp(-abs(x - y)))


@register_jitable
def logaddexp2(x, y):
    """log2(2^x + 2^y), as logaddexp in base 2."""
    if x == y:
        return x + cast_like(1, x)
    m = x if x > y else y
    return m + libm.log1p(libm.exp2(-abs(x - y))) * cast_like(1.4426950408889634, x)


@register_jitable
def xlogy(x, y):
    """x * log(y), 0 where x is 0 (unless y is NaN), as in torch."""
    if y != y:
        return y
    if x == 0:
        return x - x
    return x * libm.log(y)


# -- activations (the "activation" family: torch.nn.functional's pointwise layers; parameters
# p, q, r arrive in the compute dtype) -----------------------------------------------------------
@register_jitable
def gelu(x):
    """x * Phi(x) = x (1 + erf(x / sqrt 2)) / 2, as torch computes it."""
    half = cast_like(0.5, x)
    return x * half * (cast_like(1, x) + libm.erf(x * cast_like(0.7071067811865476, x)))


@register_jitable
def gelu_tanh(x):
    """gelu's tanh approximation, x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2."""
    inner = cast_like(0.7978845608028654, x) * (x + cast_like(0.044715, x) * x * x * x)
    return cast_like(0.5, x) * x * (cast_like(1, x) + libm.tanh(inner))


@register_jitable
def silu(x):
    return x * sigmoid(x)


@libm.inline_on_cpu
def softplus(x, beta, threshold):
    """log(1 + e^(beta x)) / beta; x itself where beta x > threshold (where e^(beta x) would
    only add rounding, or overflow)."""
    z = x * beta
    return libm.select(z > threshold, x, libm.log1p(exp(z)) / beta)


@libm.inline_on_cpu
def mish(x):
    return x * libm.tanh(softplus(x, cast_like(1, x), cast_like(20, x)))


@register_jitable
def leaky_relu(x, slope):
    return x if x > 0 else x * slope


@register_jitable
def elu(x, alpha, scale, input_scale):
    """scale x for x > 0, else scale alpha (e^(input_scale x) - 1): elu, selu (fixed alpha and
    scale) and celu (input_scale 1 / alpha) in one formula, as torch's kernel."""
    return libm.select(x > 0, x * scale, libm.expm1(x * input_scale) * (alpha * scale))


@libm.inline_on_cpu
def logsigmoid(x):
    """log(sigmoid(x)) = min(x, 0) - log(1 + e^-|x|): no overflow, exact for large -x.
    (Inlined: called per element it kept loops scalar, many times slower than torch.)"""
    return libm.select(x < 0, x, cast_like(0, x)) - libm.log1p(exp(-abs(x)))


@register_jitable
def hardsigmoid(x):
    """clamp(x + 3, 0, 6) / 6; NaN stays NaN."""
    return clamp(x + cast_like(3, x), cast_like(0, x), cast_like(6, x)) / cast_like(6, x)


@register_jitable
def hardswish(x):
    return x * hardsigmoid(x)


@register_jitable
def threshold(x, th, value):
    """x where x > th, else value (NaN stays NaN, as in torch)."""
    return x if x > th or x != x else value


# -- the activations' first derivatives, g * f'(x) (the "activation_grad" family, codes as
# above; parameters c, d): backward's one kernel where no graph of it is recorded. The rules in
# autograd/derivatives/activation.py compose the same formulas from ops for create_graph=True.
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


@register_jitable
def gelu_grad(g, x):
    cdf = cast_like(0.5, x) * (cast_like(1, x) + libm.erf(x * cast_like(0.7071067811865476, x)))
    pdf = exp(cast_like(-0.5, x) * x * x) * cast_like(0.3989422804014327, x)
    return g * (cdf + x * pdf)


@register_jitable
def gelu_tanh_grad(g, x):
    half, one, k, c = cast_like(0.5, x), cast_like(1, x), cast_like(0.7978845608028654, x), \
        cast_like(0.044715, x)
    x2 = x * x
    t = libm.tanh(k * (x + c * x2 * x))
    slope = half * (one + t) + half * x * (one - t * t) * (k * (one + cast_like(3, x) * c * x2))
    return g * slope


@register_jitable
def silu_grad(g, x):
    s = sigmoid(x)
    one = cast_like(1, x)
    return g * s * (one + x * (one - s))


@libm.inline_on_cpu
def mish_grad(g, x):
    one = cast_like(1, x)
    t = libm.tanh(softplus(x, one, cast_like(20, x)))
    return g * (t + x * sigmoid(x) * (one - t * t))


@register_jitable
def softplus_grad(g, x, beta, threshold):
    z = x * beta
    return libm.select(z > threshold, g, g * sigmoid(z))


@register_jitable
def leaky_relu_grad(g, x, slope):
    return g if x > 0 else g * slope


@register_jitable
def elu_grad(g, x, coef, input_scale):
    """elu's and celu's (scale 1): g for x > 0, else g alpha input_scale e^(input_scale x),
    coef = alpha input_scale."""
    return libm.select(x > 0, g, g * coef * exp(x * input_scale))


@register_jitable
def selu_grad(g, x):
    return libm.select(x > 0, g * cast_like(SELU_SCALE, x),
                       g * cast_like(SELU_ALPHA * SELU_SCALE, x) * exp(x))


@register_jitable
def logsigmoid_grad(g, x):
    return g * sigmoid(-x)


@register_jitable
def hardsigmoid_grad(g, x):
    """g / 6 strictly inside (-3, 3), else 0 (torch's bounds)."""
    inside = x > cast_like(-3, x) and x < cast_like(3, x)
    return g / cast_like(6, x) if inside else cast_like(0, x)


@register_jitable
def hardswish_grad(g, x):
    """0 up to -3 included, g (2x + 3) / 6 inside, g from 3 on (torch's bounds)."""
    if x <= cast_like(-3, x):
        return cast_like(0, x)
    if x < cast_like(3, x):
        return g * (x / cast_like(3, x) + cast_like(0.5, x))
    return g


@register_jitable
def threshold_grad(g, x, th):
    return cast_like(0, x) if x <= th else g  # (a NaN x passes g, as torch)


@register_jitable
def hardtanh_grad(g, x, lo, hi):
    """0 at and beyond the bounds (clamp's gradient passes there); a NaN x passes g."""
    return cast_like(0, x) if x <= lo or x >= hi else g
