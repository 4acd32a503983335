"""Views that let one compiled kernel serve every layout.

A kernel over arbitrary strides is compiled per ndim; instead, operands of the same shape are
coalesced (adjacent dims merged where every operand's strides allow) and shown to the kernel as
4-D views, so each dtype needs one strided kernel and most layouts become 1- or 2-D loops."""
import numpy as np
from numba import typeof, types
from numpy.lib.stride_tricks import as_strided

from . import narrow

NDIM = 4


def coalesce(shape, *strides):
    """Drop size-1 dims and merge dim i into i+1 when every operand steps over dim i as one
    block of dim i+1. Returns the merged shape and each operand's merged strides. (On the path
    of every strided copy: plain loops, faster than building tuples per dim.)"""
    sizes, out = [], [[] for _ in strides]
    for i in range(len(shape) - 1, -1, -1):
        n = shape[i]
        if n == 1:
            continue
        if sizes:
            inner = sizes[0]
            for s, o in zip(strides, out, strict=False):
                if s[i] != inner * o[0]:
                    break
            else:  # every operand steps over dim i as one block of the inner dim
                sizes[0] = inner * n
                continue
        sizes.insert(0, n)
        for s, o in zip(strides, out, strict=False):
            o.insert(0, s[i])
    if not sizes:
        return [1], [[0] for _ in strides]
    return sizes, out


def _reshaped(a, shape, strides):
    """`a` as a view of `shape` (its dims merged as coalesce merged them): NumPy's reshape
    makes exactly these views, much faster than as_strided; it copies only when no view
    exists, which coalesce rules out (checked: a copy owns its memory)."""
    v = a.reshape(shape)
    return v if v.base is not None else as_strided(a, shape, strides)


def as_4d(*arrays):
    """Lists of 4-D views of same-shape arrays, one list per slab: a single slab unless more
    than four dims survive coalescing, then one per index of the leading dims."""
    shape, strides = coalesce(arrays[0].shape, *(a.strides for a in arrays))
    extra = len(shape) - NDIM
    if extra <= 0:
        shape = (1,) * -extra + tuple(shape)
        return [[_reshaped(a, shape, [0] * -extra + s)
                 for a, s in zip(arrays, strides, strict=False)]]
    full = [as_strided(a, shape, s) for a, s in zip(arrays, strides, strict=False)]
    return [[f[lead] for f in full] for lead in np.ndindex(*shape[:extra])]


def _any_layout_types(args, dense_out=False):
    """The types `any_layout` compiles for: every array layout "A" (any strides), the first one
    written and the others read-only, all unaligned if one is; with `dense_out`, the first
    typed C-contiguous."""
    aligned = all(a.flags.aligned for a in args if a.__class__ is np.ndarray)
    signature, written = [], False
    for a in args:
        if a.__class__ is np.ndarray:
            layout = "C" if dense_out and not written else "A"
            signature.append(types.Array(typeof(a).dtype, a.ndim, layout, readonly=written,
                                         aligned=aligned))
            written = True
        else:
            signature.append(typeof(a))
    return tuple(signature)


def any_layout(kernel, *args):
    """kernel's build for arguments like `args`, every array typed layout "A" (any strides),
    the first one written and the others read-only: what the elementwise 4-D driver is called
    through. Its 4-D views of broadcast and strided operands come as C, F or A arrays,
    writeable or not, and each mix of those compiled the whole kernel again."""
    return kernel.compile(_any_layout_types(args))


class AnyLayout:
    """A kernel over 4-D views `(out, *operands)`, called through builds that type the operands
    read-only of any layout, and `out` C-contiguous or of any layout: one or two builds per mix
    of dtypes (and NumPy scalar classes), where Numba's dispatcher compiled one per mix of C, F,
    strided and read-only views (a clean test run compiled copy_4d 89 times for 21 dtype pairs).
    A C-typed `out` keeps its stores vectorised. Calling a build skips the dispatcher's typing
    of the arguments; everything else (`py_func`, `signatures`, ...) is the kernel's."""

    def __init__(self, kernel):
        self.kernel, self._builds = kernel, {}

    def __getattr__(self, name):
        return getattr(self.kernel, name)

    def __call__(self, out, *operands):
        key = (out.dtype, out.flags.c_contiguous, out.flags.aligned,
               *[(x.dtype, x.flags.aligned) if x.__class__ is np.ndarray else x.__class__
                 for x in operands])
        build = self._builds.get(key)
        if build is None:
            if narrow.any_narrow((out, *operands)):  # computed in float32
                return narrow.call(self, (out, *operands))
            build = self._builds[key] = self.kernel.compile(
                _any_layout_types((out, *operands), out.flags.c_contiguous))
        return build(out, *operands)
