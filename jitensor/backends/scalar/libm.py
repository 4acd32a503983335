"""Math functions for the scalar definitions both targets share: NumPy's on the CPU and in
Python (where NumPy scalars give NaN and inf instead of raising, as the GPU does), `math`'s on
CUDA (numba-cuda types no NumPy ufunc on scalars and maps `math` to libdevice). Each keeps its
argument's float type on both targets."""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload, register_jitable


def _shared(name, doc, np_name=None, cuda_pick=None, host=None, py=None):
    """A function `name` that calls np.<np_name> (or `host`) on the CPU and, on CUDA,
    math.<name> or what cuda_pick(*argument types) returns; `py`, when given, serves Python
    (the CUDA simulator) instead of np_fn."""
    np_fn = host or getattr(np, np_name or name)
    py = py or np_fn

    def fn(*args):
        return py(*args)
    fn.__name__, fn.__qualname__, fn.__doc__ = name, name, doc

    def cpu(*args):
        return lambda *args: np_fn(*args)

    def cuda(*args):
        device_fn = cuda_pick(*args) if cuda_pick else getattr(math, name)
        return lambda *args: device_fn(*args)
    overload(fn, target="cpu")(cpu)
    overload(fn, target="cuda")(cuda)
    return fn


def _libdevice(name):
    """Pick libdevice's float32 (`name`f) or float64 `name` by the argument type: `math` has
    no float-keeping rint or trunc, and no exp2 (float16 arguments convert to float32)."""
    def pick(x):
        from numba.cuda import libdevice
        return getattr(libdevice, name if x == types.float64 else name + "f")
    return pick


floor = _shared("floor", "Round down, keeping the float type.")
ceil = _shared("ceil", "Round up, keeping the float type.")
sqrt = _shared("sqrt", "Square root.")
expm1 = _shared("expm1", "e ** x - 1, exact near 0.")
log = _shared("log", "Natural logarithm.")
log1p = _shared("log1p", "log(1 + x), exact near 0.")
sin = _shared("sin", "Sine.")
cos = _shared("cos", "Cosine.")
fmod = _shared("fmod", "C's fmod of floats: the result takes the dividend's sign.")
atan2 = _shared("atan2", "The angle of (x, y).", np_name="arctan2")
isinf = _shared("isinf", "Whether x is infinite.")
isfinite = _shared("isfinite", "Whether x is finite.")


def _keeping_type(fn):
    """fn (a `math` function of one float) in Python, keeping its argument's type (Python's
    would give a Python float)."""
    return lambda x: np.asarray(x).dtype.type(fn(x))


# the rarer transcendental functions (the "math" kernel families); on CUDA numba-cuda
# computes float16 arguments of `math` functions in float32
tan = _shared("tan", "Tangent.")
asin = _shared("asin", "Arcsine.", np_name="arcsin")
acos = _shared("acos", "Arccosine.", np_name="arccos")
atan = _shared("atan", "Arctangent.", np_name="arctan")
sinh = _shared("sinh", "Hyperbolic sine.")
cosh = _shared("cosh", "Hyperbolic cosine.")
asinh = _shared("asinh", "Inverse hyperbolic sine.", np_name="arcsinh")
acosh = _shared("acosh", "Inverse hyperbolic cosine.", np_name="arccosh")
atanh = _shared("atanh", "Inverse hyperbolic tangent.", np_name="arctanh")
log2 = _shared("log2", "Base-2 logarithm.")
log10 = _shared("log10", "Base-10 logarithm.")
exp2 = _shared("exp2", "2 ** x.", cuda_pick=_libdevice("exp2"))
erf = _shared("erf", "The error function.", host=math.erf, py=_keeping_type(math.erf))
erfc = _shared("erfc", "1 - erf(x), exact where erf(x) is near 1.", host=math.erfc,
               py=_keeping_type(math.erfc))
hypot = _shared("hypot", "sqrt(x * x + y * y) without overflow.")
copysign = _shared("copysign", "|x| with the sign of y.")

rint = _shared("rint", "Round half to even, keeping the float type (torch.round).",
               cuda_pick=_libdevice("rint"))
trunc = _shared("trunc", "Round toward zero, keeping the float type.",
                cuda_pick=_libdevice("trunc"))


# -- exp: on the CPU a polynomial with no branch and no call, so loops of it vectorise (LLVM
# cannot vectorise calls to libm's exp/expf and the PyPI llvmlite has no vector math library:
# np.exp in a loop ran 4x slower than NumPy's). On CUDA, libdevice's.
def exp(x):
    """e ** x in x's float type (integers: float64): within 1 ulp for float32, 2 for float64,
    denormal results included; overflow gives inf, NaN stays NaN."""
    return np.exp(x)  # the CUDA simulator runs this body


# The float32 CPU polynomials are compiled with fused multiply-adds ("contract": a multiply and
# an add round once instead of twice): exp of 2^14 float32 in L1 took 8.5 us, now 6.1 (torch
# 4.3). The flag is the option of the function itself, which the overload calls (an overload's
# returned implementation is compiled with the overload's options). float64 exp stays unfused:
# fused, one denormal result rounded to the wrong neighbour.
_FMA = {"contract"}


