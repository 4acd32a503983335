"""torch.nn.utils.weight_norm and remove_weight_norm (the forward-pre-hook form, which torch
deprecates for parametrizations.weight_norm): weight = g * v / ||v||, the norm taken over
every dim but `dim` (over the whole tensor when dim is None)."""
import warnings

from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim: the `pow`-norm of v over every dim but `dim`, kept as size-1
    dims; dim=-1 is the norm of the whole tensor (a 0-dim tensor), as torch has it."""
    if dim == -1:
        return v.norm(pow)
    keep = dim % v.dim()
    return v.norm(pow, dim=tuple(d for d in range(v.dim()) if d != keep), keepdim=True)


def _weight_norm(v, g, dim=0):
    """torch._weight_norm: v * (g / norm_except_dim(v, 2, dim))."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v`` before each call."""

    def __init__(self, name, dim):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("torch.nn.utils.weight_norm is deprecated in favor of "
                      "torch.nn.utils.parametrizations.weight_norm.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replace ``module.<name>`` by ``<name>_g`` (its norm over every dim but `dim`; None: the
    whole tensor's) and ``<name>_v`` (its direction), recombined before each forward.
    Returns `module`."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Make ``module.<name>`` a plain parameter again, holding its current value."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
