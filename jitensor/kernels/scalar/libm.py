"""Math functions for the scalar definitions both targets share: NumPy's on the CPU and in
Python (where NumPy scalars give NaN and inf instead of raising, as the GPU does), `math`'s on
CUDA (numba-cuda types no NumPy ufunc on scalars and maps `math` to libdevice). Each keeps its
argument's float type on both targets."""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.core.codegen import get_host_cpu_features
from numba.extending import intrinsic, overload, register_jitable


def _shared(name, doc, np_name=None, cuda_pick=None, host=None, py=None, fast=None,
            fast64=None):
    """A function `name` that calls np.<np_name> (or `host`) on the CPU and, on CUDA,
    math.<name> or what cuda_pick(*argument types) returns; `py`, when given, serves Python
    (the CUDA simulator) instead of np_fn. On the CPU, `fast` (`fast64`) serves float32
    (float64) arguments instead, where given."""
    np_fn = host or getattr(np, np_name or name)
    py = py or np_fn

    def fn(*args):
        return py(*args)  # the CUDA simulator runs this body
    fn.__name__, fn.__qualname__, fn.__doc__ = name, name, doc

    def cpu(*args):
        if fast is not None and args[0] == types.float32:
            return lambda *args: fast(*args)
        if fast64 is not None and args[0] == types.float64:
            return lambda *args: fast64(*args)
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


def _into_cpu_callers(expr, caller, callee):
    """The inlining cost model of inline_on_cpu: yes for a CPU caller, no for a CUDA one.
    numba-cuda's inlining pass offers a CUDA kernel every template of a callee, the CPU's too,
    and inlined the IR typed for the CPU (arguments `omitted`, failing to lower) once a CPU
    kernel had used it: measured on the H200, in a process that ran a CPU op first."""
    return not type(caller.typemap).__module__.startswith("numba.cuda")


def inline_on_cpu(fn):
    """register_jitable for scalar definitions that Numba inlines into their callers on the
    CPU: LLVM does not inline a call of their size, and a call per element kept loops from
    vectorising (softplus and mish ran many times slower). On CUDA a plain device function
    (numba-cuda's IR inliner mistypes them)."""
    def impl(*args):
        return fn
    overload(fn, target="cpu", inline=_into_cpu_callers, strict=False)(impl)
    overload(fn, target="cuda", strict=False)(impl)
    return fn


def select(cond, a, b):
    """a if cond else b, both computed: on the CPU one LLVM select (see _where), so a loop
    choosing between costly operands still vectorises; a conditional on CUDA and in Python."""
    return a if cond else b


@overload(select, target="cpu")
def _select_cpu(cond, a, b):
    return lambda cond, a, b: _where(cond, a, b)


@overload(select, target="cuda")
def _select_cuda(cond, a, b):
    return lambda cond, a, b: a if cond else b


# Constants are scalar globals: Numba freezes them into the code, where indexing a global tuple
# or calling np.float32() in a loop body kept LLVM from vectorising it.
_LO32, _HI32, _LOG2E32, _HALF32, _ONE32, _ZERO32 = (
    np.float32(c) for c in (-104.0, 89.0, 1.44269504, 0.5, 1.0, 0.0))
_LN2HI32, _LN2LO32 = np.float32(0.693359375), np.float32(-2.12194440e-4)
_P0, _P1, _P2, _P3, _P4, _P5 = (np.float32(c) for c in (1.9875691500e-4, 1.3981999507e-3,
                                                        8.3334519073e-3, 4.1665795894e-2,
                                                        1.6666665459e-1, 5.0000001201e-1))
_LN2HI, _LN2LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_T2, _T3, _T4, _T5, _T6, _T7, _T8, _T9, _T10, _T11, _T12 = (1.0 / math.factorial(k)
                                                            for k in range(2, 13))