@overload(exp, target="cpu")  # not inline="always": Numba's IR inliner warns; LLVM inlines it
def _exp_cpu(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    if isinstance(x, types.Float):
        return _exp64
    return lambda x: _exp64(np.float64(x))


@overload(exp, target="cuda")
def _exp_cuda(x):
    return lambda x: math.exp(x)  # (integers: float64)


@intrinsic
def _float_from_bits(typingctx, bits):
    """The float32 (int32 bits) or float64 (int64 bits) with these IEEE-754 bits."""
    to = {32: types.float32, 64: types.float64}.get(getattr(bits, "bitwidth", 0))
    if to is None or not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.FloatType() if to == types.float32 else
                               ir.DoubleType())

    return to(bits), codegen


@intrinsic
def _where(typingctx, cond, a, b):
    """a if cond else b, as one LLVM select: a conditional expression becomes a branch in
    Numba's IR, and the branches of an exp inlined into tanh's kept LLVM from vectorising."""
    if a != b or not isinstance(cond, types.Boolean):
        return None
    return a(cond, a, b), lambda context, builder, sig, args: builder.select(*args)


# Constants are scalar globals: Numba freezes them into the code, where indexing a global tuple
# or calling np.float32() in a loop body kept LLVM from vectorising it.
_LO32, _HI32, _LOG2E32, _HALF32, _ONE32 = (np.float32(c) for c in (-104.0, 89.0, 1.44269504,
                                                                   0.5, 1.0))
_LN2HI32, _LN2LO32 = np.float32(0.693359375), np.float32(-2.12194440e-4)
_P0, _P1, _P2, _P3, _P4, _P5 = (np.float32(c) for c in (1.9875691500e-4, 1.3981999507e-3,
                                                        8.3334519073e-3, 4.1665795894e-2,
                                                        1.6666665459e-1, 5.0000001201e-1))
_LN2HI, _LN2LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_T2, _T3, _T4, _T5, _T6, _T7, _T8, _T9, _T10, _T11, _T12 = (1.0 / math.factorial(k)
                                                            for k in range(2, 13))


@register_jitable
def _pow2_32(k):
    """2.0 ** k in float32 for an int32 k in the normal range."""
    return _float_from_bits(np.int32((k + 127) << 23))  # (Numba widens int32 sums to int64)


@register_jitable(fastmath=_FMA)
def _exp32(x):
    """Cephes expf: x = k ln2 + r, |r| <= ln2/2, e^r by a degree-6 polynomial, 2^k applied as
    two powers of two so results in the denormals stay exact. x is first clamped to
    [-104, 89], where the arithmetic itself underflows to 0 and overflows to inf, so only NaN
    needs a select (the clamp would lose it)."""
    xc = _where(x > _LO32, x, _LO32)
    xc = _where(xc < _HI32, xc, _HI32)
    k = np.floor(xc * _LOG2E32 + _HALF32)
    r = xc - k * _LN2HI32 - k * _LN2LO32
    p = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
    ki = np.int32(k)
    half = ki >> np.int32(1)
    y = (p * r * r + r + _ONE32) * _pow2_32(half) * _pow2_32(ki - half)
    return _where(x == x, y, x)


@register_jitable
def _pow2_64(k):
    """2.0 ** k in float64 for an int32 k in the normal range (int32 arithmetic vectorises)."""
    return _float_from_bits((np.int64(k) + 1023) << 52)


@register_jitable
def _exp64(x):
    """As _exp32 in float64: fdlibm's two-part ln2, Taylor to r^12 (error < 2e-16 on |r| <=
    ln2/2), x clamped to [-746, 710]."""
    xc = _where(x > -746.0, x, -746.0)
    xc = _where(xc < 710.0, xc, 710.0)
    k = np.floor(xc * 1.4426950408889634 + 0.5)
    r = (xc - k * _LN2HI) - k * _LN2LO
    p = (((((((((_T12 * r + _T11) * r + _T10) * r + _T9) * r + _T8) * r + _T7) * r + _T6) * r
           + _T5) * r + _T4) * r + _T3) * r + _T2
    ki = np.int32(k)
    half = ki >> np.int32(1)
    y = ((p * r + 1.0) * r + 1.0) * _pow2_64(half) * _pow2_64(ki - half)
    return _where(x == x, y, x)


def tanh(x):
    """Hyperbolic tangent; float32 on the CPU by Cephes' tanhf without branches (within 2 ulp,
    vectorised; libm's tanhf is a call per element)."""
    return np.tanh(x)


@overload(tanh, target="cpu")
def _tanh_cpu(x):
    if x == types.float32:
        return lambda x: _tanh32(x)
    return lambda x: np.tanh(x)


@overload(tanh, target="cuda")
def _tanh_cuda(x):
    return lambda x: math.tanh(x)


@register_jitable(fastmath=_FMA)
def _tanh32(x):
    a = abs(x)
    z = x * x
    small = ((((np.float32(-5.70498872745e-3) * z + np.float32(2.06390887954e-2)) * z
               - np.float32(5.37397155531e-2)) * z + np.float32(1.33314422036e-1)) * z
             - np.float32(3.33332819422e-1)) * z * x + x
    large = _ONE32 - np.float32(2.0) / (exp(a + a) + _ONE32)
    small = _where(z == np.float32(0.0), x, small)  # keeps the sign of -0.0 (tiny x exact)
    return _where(a < np.float32(0.625), small, _where(x >= np.float32(0.0), large, -large))
