"""Adagrad with learning-rate decay and weight decay: torch's single-tensor update, operation for
operation, so results match torch.optim.Adagrad step for step."""
from ..creation import full_like
from .optimizer import Optimizer, _grad, _step_count


class Adagrad(Optimizer):
    """Scales each element's step by the root of its accumulated squared gradients."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "fused": fused})
        # torch creates the state of every parameter up front (so state_dict() lists them all
        # before the first step), and only lazily for groups added later
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p, group)

    def _init_state(self, state, p, group):
        # torch fills with the constructor's value even where a group sets its own
        state["step"] = _step_count(p, group)
        state["sum"] = full_like(p, self.defaults["initial_accumulator_value"])

    def _step_group(self, group):
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        for p, state in self._with_grads(group):
            step = state["step"].add_(1).item()
            grad = _grad(p, group)
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum = state["sum"]
            state_sum.addcmul_(grad, grad, value=1)
            std = state_sum.sqrt().add_(eps)
            p.addcdiv_(grad, std, value=-clr)
