"""Losses as fused kernels; nn.functional checks the arguments and calls these.

The class losses are one kernel forward and one backward: nll_loss of log-probabilities, and
cross_entropy as log_softmax fused into it (log_probs=False). The forward kernel computes
every target's loss and reduces them; the backward writes the gradient (kernels:
kernels/<device>/loss.py, formulas: kernels/scalar/loss.py). nn.functional calls
`class_loss`.

The pointwise losses (smooth_l1, huber, binary_cross_entropy with or without logits, kl_div)
are one launch of the elementwise "loss" family each, unreduced (`pointwise_loss`); the
reduction is the ordinary sum or mean after it. Their backward is one "loss_grad" launch for
the input's derivative, times the upstream gradient.

ctc_loss is one kernel each way too (kernels/cpu/ctc.py): the per-element negative
log-likelihoods, which nn.functional reduces."""
import math

from .. import dtypes
from ..creation import allocate
from ..device import device
from ..kernels.registry import backend
from ..kernels.scalar import loss as codes
from ..tensor import Tensor
from ._common import broadcast_shapes, dense, same_device
from .elementwise import _operand, _scalar

TENSOR_METHODS = {}  # torch has the losses in nn.functional only
REDUCTIONS = {"none": codes.NONE, "mean": codes.MEAN, "sum": codes.SUM}


def class_loss(input, target, d, weight, ignore_index, reduction, smoothing, log_probs):
    """The loss of scores `input` (classes along dim d) against class indices `target` (input's
    shape without dim d; checked by the caller, as `weight`: (C,) or None)."""
    fn = "nll_loss" if log_probs else "cross_entropy"
    device = same_device(fn, input, target, *(() if weight is None else (weight,)))
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"{fn}(): expected floating point scores, got {input._dtype.name} "
                           f"input; convert it with .float()")
    if target._dtype is not dtypes.int64:
        target = target.long()
    if weight is not None and weight._dtype is not input._dtype:
        weight = weight.to(input._dtype)
    saved = allocate((3 + 2 * target.numel(),), dtypes.float64, device)
    return nll_loss(input, target, weight, d, ignore_index, REDUCTIONS[reduction],
                    float(smoothing), bool(log_probs), saved)


def _scores(input, d):
    """input's buffer seen as (N, C, S), the classes in the middle: a view where one exists
    (always for 1-D and 2-D input: the buffer's reshape only adds dims of size 1)."""
    data = input._data
    shape = data.shape
    scores = (shape[0] if d else 1, shape[d], math.prod(shape[d + 1:]))
    return data.reshape(scores) if data.ndim <= 2 else input.reshape(scores)._data


def _buffers(target, weight):
    """The buffers of the targets, flat and dense, and of the weights, dense."""
    t = target._data
    t = t.reshape(-1) if t.flags.c_contiguous else target.contiguous()._data.reshape(-1)
    return t, None if weight is None else weight.contiguous()._data


def nll_loss(input, target, weight, d, ignore_index, reduction, smoothing, log_probs, saved):
    """The op autograd records (its rule: autograd/derivatives/loss.py): the loss, reduced by
    `reduction` (a code of kernels/scalar/loss.py); `saved` (float64, 3 + 2 targets) receives
    what the backward reads: the summed loss and target weight (for 'mean'), the summed class
    weights, and each target's row max and log-sum."""
    out = allocate(target.shape if reduction == codes.NONE else (), input._dtype, input._device)
    bad = backend(input._device).loss.class_loss(
        out._data, saved._data, _scores(input, d), *_buffers(target, weight),
        ignore_index, smoothing, log_probs, reduction)
    if bad is not None:
        n = input.shape[d]
        raise IndexError(f"{'nll_loss' if log_probs else 'cross_entropy'}(): target {bad} is out "
                         f"of bounds for {n} classes; targets must lie in [0, {n - 1}] or equal "
                         f"ignore_index ({ignore_index})")
    return out


def nll_loss_grad(g, input, target, weight, d, ignore_index, reduction, smoothing, log_probs,
                  saved):
    """The gradient of nll_loss's result by input for upstream gradient g, in one kernel."""
    x = _scores(input, d)
    out = allocate(input.shape, input._dtype, input._device)
    if g._dtype is not input._dtype:
        g = g.to(input._dtype)
    backend(input._device).loss.class_loss_grad(
        out._data.reshape(x.shape), x, *_buffers(target, weight), ignore_index, smoothing,
        log_probs, g.contiguous()._data, reduction, saved._data)
    return out


