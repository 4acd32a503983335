"""Complex tensors (complex64, complex128) beyond their elementwise arithmetic, which runs on the
complex kernel (ops/elementwise.py, kernels/cpu/complex_ops.py):

- their parts as views sharing memory: `real`, `imag`, `view_as_real`, `view_as_complex`;
- the functions made for them: `complex`, `polar`, `conj` (a copy: jitensor has no lazy
  conjugate bit, so `is_conj()` is always False), `angle`, `abs` and `sgn` of complex input,
  `isreal`;
- the ops composed from the parts: comparisons and predicates, `where` and matmul (four real
  products), so they differentiate through the parts' views (sum, mean, var and cumsum reduce
  the pairs view: ops/reduction.py).

Complex tensors live on the CPU. An op that has no complex form here raises, naming it."""
import builtins
import math

from numpy.lib.stride_tricks import as_strided as _as_strided  # (not the op: its rule)

from .. import creation, dtypes
from ..kernels.registry import backend
from ..tensor import Tensor, _wrap
from . import elementwise as E
from ._common import broadcast_shapes, write_out


def _tensor(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _as_complex(x, dtype):
    """x (a tensor or a number) as a tensor of the complex `dtype`."""
    if isinstance(x, Tensor):
        return x if x._dtype is dtype else x.to(dtype)
    return creation.tensor(builtins.complex(x), dtype=dtype)


# -- the parts as views -------------------------------------------------------------------------
def _pairs(data):
    """A complex buffer's (..., 2) view of its real and imaginary parts, for any strides."""
    re = data.real
    return _as_strided(re, re.shape + (2,), re.strides + (re.itemsize,))


def real(input):
    """The real parts of a complex tensor, as a view; a real tensor itself (as torch)."""
    x = _tensor("real", input)
    return complex_real(x) if x._dtype.is_complex else x


def imag(input):
    """The imaginary parts of a complex tensor, as a view."""
    x = _tensor("imag", input)
    if not x._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return complex_imag(x)


# (the recorded views: real() of a real tensor is that tensor, which no node may claim)
def complex_real(x):
    return _wrap(x._data.real, x._dtype.to_real(), x._device)


def complex_imag(x):
    return _wrap(x._data.imag, x._dtype.to_real(), x._device)


def view_as_real(input):
    """A complex tensor's (..., 2) float view: real and imaginary parts along a new last dim."""
    x = _tensor("view_as_real", input)
    if not x._dtype.is_complex:
        raise RuntimeError(f"view_as_real is only supported for complex tensors, got {x._dtype}")
    return _wrap(_pairs(x._data), x._dtype.to_real(), x._device)


def view_as_complex(input):
    """A float tensor whose last dim holds (real, imaginary) pairs, viewed as complex numbers."""
    x = _tensor("view_as_complex", input)
    if x._dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but "
                           f"got a tensor of scalar type: {x._dtype.scalar_name}")
    if x.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if x.shape[-1] != 2:
        raise RuntimeError(f"Tensor must have a last dimension of size 2, got {x.shape[-1]}")
    strides = x.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1; call .contiguous() "
                           "first")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if x.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    data = x._data.view(x._dtype.to_complex().np)[..., 0]
    return _wrap(data, x._dtype.to_complex(), x._device)


# -- functions made for complex numbers ---------------------------------------------------------
def _parts_dtype(fn, re, im):
    if re._dtype is not im._dtype:
        raise RuntimeError(f"{fn}(): expected both inputs to have the same dtype, got "
                           f"{re._dtype} and {im._dtype}")
    if re._dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{fn}(): expected both inputs to be float or double tensors, got "
                           f"{re._dtype}")
    return re._dtype.to_complex()


def complex(real, imag, *, out=None):
    """The complex tensor real + i imag (float32 parts make complex64, float64 complex128),
    broadcast."""
    re, im = _tensor("complex", real), _tensor("complex", imag)
    dtype = _parts_dtype("complex", re, im)
    shape = broadcast_shapes(re.shape, im.shape)
    z = creation.empty(shape, dtype=dtype, device=re.device)
    pairs, b = _pairs(z._data), backend(re.device)
    b.copy(pairs[..., 0], b.broadcast_to(re._data, shape))
    b.copy(pairs[..., 1], b.broadcast_to(im._data, shape))
    return write_out("complex", out, z)


