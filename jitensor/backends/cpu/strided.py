"""Views that let one compiled kernel serve every layout.

A kernel over arbitrary strides is compiled per ndim; instead, operands of the same shape are
coalesced (adjacent dims merged where every operand's strides allow) and shown to the kernel as
4-D views, so each dtype needs one strided kernel and most layouts become 1- or 2-D loops."""
import numpy as np
from numpy.lib.stride_tricks import as_strided

NDIM = 4


def coalesce(shape, *strides):
    """Drop size-1 dims and merge dim i into i+1 when every operand steps over dim i as one
    block of dim i+1. Returns the merged shape and each operand's merged strides."""
    dims = [(n, *(s[i] for s in strides)) for i, n in enumerate(shape) if n != 1]
    if not dims:
        return [1], [[0] for _ in strides]
    out = [list(dims[-1])]
    for d in reversed(dims[:-1]):
        inner = out[0]
        if all(d[k] == inner[0] * inner[k] for k in range(1, len(d))):
            inner[0] *= d[0]
        else:
            out.insert(0, list(d))
    return [d[0] for d in out], [[d[k] for d in out] for k in range(1, len(out[0]))]


def _reshaped(a, shape, strides):
    """`a` as a view of `shape` (its dims merged as coalesce merged them): NumPy's reshape
    makes exactly these views, 10x faster than as_strided; it copies only when no view
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
        return [[_reshaped(a, shape, [0] * -extra + s) for a, s in zip(arrays, strides)]]
    full = [as_strided(a, shape, s) for a, s in zip(arrays, strides)]
    return [[f[lead] for f in full] for lead in np.ndindex(*shape[:extra])]
