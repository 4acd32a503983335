"""RMSprop, plain or centered, with momentum and weight decay: torch's single-tensor update,
operation for operation, so results match torch.optim.RMSprop step for step."""
from ..creation import zeros_like
from .optimizer import Optimizer, _grad, _step_count


class RMSprop(Optimizer):
    """Divides the gradient by a running root mean square of recent gradients; `centered`
    subtracts the running mean first (an estimate of the variance instead of the second
    moment)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                                  "centered": centered, "weight_decay": weight_decay,
                                  "capturable": capturable, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable})

    def _init_state(self, state, p, group):
        state["step"] = _step_count(p, group)
        state["square_avg"] = zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)

    def _step_group(self, group):
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        for p, state in self._with_grads(group):
            state["step"].add_(1)
            grad = _grad(p, group)
            square_avg = state["square_avg"]
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if group["centered"]:
                grad_avg = state["grad_avg"]
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg.add_(eps)
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).addcdiv_(grad, avg)
                p.add_(buf, alpha=-lr)
            else:
                p.addcdiv_(grad, avg, value=-lr)