def _compiles_for(feature):
    """Whether Numba compiles for a CPU with this feature (NUMBA_CPU_FEATURES, else the host's,
    as Numba's code generator picks them)."""
    features = config.CPU_FEATURES
    return "+" + feature in (get_host_cpu_features() if features is None
                             else features).split(",")  # (codegen's: NUMBA_ENABLE_AVX=0 too)


# AVX-512's vscalef scales by 2^k in one instruction, denormal and overflowing results
# included; LLVM emits it for llvm.ldexp there, and elsewhere a call to libm's ldexp per
# element (9x slower), so exp uses it only on AVX-512 (cached kernels are keyed by the CPU)
_SCALEF = _compiles_for("avx512f")


@intrinsic
def _ldexp(typingctx, x, k):
    """x * 2^k, rounded once (llvm.ldexp)."""
    if not (x in (types.float32, types.float64) and k == types.int32):
        return None

    def codegen(context, builder, sig, args):
        fty = args[0].type
        name = "llvm.ldexp.%s.i32" % ("f32" if x == types.float32 else "f64")
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(fty, [fty, k_ir]),
                                            name)
        return builder.call(fn, args)

    k_ir = ir.IntType(32)
    return x(x, k), codegen


@register_jitable
def _pow2_32(k):
    """2.0 ** k in float32 for an int32 k in the normal range."""
    return _float_from_bits(np.int32((k + 127) << 23))  # (Numba widens int32 sums to int64)


@register_jitable(fastmath=_FMA)
def _exp32(x):
    """Cephes expf: x = k ln2 + r, |r| <= ln2/2, e^r by a degree-6 polynomial, 2^k applied as
    two powers of two so results in the denormals stay exact. Below -104 the result is 0,
    selected at the end, and the arithmetic runs on 0 instead: run on x it made denormals, each
    a slow microcode assist (softmax rows half -inf, as causal attention's, took 4x as long).
    x is clamped to 89 above, where the arithmetic overflows to inf; NaN is selected back."""
    under = x < _LO32
    xc = _where(under, _ZERO32, x)
    xc = _where(xc < _HI32, xc, _HI32)
    k = np.floor(xc * _LOG2E32 + _HALF32)
    r = xc - k * _LN2HI32 - k * _LN2LO32
    p = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
    ki = np.int32(k)
    y = p * r * r + r + _ONE32
    if _SCALEF:
        y = _ldexp(y, ki)
    else:
        half = ki >> np.int32(1)
        y = y * _pow2_32(half) * _pow2_32(ki - half)
    return _where(x == x, _where(under, _ZERO32, y), x)


@register_jitable
def _pow2_64(k):
    """2.0 ** k in float64 for an int32 k in the normal range (int32 arithmetic vectorises)."""
    return _float_from_bits((np.int64(k) + 1023) << 52)


@register_jitable
def _exp64(x):
    """As _exp32 in float64: fdlibm's two-part ln2, Taylor to r^12 (error < 2e-16 on |r| <=
    ln2/2); 0 below -746 (the arithmetic run on 0 there), x clamped to 710 above."""
    under = x < -746.0
    xc = _where(under, 0.0, x)
    xc = _where(xc < 710.0, xc, 710.0)
    k = np.floor(xc * 1.4426950408889634 + 0.5)
    r = (xc - k * _LN2HI) - k * _LN2LO
    p = (((((((((_T12 * r + _T11) * r + _T10) * r + _T9) * r + _T8) * r + _T7) * r + _T6) * r
           + _T5) * r + _T4) * r + _T3) * r + _T2
    ki = np.int32(k)
    y = (p * r + 1.0) * r + 1.0
    if _SCALEF:
        y = _ldexp(y, ki)
    else:
        half = ki >> np.int32(1)
        y = y * _pow2_64(half) * _pow2_64(ki - half)
    return _where(x == x, _where(under, 0.0, y), x)


