"""Adamax (Adam with the infinity norm in place of the second moment): torch's single-tensor
update, operation for operation, so results match torch.optim.Adamax step for step."""
from ..creation import zeros_like
from ..ops.elementwise import maximum
from .optimizer import Optimizer, _check_adam_args, _grad, _step_count


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _init_state(self, state, p, group):
        state["step"] = _step_count(p, group)
        state["exp_avg"] = zeros_like(p)
        state["exp_inf"] = zeros_like(p)

    def _step_group(self, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        for p, state in self._with_grads(group):
            step = state["step"].add_(1).item()
            grad = _grad(p, group)
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            exp_avg.lerp_(grad, 1 - beta1)
            maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
            p.addcdiv_(exp_avg, exp_inf, value=-(lr / (1 - beta1 ** step)))
