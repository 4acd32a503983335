"""Scalar definitions for the creation kernels: the counter-based RNG and linspace.

`register_jitable` makes each function callable from kernels of either target, so an op is
defined once and both devices compute the same numbers."""
import numpy as np
from numba.extending import overload, register_jitable

from . import libm

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@register_jitable
def _mix64(z):
    """splitmix64's finaliser: a bijective avalanche of 64 bits."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@register_jitable
def uniform(seed, counter, bits):
    """Counter-based uniform in [0, 1) with `bits` random bits (24 for float32, 53 for float64):
    element i of a draw depends only on (seed, offset + i), so parallel and GPU kernels give the
    same stream as a serial loop."""
    z = _mix64(seed + np.uint64(counter + 1) * _GOLDEN)
    return np.float64(z >> np.uint64(64 - bits)) * \
        (1.0 / np.float64(np.uint64(1) << np.uint64(bits)))


@register_jitable
def normal(seed, counter):
    """Standard normal by Box-Muller from the uniforms at `counter` and `counter + 1` (a draw
    of n normals reserves 2n counters; element i uses offset + 2i)."""
    u1 = 1.0 - uniform(seed, counter, 53)  # (0, 1]: log stays finite
    u2 = uniform(seed, counter + 1, 53)
    return libm.sqrt(-2.0 * libm.log(u1)) * libm.cos(2.0 * np.pi * u2)


@register_jitable
def randint(seed, counter, low, span):
    """low + a draw from [0, span); span is a float, as high - low reaches 2^64 (int64's whole
    range), and the sum wraps in int64 (exact: the result lies in [low, high))."""
    return low + np.int64(np.uint64(uniform(seed, counter, 53) * span))


def as_type_of(like, x):
    """`x` converted to the numeric type of `like` (numba's int64 * float32 is float64)."""
    return type(like)(x)  # the CUDA simulator runs this body


@overload(as_type_of, inline="always")
def _as_type_of(like, x):
    cast = like
    return lambda like, x: cast(x)


@register_jitable
def linspace_at(i, steps, start, end):
    """torch's symmetric formula, in start's type as torch computes it (float32 for float32
    output): the first half counts up from `start`, the second half down from `end`, so both
    endpoints are exact."""
    step = (end - start) / as_type_of(start, steps - 1)
    if i < steps // 2:
        return start + step * as_type_of(start, i)
    return end - step * as_type_of(start, steps - 1 - i)
