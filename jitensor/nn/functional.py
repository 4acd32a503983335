"""torch.nn.functional: the functional forms of jitensor.nn's layers and losses, written with
jitensor's public ops, so autograd differentiates them with no rules of their own; the pointwise
activations, the class losses (nll_loss, cross_entropy), the pointwise losses but mse and l1
(smooth_l1, huber, the binary cross entropies, kl_div) and the normalisations (layer_norm,
rms_norm) are fused ops with rules (ops/activation.py, ops/loss.py, ops/norm.py). Padding,
one_hot, the vector similarities and scaled_dot_product_attention are composed (torch's math
path for the last), as are the convolutions, poolings and batch_norm (argument checks, then the
ops of ops/conv.py, ops/pool.py and ops/norm.py); the sections after the losses say how the
rest is built. The module classes (nn/modules/) call these; this file imports none of them."""
import itertools
import math
import operator
import warnings

import numpy as np

from .. import dtypes
from ..autograd import no_grad
from ..autograd.graph import composite
from ..creation import arange, empty_like, full, ones, ones_like, rand, tensor, zeros, zeros_like
from ..dtypes import bool_, float16, float32, float64, int32, int64
from ..ops import activation as _activation
from ..ops import attention as _attention
from ..ops import indexing as _indexing
from ..ops import linalg as _linalg
from ..ops import loss as _loss
from ..ops import norm as _norm
from ..ops._common import broadcast_shapes, same_device
from ..ops.conv import _checked as _conv_checked
from ..ops.conv import convolution, convolution_input_grad, output_size
from ..ops.elementwise import minimum, where
from ..ops.matrix import triu_indices
from ..ops.norm import layer_norm, rms_norm
from ..ops.pool import max_pool2d_with_indices as _max_pool2d_kernel
from ..ops.reduction import var_mean
from ..ops.shape import cat, stack
from ..ops.statistics import bucketize
from ..overrides import (  # noqa: F401 (torch's names here)
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)
from ..tensor import Tensor, channels_last, channels_last_3d

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "affine_grid", "alpha_dropout", "assert_int_or_pair",
           "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm", "bilinear",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "boolean_dispatch", "celu",
           "celu_", "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d", "cosine_embedding_loss", "cosine_similarity",
           "cross_entropy", "ctc_loss", "linear_cross_entropy", "dropout", "dropout1d",
           "dropout2d", "dropout3d", "elu",
           "elu_", "embedding", "embedding_bag", "feature_alpha_dropout", "fold",
           "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices", "gaussian_nll_loss", "gelu", "glu", "grid_sample",
           "group_norm", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish", "hardtanh",
           "hardtanh_", "hinge_embedding_loss", "huber_loss", "instance_norm", "interpolate",
           "kl_div", "l1_loss", "layer_norm", "leaky_relu", "leaky_relu_", "linear",
           "local_response_norm", "log_softmax", "logsigmoid", "lp_pool1d", "lp_pool2d",
           "lp_pool3d", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices",
           "max_pool2d", "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "mish", "mse_loss",
           "multi_head_attention_forward", "multi_margin_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "native_channel_shuffle", "nll_loss", "normalize",
           "one_hot", "pad", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle",
           "poisson_nll_loss", "prelu", "relu", "relu6", "relu_", "rms_norm", "rrelu", "rrelu_",
           "scaled_dot_product_attention", "selu", "selu_", "sigmoid", "silu", "smooth_l1_loss",
           "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh",
           "tanhshrink", "threshold", "threshold_", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "unfold", "upsample", "upsample_bilinear",
           "upsample_nearest"]


_REDUCTIONS = ("none", "mean", "sum")


def _reduce(loss, reduction):
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


# -- layers ------------------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """input @ weight.T + bias: `weight` is (out_features, in_features), `input` (..., in)."""
    return _linalg.linear(input, weight, bias)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """The rows of `weight` (num_embeddings, embedding_dim) at the positions in `input` (int32
    or int64, any shape): input.shape + (embedding_dim,). padding_idx's row gets no gradient;
    with max_norm, the rows taken whose norm_type-norm exceeds it are first rescaled to
    max_norm in place (as torch does, under no_grad)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"embedding(): argument 'input' must be a Tensor of indices, not "
                        f"{type(input).__name__}; wrap it with jitensor.tensor(...)")
    if input.dtype not in (int32, int64):
        raise RuntimeError(f"embedding(): expected indices of dtype int64 or int32, got "
                           f"{input.dtype}; convert them with .long()")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise RuntimeError(f"embedding(): 'weight' must be 2-D (num_embeddings, embedding_dim), "
                           f"got {list(weight.shape) if isinstance(weight, Tensor) else weight}")
    same_device("embedding", weight, input)
    if sparse:
        raise RuntimeError("embedding(): sparse=True asks for a sparse gradient, and jitensor "
                           "has no sparse tensors; use sparse=False")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    if max_norm is not None:
        with no_grad():
            index = input.reshape(-1)
            rows = weight[index]
            norms = rows.norm(norm_type, dim=1, keepdim=True)
            scale = (max_norm / (norms + 1e-7)).masked_fill(norms <= max_norm, 1)
            weight[index] = rows * scale
    return _indexing.embedding(input, weight, padding_idx, bool(scale_grad_by_freq))


def _padding_index(padding_idx, num_embeddings):
    """padding_idx within [0, num_embeddings), counted from the end when negative, or None."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:  # (torch asserts)
        raise AssertionError(f"padding_idx {padding_idx} must be within num_embeddings "
                             f"({num_embeddings}): in [-{num_embeddings}, {num_embeddings})")
    return padding_idx % num_embeddings


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = input1 @ weight[o] @ input2 + bias[o] for weight (out, in1, in2), over the
    leading dims the two inputs share: one product with weight as (in1, out * in2), then a sum
    against input2."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for d, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1], strict=True)):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {a} and {b}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional (out, in1, in2), got "
                           f"{list(weight.shape)}")
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {in2}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.ndim else 1} but expected {out}")
    mixed = input1 @ weight.transpose(0, 1).reshape(in1, out * in2)
    y = (mixed.unflatten(-1, (out, in2)) * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """The sum, mean or max of each bag's rows of weight: the bags are input's rows (2-D) or
    the runs of the 1-D input that offsets start (include_last_offset: its last entry ends the
    last bag). padding_idx's entries are left out (of the means' counts too); an empty bag
    gives zeros; per_sample_weights (mode 'sum') scale each row. Composed: embedding's rows
    (max_norm and scale_grad_by_freq as there), then an index_add (or a scatter_reduce) into
    the bags."""
    if not isinstance(input, Tensor) or input.dtype not in (int32, int64):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{getattr(input, 'dtype', type(input).__name__)} instead (while "
                           f"checking arguments for embedding_bag)")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        offsets = arange(0, input.numel(), max(input.shape[1], 1), device=input.device)
        if not input.shape[1]:
            offsets = zeros(input.shape[0], dtype=int64, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if offsets.dtype not in (int32, int64):
        raise RuntimeError(f"embedding_bag: expected offsets of dtype int64 or int32, got "
                           f"{offsets.dtype}")
    length = input.shape[0]
    starts = offsets.to(int64)
    if starts.numel():
        if int(starts[0]) != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got "
                               f"{int(starts[0])}")
        if int(starts[-1]) > length:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {length} "
                               f"but got offsets[-1] of {int(starts[-1])}")
    bags = starts.numel() - 1 if include_last_offset else starts.numel()
    end = int(starts[-1]) if include_last_offset and bags >= 0 and starts.numel() else length
    starts = starts[:max(bags, 0)]
    positions = arange(length, device=input.device)
    bag = bucketize(positions, starts, right=True) - 1  # the last bag starting at or before
    keep = positions < end
    if padding_idx is not None:
        keep = keep & (input != _padding_index(padding_idx, weight.shape[0]))
    index, bag = input[keep], bag[keep]
    rows = embedding(index, weight, None, max_norm, norm_type, scale_grad_by_freq)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[keep].unsqueeze(1)
    size = (max(bags, 0), weight.shape[1])
    if mode == "max":
        out = zeros(size, dtype=weight.dtype, device=weight.device)
        return out.scatter_reduce(0, bag.unsqueeze(1).expand(rows.shape), rows, "amax",
                                  include_self=False)
    out = zeros(size, dtype=rows.dtype, device=weight.device).index_add(0, bag, rows)
    if mode == "mean":
        counts = zeros(size[0], dtype=rows.dtype, device=weight.device).index_add(
            0, bag, ones(bag.shape[0], dtype=rows.dtype, device=weight.device))
        out = out / counts.clamp(min=1).unsqueeze(1)
    return out


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def relu_(input):
    return input.relu_()


# the pointwise activations of ops/activation.py (one fused kernel each); `name_` forms and
# inplace=True write into input
_IN_PLACE = _activation.TENSOR_METHODS


def gelu(input, *, approximate="none"):
    return _activation.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return _IN_PLACE["silu_"](input) if inplace else _activation.silu(input)


def mish(input, inplace=False):
    return _IN_PLACE["mish_"](input) if inplace else _activation.mish(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _activation.softplus(input, beta, threshold)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return leaky_relu_(input, negative_slope) if inplace else \
        _activation.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return _IN_PLACE["leaky_relu_"](input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return elu_(input, alpha) if inplace else _activation.elu(input, alpha)


def elu_(input, alpha=1.0):
    return _IN_PLACE["elu_"](input, alpha)


def selu(input, inplace=False):
    return selu_(input) if inplace else _activation.selu(input)


def selu_(input):
    return _IN_PLACE["selu_"](input)


def celu(input, alpha=1.0, inplace=False):
    return celu_(input, alpha) if inplace else _activation.celu(input, alpha)


def celu_(input, alpha=1.0):
    return _IN_PLACE["celu_"](input, alpha)


def logsigmoid(input):
    return _activation.logsigmoid(input)


def hardsigmoid(input, inplace=False):
    return _IN_PLACE["hardsigmoid_"](input) if inplace else _activation.hardsigmoid(input)


def hardswish(input, inplace=False):
    return _IN_PLACE["hardswish_"](input) if inplace else _activation.hardswish(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return hardtanh_(input, min_val, max_val) if inplace else \
        _activation.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _IN_PLACE["hardtanh_"](input, min_val, max_val)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def threshold(input, threshold, value, inplace=False):
    return threshold_(input, threshold, value) if inplace else \
        _activation.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _IN_PLACE["threshold_"](input, threshold, value)


def _softmax_dim(name, ndim, stacklevel):
    """torch's legacy choice of dim when none is given (deprecated there, with this warning)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  f"include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return input.log_softmax(dim, dtype=dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability `p` and scale the rest by 1 / (1 - p) (training
    only; otherwise `input` itself)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training:
        return input
    keep = rand(input.shape, dtype=input.dtype, device=input.device) >= p  # P(keep) = 1 - p
    mask = keep.to(input.dtype).mul_(1.0 / (1.0 - p) if p < 1.0 else 0.0)
    return input.mul_(mask) if inplace else input * mask


# -- vectors -----------------------------------------------------------------------------------
def one_hot(tensor, num_classes=-1):
    """int64 of tensor's shape plus a last dim of num_classes (-1: the largest value + 1),
    1 at each value's class."""
    if not isinstance(tensor, Tensor) or tensor.dtype is not int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor "
                           f"(int64), got {getattr(tensor, 'dtype', type(tensor).__name__)}; "
                           f"convert it with .long()")
    if tensor.numel():
        low, high = tensor.min().item(), tensor.max().item()
        if low < 0:
            raise RuntimeError(f"Class values must be non-negative, got {low}")
        if num_classes == -1:
            num_classes = high + 1
        elif high >= num_classes:
            raise RuntimeError(f"Class values must be smaller than num_classes ({num_classes}), "
                               f"got {high}")
    elif num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor; pass "
                           "num_classes")
    out = zeros(*tensor.shape, num_classes, dtype=int64, device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along `dim`."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input.div(denom, out=out) if out is not None else input / denom


def _floats(fn, *tensors):
    """The tensors, which must be floating point (as torch's norms require)."""
    for t in tensors:
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"{fn}(): expected floating point inputs, got {t.dtype.name}; "
                               f"convert them with .float()")
    return tensors


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along `dim`, the two broadcast."""
    shape = broadcast_shapes(x1.shape, x2.shape)
    x1, x2 = _floats("cosine_similarity", x1.expand(shape), x2.expand(shape))

    def unit(x):
        n = x.norm(2, dim, keepdim=True)
        return x / n.where(n >= eps, eps)  # (where the clamp bites, n is below eps: 0 mostly)
    return (unit(x1) * unit(x2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dim (torch adds eps to the difference)."""
    x1, x2 = _floats("pairwise_distance", x1, x2)
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


# -- padding -----------------------------------------------------------------------------------
_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative sizes, crop) the last len(pad) // 2 dims: `pad` lists (before,
    after) for the last dim first. "constant" fills with `value` (0 when None); "reflect"
    mirrors without repeating the edge, "replicate" repeats it, "circular" wraps around (torch's
    rules for which dims these take). Composed from cat and index_select, so gradients flow."""
    if any(isinstance(v, (bool, float)) or not hasattr(v, "__index__") for v in pad):
        raise TypeError(f"pad(): argument 'pad' must be a sequence of ints, got {pad!r}")
    pad = [int(v) for v in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Padding length must be divisible by 2, got {len(pad)}")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}; expected one of "
                                  f"{', '.join(_PAD_MODES)}")
    n = len(pad) // 2
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        if n not in (1, 2, 3) or input.ndim not in (n + 1, n + 2):
            raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                      f"{input.ndim}D input tensor: non-constant modes pad the "
                                      f"last 1, 2 or 3 dims of a (batch,) channels, ... input")
    out = input
    for k in range(n):
        d, before, after = input.ndim - 1 - k, pad[2 * k], pad[2 * k + 1]
        size = out.shape[d]
        if size + before + after < 0 or mode == "constant" and (
                min(before, 0) + min(after, 0) + size < 0):
            raise RuntimeError(f"pad: padding ({before}, {after}) of dim {d} leaves a negative "
                               f"size from {size}")
        if mode == "constant":
            out = _pad_constant(out, d, before, after, 0 if value is None else value)
        else:
            out = out.index_select(d, _pad_index(mode, d, size, before, after, out.device))
    return out


def _pad_constant(x, d, before, after, value):
    if before < 0 or after < 0:
        x = x.narrow(d, max(-before, 0), x.shape[d] - max(-before, 0) - max(-after, 0))
    parts = []
    for width in (before, after):
        shape = list(x.shape)
        shape[d] = max(width, 0)
        parts.append(full(shape, value, dtype=x.dtype, device=x.device))
    return cat([parts[0], x, parts[1]], d)


def _pad_index(mode, d, size, before, after, device):
    """The positions of dim d's padded (or cropped) result in the input's dim."""
    where = arange(-before, size + after, device=device)
    if mode == "replicate":
        return where.clamp(0, size - 1)
    if mode == "circular":  # (as torch: a negative size crops first, the rest wraps the crop)
        if before > size or after > size:
            raise RuntimeError(f"Padding value causes wrapping around more than once: "
                               f"padding ({before}, {after}) of dim {d} of size {size}")
        start, kept = max(-before, 0), size - max(-before, 0) - max(-after, 0)
        return arange(-max(before, 0), kept + max(after, 0), device=device).remainder(kept) \
            + start
    if before >= size or after >= size:
        raise RuntimeError(f"Padding size should be less than the corresponding input "
                           f"dimension, but got: padding ({before}, {after}) at dimension {d} "
                           f"of size {size}")
    period = 2 * (size - 1) if size > 1 else 1
    where = where.remainder(period)  # reflect: 0 1 .. size-1 .. 1, repeated
    return where.where(where < size, period - where)


# -- attention ---------------------------------------------------------------------------------
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query @ key^T * scale + bias) @ value over (..., L, E), (..., S, E), (..., S, Ev):
    scale 1 / sqrt(E) by default; bias -inf where a bool attn_mask is False (or attn_mask
    itself, added), and above the diagonal with is_causal; dropout_p drops attention weights.
    enable_gqa repeats key's and value's heads (dim -3) to query's. Composed (torch's math
    path): differentiable on every device."""
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    length, source = query.shape[-2], key.shape[-2]
    if enable_gqa and query.ndim >= 3:
        heads = query.shape[-3]
        if heads % key.shape[-3] or heads % value.shape[-3]:
            raise RuntimeError(f"Number of heads in key and value must divide the number of "
                               f"heads in query: query has {heads}, key {key.shape[-3]}, value "
                               f"{value.shape[-3]}")
        key, value = (t.index_select(-3, arange(heads, device=t.device) // (heads // t.shape[-3]))
                      if t.shape[-3] != heads else t for t in (key, value))
    if attn_mask is not None and attn_mask.dtype is not bool_ and \
            not attn_mask.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected attn_mask dtype to be bool "
                           f"or float, got {attn_mask.dtype.name}")
    factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if attn_mask is None and dropout_p == 0.0 and _attention.fused(query, key, value):
        return _attention.flash_attention(query, key, value, float(factor), bool(is_causal),
                                          _attention.log_sum_exp(query))
    weight = query @ key.transpose(-2, -1) * factor
    if is_causal:
        weight = weight.masked_fill(_attention.above_diagonal(length, source, query.device),
                                    -math.inf)
    if attn_mask is not None:
        weight = weight.masked_fill(attn_mask.logical_not(), -math.inf) \
            if attn_mask.dtype is bool_ else weight + attn_mask
    # a causal mask leaves every row its first column: only attn_mask can mask a whole row
    weight = weight.softmax(-1) if attn_mask is None else _safe_softmax(weight)
    if dropout_p > 0.0:
        weight = dropout(weight, dropout_p)
    return weight @ value


