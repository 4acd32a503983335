"""torch.nn's resampling: interpolate (and the deprecated upsample forms), pixel_shuffle and
pixel_unshuffle, channel_shuffle, fold and unfold, and their modules.

interpolate is separable: along each spatial dim the output is a weighted sum of a few input
positions (1 for nearest, 2 for linear, 4 for cubic) gathered with index_select, the positions
and weights computed on the host exactly as torch's CPU kernels compute them (UpSample.h: the
scale in the kernel's "opmath" precision, float32 for float32 and float16 input, float64 for
float64; the same floors and clamps), so the positions picked are torch's. Gradients flow
through index_select (an index_add backward) and the products; area is adaptive average
pooling, one averaging matrix product per dim. The shuffles are reshapes and permutes. unfold
stacks one strided slice per kernel element (convolution._windows); fold adds each kernel
element's block back with index_add onto the flattened padded output."""
import operator
import warnings

import numpy as np

from .. import dtypes
from ..creation import tensor, zeros
from ..tensor import Tensor
from . import convolution as C
from .module import Module

__all__ = ["ChannelShuffle", "Fold", "PixelShuffle", "PixelUnshuffle", "Unfold", "Upsample",
           "UpsamplingBilinear2d", "UpsamplingNearest2d"]
FUNCTIONS = ["channel_shuffle", "fold", "interpolate", "pixel_shuffle", "pixel_unshuffle",
             "unfold", "upsample", "upsample_bilinear", "upsample_nearest"]  # nn.functional's

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
    sizes = [int(n * s) for n, s in zip(input.shape[2:], scales)]
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


def _taps(mode, n_in, n_out, align_corners, scale, ft):
    """[(input positions (n_out,), weights (n_out,) or None)] for one dim: the output at i is
    the sum of weight * input[position] over the taps."""
    i = np.arange(n_out, dtype=np.int64)
    s = _source_scale(n_in, n_out, align_corners, scale, ft)
    if mode == "nearest":
        at = np.floor(_source_index(s, i, True, False, ft)).astype(np.int64)
        return [(np.minimum(at, n_in - 1), None)]
    if mode == "nearest-exact":
        at = np.floor(_source_index(s, i, False, False, ft) + ft(0.5)).astype(np.int64)
        return [(np.minimum(at, n_in - 1), None)]
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
    only (a weight broadcast along the trailing dims measured ~3x slower)."""
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
    m = C._adaptive_matrix(x.shape[d], n_out, x.dtype, x.device)
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
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(f'{k}: {v}' for k, v in zip(names, spatial))}) and "
                           f"output ({', '.join(f'{k}: {v}' for k, v in zip(names, sizes))})")
    nearest = mode in ("nearest", "nearest-exact")
    if not input.dtype.is_floating_point and not (nearest and input.dtype is dtypes.uint8):
        raise NotImplementedError(f"interpolate(mode={mode!r}) is not implemented for "
                                  f"{input.dtype.name} input (torch's kernels take floating "
                                  f"point{', and uint8 for the nearest modes' if nearest else ''}"
                                  f"); convert it with .float()")
    ft = np.float64 if input.dtype is dtypes.float64 else np.float32
    kind = mode if nearest or mode == "area" else "cubic" if mode == "bicubic" else "linear"
    out = input
    for k, (n_in, n_out, scale) in enumerate(zip(spatial, sizes, scales)):
        d = 2 + k
        if kind == "area":
            out = _area(out, d, n_out)
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


# -- fold / unfold -----------------------------------------------------------------------------
def _fold_args(kernel_size, dilation, padding, stride):
    kernel, dilation = C._pair(kernel_size, "kernel_size"), C._pair(dilation, "dilation")
    padding, stride = C._pair(padding, "padding"), C._pair(stride, "stride")
    if min(kernel) <= 0 or min(dilation) <= 0 or min(stride) <= 0 or min(padding) < 0:
        raise RuntimeError(f"kernel_size, dilation and stride should be greater than zero and "
                           f"padding non-negative, but got kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}")
    return kernel, dilation, padding, stride


def _blocks(size, kernel, dilation, padding, stride):
    """The number of sliding blocks along each of the two dims."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


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
        windows, _, _ = C._windows(C._padded(x, (pw, pw, ph, ph), 0), kernel, stride, dilation)
        return windows.reshape(n, c * kernel[0] * kernel[1], blocks[0] * blocks[1])
    return C._batched(run, input, 2)


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
    size = C._pair(output_size, "output_size")
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


# -- modules ---------------------------------------------------------------------------------
class Upsample(Module):
    """interpolate with the module's size or scale_factor (floats), mode and align_corners."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else \
            f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, \
            padding, stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")