# -- tanh, erf, log, log1p, expm1: float32 on the CPU without calls or branches (vectorised:
# libm's in a loop ran 8-23x slower than torch's). Elsewhere NumPy's (or `host`) / CUDA's.
@register_jitable(fastmath=_FMA)
def _tanh32(x):
    """Cephes' tanhf without branches (within 2 ulp)."""
    a = abs(x)
    z = x * x
    small = ((((np.float32(-5.70498872745e-3) * z + np.float32(2.06390887954e-2)) * z
               - np.float32(5.37397155531e-2)) * z + np.float32(1.33314422036e-1)) * z
             - np.float32(3.33332819422e-1)) * z * x + x
    large = _ONE32 - np.float32(2.0) / (exp(a + a) + _ONE32)
    small = _where(z == np.float32(0.0), x, small)  # keeps the sign of -0.0 (tiny x exact)
    return _where(a < np.float32(0.625), small, _where(x >= np.float32(0.0), large, -large))


@register_jitable
def _tanh64(x):
    """Cephes' tanh without branches: x + x^3 P(x^2) / Q(x^2) below 0.625, else
    1 - 2 / (e^2|x| + 1) (exp clamps, so large |x| gives +-1 and NaN stays NaN)."""
    a = abs(x)
    z = x * x
    small = x + x * z * (((-9.64399179425052238628e-1 * z - 9.92877231001918586564e1) * z
                          - 1.61468768441708447952e3)
                         / (((z + 1.12811678491632931402e2) * z + 2.23548839060100448583e3) * z
                            + 4.84406305325125486048e3))
    large = 1.0 - 2.0 / (exp(a + a) + 1.0)
    small = _where(z == 0.0, x, small)
    return _where(a < 0.625, small, _where(x >= 0.0, large, -large))


tanh = _shared("tanh", "Hyperbolic tangent.", fast=_tanh32, fast64=_tanh64)


# Eigen's float erf: erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (beyond, erf is +-1 in float32).
# Its approximation error is 6.5e-8 relative, but evaluated in float32 the rounding of the
# two polynomials added up to 5.5 ulp; evaluated in float64 the result is within 1.6 ulp of
# erf (every float32 of [-6, 6] checked), at 2x the cost of float32 arithmetic (still
# vectorised: 1 ns an element, torch's Sleef erff 0.9-1.3 on this VM, one thread).
_EA1, _EA3, _EA5, _EA7, _EA9, _EA11, _EA13 = (
    -1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04, -5.69250639462346e-05,
    -2.10102402082508e-06, 2.77068142495902e-08, -2.72614225801306e-10)
_EB0, _EB2, _EB4, _EB6, _EB8 = (-1.42647390514189e-02, -7.37332916720468e-03,
                                -1.68282697438203e-03, -2.13374055278905e-04,
                                -1.45660718464996e-05)


@register_jitable(fastmath=_FMA, error_model="numpy")
def _erf32(x):
    d = np.float64(x)
    d = _where(d > -4.0, d, -4.0)  # (a NaN becomes -4.0 here, and is restored below)
    d = _where(d < 4.0, d, 4.0)
    z = d * d
    p = ((((((_EA13 * z + _EA11) * z + _EA9) * z + _EA7) * z + _EA5) * z + _EA3) * z + _EA1) * d
    q = (((_EB8 * z + _EB6) * z + _EB4) * z + _EB2) * z + _EB0
    return _where(x == x, np.float32(p / q), x)


erf = _shared("erf", "The error function.", host=math.erf, py=_keeping_type(math.erf),
              fast=_erf32)


@intrinsic
def _bits(typingctx, x):
    """The IEEE-754 bits of a float32 as an int32, of a float64 as an int64."""
    to = {types.float32: types.int32, types.float64: types.int64}.get(x)
    if to is None:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(to.bitwidth))

    return to(x), codegen