def _attention_mask(mask, name, dtype):
    """A mask as the float added to the scores: a bool mask's True (not allowed) is -inf."""
    if mask is None:
        return None
    if mask.dtype is bool_:
        return zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)
    if not mask.dtype.is_floating_point:
        raise RuntimeError(f"only bool and floating types of {name} are supported, got "
                           f"{mask.dtype}")
    return mask.to(dtype)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """nn.MultiheadAttention's computation on (L, N, E) inputs (or unbatched (L, E)):
    projections, scaled dot products with the masks added, softmax, dropout, out projection;
    (output, attention weights averaged over heads unless average_attn_weights=False, or None
    without need_weights). static_k / static_v (N * num_heads, S, head_dim) replace the
    projected keys / values."""
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    length, n, e = query.shape
    if e != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {e}")
    heads, head_dim = num_heads, e // num_heads
    if head_dim * num_heads != e:
        raise AssertionError(f"embed_dim {e} not divisible by num_heads {num_heads}")
    bq, bk, bv = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight.chunk(3)
    q, k, v = linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
    mask = _attention_mask(attn_mask, "attn_mask", q.dtype)
    padding = _attention_mask(key_padding_mask, "key_padding_mask", q.dtype)
    if mask is not None:
        source = key.shape[0]
        want = (length, source) if mask.ndim == 2 else (n * heads, length, source)
        if mask.ndim not in (2, 3) or tuple(mask.shape) != want:
            raise RuntimeError(f"The shape of the {mask.ndim}D attn_mask is "
                               f"{tuple(mask.shape)}, but should be {want}.")
        mask = mask.unsqueeze(0) if mask.ndim == 2 else mask
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = cat([k, bias_k.expand(1, n, e)])
        v = cat([v, bias_v.expand(1, n, e)])
        mask = None if mask is None else pad(mask, (0, 1))
        padding = None if padding is None else pad(padding, (0, 1))
    q = q.reshape(length, n * heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], n * heads, head_dim).transpose(0, 1) if static_k is None else \
        static_k
    v = v.reshape(v.shape[0], n * heads, head_dim).transpose(0, 1) if static_v is None else \
        static_v
    if add_zero_attn:
        k = cat([k, zeros(n * heads, 1, head_dim, dtype=k.dtype, device=k.device)], 1)
        v = cat([v, zeros(n * heads, 1, head_dim, dtype=v.dtype, device=v.device)], 1)
        mask = None if mask is None else pad(mask, (0, 1))
        padding = None if padding is None else pad(padding, (0, 1))
    source = k.shape[1]
    if padding is not None:
        if tuple(padding.shape) != (n, source):
            raise AssertionError(f"expecting key_padding_mask shape of {(n, source)}, but got "
                                 f"{tuple(padding.shape)}")
        padding = padding.reshape(n, 1, 1, source).expand(n, heads, 1, source) \
            .reshape(n * heads, 1, source)
        mask = padding if mask is None else mask + padding
    scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
    scores = scores if mask is None else scores + mask
    # as torch: the weights path's plain softmax (NaN in rows masked everywhere), the
    # attention-only path's safe one (0 there)
    weights = scores.softmax(-1) if need_weights else _safe_softmax(scores)
    if training and dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    out = (weights @ v).transpose(0, 1).reshape(length * n, e)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(length, n, e)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(n, heads, length, source)
    weights = weights.mean(dim=1) if average_attn_weights else weights
    return out, weights if batched else weights.squeeze(0)


def _safe_softmax(scores):
    """softmax over the last dim, 0 (not NaN) in rows masked everywhere (-inf), as torch's
    attention: a padding mask makes such rows. The row's -inf are made 0 first, so no NaN
    reaches the gradient either."""
    masked = (scores == -math.inf).all(-1, keepdim=True)
    return scores.masked_fill(masked, 0.0).softmax(-1).masked_fill(masked, 0.0)


# -- losses ------------------------------------------------------------------------------------
def _legacy_reduction(size_average, reduce, reduction, allowed=_REDUCTIONS):
    """`reduction`, or what torch's deprecated size_average and reduce arguments ask for (with
    torch's warning)."""
    if size_average is None and reduce is None:
        if reduction not in allowed:
            raise ValueError(f"{reduction!r} is not a valid value for reduction; expected one "
                             f"of {', '.join(map(repr, allowed))}")
        return reduction
    reduction = "none" if reduce is False else "sum" if size_average is False else "mean"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", stacklevel=3)
    return reduction


def _check_pair(fn, input, target, warn=True):
    """Check that input and target are tensors; warn, as torch, when their shapes differ."""
    for what, t in (("input", input), ("target", target)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): argument '{what}' must be Tensor, not {type(t).__name__}")
    if warn and target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    """torch's per-element `weight` of the regression losses (input's shape): 'mean' divides
    by the weights' sum (huber_loss: by the count)."""
    if weight is None:
        return _reduce(loss, reduction)
    if weight.shape != input.shape:
        raise ValueError(f"Weights and input must have the same size: weight has shape "
                         f"{tuple(weight.shape)}, input {tuple(input.shape)}")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


