"""Optimizer: parameter groups, per-parameter state and torch's state-dict format. Subclasses
update one group at a time in `_step_group`, which runs under no_grad with in-place tensor ops
only (no NumPy), so the same code serves every device.

torch's implementation switches (`foreach`, `fused`, `capturable`) are accepted and kept in the
groups as torch keeps them; they pick among torch's kernels, which compute the same update
(rounded differently in places), so here they only decide where the step counter lives.
`differentiable=True` (autograd through the step itself) is refused: every update here is in
place under no_grad."""
import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict

from .. import dtypes
from ..autograd import enable_grad, no_grad
from ..creation import tensor
from ..nn.modules.module import _zero_grads
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle

_global_pre_hooks = OrderedDict()  # hook(optimizer, args, kwargs) of every optimizer's step
_global_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Call hook(optimizer, args, kwargs) before every optimizer's step; it may return
    (new_args, new_kwargs) for the step."""
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Call hook(optimizer, args, kwargs) after every optimizer's step."""
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _hooked(step):
    """`step` running the step hooks around it (torch's profile_hook_step: the hooks' args
    hold the optimizer first)."""
    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        for hook in itertools.chain(_global_pre_hooks.values(),
                                    self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        out = step(*args, **kwargs)
        for hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                    _global_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class: ``Optimizer(params, defaults)`` where `params` is an iterable of tensors or
    of dicts (parameter groups with their own hyperparameters)."""

    # whether the step updates complex parameters as torch's does (their parts as pairs of
    # reals: elementwise arithmetic, or a fused kernel on the parts' view)
    _complex_params = False

    def __init__(self, params, defaults):
        if isinstance(params, Tensor):
            raise TypeError(f"params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        self.defaults = defaults
        for name in ("step_pre", "step_post", "state_dict_pre", "state_dict_post",
                     "load_state_dict_pre", "load_state_dict_post"):
            setattr(self, f"_optimizer_{name}_hooks", OrderedDict())
        cls = type(self)
        if not getattr(cls.step, "hooked", False):  # (the class's own step, once, as torch)
            cls.step = _hooked(cls.step)
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)
        if defaults.get("fused") and defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def add_param_group(self, param_group):
        """Add a group; options it does not set take the optimizer's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            if p.is_complex() and not self._complex_params:
                raise NotImplementedError(
                    f"{type(self).__name__} does not update complex parameters in jitensor "
                    f"(torch updates their real and imaginary parts as pairs of reals); use "
                    f"Adam, AdamW, SGD or ASGD, or optimize view_as_real(parameter)")
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; they "
                          "are updated once per occurrence", stacklevel=3)
        if any(not set(params).isdisjoint(g["params"]) for g in self.param_groups):
            raise ValueError("some parameters appear in more than one parameter group")
        group = dict(self.defaults)
        group.update(param_group)
        group["params"] = params
        if group.get("differentiable"):
            raise NotImplementedError(
                f"{type(self).__name__}: differentiable=True is not supported (jitensor updates "
                f"parameters in place under no_grad, so the step cannot be differentiated)")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        _zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    def step(self, closure=None):
        """Update every parameter that has a gradient. `closure`, if given, recomputes the loss
        (with grad enabled) before the update; its value is returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    # -- hooks: each registration returns a RemovableHandle ----------------------------------------
    def _register(self, name, hook, prepend=False):
        hooks = getattr(self, f"_optimizer_{name}_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) before each step; it may return (args, kwargs)."""
        return self._register("step_pre", hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) after each step."""
        return self._register("step_post", hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) before state_dict() packs the state."""
        return self._register("state_dict_pre", hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) after state_dict(); it may return a new state dict."""
        return self._register("state_dict_post", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) before load_state_dict(); it may return the dict to
        load instead."""
        return self._register("load_state_dict_pre", hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) after load_state_dict()."""
        return self._register("load_state_dict_post", hook, prepend)

    def _step_group(self, group):
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def _with_grads(self, group):
        """(parameter, state) for each parameter of `group` that has a gradient; a parameter's
        state is made by `_init_state(state, p, group)` at its first step, as torch does."""
        for p in group["params"]:
            if p.grad is not None:
                state = self.state[p]
                if not state:
                    self._init_state(state, p, group)
                yield p, state

    # -- state dicts ----------------------------------------------------------------------------
    def state_dict(self):
        """torch's format: ``{"state": {index: {...}}, "param_groups": [{..., "params":
        [index, ...]}]}``, parameters numbered in group order. The state's tensors are the
        optimizer's own (not copies), as in torch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)] if isinstance(p, Tensor) else p: s for p, s in self.state.items()}
        packed = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, packed)
            packed = packed if result is None else result
        return packed

    def load_state_dict(self, state_dict):
        """Restore what state_dict() returned (from this optimizer or one built the same way):
        the groups' options, and copies of the state's tensors on each parameter's device and,
        for floating parameters, in its dtype (the step counter keeps its own)."""
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            state_dict = state_dict if result is None else result
        saved = copy.deepcopy(state_dict["param_groups"])
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"])
               for g, s in zip(self.param_groups, saved, strict=False)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        group_of = {key: s for s in saved for key in s["params"]}
        params = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved),
                          itertools.chain.from_iterable(g["params"] for g in self.param_groups),
                          strict=False))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            p = params.get(key)
            if p is None:
                state[key] = copy.deepcopy(value)
            else:
                group = group_of[key]
                on_device = group.get("capturable") or group.get("fused")
                state[p] = {k: _cast(v, p, k == "step", on_device) for k, v in value.items()}
        for group, new in zip(self.param_groups, saved, strict=False):
            new["params"] = group["params"]
        self.state, self.param_groups = state, saved
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _cast(value, param, is_step=False, on_device=False):
    """A loaded state value made private to the optimizer, its tensors (also inside lists, as
    LBFGS keeps them) moved to `param`. A step counter keeps its dtype and device, unless the
    group is `capturable` or `fused`, where torch keeps it as float32 on the device."""
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, param) for v in value)
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    if is_step:
        if on_device:
            return value.to(device=param.device, dtype=dtypes.float32, copy=True)
        return value.clone()
    dtype = param.dtype if param.is_floating_point() else None
    return value.to(device=param.device, dtype=dtype, copy=True)


def _scalar_state(value, device, fused=False):
    """A 0-d state tensor as torch makes one: float64 if that is the default dtype, else (and
    always under `fused`) float32."""
    wide = dtypes.get_default_dtype() is dtypes.float64 and not fused
    return tensor(value, dtype=dtypes.float64 if wide else dtypes.float32, device=device)


def _step_count(p, group, value=0.0):
    """A new step counter (or other scalar state) where torch keeps it: on the CPU, so reading
    it costs no device sync; on `p`'s device under `capturable` or `fused`."""
    fused = group.get("fused")
    return _scalar_state(value, p.device if group.get("capturable") or fused else "cpu", fused)


def _check_adam_args(lr, betas, eps, weight_decay):
    """torch's checks, in its order, of the arguments the Adam family shares."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _grad(p, group):
    """`p`'s gradient as the update sees it: negated under `maximize`; with `weight_decay`, plus
    `weight_decay * p` (L2), or under `decoupled_weight_decay` the weights themselves decayed
    by `lr * weight_decay` first (AdamW's way). The order of operations is torch's."""
    grad = -p.grad if group["maximize"] else p.grad
    weight_decay = group.get("weight_decay", 0)
    if weight_decay != 0:
        if group.get("decoupled_weight_decay"):
            p.mul_(1 - group["lr"] * weight_decay)
        else:
            grad = grad.add(p, alpha=weight_decay)
    return grad
