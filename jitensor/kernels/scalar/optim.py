"""Per-element optimizer updates, shared by the CPU and CUDA kernels.

Each is torch's single-tensor update for one element, operation for operation and in the
parameter's dtype (the caller passes every hyper-parameter already converted to it), so a fused
step matches torch.optim's chain of separate ops to the last bit or nearly so."""
from numba.extending import register_jitable

from . import libm


@register_jitable  # not inline="always": numba-cuda mistypes such inlined calls; LLVM inlines
def lerp(start, end, weight, one):
    """torch.lerp: the form that keeps the result exact at each end of the weight range."""
    return start + weight * (end - start) if weight < 0.5 else \
        end - (end - start) * (one - weight)


@register_jitable  # scalars only: LLVM inlines it; numba's own inlining warns here
def adam(p, g, m, v, vmax, h, maximize, decoupled, amsgrad):
    """One element of Adam/AdamW: returns (p, m, v, vmax). h = (1, 1 - lr * weight_decay,
    1 - beta1, beta2, 1 - beta2, eps, weight_decay, step_size, sqrt(bias_correction2)) as
    scalars of p's dtype, each computed in double precision first as torch does. Kernels pass
    them as scalars, never as an array read per element: loads from an array the loop also
    writes keep LLVM from hoisting the flags' branches and vectorising the loop."""
    one, decay, w1, beta2, w2, eps, wd, step_size, bc2 = h
    g1 = -g if maximize else g
    p1 = p * decay if wd != 0 and decoupled else p
    g2 = g1 + wd * p1 if wd != 0 and not decoupled else g1
    m1 = lerp(m, g2, w1, one)
    v1 = v * beta2 + w2 * g2 * g2
    top = max(vmax, v1) if amsgrad else v1
    return p1 + -step_size * (m1 / (libm.sqrt(top) / bc2 + eps)), m1, v1, top