@composite("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error; `target` broadcasts against `input` (with torch's warning)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("mse_loss", input, target)
    return _weighted((input - target).square(), weight, input, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error |input - target|; its gradient at input == target is 0."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("l1_loss", input, target)
    return _weighted((input - target).abs(), weight, input, reduction)


@composite("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 z^2 / beta where z = |input - target| < beta, else z - 0.5 beta (l1_loss at beta=0).
    One fused kernel each way, as the other pointwise losses."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("smooth_l1_loss", input, target)
    if not beta >= 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta, got "
                           f"{beta}")
    if beta == 0:
        return _reduce((input - target).abs(), reduction)
    return _reduce(_loss.pointwise_loss(input, target, None, _loss.POINTWISE["smooth_l1_loss"],
                                        float(beta)), reduction)


@composite("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 z^2 where z = |input - target| < delta, else delta (z - 0.5 delta)."""
    reduction = _legacy_reduction(None, None, reduction)
    _check_pair("huber_loss", input, target)
    if not delta > 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta, got "
                           f"{delta}")
    loss = _loss.pointwise_loss(input, target, None, _loss.POINTWISE["huber_loss"],
                                float(delta))
    return _weighted(loss, weight, input, reduction, mean_by_weight=False)


def _probabilities(fn, input, target):
    """binary_cross_entropy's check that input and target hold numbers in [0, 1] (NaN fails),
    on the CPU only: on CUDA it would wait for the GPU, and torch's check there is a device
    assert; out-of-range input gives NaN losses there."""
    if input.device.type != "cpu":
        return
    for what, t in (("input", input), ("target", target)):
        if t.numel() and not (t.min().item() >= 0 and t.max().item() <= 1):
            raise RuntimeError(f"{fn}(): all elements of {what} should be between 0 and 1, got "
                               f"values in [{t.min().item()}, {t.max().item()}]")


def _fits(fn, input, **weights):
    """Weights broadcast against the input without enlarging it (torch writes the loss into
    input's shape)."""
    for name, w in weights.items():
        if w is not None and broadcast_shapes(input.shape, w.shape) != tuple(input.shape):
            raise RuntimeError(f"{fn}(): {name} of shape {list(w.shape)} broadcasts the loss "
                               f"beyond the input's shape {list(input.shape)}: output with "
                               f"shape {list(input.shape)} doesn't match the broadcast shape "
                               f"{list(broadcast_shapes(input.shape, w.shape))}")


@composite("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-w (y log x + (1 - y) log(1 - x)) of probabilities x, each log clamped at -100 as torch
    (so x = 0 or 1 gives a finite loss and input gradient; the target's, -logit(x), is
    infinite there, as torch's); `weight` broadcasts against the target."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("binary_cross_entropy", input, target, warn=False)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         f"size.")
    _probabilities("binary_cross_entropy", input, target)
    _fits("binary_cross_entropy", input, weight=weight)
    loss = _loss.pointwise_loss(input, target, None, _loss.POINTWISE["binary_cross_entropy"], 0)
    return _reduce(loss if weight is None else loss * weight, reduction)


@composite("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy of sigmoid(input), computed from the logits without overflow;
    `pos_weight` (broadcast against the target: one per class, say) weights the positive
    term, `weight` the whole loss."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("binary_cross_entropy_with_logits", input, target, warn=False)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _fits("binary_cross_entropy_with_logits", input, weight=weight, pos_weight=pos_weight)
    loss = _loss.pointwise_loss(input, target, pos_weight,
                                _loss.POINTWISE["binary_cross_entropy_with_logits"], 0)
    return _reduce(loss if weight is None else loss * weight, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence of log-probabilities `input` from `target` (probabilities,
    or log-probabilities with log_target): target (log target - input), summed as
    `reduction` says; 'batchmean' divides the sum by the batch size (the divergence's
    definition), 'mean' by the element count (with torch's warning)."""
    legacy = size_average is not None or reduce is not None
    reduction = _legacy_reduction(size_average, reduce, reduction,
                                  _REDUCTIONS + ("batchmean",))
    _check_pair("kl_div", input, target, warn=False)
    if reduction == "mean" and not legacy:
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    loss = _loss.pointwise_loss(input, target, None,
                                _loss.POINTWISE["kl_div:log_target" if log_target else "kl_div"],
                                0)
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


def _class_dim(fn, input, target):
    """The class dim of `input` (0 for an unbatched (C,) input, else 1), with `target` checked
    to be class indices of input's shape without that dim."""
    if input.ndim == 0:
        raise ValueError(f"{fn}(): input must have a class dimension, got a 0-d tensor")
    d = 0 if input.ndim == 1 else 1
    expected = tuple(input.shape[:d] + input.shape[d + 1:])
    if target.dtype.is_floating_point or target.dtype is bool_:
        raise RuntimeError(f"{fn}(): expected a target of class indices (int64), got dtype "
                           f"{target.dtype}")
    if tuple(target.shape) != expected:
        raise ValueError(f"{fn}(): expected a target of shape {expected} for input of shape "
                         f"{tuple(input.shape)} (classes in dim {d}), got {tuple(target.shape)}")
    return d


def _check_weight(weight, n_classes):
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood: -input[target] along the class dim (dim 1, or 0 when
    unbatched), weighted by `weight[target]`; targets equal to `ignore_index` count 0, and
    'mean' divides by the summed weights of the others. One fused kernel each way."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    d = _class_dim("nll_loss", input, target)
    _check_weight(weight, input.shape[d])
    return _loss.class_loss(input, target, d, weight, ignore_index, reduction, 0.0, True)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim, then nll_loss against class indices (fused: one kernel
    each way), or against class probabilities when `target` is a float tensor of input's
    shape. `label_smoothing` mixes the target with the uniform distribution, as torch does."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if not isinstance(target, Tensor):
        raise TypeError(f"cross_entropy(): target must be a Tensor, got {type(target).__name__}")
    if target.is_floating_point():
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction,
                                    label_smoothing)
    d = _class_dim("cross_entropy", input, target)
    _check_weight(weight, input.shape[d])
    return _loss.class_loss(input, target, d, weight, ignore_index, reduction, label_smoothing,
                            False)



def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target): `linear_weight` is
    (C, *out_features, in_features) and gives logits (N, C, *out_features) for a K-dimensional
    loss. jitensor computes this reference form whatever `options` say (torch's options chunk
    the batch to save memory: the same loss)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
                           f"respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    flat = math.prod(out_features) * classes
    logits = linear(input, linear_weight.reshape(flat, in_features),
                    None if linear_bias is None else linear_bias.reshape(flat))
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


def _along(weight, d, ndim):
    """The (C,) class weights shaped to broadcast along dim `d` of an `ndim`-d input."""
    return weight.reshape([-1 if k == d else 1 for k in range(ndim)])


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing):
    if target.shape != input.shape:
        raise ValueError(f"cross_entropy(): a float target holds class probabilities and must "
                         f"have input's shape {tuple(input.shape)}, got {tuple(target.shape)}; "
                         f"pass class indices as an int64 tensor")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    d = 0 if input.ndim == 1 else 1
    n_classes = input.shape[d]
    _check_weight(weight, n_classes)
    if label_smoothing:
        target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
    picked = log_softmax(input, d) * target
    if weight is not None:
        picked = picked * _along(weight, d, input.ndim)
    return _reduce(-picked.sum(d), reduction)


# -- the remaining activations: softmin, softsign, the shrinkages, prelu, rrelu, glu ---------------
# Each is composed from jitensor's ops, so autograd differentiates it and it runs on every
# device; the choices between branches are `where`s, whose gradient goes to the branch taken
# only, as torch's hand-written backward formulas do.
def _floating(fn, input):
    """torch's shrinkages have float kernels only (an integer input is NotImplementedError)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"{fn}(): not implemented for {input.dtype.name} input; "
                                  f"convert it with .float()")


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel(0, 1) noise) / tau) along dim; hard=True gives the one-hot of
    its argmax forward with the soft sample's gradient (straight-through). eps is unused, as
    in torch."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.max(dim, keepdim=True)[1]
    one_hot = zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along `dim` (torch's legacy choice of dim, with its warning, when None);
    `dtype` converts the input first."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
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
        return leaky_relu(input, (lower + upper) / 2, inplace)
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


# -- convolutions ----------------------------------------------------------------------------------
# A convolution is one kernel forward and one per gradient (ops/conv.py), and so is max pooling
# (ops/pool.py). Average pooling is composed: the windows of the (padded) input, (N, C, kh*kw,
# OH*OW), stacked from one strided slice per kernel element (their backward adds the gradient
# back onto the input: overlapping windows add up), summed and divided by the counts torch
# divides by. 1-d forms run as 2-d ones over a height of 1.
def _pair(value, name, n=2):
    """An int (or NumPy int) or a sequence of 1 or n ints as a tuple of n ints."""
    try:
        values = (operator.index(value),) * n if not hasattr(value, "__len__") else \
            tuple(operator.index(v) for v in value)
    except TypeError:
        values = ()
    if len(values) == 1:
        values *= n
    if len(values) != n or any(isinstance(v, bool) for v in values):
        raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {value!r}")
    return values


def _windows(x, kernel, stride, dilation):
    """(windows (N, C, kh*kw, OH*OW), OH, OW) of the 4-D input x (already padded): window
    element (i, j) of output (oh, ow) is x[..., oh*sh + i*dh, ow*sw + j*dw]. Stacked from one
    strided slice per kernel element, whose backward adds each slice's gradient back in place
    (a gather through an index table ran slower forward and backward)."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"the kernel ({kh}x{kw}, dilation {dh}x{dw}) is larger than the "
                           f"padded input ({h}x{w}): the output would be {oh}x{ow}")
    slices = [x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
              for i in range(kh) for j in range(kw)]
    return stack(slices, 2).reshape(n, c, kh * kw, oh * ow), oh, ow


def _batched(fn, input, dims):
    """fn on input with a batch dim added when it has none (torch's unbatched forms); fn may
    return a tuple of tensors (or None)."""
    if input.ndim == dims + 1:
        out = fn(input.unsqueeze(0))
        return tuple(None if o is None else o.squeeze(0) for o in out) \
            if isinstance(out, tuple) else out.squeeze(0)
    if input.ndim != dims + 2:
        raise RuntimeError(f"expected a {dims + 1}-D (unbatched) or {dims + 2}-D (batched) "
                           f"input, got {input.ndim}-D of shape {tuple(input.shape)}")
    return fn(input)


def _conv_padding(padding, kernel, stride, dilation, n=2):
    """(before, after) of each of the n dims, flat ((top, bottom, left, right) in 2-d), for an
    int, n ints, 'valid' or 'same' ('same' pads the odd one after, as torch's)."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * 2 * n
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: {padding!r}; expected 'valid' or "
                               f"'same'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
        return tuple(p for t in total for p in (t // 2, t - t // 2))
    sizes = _pair(padding, "padding", n)
    if min(sizes) < 0:
        raise RuntimeError(f"negative padding is not supported, got {padding!r}")
    return tuple(p for size in sizes for p in (size, size))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation of (N, C, H, W) (or (C, H, W)) input with (O, C / groups, kh, kw)
    weights, plus bias (O,)."""
    if not isinstance(weight, Tensor) or weight.ndim != 4:
        raise RuntimeError(f"conv2d: expected a 4-D weight (out_channels, in_channels / groups, "
                           f"kh, kw), got {getattr(weight, 'shape', weight)}")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) < 1 or min(dilation) < 1:
        raise RuntimeError(f"conv2d: stride and dilation must be positive, got {stride} and "
                           f"{dilation}")
    out_c, per_group, kh, kw = weight.shape
    if not out_c or not kh or not kw:
        raise RuntimeError(f"conv2d: expected a weight with at least one output channel and a "
                           f"kernel of positive size, got {tuple(weight.shape)}")
    if weight.dtype is dtypes.bool_:
        raise NotImplementedError("conv2d: not implemented for bool tensors; convert them with "
                                  ".int() or .float()")
    if bias is not None and tuple(bias.shape) != (out_c,):
        raise RuntimeError(f"conv2d: expected a bias of shape ({out_c},), got "
                           f"{tuple(bias.shape)}")
    padding = _conv_padding(padding, (kh, kw), stride, dilation)

    def run(x):
        c = x.shape[1]
        if groups < 1 or c % groups or out_c % groups or c // groups != per_group:
            raise RuntimeError(f"conv2d: input of {c} channels, groups={groups} and weight of "
                               f"shape {tuple(weight.shape)} do not fit: weight must be "
                               f"(out_channels, in_channels / groups, kh, kw) with both channel "
                               f"counts divisible by groups")
        if not x.shape[2] * x.shape[3] and x.shape[0] * x.shape[1]:
            raise RuntimeError(f"conv2d: only zero batch or zero channel inputs are supported, "
                               f"but got input shape {list(x.shape)}")
        oh, ow = output_size(x.shape[2:], (kh, kw), stride, padding, dilation)
        if oh <= 0 or ow <= 0:
            raise RuntimeError(f"conv2d: the kernel ({kh}x{kw}, dilation {dilation[0]}x"
                               f"{dilation[1]}) is larger than the padded input: the output "
                               f"would be {oh}x{ow}")
        return convolution(x, weight, bias, stride, padding, dilation, groups)
    return _batched(run, input, 2)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation of (N, C, L) (or (C, L)) input with (O, C / groups, k) weights."""
    if not isinstance(weight, Tensor) or weight.ndim != 3:
        raise RuntimeError(f"conv1d: expected a 3-D weight (out_channels, in_channels / groups, "
                           f"k), got {getattr(weight, 'shape', weight)}")
    (s,), (d,) = _pair(stride, "stride", 1), _pair(dilation, "dilation", 1)
    p = padding if isinstance(padding, str) else (0, _pair(padding, "padding", 1)[0])
    return _batched(lambda x: conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s), p,
                                     (1, d), groups).squeeze(2), input, 1)


def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution of (time, batch, in_channels) input with a (kernel width, in_channels,
    out_channels) weight and `pad` steps of zeros at each end of time (a negative pad crops):
    conv1d on the (batch, channels, time) view, the output back in (time, batch, channels)."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    time, batch, _ = input.shape
    width, _, out_channels = weight.shape
    length = time + 2 * pad - width + 1
    if length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {length}: "
                           f"[{length}, {batch}, {out_channels}]")
    x = input.permute(1, 2, 0)
    if pad < 0:  # (conv1d pads only)
        x, pad = x[:, :, -pad:time + pad], 0
    if length == 0:
        return zeros((0, batch, out_channels), dtype=input.dtype, device=input.device)
    return conv1d(x, weight.permute(2, 1, 0), bias, padding=pad).permute(2, 0, 1)


# -- transposed convolution ------------------------------------------------------------------------
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """conv2d's adjoint (the gradient of a convolution with respect to its input) of (N, C, H,
    W) (or (C, H, W)) input with weights (C, O / groups, kh, kw): output (N, O, (H - 1) sh - 2 ph
    + dh (kh - 1) + oph + 1, ...), output_padding extending the far end (zeros where no window
    reaches). It is the convolution's input-gradient op (one kernel); with an output padding of
    a stride or more, a matrix product of the transposed weight and the input per group gives
    each input pixel's kh x kw block of contributions, which _col2im adds onto the output."""
    if not isinstance(weight, Tensor) or weight.ndim != 4:
        raise RuntimeError(f"conv_transpose2d: expected a 4-D weight (in_channels, out_channels "
                           f"/ groups, kh, kw), got {getattr(weight, 'shape', weight)}")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    padding, output_padding = _pair(padding, "padding"), _pair(output_padding, "output_padding")
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0 or min(output_padding) < 0:
        raise RuntimeError(f"conv_transpose2d: stride and dilation must be positive and padding "
                           f"and output_padding non-negative, got stride={stride}, dilation="
                           f"{dilation}, padding={padding}, output_padding={output_padding}")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=False)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got output_padding_height: {output_padding[0]} output_padding_width:"
                           f" {output_padding[1]} stride_height: {stride[0]} stride_width: "
                           f"{stride[1]} dilation_height: {dilation[0]} dilation_width: "
                           f"{dilation[1]}")
    in_c, per_group, kh, kw = weight.shape
    if not isinstance(groups, int) or groups < 1 or in_c % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {[list(weight.shape)]} "
                           f"instead")
    out_c = per_group * groups
    if bias is not None and tuple(bias.shape) != (out_c,):
        raise RuntimeError(f"conv_transpose2d: expected a bias of shape ({out_c},), got "
                           f"{tuple(bias.shape)}")
    if weight.dtype is dtypes.bool_:
        raise NotImplementedError("conv_transpose2d: not implemented for bool tensors; convert "
                                  "them with .int() or .float()")

    def run(x):
        n, c, h, w = x.shape
        if c != in_c:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                               f"expected input{list(x.shape)} to have {in_c} channels, but got "
                               f"{c} channels instead")
        if weight.device != x.device:
            raise RuntimeError(f"conv_transpose2d: input is on {x.device} but weight on "
                               f"{weight.device}; move them to one device")
        size = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                     zip((h, w), stride, padding, dilation, (kh, kw), output_padding, strict=False))
        if min(size) <= 0:
            raise RuntimeError(f"conv_transpose2d: the output would be {size[0]}x{size[1]}; "
                               f"padding {padding} is too large for input {h}x{w}")
        _conv_checked("conv_transpose2d", x, weight)  # (the gradient op would convert x)
        if all(op < s for op, s in zip(output_padding, stride, strict=True)):
            # the gradient of the convolution (out -> x) by its input, one kernel (and its
            # derivatives the convolution's own)
            out = convolution_input_grad(x, weight, (n, out_c, *size), stride,
                                         (padding[0], padding[0], padding[1], padding[1]),
                                         dilation, groups)
        else:  # an output padding of a stride or more (it must be below the dilation then)
            # (groups, kk O/g, C/g) @ (N, groups, C/g, H W) -> (N, groups, O/g kk, H W)
            mat = weight.reshape(groups, in_c // groups, per_group * kh * kw).transpose(1, 2)
            cols = mat @ x.reshape(n, groups, in_c // groups, h * w)
            out = _col2im(cols.reshape(n, out_c * kh * kw, h * w), out_c, (h, w), (kh, kw),
                          dilation, stride, size, padding)
        return out if bias is None else out + bias.reshape(1, out_c, 1, 1)
    return _batched(run, input, 2)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """conv_transpose2d over a height of 1 for (N, C, L) (or (C, L)) input and weights (C,
    O / groups, k)."""
    if not isinstance(weight, Tensor) or weight.ndim != 3:
        raise RuntimeError(f"conv_transpose1d: expected a 3-D weight (in_channels, out_channels "
                           f"/ groups, k), got {getattr(weight, 'shape', weight)}")
    (s,), (p,) = _pair(stride, "stride", 1), _pair(padding, "padding", 1)
    (op,), (d,) = _pair(output_padding, "output_padding", 1), _pair(dilation, "dilation", 1)
    # (the height's output padding 0 < stride 1 keeps conv_transpose2d's check to the width)
    return _batched(lambda x: conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias,
                                               (1, s), (0, p), (0, op), groups,
                                               (1, d)).squeeze(2), input, 1)


# -- 3-d convolutions ------------------------------------------------------------------------------
# Both run the 2-d ones over the depth slices, so that they use the 2-d kernels (and their
# gradients) on either device. conv3d stacks the input slices each output depth reads into
# channels, so one conv2d of (N OD, C kd, H, W) sums over depth too; conv_transpose3d runs one
# conv_transpose2d per input depth slice, giving each its kd output slices, and adds them onto
# the output's depths with _col2im.
def _check_conv_weight(fn, weight, dims, shape):
    if not isinstance(weight, Tensor) or weight.ndim != dims:
        raise RuntimeError(f"{fn}: expected a {dims}-D weight {shape}, got "
                           f"{getattr(weight, 'shape', weight)}")
    if weight.dtype is dtypes.bool_:
        raise NotImplementedError(f"{fn}: not implemented for bool tensors; convert them with "
                                  f".int() or .float()")


def _check_3d_input(fn, input):
    if not isinstance(input, Tensor) or input.ndim not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to {fn}, but got "
                           f"input of size: {list(getattr(input, 'shape', ()))}")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d cross-correlation of (N, C, D, H, W) (or (C, D, H, W)) input with (O, C / groups,
    kd, kh, kw) weights, plus bias (O,)."""
    _check_conv_weight("conv3d", weight, 5, "(out_channels, in_channels / groups, kd, kh, kw)")
    _check_3d_input("conv3d", input)
    stride, dilation = _pair(stride, "stride", 3), _pair(dilation, "dilation", 3)
    if min(stride) < 1 or min(dilation) < 1:
        raise RuntimeError(f"conv3d: stride and dilation must be positive, got {stride} and "
                           f"{dilation}")
    out_c, per_group, *kernel = weight.shape
    if not out_c or not min(kernel):
        raise RuntimeError(f"conv3d: expected a weight with at least one output channel and a "
                           f"kernel of positive size, got {tuple(weight.shape)}")
    if bias is not None and tuple(bias.shape) != (out_c,):
        raise RuntimeError(f"conv3d: expected a bias of shape ({out_c},), got "
                           f"{tuple(bias.shape)}")
    sides = _conv_padding(padding, kernel, stride, dilation, 3)
    (kd, kh, kw), (sd, sh, sw), (dd, dh, dw) = kernel, stride, dilation

    def run(x):
        n, c, *size = x.shape
        if not isinstance(groups, int) or groups < 1 or c % groups or out_c % groups or \
                c // groups != per_group:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                               f"expected input{list(x.shape)} to have {per_group * groups} "
                               f"channels, but got {c} channels instead")
        if not math.prod(size) and n * c:
            raise RuntimeError(f"conv3d: only zero batch or zero channel inputs are supported, "
                               f"but got input shape {list(x.shape)}")
        padded = [s + sides[2 * i] + sides[2 * i + 1] for i, s in enumerate(size)]
        if any(p < d * (k - 1) + 1 for p, d, k in zip(padded, dilation, kernel, strict=True)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                               f"than actual input size")
        od = (padded[0] - dd * (kd - 1) - 1) // sd + 1
        x = _padded(x, (0, 0, 0, 0, *sides[:2]), 0)
        # (N, OD, C, kd, H, W): channel c * kd + k reads depth od * sd + k * dd, as weight's
        # (C / groups, kd) rows flatten
        slices = stack([x[:, :, k * dd:k * dd + sd * (od - 1) + 1:sd] for k in range(kd)], 3)
        planes = slices.permute(0, 2, 1, 3, 4, 5).reshape(n * od, c * kd, *size[1:])
        out = convolution(planes, weight.reshape(out_c, per_group * kd, kh, kw), bias,
                          (sh, sw), sides[2:], (dh, dw), groups)
        return out.reshape(n, od, out_c, *out.shape[2:]).transpose(1, 2).contiguous()
    return _batched(run, input, 3)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """conv3d's adjoint of (N, C, D, H, W) (or (C, D, H, W)) input with weights (C, O / groups,
    kd, kh, kw): output (N, O, (D - 1) sd - 2 pd + dd (kd - 1) + opd + 1, ...)."""
    _check_conv_weight("conv_transpose3d", weight, 5,
                       "(in_channels, out_channels / groups, kd, kh, kw)")
    _check_3d_input("conv_transpose3d", input)
    stride, dilation = _pair(stride, "stride", 3), _pair(dilation, "dilation", 3)
    padding = _pair(padding, "padding", 3)
    output_padding = _pair(output_padding, "output_padding", 3)
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0 or min(output_padding) < 0:
        raise RuntimeError(f"conv_transpose3d: stride and dilation must be positive and padding "
                           f"and output_padding non-negative, got stride={stride}, dilation="
                           f"{dilation}, padding={padding}, output_padding={output_padding}")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=True)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got output_padding={output_padding}, stride={stride}, "
                           f"dilation={dilation}")
    in_c, per_group, kd, kh, kw = weight.shape
    if not isinstance(groups, int) or groups < 1 or in_c % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {[list(weight.shape)]} "
                           f"instead")
    out_c = per_group * groups
    if bias is not None and tuple(bias.shape) != (out_c,):
        raise RuntimeError(f"conv_transpose3d: expected a bias of shape ({out_c},), got "
                           f"{tuple(bias.shape)}")
    (sd, *s2), (pd, *p2), (opd, *op2), (dd, *d2) = stride, padding, output_padding, dilation

    def run(x):
        n, c, d, h, w = x.shape
        if c != in_c:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                               f"expected input{list(x.shape)} to have {in_c} channels, but got "
                               f"{c} channels instead")
        depth = (d - 1) * sd - 2 * pd + dd * (kd - 1) + opd + 1
        if depth <= 0:
            raise RuntimeError(f"conv_transpose3d: the output depth would be {depth}; padding "
                               f"{padding} is too large for input {d}x{h}x{w}")
        # each (image, input depth) plane to its kd output planes: out channels (O, kd)
        planes = conv_transpose2d(x.transpose(1, 2).reshape(n * d, c, h, w),
                                  weight.reshape(in_c, per_group * kd, kh, kw), None, s2, p2,
                                  op2, groups, d2)
        oh, ow = planes.shape[2:]
        # columns (N, O OH OW kd, D) of a 1-wide fold along depth
        cols = planes.reshape(n, d, out_c, kd, oh * ow).permute(0, 2, 4, 3, 1)
        out = _col2im(cols.reshape(n, out_c * oh * ow * kd, d), out_c * oh * ow, (d, 1),
                      (kd, 1), (dd, 1), (sd, 1), (depth, 1), (pd, 0))
        out = out.reshape(n, out_c, oh, ow, depth).permute(0, 1, 4, 2, 3).contiguous()
        return out if bias is None else out + bias.reshape(1, out_c, 1, 1, 1)
    return _batched(run, input, 3)


# -- pooling ---------------------------------------------------------------------------------------
def _pool_geometry(size, kernel, stride, padding, dilation, ceil_mode):
    """(output size, extra right padding) along one dim, as torch's pooling_output_shape: with
    ceil_mode the last window may hang over the end, but must start inside the input or its
    left padding."""
    span = dilation * (kernel - 1) + 1
    out = (size + 2 * padding - span + ((stride - 1) if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out, max(0, (out - 1) * stride + span - (size + 2 * padding))


def _given(stride):
    """torch's poolings read stride None or an empty sequence as 'the kernel size'."""
    return stride is not None and (not hasattr(stride, "__len__") or len(stride) > 0)


