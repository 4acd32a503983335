"""Scalar definitions for the reductions, shared by the CPU and CUDA targets.

A reduction folds per-element *states* with one associative `merge` per op, and `finalize`
turns the state of a whole reduced range into the output value. A state is the triple
(v, w, k): v in the accumulator type (`acc_dtype`: bool, int64 or float64), w a float64 and k
an int64, holding, by op:

    SUM MEAN PROD MAX MIN ALL ANY   v: the running value   w: (float sums) the rounding error
                                                           the merges lost   k: the count
    ARGMAX ARGMIN                   v: the best value      k: its index
    VAR STD                         v: the mean   w: the sum of squared deviations   k: the count
    LSE (logsumexp)                 v: the max    w: the sum of exp(x - shift(max))

`lift` makes the state of one element, so a kernel may merge element by element (vectorised
across columns) or merge the states of whole blocks it computed faster; blocks merge in order,
since for ARGMAX/ARGMIN the earlier index wins ties. Kernels call these with a constant op
(the CPU kernels are compiled per op; the CUDA ones spell out their hot loops once per op),
which LLVM folds: a switch left inside a loop keeps it from vectorising."""

import functools

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable

from . import libm

SUM, MEAN, PROD, MAX, MIN, ALL, ANY, ARGMAX, ARGMIN, VAR, STD, LSE = range(12)
SOFTMAX, LOG_SOFTMAX, CUMSUM = 12, 13, 14  # ops whose output has the input's shape
NAMES = ("sum", "mean", "prod", "max", "min", "all", "any", "argmax", "argmin", "var", "std",
         "logsumexp", "softmax", "log_softmax", "cumsum")  # by op code


# -- intrinsics ------------------------------------------------------------------------------------
def _extremum(builder, ty, args, name, pred):
    """llvm.maximum/llvm.minimum for floats: NaN wins, and the loop vectoriser turns a fold of
    them into a vector reduction (a compare-select written in Python stays scalar). Integers
    and bools: a compare-select."""
    x, y = args
    if isinstance(ty, types.Float):
        fnty = ir.FunctionType(x.type, [x.type, x.type])
        fn = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.{name}.f{ty.bitwidth}")
        return builder.call(fn, [x, y])
    signed = isinstance(ty, types.Integer) and ty.signed
    cmp = builder.icmp_signed if signed else builder.icmp_unsigned
    return builder.select(cmp(pred, x, y), x, y)


@intrinsic
def _maximum(typingctx, a, b):
    if a != b:
        return None
    return a(a, b), lambda context, builder, sig, args: _extremum(builder, a, args, "maximum", ">")


@intrinsic
def _minimum(typingctx, a, b):
    if a != b:
        return None
    return a(a, b), lambda context, builder, sig, args: _extremum(builder, a, args, "minimum", "<")


@intrinsic
def _cast_like(typingctx, x, like):
    to = types.unliteral(like)

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], to)

    return to(x, like), codegen


# Python bodies for the CUDA simulator, which runs kernels as plain Python; compiled kernels
# of both targets get the intrinsics.
def maximum(a, b):
    """The larger of two values of one type; NaN if either is NaN (torch.maximum)."""
    return np.maximum(a, b)


def minimum(a, b):
    return np.minimum(a, b)


def cast_like(x, like):
    """`x` converted to the type of `like` as a C cast does (float -> int truncates, anything ->
    bool is `!= 0`). Lets one generic body keep its accumulator's type whatever the op."""
    return np.asarray(like).dtype.type(x)


def _nan_max(a, b):
    return a if a > b or a != a else b


def _nan_min(a, b):
    return a if a < b or a != a else b


# CUDA: a compare-select. NVVM leaves llvm.maximum/minimum as calls of undefined functions,
# which the PTX assembler then rejects (measured on the H200).
overload(maximum, target="cpu")(lambda a, b: lambda a, b: _maximum(a, b))
overload(minimum, target="cpu")(lambda a, b: lambda a, b: _minimum(a, b))
overload(maximum, target="cuda")(lambda a, b: _nan_max if a == b else None)
overload(minimum, target="cuda")(lambda a, b: _nan_min if a == b else None)
overload(cast_like)(lambda x, like: lambda x, like: _cast_like(x, like))


exp = libm.exp  # the vectorisable one on the CPU (kernels/scalar/libm.py)


def is_float(x):
    """Whether x is a float, known when the kernel compiles (so LLVM drops the other branch)."""
    return isinstance(x, (float, np.floating))


@overload(is_float)
def _is_float(x):
    flag = isinstance(x, types.Float)
    return lambda x: flag


def is_float64(x):
    return isinstance(x, float) and not isinstance(x, np.float32)


@overload(is_float64)
def _is_float64(x):
    flag = x == types.float64
    return lambda x: flag


def to_float(x):
    """x as a float: float32 stays float32 (twice the vector lanes of float64), all else float64."""
    return np.float64(x)


@overload(to_float)
def _to_float(x):
    if x == types.float32:
        return lambda x: x
    return lambda x: np.float64(x)


@register_jitable
def shift(m):
    """The offset logsumexp subtracts before exp: the max itself when finite, else 0 (then
    all -inf sums to log(0) = -inf, any +inf to inf and NaN stays NaN, as in torch)."""
    m = np.float64(m)
    return m if m - m == 0.0 else 0.0


