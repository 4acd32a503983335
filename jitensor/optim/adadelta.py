"""Adadelta: torch's single-tensor update, operation for operation, so results match
torch.optim.Adadelta step for step."""
from ..creation import zeros_like
from .optimizer import Optimizer, _grad, _step_count


class Adadelta(Optimizer):
    """Scales each step by the ratio of running root mean squares of past updates and of
    gradients, so it needs no tuned learning rate (`lr` only scales the result)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize, "capturable": capturable,
                                  "foreach": foreach, "differentiable": differentiable})

    def _init_state(self, state, p, group):
        state["step"] = _step_count(p, group)
        state["square_avg"] = zeros_like(p)
        state["acc_delta"] = zeros_like(p)

    def _step_group(self, group):
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p, state in self._with_grads(group):
            state["step"].add_(1)
            grad = _grad(p, group)
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            p.add_(delta, alpha=-lr)
