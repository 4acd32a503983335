"""Fused optimizer steps and gradient clipping: one pass over each parameter (or gradient)
instead of a chain of ops."""
import numpy as np
from numba import carray, njit, prange

from ..scalar import optim as s
from . import narrow
from .kernels import first_small, prange_only, serial, twins
from .vector import as_pointer


@twins(first_small)
@njit(cache=True, parallel=prange_only())
def adam_kernel(p, g, m, v, vmax, hp, maximize, decoupled, amsgrad):
    h = (hp[0], hp[1], hp[2], hp[3], hp[4], hp[5], hp[6], hp[7], hp[8])  # scalars: see s.adam
    n = p.size
    if serial(n):
        for i in range(n):
            p[i], m[i], v[i], top = s.adam(p[i], g[i], m[i], v[i], vmax[i], h, maximize,
                                           decoupled, amsgrad)
            if amsgrad:
                vmax[i] = top
    else:
        for i in prange(n):
            p[i], m[i], v[i], top = s.adam(p[i], g[i], m[i], v[i], vmax[i], h, maximize,
                                           decoupled, amsgrad)
            if amsgrad:
                vmax[i] = top


def adam(p, g, m, v, vmax, hyper, flags):
    """Update C-contiguous buffers p, m, v (and vmax with amsgrad, else pass v) in place from
    the gradient g; `hyper` as `scalar.optim.adam` takes it, flags = (maximize, decoupled weight
    decay, amsgrad)."""
    p, g, m, v, vmax = map(_parts, (p, g, m, v, vmax))
    wide = np.float32 if narrow.is_narrow(p) else p.dtype  # (narrow: the kernel runs float32)
    adam_kernel(p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), vmax.reshape(-1),
                np.array(hyper, wide), *map(bool, flags))


def _parts(a):
    """A complex buffer as the float buffer of its parts: updated as pairs of reals, as torch's
    optimizers do (view_as_real)."""
    return a.view(a.real.dtype) if a.dtype.kind == "c" else a


# -- gradient clipping over all the gradients at once: their buffers passed as addresses --------
@njit(cache=True, fastmath={"reassoc"})
def _squared_norms(addresses, sizes, like, out):
    """out[i] = the sum of squares (in float64) of the sizes[i] elements of like's dtype at
    addresses[i]. Each sum runs on this thread in one order: the same bits at any thread
    count. (reassoc lets LLVM sum over vector lanes.)"""
    for i in range(addresses.size):
        x = carray(as_pointer(addresses[i], like), sizes[i])
        total = 0.0
        for j in range(x.size):
            v = np.float64(x[j])
            total += v * v
        out[i] = total


@njit(cache=True)
def _scale(addresses, sizes, factor):
    """Multiply the sizes[i] elements at addresses[i] (of factor's dtype) by factor, in place."""
    for i in range(addresses.size):
        x = carray(as_pointer(addresses[i], factor), sizes[i])
        for j in range(x.size):
            x[j] *= factor


def _buffers(arrays):
    return (np.array([a.__array_interface__["data"][0] for a in arrays], np.int64),
            np.array([a.size for a in arrays], np.int64))


@narrow.in_float32
def squared_norms(arrays):
    """The float64 sums of squares of C-contiguous float arrays of one dtype."""
    out = np.empty(len(arrays))
    _squared_norms(*_buffers(arrays), arrays[0].dtype.type(0), out)
    return out


@narrow.in_float32
def scale(arrays, factor):
    """Multiply C-contiguous float arrays of one dtype by factor (in their dtype), in place."""
    _scale(*_buffers(arrays), arrays[0].dtype.type(factor))