def _pool_args(fn, kernel_size, stride, padding, dilation, n=2):
    kernel = _pair(kernel_size, "kernel_size", n)
    stride = _pair(stride, "stride", n) if _given(stride) else kernel
    padding, dilation = _pair(padding, "padding", n), _pair(dilation, "dilation", n)
    if min(padding) < 0:
        raise RuntimeError(f"{fn}: pad must be non-negative, got padding={padding}")
    if any(2 * p > k for p, k in zip(padding, kernel, strict=False)):
        raise RuntimeError(f"{fn}: pad should be at most half of effective kernel size, but "
                           f"got pad={padding} and kernel_size={kernel}")
    if min(stride) < 1 or min(kernel) < 1 or min(dilation) < 1:
        raise RuntimeError(f"{fn}: kernel_size, stride and dilation must be positive, got "
                           f"{kernel}, {stride} and {dilation}")
    return kernel, stride, padding, dilation


def _padded(x, sizes, value):
    """x padded by `value` (F.pad's sizes: left, right, top, bottom), or x itself."""
    return pad(x, sizes, value=value) if any(sizes) else x


def _pool_sizes(padding, extra):
    """F.pad's sizes for a pooling's padding (ph, pw) on both sides plus its ceil_mode
    overhang (eh, ew) after."""
    (ph, pw), (eh, ew) = padding, extra
    return pw, pw + ew, ph, ph + eh


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The max of each window (the padding never wins); with return_indices also where it is,
    as a flat index into each input plane (H * W). One kernel each way (ops/pool.py)."""
    kernel, stride, padding, dilation = _pool_args("max_pool2d", kernel_size, stride, padding,
                                                   dilation)
    if input.dtype is dtypes.bool_:
        raise RuntimeError('"max_pool2d" not implemented for \'Bool\'; convert the input with '
                           '.int() or .float()')

    def run(x):
        n, c, h, w = x.shape
        (oh, _), (ow, _) = (_pool_geometry(size, k, s, p, d, ceil_mode) for size, k, s, p, d
                            in zip((h, w), kernel, stride, padding, dilation, strict=False))
        if oh <= 0 or ow <= 0:
            raise RuntimeError(f"max_pool2d: the kernel {kernel} (dilation {dilation}) is larger "
                               f"than the padded input ({h}x{w}): the output would be {oh}x{ow}")
        values, at = _max_pool2d_kernel(x, kernel, stride, padding, dilation, (n, c, oh, ow))
        return values, at if return_indices else None

    values, at = _batched(run, input, 2)
    return (values, at) if return_indices else values


@composite("avg_pool2d")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each window: divided by the window's size within the padded input
    (count_include_pad) or within the input itself, or by divisor_override."""
    kernel, stride, padding, _ = _pool_args("avg_pool2d", kernel_size, stride, padding, 1)
    if divisor_override is not None and (not isinstance(divisor_override, int) or
                                         isinstance(divisor_override, bool) or
                                         divisor_override == 0):
        raise RuntimeError(f"avg_pool2d: divisor must be a non-zero int, got "
                           f"{divisor_override!r}")

    def run(x):
        n, c, h, w = x.shape
        (oh, eh), (ow, ew) = (_pool_geometry(size, k, s, p, 1, ceil_mode) for size, k, s, p
                              in zip((h, w), kernel, stride, padding, strict=False))
        gathered, _, _ = _windows(_padded(x, _pool_sizes(padding, (eh, ew)), 0), kernel, stride,
                                  (1, 1))
        total = gathered.sum(dim=2, dtype=x.dtype).reshape(n, c, oh, ow)
        if divisor_override is not None:
            counts = divisor_override
        else:
            rows, cols = (_window_counts(size, k, s, p, out, count_include_pad, x)
                          for size, k, s, p, out in zip((h, w), kernel, stride, padding, (oh, ow),
                                                        strict=False))
            counts = rows.reshape(oh, 1) * cols.reshape(1, ow)
        # integers divide truncating, in their own dtype, as torch's
        return total / counts if x.dtype.is_floating_point else \
            total.div(counts, rounding_mode="trunc")
    return _batched(run, input, 2)


def _window_counts(size, kernel, stride, padding, out, include_pad, like):
    """How many elements each of the `out` windows along one dim averages, as torch counts
    them: the window clipped to the padded input (include_pad) or to the input itself (a
    ceil_mode overhang never counts)."""
    start = arange(out, device=like.device) * stride - padding
    low, high = (-padding, size + padding) if include_pad else (0, size)
    return ((start + kernel).clamp(max=high) - start.clamp(min=low)).to(like.dtype)


def _one_d(fn, input, kernel_size, stride, padding, *rest, **kw):
    """A 2-d pooling over a height of 1 for (N, C, L) or (C, L) input."""
    k, = _pair(kernel_size, "kernel_size", 1)
    s = _pair(stride, "stride", 1)[0] if _given(stride) else k
    p, = _pair(padding, "padding", 1)
    out = fn(input.unsqueeze(-2), (1, k), (1, s), (0, p), *rest, **kw)
    return tuple(o.squeeze(-2) for o in out) if isinstance(out, tuple) else out.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    d, = _pair(dilation, "dilation", 1)
    return _one_d(max_pool2d, input, kernel_size, stride, padding, (1, d), ceil_mode,
                  return_indices)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _one_d(avg_pool2d, input, kernel_size, stride, padding, ceil_mode,
                  count_include_pad)


def _adaptive_matrix(size, out, dtype, device):
    """(out, size): row i averages input positions floor(i size / out) to ceil((i+1) size /
    out), as torch's adaptive pooling windows."""
    if out == 0:
        return ones(0, size, dtype=dtype, device=device)
    i = arange(out, device=device).reshape(out, 1)
    start, end = (i * size) // out, ((i + 1) * size + out - 1) // out
    j = arange(size, device=device).reshape(1, size)
    inside = ((j >= start) & (j < end)).to(dtype)
    return inside / (end - start).to(dtype)


def adaptive_avg_pool2d(input, output_size):
    """The mean over torch's adaptive windows, output (..., OH, OW) (None keeps a size): a
    product with an averaging matrix on each side."""
    sizes = (output_size, output_size) if isinstance(output_size, int) or output_size is None \
        else tuple(output_size)
    if input.ndim not in (3, 4) or len(sizes) != 2:
        raise RuntimeError(f"adaptive_avg_pool2d: expected a 3-D or 4-D input and 2 output "
                           f"sizes, got {input.ndim}-D input and output_size={output_size!r}")
    h, w = input.shape[-2:]
    oh, ow = (size if out is None else out for size, out in zip((h, w), sizes, strict=False))
    if not h or not w or oh < 0 or ow < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: expected non-empty input planes and "
                           f"non-negative output sizes, got input {tuple(input.shape)} and "
                           f"output_size={output_size!r}")
    rows = _adaptive_matrix(h, oh, input.dtype, input.device)
    cols = _adaptive_matrix(w, ow, input.dtype, input.device)
    return rows @ input @ cols.transpose(0, 1)


def adaptive_avg_pool1d(input, output_size):
    out, = _pair(output_size, "output_size", 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, out)).squeeze(-2)


# -- 3-d, adaptive max, unpooling and power-average pooling ----------------------------------------
# The 3-d and adaptive max poolings find each window's winner index under no_grad (max_pool3d
# with the 2-d kernel over (H, W), then along depth; the adaptive ones a dim at a time, the
# last first), then gather the values at those indices: the gather's rule gives the gradient.
# Winning follows torch's kernels: the first largest element in window order, or the last NaN.
def _winner(v, dim):
    """The index along dim of torch's pooling winner among v's elements: the first largest,
    or the last NaN."""
    at = v.argmax(dim)
    if v.dtype.is_floating_point:
        nan = v.isnan()
        last = v.shape[dim] - 1 - nan.flip(dim).to(int64).argmax(dim)
        at = where(nan.any(dim), last, at)
    return at


