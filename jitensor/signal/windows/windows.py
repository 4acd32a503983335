"""The window functions, as torch.signal.windows computes them: each a closed form of a
linspace in the requested dtype (float32 or float64; the default dtype when None), so values
equal torch's to rounding. `sym=False` gives the periodic window (one more point, the last
dropped), for spectral analysis."""
import math
from collections.abc import Iterable

import jitensor as jt

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not jt.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (jt.float32, jt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _dtype(dtype):
    return jt.get_default_dtype() if dtype is None else dtype


def _finish(w, requires_grad):
    return w.requires_grad_(True) if requires_grad else w


def _trivial(M, dtype, device, requires_grad):
    """The window of length 0 (empty) or 1 (a single 1), else None."""
    if M == 0:
        return _finish(jt.empty((0,), dtype=dtype, device=device), requires_grad)
    if M == 1:
        return _finish(jt.ones((1,), dtype=dtype, device=device), requires_grad)
    return None


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=jt.strided,
                device=None, requires_grad=False):
    """exp(-|n - center| / tau), center (M - 1) / 2 by default (M / 2 when periodic)."""
    dtype = _dtype(dtype)
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _finish(jt.empty((0,), dtype=dtype, device=device), requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = jt.linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype=dtype,
                    device=device)
    return _finish(jt.exp(-jt.abs(k)), requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=jt.strided, device=None, requires_grad=False):
    """sin(pi (n + 1/2) / M) (the sine window)."""
    dtype = _dtype(dtype)
    _checks("cosine", M, dtype, layout)
    if M == 0:
        return _finish(jt.empty((0,), dtype=dtype, device=device), requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = jt.linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype,
                    device=device)
    return _finish(jt.sin(k), requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=jt.strided, device=None,
             requires_grad=False):
    """exp(-((n - (M - 1) / 2) / std)^2 / 2)."""
    dtype = _dtype(dtype)
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _finish(jt.empty((0,), dtype=dtype, device=device), requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = jt.linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype,
                    device=device)
    return _finish(jt.exp(-k ** 2), requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=jt.strided, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    dtype = _dtype(dtype)
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    beta = jt.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = jt.minimum(beta, start + (M - 1) * constant)
    k = jt.linspace(start.item(), end.item(), M, dtype=dtype, device=device)
    return _finish(jt.i0(jt.sqrt(beta * beta - jt.pow(k, 2))) / jt.i0(beta), requires_grad)


def hann(M, *, sym=True, dtype=None, layout=jt.strided, device=None, requires_grad=False):
    """The Hann window: general_hamming with alpha 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=jt.strided, device=None, requires_grad=False):
    """The Hamming window: general_hamming with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=jt.strided, device=None, requires_grad=False):
    """The triangular window 1 - |2n / (M - 1) - 1|."""
    dtype = _dtype(dtype)
    _checks("bartlett", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = jt.linspace(start, start + (M - 1) * constant, M, dtype=dtype, device=device)
    return _finish(1 - jt.abs(k), requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=jt.strided, device=None, requires_grad=False):
    """general_cosine with a = (0.42, 0.5, 0.08)."""
    dtype = _dtype(dtype)
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=jt.strided, device=None,
                    requires_grad=False):
    """general_cosine with a = (alpha, 1 - alpha)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=jt.strided, device=None,
                   requires_grad=False):
    """sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _dtype(dtype)
    if a is None:
        raise TypeError("Coefficients are required")
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    _checks("general_cosine", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = jt.linspace(0, (M - 1) * constant, M, dtype=dtype, device=device)
    a_i = jt.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype)
    i = jt.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device)
    return _finish((a_i.unsqueeze(-1) * jt.cos(i.unsqueeze(-1) * k)).sum(0), requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=jt.strided, device=None, requires_grad=False):
    """general_cosine with Nuttall's four coefficients."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