POINTWISE = {"smooth_l1_loss": codes.SMOOTH_L1, "huber_loss": codes.HUBER,
             "binary_cross_entropy": codes.BCE,
             "binary_cross_entropy_with_logits": codes.BCE_LOGITS, "kl_div": codes.KL_DIV,
             "kl_div:log_target": codes.KL_DIV_LOG}
_NAMES = {code: name.split(":")[0] for name, code in POINTWISE.items()}


def _pointwise(family, input, target, extra, code, param):
    """One launch of `family` ("loss" or "loss_grad") on the broadcast operands, computed in
    their promoted floating dtype; `extra` (pos_weight) may be None (read as 1)."""
    name = _NAMES[code]
    tensors = (input, target) if extra is None else (input, target, extra)
    for what, t in zip(("input", "target", "pos_weight"), tensors, strict=False):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{what}' must be Tensor, not "
                            f"{type(t).__name__}")
    device = same_device(name, *tensors)
    dtype = dtypes.result_type(*tensors)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name}(): expected floating point input and target, got "
                           f"{', '.join(t.dtype.name for t in tensors)}; convert them with "
                           f".float()")
    shape = broadcast_shapes(*(t._data.shape for t in tensors))
    b = backend(device)
    out = allocate(shape, dtype, device)
    third = _scalar(1, dtype) if extra is None else _operand(extra, dtype, shape, b)
    b.elementwise.launch(family, code, out._data, _operand(input, dtype, shape, b),
                         _operand(target, dtype, shape, b), third, _scalar(param, dtype))
    return out


def pointwise_loss(input, target, extra, code, param):
    """The op autograd records (its rule: autograd/derivatives/loss.py): loss `code` (see
    kernels/scalar/loss.py) of each element, unreduced, with pos_weight `extra` (or None)
    and parameter `param` (beta, delta; else 0)."""
    return _pointwise("loss", input, target, extra, code, param)


def pointwise_loss_grad(input, target, extra, code, param):
    """The derivative of pointwise_loss by its input, elementwise (without the upstream
    gradient)."""
    return _pointwise("loss_grad", input, target, extra, code, param)


# -- CTC -----------------------------------------------------------------------------------
# The recursion's kernels are CPU ones (kernels/cpu/ctc.py); on CUDA it runs on the host on a
# copy of log_probs and the results move back (no CUDA kernel yet). alpha stays on the host.
_HOST = device("cpu")


def _on_host(t):
    """t's values as a dense NumPy array in host memory."""
    return dense(t if t._device.type == "cpu" else t.cpu())


def ctc_loss(log_probs, targets, offsets, stride, input_lengths, target_lengths, blank,
             zero_infinity, alpha):
    """The op autograd records (its rule: autograd/derivatives/loss.py): each batch element's
    negative log-likelihood, (N,), of (T, N, C) log-probabilities. targets (flat), offsets,
    input_lengths and target_lengths are host int64 NumPy arrays nn.functional checked; alpha,
    a host tensor (N, T, 2 * max target length + 1), receives what the backward reads."""
    nll = allocate((len(input_lengths),), log_probs._dtype, _HOST)
    backend(_HOST).ctc.forward(nll._data, _on_host(log_probs), targets, offsets, stride,
                               input_lengths, target_lengths, blank, alpha._data)
    return nll if log_probs._device.type == "cpu" else nll.to(log_probs._device)


def ctc_loss_grad(g, nll, log_probs, targets, offsets, stride, input_lengths, target_lengths,
                  blank, zero_infinity, alpha):
    """The gradient of ctc_loss's result `nll` by log_probs for upstream gradient g (torch's
    native formula, from alpha and the beta the kernel runs)."""
    out = allocate(log_probs.shape, log_probs._dtype, _HOST)
    if g._dtype is not log_probs._dtype:
        g = g.to(log_probs._dtype)
    backend(_HOST).ctc.backward(out._data, _on_host(g), _on_host(log_probs), targets, offsets,
                                stride, input_lengths, target_lengths, blank, alpha._data,
                                _on_host(nll), bool(zero_infinity))
    return out if log_probs._device.type == "cpu" else out.to(log_probs._device)