def _pool_table(size, out, kernel, stride, padding, dilation):
    """(out, kernel) positions along a dim: window o reads o * stride - padding + k * dilation,
    clipped to the part of the window inside [0, size) (a repeat of a position never changes
    the winner)."""
    taps = np.arange(out)[:, None] * stride - padding + np.arange(kernel)[None, :] * dilation
    inside = (taps >= 0) & (taps < size)
    first = np.where(inside.any(1), taps[np.arange(out), inside.argmax(1)], 0)
    last = np.where(inside.any(1), taps[np.arange(out), kernel - 1 - inside[:, ::-1].argmax(1)], 0)
    return np.clip(taps, first[:, None], last[:, None])


def _adaptive_table(size, out):
    """(out, K) positions along a dim: torch's adaptive window o, floor(o size / out) to
    ceil((o + 1) size / out), its last position repeated up to the widest window's K."""
    o = np.arange(out)
    start, end = o * size // out, ((o + 1) * size + out - 1) // out
    width = int((end - start).max()) if out else 1
    return np.minimum(start[:, None] + np.arange(width)[None, :], end[:, None] - 1)


def _max_along(values, flat, dim, table, step):
    """The winners of the windows `table` (out, K) along dim of values: (their values, their
    indices position * step + flat's there, where flat (values' shape, or None) indexes the
    dims after dim)."""
    out, k = table.shape
    index = tensor(table.reshape(-1), device=values.device)
    windows = values.index_select(dim, index).unflatten(dim, (out, k))
    choice = _winner(windows, dim + 1).unsqueeze(dim + 1)
    positions = index.reshape((1,) * dim + (out, k) + (1,) * (values.ndim - dim - 1))
    at = positions.expand(windows.shape).gather(dim + 1, choice).squeeze(dim + 1) * step
    if flat is not None:
        at = at + flat.index_select(dim, index).unflatten(dim, (out, k)).gather(
            dim + 1, choice).squeeze(dim + 1)
    return windows.gather(dim + 1, choice).squeeze(dim + 1), at


def _gathered(x, at):
    """x's elements at the flat indices `at` of each (image, channel) plane, in at's shape."""
    lead = at.shape[:2]
    return x.reshape(*lead, -1).gather(2, at.reshape(*lead, -1)).reshape(at.shape)


def _check_pool_input(fn, input, n):
    if not isinstance(input, Tensor) or input.ndim not in (n + 1, n + 2) or \
            not math.prod(input.shape[1:]):
        raise RuntimeError(f"{fn}: non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected "
                           f"for input, got {list(getattr(input, 'shape', ()))}")
    if input.dtype is dtypes.bool_:
        raise RuntimeError(f'"{fn}" not implemented for \'Bool\'; convert the input with '
                           f'.int() or .float()')


def _too_small(size, out):
    return RuntimeError(f"Given input size: ({'x'.join(map(str, size))}). Calculated output "
                        f"size: ({'x'.join(map(str, out))}). Output size is too small")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The max of each 3-d window (the padding never wins); with return_indices also where it
    is, as a flat index into each input volume (D * H * W)."""
    kernel, stride, padding, dilation = _pool_args("max_pool3d", kernel_size, stride, padding,
                                                   dilation, 3)
    _check_pool_input("max_pool3d", input, 3)

    def run(x):
        n, c, d, h, w = x.shape
        od, oh, ow = (_pool_geometry(size, k, s, p, dl, ceil_mode)[0] for size, k, s, p, dl
                      in zip((d, h, w), kernel, stride, padding, dilation, strict=True))
        if min(od, oh, ow) <= 0:
            raise _too_small((c, d, h, w), (c, od, oh, ow))
        with no_grad():
            planes, at = _max_pool2d_kernel(x.reshape(n, c * d, h, w), kernel[1:], stride[1:],
                                            padding[1:], dilation[1:], (n, c * d, oh, ow))
            table = _pool_table(d, od, kernel[0], stride[0], padding[0], dilation[0])
            _, at = _max_along(planes.reshape(n, c, d, oh, ow), at.reshape(n, c, d, oh, ow), 2,
                               table, h * w)
        return _gathered(x, at), at if return_indices else None

    values, at = _batched(run, input, 3)
    return (values, at) if return_indices else values


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool1d's (values, indices), whatever return_indices says (as torch's)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool2d's (values, indices), whatever return_indices says (as torch's)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool3d's (values, indices), whatever return_indices says (as torch's)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _strided_sum(x, dim, kernel, stride, out):
    """The sums along dim of the `out` windows of `kernel` elements `stride` apart, one strided
    slice per window element."""
    head = (slice(None),) * dim
    total = None
    for k in range(kernel):
        part = x[(*head, slice(k, k + stride * (out - 1) + 1, stride))]
        total = part if total is None else total + part
    return total


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each 3-d window (as avg_pool2d's), its sum taken a dim at a time."""
    kernel, stride, padding, _ = _pool_args("avg_pool3d", kernel_size, stride, padding, 1, 3)
    _check_pool_input("avg_pool3d", input, 3)
    if divisor_override is not None and (not isinstance(divisor_override, int) or
                                         isinstance(divisor_override, bool) or
                                         divisor_override == 0):
        raise RuntimeError(f"avg_pool3d: divisor must be a non-zero int, got "
                           f"{divisor_override!r}")

    def run(x):
        n, c, *size = x.shape
        geometry = [_pool_geometry(s, k, st, p, 1, ceil_mode) for s, k, st, p
                    in zip(size, kernel, stride, padding, strict=True)]
        outs = [out for out, _ in geometry]
        if min(outs) <= 0:
            (d, h, w), (kd, kh, kw) = size, kernel
            raise RuntimeError(f"input image (T: {d} H: {h} W: {w}) smaller than kernel size "
                               f"(kT: {kd} kH: {kh} kW: {kw})")
        sides = [p for (_, extra), pad in zip(reversed(geometry), reversed(padding), strict=True)
                 for p in (pad, pad + extra)]
        total = _padded(x, sides, 0)
        for i in range(3):
            total = _strided_sum(total, 2 + i, kernel[i], stride[i], outs[i])
        if divisor_override is not None:
            counts = divisor_override
        else:
            counts = 1
            for i in range(3):
                shape = [1, 1, 1]
                shape[i] = outs[i]
                counts = counts * _window_counts(size[i], kernel[i], stride[i], padding[i],
                                                 outs[i], count_include_pad, x).reshape(shape)
        return total / counts if x.dtype.is_floating_point else \
            total.div(counts, rounding_mode="trunc")
    return _batched(run, input, 3)


def _output_sizes_of(fn, output_size, spatial):
    """An adaptive pooling's output sizes: an int, or a sequence whose None keeps a size."""
    n = len(spatial)
    sizes = (output_size,) * n if isinstance(output_size, int) or output_size is None \
        else tuple(output_size)
    if len(sizes) != n:
        raise ValueError(f"{fn}: output_size must be an int or {n} ints (or None), got "
                         f"{output_size!r}")
    sizes = tuple(s if o is None else o for s, o in zip(spatial, sizes, strict=True))
    if min(sizes) < 0:
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {list(sizes)}")
    return sizes


def _check_adaptive_input(fn, input, n):
    if not isinstance(input, Tensor) or input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(getattr(input, 'shape', ()))}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{fn}" not implemented for \'{input.dtype.name}\'; convert '
                                  f'the input with .float()')
    if not math.prod(input.shape[-n:]):
        raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                           f"dimensions, but input has sizes {list(input.shape)}")


def adaptive_avg_pool3d(input, output_size):
    """The mean over torch's adaptive windows, output (..., OD, OH, OW) (None keeps a size), a
    dim at a time: each window's elements gathered and summed (not a product with an averaging
    matrix, whose zeros would spread a NaN)."""
    _check_adaptive_input("adaptive_avg_pool3d", input, 3)
    spatial = input.shape[-3:]
    outs = _output_sizes_of("adaptive_avg_pool3d", output_size, spatial)
    x = input
    for i in range(3):
        dim = input.ndim - 3 + i
        table = _adaptive_table(spatial[i], outs[i])
        out, k = table.shape
        counts = np.diff(table, axis=1, prepend=-1) > 0  # (a repeat of the last is no element)
        windows = x.index_select(dim, tensor(table.reshape(-1), device=x.device))
        shape = (out, k) + (1,) * (input.ndim - 1 - dim)
        windows = where(tensor(counts, device=x.device).reshape(shape),
                        windows.unflatten(dim, (out, k)), 0)
        x = windows.sum(dim + 1) / tensor(counts.sum(1), dtype=x.dtype,
                                          device=x.device).reshape(shape[:1] + shape[2:])
    return x


def _adaptive_max_pool(fn, input, output_size, n):
    """(values, indices) of the n-d adaptive max pooling: the indices flat in each plane."""
    _check_adaptive_input(fn, input, n)
    *lead, = input.shape[:-n]
    spatial = tuple(input.shape[-n:])
    outs = _output_sizes_of(fn, output_size, spatial)
    x = input.reshape(-1, *spatial)
    if not math.prod(outs) or not x.shape[0]:
        return (zeros(*lead, *outs, dtype=input.dtype, device=input.device),
                zeros(*lead, *outs, dtype=int64, device=input.device))
    with no_grad():
        values, at, step = x, None, 1
        for i in reversed(range(n)):
            values, at = _max_along(values, at, 1 + i, _adaptive_table(spatial[i], outs[i]), step)
            step *= spatial[i]
    at = at.reshape(1, *at.shape)
    return _gathered(x.unsqueeze(0), at).reshape(*lead, *outs), at.reshape(*lead, *outs)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_pool("adaptive_max_pool1d", input, output_size, 1)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_pool("adaptive_max_pool2d", input, output_size, 2)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_pool("adaptive_max_pool3d", input, output_size, 3)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """The max over torch's adaptive windows; with return_indices also where it is."""
    out = _adaptive_max_pool("adaptive_max_pool1d", input, output_size, 1)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The max over torch's adaptive windows; with return_indices also where it is."""
    out = _adaptive_max_pool("adaptive_max_pool2d", input, output_size, 2)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The max over torch's adaptive windows; with return_indices also where it is."""
    out = _adaptive_max_pool("adaptive_max_pool3d", input, output_size, 3)
    return out if return_indices else out[0]


def _unpool_size(input, kernel, stride, padding, output_size):
    """torch's _unpool_output_size: the default size, or output_size (spatial, or with the
    batch and channel dims) within a stride of it."""
    n = len(kernel)
    default = [(s - 1) * st - 2 * p + k for s, k, st, p in
               zip(input.shape[-n:], kernel, stride, padding, strict=True)]
    if output_size is None:
        return default
    sizes = list(output_size)
    if len(sizes) == n + 2:
        sizes = sizes[2:]
    if len(sizes) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(sizes)}'")
    for d in range(n):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < sizes[d] < high:
            raise ValueError(f'invalid output_size "{sizes}" (dim {d} must be between {low} '
                             f'and {high})')
    return sizes


def _max_unpool(fn, input, indices, kernel_size, stride, padding, output_size, n):
    """Each input element put at its index in its zeroed output plane (max pooling's inverse
    where the indices came from it)."""
    kernel = _pair(kernel_size, "kernel_size", n)
    stride = _pair(stride, "stride", n) if _given(stride) else kernel
    padding = _pair(padding, "padding", n)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}: Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{list(input.shape)}")
    if indices.dtype is not int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    sizes = _unpool_size(input, kernel, stride, padding, output_size)
    lead, plane = input.shape[:-n], math.prod(sizes)
    length = math.prod(input.shape[-n:])
    x, at = input.reshape(-1, length), indices.reshape(-1, length)
    bad = at[(at < 0) | (at >= plane)]
    if bad.numel():  # (torch names the first; its 1-d form runs as 2-d with a width of 1)
        raise RuntimeError(f"Found an invalid max index: {int(bad[0])} (output volumes are of "
                           f"size {'x'.join(map(str, sizes if n > 1 else (*sizes, 1)))})")
    out = zeros(x.shape[0], plane, dtype=input.dtype, device=input.device).scatter(1, at, x)
    return out.reshape(*lead, *sizes)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride, padding,
                       output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding,
                       output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding,
                       output_size, 3)


def _lp_pool(avg, input, norm_type, kernel_size, stride, ceil_mode, n):
    """torch's power-average pooling: (window size * mean(x ** p)) ** (1 / p), negative means
    (odd p) taken as 0."""
    kernel = _pair(kernel_size, "kernel_size", n)
    out = avg(input.pow(norm_type), kernel_size, stride if _given(stride) else None, 0,
              ceil_mode)
    return (out.sign() * relu(out.abs())).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool3d, input, norm_type, kernel_size, stride, ceil_mode, 3)


# -- fractional max pooling ------------------------------------------------------------------------
# torch's pseudo-random windows (Graham 2014): along a dim of `size` elements, output i's window
# of k starts at int((i + u) * alpha) - int(u * alpha), alpha = (size - k) / (out - 1), and the
# last one at size - k, with one sample u in [0, 1) per plane and dim, computed in the input's
# float type as torch's kernel computes it. The windows' elements are gathered, the max of each
# picked without grad, then the values gathered at the picks: the gradient flows through that
# gather.
def _fractional_starts(samples, size, out, kernel):
    """(planes, out) window starts along one dim for `samples` (planes,), a NumPy array of the
    input's float type."""
    ft = samples.dtype.type
    starts = np.full((len(samples), out), size - kernel, np.int64)
    if out > 1:
        alpha = ft(size - kernel) / ft(out - 1)
        steps = np.arange(out - 1).astype(samples.dtype)[None, :] + samples[:, None]
        starts[:, :-1] = (steps * alpha).astype(np.int64) - \
            (samples * alpha).astype(np.int64)[:, None]
    return starts


def _fractional_ints(fn, name, value, n):
    """kernel_size or output_size as n ints, with torch's error."""
    values = (value,) * n if _is_int(value) else tuple(value)
    if len(values) == 1:
        values *= n
    if len(values) != n:
        raise RuntimeError(f"{fn}: {name} must either be a single Int or tuple of "
                           f"{'Ints' if n == 2 else 'three Ints'}")
    return tuple(int(v) for v in values)


