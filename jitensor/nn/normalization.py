"""torch.nn's group, instance and local response normalisations: functional forms and modules.

group_norm and instance_norm normalise with the fused layer_norm kernel (ops/norm.py) over a
reshaped view ((N, G, C/G * spatial) and (N, C, spatial)), so they are one pass forward and one
backward; the affine scale and shift are per channel. local_response_norm is torch's own
composition (a sum over a window of channels of the squared input), built from slices."""
import math
import warnings

from ..autograd import no_grad
from ..ops.reduction import var_mean
from ..tensor import Tensor
from . import convolution as C, functional as F
from .layers import _AffineNorm, _BatchNorm
from .module import Module

__all__ = ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "LocalResponseNorm"]
FUNCTIONS = ["group_norm", "instance_norm", "local_response_norm"]  # re-exported by nn.functional


def _per_channel(out, weight, bias):
    """out * weight + bias, weight and bias (C,) along dim 1 (either may be None)."""
    along = [1, out.shape[1]] + [1] * (out.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(along)
    if bias is not None:
        out = out + bias.reshape(along)
    return out


def _check_floating(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}(): not implemented for {input.dtype.name} input; convert it "
                           f"with .float()")


def _check_channels(fn, name, t, c, input):
    if t is not None and (t.numel() != c or t.device != input.device):
        raise RuntimeError(f"{fn}(): expected {name} to hold {c} elements (one per channel) on "
                           f"{input.device}, got {t.numel()} on {t.device}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each group of num_groups' channels of each sample (over the group's channels
    and all spatial positions: biased variance), then scale and shift per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[:2]
    if not isinstance(num_groups, int) or num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    spatial = math.prod(input.shape[2:])
    if n * c // num_groups * spatial == 1:  # (torch's _verify_batch_size)
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {[n * c // num_groups, num_groups, *input.shape[2:]]}")
    _check_floating("group_norm", input)
    for name, t in (("weight", weight), ("bias", bias)):
        _check_channels("group_norm", name, t, c, input)
    per_group = c // num_groups * spatial
    out = F.layer_norm(input.reshape(n, num_groups, per_group), (per_group,), eps=eps)
    return _per_channel(out.reshape(input.shape), weight, bias)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalise each channel of each sample over its spatial positions (use_input_stats), or
    by running_mean and running_var (as batch_norm in eval mode); then scale and shift per
    channel. With use_input_stats, running_mean and running_var (when given) are updated in
    place as torch does: blended by momentum with the mean over the batch of each sample's
    mean and unbiased variance."""
    if input.ndim < 2:
        raise RuntimeError(f"instance_norm(): expected an input (N, C, ...) of at least 2 "
                           f"dims, got {input.ndim}-D")
    if use_input_stats:
        if math.prod(input.shape[2:]) == 1:  # (torch's _verify_spatial_size)
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape}")
    n, c = input.shape[:2]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_channels("instance_norm", name, t, c, input)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        return C.batch_norm(input, running_mean, running_var, weight, bias, False, momentum,
                            eps)
    _check_floating("instance_norm", input)
    spatial = math.prod(input.shape[2:])
    flat = input.reshape(n, c, spatial)
    out = F.layer_norm(flat, (spatial,), eps=eps).reshape(input.shape)
    if (running_mean is not None or running_var is not None) and n:
        with no_grad():
            var, mean = var_mean(flat.detach(), dim=2, correction=1)
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.mean(0).to(running_mean.dtype) *
                                                     momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(var.mean(0).to(running_var.dtype) *
                                                    momentum)
    return _per_channel(out, weight, bias)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of input^2 over `size` neighbouring channels) ** beta, the
    window zero-padded by size // 2 before and (size - 1) // 2 after (torch's formula)."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         f"dimensions)")
    if not input.numel():
        return input
    c = input.shape[1]
    squares = F.pad(input * input, [0, 0] * (input.ndim - 2) + [size // 2, (size - 1) // 2])
    total = squares.narrow(1, 0, c)
    for i in range(1, size):
        total = total + squares.narrow(1, i, c)
    return input / (total / size * alpha + k).pow(beta)


# -- modules ---------------------------------------------------------------------------------
class GroupNorm(_AffineNorm):
    """group_norm with weight (ones) and bias (zeros) of num_channels when affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, \
            eps, affine
        self._affine_parameters(num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class _InstanceNorm(_BatchNorm):
    """InstanceNorm1d/2d/3d: batch norm's parameters and buffers (torch's names, state_dict
    and repr) with instance_norm's defaults (affine=False, track_running_stats=False); an
    input without a batch dim gets one for the call. The running statistics are used in eval
    mode only when tracked (num_batches_tracked is kept but never counted, as in torch)."""

    _unbatched = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):
        dims = (self._unbatched, self._unbatched + 1)
        if input.ndim not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.ndim}D "
                             f"input)")
        feature = input.ndim - self._unbatched
        if input.shape[feature] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature]}.")
            warnings.warn(f"input's size at dim={feature} does not match num_features. You "
                          f"can silence this warning by not passing in num_features, which is "
                          f"not used because affine=False", stacklevel=2)
        batched = input.unsqueeze(0) if input.ndim == self._unbatched else input
        out = instance_norm(batched, self.running_mean, self.running_var, self.weight,
                            self.bias, self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if input.ndim == self._unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _unbatched = 2


class InstanceNorm2d(_InstanceNorm):
    _unbatched = 3


class InstanceNorm3d(_InstanceNorm):
    _unbatched = 4


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

