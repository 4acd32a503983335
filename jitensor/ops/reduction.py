"""Reductions (sum, mean, prod, max, min, amax, amin, argmax, argmin, all, any, var, std,
logsumexp), softmax / log_softmax and cumsum, with torch's signatures, dtype rules and errors;
and the reductions composed from those and elementwise ops (see "composites" below).

Each front end validates every argument, picks the result dtype, allocates the result and calls
one launcher of `backend(device).reduction`: `reduce` for the reductions (over any set of dims
and any layout, without copying the input unless a reduced dim is broadcast or the reduced
dims form more than two strided blocks) and `along` for the ops whose result has the input's
shape. A result meant for `out=` is computed into a new buffer and copied into `out`
(cast to its dtype), so a failed check, or an out that aliases the input, is harmless."""
import math
import operator
import types
import warnings

import numpy as np

from .. import dtypes
from ..autograd.graph import carrying
from ..creation import allocate
from ..dtypes import to_dtype
from ..kernels.registry import backend
from ..kernels.scalar import reduction as codes
from ..tensor import Tensor, _wrap
from ._common import check_exact_out as _check_exact_out
from ._common import check_out, dense, in_place, is_grad_enabled, write_out, write_pair
from ._common import dim as _one_dim
from ._common import dims as _dims
from .elementwise import isnan, logical_xor, ne, sub
from .indexing import masked_fill
from .shape import cat, narrow

__all__ = ["all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "count_nonzero", "cumsum",
           "diff", "log_softmax", "logsumexp", "max", "mean", "min", "nanmean", "nansum", "norm",
           "prod", "renorm", "return_types", "softmax", "std", "std_mean", "sum", "var",
           "var_mean"]


# -- torch.return_types ---------------------------------------------------------------------------
class _Named(tuple):
    """A tuple with named fields, as torch.return_types.max (values, indices), aminmax (min,
    max) or linalg_lu (P, L, U): its entries are also attributes, named by `_fields`."""

    __slots__ = ()
    _fields = ("values", "indices")

    def __new__(cls, *items):
        if len(items) != len(cls._fields):
            raise TypeError(f"{cls.__name__} takes {len(cls._fields)} entries, got {len(items)}")
        return tuple.__new__(cls, items)

    def __repr__(self):
        body = ",\n".join(f"{name}={value!r}"
                          for name, value in zip(self._fields, self, strict=False))
        return f"{dtypes.SHOWN_AS}.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (_rebuild, (type(self).__name__, *self))


def _return_type(name, fields=_Named._fields):
    cls = type(name, (_Named,), {"__slots__": (), "__module__": "jitensor.return_types",
                                 "_fields": fields,
                                 **{f: property(operator.itemgetter(i))
                                    for i, f in enumerate(fields)}})
    cls.__qualname__ = name
    return cls


def _rebuild(name, *items):
    """Unpickle a return type (its module, jitensor.return_types, is a namespace, not a file)."""
    return getattr(return_types, name)(*items)


return_types = types.SimpleNamespace(aminmax=_return_type("aminmax", ("min", "max")),
                                     **{name: _return_type(name)
                                        for name in ("max", "min", "sort", "topk")})
for _name, _args in (("max", "dim"), ("min", "dim"), ("sort", "dim"), ("topk", "k, dim"),
                     ("aminmax", "dim=dim")):
    _cls = getattr(return_types, _name)
    _cls.__doc__ = f"The ({', '.join(_cls._fields)}) that jitensor.{_name}(input, {_args}) returns."


