"""The convolution modules: Conv1d/2d/3d and ConvTranspose1d/2d/3d over functional's
conv1d/2d/3d and conv_transpose1d/2d/3d."""
from ...autograd.grad_mode import no_grad
from ...creation import empty
from .. import functional as F
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .linear import _Affine

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvNd(_Affine):
    """Conv1d, Conv2d and Conv3d: weight (out, in / groups, *kernel) and bias drawn as torch draws
    them (kaiming_uniform_(a=sqrt(5)); bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)));
    padding_mode other than 'zeros' pads with F.pad first."""

    _n = 2
    _MODES = ("zeros", "reflect", "replicate", "circular")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        n = self._n
        if not isinstance(groups, int) or groups < 1:
            raise ValueError(f"groups must be a positive integer, got {groups!r}")
        if isinstance(padding, str) and padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             f"{{'valid', 'same'}}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if padding_mode not in self._MODES:
            raise ValueError(f"padding_mode must be one of {self._MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = F._pair(kernel_size, "kernel_size", n), \
            F._pair(stride, "stride", n)
        self.padding = padding if isinstance(padding, str) else F._pair(padding, "padding", n)
        if self.padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        self.dilation, self.padding_mode = F._pair(dilation, "dilation", n), padding_mode
        self._parameters_of((out_channels, in_channels // groups, *self.kernel_size), bias,
                            device, dtype)

    def forward(self, input):
        n = self._n
        fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
        if self.padding_mode == "zeros":
            return fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)
        sides = F._conv_padding(self.padding, self.kernel_size, (1,) * n, self.dilation, n)
        pads = tuple(p for d in reversed(range(n)) for p in sides[2 * d:2 * d + 2])  # last first
        return fn(F.pad(input, pads, self.padding_mode), self.weight, self.bias, self.stride, 0,
                  self.dilation, self.groups)

    def extra_repr(self):
        n = self._n
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * n:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if getattr(self, "output_padding", (0,) * n) != (0,) * n:  # (the transposed ones')
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    _n = 1


class Conv2d(_ConvNd):
    _n = 2


class Conv3d(_ConvNd):
    _n = 3


class _ConvTransposeNd(_Affine):
    """ConvTranspose1d/2d/3d: weight (in, out / groups, *kernel) and bias (out,),
    drawn as torch draws them (kaiming_uniform_(a=sqrt(5)) with fan_in from weight's dim 1, so
    out / groups * kernel elements; bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))). forward's
    output_size picks the output_padding that gives that size."""

    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        n = self._n
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        if not isinstance(groups, int) or groups < 1:
            raise ValueError(f"groups must be a positive integer, got {groups!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} takes int or tuple paddings, not "
                             f"padding={padding!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = F._pair(kernel_size, "kernel_size", n)
        self.stride, self.padding = F._pair(stride, "stride", n), F._pair(padding, "padding", n)
        self.dilation = F._pair(dilation, "dilation", n)
        self.output_padding = F._pair(output_padding, "output_padding", n)
        self.padding_mode = padding_mode
        self.weight = Parameter(empty(in_channels, out_channels // groups, *self.kernel_size,
                                      device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _output_padding(self, input, output_size):
        """output_padding, or the one that gives output_size ((*spatial) or with the
        batch and channel dims), checked against the range of sizes reachable, as torch's."""
        n = self._n
        if output_size is None:
            return self.output_padding
        non_spatial = 2 if input.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must "
                             f"have {n} or {non_spatial + n} elements (got {len(output_size)})")
        spatial = input.shape[non_spatial:]
        low = [(size - 1) * s - 2 * p + d * (k - 1) + 1 for size, s, p, d, k in
               zip(spatial, self.stride, self.padding, self.dilation, self.kernel_size,
                   strict=False)]
        high = [m + s - 1 for m, s in zip(low, self.stride, strict=False)]
        if any(not lo <= size <= hi for size, lo, hi in zip(output_size, low, high, strict=False)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                             f"range from {low} to {high} (for an input of {spatial})")
        return tuple(size - lo for size, lo in zip(output_size, low, strict=False))

    def forward(self, input, output_size=None):
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._n - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding,
                  self._output_padding(input, output_size), self.groups, self.dilation)

    # torch's one repr for both kinds (not super()'s plus a suffix: output_padding stands
    # before groups and bias)
    extra_repr = _ConvNd.extra_repr


class ConvTranspose1d(_ConvTransposeNd):
    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    _n = 3


class _LazyConvXdMixin(LazyModuleMixin):
    """The lazy convolutions: in_channels is the channel dim of the first input (dim 1, or 0
    for an unbatched one)."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if isinstance(self, _ConvTransposeNd):
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            with no_grad():
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._n + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        # no channels and no bias yet: the placeholders below replace them
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose in_channels comes from its first input; it becomes a Conv1d then."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose in_channels comes from its first input; it becomes a Conv2d then."""

    cls_to_become = Conv2d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose in_channels comes from its first input; it becomes a Conv3d then."""

    cls_to_become = Conv3d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose3d