_SQRTHF32, _LOG_C = np.float32(0.707106781186547524), tuple(np.float32(c) for c in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_L0, _L1, _L2, _L3, _L4, _L5, _L6, _L7, _L8 = _LOG_C
_TINY32, _TWO23 = np.float32(1.17549435e-38), np.float32(8388608.0)
_INF32, _NAN32 = np.float32(np.inf), np.float32(np.nan)


@register_jitable(fastmath=_FMA)
def _log32(x):
    """Cephes logf: x = m 2^e with m in [sqrt(1/2), sqrt 2), log(m) by a degree-9 polynomial
    in m - 1, plus e ln 2 in two parts; denormals are scaled by 2^23 first. Within 1 ulp;
    0 gives -inf, negatives NaN, inf and NaN themselves."""
    denormal = x < _TINY32
    y = _where(denormal, x * _TWO23, x)
    bits = _bits(y)
    e = np.float32(((bits >> np.int32(23)) & np.int32(0xFF)) - np.int32(126))
    e = _where(denormal, e - np.float32(23.0), e)
    m = _float_from_bits(np.int32((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000)))
    low = m < _SQRTHF32
    e = _where(low, e - _ONE32, e)
    m = _where(low, m + m - _ONE32, m - _ONE32)
    z = m * m
    p = ((((((((_L0 * m + _L1) * m + _L2) * m + _L3) * m + _L4) * m + _L5) * m + _L6) * m + _L7)
         * m + _L8) * m * z
    r = m + (p - _HALF32 * z + e * _LN2LO32) + e * _LN2HI32
    r = _where(x == _INF32, x, r)
    r = _where(x == np.float32(0.0), -_INF32, r)
    return _where(x >= np.float32(0.0), r, _NAN32 + x)  # (NaN for NaN and negatives)


@register_jitable(fastmath=_FMA)
def _log1p32(x):
    """log(1 + x) from u = 1 + x rounded, plus the first-order correction for that rounding,
    (x - (u - 1)) / u; x itself where u == 1 (keeps -0.0), inf where u is."""
    u = x + _ONE32
    d = u - _ONE32
    r = _log32(u) + (x - d) / _where(u == np.float32(0.0), _ONE32, u)
    r = _where(d == np.float32(0.0), x, r)
    return _where(u == _INF32, u, r)


_E3, _E4, _E5, _E6, _E7 = (np.float32(1 / math.factorial(k)) for k in range(3, 8))


@register_jitable(fastmath=_FMA)
def _expm1_32(x):
    """e^x - 1 as exp is computed (x = k ln2 + r, |r| <= ln2/2), keeping the - 1 exact:
    e^r - 1 = p(r) by Taylor to r^7 (relative error < 2e-8), then 2^k (p + 1) - 1 =
    (p t1 + t1 - 1 / t2) t2 with 2^k = t1 t2 in two halves (as _exp32, so 2^128 cannot
    overflow). x is clamped to [-30, 89], beyond which the result is -1 or inf."""
    xc = _where(x > np.float32(-30.0), x, np.float32(-30.0))
    xc = _where(xc < _HI32, xc, _HI32)
    k = np.floor(xc * _LOG2E32 + _HALF32)
    r = xc - k * _LN2HI32 - k * _LN2LO32
    p = r + r * r * (_HALF32 + r * (_E3 + r * (_E4 + r * (_E5 + r * (_E6 + r * _E7)))))
    ki = np.int32(k)
    half = ki >> np.int32(1)
    t1, t2 = _pow2_32(half), _pow2_32(ki - half)
    y = (p * t1 + (t1 - _ONE32 / t2)) * t2
    # x itself where |x| < 2^-25, whose expm1 rounds to x: keeps -0.0 (p's sum made it +0.0)
    return _where(abs(x) >= np.float32(2.9802322e-8), y, x)  # (NaN: x too)


# fdlibm's log: x = m 2^e with m in [sqrt(1/2), sqrt 2), f = m - 1, s = f / (2 + f), and
# log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)) with R of degree 14; e ln 2 in two parts
_LG1, _LG2, _LG3, _LG4, _LG5, _LG6, _LG7 = (
    6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
    2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
    1.479819860511658591e-01)
_TINY64, _TWO54 = 2.2250738585072014e-308, 18014398509481984.0


@register_jitable(fastmath=_FMA)
def _log64(x):
    """fdlibm's log without branches (within 1 ulp); denormals are scaled by 2^54 first; 0
    gives -inf, negatives NaN, inf and NaN themselves."""
    denormal = x < _TINY64
    y = _where(denormal, x * _TWO54, x)
    bits = _bits(y)
    e = ((bits >> np.int64(52)) & np.int64(0x7FF)) - np.int64(1023)
    m = _float_from_bits((bits & np.int64(0x000FFFFFFFFFFFFF)) | np.int64(0x3FF0000000000000))
    high = m > 1.4142135623730951
    k = np.float64(e) + _where(high, 1.0, 0.0) - _where(denormal, 54.0, 0.0)
    f = _where(high, 0.5 * m, m) - 1.0
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    big_r = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7))) + w * (_LG2 + w * (_LG4 + w * _LG6))
    hfsq = 0.5 * f * f
    r = k * _LN2HI - ((hfsq - (s * (hfsq + big_r) + k * _LN2LO)) - f)
    r = _where(x == np.inf, x, r)
    r = _where(x == 0.0, -np.inf, r)
    return _where(x >= 0.0, r, np.nan + x)  # (NaN for NaN and negatives)