# -- argument checks ------------------------------------------------------------------------------
def _input(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input


def _reduced(fn, input, dim, empty_is_all=True):
    """The sorted reduced dims for `dim` (None, an int or a sequence of ints); a 0-d tensor
    accepts 0 and -1 and reduces nothing. `()` means every dim, except for all/any."""
    if isinstance(dim, (list, tuple)):
        dim = tuple(dim)
        if not dim and empty_is_all:
            dim = None
    elif dim is not None and (isinstance(dim, bool) or not isinstance(dim, (int, np.integer))):
        raise TypeError(f"{fn}(): argument 'dim' must be an int or a tuple of ints, not "
                        f"{type(dim).__name__}")
    ndim = input._data.ndim
    reduced = _dims(dim, ndim, fn)
    return reduced if ndim else ()


def _int_dim(fn, input, dim):
    """A single dim (int) made non-negative; None for a 0-d tensor's 0 or -1."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    d = _one_dim(int(dim), input._data.ndim, fn)
    return d if input._data.ndim else None


def _dtype_arg(dtype):
    return None if dtype is None else to_dtype(dtype)


def _sum_dtype(fn, input, dtype, out):
    """sum/prod/cumsum: `dtype` if given (out= must then have it), else out's dtype (torch
    computes in it), else int64 for bool and integer input and input's dtype for floats."""
    if dtype is not None:
        _check_exact_out(fn, out, dtype)
        return dtype
    if isinstance(out, Tensor):
        return out._dtype
    return input._dtype if input._dtype.category > 1 else dtypes.int64


def _float_dtype(fn, input, dtype):
    """mean: a floating dtype, from `dtype` or the input, else torch's error."""
    if dtype is not None:
        if dtype.category < 2:
            raise RuntimeError(f"{fn}(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: {dtype.name}")
        return dtype
    if input._dtype.category < 2:
        raise RuntimeError(f"{fn}(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {input._dtype.name}; pass "
                           f"dtype=jitensor.float32 or convert the input with .float()")
    return input._dtype


def _check_nonempty(fn, input, reduced, full):
    """max/min/amax/amin/argmax/argmin have no identity: a reduced dim of size 0 is an error."""
    if full and input._data.size == 0:
        error = IndexError if fn in ("argmax", "argmin") else RuntimeError
        raise error(f"{fn}(): Expected reduction dim to be specified for input.numel() == 0. "
                    f"Specify the reduction dim with the 'dim' argument.")
    for d in reduced:
        if input._data.shape[d] == 0:
            raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")


# -- the shared path ------------------------------------------------------------------------------
def _shapes(input, reduced, keepdim):
    """The kept shape (the kernel's output) and the result shape (with keepdim's 1s)."""
    shape = input._data.shape
    kept = tuple(n for d, n in enumerate(shape) if d not in reduced)
    result = tuple(1 if d in reduced else n for d, n in enumerate(shape)) if keepdim else kept
    return kept, result


def _finish(res, shape, out):
    """res (the kernel's output) shaped as the result, or copied into the checked `out`."""
    data = res._data.reshape(shape)  # a view: res is new and C-contiguous
    if out is None:
        return _wrap(data, res._dtype, res._device)
    backend(out._device).copy(out._data, data)
    return out


def _reduce(fn, op, input, reduced, keepdim, dtype, out, correction=0.0):
    """The reduction `op` of input over `reduced` as a `dtype` tensor (or into `out`)."""
    kept, shape = _shapes(input, reduced, keepdim)
    if out is not None:
        check_out(fn, out, shape, dtype, input._device)
    if input._dtype.is_complex or dtype.is_complex:  # the parts' sums, as pairs
        if fn not in ("sum", "mean"):
            raise RuntimeError(f'"{fn}" is not implemented for complex tensors ({input._dtype})')
        from .complex_ops import view_as_complex, view_as_real
        parts = view_as_real(input.to(dtype))
        res = allocate(kept + (2,), dtype.to_real(), input._device)
        backend(input._device).reduction.reduce(op, res._data, parts._data, reduced)
        return _finish(view_as_complex(res), shape, out)
    input = _int64_sums(input, dtype)
    res = allocate(kept, dtype, input._device)
    backend(input._device).reduction.reduce(op, res._data, input._data, reduced,
                                            correction=correction)
    return _finish(res, shape, out)


