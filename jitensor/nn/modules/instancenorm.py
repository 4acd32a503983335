"""InstanceNorm1d, InstanceNorm2d and InstanceNorm3d over functional.instance_norm, with
batch norm's parameters and buffers, and their lazy forms."""
import warnings

from .. import functional as F
from .batchnorm import _BatchNorm, _LazyNormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


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
        out = F.instance_norm(batched, self.running_mean, self.running_var, self.weight,
                            self.bias, self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if input.ndim == self._unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _unbatched = 2


class InstanceNorm2d(_InstanceNorm):
    _unbatched = 3


class InstanceNorm3d(_InstanceNorm):
    _unbatched = 4


class _LazyInstanceNorm(_LazyNormBase, _InstanceNorm):
    """(Their defaults are the lazy batch norms', affine=True and track_running_stats=True,
    as torch's.)"""


class LazyInstanceNorm1d(_LazyInstanceNorm):
    """An InstanceNorm1d whose num_features comes from its first input."""

    cls_to_become = InstanceNorm1d
    _unbatched = 2


class LazyInstanceNorm2d(_LazyInstanceNorm):
    """An InstanceNorm2d whose num_features comes from its first input."""

    cls_to_become = InstanceNorm2d
    _unbatched = 3


class LazyInstanceNorm3d(_LazyInstanceNorm):
    """An InstanceNorm3d whose num_features comes from its first input."""

    cls_to_become = InstanceNorm3d
    _unbatched = 4