def _fractional_max_pool(fn, n, input, kernel_size, output_size, samples):
    """(values, indices) of n-d fractional max pooling, the checks of torch's kernel first."""
    kernel = _fractional_ints(fn, "kernel_size", kernel_size, n)
    out = _fractional_ints(fn, "output_size", output_size, n)
    if min(kernel) < 1:
        raise RuntimeError(f"{fn}: kernel_size must be greater than 0, got {kernel}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for d in range(input.ndim - n - 1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {d} being "
                               f"empty.")
    x = input if input.ndim == n + 2 else input.unsqueeze(0)
    batch, planes, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
    names = ("height", "width") if n == 2 else ("time", "height", "width")
    for name, size, k, o in zip(names, sizes, kernel, out, strict=True):
        # (torch's 3-d check is strict: a window can't end at the last element)
        if o + k - 1 > size or n == 3 and o + k - 1 == size:
            raise RuntimeError(f"{fn}{'' if n == 2 else '_out'}(): pool {name} {k} too large "
                               f"relative to input {name} {size}")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                           f"{samples.shape[2]}.")
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"{fn}" not implemented for {input.dtype.name} input; convert it '
                           f'with .float()')
    same_device(fn, input, samples)
    u = samples.detach().cpu().numpy()[:batch].reshape(batch * planes, n)
    # flat index into its plane of each window element, (planes, *out, *kernel)
    at = np.zeros((batch * planes,) + out + kernel, np.int64)
    stride = 1
    for d in reversed(range(n)):
        # torch's 2-d kernel reads a plane's W sample first; its 3-d one T, H, W in order
        column = (1 - d) if n == 2 else d
        pos = _fractional_starts(u[:, column], sizes[d], out[d], kernel[d])[:, :, None] + \
            np.arange(kernel[d])
        view = [len(u)] + [1] * (2 * n)
        view[1 + d], view[1 + n + d] = out[d], kernel[d]
        at += pos.reshape(view) * stride
        stride *= sizes[d]
    n_out, width = math.prod(out), math.prod(kernel)
    flat = x.reshape(batch, planes, -1)
    at = tensor(at.reshape(batch, planes, n_out * width), device=x.device)
    with no_grad():
        windows = flat.gather(2, at).reshape(batch, planes, n_out, width)
        pick = windows.argmax(-1)
        nan = windows.isnan()  # torch's kernel keeps the last NaN of a window
        last_nan = (width - 1) - nan.flip(-1).to(int64).argmax(-1)
        pick = where(nan.any(-1), last_nan, pick)
        at = at.reshape(batch, planes, n_out, width).gather(3, pick.unsqueeze(3)).squeeze(3)
    values = flat.gather(2, at).reshape(batch, planes, *out)
    at = at.reshape(batch, planes, *out)
    return (values, at) if input.ndim == n + 2 else (values.squeeze(0), at.squeeze(0))


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of 2-d fractional max pooling: kH x kW windows at pseudo-random steps
    that cover the input in output_size (or output_ratio times the input's size) windows per
    dim, from one sample per plane and dim (`_random_samples` (N, C, 2): W's, then H's; drawn
    from jitensor's generator when not given). The indices are flat into each plane (H * W),
    as torch's; given the samples, both equal torch's."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                             "Int or tuple of Ints.")
        ratio = tuple(output_ratio)
        output_size = [int(input.size(-2) * ratio[0]), int(input.size(-1) * ratio[1])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = rand(n_batch, input.size(-3), 2, dtype=input.dtype,
                               device=input.device)
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """fractional_max_pool2d_with_indices's values, and with return_indices its indices."""
    values, at = fractional_max_pool2d_with_indices(input, kernel_size, output_size,
                                                    output_ratio, return_indices,
                                                    _random_samples)
    return (values, at) if return_indices else values


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of 3-d fractional max pooling, as the 2-d one over kT x kH x kW
    windows; `_random_samples` is (N, C, 3): T's, H's, then W's samples. The indices are flat
    into each volume (T * H * W)."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        ratio = (output_ratio,) * 3 if isinstance(output_ratio, (int, float)) else \
            tuple(output_ratio)
        output_size = [int(input.size(-3) * ratio[0]), int(input.size(-2) * ratio[1]),
                       int(input.size(-1) * ratio[2])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 4 else input.size(0)
        _random_samples = rand(n_batch, input.size(-4), 3, dtype=input.dtype,
                               device=input.device)
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """fractional_max_pool3d_with_indices's values, and with return_indices its indices."""
    values, at = fractional_max_pool3d_with_indices(input, kernel_size, output_size,
                                                    output_ratio, return_indices,
                                                    _random_samples)
    return (values, at) if return_indices else values


# -- batch norm ------------------------------------------------------------------------------------
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) by the batch's mean and biased variance when training
    (one kernel, ops/norm.py; running_mean and running_var are updated in place: momentum
    blends them, the variance unbiased), else by the running statistics; then scale and shift
    per channel."""
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected at least 2-D input (N, C, ...), got "
                         f"{input.ndim}-D")
    c = input.shape[1]
    along = [1, c] + [1] * (input.ndim - 2)
    if (running_mean is None) != (running_var is None):
        raise RuntimeError("batch_norm: pass both running_mean and running_var, or neither")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):  # all checked before any is updated
        if t is not None and (t.device != input.device or t.numel() != c):
            raise RuntimeError(f"batch_norm: {name} should contain {c} elements on "
                               f"{input.device}, not {t.numel()} on {t.device}")
    if not input.numel():
        return input * 1  # (an empty batch: nothing to normalise, no statistics to update)
    if training:
        count = input.numel() // c
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        if not input.dtype.is_floating_point:
            raise RuntimeError(f"batch_norm: not implemented for {input.dtype.name} input; "
                               f"convert it with .float()")
        params = []
        for name, t in (("weight", weight), ("bias", bias)):
            if t is not None and t.dtype is not input.dtype:
                if not (input.dtype in dtypes.NARROW and t.dtype is dtypes.float32):
                    raise RuntimeError(f"batch_norm: expected {name} to have input's dtype "
                                       f"{input.dtype.name}, got {t.dtype.name}; convert it "
                                       f"with .to({input.dtype})")
                t = t.to(input.dtype)  # (float32 params of float16 input, as torch's)
            params.append(None if t is None else t.reshape(c))
        stats = _norm.batch_statistics(input)
        out = _norm.native_batch_norm(input, *params, float(eps), stats)
        if running_mean is not None:  # (and running_var: both or neither, checked above)
            with no_grad():
                running_mean.mul_(1 - momentum).add_(stats[2] * momentum)
                running_var.mul_(1 - momentum).add_(stats[3] * (momentum * count / (count - 1)))
        return out
    if running_mean is None:
        raise RuntimeError("batch_norm: running_mean and running_var are needed when not "
                           "training")
    mean, var = running_mean.reshape(along), running_var.reshape(along)
    # per channel: x * scale + shift, two passes over the input (the channel's numbers are tiny)
    scale = (var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight.reshape(along)
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias.reshape(along)
    return input * scale + shift


# -- group, instance and local response norms ------------------------------------------------------
# group_norm and instance_norm normalise with the fused layer_norm kernel (ops/norm.py) over a
# reshaped view ((N, G, C/G * spatial) and (N, C, spatial)), so they are one pass forward and one
# backward; the affine scale and shift are per channel. local_response_norm is torch's own
# composition (a sum over a window of channels of the squared input), built from slices.
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
    out = layer_norm(input.reshape(n, num_groups, per_group), (per_group,), eps=eps)
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
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum,
                            eps)
    _check_floating("instance_norm", input)
    spatial = math.prod(input.shape[2:])
    flat = input.reshape(n, c, spatial)
    out = layer_norm(flat, (spatial,), eps=eps).reshape(input.shape)
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
    squares = pad(input * input, [0, 0] * (input.ndim - 2) + [size // 2, (size - 1) // 2])
    total = squares.narrow(1, 0, c)
    for i in range(1, size):
        total = total + squares.narrow(1, i, c)
    return input / (total / size * alpha + k).pow(beta)


# -- channel-wise, alpha and feature alpha dropout -------------------------------------------------
# Channel-wise dropout (dropout1d, dropout2d, dropout3d), alpha dropout and feature alpha
# dropout as torch's ATen `_dropout_impl`: one mask draw from jitensor's generator (`rand` >= p
# keeps, so P(keep) = 1 - p), over the whole input or over (N, C, 1, ...) for the channel-wise
# forms, multiplied in (and, for alpha dropout, an offset added), so the gradient is the mask
# times its scale. p = 0, eval mode and an empty input return the input itself; p = 1
# multiplies by 0 (alpha dropout included, as torch).
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


# -- distances -------------------------------------------------------------------------------------
def pdist(input, p=2):
    """The p-norm distances ||x_i - x_j||_p between rows i < j of the (N, M) input, in the
    order of torch's (row 0 against 1, ..., N-1, then row 1 against 2, ...): N (N - 1) / 2 of
    them. As torch's, the gradient of p = inf goes in full to every difference that reaches the
    maximum (the norm's own splits it between ties), and a zero distance passes none."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pdist(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype.name}; "
                           f"convert the input with .float()")
    if not p >= 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    n = input.shape[0]
    rows, cols = triu_indices(n, n, 1, device=input.device)
    diff = input[rows] - input[cols]
    if input.shape[1] == 0:
        return diff.sum(1)  # (rows of nothing are 0 apart for every p; amax would refuse them)
    if p != math.inf:
        return diff.norm(p, 1)
    size = diff.abs()
    top = size.amax(1, keepdim=True).detach()
    # top plus zeros whose gradient is sign(diff) at each maximal difference
    return (top + ((size - top) * (size == top)).sum(1, keepdim=True)).squeeze(1)


# -- margin, embedding, Poisson and Gaussian losses ------------------------------------------------
# Each composed from jitensor's ops as torch's ATen (or Python) formula is, so autograd
# differentiates it and it runs on every device; where torch's kernel counts a term only when it
# is positive (z > 0), a `where` does, so the gradient at 0 is 0 as there.
def _tensors(fn, **tensors):
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(t).__name__}")


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target (input1 - input2) + margin): target 1 asks input1 to rank above input2
    by margin, -1 below; the three broadcast but must have one rank."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where it is -1 (input: a distance;
    other target values count both terms, as torch's formula does)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("hinge_embedding_loss", input=input, target=target)
    apart = where(target != 1, (margin - input).clamp_min(0), 0.0)
    near = where(target != -1, input, 0.0)
    return _reduce(apart + near, reduction)


_EPSILON = 1e-12  # ATen's, added to each squared magnitude of cosine_embedding_loss


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1 (0
    elsewhere), the cosine taken over the last dim of (N, D) inputs with an (N,) target, or
    of (D,) inputs with a 0-d one; eps 1e-12 is added to each squared magnitude."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    d = target.ndim
    if d > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if (input1.ndim, input2.ndim) != (d + 1, d + 1):
        raise RuntimeError(f"{d}D target tensor expects {d + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    products = (input1 * input2).sum(d)
    square1 = (input1 * input1).sum(d) + _EPSILON
    square2 = (input2 * input2).sum(d) + _EPSILON
    cos = products / (square1 * square2).sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0),
                                                    0.0)
    return _reduce(loss, reduction)


def _float_input(fn, input):
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}(): result type Float can't be cast to the desired output "
                           f"type {input.dtype.name}; convert the input with .float()")


@composite("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target input)), the logistic loss of targets 1 and -1 (torch's formula as
    written, so it overflows to inf where -target input passes ~88 in float32, as torch's);
    target broadcasts into input's shape."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("soft_margin_loss", input=input, target=target)
    _float_input("soft_margin_loss", input)
    _fits("soft_margin_loss", input, target=target)
    return _reduce((-input * target).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)) averaged over the classes (the last dim),
    each class weighted by `weight`: one loss per sample."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("multilabel_soft_margin_loss", input=input, target=target)
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions: "
                         "multilabel_soft_margin_loss takes classes in the input's last dim")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    classes = input.ndim - 1
    return _reduce(loss.sum(classes) / input.shape[classes], reduction)


def _margin_rows(fn, input):
    """(input as (N, C) rows, C): a 0-d input is one sample of one class, a 1-D one one
    sample; the classes may not be empty (torch's check)."""
    n = input.ndim
    if not (n == 2 and input.shape[1] != 0 or n == 1 and input.shape[0] != 0 or n == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"{fn}(): not implemented for {input.dtype.name} input; "
                                  f"convert it with .float()")
    rows = input.reshape(1, 1) if n == 0 else input.unsqueeze(0) if n == 1 else input
    return rows, rows.shape[1]


def _long_target(target):
    if target.dtype is not int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name} (the "
                           f"target holds class indices); convert it with .long()")


def _in_range(fn, target, low, high, message):
    """Every target value within [low, high) (read back from the device: torch's CUDA kernels
    assert it there)."""
    if target.numel() and not (target.min().item() >= low and target.max().item() < high):
        raise RuntimeError(f"{fn}(): {message}: values must be in [{low}, {high}), got "
                           f"[{target.min().item()}, {target.max().item()}]")


@composite("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: for each sample x of class y, the sum over the other
    classes i of max(0, margin - x[y] + x[i])^p (p 1 or 2), times weight[y], over the class
    count C. input is (N, C), (C,) or a 0-d score; target holds N class indices (int64)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("multi_margin_loss", input=input, target=target)
    if p != 1 and p != 2:
        raise ValueError(f"only p == 1 and p == 2 supported, got p={p}")
    if weight is not None and weight.ndim != 1:
        raise ValueError(f"weight must be one-dimensional, got a {weight.ndim}-D weight")
    rows, classes = _margin_rows("multi_margin_loss", input)
    frames = rows.shape[0]
    if target.ndim > 1 or target.numel() != frames:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{frames}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    _long_target(target)
    if weight is not None:
        if weight.numel() != classes:
            raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                               f"{list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype.name} but found "
                               f"{weight.dtype.name} (weight must have the input's dtype)")
    _in_range("multi_margin_loss", target, 0, classes, "target out of range")
    labels = target.reshape(frames, 1)
    z = margin - rows.gather(1, labels) + rows
    counted = (arange(classes, device=input.device) != labels) & (z > 0)
    h = z if p == 1 else z * z
    if weight is not None:
        h = h * weight[labels]
    loss = where(counted, h, 0.0).sum(1) / classes
    if reduction == "none" and target.ndim == 0:
        return loss.reshape(())
    return _reduce(loss, reduction)


