"""layer_norm, rms_norm and batch_norm by the batch's statistics, each one kernel forward and
one backward: every row of the trailing `normalized_shape` dims (every channel, for
batch_norm) is normalised (centred too, but for rms_norm), then scaled by the weight and
shifted by the bias (kernels: kernels/<device>/norm.py, formulas: kernels/scalar/norm.py).
The forward saves each row's statistics for the backward, which computes the gradients of the
input, weight and bias in one pass. nn.functional exposes the functions."""
import math

import numpy as np

from .. import dtypes
from ..creation import allocate, zeros
from ..kernels.registry import backend
from ..tensor import Tensor
from ._common import dense, same_device

TENSOR_METHODS = {}  # torch has these in nn.functional (and as torch.layer_norm) only


def as_shape(normalized_shape, fn="layer_norm"):
    """normalized_shape (an int or a sequence of ints) as a tuple of ints."""
    if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
        return (int(normalized_shape),)
    try:
        if isinstance(normalized_shape, (str, bytes, Tensor)):
            raise TypeError
        shape = tuple(normalized_shape)
        if any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) for d in shape):
            raise TypeError
    except TypeError:
        raise TypeError(f"{fn}(): normalized_shape must be an int or a sequence of ints, got "
                        f"{normalized_shape!r}") from None
    return tuple(map(int, shape))


def _checked(fn, input, normalized_shape, params, converts):
    """(normalized_shape as a tuple, the params): normalized_shape checked to be the trailing
    dims of input, input's dtype, and the (name, tensor or None) params' device and shape; a
    param of another dtype is converted to input's where `converts(param dtype)`, else
    refused."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got "
                        f"{type(input).__name__}")
    shape = as_shape(normalized_shape, fn)
    if not shape:
        raise RuntimeError(f"{fn}(): expected normalized_shape to be at least 1-dimensional, "
                           f"i.e., containing at least one element, but got normalized_shape "
                           f"= []")
    dims = input._data.shape
    if len(dims) < len(shape) or dims[len(dims) - len(shape):] != shape:
        raise RuntimeError(f"{fn}(): given normalized_shape={list(shape)}, expected input with "
                           f"shape [*, {', '.join(map(str, shape))}], but got input of size "
                           f"{list(dims)}")
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"{fn}(): not implemented for {input._dtype} input; convert "
                                  f"it with .float()")
    checked = []
    for name, t in params:
        if t is not None:
            if not isinstance(t, Tensor):
                raise TypeError(f"{fn}(): argument '{name}' must be a Tensor or None, got "
                                f"{type(t).__name__}")
            if t._device != input._device:
                same_device(fn, input, t)
            if t._data.shape != shape:
                raise RuntimeError(f"{fn}(): {name} of shape {list(t.shape)} does not match "
                                   f"normalized_shape {list(shape)}")
            if t._dtype is not input._dtype:
                if not converts(t._dtype):
                    raise RuntimeError(f"{fn}(): expected {name} to have input's dtype "
                                       f"{input._dtype}, got {t._dtype}; convert it with "
                                       f".to({input._dtype})")
                t = t.to(input._dtype)
        checked.append(t)
    return shape, checked


def _stats(input, shape):
    """The buffer the forward saves each row's statistics in (its mean's offset from the shift
    and its rstd, kernels/scalar/norm.py): float64 (2, rows)."""
    lead = input._data.shape[:input.ndim - len(shape)]
    return allocate((2, math.prod(lead)), dtypes.float64, input._device)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(input - mean) / sqrt(var + eps) over the trailing dims `normalized_shape` (the biased
    variance, as torch's), then * weight + bias (each of normalized_shape, or None). The
    params have input's dtype, or are float32 for a float16 or bfloat16 input (torch's mixed
    types)."""
    shape, (weight, bias) = _checked(
        "layer_norm", input, normalized_shape, (("weight", weight), ("bias", bias)),
        lambda dtype: input._dtype in dtypes.NARROW and dtype is dtypes.float32)
    return native_layer_norm(input, weight, bias, shape, float(eps), _stats(input, shape))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input^2) + eps) over the trailing dims `normalized_shape`, then *
    weight, in input's dtype (a weight of another float dtype is converted, as torch's result
    takes input's type). eps defaults to the machine epsilon of the type torch computes in:
    input's, float32 for float16 and bfloat16."""
    shape, (weight,) = _checked("rms_norm", input, normalized_shape, (("weight", weight),),
                                lambda dtype: dtype.is_floating_point)
    if eps is None:
        eps = np.finfo(np.float32 if input._dtype in dtypes.NARROW else input._dtype.np).eps
    return fused_rms_norm(input, weight, shape, float(eps), _stats(input, shape))


