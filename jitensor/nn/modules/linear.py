"""Identity, Linear and LazyLinear (and NonDynamicallyQuantizableLinear, MultiheadAttention's
out_proj); _Affine draws Linear's and the convolutions' weight and bias as torch does."""
import math

from ...autograd.grad_mode import no_grad
from ...creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments, as torch's does."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class _Affine(Module):
    """Linear's and the convolutions' parameters: weight (out, ...) and bias (out,) or none,
    drawn as torch draws them: weight kaiming_uniform_(a=sqrt(5)), bias U(-1/sqrt(fan_in),
    1/sqrt(fan_in))."""

    def _parameters_of(self, shape, bias, device, dtype):
        self.weight = Parameter(empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(shape[0], device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)


class Linear(_Affine):
    """y = x @ weight.T + bias, with weight (out_features, in_features) drawn as torch draws it:
    kaiming_uniform_(a=sqrt(5)) (i.e. U(-1/sqrt(in), 1/sqrt(in))), bias U(-1/sqrt(in), ...)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self._parameters_of((out_features, in_features), bias, device, dtype)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """out_proj's class, named as torch's (its repr and type checks)."""


class Bilinear(Module):
    """y = x1 @ weight[o] @ x2 + bias[o] over functional.bilinear: weight (out, in1, in2) and
    bias (out,) drawn from U(-1/sqrt(in1), 1/sqrt(in1)), as torch draws them."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, device=device,
                                      dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last dim of its first input; it becomes a Linear
    then."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)  # no bias yet: it would be replaced at once
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
