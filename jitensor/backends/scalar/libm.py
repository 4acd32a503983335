"""Math functions for the scalar definitions both targets share: NumPy's on the CPU and in
Python (where NumPy scalars give NaN and inf instead of raising, as the GPU does), `math`'s on
CUDA (numba-cuda types no NumPy ufunc on scalars and maps `math` to libdevice). Each keeps its
argument's float type on both targets."""
import math

import numpy as np
from numba import types
from numba.extending import overload


def _shared(name, doc, np_name=None, cuda_pick=None):
    """A function `name` that calls np.<np_name> on the CPU and, on CUDA, math.<name> or what
    cuda_pick(*argument types) returns."""
    np_fn = getattr(np, np_name or name)

    def fn(*args):
        return np_fn(*args)
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
    no float-keeping rint or trunc."""
    def pick(x):
        from numba.cuda import libdevice
        return getattr(libdevice, name + "f" if x == types.float32 else name)
    return pick


floor = _shared("floor", "Round down, keeping the float type.")
ceil = _shared("ceil", "Round up, keeping the float type.")
sqrt = _shared("sqrt", "Square root.")
exp = _shared("exp", "e ** x (the CPU kernels use their own vectorisable float32 exp).")
expm1 = _shared("expm1", "e ** x - 1, exact near 0.")
log = _shared("log", "Natural logarithm.")
log1p = _shared("log1p", "log(1 + x), exact near 0.")
sin = _shared("sin", "Sine.")
cos = _shared("cos", "Cosine.")
tanh = _shared("tanh", "Hyperbolic tangent.")
fmod = _shared("fmod", "C's fmod of floats: the result takes the dividend's sign.")
atan2 = _shared("atan2", "The angle of (x, y).", np_name="arctan2")
isinf = _shared("isinf", "Whether x is infinite.")
isfinite = _shared("isfinite", "Whether x is finite.")

rint = _shared("rint", "Round half to even, keeping the float type (torch.round).",
               cuda_pick=_libdevice("rint"))
trunc = _shared("trunc", "Round toward zero, keeping the float type.",
                cuda_pick=_libdevice("trunc"))