def _int64_sums(input, dtype):
    """uint64 input of an int64 sum or product as int64 (wrapping, as torch's sums do): Numba
    adds a uint64 and an int64 in float64."""
    return input.to(dtype) if input._dtype is dtypes.uint64 and dtype is dtypes.int64 else input


def _arg_reduce(op, input, reduced, keepdim, out_values=None, out_indices=None):
    """(values, indices) of ARGMAX/ARGMIN over `reduced` (one dim, or all in C order)."""
    kept, shape = _shapes(input, reduced, keepdim)
    values = allocate(kept, input._dtype, input._device)
    indices = allocate(kept, dtypes.int64, input._device)
    backend(input._device).reduction.reduce(op, values._data, input._data, reduced,
                                            index=indices._data)
    return (_finish(values, shape, out_values), _finish(indices, shape, out_indices))


def _small_path(op, input, dim, keepdim, dtype, out):
    """op of a non-empty floating tensor of 1 or more dims, in its dtype, for the commonest
    calls (x.sum(), x.mean(1), x.max(), x.sum((0, 1), keepdim=True): a dim that is None, an int
    or a tuple of ints, no dtype or out); None when the general path is needed. On small
    tensors that path's checks and plans cost ~3x the kernel."""
    if dtype is not None or out is not None or input.__class__ is not Tensor:
        return None
    d, data = input._dtype, input._data
    ndim = data.ndim
    if not d.is_floating_point or not data.size or not ndim:
        return None
    be = backend(input._device)
    if dim is None:
        if keepdim:
            return None
        result = be.empty((), d.np)
        be.reduction.reduce_all(op, result, data)
        return _wrap(result, d, input._device)
    if dim.__class__ is int and -ndim <= dim < ndim:
        reduced = (dim % ndim,)
    elif dim.__class__ is tuple and dim:
        for i in dim:
            if i.__class__ is not int or not -ndim <= i < ndim:
                return None
        reduced = tuple(sorted({i % ndim for i in dim}))
        if len(reduced) != len(dim):
            return None  # (a repeated dim: the general path's error)
    else:
        return None
    kept, shape = _shapes(input, reduced, keepdim)
    result = be.empty(kept, d.np)
    be.reduction.reduce(op, result, data, reduced)
    return _wrap(result.reshape(shape), d, input._device)