# -- one definition per op: combine, lift, merge, finalize --------------------------------------
@register_jitable(fastmath={"reassoc"})
def combine(op, acc, x):
    """acc (op) x for the folding ops, in acc's type; x is converted to it first, as torch
    converts the input to the result dtype (ALL/ANY test x itself against zero)."""
    if op == ALL:
        return cast_like((acc != 0) & (x != 0), acc)
    if op == ANY:
        return cast_like((acc != 0) | (x != 0), acc)
    x = cast_like(x, acc)
    if op == PROD:
        return cast_like(acc * x, acc)
    if op == MAX or op == ARGMAX or op == LSE:
        return maximum(acc, x)
    if op == MIN or op == ARGMIN:
        return minimum(acc, x)
    return cast_like(acc + x, acc)


@register_jitable
def better(op, x, best):
    """Whether x replaces `best` in ARGMAX/ARGMIN: strictly larger/smaller, or the first NaN."""
    first_nan = (x != x) & (best == best)
    if op == ARGMAX:
        return (x > best) | first_nan
    return (x < best) | first_nan


@register_jitable
def lift(op, x, i, like):
    """The state of the single element x at index i of the reduced range."""
    v = cast_like(x, like)
    if op == LSE:
        return v, _lse_weight(x), np.int64(0)
    return v, 0.0, np.int64(i if op == ARGMAX or op == ARGMIN else 1)


@register_jitable
def _lse_weight(x):
    x = np.float64(x)
    return exp(x - shift(x))


@register_jitable
def merge(op, a, b):
    """The state of range a followed by range b. Each op's rule is its own small function, so
    LLVM inlines the one a loop with a constant op needs and vectorises the loop."""
    if op == ARGMAX or op == ARGMIN:
        return b if better(op, b[0], a[0]) else a
    if op == VAR or op == STD:
        return merge_moments(a, b)
    if op == LSE:
        return merge_lse(a, b)
    v = combine(op, a[0], b[0])
    w = a[1]
    if (op == SUM or op == MEAN) and is_float(v):
        w += b[1] + rounding_error(a[0], b[0], v)
    return v, w, a[2] + b[2]


@register_jitable
def add_compensated(total, error, x):
    """(total + x, error + what that addition lost): Neumaier's running sum, kept exact by
    compiling it without fast-math flags even where it is inlined into a fast-math loop."""
    new = total + x
    return cast_like(new, total), error + rounding_error(total, x, new)


@register_jitable
def rounding_error(a, b, s):
    """What s = fl(a + b) lost (Neumaier's compensation): float sums merge block partials with
    it, so a sum over many blocks is as accurate as one block. 0 once s is inf or NaN."""
    e = (a - s) + b if abs(a) >= abs(b) else (b - s) + a
    return e if e - e == 0.0 else 0.0


@register_jitable
def merge_moments(a, b):
    """Chan et al.'s parallel update of the mean and the sum of squared deviations (NaN once
    the means differ by an infinity: the deviations of an inf are inf - inf)."""
    av, aw, ak = a
    bv, bw, bk = b
    n = ak + bk
    d = np.float64(bv) - np.float64(av)
    f = bk / max(n, 1)
    spread = d * d * ak * f if d - d == 0.0 else d - d
    return cast_like(av + d * f, av), aw + bw + spread, n


@register_jitable
def merge_lse(a, b):
    """Two sums of exponentials, each relative to its own max, re-expressed against the larger."""
    m = maximum(a[0], b[0])
    return m, _rescale(a[1], a[0], m) + _rescale(b[1], b[0], m), np.int64(0)


@register_jitable
def _rescale(w, m, new_m):
    """A sum of exp(x - shift(m)) re-expressed against shift(new_m); an empty sum stays 0
    (exp of the shift difference may overflow when m is -inf)."""
    return 0.0 if w == 0.0 else w * exp(shift(m) - shift(new_m))


@register_jitable
def finalize(op, state, correction):
    """The output value of a whole range's state, in the accumulator's type (`correction` is
    var/std's: the divisor is count - correction, floored at 0 as torch does)."""
    v, w, k = state
    if (op == SUM or op == MEAN) and is_float(v):  # plus the compensation of the merges
        # (never `v += w`: Numba types a variable once, so v would be a float64 for every
        # accumulator and an int64 sum would round to 53 bits)
        return cast_like(v + w if op == SUM else (v + w) / k, v)
    if op == MEAN:
        return cast_like(v / k, v)
    if op == VAR or op == STD:
        var = w / max(k - correction, 0.0)
        return cast_like(libm.sqrt(var) if op == STD else var, v)
    if op == LSE:
        return cast_like(shift(v) + libm.log(w), v)
    return v


def acc_dtype(np_dtype):
    """The accumulator type for results of `np_dtype`: bool, int64, uint64 (whose extremes an
    int64 would compare as negatives) or float64 (host side)."""
    np_dtype = np.dtype(np_dtype)
    kind = np_dtype.kind
    return np.dtype(np.bool_ if kind == "b" else np.float64 if kind == "f" else
                    np.uint64 if np_dtype == np.uint64 else np.int64)


@functools.cache
def fold_start(op, np_dtype):
    """(accumulator NumPy dtype, its identity) of op's fold into results of `np_dtype`, the
    same for every backend; cached: computing them each time was a measurable part of a small
    reduction."""
    acc = np.dtype(np.bool_) if op in (ALL, ANY) else acc_dtype(np_dtype)
    return acc, identity(op, acc)


def identity(op, acc):
    """The value a fold starts from, as a scalar of the NumPy accumulator type `acc`."""
    if op in (MAX, ARGMAX, LSE, MIN, ARGMIN):
        low = op in (MAX, ARGMAX, LSE)
        if acc.kind == "f":
            return acc.type(-np.inf if low else np.inf)
        if acc.kind == "b":
            return acc.type(not low)
        info = np.iinfo(acc)
        return acc.type(info.min if low else info.max)
    return acc.type(op in (PROD, ALL))
