"""float16 and bfloat16 on the CPU: stored narrow, computed in float32.

Numba cannot type either dtype on the CPU. A jitensor kernel called with narrow arrays (or
scalars) runs on float32 copies of them instead, and each array it wrote is rounded back into
its narrow memory (NumPy's conversion: round to nearest even, as torch's). So a kernel call is
one op that computes in float32 and rounds its result once, as torch's CPU kernels for these
dtypes do (their `opmath` type is float).

The switch sits in Numba's dispatcher where a call found no compiled signature
(`_compile_for_args`), so calls in other dtypes pay nothing for it. Launchers that compile by
dtype in Python convert where their lookup misses (reductions: `Widen`; the elementwise row
functions; `strided.AnyLayout`; convolution's workers; user kernels); those that hand kernels
raw addresses (attention, recurrent layers, gradient clipping, LAPACK) convert at their entry
(`@in_float32`), and `kernels.context` refuses a narrow array, so none is read as float32
through its address."""
import functools

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import dispatcher
from numba.extending import intrinsic

_FLOAT16 = np.dtype(np.float16)
_ndarray, _float16 = np.ndarray, np.float16


class Widen(Exception):
    """Raised where a launcher finds a narrow dtype it has no kernel for (the miss branch of a
    dtype-keyed lookup); the launcher catches it and runs itself through `call`, so that
    calls in other dtypes pay no check."""


def is_narrow_dtype(d):
    return d is _FLOAT16 or d.kind == "V" and d.name == "bfloat16"


def is_narrow(a):
    """Whether `a` is a float16 or bfloat16 array or scalar (ml_dtypes' bfloat16 is known by
    name: importing it here would slow every `import jitensor`, dtypes.py says)."""
    c = a.__class__
    return is_narrow_dtype(a.dtype) if c is _ndarray else c is _float16 or \
        c.__name__ == "bfloat16"


def any_narrow(args):
    """Whether any of `args` (or of a tuple or list among them) is narrow; on the path of every
    call of a wrapped launcher, so written for speed."""
    for a in args:
        c = a.__class__
        if c is _ndarray:
            d = a.dtype
            if d is _FLOAT16 or d.kind == "V" and d.name == "bfloat16":
                return True
        elif c is tuple or c is list:  # (of arrays, or of ints: a stride)
            for b in a:
                if b.__class__ is _ndarray and is_narrow_dtype(b.dtype):
                    return True
        elif c is _float16 or c is not int and c.__name__ == "bfloat16":
            return True
    return False