# -- sum, mean, prod ------------------------------------------------------------------------------
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over `dim` (None or () for all dims). Bool and integer input sum to int64. float32
    accumulates in float64; float64 in runs merged with Neumaier's compensation: both have
    smaller error bounds than NumPy's pairwise summation. A sparse input sums to a sparse
    tensor while a dim is left (ops/sparse.py)."""
    if input.__class__ is not Tensor and getattr(input, "is_sparse", False):
        from . import sparse
        return sparse.sum(input, dim, keepdim, dtype=dtype, out=out)
    t = _small_path(codes.SUM, input, dim, keepdim, dtype, out)
    if t is not None:
        return t
    _input("sum", input)
    dtype = _sum_dtype("sum", input, _dtype_arg(dtype), out)
    reduced = _reduced("sum", input, dim)
    return _reduce("sum", codes.SUM, input, reduced, keepdim, dtype, out)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean over `dim`; needs a floating input or dtype= (as torch); NaN for an empty range."""
    t = _small_path(codes.MEAN, input, dim, keepdim, dtype, out)
    if t is not None:
        return t
    _input("mean", input)
    dtype = _float_dtype("mean", input, _dtype_arg(dtype))
    reduced = _reduced("mean", input, dim)
    return _reduce("mean", codes.MEAN, input, reduced, keepdim, dtype, out)


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product over one dim (an int) or all; bool and integer input multiply to int64."""
    _input("prod", input)
    dtype = _sum_dtype("prod", input, _dtype_arg(dtype), out)
    if dim is None:
        if keepdim:
            raise TypeError("prod(): keepdim=True needs a dim; call prod(input, dim, keepdim=True)")
        reduced = _reduced("prod", input, None)
    else:
        d = _int_dim("prod", input, dim)
        reduced = () if d is None else (d,)
    return _reduce("prod", codes.PROD, input, reduced, keepdim, dtype, out)


# -- max, min, amax, amin, argmax, argmin ---------------------------------------------------------
def _extremum(fn, op, arg_op, input, dim, keepdim, out, other):
    t = _small_path(op, input, None, keepdim, None, out) if other is None and dim is None else None
    if t is not None:
        return t
    _input(fn, input)
    if isinstance(dim, Tensor) or isinstance(other, Tensor):  # torch.max(input, other)
        from . import elementwise
        binary = elementwise.maximum if fn == "max" else elementwise.minimum
        return binary(input, other if other is not None else dim, out=out)
    if dim is None:
        if keepdim or out is not None and not isinstance(out, Tensor):
            raise TypeError(f"{fn}(): keepdim and a (values, indices) out need a dim; call "
                            f"{fn}(input, dim, keepdim=...)")
        _check_exact_out(fn, out, input._dtype)
        reduced = _reduced(fn, input, None)
        _check_nonempty(fn, input, reduced, True)
        return _reduce(fn, op, input, reduced, False, input._dtype, out)
    d = _int_dim(fn, input, dim)
    reduced = () if d is None else (d,)
    _check_nonempty(fn, input, reduced, False)
    out_values = out_indices = None
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"{fn}(): out= with a dim must be a (values, indices) pair of tensors")
        out_values, out_indices = out
        _, shape = _shapes(input, reduced, keepdim)
        for t, dtype in ((out_values, input._dtype), (out_indices, dtypes.int64)):
            check_out(fn, t, shape, dtype, input._device)
            _check_exact_out(fn, t, dtype)
    pair = _arg_reduce(arg_op, input, reduced, keepdim, out_values, out_indices)
    return getattr(return_types, fn)(*pair)


def max(input, dim=None, keepdim=False, *, out=None, other=None):
    """The largest element (a 0-d tensor), or with `dim` the named pair
    ``jitensor.return_types.max(values, indices)`` (first index of the max; NaN wins)."""
    return _extremum("max", codes.MAX, codes.ARGMAX, input, dim, keepdim, out, other)


def min(input, dim=None, keepdim=False, *, out=None, other=None):
    """As max, for the smallest element."""
    return _extremum("min", codes.MIN, codes.ARGMIN, input, dim, keepdim, out, other)


def _amaxmin(fn, op, input, dim, keepdim, out):
    _input(fn, input)
    reduced = _reduced(fn, input, dim)
    _check_nonempty(fn, input, reduced, dim is None or dim == () or dim == [])
    _check_exact_out(fn, out, input._dtype)
    return _reduce(fn, op, input, reduced, keepdim, input._dtype, out)


def amax(input, dim=(), keepdim=False, *, out=None):
    """The max over `dim` (() or None: all dims), in input's dtype; NaN propagates."""
    return _amaxmin("amax", codes.MAX, input, dim, keepdim, out)


def amin(input, dim=(), keepdim=False, *, out=None):
    return _amaxmin("amin", codes.MIN, input, dim, keepdim, out)


def _argext(fn, op, input, dim, keepdim, out):
    _input(fn, input)
    if input._dtype is dtypes.bool_:
        raise RuntimeError(f"{fn}(): does not support bool input; convert it with .long()")
    if dim is None:
        reduced = _reduced(fn, input, None)  # the index into the flattened (C-order) input
    else:
        d = _int_dim(fn, input, dim)
        reduced = () if d is None else (d,)
    _check_nonempty(fn, input, reduced, dim is None)
    if out is not None:
        _check_exact_out(fn, out, dtypes.int64)
        check_out(fn, out, _shapes(input, reduced, keepdim)[1], dtypes.int64, input._device)
    return _arg_reduce(op, input, reduced, keepdim, None, out)[1]


