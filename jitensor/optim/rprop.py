"""Rprop (resilient backpropagation): each element moves by its own step size, grown while its
gradient keeps its sign and shrunk when the sign flips; only the gradient's sign is used.
torch's single-tensor update, operation for operation, so results match torch.optim.Rprop step
for step."""
from ..creation import full_like, zeros_like
from .optimizer import Optimizer, _grad, _step_count


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "capturable": capturable})

    def _init_state(self, state, p, group):
        state["step"] = _step_count(p, group)
        state["prev"] = zeros_like(p)
        state["step_size"] = full_like(p.grad, group["lr"])

    def _step_group(self, group):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p, state in self._with_grads(group):
            state["step"].add_(1)
            grad = _grad(p, group)
            prev, step_size = state["prev"], state["step_size"]
            # each step size's factor; filled in torch's order, so a NaN product stays NaN
            factor = grad.mul(prev).sign()
            factor.masked_fill_(factor.gt(0), etaplus)
            factor.masked_fill_(factor.lt(0), etaminus)
            factor.masked_fill_(factor.eq(0), 1)
            step_size.mul_(factor).clamp_(step_size_min, step_size_max)
            # where the sign flipped: no move now, and a zero `prev`, so that next step leaves
            # the step size as it is
            grad = grad.masked_fill(factor.eq(etaminus), 0)
            p.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)
