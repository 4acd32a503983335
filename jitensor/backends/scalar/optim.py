"""Per-element optimizer updates, shared by the CPU and CUDA kernels.

Each is torch's single-tensor update for one element, operation for operation and in the
parameter's dtype (the caller passes every hyper-parameter already converted to it), so a fused
step matches torch.optim's chain of separate ops to the last bit or nearly so."""
import numpy as np
from numba.extending import register_jitable


@register_jitable(inline="always")
def lerp(start, end, weight, one):
    """torch.lerp: the form that keeps the result exact at each end of the weight range."""
    return start + weight * (end - start) if weight < 0.5 else \
        end - (end - start) * (one - weight)


@register_jitable(inline="always")
def adam(p, g, m, v, vmax, hp, flags):
    """One element of Adam/AdamW: returns (p, m, v, vmax). hp = (1, 1 - lr * weight_decay,
    1 - beta1, beta2, 1 - beta2, eps, weight_decay, step_size, sqrt(bias_correction2)) in p's
    dtype, each computed in double precision first as torch does; flags = (maximize, decoupled
    weight decay, amsgrad)."""
    g = -g if flags[0] else g
    # conditional expressions, not branches: reassigning inside branches of an inlined helper
    # makes numba warn (docs/design.md)
    p = p * hp[1] if hp[6] != 0 and flags[1] else p
    g = g + hp[6] * p if hp[6] != 0 and not flags[1] else g
    m = lerp(m, g, hp[2], hp[0])
    v = v * hp[3] + hp[4] * g * g
    vmax = max(vmax, v) if flags[2] else v
    return p + -hp[7] * (m / (np.sqrt(vmax) / hp[8] + hp[5])), m, v, vmax
