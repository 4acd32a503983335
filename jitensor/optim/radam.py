"""RAdam (Adam with its adaptive step rectified while the second-moment estimate is young), with
L2 or decoupled weight decay: torch's single-tensor update, operation for operation, so results
match torch.optim.RAdam step for step."""
from ..creation import zeros_like
from .optimizer import Optimizer, _check_adam_args, _grad, _step_count


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize,
                                  "foreach": foreach, "capturable": capturable,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "differentiable": differentiable})

    def _init_state(self, state, p, group):
        state["step"] = _step_count(p, group)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def _step_group(self, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        # the longest the approximated simple moving average can be
        rho_inf = 2 / (1 - beta2) - 1
        for p, state in self._with_grads(group):
            step = state["step"].add_(1).item()
            grad = _grad(p, group)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction2 = 1 - beta2 ** step
            update = exp_avg / (1 - beta1 ** step) * lr
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            # the variance is tractable only past 5 terms; before that, plain momentum SGD
            if rho_t > 5.0:
                # torch evaluates `scalar / tensor` as the tensor's reciprocal times the scalar
                adaptive = exp_avg_sq.sqrt().add_(eps).reciprocal_().mul_(bias_correction2 ** 0.5)
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                update.mul_(adaptive).mul_(rect)
            p.sub_(update)
