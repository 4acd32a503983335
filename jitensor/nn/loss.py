"""Loss modules over `functional`; class weights (and pos_weight) are buffers (in the state
dict), as in torch. The margin, embedding, Poisson and Gaussian losses are defined here too,
functional forms included: each composed from jitensor's ops as torch's ATen (or Python)
formula is, so autograd differentiates it and it runs on every device; where torch's kernel
counts a term only when it is positive (z > 0), a `where` does, so the gradient at 0 is 0 as
there."""
import math

from ..autograd import no_grad
from ..creation import arange, ones_like
from ..dtypes import int64
from ..ops.elementwise import minimum, where
from ..tensor import Tensor
from . import functional as F
from .distance import PairwiseDistance
from .module import Module

FUNCTIONS = ["cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss",
             "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
             "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
             "triplet_margin_loss", "triplet_margin_with_distance_loss"]  # nn.functional's
__all__ = ["BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss"]


# -- functional forms --------------------------------------------------------------------------
def _tensors(fn, **tensors):
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(t).__name__}")


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target (input1 - input2) + margin): target 1 asks input1 to rank above input2
    by margin, -1 below; the three broadcast but must have one rank."""
    reduction = F._legacy_reduction(size_average, reduce, reduction)
    _tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return F._reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where it is -1 (input: a distance;
    other target values count both terms, as torch's formula does)."""
    reduction = F._legacy_reduction(size_average, reduce, reduction)
    _tensors("hinge_embedding_loss", input=input, target=target)
    apart = where(target != 1, (margin - input).clamp_min(0), 0.0)
    near = where(target != -1, input, 0.0)
    return F._reduce(apart + near, reduction)


_EPSILON = 1e-12  # ATen's, added to each squared magnitude of cosine_embedding_loss


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1 (0
    elsewhere), the cosine taken over the last dim of (N, D) inputs with an (N,) target, or
    of (D,) inputs with a 0-d one; eps 1e-12 is added to each squared magnitude."""
    reduction = F._legacy_reduction(size_average, reduce, reduction)
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
    return F._reduce(loss, reduction)


def _float_input(fn, input):
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}(): result type Float can't be cast to the desired output "
                           f"type {input.dtype.name}; convert the input with .float()")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target input)), the logistic loss of targets 1 and -1 (torch's formula as
    written, so it overflows to inf where -target input passes ~88 in float32, as torch's);
    target broadcasts into input's shape."""
    reduction = F._legacy_reduction(size_average, reduce, reduction)
    _tensors("soft_margin_loss", input=input, target=target)
    _float_input("soft_margin_loss", input)
    F._fits("soft_margin_loss", input, target=target)
    return F._reduce((-input * target).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)) averaged over the classes (the last dim),
    each class weighted by `weight`: one loss per sample."""
    reduction = F._legacy_reduction(size_average, reduce, reduction)
    _tensors("multilabel_soft_margin_loss", input=input, target=target)
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions: "
                         "multilabel_soft_margin_loss takes classes in the input's last dim")
    loss = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    classes = input.ndim - 1
    return F._reduce(loss.sum(classes) / input.shape[classes], reduction)


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


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: for each sample x of class y, the sum over the other
    classes i of max(0, margin - x[y] + x[i])^p (p 1 or 2), times weight[y], over the class
    count C. input is (N, C), (C,) or a 0-d score; target holds N class indices (int64)."""
    reduction = F._legacy_reduction(size_average, reduce, reduction)
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
    return F._reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: each sample's target row lists its classes (int64), ended
    by the first -1; the loss sums max(0, 1 - x[j] + x[i]) over its listed classes j (a class
    listed twice counts twice) and the classes i not listed, over the class count C. The
    pairs are a (N, C, C) tensor (torch's kernel loops over the same pairs)."""
    reduction = F._legacy_reduction(size_average, reduce, reduction)
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
    return F._reduce(loss, reduction)


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
    reduction = F._legacy_reduction(size_average, reduce, reduction)
    _tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    _check_triplet(anchor, positive, negative, margin)
    positive_distance = F.pairwise_distance(anchor, positive, p, eps)
    negative_distance = F.pairwise_distance(anchor, negative, p, eps)
    if swap:
        negative_distance = minimum(negative_distance,
                                    F.pairwise_distance(positive, negative, p, eps))
    return F._reduce((margin + positive_distance - negative_distance).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """triplet_margin_loss with any distance_function(x1, x2) -> distances (by default
    pairwise_distance)."""
    reduction = F._legacy_reduction(None, None, reduction)
    _tensors("triplet_margin_with_distance_loss", anchor=anchor, positive=positive,
             negative=negative)
    _check_triplet(anchor, positive, negative, margin)
    if distance_function is None:
        distance_function = F.pairwise_distance
    positive_distance = distance_function(anchor, positive)
    negative_distance = distance_function(anchor, negative)
    if swap:
        negative_distance = minimum(negative_distance, distance_function(positive, negative))
    return F._reduce((margin + positive_distance - negative_distance).clamp_min(0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """The negative log likelihood of target under Poisson(rate): exp(input) - target input
    when input is the log rate (log_input), else input - target log(input + eps); `full` adds
    Stirling's approximation of log(target!), for targets above 1."""
    reduction = F._legacy_reduction(size_average, reduce, reduction)
    _tensors("poisson_nll_loss", input=input, target=target)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return F._reduce(loss, reduction)


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
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError(f"var is of incorrect size: var of shape {list(var.shape)} for "
                             f"input of shape {list(input.shape)} must have input's shape, or "
                             f"its shape without the last dim, or a 1 in one of its dims")
    reduction = F._legacy_reduction(None, None, reduction)
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return F._reduce(loss, reduction)


# -- modules -----------------------------------------------------------------------------------


class _Loss(Module):
    """What every loss module holds: its reduction, from `reduction` or torch's deprecated
    size_average and reduce."""

    _reductions = F._REDUCTIONS

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = F._legacy_reduction(size_average, reduce, reduction, self._reductions)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class KLDivLoss(_Loss):
    _reductions = F._REDUCTIONS + ("batchmean",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class NLLLoss(_Loss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                 reduction=self.reduction)


class _WithMargin(_Loss):
    def __init__(self, margin, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_WithMargin):
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1, input2, target):
        return margin_ranking_loss(input1, input2, target, margin=self.margin,
                                   reduction=self.reduction)


class HingeEmbeddingLoss(_WithMargin):
    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):
        return hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_WithMargin):
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1, input2, target):
        return cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class SoftMarginLoss(_Loss):
    def forward(self, input, target):
        return soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input, target):
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return multilabel_soft_margin_loss(input, target, weight=self.weight,
                                           reduction=self.reduction)


class MultiMarginLoss(_Loss):
    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError(f"only p == 1 and p == 2 supported, got p={p}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.ndim}D instead")
        self.register_buffer("weight", weight)
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                 reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                   eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The distance function (by default a PairwiseDistance module, shown in the repr as
    torch's) is kept as an attribute: a submodule when it is a Module."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None else \
            PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)
