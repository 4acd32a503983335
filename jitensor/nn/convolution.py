"""torch.nn.functional's convolutions, poolings and batch_norm: argument checks as torch's,
then ops, so that autograd differentiates them and they run on every device.

A convolution is one kernel forward and one per gradient (ops/conv.py), and so is max pooling
(ops/pool.py). Average pooling is composed: the windows of the (padded) input, (N, C, kh*kw,
OH*OW), stacked from one strided slice per kernel element (their backward adds the gradient
back onto the input: overlapping windows add up), summed and divided by the counts torch
divides by. 1-d forms run as 2-d ones over a height of 1."""
import operator

from .. import dtypes
from ..autograd import no_grad
from ..creation import arange, ones
from ..ops import norm as N
from ..ops.conv import convolution, output_size
from ..ops.pool import max_pool2d_with_indices
from ..ops.shape import stack
from ..tensor import Tensor

FUNCTIONS = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "batch_norm",
             "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d",
             "max_pool2d"]  # re-exported by nn.functional


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
    (a gather through an index table ran 3x slower forward and backward)."""
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


def _conv_padding(padding, kernel, stride, dilation):
    """(top, bottom, left, right) for an int, pair, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0, 0, 0
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: {padding!r}; expected 'valid' or "
                               f"'same'")
        if stride != (1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return total[0] // 2, total[0] - total[0] // 2, total[1] // 2, total[1] - total[1] // 2
    ph, pw = _pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"negative padding is not supported, got {padding!r}")
    return ph, ph, pw, pw


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


# -- transposed convolution ------------------------------------------------------------------------
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """conv2d's adjoint (the gradient of a convolution with respect to its input) of (N, C, H,
    W) (or (C, H, W)) input with weights (C, O / groups, kh, kw): output (N, O, (H - 1) sh - 2 ph
    + dh (kh - 1) + oph + 1, ...). Per group a matrix product of the transposed weight and the
    input gives each input pixel's kh x kw block of contributions (col2im's columns), which
    sampling._col2im adds onto the output, padding cropped; output_padding extends the far end
    (zeros where no block reaches)."""
    from .sampling import _col2im  # (sampling imports this module)
    if not isinstance(weight, Tensor) or weight.ndim != 4:
        raise RuntimeError(f"conv_transpose2d: expected a 4-D weight (in_channels, out_channels "
                           f"/ groups, kh, kw), got {getattr(weight, 'shape', weight)}")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    padding, output_padding = _pair(padding, "padding"), _pair(output_padding, "output_padding")
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0 or min(output_padding) < 0:
        raise RuntimeError(f"conv_transpose2d: stride and dilation must be positive and padding "
                           f"and output_padding non-negative, got stride={stride}, dilation="
                           f"{dilation}, padding={padding}, output_padding={output_padding}")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
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
                     zip((h, w), stride, padding, dilation, (kh, kw), output_padding))
        if min(size) <= 0:
            raise RuntimeError(f"conv_transpose2d: the output would be {size[0]}x{size[1]}; "
                               f"padding {padding} is too large for input {h}x{w}")
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
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise RuntimeError(f"{fn}: pad should be at most half of effective kernel size, but "
                           f"got pad={padding} and kernel_size={kernel}")
    if min(stride) < 1 or min(kernel) < 1 or min(dilation) < 1:
        raise RuntimeError(f"{fn}: kernel_size, stride and dilation must be positive, got "
                           f"{kernel}, {stride} and {dilation}")
    return kernel, stride, padding, dilation


def _padded(x, sizes, value):
    """x padded by `value` (F.pad's sizes: left, right, top, bottom), or x itself."""
    from .functional import pad  # (functional imports this module)
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
                            in zip((h, w), kernel, stride, padding, dilation))
        if oh <= 0 or ow <= 0:
            raise RuntimeError(f"max_pool2d: the kernel {kernel} (dilation {dilation}) is larger "
                               f"than the padded input ({h}x{w}): the output would be {oh}x{ow}")
        values, at = max_pool2d_with_indices(x, kernel, stride, padding, dilation, (n, c, oh, ow))
        return values, at if return_indices else None

    values, at = _batched(run, input, 2)
    return (values, at) if return_indices else values


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
                              in zip((h, w), kernel, stride, padding))
        gathered, _, _ = _windows(_padded(x, _pool_sizes(padding, (eh, ew)), 0), kernel, stride,
                                  (1, 1))
        total = gathered.sum(dim=2, dtype=x.dtype).reshape(n, c, oh, ow)
        if divisor_override is not None:
            counts = divisor_override
        else:
            rows, cols = (_window_counts(size, k, s, p, out, count_include_pad, x)
                          for size, k, s, p, out in zip((h, w), kernel, stride, padding, (oh, ow)))
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
    oh, ow = (size if out is None else out for size, out in zip((h, w), sizes))
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
                if not (input.dtype is dtypes.float16 and t.dtype is dtypes.float32):
                    raise RuntimeError(f"batch_norm: expected {name} to have input's dtype "
                                       f"{input.dtype.name}, got {t.dtype.name}; convert it "
                                       f"with .to({input.dtype})")
                t = t.to(input.dtype)  # (float32 params of float16 input, as torch's)
            params.append(None if t is None else t.reshape(c))
        stats = N.batch_statistics(input)
        out = N.native_batch_norm(input, *params, float(eps), stats)
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