def argmax(input, dim=None, keepdim=False, *, out=None):
    """The index of the first max over `dim` (None: into the flattened input), int64."""
    return _argext("argmax", codes.ARGMAX, input, dim, keepdim, out)


def argmin(input, dim=None, keepdim=False, *, out=None):
    return _argext("argmin", codes.ARGMIN, input, dim, keepdim, out)


# -- all, any -------------------------------------------------------------------------------------
def _logical(fn, op, input, dim, keepdim, out):
    _input(fn, input)
    dtype = dtypes.uint8 if input._dtype is dtypes.uint8 else dtypes.bool_  # torch keeps uint8
    if out is not None and isinstance(out, Tensor) and out._dtype not in (dtypes.bool_, dtype):
        raise RuntimeError(f"{fn}(): out= must be a bool tensor, got {out._dtype.name}; pass "
                           f"out with dtype=jitensor.bool")
    reduced = _reduced(fn, input, dim, empty_is_all=False)
    return _reduce(fn, op, input, reduced, keepdim, dtype, out)


def all(input, dim=None, keepdim=False, *, out=None):
    """Whether every element over `dim` is nonzero (dim=(): elementwise); bool (uint8 for
    uint8 input, as torch)."""
    return _logical("all", codes.ALL, input, dim, keepdim, out)


def any(input, dim=None, keepdim=False, *, out=None):
    return _logical("any", codes.ANY, input, dim, keepdim, out)


