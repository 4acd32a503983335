"""Fused optimizer steps: one pass over each parameter instead of a chain of ops."""
import numpy as np
from numba import njit, prange

from ..scalar import optim as s
from .kernels import PARALLEL_MIN


@njit(cache=True, parallel=True)
def adam_kernel(p, g, m, v, vmax, hp, flags):
    n = p.size
    if n < PARALLEL_MIN:
        for i in range(n):
            p[i], m[i], v[i], vmax[i] = s.adam(p[i], g[i], m[i], v[i], vmax[i], hp, flags)
    else:
        for i in prange(n):
            p[i], m[i], v[i], vmax[i] = s.adam(p[i], g[i], m[i], v[i], vmax[i], hp, flags)


def adam(p, g, m, v, vmax, hyper, flags):
    """Update C-contiguous buffers p, m, v (and vmax with amsgrad, else pass v) in place from
    the gradient g; `hyper`, `flags` as `scalar.optim.adam` takes them."""
    adam_kernel(p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), vmax.reshape(-1),
                np.array(hyper, p.dtype), np.array(flags, np.bool_))