@composite("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: each sample's target row lists its classes (int64), ended
    by the first -1; the loss sums max(0, 1 - x[j] + x[i]) over its listed classes j (a class
    listed twice counts twice) and the classes i not listed, over the class count C. The
    pairs are a (N, C, C) tensor (torch's kernel loops over the same pairs)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("multilabel_margin_loss", input=input, target=target)
    rows, classes = _margin_rows("multilabel_margin_loss", input)
    frames = rows.shape[0]
    if input.ndim <= 1 and not (target.ndim <= 1 and target.numel() == classes) or \
            input.ndim == 2 and tuple(target.shape) != (frames, classes):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    _long_target(target)
    _in_range("multilabel_margin_loss", target, -1, classes, "argument #2 'target' is out of "
              "range")
    labels = target.reshape(frames, classes)
    listed = (labels < 0).cumsum(1) == 0  # (before the first -1)
    labels = labels.clamp_min(0)
    is_target = (listed.unsqueeze(2) & (labels.unsqueeze(2) == arange(classes,
                                                                      device=input.device))
                 ).any(1)
    z = 1 - rows.gather(1, labels).unsqueeze(2) + rows.unsqueeze(1)  # z[n, j, i]
    counted = listed.unsqueeze(2) & is_target.logical_not().unsqueeze(1) & (z > 0)
    loss = where(counted, z, 0.0).sum((1, 2)) / classes
    if reduction == "none" and target.ndim <= 1:
        return loss.reshape(())
    return _reduce(loss, reduction)


def _check_triplet(anchor, positive, negative, margin):
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, "
                           f"and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with d the pairwise
    p-distance over the last dim (eps added to the differences); `swap` takes the smaller of
    d(anchor, negative) and d(positive, negative)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    _check_triplet(anchor, positive, negative, margin)
    positive_distance = pairwise_distance(anchor, positive, p, eps)
    negative_distance = pairwise_distance(anchor, negative, p, eps)
    if swap:
        negative_distance = minimum(negative_distance,
                                    pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + positive_distance - negative_distance).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """triplet_margin_loss with any distance_function(x1, x2) -> distances (by default
    pairwise_distance)."""
    reduction = _legacy_reduction(None, None, reduction)
    _tensors("triplet_margin_with_distance_loss", anchor=anchor, positive=positive,
             negative=negative)
    _check_triplet(anchor, positive, negative, margin)
    if distance_function is None:
        distance_function = pairwise_distance
    positive_distance = distance_function(anchor, positive)
    negative_distance = distance_function(anchor, negative)
    if swap:
        negative_distance = minimum(negative_distance, distance_function(positive, negative))
    return _reduce((margin + positive_distance - negative_distance).clamp_min(0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """The negative log likelihood of target under Poisson(rate): exp(input) - target input
    when input is the log rate (log_input), else input - target log(input + eps); `full` adds
    Stirling's approximation of log(target!), for targets above 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensors("poisson_nll_loss", input=input, target=target)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The negative log likelihood of target under N(input, var): 0.5 (log var + (input -
    target)^2 / var), plus 0.5 log(2 pi) when `full`. var is input's shape, or has one dim
    less or one dim of size 1 (one variance shared along it), or is a number. It is clamped
    at eps under no_grad, as torch: its gradient is that of the clamped value."""
    _tensors("gaussian_nll_loss", input=input, target=target)
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif not isinstance(var, Tensor):
        raise TypeError(f"gaussian_nll_loss(): argument 'var' must be a Tensor or a float, not "
                        f"{type(var).__name__}")
    elif var.numel() and (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)  # one variance per row, shared along the last dim
        elif not (input.ndim == var.ndim and
                  sum(v for i, v in zip(input.shape, var.shape, strict=False) if i != v) == 1):
            raise ValueError(f"var is of incorrect size: var of shape {list(var.shape)} for "
                             f"input of shape {list(input.shape)} must have input's shape, or "
                             f"its shape without the last dim, or a 1 in one of its dims")
    reduction = _legacy_reduction(None, None, reduction)
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# -- CTC -------------------------------------------------------------------------------------------
def _ctc_lengths(lengths, name):
    """A length argument (a tensor of integers, or a tuple or list of ints) as host int64."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.category != 1:
            raise RuntimeError(f"{name} must be integral, got {lengths.dtype.name}")
        return np.array(lengths.cpu().numpy(), np.int64).reshape(-1)
    return np.array(lengths, np.int64).reshape(-1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The Connectionist Temporal Classification loss: -log of the summed probability of every
    alignment of each target to its input frames. log_probs is (T, N, C) (or (T, C), one
    sequence) of log-probabilities; targets (N, S) padded or the N targets concatenated (1-D);
    the lengths are tensors of integers or tuples/lists of ints. 'mean' divides each loss by
    its target length, then averages, as torch. zero_infinity makes impossible alignments
    (infinite losses) and their gradients 0. One kernel each way (ops/loss.py), each batch
    element one task; on CUDA the recursion runs on the host and the results move back to the
    device. Unlike torch's CPU kernel, which reads out of bounds, a target label outside
    [0, C) raises."""
    for name, t in (("log_probs", log_probs), ("targets", targets)):
        if not isinstance(t, Tensor):
            raise TypeError(f"ctc_loss(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor) or not all(
            isinstance(x, (Tensor, list, tuple)) for x in (input_lengths, target_lengths)):
        raise TypeError(f"ctc_loss(): input_lengths and target_lengths must both be Tensors or "
                        f"both tuples or lists of ints, got {type(input_lengths).__name__} and "
                        f"{type(target_lengths).__name__}")
    reduction = _legacy_reduction(None, None, reduction)
    same_device("ctc_loss", log_probs, targets)
    in_lengths = _ctc_lengths(input_lengths, "input_lengths")
    tg_lengths = _ctc_lengths(target_lengths, "target_lengths")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss(): expected 3-dimensional (T, N, C) log_probs (or 2-D "
                           f"(T, C) unbatched), got {log_probs.ndim}-dimensional")
    if lp.dtype not in (float32, float64):
        raise NotImplementedError(f'"ctc_loss" not implemented for {lp.dtype.name} log_probs; '
                                  f'convert them with .float() or .double()')
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"ctc_loss(): expected 1 to 2 dimensions for targets, got "
                           f"{targets.ndim}-dimensional targets")
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError(f"ctc_loss(): blank must be in label range [0, {c}), got {blank}")
    for name, lengths in (("input_lengths", in_lengths), ("target_lengths", tg_lengths)):
        if len(lengths) != n:
            raise RuntimeError(f"ctc_loss(): {name} must be of size batch_size ({n}), got "
                               f"{len(lengths)}")
        if n and lengths.min() < 0:
            raise RuntimeError(f"ctc_loss(): expected {name} to have value at least 0, but got "
                               f"value {lengths.min()}")
    if n and in_lengths.max() > t_max:
        raise RuntimeError(f"ctc_loss(): expected input_lengths to have value at most {t_max}, "
                           f"but got value {in_lengths.max()}")
    labels = np.array(targets.cpu().numpy(), np.int64)
    longest = int(tg_lengths.max()) if n else 0
    if labels.ndim == 1:  # concatenated
        offsets = np.concatenate(([0], np.cumsum(tg_lengths)[:-1])).astype(np.int64)
        if len(labels) != tg_lengths.sum():
            raise RuntimeError(f"ctc_loss(): expected targets to have size {tg_lengths.sum()} "
                               f"(the sum of target_lengths) at dimension 0, got "
                               f"{len(labels)}")
        used = labels
    else:
        if labels.shape[0] != n:
            raise RuntimeError(f"ctc_loss(): expected targets to have size {n} at dimension 0, "
                               f"got {labels.shape[0]}")
        if labels.shape[1] < longest:
            raise RuntimeError(f"ctc_loss(): expected targets to have size at least {longest} "
                               f"at dimension 1 (the longest target), got {labels.shape[1]}")
        offsets = np.arange(n, dtype=np.int64) * labels.shape[1]
        used = labels[np.arange(labels.shape[1]) < tg_lengths[:, None]]
        labels = labels.reshape(-1)
    if used.size and (used.min() < 0 or used.max() >= c):
        raise RuntimeError(f"ctc_loss(): target labels must be in [0, {c}), got "
                           f"[{used.min()}, {used.max()}]")
    alpha = zeros((n, t_max, 2 * longest + 1), dtype=lp.dtype, device="cpu")  # (on any device)
    loss = _loss.ctc_loss(lp, labels, offsets, 1, in_lengths, tg_lengths, int(blank),
                          bool(zero_infinity), alpha)
    if zero_infinity:
        loss = where(loss == math.inf, 0.0, loss)
    if reduction == "mean":
        divisor = tensor(np.maximum(tg_lengths, 1), dtype=lp.dtype, device=lp.device)
        return (loss / divisor).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss.squeeze(0)


# -- resampling: interpolate, the shuffles, fold and unfold ----------------------------------------
# interpolate is separable: along each spatial dim the output is a weighted sum of a few input
# positions (1 for nearest, 2 for linear, 4 for cubic) gathered with index_select, the positions
# and weights computed on the host exactly as torch's CPU kernels compute them (UpSample.h: the
# scale in the kernel's "opmath" precision, float32 for float32 and float16 input, float64 for
# float64; the same floors and clamps), so the positions picked are torch's. Gradients flow
# through index_select (an index_add backward) and the products; area is adaptive average
# pooling, one averaging matrix product per dim. The shuffles are reshapes and permutes. unfold
# stacks one strided slice per kernel element (_windows, as avg_pool2d); fold adds each kernel
# element's block back with index_add onto the flattened padded output.
_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
# the input rank each interpolating mode needs (the others take 3-D, 4-D and 5-D input)
_RANK = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_CUBIC_A = -0.75  # torch's (and OpenCV's) bicubic coefficient


# -- interpolate ---------------------------------------------------------------------------------
def _is_int(v):
    return hasattr(v, "__index__") and not isinstance(v, bool)


def _output_sizes(input, size, scale_factor, recompute_scale_factor, mode):
    """(output sizes, scale factors passed to the kernel or None per dim), as torch's
    interpolate works them out."""
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and output size of {size}. Please "
                                 f"provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 f"output size in (o1, o2, ...,oK) format.")
            if not all(_is_int(v) for v in size):
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, "
                                f"int] or Tuple[int, int, int], but got size with types "
                                f"{[type(v) for v in size]}")
            sizes = [operator.index(v) for v in size]
        elif _is_int(size):
            sizes = [operator.index(size)] * dim
        else:
            raise TypeError(f"expected size to be an int or a sequence of ints, got {size!r}")
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return sizes, [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(input.shape[2:])} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                             f"...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    # the size is the truncated product (C++'s int64 conversion of input_size * scale)
    sizes = [int(n * s) for n, s in zip(input.shape[2:], scales, strict=False)]
    if recompute_scale_factor or mode == "area":  # ("area" always recomputes)
        return sizes, [None] * dim
    return sizes, scales


def _source_scale(n_in, n_out, align_corners, scale, ft):
    """torch's area_pixel_compute_scale in precision ft: output position -> input position."""
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    return ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in) / ft(n_out)


def _source_index(scale, i, align_corners, cubic, ft):
    """torch's area_pixel_compute_source_index (vectorised over output positions i)."""
    if align_corners:
        return scale * i.astype(ft)
    real = scale * (i.astype(ft) + ft(0.5)) - ft(0.5)
    return real if cubic else np.where(real < 0, ft(0), real)


def _nearest_position(mode, n_in, n_out, scale, ft, channels_last):
    """The input position each output position of a nearest mode reads, as torch's kernels
    round it: floorf rounds the position to float first. Its channels-last kernel maps with a
    float scale; its generic kernel with one in ft, where its compiler fuses nearest-exact's
    scale * (i + 0.5) - 0.5 into one rounding (an FMA)."""
    i = np.arange(n_out, dtype=np.int64)
    if channels_last:
        s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
            np.float32(n_in) / np.float32(n_out)
        if mode == "nearest-exact":
            real = (i + 0.5) * np.float64(s)
        elif n_out in (n_in, 2 * n_in):  # (special-cased without floats)
            return i if n_out == n_in else i >> 1
        else:
            real = i.astype(np.float32) * s
    else:
        s = _source_scale(n_in, n_out, False, scale, ft)
        if mode == "nearest":
            real = _source_index(s, i, True, False, ft)
        else:
            fused = (np.longdouble(s) * (i + 0.5) - 0.5).astype(ft)
            real = np.maximum(fused, ft(0)).astype(np.float64) + 0.5
    return np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), n_in - 1)


def _taps(mode, n_in, n_out, align_corners, scale, ft):
    """[(input positions (n_out,), weights (n_out,) or None)] for one dim of a linear or cubic
    mode: the output at i is the sum of weight * input[position] over the taps."""
    i = np.arange(n_out, dtype=np.int64)
    s = _source_scale(n_in, n_out, align_corners, scale, ft)
    if mode == "linear":
        if n_in == n_out:  # (torch copies: no weights)
            return [(i, None)]
        real = _source_index(s, i, align_corners, False, ft)
        low = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
        w1 = np.clip(real - low.astype(ft), ft(0), ft(1)).astype(ft)
        high = low + (low < n_in - 1)
        return [(low, (ft(1) - w1).astype(ft)), (high, w1)]
    # cubic: four taps around floor(real), clamped to the border, Keys' kernel with A = -0.75
    real = _source_index(s, i, align_corners, True, ft)
    low = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    t = np.clip(real - low.astype(ft), ft(0), ft(1)).astype(ft)
    a = ft(_CUBIC_A)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + ft(1)), near(t), near(ft(1) - t), far((ft(1) - t) + ft(1)))
    return [(np.clip(low - 1 + j, 0, n_in - 1), w.astype(ft)) for j, w in enumerate(weights)]


def _resample(x, d, taps):
    """x's dim d resampled: the sum over taps of weight * x.index_select(d, positions). The
    weights are laid out over dim d and the dims after it, so they broadcast over leading dims
    only (a weight broadcast along the trailing dims measured slower)."""
    out = None
    trailing = tuple(x.shape[d + 1:])
    for at, w in taps:
        picked = x.index_select(d, tensor(at, device=x.device))
        if w is not None:
            w = np.ascontiguousarray(np.broadcast_to(w.reshape((-1,) + (1,) * len(trailing)),
                                                     w.shape + trailing))
            picked = picked * tensor(w, dtype=x.dtype, device=x.device)
        out = picked if out is None else out + picked
    return out


