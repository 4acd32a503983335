"""jitensor.optim.swa_utils: torch.optim.swa_utils' weight averaging. AveragedModel keeps a
running average (SWA: equal weights; EMA: exponential) of a model's parameters, and optionally
of its buffers; update_bn recomputes BatchNorm statistics for averaged weights; SWALR anneals
the learning rate to a constant for the averaging phase. Same formulas, in the same order of
operations, as torch's (on the CPU), so the averages match torch's."""
import itertools
import math
from copy import deepcopy

from ..autograd import no_grad
from ..creation import tensor
from ..dtypes import int64
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.instancenorm import _InstanceNorm
from ..nn.modules.module import Module
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _format_param, _warn_get_lr_called_within_step

__all__ = ["SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         f"range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA over lists of tensors: ema <- decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            pairs = zip(ema_param_list, current_param_list, strict=True)
            if ema_param_list[0].is_floating_point():
                for p_ema, p_model in pairs:
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in pairs:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place equal-weight running average over lists of tensors, `num_averaged` models
    averaged so far."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            pairs = zip(averaged_param_list, current_param_list, strict=True)
            if averaged_param_list[0].is_floating_point():
                # torch computes the weight as a tensor when the count is one (so rounded to
                # the default dtype), then passes it on as a number
                weight = float(1 / (num_averaged + 1))
                for p_avg, p_model in pairs:
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in pairs:
                    diff = p_model - p_avg
                    if isinstance(num_averaged, Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA of one tensor, returned: decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The equal-weight running average of one tensor, returned."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(averaged, current):
    """{(device, dtype): (averaged tensors, current tensors)}, keyed by the averaged tensors,
    in order: what a list averaging function is given at a time, as in torch."""
    groups = {}
    for p_avg, p_model in zip(averaged, current, strict=True):
        pair = groups.setdefault((p_avg.device, p_avg.dtype), ([], []))
        pair[0].append(p_avg)
        pair[1].append(p_model)
    return groups


class AveragedModel(Module):
    """A copy of `model` (on `device` if given) whose parameters (and, with `use_buffers`, its
    buffers) `update_parameters(model)` averages with `model`'s: the first call copies them,
    later ones apply `avg_fn` (one tensor at a time, returning the new average) or
    `multi_avg_fn` (lists of tensors, in place); neither means an equal-weight average (SWA).
    Without `use_buffers` the buffers are copied from `model` each time. `n_averaged` (a
    buffer) counts the updates."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(self_param, model_param, strict=False):
            p_model_ = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model_)
            if copy_param:
                p_avg.detach().copy_(p_model_)

        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups = _group_by_device_and_dtype(averaged, current)
                for (device, _), (avg_list, model_list) in groups.items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avg_list, model_list, n_averaged)
                    elif device.type == "cuda":
                        # torch's default on devices with foreach kernels: lerp in place
                        get_swa_multi_avg_fn()(avg_list, model_list, n_averaged)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_avg, p_model in zip(avg_list, model_list, strict=True):
                            p_avg.copy_(avg_fn(p_avg, p_model, n_averaged))
            else:
                for p_avg, p_model in zip(averaged, current, strict=True):
                    n_averaged = self.n_averaged.to(p_avg.device)
                    p_avg.copy_(self.avg_fn(p_avg, p_model, n_averaged))

        if not self.use_buffers:
            # the buffers (BatchNorm statistics, ...) follow the model as they are
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute the running statistics of `model`'s BatchNorm layers with one pass over
    `loader` (batches: tensors, or lists/tuples whose first element is the input), each layer
    averaging over all batches with equal weight (momentum None for the pass)."""
    momenta = {}
    for module in model.modules():
        # jitensor's InstanceNorm is a _BatchNorm subclass; torch's is not, and is left alone
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its current value to `swa_lr` (one value, or one
    per group) over `anneal_epochs` epochs, by cosine ("cos") or linearly ("linear"), then
    holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        # the schedule is recursive: recover the learning rate the annealing started from
        # (the previous step's alpha undone), then apply this step's alpha to it
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def state_dict(self):
        """Every attribute but the optimizer and the annealing function (a function does not
        pickle; `_anneal_strategy` names it)."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
