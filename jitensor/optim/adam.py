"""Adam and AdamW: torch's single-tensor update, operation for operation, fused into one kernel
pass per parameter (`kernels/scalar/optim.py`), so results match torch.optim step for step."""
from ..autograd.versions import bump
from ..creation import zeros_like
from ..kernels.registry import backend
from ..tensor import Tensor, contiguous_format
from .optimizer import Optimizer, _check_adam_args, _step_count


class Adam(Optimizer):
    """Adam; `decoupled_weight_decay=True` makes it AdamW (decay applied to the weights, not
    added to the gradient)."""

    _complex_params = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if not (all(isinstance(beta, float) for beta in betas)
                or all(isinstance(beta, Tensor) for beta in betas)):
            raise ValueError("betas must be either both floats or both Tensors")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _step_group(self, group):
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = map(float, group["betas"])
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = _step_count(p, group)
                state["exp_avg"] = zeros_like(p, memory_format=contiguous_format)
                state["exp_avg_sq"] = zeros_like(p, memory_format=contiguous_format)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(p, memory_format=contiguous_format)
            state["step"].add_(1)
            step = state["step"].item()
            # the scalars torch computes in double precision, then rounds to p's dtype
            hyper = (1.0, 1 - lr * weight_decay, 1 - beta1, beta2, 1 - beta2, eps, weight_decay,
                     lr / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5)
            flags = (group["maximize"], group["decoupled_weight_decay"], group["amsgrad"])
            data = p if p.is_contiguous() else p.contiguous()
            v = state["exp_avg_sq"]
            backend(p.device).optim.adam(
                data._data, p.grad.to(p.dtype).contiguous()._data, state["exp_avg"]._data,
                v._data, state.get("max_exp_avg_sq", v)._data, hyper, flags)
            # the in-place writes torch's update counts (the weights' decay, mul_, and
            # addcdiv_), so that a graph that saved p sees it changed, as torch's does
            writes = 1 + bool(flags[1] and weight_decay)
            if data is not p:
                p.copy_(data)  # (one write)
                writes -= 1
            for _ in range(writes):
                bump(p._data)
            bump(state["exp_avg"]._data)
            bump(v._data)
            bump(v._data)
            if flags[2]:
                bump(state["max_exp_avg_sq"]._data)


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
