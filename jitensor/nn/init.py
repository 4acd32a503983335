"""torch.nn.init: fill a tensor in place (without recording autograd history) from jitensor's
counter-based RNG, so a seed gives the same weights on any device and core count."""
import math
import warnings

from ..autograd import no_grad
from ..creation import eye, rand, randn
from ..creation import tensor as _tensor
from ..ops.elementwise import where

__all__ = ["calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_",
           "normal_", "ones_", "orthogonal_", "sparse_", "trunc_normal_", "uniform_",
           "xavier_normal_", "xavier_uniform_", "zeros_"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended scale of weights feeding `nonlinearity` (torch's table)."""
    if nonlinearity in _LINEAR_FNS:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight laid out as (out, in, *kernel)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill_from(tensor, sample):
    """Copy `sample` (a fresh tensor of tensor's shape) into `tensor` outside autograd."""
    with no_grad():
        return tensor.copy_(sample)


def _options(tensor, generator):
    return dict(dtype=tensor.dtype, device=tensor.device, generator=generator)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Values drawn from U(a, b)."""
    u = rand(tensor.shape, **_options(tensor, generator))
    return _fill_from(tensor, u.mul_(b - a).add_(a))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Values drawn from N(mean, std^2)."""
    z = randn(tensor.shape, **_options(tensor, generator))
    return _fill_from(tensor, z.mul_(std).add_(mean))


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0)


def ones_(tensor):
    return constant_(tensor, 1)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """He: gain / sqrt(fan), or None (with torch's warning) for a tensor with no elements."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He: U(-bound, bound) with bound = gain * sqrt(3 / fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He: N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std^2) restricted to [a, b], by torch's two rejection samplers."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    opts = _options(tensor, generator)
    if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
        # Most normal draws land inside: redraw the few that don't. The bounds are rounded to
        # the tensor's dtype so that the test agrees with the values that get stored.
        lo, hi = (_tensor(v, dtype=tensor.dtype).item() for v in (a, b))
        result = randn(tensor.shape, **opts).mul_(std).add_(mean)
        while (out := (result < lo) | (result > hi)).any():
            result = where(out, randn(tensor.shape, **opts).mul_(std).add_(mean), result)
        return _fill_from(tensor, result)

    # A narrow or far-off window would reject nearly every normal draw: propose uniformly on
    # [a, b] instead and accept with probability pdf(x) / pdf(mode).
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def propose():
        x = rand(tensor.shape, **opts).mul_(b - a).add_(a)
        rejected = rand(tensor.shape, **opts).log_() > ((x - mean) / std) ** 2 * -0.5 - log_peak
        return x, rejected

    result, pending = propose()
    while pending.any():
        x, rejected = propose()
        result = where(pending, x, result)
        pending = pending & rejected
    return _fill_from(tensor, result)


def eye_(tensor):
    """The identity, so a Linear layer passes through as many inputs as it can."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill_from(tensor, eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor, groups=1):
    """A Dirac delta at each kernel's centre, so a convolution passes through as many input
    channels as it can (within each group)."""
    dimensions = tensor.ndimension()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    out_chans = [g * out_per_group + d for g in range(groups) for d in range(min_dim)]
    in_chans = list(range(min_dim)) * groups
    centre = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        if out_chans:
            index = (_tensor(out_chans, device=tensor.device),
                     _tensor(in_chans, device=tensor.device))
            tensor[index + centre] = 1
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std^2) with ceil(sparsity * rows) entries of each column set to zero."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    normal_(tensor, 0.0, std, generator)
    # Sorting a uniform column gives a random permutation of its rows, so every column's
    # randperm(rows)[:num_zeros] comes from one argsort; slicing as torch does keeps its
    # handling of sparsity outside [0, 1].
    zero_rows = rand((rows, cols), **_options(tensor, generator)).argsort(dim=0)[:num_zeros]
    with no_grad():
        return tensor.scatter_(0, zero_rows, 0)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix times gain; dims after the first are flattened."""
    from .. import linalg  # imported on first use, as jt.linalg is

    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = randn((rows, cols), **_options(tensor, generator))
    if rows < cols:
        flattened = flattened.t()
    q, r = linalg.qr(flattened)
    # Fixing the signs of R's diagonal makes Q Haar-distributed (Mezzadri, math-ph/0609050).
    q = q * r.diag(0).sign()
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view_as(q).copy_(q)
        return tensor.mul_(gain)


def _deprecated(method):
    """torch's old name of an initializer (no trailing underscore): it warns, then runs it."""
    old = method.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of "
                      f"`nn.init.{method.__name__}`.", FutureWarning, stacklevel=2)
        return method(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"{old}(...): deprecated, see nn.init.{method.__name__}."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
dirac = _deprecated(dirac_)
