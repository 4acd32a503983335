"""The three discrete Fourier transforms every function of `jitensor.fft` is made of, each a
recorded op with its own rule (autograd/derivatives/spectral.py):

- `fft_c2c(x, dims, scale, inverse)`: complex to complex over `dims`, times `scale`;
- `fft_r2c(x, dim, scale)`: the real input's first n // 2 + 1 outputs along `dim`;
- `fft_c2r(x, dim, n, scale)`: n real outputs from the first n // 2 + 1 of a Hermitian
  spectrum.

Each runs the backend's row kernels (kernels/cpu/fft.py) on the transformed dim moved last and
made contiguous; the results are C-contiguous, as torch's."""
from ..creation import allocate
from ..kernels.registry import backend
from ..tensor import _wrap
from .elementwise import mul


def _rows(x, dim, dtype):
    """x's buffer with `dim` moved last, C-contiguous and of `dtype`, as (rows, n)."""
    b = backend(x._device)
    moved = x._data if dim == x.ndim - 1 else x._data.swapaxes(dim, -1)
    if moved.dtype == dtype.np and moved.flags.c_contiguous:
        dense = moved
    else:
        dense = b.empty(moved.shape, dtype.np)
        b.copy(dense, moved)
    return dense, dense.reshape(-1, dense.shape[-1]) if dense.size else dense


def _finish(out, dim, dtype, device, scale):
    """The kernel's (..., n) output with `dim` moved back, C-contiguous, times `scale`."""
    b = backend(device)
    if scale != 1:  # (on the real parts: a complex product would make inf * 0 a NaN)
        parts = _wrap(out.view(dtype.to_real().np), dtype.to_real(), device)
        mul(parts, scale, out=parts)
    if dim != out.ndim - 1:
        moved = out.swapaxes(dim, -1)
        out = b.empty(moved.shape, out.dtype)
        b.copy(out, moved)
    return _wrap(out, dtype, device)


def _transform(kind, x, dim, n, dtype, scale, inverse=False):
    dense, rows = _rows(x, dim, dtype if kind != "c2r" else dtype.to_complex())
    shape = dense.shape[:-1] + (n,)
    out_dtype = dtype if kind == "c2c" else dtype.to_complex() if kind == "r2c" else dtype
    out = allocate(shape, out_dtype, x._device)._data
    if out.size:
        k = backend(x._device).fft
        flat = out.reshape(-1, n)
        if kind == "c2c":
            k.c2c(rows, flat, inverse)
        elif kind == "r2c":
            k.r2c(rows, flat)
        else:
            k.c2r(rows, flat)
    return _finish(out, dim, out_dtype, x._device, scale)


def fft_c2c(x, dims, scale, inverse):
    """The unnormalised DFT of complex x over each of `dims` in turn (sign + when `inverse`),
    times `scale`."""
    dtype = x._dtype
    for i, d in enumerate(dims):
        x = _transform("c2c", x, d, x.shape[d], dtype, scale if i == len(dims) - 1 else 1,
                       inverse)
    return x


def fft_r2c(x, dim, scale):
    """The first n // 2 + 1 outputs of the forward DFT of real x along dim, times `scale`."""
    return _transform("r2c", x, dim, x.shape[dim] // 2 + 1, x._dtype, scale)


def fft_c2r(x, dim, n, scale):
    """The n real values whose forward DFT's first n // 2 + 1 outputs are x (given exactly
    those along dim), times `scale`: the inverse DFT of the Hermitian spectrum."""
    return _transform("c2r", x, dim, n, x._dtype.to_real(), scale)


def _stft(self, *args, **kwargs):
    from ..fft import stft
    return stft(self, *args, **kwargs)


def _istft(self, *args, **kwargs):
    from ..fft import istft
    return istft(self, *args, **kwargs)


__all__ = []
TENSOR_METHODS = {"stft": _stft, "istft": _istft}  # (jitensor.fft, imported on first use)
