"""Channel-wise dropout (dropout1d, dropout2d, dropout3d), alpha dropout and feature alpha
dropout, functional forms and modules, as torch's ATen `_dropout_impl`: one mask draw from
jitensor's generator (`rand` >= p keeps, so P(keep) = 1 - p), over the whole input or over
(N, C, 1, ...) for the channel-wise forms, multiplied in (and, for alpha dropout, an offset
added), so the gradient is the mask times its scale. p = 0, eval mode and an empty input
return the input itself; p = 1 multiplies by 0 (alpha dropout included, as torch)."""
import math
import warnings

from ..creation import rand, zeros
from .module import Module

FUNCTIONS = ["alpha_dropout", "dropout1d", "dropout2d", "dropout3d",
             "feature_alpha_dropout"]  # re-exported by nn.functional
__all__ = ["AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]

# -SELU's negative saturation, scale * alpha: where alpha dropout sets a dropped element
_ALPHA = 1.7580993408473766


def _check_p(p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_shape(shape):
    """The mask shape of channel-wise dropout: (N, C, 1, ...), one draw per channel."""
    if len(shape) < 2:
        raise RuntimeError(f"Feature dropout requires at least 2 dimensions in the input, got "
                           f"shape {list(shape)}")
    return tuple(shape[:2]) + (1,) * (len(shape) - 2)


def _dropout(fn, input, p, training, inplace, feature=False, alpha=False, batched=True):
    """torch's _dropout_impl. An unbatched input (batched=False) is masked as if it had a
    batch dim of 1 (its mask (C, 1, ...)), without adding one."""
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else \
            input * zeros((), dtype=input.dtype, device=input.device)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}(): result type Float can't be cast to the desired output "
                           f"type {input.dtype.name} (the mask scales by 1 / (1 - p)); convert "
                           f"the input with .float()")
    shape = tuple(input.shape)
    if feature:
        shape = _feature_shape(shape) if batched else _feature_shape((1,) + shape)[1:]
    keep = (rand(shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    if not alpha:
        noise = keep.div_(1 - p)
        return input.mul_(noise) if inplace else input * noise
    # kept elements become a x + alpha a p, dropped ones -alpha a (1 - p): zero mean and unit
    # variance are kept for inputs that had them (SELU's fixed point)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    offset = (keep - 1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
    noise = keep.mul_(a)
    return input.mul_(noise).add_(offset) if inplace else input * noise + offset


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels input[n, c] (1-d feature maps) of an (N, C, L) or unbatched (C, L)
    input with probability p, scaling the rest by 1 / (1 - p)."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           f"input. Note that dropout1d exists to provide channel-wise dropout "
                           f"on inputs with 1 spatial dimension, a channel dimension, and an "
                           f"optional batch dimension (i.e. 2D or 3D inputs).")
    return _dropout("dropout1d", input, p, training, inplace, feature=True,
                    batched=input.ndim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels input[n, c] of an (N, C, H, W) input with probability p, scaling
    the rest by 1 / (1 - p). As torch, a 3-D input is read as (N, C, L) (with a warning: torch
    means to read it as unbatched (C, H, W) one day), and other ranks warn."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      f"deprecated and will result in an error in a future release. To retain "
                      f"the behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      f"spatial dimensions, a channel dimension, and an optional batch "
                      f"dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout("dropout2d", input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels input[n, c] of an (N, C, D, H, W) or unbatched (C, D, H, W) input
    with probability p, scaling the rest by 1 / (1 - p); other ranks warn (and are read as
    unbatched, as torch)."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is "
                      f"deprecated and will result in an error in a future release. To retain "
                      f"the behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      f"spatial dimensions, a channel dimension, and an optional batch "
                      f"dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _dropout("dropout3d", input, p, training, inplace, feature=True,
                    batched=input.ndim == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance: each element is set to SELU's
    negative saturation with probability p, then all are scaled and shifted back (torch's
    a and b). training is False by default, as torch's."""
    return _dropout("alpha_dropout", input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels input[n, c] (input at least 2-D)."""
    return _dropout("feature_alpha_dropout", input, p, training, inplace, feature=True,
                    alpha=True)


# -- modules -----------------------------------------------------------------------------------
class _DropoutNd(Module):
    fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self).fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    fn = staticmethod(dropout1d)


class Dropout2d(_DropoutNd):
    fn = staticmethod(dropout2d)


class Dropout3d(_DropoutNd):
    fn = staticmethod(dropout3d)


class _AlphaDropoutNd(_DropoutNd):
    def forward(self, input):  # (torch's alpha dropout modules never work in place)
        return type(self).fn(input, self.p, self.training)


class AlphaDropout(_AlphaDropoutNd):
    fn = staticmethod(alpha_dropout)


class FeatureAlphaDropout(_AlphaDropoutNd):
    fn = staticmethod(feature_alpha_dropout)