def polar(abs, angle, *, out=None):
    """The complex tensor abs * (cos(angle) + i sin(angle))."""
    r, theta = _tensor("polar", abs), _tensor("polar", angle)
    _parts_dtype("polar", r, theta)
    return write_out("polar", out, complex(E.mul(r, E.cos(theta)), E.mul(r, E.sin(theta))))


def conj(input):
    """The complex conjugate (a new tensor); a real tensor itself."""
    x = _tensor("conj", input)
    return complex_conj(x) if x._dtype.is_complex else x


def complex_conj(x):
    return complex_unary("conj", x)


def conj_physical(input, *, out=None):
    """The complex conjugate, computed; a real tensor itself (or copied into `out`)."""
    return write_out("conj_physical", out, conj(input))


def conj_physical_(input):
    x = _tensor("conj_physical_", input)
    if x._dtype.is_complex:
        backend(x._device).copy(x._data, conj(x.detach())._data)
    return x


def complex_unary(name, x):
    """The complex kernel's op `name` of the complex tensor x."""
    return E.complex_kernel(name, (x,), x._dtype)


def complex_abs(input):
    """|z| of a complex tensor, as a real tensor (complex64 gives float32)."""
    return E.hypot(real(input), imag(input))


def angle(input, *, out=None):
    """The argument of each element: of a complex number atan2(imag, real); of a real one pi
    for negative numbers, 0 otherwise, nan for nan, in a floating dtype (the default one for
    integer and bool input), with a zero gradient (torch's: the sign term carries x into the
    graph without moving the value)."""
    x = _tensor("angle", input)
    if x._dtype.is_complex:
        return write_out("angle", out, E.atan2(imag(x), real(x)))
    if not x._dtype.is_floating_point:
        x = x.to(dtypes.get_default_dtype())
    pi, zero = creation.full_like(x, math.pi), creation.zeros_like(x)  # in x's dtype
    value = E.where(E.isnan(x), x, E.where(E.lt(x, 0), pi, zero)).detach()
    return write_out("angle", out, E.add(value, E.mul(E.sign(x), 0.0)))


def complex_sgn(input):
    """z / |z| of a complex tensor, 0 where z is 0."""
    r = complex_abs(input)
    return complex_where(E.eq(r, 0), 0, E.div(input, r))


def isreal(input):
    """Whether each element's imaginary part is 0 (all True for a real tensor)."""
    x = _tensor("isreal", input)
    if not x._dtype.is_complex:
        return creation.ones(x.shape, dtype=dtypes.bool_, device=x.device)
    return E.eq(imag(x), 0)


# -- composed from the parts ---------------------------------------------------------------------
def complex_compare(name, x, y):
    """eq or ne of complex operands: both parts equal (or not)."""
    dtype = dtypes.result_type(x, y)
    x, y = _as_complex(x, dtype), _as_complex(y, dtype)
    same = E.logical_and(E.eq(real(x), real(y)), E.eq(imag(x), imag(y)))
    return same if name == "eq" else E.logical_not(same)


def complex_predicate(name, x):
    """isnan, isinf or isfinite of a complex tensor, from its parts."""
    re, im = getattr(E, name)(real(x)), getattr(E, name)(imag(x))
    return E.logical_and(re, im) if name == "isfinite" else E.logical_or(re, im)


def complex_where(condition, input, other):
    """where() of complex operands, on their parts."""
    dtype = dtypes.result_type(input, other)
    x, y = view_as_real(_as_complex(input, dtype)), view_as_real(_as_complex(other, dtype))
    c = condition.unsqueeze(-1) if isinstance(condition, Tensor) else condition
    return view_as_complex(E.where(c, x, y).contiguous())


def complex_matmul(input, other):
    """input @ other for complex operands: four real products of the parts."""
    dtype = dtypes.promote_types(input._dtype, other._dtype)
    a, b = _as_complex(input, dtype), _as_complex(other, dtype)
    ar, ai, br, bi = real(a), imag(a), real(b), imag(b)
    from .linalg import matmul as mm
    return complex(E.sub(mm(ar, br), mm(ai, bi)), E.add(mm(ar, bi), mm(ai, br)))


__all__ = ["angle", "complex", "conj", "conj_physical", "conj_physical_", "imag", "isreal",
           "polar", "real", "view_as_complex", "view_as_real"]
TENSOR_METHODS = {"angle": angle, "conj": conj, "conj_physical": conj_physical,
                  "conj_physical_": conj_physical_, "isreal": isreal, "real": property(real),
                  "imag": property(imag)}
