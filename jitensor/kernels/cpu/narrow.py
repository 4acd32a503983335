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
from numba.core import dispatcher

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
            held = copies[id(a)] = (a, a.astype(np.float32))
        return held[1]

    result = fn(*map(widen, args), **{k: widen(v) for k, v in (kwargs or {}).items()})
    # every array's writes are found before any is written back: an input that overlaps the
    # output (an in-place op's) must not write its old values over the result
    writes = []
    for narrow, wide in copies.values():
        if not narrow.flags.writeable:
            continue
        rounded = wide.astype(narrow.dtype)
        changed = rounded.view(np.uint16) != narrow.view(np.uint16)
        nan = np.isnan(wide)
        if nan.any():  # a NaN kept is not a change (its payload may differ after the round trip)
            changed &= ~(nan & np.isnan(narrow.astype(np.float32)))
        if changed.any():
            writes.append((narrow, rounded, changed))
    for narrow, rounded, changed in writes:
        np.copyto(narrow, rounded, where=changed)
    return result


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
    (`kernels.context` calls it for arrays of 2-byte floats)."""
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