# -- var, std -------------------------------------------------------------------------------------
def _moments(fn, op, input, dim, unbiased, keepdim, correction, out):
    _input(fn, input)
    if isinstance(dim, bool):  # var(input, unbiased): torch's legacy positional form
        if unbiased is not None:
            raise TypeError(f"{fn}(): got unbiased twice; call {fn}(input, dim, unbiased)")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fn}(): pass either unbiased or correction, not both "
                        f"(unbiased=False is correction=0)")
    if correction is None:
        correction = 1 if unbiased is None else int(bool(unbiased))
    if input._dtype.category < 2:
        raise RuntimeError(f"{fn}(): std and var only support floating point and complex dtypes, "
                           f"got {input._dtype.name}; convert the input with .float()")
    reduced = _reduced(fn, input, dim)
    if input._dtype.is_complex:  # the parts' variances add up (torch's: of |z - mean|)
        from .complex_ops import imag, real
        parts = [_moments("var", codes.VAR, p, reduced, None, keepdim, correction, None)
                 for p in (real(input), imag(input))]
        v = parts[0] + parts[1]
        return write_out(fn, out, v if op == codes.VAR else v.sqrt())
    count = 1
    for d in reduced:
        count *= input._data.shape[d]
    if count - correction <= 0:
        warnings.warn(f"{fn}(): degrees of freedom is <= 0. Correction should be strictly less "
                      f"than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return _reduce(fn, op, input, reduced, keepdim, input._dtype, out, float(correction))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over `dim` with divisor N - correction (default 1; unbiased=False means 0)."""
    return _moments("var", codes.VAR, input, dim, unbiased, keepdim, correction, out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """The square root of var, with var's arguments."""
    return _moments("std", codes.STD, input, dim, unbiased, keepdim, correction, out)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The p-norm of input over `dim` (every element by default): p = 2 or "fro" (the root of
    the sum of squares), 1, inf, -inf, 0 (the count of non-zero elements) or any other number
    ((sum |x|^p)^(1/p)). Floating input only; `dtype` converts it first."""
    if dtype is not None:
        input = input.to(to_dtype(dtype))
    if input._dtype.is_complex:  # the norms of the moduli
        input = input.abs()
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be floating point, but got "
                           f"{input._dtype}; convert it with .float() or pass dtype=")
    p = 2 if p == "fro" else p
    if isinstance(p, (str, bool)) or not isinstance(p, (int, float)):
        raise ValueError(  # noqa: TRY004 (a value jitensor does not support, as 'nuc')
            f"norm(): p={p!r} is not supported; use a number, inf, -inf or 'fro' ('nuc', the "
            f"nuclear norm, needs an SVD, which jitensor lacks)")
    a = input.abs()
    if p == math.inf or p == -math.inf:
        return (amax if p > 0 else amin)(a, () if dim is None else dim, keepdim)
    if p == 0:
        return sum(a != 0, dim, keepdim).to(a._dtype)
    if p == 1:
        return sum(a, dim, keepdim)
    if p == 2:
        return sum(a * a, dim, keepdim).sqrt()
    return sum(a ** p, dim, keepdim) ** (1 / p)


# -- logsumexp, softmax, log_softmax, cumsum ------------------------------------------------------
def _float_result(input):
    """logsumexp of bool and integer input: the default float dtype, as torch."""
    return input._dtype if input._dtype.is_floating_point else dtypes.get_default_dtype()


def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(input))) over `dim`, stable (the max is subtracted first) and fused: one
    pass over the data, blocks in cache for the exp."""
    _input("logsumexp", input)
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be an int or a tuple of ints, not None")
    dtype = _float_result(input)
    if out is not None and isinstance(out, Tensor) and not out._dtype.is_floating_point:
        raise RuntimeError(f"logsumexp(): Expected floating point type for result tensor, but "
                           f"got: {out._dtype.name}")
    if isinstance(dim, (tuple, list)) and not dim and not keepdim and input.ndim and \
            input._data.size:
        # torch reduces every dim for dim=(), then fails to write the result in its reduced
        # shape: raise as it does (keepdim=True, a 0-d or an empty input pass)
        raise RuntimeError(f"logsumexp(): output with shape [] doesn't match the broadcast "
                           f"shape {[1] * input.ndim}")
    reduced = _reduced("logsumexp", input, dim)
    return _reduce("logsumexp", codes.LSE, input, reduced, keepdim, dtype, out)


def _along(fn, op, input, dim, dtype, out=None):
    """The op whose result has input's shape, along one dim (a 0-d tensor: dim 0 or -1)."""
    d = _int_dim(fn, input, dim)
    if out is not None:
        check_out(fn, out, input._data.shape, dtype, input._device)
    if input._dtype.is_complex or dtype.is_complex:  # cumsum of the parts
        if fn != "cumsum":
            raise RuntimeError(f'"{fn}" is not implemented for complex tensors ({input._dtype})')
        from .complex_ops import view_as_complex, view_as_real
        parts = view_as_real(input.to(dtype))
        res = parts.clone() if d is None else _along(fn, op, parts, d, dtype.to_real())
        return _finish(view_as_complex(res), input._data.shape, out)
    input = _int64_sums(input, dtype)
    res = allocate(input._data.shape, dtype, input._device)
    if d is None:  # 0-d: along a single element
        backend(input._device).reduction.along(op, res._data.reshape(1),
                                               input._data.reshape(1), 0)
    else:
        backend(input._device).reduction.along(op, res._data, input._data, d)
    return _finish(res, input._data.shape, out)


def _softmax(fn, op, input, dim, dtype):
    _input(fn, input)
    if dim is None:
        raise TypeError(f"{fn}(): argument 'dim' must be int, not None; pass dim=-1 to normalise "
                        f"over the last dimension")
    dtype = _dtype_arg(dtype)
    result = dtype if dtype is not None else input._dtype
    if not result.is_floating_point:
        raise NotImplementedError(f"{fn}(): not implemented for {result.name} input; pass "
                                  f"dtype=jitensor.float32 or convert the input with .float()")
    return _along(fn, op, input, dim, result)


def softmax(input, dim, dtype=None, *, out=None):
    """exp(x - max) / sum(exp(x - max)) along `dim`, fused: per row one pass for the max, one
    that writes the exponentials and sums them, one that scales. Integer input needs dtype=."""
    result = _softmax("softmax", codes.SOFTMAX, input, dim, dtype)
    return write_out("softmax", out, result, exact=True)


def log_softmax(input, dim, dtype=None, *, out=None):
    """(x - max) - log(sum(exp(x - max))) along `dim`, fused as softmax."""
    result = _softmax("log_softmax", codes.LOG_SOFTMAX, input, dim, dtype)
    return write_out("log_softmax", out, result, exact=True)


def softmax_backward(g, result, dim, log=False):
    """The gradient of softmax (log_softmax with `log`) along `dim` for upstream g and the
    op's result: one pass over each row where the device has the kernel (dim the last, one
    float dtype) and the gradient is not itself recorded (create_graph), else composed from
    ops."""
    kernel = getattr(backend(result._device).reduction, "softmax_grad", None)
    recorded = is_grad_enabled() and (g.requires_grad or result.requires_grad) or \
        carrying(g, result)
    if kernel is not None and not recorded and result.ndim and result.shape[-1] and \
            result._dtype in (dtypes.float32, dtypes.float64) and g._dtype is result._dtype and \
            g._device is result._device and g.shape == result.shape and \
            _one_dim(dim, result.ndim) == result.ndim - 1:
        out = allocate(result.shape, result._dtype, result._device)
        kernel(out._data, dense(g), dense(result), log)
        return out
    if log:
        from . import elementwise  # (imported at call time: autograd wraps its ops)
        return g - elementwise.exp(result) * sum(g, dim=dim, keepdim=True)
    return result * (g - sum(g * result, dim=dim, keepdim=True))


def cumsum(input, dim, *, dtype=None, out=None):
    """Running sums along `dim`; bool and integer input accumulate in int64."""
    _input("cumsum", input)
    dtype = _dtype_arg(dtype)
    dtype = _sum_dtype("cumsum", input, dtype, out)
    if dtype is dtypes.bool_:
        raise NotImplementedError("cumsum(): not implemented for bool results; pass "
                                  "dtype=jitensor.int64")
    return _along("cumsum", codes.CUMSUM, input, dim, dtype, out)


# -- composites -----------------------------------------------------------------------------------
# Built from the reductions above and elementwise ops, so autograd records them through those
# ops and they run on every device. Their out= is torch's: resized where its shape differs
# (see write_out).
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """sum, with NaN counted as zero (its gradient there is 0); sum's dtypes and dims, but
    out= does not set the dtype (torch sums in the result's, then casts into out)."""
    _input("nansum", input)
    dtype = _sum_dtype("nansum", input, _dtype_arg(dtype), None)
    values = masked_fill(input, isnan(input), 0) if input._dtype.is_floating_point else input
    return write_out("nansum", out, sum(values, dim, keepdim, dtype=dtype))


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The mean of the elements that are not NaN (NaN where all are); floating input only.
    Where all are NaN the gradient is 0 (torch's is NaN: its 1/0 times a mask of zeros)."""
    _input("nanmean", input)
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input._dtype.scalar_name}")
    dtype = _float_dtype("nanmean", input, _dtype_arg(dtype))
    count = sum(~isnan(input), dim, keepdim)
    return write_out("nanmean", out, nansum(input, dim, keepdim, dtype=dtype) / count)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over `dim`, with var's arguments (a bool `dim` is torch's legacy unbiased)."""
    over = None if isinstance(dim, bool) else dim
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, over, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over `dim`, with std's arguments."""
    over = None if isinstance(dim, bool) else dim
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, over, keepdim)


