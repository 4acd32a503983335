"""NAdam (Adam with Nesterov momentum and a momentum schedule), with L2 or decoupled weight decay:
torch's single-tensor update, operation for operation, so results match torch.optim.NAdam step
for step."""
from ..creation import zeros_like
from .optimizer import Optimizer, _check_adam_args, _grad, _step_count


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable})

    def _init_state(self, state, p, group):
        state["step"] = _step_count(p, group)
        # the running product of the momentum schedule, a scalar tensor (float32 unless the
        # default dtype is float64) as in torch, which rounds it there every step
        state["mu_product"] = _step_count(p, group, 1.0)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def _step_group(self, group):
        lr, eps, momentum_decay = group["lr"], group["eps"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        for p, state in self._with_grads(group):
            step = state["step"].add_(1).item()
            grad = _grad(p, group)
            # the momentum coefficients of this step and of the next (the Nesterov look-ahead)
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
            mu_product = state["mu_product"].mul_(mu).item()
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(1 - beta2 ** step).sqrt().add_(eps)
            p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
            p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))
