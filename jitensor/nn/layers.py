"""Layers: Linear, Embedding, LayerNorm, RMSNorm, the activations, Dropout, Identity, Flatten,
the convolutions, poolings and batch norms, each a thin Module over `functional` (or
`convolution`) with torch's constructor arguments and repr."""
import math

from ..autograd import no_grad
from ..creation import empty, ones, zeros
from ..dtypes import int64
from ..ops.norm import as_shape
from . import convolution as C, functional as F, init
from .module import Module
from .parameter import Parameter

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "BatchNorm1d",
           "BatchNorm2d", "CELU", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
           "Dropout", "ELU", "Embedding", "Flatten",
           "GELU", "Hardsigmoid", "Hardswish", "Hardtanh", "Identity", "LayerNorm", "LeakyReLU",
           "Linear", "LogSigmoid", "LogSoftmax", "MaxPool1d", "MaxPool2d", "Mish", "RMSNorm",
           "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softplus", "Tanh", "Threshold",
           "Unflatten"]


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


class Embedding(Module):
    """A lookup table: forward(input) gives the rows of weight (num_embeddings, embedding_dim)
    at the positions in input; weight is drawn from N(0, 1) with padding_idx's row zero, as in
    torch (see functional.embedding for max_norm and scale_grad_by_freq)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        if sparse:
            raise RuntimeError("Embedding(sparse=True) asks for sparse gradients, and jitensor "
                               "has no sparse tensors; use sparse=False")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = F._padding_index(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device,
                                          dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:  # (torch asserts)
                raise AssertionError(f"Shape of weight {list(_weight.shape)} does not match "
                                 f"num_embeddings and embedding_dim "
                                 f"{[num_embeddings, embedding_dim]}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        for name, default in (("padding_idx", None), ("max_norm", None), ("norm_type", 2.0),
                              ("scale_grad_by_freq", False), ("sparse", False)):
            value = getattr(self, name)
            if value != default:
                text += f", {name}={value}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is `embeddings` (2-D, used as is: no copy), frozen unless
        freeze=False."""
        if embeddings.ndim != 2:  # (torch asserts)
            raise AssertionError(f"Embeddings parameter is expected to be 2-dimensional, got "
                             f"{embeddings.ndim} dimension(s)")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


def _inplace_repr(module, text=""):
    """torch's extra_repr of an activation: its parameters, then ", inplace=True" if so."""
    flag = "inplace=True" if module.inplace else ""
    return ", ".join(part for part in (text, flag) if part)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class _InPlace(Module):
    """An activation without parameters that may write into its input."""
    fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self).fn(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class SiLU(_InPlace):
    fn = F.silu


class Mish(_InPlace):
    fn = F.mish


class SELU(_InPlace):
    fn = F.selu


class _Unflagged(_InPlace):
    def extra_repr(self):  # (torch's reprs of these show no inplace flag)
        return ""


class Hardsigmoid(_Unflagged):
    fn = F.hardsigmoid


class Hardswish(_Unflagged):
    fn = F.hardswish


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"negative_slope={self.negative_slope}")


class _WithAlpha(Module):
    """elu or celu: an alpha, and may write into its input."""
    fn = None

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return type(self).fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"alpha={self.alpha}")


class ELU(_WithAlpha):
    fn = F.elu


class CELU(_WithAlpha):
    fn = F.celu


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val "
                             f"({max_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"min_val={self.min_val}, max_val={self.max_val}")


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"threshold={self.threshold}, value={self.value}")


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Dropout(Module):
    """Zeroes elements with probability `p` while training (scaling the rest by 1 / (1 - p));
    the identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


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


class Flatten(Module):
    """Merges dims start_dim..end_dim (by default all but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim `dim` into unflattened_size (a tuple or list of ints; one may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise TypeError("Unflatten: a dim named by a string needs named tensors, which "
                            "jitensor does not have; pass the dim's index")
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for i, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of "
                                f"type {type(size).__name__} at pos {i}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# -- convolutions, poolings, batch norm (functions: nn/convolution.py) -----------------------------
class _ConvNd(_Affine):
    """Conv1d and Conv2d: weight (out, in / groups, *kernel) and bias drawn as torch draws
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
        self.kernel_size, self.stride = C._pair(kernel_size, "kernel_size", n), \
            C._pair(stride, "stride", n)
        self.padding = padding if isinstance(padding, str) else C._pair(padding, "padding", n)
        if self.padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        self.dilation, self.padding_mode = C._pair(dilation, "dilation", n), padding_mode
        self._parameters_of((out_channels, in_channels // groups, *self.kernel_size), bias,
                            device, dtype)

    def forward(self, input):
        fn = C.conv2d if self._n == 2 else C.conv1d
        if self.padding_mode == "zeros":
            return fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)
        kernel, dilation = (1,) * (2 - self._n) + self.kernel_size, \
            (1,) * (2 - self._n) + self.dilation
        padding = self.padding if isinstance(self.padding, str) else \
            (0,) * (2 - self._n) + self.padding
        top, bottom, left, right = C._conv_padding(padding, kernel, (1, 1), dilation)
        pads = (left, right) if self._n == 1 else (left, right, top, bottom)
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


class _ConvTransposeNd(_Affine):
    """ConvTranspose1d and ConvTranspose2d: weight (in, out / groups, *kernel) and bias (out,),
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
        self.kernel_size = C._pair(kernel_size, "kernel_size", n)
        self.stride, self.padding = C._pair(stride, "stride", n), C._pair(padding, "padding", n)
        self.dilation = C._pair(dilation, "dilation", n)
        self.output_padding = C._pair(output_padding, "output_padding", n)
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
               zip(spatial, self.stride, self.padding, self.dilation, self.kernel_size)]
        high = [m + s - 1 for m, s in zip(low, self.stride)]
        if any(not lo <= size <= hi for size, lo, hi in zip(output_size, low, high)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                             f"range from {low} to {high} (for an input of {spatial})")
        return tuple(size - lo for size, lo in zip(output_size, low))

    def forward(self, input, output_size=None):
        fn = C.conv_transpose2d if self._n == 2 else C.conv_transpose1d
        return fn(input, self.weight, self.bias, self.stride, self.padding,
                  self._output_padding(input, output_size), self.groups, self.dilation)

    # torch's one repr for both kinds (not super()'s plus a suffix: output_padding stands
    # before groups and bias)
    extra_repr = _ConvNd.extra_repr


class ConvTranspose1d(_ConvTransposeNd):
    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    _n = 2


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _pool = staticmethod(C.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    _pool = staticmethod(C.max_pool2d)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride = C._pair(kernel_size, "kernel_size", 1), \
            C._pair(kernel_size if stride is None else stride, "stride", 1)
        self.padding = C._pair(padding, "padding", 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return C.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return C.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._pool(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _pool = staticmethod(C.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _pool = staticmethod(C.adaptive_avg_pool2d)


class _BatchNorm(_AffineNorm):
    """BatchNorm1d and BatchNorm2d: per-channel statistics of the batch in training (their
    running averages kept in buffers, momentum=None: the cumulative average), the running
    ones in eval mode."""

    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self._affine_parameters(num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", zeros((), dtype=int64, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        super().reset_parameters()

    def forward(self, input):
        if input.ndim not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got "
                             f"{input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked.item()
        use_batch = self.training or self.running_mean is None and self.running_var is None
        keep = not self.training or self.track_running_stats
        return C.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _dims = (4,)