def count_nonzero(input, dim=None):
    """The number of non-zero elements (NaN included) over `dim` (an int or a tuple), int64."""
    return sum(ne(_input("count_nonzero", input), 0), dim)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``return_types.aminmax(min, max)``: amin and amax over one dim, or over all; NaN
    propagates, ties share the gradient (as amin's and amax's)."""
    _input("aminmax", input)
    if dim is None:
        if not input._data.size:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dim = ()
    else:
        d = _int_dim("aminmax", input, dim)
        _check_nonempty("aminmax", input, () if d is None else (d,), False)
    pair = (amin(input, dim, keepdim), amax(input, dim, keepdim))
    return write_pair("aminmax", out, pair, return_types.aminmax, "a (min, max) pair of tensors")


def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The n-th forward difference along `dim` (bool: xor of neighbours), after `prepend` and
    `append` are concatenated to input there (which promotes, as cat)."""
    _input("diff", input)
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"diff(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _one_dim(dim, input.ndim, "diff")
    for name, t in (("prepend", prepend), ("append", append)):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if t.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for k in range(input.ndim):
            if k != d and t.shape[k] != input.shape[k]:
                raise RuntimeError(f"diff expects the shape of tensor to prepend or append to "
                                   f"match that of input except along the differencing "
                                   f"dimension; input.size({k}) = {input.shape[k]}, but got "
                                   f"tensor.size({k}) = {t.shape[k]}")
    if n == 0:  # (torch's: a copy of input, prepend and append ignored)
        return write_out("diff", out, input.clone())
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[d]
        if not length:
            break
        later, earlier = narrow(x, d, 1, length - 1), narrow(x, d, 0, length - 1)
        x = logical_xor(later, earlier) if x._dtype is dtypes.bool_ else sub(later, earlier)
    return write_out("diff", out, x)


