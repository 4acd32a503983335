"""torch.fft: discrete Fourier transforms of any length along any dims, with torch's `norm`
modes, differentiable. Every function is a resize of the input (`n`, `s`: cut or zero-padded
at the end) followed by the three transforms of ops/spectral.py (complex to complex, real to
complex, complex to real), which run the mixed-radix and Bluestein kernels of
kernels/cpu/fft.py. Real input of float32 (or integers, bool) transforms in complex64, float64
in complex128; float16 and bfloat16 in complex64."""
import math

from . import dtypes
from .creation import arange, ones, zeros
from .nn import functional as F
from .ops import complex_ops, shape, spectral
from .ops._common import write_out
from .ops.elementwise import where
from .tensor import Tensor

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]  # (stft and istft: jitensor's top level)

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# -- arguments ------------------------------------------------------------------------------------
def _tensor(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _scale(norm, n, inverse):
    """The factor of a transform over n points: "backward" scales the inverse by 1/n,
    "forward" the forward one, "ortho" both by 1/sqrt(n)."""
    if norm is None or norm == "backward":
        return 1 / n if inverse else 1
    if norm == "forward":
        return 1 if inverse else 1 / n
    if norm == "ortho":
        return 1 / math.sqrt(n)
    raise RuntimeError(f'Invalid normalization mode: "{norm}"; use "backward", "forward" or '
                       f'"ortho"')


def _complex(x):
    """x in the complex dtype its transforms compute in."""
    d = x._dtype
    if d.is_complex:
        return x
    return x.to(dtypes.complex128 if d is dtypes.float64 else dtypes.complex64)


def _real(fn, x):
    """Real x in the float dtype its transforms compute in."""
    if x._dtype.is_complex:
        raise RuntimeError(f"{fn} expects a real input tensor, but got {x._dtype}")
    return x if x._dtype in (dtypes.float32, dtypes.float64) else x.to(dtypes.float32)


def _dims(fn, x, s, dim):
    """(dims, sizes) of an n-dimensional transform, as torch reads s= and dim=."""
    ndim = x.ndim
    if dim is None:
        dims = list(range(ndim - len(s), ndim)) if s is not None else list(range(ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if ndim == 0 and dims:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        for d in dims:
            if not -ndim <= d < ndim:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-ndim}, {ndim - 1}], but got {d})")
        dims = [d % ndim for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{fn} dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if len(s) != len(dims):
            raise RuntimeError(f"When given, dim and shape arguments must have the same length; "
                               f"got s={s} and dim={dims}")
    sizes = [x.shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, sizes


def _resized(x, dim, n):
    """x cut to n entries along dim, or zero-padded to n at the end."""
    have = x.shape[dim]
    if n < have:
        return shape.narrow(x, dim, 0, n)
    if n > have:
        size = list(x.shape)
        size[dim] = n - have
        return shape.cat([x, zeros(size, dtype=x.dtype, device=x.device)], dim)
    return x


# -- complex to complex -------------------------------------------------------------------------
def _c2c(fn, input, s, dim, norm, inverse, out):
    x = _complex(_tensor(fn, input))
    dims, sizes = _dims(fn, x, s, dim)
    for d, n in zip(dims, sizes, strict=True):
        x = _resized(x, d, n)
    if not dims:
        return write_out(fn, out, x.clone())
    scale = _scale(norm, math.prod(sizes), inverse)
    return write_out(fn, out, spectral.fft_c2c(x, tuple(dims), scale, inverse))


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform along `dim` (n points: cut or
    zero-padded)."""
    return _c2c("fft", input, None if n is None else [n], [dim], norm, False, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional inverse discrete Fourier transform along `dim`."""
    return _c2c("ifft", input, None if n is None else [n], [dim], norm, True, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _c2c("fft2", input, s, dim, norm, False, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _c2c("ifft2", input, s, dim, norm, True, out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional discrete Fourier transform over `dim` (every dim, or the last len(s))."""
    return _c2c("fftn", input, s, dim, norm, False, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2c("ifftn", input, s, dim, norm, True, out)


# -- real to complex and back -------------------------------------------------------------------
def _r2c(fn, input, s, dim, norm, out, onesided_conj=False):
    """rfftn (ihfftn with `onesided_conj`: conjugated, the dual norm): the last dim's half
    spectrum, then the others' full transforms."""
    x = _real(fn, _tensor(fn, input))
    dims, sizes = _dims(fn, x, s, dim)
    if not dims:
        raise RuntimeError(f"{fn} must transform at least one axis")
    for d, n in zip(dims, sizes, strict=True):
        x = _resized(x, d, n)
    scale = _scale(_DUAL[norm or "backward"] if onesided_conj else norm, math.prod(sizes),
                   False)
    y = spectral.fft_r2c(x, dims[-1], scale)
    if len(dims) > 1:
        y = spectral.fft_c2c(y, tuple(dims[:-1]), 1, False)
    return write_out(fn, out, complex_ops.conj(y) if onesided_conj else y)


def _c2r(fn, input, s, dim, norm, out, hermitian=False):
    """irfftn (hfftn with `hermitian`: of the conjugate, the dual norm): the other dims'
    inverse transforms, then the last dim's real one from its half spectrum."""
    x = _complex(_tensor(fn, input))
    if hermitian:
        x = complex_ops.conj(x)
    dims, sizes = _dims(fn, x, s, dim)
    if not dims:
        raise RuntimeError(f"{fn} must transform at least one axis")
    last = dims[-1]
    if s is None or s[-1] == -1:  # the half spectrum of 2 (m - 1) real points
        sizes[-1] = 2 * (x.shape[last] - 1)
        if sizes[-1] < 1:
            raise RuntimeError(f"Invalid number of data points ({sizes[-1]}) specified")
    for d, n in zip(dims[:-1], sizes[:-1], strict=True):
        x = _resized(x, d, n)
    x = _resized(x, last, sizes[-1] // 2 + 1)
    scale = _scale(_DUAL[norm or "backward"] if hermitian else norm, math.prod(sizes), True)
    if len(dims) > 1:
        x = spectral.fft_c2c(x, tuple(dims[:-1]), 1, True)
    return write_out(fn, out, spectral.fft_c2r(x, last, sizes[-1], scale))


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The first n // 2 + 1 outputs of the discrete Fourier transform of real input (the rest
    are their conjugates)."""
    return _r2c("rfft", input, None if n is None else [n], [dim], norm, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The n real values (default 2 (m - 1)) whose rfft is input's m values."""
    return _c2r("irfft", input, None if n is None else [n], [dim], norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _r2c("rfft2", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _c2r("irfft2", input, s, dim, norm, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _r2c("rfftn", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2r("irfftn", input, s, dim, norm, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The real transform of a Hermitian signal given by its first half (irfft's dual)."""
    return _c2r("hfft", input, None if n is None else [n], [dim], norm, out, hermitian=True)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the half spectrum of real input, conjugated."""
    return _r2c("ihfft", input, None if n is None else [n], [dim], norm, out,
                onesided_conj=True)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _c2r("hfft2", input, s, dim, norm, out, hermitian=True)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _r2c("ihfft2", input, s, dim, norm, out, onesided_conj=True)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2r("hfftn", input, s, dim, norm, out, hermitian=True)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _r2c("ihfftn", input, s, dim, norm, out, onesided_conj=True)


# -- frequencies and shifts ---------------------------------------------------------------------
def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point transform: [0, 1, ..., n//2 - 1 (or (n-1)//2),
    -n//2, ..., -1] / (d n)."""
    k = arange(n, dtype=dtype or dtypes.get_default_dtype(), device=device)
    k = where(k < (n + 1) // 2, k, k - n)
    return write_out("fftfreq", out, (k / (d * n)).requires_grad_(requires_grad))


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft's n // 2 + 1 outputs: [0, 1, ..., n // 2] / (d n)."""
    k = arange(n // 2 + 1, dtype=dtype or dtypes.get_default_dtype(), device=device)
    return write_out("rfftfreq", out, (k / (d * n)).requires_grad_(requires_grad))


def _shifts(x, dim, sign):
    dims = list(range(x.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return shape.roll(x, [sign * (x.shape[d] // 2) for d in dims], dims)


def fftshift(input, dim=None):
    """The zero frequency moved to the centre: a roll by n // 2 along each of `dim` (all)."""
    return _shifts(_tensor("fftshift", input), dim, 1)


def ifftshift(input, dim=None):
    """fftshift undone: a roll by -(n // 2)."""
    return _shifts(_tensor("ifftshift", input), dim, -1)


# -- short-time transforms (torch.stft, torch.istft) --------------------------------------------
def _window(fn, window, win_length, n_fft, like):
    """The window (ones by default, like tensor `like`'s real dtype) zero-padded on both sides
    to n_fft, as torch centres it."""
    if win_length is None:
        win_length = n_fft
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{fn}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{fn}: expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or win_length < n_fft:
        window = F.pad(window, [left, n_fft - win_length - left])
    return window


def _hop(fn, hop_length, n_fft):
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise RuntimeError(f"{fn}: expected hop_length > 0, but got hop_length={hop}")
    return hop


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform: the transforms of windowed frames of n_fft samples,
    hop_length apart, as (..., n_fft // 2 + 1 or n_fft frequencies, frames); `center` pads
    n_fft // 2 samples on both sides first (`pad_mode`)."""
    x = _tensor("stft", input)
    if return_complex is None and not x.is_complex() and not (
            window is not None and window.is_complex()):
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if x.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {x.ndim}D")
    if not 0 < n_fft <= x.shape[-1] + (2 * (n_fft // 2) if center else 0):
        raise RuntimeError(f"stft: expected 0 < n_fft < {x.shape[-1]}, but got n_fft={n_fft}")
    hop = _hop("stft", hop_length, n_fft)
    batched = x.ndim == 2
    x = x if batched else x.unsqueeze(0)
    if center:
        x = F.pad(x.unsqueeze(1), [n_fft // 2, n_fft // 2], mode=pad_mode).squeeze(1)
    frames = x.unfold(-1, n_fft, hop)  # (batch, frames, n_fft)
    w = _window("stft", window, win_length, n_fft, x if x.dtype.category > 1 else
                x.to(dtypes.get_default_dtype()))
    frames = frames * w
    onesided = not (frames.is_complex()) if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    if onesided:
        if frames.is_complex():
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spec = rfft(frames, norm=norm)
    else:
        spec = fft(frames, norm=norm)
    spec = spec.transpose(-1, -2)
    spec = spec if batched else spec.squeeze(0)
    if return_complex is False:
        import warnings
        warnings.warn("stft with return_complex=False is deprecated; it returns the real and "
                      "imaginary parts as a last dim of 2 (view_as_real of the complex result)",
                      UserWarning, stacklevel=2)
        return complex_ops.view_as_real(spec.contiguous())
    return spec.contiguous()


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse short-time Fourier transform: each frame's inverse transform, windowed and
    overlap-added, divided by the overlapping windows' squares (which must not vanish)."""
    x = _tensor("istft", input)
    if not x.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor")
    if x.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex dtype, "
                           f"but got {x.ndim}")
    hop = _hop("istft", hop_length, n_fft)
    batched = x.ndim == 3
    x = x if batched else x.unsqueeze(0)
    n_freq, n_frames = x.shape[1], x.shape[2]
    onesided = n_freq != n_fft if onesided is None else onesided
    if (n_fft // 2 + 1 if onesided else n_fft) != n_freq:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{n_freq}" if onesided else f"istft: expected the frequency "
                           f"dimension to equal n_fft={n_fft} when onesided=False, got {n_freq}")
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = x.transpose(1, 2)  # (batch, frames, frequencies)
    frames = irfft(spec, n=n_fft, norm=norm) if onesided else ifft(spec, n=n_fft, norm=norm)
    if not onesided and not return_complex:
        frames = complex_ops.real(frames)
    w = _window("istft", window, win_length, n_fft, frames)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    y = _overlap_add(frames, hop, total)
    envelope = _overlap_add((w * w).expand(1, n_frames, n_fft), hop, total)[0]
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    end = min(end, total)
    envelope = envelope[start:end]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(f"istft: window overlap add min: {float(envelope.abs().min())}; the "
                           f"squared windows, overlapped hop_length={hop} apart, must not vanish "
                           f"(the NOLA condition)")
    y = y[:, start:end] / envelope
    if length is not None and y.shape[-1] < length:
        y = F.pad(y, [0, length - y.shape[-1]])
    return y if batched else y.squeeze(0)


def _overlap_add(frames, hop, total):
    """(batch, frames, n) -> (batch, total): frame t added at t * hop (fold's col2im)."""
    if frames.is_complex():
        parts = complex_ops.view_as_real(frames)  # (batch, frames, n, 2)
        both = [_overlap_add(parts[..., i].contiguous(), hop, total) for i in (0, 1)]
        return complex_ops.complex(*both)
    n = frames.shape[-1]
    return F.fold(frames.transpose(1, 2), (1, total), (1, n), stride=(1, hop))[:, 0, 0]
