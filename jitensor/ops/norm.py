"""layer_norm and rms_norm, each one kernel forward and one backward: every row of the trailing
`normalized_shape` dims is normalised (centred too, for layer_norm), then scaled by the weight
and shifted by the bias (kernels: backends/<device>/norm.py, formulas:
backends/scalar/norm.py). The forward saves each row's mean and rstd for the backward, which
computes the gradients of the input, weight and bias in one pass. nn.functional exposes the
two functions."""
import math

import numpy as np

from .. import dtypes
from ..backends.registry import backend
from ..creation import allocate
from ..dtypes import promote_types
from ._common import same_device

TENSOR_METHODS = {}  # torch has these in nn.functional (and as torch.layer_norm) only


def _checked(fn, input, normalized_shape, params, same_dtype):
    """normalized_shape as a tuple, checked to be the trailing dims of input, with input's
    dtype and the (name, tensor or None) params' device, shape and (when same_dtype) dtype."""
    shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else \
        tuple(normalized_shape)
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
    for name, t in params:
        if t is None:
            continue
        if t._device != input._device:
            same_device(fn, input, t)
        if t._data.shape != shape:
            raise RuntimeError(f"{fn}(): {name} of shape {list(t.shape)} does not match "
                               f"normalized_shape {list(shape)}")
        if same_dtype and t._dtype is not input._dtype:
            raise RuntimeError(f"{fn}(): expected {name} to have input's dtype {input._dtype}, "
                               f"got {t._dtype}; convert it with .to({input._dtype})")
    return shape


def _stats(input, shape):
    """The buffer the forward saves each row's mean and rstd in: float64 (2, rows)."""
    lead = input._data.shape[:input.ndim - len(shape)]
    return allocate((2, math.prod(lead)), dtypes.float64, input._device)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(input - mean) / sqrt(var + eps) over the trailing dims `normalized_shape` (the biased
    variance, as torch's), then * weight + bias (each of normalized_shape, or None)."""
    shape = _checked("layer_norm", input, normalized_shape, (("weight", weight), ("bias", bias)),
                     True)
    return native_layer_norm(input, weight, bias, shape, float(eps), _stats(input, shape))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input^2) + eps) over the trailing dims `normalized_shape`, then *
    weight; eps defaults to the machine epsilon of input's dtype, as torch's. A weight of
    another dtype promotes both, as torch's composite does."""
    shape = _checked("rms_norm", input, normalized_shape, (("weight", weight),), False)
    if weight is not None and weight._dtype is not input._dtype:
        common = promote_types(input._dtype, weight._dtype)
        input, weight = input.to(common), weight.to(common)
    eps = float(np.finfo(input._dtype.np).eps) if eps is None else float(eps)
    return fused_rms_norm(input, weight, shape, eps, _stats(input, shape))


# -- the recorded ops (their rules: autograd/derivatives.py) ------------------------------------
def _rows(t, k):
    """t's buffer as C-contiguous rows of its last k dims (a view when t is contiguous)."""
    data = t._data
    if not data.flags.c_contiguous:
        data = t.contiguous()._data
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
    """layer_norm's op, as torch names it; `stats` receives each row's mean and rstd."""
    return _norm(input, weight, bias, normalized_shape, eps, stats, True)


def fused_rms_norm(input, weight, normalized_shape, eps, stats):
    """rms_norm's op; `stats` receives each row's rstd (and a mean of 0)."""
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
