"""LayerNorm, RMSNorm, GroupNorm and LocalResponseNorm over functional's layer_norm,
rms_norm, group_norm and local_response_norm; _AffineNorm holds the optional scale and shift
they share with the batch and instance norms."""
from ...creation import empty
from ...ops.norm import as_shape
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


class _AffineNorm(Module):
    """The normalisations' optional scale and shift (LayerNorm, GroupNorm, the batch and
    instance norms): weight (ones) and bias (zeros) of `shape` when affine, bias dropped with
    bias=False; an absent one is registered as None, as torch does, so that state dicts and
    reprs (bias=...) match torch's."""

    def _affine_parameters(self, shape, affine, bias, device, dtype):
        for name, present in (("weight", affine), ("bias", affine and bias)):
            self.register_parameter(name, Parameter(empty(shape, device=device, dtype=dtype))
                                    if present else None)

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)


class LayerNorm(_AffineNorm):
    """Normalises over the trailing dims `normalized_shape`, then scales by weight (ones) and
    shifts by bias (zeros) when elementwise_affine (bias=False: no shift)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = as_shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self._affine_parameters(self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Divides by the root mean square over the trailing dims `normalized_shape` (plus eps:
    by default the machine epsilon of the input's dtype), then scales by weight (ones) when
    elementwise_affine."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = as_shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


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
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
