"""torch.nn's remaining activations: softmin, softsign, the shrinkages, prelu, rrelu and glu
(functional forms and modules), and Softmax2d. Each is composed from jitensor's ops, so autograd
differentiates it and it runs on every device; the choices between branches are `where`s, whose
gradient goes to the branch taken only, as torch's hand-written backward formulas do."""
import math

from ..creation import empty, rand
from ..dtypes import float16, float32, float64
from ..ops.elementwise import where
from ..tensor import Tensor
from . import functional as F, init
from .module import Module
from .parameter import Parameter

FUNCTIONS = ["glu", "hardshrink", "prelu", "rrelu", "rrelu_", "softmin", "softshrink",
             "softsign", "tanhshrink"]  # re-exported by nn.functional
__all__ = ["GLU", "Hardshrink", "PReLU", "RReLU", "Softmax2d", "Softmin", "Softshrink",
           "Softsign", "Tanhshrink"]


def _floating(fn, input):
    """torch's shrinkages have float kernels only (an integer input is NotImplementedError)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"{fn}(): not implemented for {input.dtype.name} input; "
                                  f"convert it with .float()")


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along `dim` (torch's legacy choice of dim, with its warning, when None);
    `dtype` converts the input first."""
    if dim is None:
        dim = F._softmax_dim("softmin", input.ndim, _stacklevel)
    return (-input).softmax(dim, dtype=dtype)


def softsign(input):
    """input / (1 + |input|) (an integer input gives the default float dtype, as in torch)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """input - tanh(input)."""
    return input - input.tanh()


_FLOAT_MAX = {float16: 65504.0, float32: 3.4028234663852886e38, float64: 1.7976931348623157e308}


def softshrink(input, lambd=0.5):
    """input - lambd above lambd, input + lambd below -lambd, 0 between; lambd must be at least
    0 (else the two branches overlap)."""
    _floating("softshrink", input)
    if not 0 <= lambd <= _FLOAT_MAX.get(input.dtype, math.inf):
        raise RuntimeError(f"lambda must be in range [0, {_FLOAT_MAX.get(input.dtype):g}] for "
                           f"input dtype {input.dtype.name}, but found {lambd}")
    # (between the two, input * 0, as torch: NaN stays NaN, and -0 stays signed)
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, input * 0))


def hardshrink(input, lambd=0.5):
    """0 where -lambd <= input <= lambd, else input (NaN included); any lambd, as torch: a
    negative one keeps every element."""
    _floating("hardshrink", input)
    return where((input >= -lambd) & (input <= lambd), 0.0, input)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), where `weight` holds one slope (a scalar or one element)
    or one per channel (dim 1 of input; a 1-D input has one channel); weight gets the gradient
    summed over the elements each slope served."""
    if not isinstance(weight, Tensor) or not isinstance(input, Tensor):
        raise TypeError(f"prelu(): arguments 'input' and 'weight' must be Tensors, got "
                        f"{type(input).__name__} and {type(weight).__name__}")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype.name} and "
                           f"{weight.dtype.name}; convert weight with .to(input.dtype)")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() == 1:
        slope = weight.reshape(())  # (a (1,) weight must not add a dim to a 0-d input)
    elif weight.numel() == channels:
        slope = weight.reshape([channels] + [1] * (input.ndim - 2))
    else:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = {channels}.")
    return where(input > 0, input, slope * input)


def _check_bounds(lower, upper):
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound, got "
                           f"lower={lower} and upper={upper}")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: while training, each element x <= 0 is multiplied by its own
    slope drawn from U(lower, upper) (from jitensor's generator), the rest kept; otherwise a
    leaky_relu of slope (lower + upper) / 2. The gradient is the slope each element used."""
    _check_bounds(lower, upper)
    if not training:
        return F.leaky_relu(input, (lower + upper) / 2, inplace)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"rrelu(): not implemented for {input.dtype.name} input; "
                                  f"convert it with .float()")
    drawn = rand(input.shape, dtype=input.dtype, device=input.device) * (upper - lower) + lower
    slope = where(input <= 0, drawn, 1.0)  # (torch draws a slope for x <= 0, 0 included)
    return input.mul_(slope) if inplace else input * slope


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu written into input."""
    return rrelu(input, lower, upper, training, inplace=True)


def glu(input, dim=-1):
    """The gated linear unit a * sigmoid(b), where a and b are the two halves of input along
    `dim` (whose size must be even)."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not -input.ndim <= dim < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-input.ndim}, {input.ndim - 1}], but got {dim})")
    d = dim % input.ndim
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"glu(): not implemented for {input.dtype.name} input; "
                                  f"convert it with .float()")
    half = size // 2
    return input.narrow(d, 0, half) * input.narrow(d, half, half).sigmoid()


# -- modules -----------------------------------------------------------------------------------
class Softmin(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return F.softmax(input, -3, _stacklevel=5)


class Softsign(Module):
    def forward(self, input):
        return softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return tanhshrink(input)


class _Shrink(Module):
    fn = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self).fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(_Shrink):
    fn = staticmethod(softshrink)


class Hardshrink(_Shrink):
    fn = staticmethod(hardshrink)


class PReLU(Module):
    """prelu with a learnable weight of num_parameters slopes (1, or the input's channels),
    each initialised to `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """rrelu: random slopes in U(lower, upper) for x <= 0 while training, their mean in
    eval mode."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                             else "")


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"
