"""CPU kernel of complex tensors' elementwise ops: one kernel per dtype (complex64, complex128),
the op a runtime code, over C-contiguous operands of the result's size (the front end,
ops/elementwise.py, broadcasts and converts them). The formulas are Numba's complex arithmetic
and cmath (C99's branch cuts, as torch's). One compile serves every op: the switch sits in the
loop, but for the arithmetic that vectorises, which has loops of its own."""
import cmath
import math

from numba import njit
from numba.extending import register_jitable

# the ops, by code (their names are the elementwise table's; `pow` of a complex base, `add` and
# `sub` with alpha folded into y by the front end)
OPS = ("add", "sub", "mul", "div", "pow", "neg", "conj", "exp", "exp2", "expm1", "log",
       "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "square", "sigmoid", "sin", "cos",
       "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh")
CODE = {name: code for code, name in enumerate(OPS)}
_LN2, _LN10 = 0.6931471805599453, 2.302585092994046


@register_jitable
def _div(x, y):
    """x / y as torch's (and C99's) scaled division: Numba's raises on a zero divisor, where
    torch's gives infinities and NaNs."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    if abs(c) >= abs(d):
        if c == 0 and d == 0:
            return complex(a / abs(c), b / abs(d))
        rat = d / c
        scl = 1.0 / (c + d * rat)
        return complex((a + b * rat) * scl, (b - a * rat) * scl)
    rat = c / d
    scl = 1.0 / (d + c * rat)
    return complex((a * rat + b) * scl, (b * rat - a) * scl)


@register_jitable
def _scale(z, s):
    """z times the real s, part by part (as a complex product, inf * 0 would make a NaN)."""
    return complex(z.real * s, z.imag * s)


@register_jitable
def _pow(x, y):
    """x ** y; of a zero base as torch's (Numba raises ZeroDivisionError as Python does), but
    1 for a zero exponent (torch's for a number exponent; for a tensor one it gives NaN)."""
    if x != 0 or y == 0:
        return x ** y
    if y.real > 0:
        return 0j
    return complex(math.inf if y.real < 0 and y.imag == 0 else math.nan, math.nan)


@register_jitable
def _value(op, x, y):
    if op == 0:
        return x + y
    if op == 1:
        return x - y
    if op == 2:
        return x * y
    if op == 3:
        return _div(x, y)
    if op == 4:
        return _pow(x, y)
    if op == 5:
        return -x
    if op == 6:
        return x.conjugate()
    if op == 7:
        return cmath.exp(x)
    if op == 8:
        return cmath.exp(_scale(x, _LN2))
    if op == 9:
        return cmath.exp(x) - 1
    if op == 10:
        return cmath.log(x)
    if op == 11:
        return _scale(cmath.log(x), 1 / _LN2)
    if op == 12:
        return _scale(cmath.log(x), 1 / _LN10)
    if op == 13:
        return cmath.log(x + 1)
    if op == 14:
        return cmath.sqrt(x)
    if op == 15:
        return _div(1 + 0j, cmath.sqrt(x))
    if op == 16:
        return _div(1 + 0j, x)
    if op == 17:
        return x * x
    if op == 18:
        return _div(1 + 0j, 1 + cmath.exp(-x))
    if op == 19:
        return cmath.sin(x)
    if op == 20:
        return cmath.cos(x)
    if op == 21:
        return cmath.tan(x)
    if op == 22:
        return cmath.sinh(x)
    if op == 23:
        return cmath.cosh(x)
    if op == 24:
        return cmath.tanh(x)
    if op == 25:
        return cmath.asin(x)
    if op == 26:
        return cmath.acos(x)
    if op == 27:
        return cmath.atan(x)
    if op == 28:
        return cmath.asinh(x)
    if op == 29:
        return cmath.acosh(x)
    return cmath.atanh(x)


@njit(cache=True, error_model="numpy")  # (x / 0 is inf or nan, not ZeroDivisionError)
def _apply(op, out, x, y):
    n = out.size
    if op == 0:  # the arithmetic in loops of their own, which vectorise
        for i in range(n):
            out[i] = x[i] + y[i]
    elif op == 1:
        for i in range(n):
            out[i] = x[i] - y[i]
    elif op == 2:
        for i in range(n):
            out[i] = x[i] * y[i]
    elif op == 3:
        for i in range(n):
            out[i] = _div(x[i], y[i])
    elif op == 5:
        for i in range(n):
            out[i] = -x[i]
    elif op == 17:
        for i in range(n):
            out[i] = x[i] * x[i]
    else:
        for i in range(n):
            out[i] = _value(op, x[i], y[i])


def elementwise(name, out, x, y):
    """out = op `name` of x (and y, for the binary ops; unary ones ignore it), all 1-D, C-contiguous
    and of out's complex dtype."""
    _apply(CODE[name], out, x, y)
