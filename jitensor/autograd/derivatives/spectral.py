"""The rules of ops/spectral.py's transforms: each is linear, so its gradient is its adjoint
applied to g (torch's convention for complex gradients: the conjugate transpose)."""
from ... import creation
from ...ops import complex_ops, shape, spectral
from ._common import rule


@rule("fft_c2c", uses_inputs=False, uses_result=False)
def _c2c(g, result, x, dims, scale, inverse):
    return ((x, spectral.fft_c2c(g, dims, scale, not inverse)),)


@rule("fft_r2c", uses_inputs=False, uses_result=False)
def _r2c(g, result, x, dim, scale):
    n, m = x.shape[dim], g.shape[dim]
    if n > m:  # the outputs r2c leaves out had a zero gradient
        size = list(g.shape)
        size[dim] = n - m
        g = shape.cat([g, creation.zeros(size, dtype=g.dtype, device=g.device)], dim)
    return ((x, complex_ops.real(spectral.fft_c2c(g, (dim,), scale, True))),)


@rule("fft_c2r", uses_inputs=False, uses_result=False)
def _c2r(g, result, x, dim, n, scale):
    # each output k of 1 <= k < n - k stands for its conjugate mirror too: twice the weight
    m = x.shape[dim]
    weight = [1.0] + [2.0] * (m - 1)
    if n % 2 == 0:
        weight[-1] = 1.0
    size = [1] * g.ndim
    size[dim] = m
    w = creation.tensor(weight, dtype=g.dtype, device=g.device).reshape(size)
    return ((x, spectral.fft_r2c(g, dim, scale) * w),)