log = _shared("log", "Natural logarithm.", fast=_log32, fast64=_log64)
log1p = _shared("log1p", "log(1 + x), exact near 0.", fast=_log1p32)
expm1 = _shared("expm1", "e ** x - 1, exact near 0.", fast=_expm1_32)


# -- sin, cos, tan on the CPU, vectorised (libm's sinf in a loop ran 18x slower than torch's):
# x = k pi/2 + r with |r| <= pi/4 by Cody-Waite reduction, pi/2 split in parts short enough that
# k * part is exact, then polynomials for sin r and cos r: Cephes' sinf/cosf in float32, fdlibm's
# in float64. The reductions serve |x| < 2^19 (beyond, float32's k = rint(x 2/pi) can be one
# off and r outside the polynomials' range: 2.6 ulp) and results not near 0; the kernels hand
# what `trig_by_libm` picks to libm (rare: the test is a vectorised pass over the block).
_INVPIO2, _TRIG_MAX, _QUARTER_PI = 6.36619772367581382433e-01, 524288.0, 0.7853981633974483
# float32: with fused multiply-adds x - k P1 is exact, so three float32 parts carry 72 bits
_INVPIO2_32, _P1_32, _P2_32, _P3_32 = (np.float32(c) for c in (
    0.636619772, 1.5707963705062866, -4.371138828673793e-08, -1.7151245100058819e-15))
_S1_32, _S2_32, _S3_32 = (np.float32(c) for c in (-1.6666654611e-1, 8.3321608736e-3,
                                                   -1.9515295891e-4))
_C1_32, _C2_32, _C3_32 = (np.float32(c) for c in (4.166664568298827e-2, -1.388731625493765e-3,
                                                   2.443315711809948e-5))
# float64: fdlibm's four parts, the first three of at most 32 bits
_PIO2_1, _PIO2_2, _PIO2_3, _PIO2_3T = (1.57079632673412561417e+00, 6.07710050630396597660e-11,
                                       2.02226624871116645580e-21, 8.47842766036889956997e-32)
