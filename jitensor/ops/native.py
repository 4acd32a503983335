"""torch's native functions that nn's modules are built on, at the top level: the functional
recurrent forms of torch._VF (`torch.lstm`, `torch.gru`, `torch.rnn_tanh`, `torch.rnn_relu`
and their `*_cell`s), the `native_*` norms and dropout with their saved statistics, the
SyncBatchNorm helpers (`batch_norm_stats`, `batch_norm_elemt`, ...), `torch.convolution` and
the older norms (`frobenius_norm`, `nuclear_norm`, `norm_except_dim`), and `torch.fill`. Each
is composed of jitensor's ops, so each differentiates through them; statistics torch returns
as non-differentiable outputs are computed without grad."""
import importlib
import numbers
import warnings

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..creation import empty, ones_like
from ..tensor import Tensor
from . import elementwise, recurrent, reduction, shape

__all__ = ["batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt",
           "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts", "batch_norm_stats",
           "batch_norm_update_stats", "convolution", "fill", "frobenius_norm", "gru", "gru_cell",
           "lstm", "lstm_cell", "native_batch_norm", "native_dropout", "native_group_norm",
           "native_layer_norm", "norm_except_dim", "nuclear_norm", "rnn_relu", "rnn_relu_cell",
           "rnn_tanh", "rnn_tanh_cell"]


def _F():
    return importlib.import_module("jitensor.nn.functional")


def _linalg():
    return importlib.import_module("jitensor.linalg")


def _check_tensor(fn, name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(t).__name__}")


# -- recurrent layers and cells (torch._VF) -----------------------------------------------------
def _layers(fn, mode, params, has_biases, num_layers, bidirectional):
    """params (a flat list: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]) as a
    list of (w_ih, w_hh, b_ih, b_hh, w_hr) per layer and direction."""
    directions = 2 if bidirectional else 1
    params = list(params)
    per = 4 if has_biases else 2
    groups = num_layers * directions
    if len(params) == groups * (per + 1) and mode == "LSTM":
        per += 1
    elif len(params) != groups * per:
        raise RuntimeError(f"{fn}(): got {len(params)} parameters, expected {groups * per} "
                           f"({num_layers} layers x {directions} directions x {per})")
    out = []
    for g in range(groups):
        p = params[g * per:(g + 1) * per]
        w_ih, w_hh = p[0], p[1]
        b_ih, b_hh = (p[2], p[3]) if has_biases else (None, None)
        w_hr = p[per - 1] if per in (3, 5) else None
        out.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return out


