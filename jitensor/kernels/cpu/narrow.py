"""float16 and bfloat16 on the CPU: stored narrow, computed in float32.

Numba cannot type either dtype on the CPU. A jitensor kernel called with narrow arrays (or
scalars) runs on float32 copies of them instead, and each array it wrote is rounded back into
its narrow memory (NumPy's conversion: round to nearest even, as torch's). So a kernel call is
one op that computes in float32 and rounds its result once, as torch's CPU kernels for these
dtypes do (their `opmath` type is float).

The switch sits in Numba's dispatcher where a call found no compiled signature
(`_compile_for_args`), so calls in other dtypes pay nothing for it. Launchers that hand a kernel
raw addresses instead of arrays (convolution, attention, the fused recurrent layers) convert at
their own entry, through `in_float32`; `kernels.context` refuses narrow arrays, so none reads
narrow memory as float32."""
import functools
import inspect

import numpy as np
from numba.core import dispatcher

_FLOAT16 = np.dtype(np.float16)


def is_narrow(a):
    """Whether `a` is a float16 or bfloat16 array or scalar (ml_dtypes' bfloat16 is known by
    name: importing it here would slow every `import jitensor`, dtypes.py says)."""
    if a.__class__ is np.ndarray:
        d = a.dtype
        return d is _FLOAT16 or d.kind == "V" and d.name == "bfloat16"
    return a.__class__ is np.float16 or a.__class__.__name__ == "bfloat16"


def any_narrow(args):
    for a in args:
        if is_narrow(a) or a.__class__ in (tuple, list) and any(map(is_narrow, a)):
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
        changed &= ~(np.isnan(wide) & np.isnan(narrow.astype(np.float32)))  # NaN stays NaN
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


def launchers_in_float32(*modules):
    """Wrap the public functions of these launcher modules with `in_float32`: theirs pick or
    compile kernels in Python by dtype, or pass kernels addresses."""
    for module in modules:
        for name, f in list(vars(module).items()):
            if not name.startswith("_") and inspect.isfunction(f) and \
                    f.__module__ == module.__name__:
                setattr(module, name, in_float32(f))


def check(arrays):
    """Refuse narrow arrays where a kernel would read their addresses as wider floats."""
    for a in arrays:
        if is_narrow(a):
            raise TypeError(f"internal: a {a.dtype} buffer reached a kernel that reads addresses; "
                            f"its launcher must convert it (kernels/cpu/narrow.in_float32)")


_compile_for_args = dispatcher._DispatcherBase._compile_for_args


def _compile_or_widen(self, *args, **kws):
    """Numba's compile step for a call without a matching signature; a jitensor kernel called
    with narrow operands gets back the function that runs it on float32 copies (the dispatcher
    calls what this returns with the call's arguments)."""
    if any_narrow(args) and getattr(self.py_func, "__module__", "").startswith("jitensor."):
        return lambda *a: call(self, a)
    return _compile_for_args(self, *args, **kws)


dispatcher._DispatcherBase._compile_for_args = _compile_or_widen
