"""torch.nn.functional's layers and losses, written with jitensor's public ops, so autograd
differentiates them with no rules of their own; the pointwise activations, the class losses
(nll_loss, cross_entropy), the pointwise losses but mse and l1 (smooth_l1, huber, the binary
cross entropies, kl_div) and the normalisations (layer_norm, rms_norm) are fused ops with
rules (ops/activation.py, ops/loss.py, ops/norm.py). Padding, one_hot, the vector similarities
and scaled_dot_product_attention are composed (torch's math path for the last), as are the
convolutions, poolings and batch_norm (nn/convolution.py)."""
import math
import warnings

from ..autograd import no_grad
from ..creation import arange, full, ones, rand, zeros
from ..dtypes import bool_, int32, int64
from ..ops import activation as _activation, indexing as _indexing, linalg as _linalg, \
    loss as _loss, norm as _norm
from ..ops._common import broadcast_shapes, same_device
from ..ops.shape import cat
from ..tensor import Tensor

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "celu", "celu_",
           "cosine_similarity", "cross_entropy", "dropout", "elu", "elu_", "embedding", "gelu",
           "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "huber_loss", "kl_div", "l1_loss",
           "layer_norm", "leaky_relu", "leaky_relu_", "linear", "log_softmax", "logsigmoid",
           "mish", "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "pairwise_distance",
           "relu", "relu6", "relu_", "rms_norm", "scaled_dot_product_attention", "selu", "selu_",
           "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus", "tanh", "threshold",
           "threshold_"]

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


layer_norm = _norm.layer_norm
rms_norm = _norm.rms_norm


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
    weight = query @ key.transpose(-2, -1) * factor
    if is_causal:
        above = ones(length, source, dtype=bool_, device=query.device).tril().logical_not()
        weight = weight.masked_fill(above, -math.inf)
    if attn_mask is not None:
        weight = weight.masked_fill(attn_mask.logical_not(), -math.inf) \
            if attn_mask.dtype is bool_ else weight + attn_mask
    weight = safe_softmax(weight)
    if dropout_p > 0.0:
        weight = dropout(weight, dropout_p)
    return weight @ value


def safe_softmax(scores):
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


def _pair(fn, input, target, warn=True):
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


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error; `target` broadcasts against `input` (with torch's warning)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _pair("mse_loss", input, target)
    return _weighted((input - target).square(), weight, input, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error |input - target|; its gradient at input == target is 0."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _pair("l1_loss", input, target)
    return _weighted((input - target).abs(), weight, input, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 z^2 / beta where z = |input - target| < beta, else z - 0.5 beta (l1_loss at beta=0).
    One fused kernel each way, as the other pointwise losses."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _pair("smooth_l1_loss", input, target)
    if not beta >= 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta, got "
                           f"{beta}")
    if beta == 0:
        return _reduce((input - target).abs(), reduction)
    return _reduce(_loss.pointwise_loss(input, target, None, _loss.POINTWISE["smooth_l1_loss"],
                                        float(beta)), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 z^2 where z = |input - target| < delta, else delta (z - 0.5 delta)."""
    reduction = _legacy_reduction(None, None, reduction)
    _pair("huber_loss", input, target)
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


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-w (y log x + (1 - y) log(1 - x)) of probabilities x, each log clamped at -100 as torch
    (so x = 0 or 1 gives a finite loss and input gradient; the target's, -logit(x), is
    infinite there, as torch's); `weight` broadcasts against the target."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _pair("binary_cross_entropy", input, target, warn=False)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         f"size.")
    _probabilities("binary_cross_entropy", input, target)
    _fits("binary_cross_entropy", input, weight=weight)
    loss = _loss.pointwise_loss(input, target, None, _loss.POINTWISE["binary_cross_entropy"], 0)
    return _reduce(loss if weight is None else loss * weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy of sigmoid(input), computed from the logits without overflow;
    `pos_weight` (broadcast against the target: one per class, say) weights the positive
    term, `weight` the whole loss."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _pair("binary_cross_entropy_with_logits", input, target, warn=False)
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
    _pair("kl_div", input, target, warn=False)
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


# functional forms defined beside their modules; imported last, as those files import this one
from . import activations as _activations, convolution as _convolution, distance as _distance, \
    dropout as _dropout, loss as _loss_modules, normalization as _normalization, \
    sampling as _sampling  # noqa: E402

for _module in (_activations, _convolution, _distance, _dropout, _loss_modules, _normalization,
                _sampling):
    globals().update((_name, getattr(_module, _name)) for _name in _module.FUNCTIONS)
    __all__ += _module.FUNCTIONS