def _recurrent(fn, mode, input, batch_sizes, states, params, has_biases, num_layers, dropout,
               train, bidirectional, batch_first):
    """(output, final states (each (layers * directions, N, width))) of `mode` over input
    (L, N, H_in) (batch first with batch_first), or a packed batch's data with batch_sizes."""
    _check_tensor(fn, "input", input)
    packed = batch_sizes is not None
    if packed:
        if input.ndim != 2:
            raise RuntimeError(f"{fn}(): packed input data must be 2-D, got {input.ndim}-D")
        batch_sizes = [int(b) for b in batch_sizes.tolist()]
    elif input.ndim != 3:
        raise RuntimeError(f"{fn}(): input must have 3 dimensions, got {input.ndim}")
    weights = _layers(fn, mode, params, has_biases, num_layers, bidirectional)
    directions = 2 if bidirectional else 1
    for s in states:
        _check_tensor(fn, "hx", s)
        if s.ndim != 3 or s.shape[0] != num_layers * directions:
            raise RuntimeError(f"{fn}(): expected hidden state of shape ({num_layers * directions}"
                               f", batch, hidden), got {list(s.shape)}")
    x = input.transpose(0, 1) if batch_first and not packed else input
    initial = [s.unbind(0) for s in states]
    finals = [[] for _ in states]
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[index]
            projected = recurrent.project(mode, x, w_ih, b_ih, b_hh)
            out, state = recurrent.run(mode, projected, tuple(s[index] for s in initial), w_hh,
                                       b_hh, w_hr, direction == 1, batch_sizes)
            outputs.append(out)
            for store, value in zip(finals, state, strict=False):
                store.append(value)
        x = outputs[0] if directions == 1 else shape.cat(outputs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = _F().dropout(x, dropout, True)
    output = x.transpose(0, 1) if batch_first and not packed else x
    return (output, *(shape.stack(store) for store in finals))


def _split_overload(fn, args, single_state):
    """torch._VF's two forms, told apart as torch's parser does: (input, hx, params, ...,
    batch_first) or (data, batch_sizes, hx, params, ...) for a packed batch."""
    packed = isinstance(args[1], Tensor) and (not single_state or isinstance(args[2], Tensor))
    if packed:
        if len(args) != 9:
            raise TypeError(f"{fn}(): expected (data, batch_sizes, hx, params, has_biases, "
                            f"num_layers, dropout, train, bidirectional), got {len(args)} "
                            f"arguments")
        data, batch_sizes, hx, params, *rest = args
        return data, batch_sizes, hx, params, (*rest, False)
    if len(args) != 9:
        raise TypeError(f"{fn}(): expected (input, hx, params, has_biases, num_layers, dropout, "
                        f"train, bidirectional, batch_first), got {len(args)} arguments")
    input, hx, params, *rest = args
    return input, None, hx, params, tuple(rest)


def lstm(*args):
    """torch.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (output, h_n, c_n); or (data, batch_sizes, hx, params, has_biases,
    num_layers, dropout, train, bidirectional) for a packed batch's data. hx is (h_0, c_0);
    params per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    input, batch_sizes, hx, params, rest = _split_overload("lstm", args, False)
    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise RuntimeError("lstm(): hx must be a sequence of two tensors (h_0, c_0)")
    return _recurrent("lstm", "LSTM", input, batch_sizes, tuple(hx), params, *rest)


def _single(fn, mode):
    def op(*args):
        input, batch_sizes, hx, params, rest = _split_overload(fn, args, True)
        return _recurrent(fn, mode, input, batch_sizes, (hx,), params, *rest)
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = (f"torch.{fn}(input, hx, params, has_biases, num_layers, dropout, train, "
                  f"bidirectional, batch_first) -> (output, h_n); or (data, batch_sizes, hx, "
                  f"params, has_biases, num_layers, dropout, train, bidirectional) for a "
                  f"packed batch's data. params per layer and direction: w_ih, w_hh[, b_ih, "
                  f"b_hh].")
    return op


gru = _single("gru", "GRU")
rnn_tanh = _single("rnn_tanh", "RNN_TANH")
rnn_relu = _single("rnn_relu", "RNN_RELU")


def _cell(fn, mode, input, state, w_ih, w_hh, b_ih, b_hh):
    _check_tensor(fn, "input", input)
    for name, t in (*(("hx", s) for s in state), ("w_ih", w_ih), ("w_hh", w_hh)):
        _check_tensor(fn, name, t)
    if input.ndim != 2:  # (torch's cells take batches only: its modules add the batch dim)
        raise IndexError(f"{fn}(): expected 2-D input (batch, input_size), got "
                         f"{input.ndim}-D")
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"{fn}(): input has inconsistent input_size: got {input.shape[1]} "
                           f"expected {w_ih.shape[1]}")
    for i, h in enumerate(state):
        want = (input.shape[0], w_hh.shape[1])
        if tuple(h.shape) != want:
            raise RuntimeError(f"{fn}(): hidden{i} should be of shape {want}, got "
                               f"{tuple(h.shape)}")
    projected = recurrent.project(mode, input, w_ih, b_ih, b_hh)
    return recurrent.run(mode, projected, state, w_hh, b_hh, None, False, (input.shape[0],))[1]


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """(h', c') of one LSTM step: hx = (h, c); gates i, f, g, o of
    input w_ih^T + b_ih + h w_hh^T + b_hh."""
    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise RuntimeError("lstm_cell(): hx must be a sequence of two tensors (h, c)")
    return _cell("lstm_cell", "LSTM", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' of one GRU step (gates r, z, n)."""
    return _cell("gru_cell", "GRU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' = tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    return _cell("rnn_tanh_cell", "RNN_TANH", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' = relu(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    return _cell("rnn_relu_cell", "RNN_RELU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


# -- native norms and dropout: the result and what the backward saves --------------------------
def _mean_rstd(x, dims, eps, keepdim):
    """x's mean and 1 / sqrt(biased variance + eps) over dims, without grad."""
    with no_grad():
        mean = reduction.mean(x, dims, keepdim=keepdim)
        var = elementwise.square(x - reduction.mean(x, dims, keepdim=True))
        var = reduction.mean(var, dims, keepdim=keepdim)
        return mean, elementwise.rsqrt(var + eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm(input, ...), mean, rstd): mean and rstd over the normalized dims, shaped
    input.shape[:-len(normalized_shape)] + (1,) * len(normalized_shape)."""
    from . import norm
    out = norm.layer_norm(input, normalized_shape, weight, bias, eps)
    n = len(norm.as_shape(normalized_shape, "native_layer_norm"))
    dims = tuple(range(input.ndim - n, input.ndim))
    return (out, *_mean_rstd(input.detach(), dims, eps, True))


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                      *, out=None):
    """(batch_norm(...), save_mean, save_invstd): training, the batch's mean and
    1 / sqrt(biased variance + eps) per channel (running_mean and running_var updated in
    place, when given); otherwise the running statistics normalise, and the saved ones are
    empty."""
    if out is not None:
        raise RuntimeError("native_batch_norm(): out= is not supported by jitensor")
    _check_tensor("native_batch_norm", "input", input)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("native_batch_norm(): running_mean and running_var must be defined "
                           "in evaluation mode")
    result = _F().batch_norm(input, running_mean, running_var, weight, bias, training,
                             momentum, eps)
    if not training:
        empty_stat = empty(0, dtype=input.dtype, device=input.device)
        return result, empty_stat, empty_stat.clone()
    dims = (0, *range(2, input.ndim))
    return (result, *_mean_rstd(input.detach(), dims, eps, False))


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(group_norm(input, group, weight, bias, eps), mean, rstd): mean and rstd (N, group),
    input holding N * C * HxW elements."""
    _check_tensor("native_group_norm", "input", input)
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements (N={N}, C={C}, "
                           f"HxW={HxW}), got {input.numel()}")
    result = _F().group_norm(input, group, weight, bias, eps)
    grouped = input.detach().reshape(N, group, -1)
    return (result, *_mean_rstd(grouped, (2,), eps, False))


def native_dropout(input, p, train):
    """(output, mask): training (train True or None), each element kept (mask True) with
    probability 1 - p and scaled by 1 / (1 - p); otherwise a copy of input and an all-True
    mask."""
    _check_tensor("native_dropout", "input", input)
    if train is None or train:
        if not 0 <= 1 - p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
        with no_grad():
            mask = empty(input.shape, dtype=dtypes.bool_, device=input.device)
            mask.bernoulli_(1 - p)
        scale = 0.0 if p == 1 else 1.0 / (1 - p)
        return input * mask * scale, mask
    return input.clone(), ones_like(input, dtype=dtypes.bool_)


# -- SyncBatchNorm's helpers: per-channel statistics, combined across processes ------------------
def _channel_dims(input):
    return (0, *range(2, input.ndim))


def _along(t, input):
    return t.reshape([1, -1] + [1] * (input.ndim - 2))


def batch_norm_stats(input, eps):
    """(mean, invstd) per channel (dim 1) of input: invstd = 1 / sqrt(biased var + eps)."""
    _check_tensor("batch_norm_stats", "input", input)
    dims = _channel_dims(input)
    mean = reduction.mean(input, dims)
    var = reduction.mean(elementwise.square(input - _along(mean, input)), dims)
    return mean, elementwise.rsqrt(var + eps)


def batch_norm_elemt(input, weight, bias, mean, invstd, eps, *, out=None):
    """(input - mean) * invstd * weight + bias per channel (eps is unused, as torch's)."""
    result = (input - _along(mean, input)) * _along(invstd, input)
    if weight is not None:
        result = result * _along(weight, input)
    if bias is not None:
        result = result + _along(bias, input)
    if out is not None:
        out.copy_(result)
        return out
    return result


def _update_running(running_mean, running_var, mean, var, count, momentum):
    """The running statistics blended in place with the batch's (the variance unbiased)."""
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (count / (count - 1)) if count > 1 else var
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum, eps, counts):
    """The global (mean, invstd) of per-process statistics mean and invstd (world, C), each
    over counts[i] elements; running_mean and running_var are updated in place."""
    counts = counts.to(mean.dtype).reshape(-1, 1)
    total = counts.sum()
    global_mean = (mean * counts).sum(0) / total
    var = elementwise.reciprocal(elementwise.square(invstd)) - eps
    global_var = ((var + elementwise.square(mean - global_mean)) * counts).sum(0) / total
    _update_running(running_mean, running_var, global_mean, global_var, float(total),
                    momentum)
    return global_mean, elementwise.rsqrt(global_var + eps)


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps,
                            count):
    """batch_norm_gather_stats_with_counts with `count` elements in each process."""
    counts = empty(mean.shape[0], dtype=mean.dtype, device=mean.device).fill_(count)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """(mean, biased variance) per channel of input, blending running_mean and running_var
    (unbiased) in place."""
    _check_tensor("batch_norm_update_stats", "input", input)
    dims = _channel_dims(input)
    mean = reduction.mean(input, dims)
    var = reduction.mean(elementwise.square(input - _along(mean, input)), dims)
    _update_running(running_mean, running_var, mean, var, input.numel() // input.shape[1],
                    momentum)
    return mean, var


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g,
                               bias_g):
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) per channel: the sums of grad_out and of
    grad_out * (input - mean) (for input_g), sum_dy_xmu * invstd (for weight_g, with a
    weight) and sum_dy (for bias_g); each not asked for is an empty tensor."""
    dims = _channel_dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _along(mean, input))).sum(dims)
    none = empty(0, dtype=input.dtype, device=input.device)
    return (sum_dy if input_g else none, sum_dy_xmu if input_g else none.clone(),
            sum_dy_xmu * invstd if weight_g and weight is not None else none.clone(),
            sum_dy if bias_g else none.clone())


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu,
                              count):
    """The input's gradient from the reduced sums of all processes, count (world,) holding
    each process's element count (an integer tensor, as torch's)."""
    if count.dtype.is_floating_point:
        raise RuntimeError(f"batch_norm_backward_elemt(): expected count to be an integer "
                           f"tensor, got {count.dtype}")
    n = float(count.sum())
    mean_dy, mean_dy_xmu = _along(sum_dy / n, input), _along(sum_dy_xmu / n, input)
    inv = _along(invstd, input)
    scale = inv if weight is None else inv * _along(weight, input)
    xmu = input - _along(mean, input)
    return (grad_out - mean_dy - xmu * elementwise.square(inv) * mean_dy_xmu) * scale


# -- convolution ----------------------------------------------------------------------------
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """conv1d/2d/3d (or their transposes, with output_padding) by input's dims."""
    _check_tensor("convolution", "input", input)
    n = weight.ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution(): expected a 3-D, 4-D or 5-D weight, got "
                           f"{weight.ndim}-D")
    F = _F()
    if transposed:
        fn = getattr(F, f"conv_transpose{n}d")
        return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding),
                  groups, tuple(dilation))
    if any(output_padding):
        raise RuntimeError("convolution(): output_padding is only for transposed convolutions")
    fn = getattr(F, f"conv{n}d")
    return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


