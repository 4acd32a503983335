"""User ops defined at module level, as a user's own module would: their kernels are cached on
disk (tests/test_custom_ops.py checks that a second process loads them from there)."""
import math

import jitensor as jt

C = 0.7978845608  # sqrt(2 / pi): a global the bodies read


@jt.elementwise
def gelu(x):
    return 0.5 * x * (1.0 + math.tanh(C * (x + 0.044715 * x ** 3)))


@gelu.derivative
def gelu_grad(x):
    t = math.tanh(C * (x + 0.044715 * x ** 3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * C * (1.0 + 0.134145 * x * x)


@jt.elementwise
def mad(x, y):
    """x * y + y: keeps integer dtypes."""
    return x * y + y


@jt.elementwise
def smooth_max(x, y):
    return math.log(math.exp(x) + math.exp(y))


@smooth_max.derivative
def smooth_max_grad(x, y):
    ex, ey = math.exp(x), math.exp(y)
    return ex / (ex + ey), ey / (ex + ey)


@jt.elementwise
def positive(x):
    return x > 0


@jt.elementwise
def low_bit(x):
    """Compiles for integers only (& on a float does not type)."""
    return x & 1


@jt.elementwise
def no_derivative(x):
    return x * x


@jt.reduction(identity=0)
def sum_of_squares(acc, x):
    return acc + x * x


@jt.reduction
def largest(acc, x):
    return acc if acc >= x else x


def chain(x, y):
    """An elementwise chain with broadcasting, numbers and activations: fused under compile."""
    return (x * y + 1.0).tanh() * 0.5 - jt.nn.functional.gelu(x / (y * y + 1.0)).sigmoid()


fused_chain = jt.compile(chain)
