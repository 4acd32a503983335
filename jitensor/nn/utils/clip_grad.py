"""Gradient clipping (torch.nn.utils.clip_grad). `foreach` is accepted for torch's signatures;
jitensor has no separate multi-tensor path, so both settings run the same ops."""
import types
import warnings

from ... import linalg
from ...autograd import no_grad
from ...creation import tensor as _tensor
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
    for g in grads:
        g.mul_(coef.to(g.device))


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
