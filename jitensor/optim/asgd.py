"""Averaged SGD: SGD with a decaying step size that also keeps a running average of the
iterates (`ax`) from step `t0` on. torch's single-tensor update, operation for operation, so
results match torch.optim.ASGD step for step."""
from ..creation import tensor, zeros_like
from .optimizer import Optimizer, _grad, _scalar_state


class ASGD(Optimizer):
    _complex_params = True

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _init_state(self, state, p, group):
        # torch keeps these scalars on the parameter's device, `capturable` or not; the step
        # size `eta` and averaging weight `mu` are rounded to their dtype, as there
        state["step"] = _scalar_state(0.0, p.device)
        state["eta"] = _scalar_state(group["lr"], p.device)
        state["mu"] = _scalar_state(1.0, p.device)
        state["ax"] = zeros_like(p)

    def _step_group(self, group):
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        for p, state in self._with_grads(group):
            step = state["step"].add_(1).item()
            grad = _grad(p, group)
            eta, mu = state["eta"].item(), state["mu"].item()
            p.mul_(1 - lambd * eta).add_(grad, alpha=-eta)
            ax = state["ax"]
            if mu != 1:
                ax.add_(p.sub(ax).mul_(mu))
            else:
                ax.copy_(p)
            # as torch: each new value a tensor of the default dtype first, so rounded to it
            # even where the state is wider (loaded for a float64 parameter)
            state["eta"].copy_(tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            state["mu"].copy_(tensor(1 / max(1, step - t0)))