def _area(x, d, n_out):
    """Adaptive average pooling of x's dim d to n_out: a product with torch's averaging
    matrix (windows floor(i n / out) .. ceil((i + 1) n / out))."""
    m = _adaptive_matrix(x.shape[d], n_out, x.dtype, x.device)
    return (x.transpose(d, -1) @ m.transpose(0, 1)).transpose(d, -1)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims (all but the first two) of a 3-D, 4-D or 5-D input to `size`,
    or by `scale_factor` (the output size truncated; the factor itself, not the sizes' ratio,
    maps positions unless recompute_scale_factor). Modes: nearest (torch's floor(i * scale)),
    nearest-exact (floor((i + 0.5) * scale)), linear / bilinear / trilinear, bicubic (A=-0.75,
    taps clamped at the border) with align_corners, and area (adaptive average pooling)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    sizes, scales = _output_sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                             "requires a 4-D tensor as input")
        raise NotImplementedError("interpolate(antialias=True) is not implemented in "
                                  "jitensor; use antialias=False, or mode='area' to "
                                  "downsample without aliasing")
    if mode not in _MODES or input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.ndim}D) for the modes: {' | '.join(_MODES)} "
                                  f"(got {mode})")
    if mode in _RANK and input.ndim != _RANK[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_RANK[mode]}D input")
    spatial = tuple(input.shape[2:])
    if min(spatial) <= 0 or min(sizes) <= 0:
        names = "DHW"[3 - len(spatial):]
        got_in = ", ".join(f"{k}: {v}" for k, v in zip(names, spatial, strict=False))
        got_out = ", ".join(f"{k}: {v}" for k, v in zip(names, sizes, strict=False))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({got_in}) and output ({got_out})")
    nearest = mode in ("nearest", "nearest-exact")
    if not input.dtype.is_floating_point and not (nearest and input.dtype is dtypes.uint8):
        raise NotImplementedError(f"interpolate(mode={mode!r}) is not implemented for "
                                  f"{input.dtype.name} input (torch's kernels take floating "
                                  f"point{', and uint8 for the nearest modes' if nearest else ''}"
                                  f"); convert it with .float()")
    ft = np.float64 if input.dtype is dtypes.float64 else np.float32
    kind = mode if nearest or mode == "area" else "cubic" if mode == "bicubic" else "linear"
    # torch's nearest modes take its channels-last kernel for a channels-last input of more
    # than 3 channels, and for any 4-D input with output height + width <= 128
    layout = {4: channels_last, 5: channels_last_3d}.get(input.ndim)
    channels_last_kernel = nearest and layout is not None and (
        (input.shape[1] > 3 and input.is_contiguous(memory_format=layout))
        or (input.ndim == 4 and sum(sizes) <= 128))
    out = input
    for k, (n_in, n_out, scale) in enumerate(zip(spatial, sizes, scales, strict=False)):
        d = 2 + k
        if kind == "area":
            out = _area(out, d, n_out)
        elif nearest:
            at = _nearest_position(mode, n_in, n_out, scale, ft, channels_last_kernel)
            out = _resample(out, d, [(at, None)])
        else:
            out = _resample(out, d, _taps(kind, n_in, n_out, align_corners, scale, ft))
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated: interpolate (with its warning, as torch's)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='nearest') (with its warning, as torch's)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='bilinear', align_corners=True) (with its warning)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- shuffles ----------------------------------------------------------------------------------
def _factor(fn, name, factor):
    if not _is_int(factor) or factor <= 0:
        raise RuntimeError(f"{fn} expects a positive {name}, but got {factor}")
    return operator.index(factor)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel c r^2 + i r + j goes to pixel (i, j) of
    each r x r block."""
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    b = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """pixel_shuffle's inverse: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    *batch, c, h, w = input.shape
    for name, size, at in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({at})={size} is not divisible "
                               f"by {r}")
    b = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, C, *) with the channels seen as (groups, C / groups) transposed: output channel
    j * groups + g is input channel g * (C / groups) + j."""
    if not _is_int(groups) or groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


def native_channel_shuffle(input, groups):
    """channel_shuffle, under the name of torch's native kernel for it."""
    return channel_shuffle(input, groups)


# -- fold / unfold -----------------------------------------------------------------------------
def _fold_args(kernel_size, dilation, padding, stride):
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    if min(kernel) <= 0 or min(dilation) <= 0 or min(stride) <= 0 or min(padding) < 0:
        raise RuntimeError(f"kernel_size, dilation and stride should be greater than zero and "
                           f"padding non-negative, but got kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}")
    return kernel, dilation, padding, stride


def _blocks(size, kernel, dilation, padding, stride):
    """The number of sliding blocks along each of the two dims."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride, strict=False))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) (or (C, H, W)) -> (N, C kh kw, L), column l holding the l-th
    sliding block (row-major over the OH x OW blocks), row c kh kw + i kw + j its kernel
    element (i, j) of channel c."""
    kernel, dilation, padding, stride = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.ndim}D)")

    def run(x):
        n, c, h, w = x.shape
        blocks = _blocks((h, w), kernel, dilation, padding, stride)
        if min(blocks) < 1:
            raise RuntimeError(f"Given input with spatial size {(h, w)}, kernel_size={kernel}, "
                               f"dilation={dilation}, padding={padding}, calculated shape of "
                               f"the array of sliding blocks as {blocks}, but its components "
                               f"must be at least one.")
        (ph, pw) = padding
        windows, _, _ = _windows(_padded(x, (pw, pw, ph, ph), 0), kernel, stride, dilation)
        return windows.reshape(n, c * kernel[0] * kernel[1], blocks[0] * blocks[1])
    return _batched(run, input, 2)


def _col2im(cols, channels, blocks, kernel, dilation, stride, size, offset):
    """The sum of the columns (N, channels kh kw, OH OW) into an (N, channels, *size) plane:
    block (oh, ow)'s kernel element (i, j) lands at (oh sh + i dh - offset_h, ow sw + j dw -
    offset_w); what falls outside the plane is dropped. One index_add into a plane wide
    enough for every block, then a crop."""
    n = cols.shape[0]
    (oh, ow), (kh, kw), (dh, dw), (sh, sw) = blocks, kernel, dilation, stride
    full_h = max((oh - 1) * sh + (kh - 1) * dh + 1, offset[0] + size[0])
    full_w = max((ow - 1) * sw + (kw - 1) * dw + 1, offset[1] + size[1])
    rows = (np.arange(kh)[:, None, None, None] * dh + np.arange(oh)[None, None, :, None] * sh)
    columns = (np.arange(kw)[None, :, None, None] * dw + np.arange(ow)[None, None, None, :] * sw)
    at = (rows * full_w + columns).reshape(-1)  # (kh, kw, OH, OW), as cols' rows and columns
    plane = zeros(n, channels, full_h * full_w, dtype=cols.dtype, device=cols.device)
    plane = plane.index_add(2, tensor(at, device=cols.device),
                            cols.reshape(n, channels, kh * kw * oh * ow))
    plane = plane.reshape(n, channels, full_h, full_w)
    return plane[:, :, offset[0]:offset[0] + size[0], offset[1]:offset[1] + size[1]]


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, unfold's adjoint: (N, C kh kw, L) (or (C kh kw, L)) -> (N, C, *output_size),
    each column's elements added onto the block they came from (overlaps add up)."""
    size = _pair(output_size, "output_size")
    kernel, dilation, padding, stride = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.ndim}D)")

    def run(x):
        n, rows, length = x.shape
        kk = kernel[0] * kernel[1]
        if rows % kk:
            raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                               f"product of kernel_size, but got input.size(1)={rows} and "
                               f"kernel_size={kernel}.")
        blocks = _blocks(size, kernel, dilation, padding, stride)
        if min(blocks) < 1 or blocks[0] * blocks[1] != length:
            raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, "
                               f"dilation={dilation}, padding={padding}, stride={stride}, "
                               f"expected size of input's dimension 2 to match the calculated "
                               f"number of sliding blocks {blocks[0]} * {blocks[1]} = "
                               f"{blocks[0] * blocks[1]}, but got input.size(2)={length}.")
        return _col2im(x, rows // kk, blocks, kernel, dilation, stride, size, padding)

    if input.ndim == 2:
        return run(input.unsqueeze(0)).squeeze(0)
    return run(input)


# -- grid sampling ---------------------------------------------------------------------------------
# Composed: the source coordinates of each output point, then a gather of its taps per corner
# (2 per spatial dim for bilinear, 4 for bicubic, 1 for nearest) weighted as torch's kernels
# weigh them. The gathers' rule gives the input's gradient, the weights' ops the grid's.
def _unnormalize(coord, size, align_corners):
    """A grid coordinate in [-1, 1] as a position in [0, size - 1] (corner pixels' centres) or
    [-0.5, size - 0.5] (their edges)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """coord reflected about the bounds twice_low / 2 and twice_high / 2 until inside them."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    extra = coord.fmod(span)
    flips = (coord / span).floor()
    return where(flips.remainder(2) == 0, extra + low, span - extra + low)


def _bounded(coord, size, padding_mode, align_corners):
    """A position moved inside [0, size - 1] as padding_mode says ('zeros' keeps it)."""
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else \
            _reflect(coord, -1, 2 * size - 1)
    if padding_mode != "zeros":
        coord = coord.clamp(0, size - 1)
    return coord


def _cubic_weights(t):
    """The 4 weights of the taps at floor - 1 .. floor + 2 for fraction t (A = -0.75)."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _grid_taps(flat, sizes, positions, weights):
    """The sum over corners of flat (N, C, prod(sizes)) at integer positions (per dim, the
    last fastest; (N, *out) each) times the corner's weight; out-of-range taps read 0."""
    n, c = flat.shape[:2]
    out_shape = positions[0][0].shape
    total = None
    for corner in itertools.product(*(range(len(p)) for p in positions)):
        at, inside, weight = None, None, None
        for d, k in enumerate(corner):
            p, size = positions[d][k], sizes[d]
            ok = (p >= 0) & (p < size)
            inside = ok if inside is None else inside & ok
            p = p.clamp(0, size - 1)
            at = p if at is None else at * size + p
            w = weights[d][k] if weights is not None else None
            weight = w if weight is None else weight * w
        got = flat.gather(2, at.reshape(n, 1, -1).expand(n, c, at[0].numel()))
        got = where(inside.reshape(n, 1, -1), got, 0)
        if weight is not None:
            got = got * weight.reshape(n, 1, -1)
        total = got if total is None else total + got
    return total.reshape(n, c, *out_shape[1:])


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) sampled at grid (N, OH, OW, 2) (x, y in [-1, 1]), or (N, C, D, H, W)
    at (N, OD, OH, OW, 3): output (N, C, OH, OW) (or with OD). Bilinear (trilinear on 5-D),
    nearest (half to even) or bicubic (4-D); points outside read zeros, the border or the
    reflection."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    dims = input.ndim - 2
    if grid.shape[-1] != dims:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {dims} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and dims != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point or grid.dtype is not input.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be floating point of "
                           f"one dtype, but got input {input.dtype} and grid {grid.dtype}")
    same_device("grid_sampler", input, grid)
    if any(s == 0 for s in input.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                           f"dimensions, but input has sizes {list(input.shape)}")
    n, c, *sizes = input.shape
    flat = input.reshape(n, c, -1)
    # grid's last dim runs x (width) first: reversed, the dims in input's order
    coords = [_unnormalize(grid[..., dims - 1 - d], sizes[d], align_corners)
              for d in range(dims)]
    if mode == "bicubic":
        positions, weights = [], []
        for coord, size in zip(coords, sizes, strict=True):
            low = coord.floor()
            weights.append(_cubic_weights(coord - low))
            # each tap moved inside as padding_mode says, not the point
            positions.append([_bounded(low + k - 1, size, padding_mode, align_corners).to(int64)
                              for k in range(4)])
        return _grid_taps(flat, sizes, positions, weights)
    coords = [_bounded(coord, size, padding_mode, align_corners)
              for coord, size in zip(coords, sizes, strict=True)]
    if mode == "nearest":
        return _grid_taps(flat, sizes, [[coord.round().to(int64)] for coord in coords], None)
    positions, weights = [], []
    for coord in coords:
        low = coord.floor()
        positions.append([low.to(int64), low.to(int64) + 1])
        weights.append([low + 1 - coord, coord - low])
    return _grid_taps(flat, sizes, positions, weights)


def _base_coords(size, align_corners, like):
    """torch's linspace_from_neg_one: size points over [-1, 1], scaled by (size - 1) / size
    unless align_corners; one point is 0."""
    if size <= 1:
        return zeros(size, dtype=like.dtype, device=like.device)
    points = np.linspace(-1, 1, size)
    if not align_corners:
        points = points * (size - 1) / size
    return tensor(points, dtype=like.dtype, device=like.device)


def affine_grid(theta, size, align_corners=None):
    """The grid (N, H, W, 2) (or (N, D, H, W, 3)) of output size `size` (N, C, H, W) (or (N, C,
    D, H, W)) that the affine maps theta (N, 2, 3) (or (N, 3, 4)) give: theta @ (x, y[, z],
    1) for each output point's normalised coordinates."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) in (4, 5):
        dims = len(size) - 2
        if theta.ndim != 3 or tuple(theta.shape[1:]) != (dims, dims + 1):
            raise ValueError(f"Expected a batch of {dims}D affine matrices of shape "
                             f"Nx{dims}x{dims + 1} for size {size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {dims + 1}] but got: [{theta.shape[0]}, {dims + 1}].")
    # base (*spatial, dims + 1): x (the last dim's coordinate) first, then y (, z), then 1
    axes = [_base_coords(s, align_corners, theta) for s in spatial]
    grids = [axes[d].reshape([-1 if e == d else 1 for e in range(dims)]).expand(*spatial)
             for d in reversed(range(dims))]
    base = stack([*grids, ones(*spatial, dtype=theta.dtype, device=theta.device)], -1)
    out = base.reshape(1, -1, dims + 1).expand(size[0], -1, -1) @ theta.transpose(1, 2)
    return out.reshape(size[0], *spatial, dims)


# -- helpers torch.nn.functional exposes -----------------------------------------------------------
def assert_int_or_pair(arg, arg_name, message):
    """Raise AssertionError(message.format(arg_name)) unless `arg` is an int or has 2 items."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls if_true or if_false by the boolean argument `arg_name` (keyword,
    else positional at arg_index, else `default`), as torch's (TorchScript's) helper; it takes
    the docstring of whichever of the two has one."""
    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else \
            args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is not None and if_false.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__ if if_true.__doc__ is not None else if_false.__doc__
    if_true.__doc__ = if_false.__doc__ = fn.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn
