"""Fused optimizer steps on CUDA: one grid-stride pass over each parameter, the same
per-element update as the CPU (kernels/scalar/optim.py)."""
from numba import cuda

from ..scalar import optim as s
from . import driver
from .access import load, store
from .memory import pointer


@driver.jit
def adam_kernel(p, po, g, go, m, mo, v, vo, vm, vmo, n, h0, h1, h2, h3, h4, h5, h6, h7, h8,
                maximize, decoupled, amsgrad):
    i = cuda.grid(1)
    h = (h0, h1, h2, h3, h4, h5, h6, h7, h8)
    while i < n:
        p1, m1, v1, top = s.adam(load(p, po + i), load(g, go + i), load(m, mo + i),
                                 load(v, vo + i), load(vm, vmo + i), h, maximize, decoupled,
                                 amsgrad)
        store(p, po + i, p1)
        store(m, mo + i, m1)
        store(v, vo + i, v1)
        if amsgrad:
            store(vm, vmo + i, top)
        i += cuda.gridsize(1)


def adam(p, g, m, v, vmax, hyper, flags):
    """As the CPU backend's `adam`: C-contiguous DeviceArrays updated in place."""
    if p.size:
        driver.launch_1d(adam_kernel, p.size, *pointer(p), *pointer(g), *pointer(m),
                         *pointer(v), *pointer(vmax), p.size, *(p.dtype.type(x) for x in hyper),
                         *map(bool, flags))