# -- the conversions: LLVM's half <-> float (F16C's vcvtph2ps / vcvtps2ph, rounding to nearest
# even) and bfloat16's bit operations, 2-5x NumPy's and ml_dtypes' on 2^20 elements; the same
# bits as theirs (tests/test_half.py compares them with torch's)
@intrinsic
def _half_to_float(typingctx, bits):
    def codegen(context, builder, signature, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
    return types.float32(types.uint16), codegen


@intrinsic
def _float_to_half(typingctx, value):
    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
    return types.uint16(types.float32), codegen


@njit(cache=True, error_model="numpy")
def _widen(bits, half, out):
    """out (float32 words, as uint32) = the float16 (`half`) or bfloat16 values `bits`."""
    if half:
        wide = out.view(np.float32)
        for i in range(bits.size):
            wide[i] = _half_to_float(bits[i])
    else:
        for i in range(bits.size):
            out[i] = np.uint32(bits[i]) << 16


@njit(cache=True, error_model="numpy")
def _narrowed(words, half, bits, rounded, changed):
    """rounded = the float32 `words` rounded to float16 (`half`) or bfloat16, to nearest even;
    changed = where that differs from `bits` (a NaN kept is no change); their count."""
    n = 0
    values = words.view(np.float32)
    for i in range(words.size):
        u = words[i]
        nan = (u & 0x7FFFFFFF) > 0x7F800000
        if half:
            r = _float_to_half(values[i])
            was_nan = (bits[i] & 0x7FFF) > 0x7C00
        else:
            r = np.uint16((u >> 16) | 0x40) if nan else \
                np.uint16((u + 0x7FFF + ((u >> 16) & 1)) >> 16)
            was_nan = (bits[i] & 0x7FFF) > 0x7F80
        rounded[i] = r
        c = r != bits[i] and not (nan and was_nan)
        changed[i] = c
        n += c
    return n


def _wide_copy(a):
    """a's values as a new float32 array of its shape."""
    if not a.flags.c_contiguous:
        return a.astype(np.float32)
    out = np.empty(a.shape, np.uint32)
    _widen(a.reshape(-1).view(np.uint16), a.dtype is _FLOAT16, out.reshape(-1))
    return out.view(np.float32)


def _write(narrow, wide):
    """(narrow, rounded bits, where changed or None for everywhere) for wide's values rounded
    into narrow memory; None when nothing changed."""
    if narrow.flags.c_contiguous and wide.flags.c_contiguous:
        bits, n = narrow.reshape(-1).view(np.uint16), narrow.size
        rounded, changed = np.empty(n, np.uint16), np.empty(n, np.bool_)
        count = _narrowed(wide.reshape(-1).view(np.uint32), narrow.dtype is _FLOAT16, bits,
                          rounded, changed)
        return None if not count else (bits, rounded, None if count == n else changed)
    rounded = wide.astype(narrow.dtype)
    changed = rounded.view(np.uint16) != narrow.view(np.uint16)
    nan = np.isnan(wide)
    if nan.any():  # a NaN kept is not a change (its payload may differ after the round trip)
        changed &= ~(nan & np.isnan(narrow.astype(np.float32)))
    return (narrow, rounded, changed) if changed.any() else None


def call(fn, args, kwargs=None):
    """fn(*args, **kwargs) with every narrow array (also inside a tuple or list argument) and
    narrow scalar replaced by a float32 copy; the arrays fn wrote are rounded back."""
    copies = {}  # id -> (narrow array, float32 copy): an array passed twice is one copy

    def widen(a):
        if a.__class__ in (tuple, list):
            return a.__class__(map(widen, a))
        if not is_narrow(a):
            return a
        if a.__class__ is not np.ndarray:
            return np.float32(a)
        held = copies.get(id(a))
        if held is None:
            held = copies[id(a)] = (a, _wide_copy(a))
        return held[1]

    try:
        result = fn(*map(widen, args), **{k: widen(v) for k, v in (kwargs or {}).items()})
        # every array's writes are found before any is written back: an input that overlaps
        # the output (an in-place op's) must not write its old values over the result
        writes = [w for narrow, wide in copies.values() if narrow.flags.writeable
                  for w in [_write(narrow, wide)] if w is not None]
        for target, rounded, changed in writes:
            np.copyto(target, rounded, where=True if changed is None else changed)
        return result
    finally:  # (widen refers to itself: without this the copies lived until a gc collection)
        copies.clear()


def in_float32(launcher):
    """A launcher that runs `call` on its arguments when any is narrow."""
    @functools.wraps(launcher)
    def wrapper(*args, **kwargs):
        if any_narrow(args) or kwargs and any_narrow(kwargs.values()):
            return call(launcher, args, kwargs)
        return launcher(*args, **kwargs)
    return wrapper


def refuse(a):
    """The error for a narrow array where a kernel would read its address as a wider float's
    (`kernels.context` raises it)."""
    raise TypeError(f"internal: a {a.dtype} buffer reached a kernel that reads addresses; its "
                    f"launcher must convert it (kernels/cpu/narrow.in_float32)")


_compile_for_args = dispatcher._DispatcherBase._compile_for_args


def _compile_or_widen(self, *args, **kws):
    """Numba's compile step for a call without a matching signature; a jitensor kernel called
    with narrow operands gets back the function that runs it on float32 copies (the dispatcher
    calls what this returns with the call's arguments)."""
    if any_narrow(args) and getattr(self.py_func, "__module__", "").startswith("jitensor."):
        return lambda *a: call(self, a)
    return _compile_for_args(self, *args, **kws)


dispatcher._DispatcherBase._compile_for_args = _compile_or_widen
