"""Fused optimizer steps: one pass over each parameter instead of a chain of ops."""
import numpy as np
from numba import njit, prange

from ..scalar import optim as s
from .kernels import first_small, prange_only, serial, twins


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
    adam_kernel(p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), vmax.reshape(-1),
                np.array(hyper, p.dtype), *map(bool, flags))