_S1, _S2, _S3, _S4, _S5, _S6 = (-1.66666666666666324348e-01, 8.33333333332248946124e-03,
                                -1.98412698298579493134e-04, 2.75573137070700676789e-06,
                                -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_C1, _C2, _C3, _C4, _C5, _C6 = (4.16666666666666019037e-02, -1.38888888888741095749e-03,
                                2.48015872894767294178e-05, -2.75573143513906633035e-07,
                                2.08757232129817482790e-09, -1.13596475577881948265e-11)


@register_jitable(fastmath=_FMA)
def _sincos32(x):
    """(sin r, cos r, k & 3) for x = k pi/2 + r, in float32 (sin of -0.0: -0.0, which the
    polynomial's term, +0.0 there, would lose)."""
    k = np.rint(x * _INVPIO2_32)
    r = x - k * _P1_32
    r = r - k * _P2_32
    r = r - k * _P3_32
    z = r * r
    s = _where(x == np.float32(0.0), x, r + r * z * (_S1_32 + z * (_S2_32 + z * _S3_32)))
    c = _ONE32 - _HALF32 * z + z * z * (_C1_32 + z * (_C2_32 + z * _C3_32))
    return s, c, np.int32(_where(abs(k) < np.float32(4194304.0), k, np.float32(0.0))) & 3


@register_jitable(fastmath=_FMA)
def _sincos64(x):
    """(sin r, cos r, k & 3) for x = k pi/2 + r, in float64. r is carried as r + e (the rounding
    of d - k pi/2's second step), as fdlibm's kernels take it: sin within 1 ulp, not 2."""
    d = np.float64(x)
    k = np.rint(d * _INVPIO2)
    a = d - k * _PIO2_1
    b = k * _PIO2_2
    r = a - b
    v = r - a
    e = ((a - (r - v)) - (b + v)) - k * _PIO2_3 - k * _PIO2_3T
    a = r + e
    e = e - (a - r)
    r = a
    z = r * r
    s = r + (r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6))))) + e)
    s = _where(d == 0.0, d, s)  # (the polynomial's term is +0.0 for r = -0.0)
    h = 0.5 * z
    w = 1.0 - h
    c = w + (((1.0 - w) - h) + (z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (
        _C5 + z * _C6))))) - r * e))
    return s, c, np.int64(_where(abs(k) < 4194304.0, k, 0.0)) & 3  # (k of inf, NaN: 0)


def _sincos(x):
    """(sin r, cos r, k & 3) for x = k pi/2 + r, in float32 for float32 x, else float64."""


# _sincos32's x - k P1 is exact only as a fused multiply-add: without FMA float32 takes float64's
_FUSED = _compiles_for("fma")


@overload(_sincos, target="cpu")
def _sincos_cpu(x):
    return (lambda x: _sincos32(x)) if x == types.float32 and _FUSED else \
        (lambda x: _sincos64(x))


@register_jitable
def reduced_sin(x):
    """sin x, where trig_by_libm(x, result) is false."""
    s, c, q = _sincos(x)
    v = _where(q & 1 == 1, c, s)
    return _where(q & 2 == 2, -v, v)


@register_jitable
def reduced_cos(x):
    """cos x, where trig_by_libm(x, result) is false."""
    s, c, q = _sincos(x)
    v = _where(q & 1 == 1, s, c)
    return _where((q + 1) & 2 == 2, -v, v)


@register_jitable
def reduced_tan(x):
    """tan x, where trig_by_libm(x, result) is false."""
    s, c, q = _sincos(x)
    return _where(q & 1 == 1, -c / s, s / c)


@register_jitable
def trig_by_libm(x, y):
    """Whether the reduced sin/cos/tan y of x needs libm: |x| of 2^19 or more (inf and NaN
    too), or |x| beyond pi/4 and |y| below 2^-20 (or, for tan, above 2^20), where r is within
    2^-20 of 0 and the reduction's rounding could reach an ulp of r."""
    a, b = abs(x), abs(y)
    return not a < _TRIG_MAX or (a > _QUARTER_PI and (b < 9.5367431640625e-07 or b > 1048576.0))