def renorm(input, p, dim, maxnorm, *, out=None):
    """input with each slice along `dim` whose p-norm exceeds maxnorm scaled down to norm
    maxnorm (by maxnorm / (norm + 1e-7), as torch)."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           f"dimensions")
    d = _one_dim(dim, input.ndim, "renorm")
    norms = norm(input, p, [k for k in range(input.ndim) if k != d], keepdim=True)
    from .elementwise import where
    result = input * where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return write_out("renorm", out, result, exact=True)


def sum_to_size(self, *size):
    """self summed over the dims where `size` (which self's shape must expand from) is 1 or
    missing: the reverse of expand."""
    from .shape import _ints
    size = _ints(size, "sum_to_size")
    shape = list(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or [n for n, m in zip(size, shape[lead:], strict=True) if n not in (1, m)]:
        raise RuntimeError(f"size {{{size}}} is not expandable to size {{{shape}}}.")
    dims = list(range(lead)) + [lead + i for i, n in enumerate(size) if n == 1 != shape[lead + i]]
    out = sum(self, dims, keepdim=True) if dims else self
    return out.reshape(size) if lead else out


def _cumsum_(self, dim, *, dtype=None):
    out = cumsum(self, dim, dtype=self._dtype if dtype is None else dtype)
    backend(self._device).copy(self._data, out._data)
    return self


def _contains(self, element):
    """`element in t`: whether some element of t equals it (a number or a tensor, broadcast)."""
    if isinstance(element, (Tensor, bool, int, float, np.number, np.bool_)):
        return bool((self == element).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                       f"{type(element)}.")


# their in-place forms run them as they are (autograd/wrap.py)
COMPOSED = ("renorm",)


TENSOR_METHODS = {
    "sum": sum, "mean": mean, "prod": prod, "max": max, "min": min, "amax": amax, "amin": amin,
    "argmax": argmax, "argmin": argmin, "all": all, "any": any, "var": var, "std": std,
    "logsumexp": logsumexp, "softmax": softmax, "log_softmax": log_softmax, "cumsum": cumsum,
    "norm": norm, "nansum": nansum, "nanmean": nanmean, "count_nonzero": count_nonzero,
    "aminmax": aminmax, "diff": diff, "renorm": renorm, "renorm_": in_place(renorm),
    "sum_to_size": sum_to_size, "cumsum_": _cumsum_, "__contains__": _contains,
}