# -- the recorded ops (their rules: autograd/derivatives/norm.py) -------------------------------
def _rows(t, k):
    """t's buffer as C-contiguous rows of its last k dims (a view when t is contiguous)."""
    data = dense(t)
    if data.ndim == 2 and k == 1:
        return data
    lead = data.ndim - k
    return data.reshape(math.prod(data.shape[:lead]), math.prod(data.shape[lead:]))


def _flat(t):
    """The buffer of a weight or bias, flat and dense, or None."""
    if t is None:
        return None
    data = t._data
    return data if data.ndim == 1 and data.flags.c_contiguous else _rows(t, t.ndim)[0]


def native_layer_norm(input, weight, bias, normalized_shape, eps, stats):
    """layer_norm's op, as torch names it; `stats` receives each row's statistics."""
    return _norm(input, weight, bias, normalized_shape, eps, stats, True)


def fused_rms_norm(input, weight, normalized_shape, eps, stats):
    """rms_norm's op; `stats` receives each row's statistics (an offset of 0, and rstd)."""
    return _norm(input, weight, None, normalized_shape, eps, stats, False)


def _norm(input, weight, bias, shape, eps, stats, centred):
    out = allocate(input._data.shape, input._dtype, input._device)
    k = len(shape)
    backend(input._device).norm.norm(_rows(out, k), stats._data, _rows(input, k), _flat(weight),
                                     _flat(bias), eps, centred)
    return out


def norm_grad(g, input, weight, shape, stats, centred, want_input, want_params):
    """(d input, d weight, d bias) of a norm op's result for upstream gradient g, each None
    where not wanted (`want_params`: the weight's and bias's together), in one kernel."""
    if g._dtype is not input._dtype:
        g = g.to(input._dtype)
    device, k = input._device, len(shape)
    dx = allocate(input._data.shape, input._dtype, device) if want_input else None
    dw = db = None
    if want_params:
        dw, db = allocate(shape, input._dtype, device), allocate(shape, input._dtype, device)
    backend(device).norm.norm_grad(None if dx is None else _rows(dx, k), _flat(dw), _flat(db),
                                   _rows(input, k), _flat(weight), _rows(g, k), stats._data,
                                   centred)
    return dx, dw, db


# -- batch_norm (nn/functional.py checks its arguments and updates the running statistics) -----
def _channels(t):
    """t's buffer as C-contiguous (N, C, S)."""
    data = dense(t)
    return data.reshape(data.shape[0], data.shape[1], math.prod(data.shape[2:]))


def batch_statistics(input):
    """The buffer native_batch_norm saves each channel's statistics in: float64 (4, C), its
    mean's offset from the shift and rstd (for the backward), mean and biased variance."""
    return allocate((4, input.shape[1]), dtypes.float64, input._device)


def native_batch_norm(input, weight, bias, eps, stats):
    """batch_norm by the batch's own statistics (training), as torch names it: each channel
    (dim 1) normalised over the other dims, times weight, plus bias ((C,) of input's dtype, or
    None); `stats` receives each channel's statistics (batch_statistics)."""
    out = allocate(input._data.shape, input._dtype, input._device)
    backend(input._device).norm.batch_norm(_channels(out), stats._data, _channels(input),
                                           _flat(weight), _flat(bias), eps)
    return out


def batch_norm_grad(g, input, weight, stats, want_input):
    """(d input or None, d weight, d bias) of native_batch_norm's result for upstream g."""
    if g._dtype is not input._dtype:
        g = g.to(input._dtype)
    device, c = input._device, input.shape[1]
    dx = allocate(input._data.shape, input._dtype, device) if want_input else None
    if not input.numel():  # no elements: nothing to sum
        return dx, zeros(c, dtype=input._dtype, device=device), \
            zeros(c, dtype=input._dtype, device=device)
    dw, db = allocate((c,), input._dtype, device), allocate((c,), input._dtype, device)
    backend(device).norm.batch_norm_grad(None if dx is None else _channels(dx), dw._data,
                                         db._data, _channels(input), _flat(weight),
                                         _channels(g), stats._data)
    return dx, dw, db