# -- torch's older norms ------------------------------------------------------------------------
def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """sqrt of the sum of squares over dim (at most 2 dims; none: all). Deprecated, as
    torch's: use linalg.vector_norm(input, 2, dim, keepdim)."""
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning, stacklevel=2)
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           f"instead.")
    return _linalg().vector_norm(input, 2, dims or None, keepdim, out=out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The sum of the singular values of the matrices over `dim` (two dims; default the last
    two): nuclear_norm(input, keepdim=False) or nuclear_norm(input, dim, keepdim=False).
    Deprecated, as torch's: use linalg.matrix_norm(input, 'nuc', dim, keepdim)."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    if dim is None:
        dim = (-2, -1)
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dims))}")
    return _linalg().matrix_norm(input, "nuc", tuple(dims), keepdim, out=out)


def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm of v over every dim but `dim` (kept, the others of size 1); dim=-1: the
    norm of all of v (weight_norm's helper)."""
    _check_tensor("norm_except_dim", "v", v)
    if dim == -1:
        return _linalg().vector_norm(v, pow)
    dim = v._dim(dim)
    rows = v.transpose(0, dim).reshape(v.shape[dim], -1)
    size = [1] * v.ndim
    size[dim] = v.shape[dim]
    return _linalg().vector_norm(rows, pow, 1).reshape(size)


def fill(input, value):
    """A new tensor of input's shape, dtype and device holding `value` (a number, or a 0-d
    tensor, whose gradient is then the sum of the result's)."""
    _check_tensor("fill", "input", input)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return value.to(input.device, input.dtype).expand(input.shape).clone()
    return input.detach().new_full(input.shape, value)
