"""Adafactor (torch.optim.Adafactor): second moments factored into row and column means along a
parameter's last two dims (a full one for vectors and scalars), a relative step size, update
clipping and decoupled weight decay. torch's single-tensor update, operation for operation, so
results match torch's step for step; `foreach` is kept in the groups as torch keeps it (its
foreach kernels compute the same update)."""
from .. import dtypes
from ..creation import zeros, zeros_like
from ..ops.reduction import norm
from ..tensor import Tensor, preserve_format
from .optimizer import Optimizer, _scalar_state


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize})

    def _init_state(self, state, p, group):
        # the step on the CPU (float32, or float64 under that default dtype), as torch
        state["step"] = _scalar_state(0.0, "cpu")
        grad = p.grad
        if grad.dim() > 1:
            # the variance's row factor (its mean over the last dim) and column factor (over
            # the one before)
            row_shape, col_shape = list(grad.shape), list(grad.shape)
            row_shape[-1] = col_shape[-2] = 1
            state["row_var"] = zeros(row_shape, dtype=grad.dtype, device=grad.device)
            state["col_var"] = zeros(col_shape, dtype=grad.dtype, device=grad.device)
        else:
            state["variance"] = zeros_like(grad, memory_format=preserve_format)

    def _with_grads(self, group):
        for p in group["params"]:
            if p.grad is not None and p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
        return super()._with_grads(group)

    def _step_group(self, group):
        d, beta2_decay, weight_decay = group["d"], group["beta2_decay"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        lr = group["lr"]
        lr = lr.item() if isinstance(lr, Tensor) else lr
        for p, state in self._with_grads(group):
            grad = -p.grad if group["maximize"] else p.grad
            if eps1 is None:
                # as torch: the first parameter's dtype sets it for the rest of the group
                eps1 = dtypes.finfo(p.dtype).eps
            step = state["step"].add_(1).item()
            one_minus_beta2 = step ** beta2_decay
            rho = min(lr, 1 / (step ** 0.5))
            # a Python division, as torch's: a parameter with no elements raises
            # ZeroDivisionError there too
            alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
            if weight_decay != 0:
                p.mul_(1 - lr * weight_decay)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                # (g * g).mean over a dim, as torch computes it: the norm squared over the size
                row_var.lerp_(norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1)),
                              one_minus_beta2)
                col_var.lerp_(norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2)),
                              one_minus_beta2)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
            else:
                variance = state["variance"]
                variance.lerp_(grad * grad, one_minus_beta2)
                var_estimate = variance.clone()
            # eps1 squared: the square root below brings it back to eps1's magnitude
            update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
            denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
            p.add_(update, alpha=-alpha / denom)

    def load_state_dict(self, state_dict):
        """As the base's, then what torch's `__setstate__` adds: `foreach` in every group and a
        tensor step counter where the saved one was a number."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                state = self.state.get(p)
                if state and not isinstance(state["step"], Tensor):
                    state["step"] = _scalar_state(float(state["step"]), "cpu")
