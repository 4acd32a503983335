"""Gradient clipping (torch.nn.utils.clip_grad). `foreach` is accepted for torch's signatures;
both settings run the same code: the 2-norm and the scaling of C-contiguous CPU gradients of one
float dtype go through one kernel call each (two ops a gradient cost several times torch's
foreach kernels: docs/design.md), everything else op by op."""
import math
import types
import warnings

import numpy as np

from ... import linalg
from ...autograd import no_grad
from ...creation import tensor as _tensor
from ...kernels.registry import backend
from ...ops.elementwise import clamp
from ...ops.shape import stack
from ...tensor import Tensor


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The p-norm of all `tensors` taken as one vector (the norm of their norms)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _tensor(0.0)
    first_device = tensors[0].device
    arrays = _fused(tensors) if norm_type == 2.0 else None
    if arrays is not None:  # each tensor's norm rounded to its dtype, then the norm of those
        dtype = arrays[0].dtype
        norms = np.sqrt(backend(first_device).optim.squared_norms(arrays)).astype(dtype)
        total = math.sqrt(math.fsum(float(n) ** 2 for n in norms))
        total_norm = _tensor(dtype.type(total), device=first_device)
    else:
        norms = [linalg.vector_norm(t, norm_type).to(first_device) for t in tensors]
        total_norm = linalg.vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and (total_norm.isnan() | total_norm.isinf()).item():
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by min(max_norm / (total_norm + 1e-6), 1), in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    # Multiplying by a clamped coefficient, even when it is 1, avoids a data-dependent branch
    # that would wait for a GPU's result.
    coef = clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
    arrays = _fused(grads)
    if arrays is not None and coef.device == grads[0].device:
        backend(coef.device).optim.scale(arrays, coef.item())
        return
    for g in grads:
        g.mul_(coef.to(g.device))


def _fused(tensors):
    """The tensors' buffers when the fused kernels take them (C-contiguous, writeable CPU
    arrays of one dtype, float32 or float64), else None."""
    arrays = [t._data for t in tensors]
    dtype = arrays[0].dtype
    if dtype not in (np.float32, np.float64) or any(
            a.__class__ is not np.ndarray or a.dtype != dtype or not a.flags.c_contiguous
            or not a.flags.writeable for a in arrays):
        return None
    return arrays


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients so that their total norm is at most max_norm; return that norm
    (before clipping)."""
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)  # a generator is read once, for both passes
    if is_generator and not parameters:
        # stacklevel 3: the caller, past no_grad's wrapper
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                      stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_ (torch's)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient to [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
