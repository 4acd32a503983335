"""Matrix products with torch's rules: `matmul` (the @ operator), `mm`, `bmm`, `mv`, `dot`,
`outer` / `ger`.

Every product is planned here as a stack of matrix products: the operands viewed as
(..., m, k) and (..., k, n) (a 1-D operand becomes a row or a column), their batch dimensions
broadcast, and each operand's batch flattened into one stack with an index array naming its
matrix for every output matrix. The backend's `linalg.matmul` then runs the whole stack in one
kernel call. As in torch, both operands must have the same dtype (no promotion) and bool is not
implemented; `outer` is an elementwise product and promotes."""
import math

import numpy as np

from .. import dtypes
from ..backends.registry import backend
from ..creation import allocate
from ..tensor import Tensor
from ._common import broadcast_shapes, output, same_device, shares_memory

__all__ = ["bmm", "dot", "ger", "matmul", "mm", "mv", "outer"]


# -- checks -----------------------------------------------------------------------------------
def _check_tensors(fn, **named):
    for pos, (name, x) in enumerate(named.items(), 1):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(x).__name__}; wrap it with jitensor.tensor(...)")


def _check_dtypes(fn, a, b):
    """Products take operands of one dtype, as torch's do: no promotion."""
    if a._dtype is not b._dtype:
        common = dtypes.promote_types(a._dtype, b._dtype)
        raise RuntimeError(f"{fn}(): expected both operands to have the same dtype, but got: "
                           f"{a._dtype.name} != {b._dtype.name}; convert one with "
                           f".to(jitensor.{common.name})")


def _check_not_bool(fn, a, b, shape):
    """torch implements no bool product on the CPU; it still answers those that multiply
    nothing (an empty result or an empty sum), except a product of two vectors."""
    k = a._data.shape[-1]
    if a._dtype is dtypes.bool_ and (a.ndim == b.ndim == 1 or k and math.prod(shape)):
        raise NotImplementedError(f"{fn}(): not implemented for 'Bool' (as in torch); convert "
                                  f"the operands with .int() or .float() first")


def _check_out_dtype(fn, out, dtype):
    """Products write their own dtype only: torch refuses even a widening out= here."""
    if isinstance(out, Tensor) and out._dtype is not dtype:
        raise RuntimeError(f"{fn}(): expected out tensor to have dtype {dtype.name}, but got "
                           f"{out._dtype.name} instead; pass out with dtype {dtype.name}")


def _check_ndim(fn, name, t, ndim, what, zero_dim_error=RuntimeError):
    if t.ndim != ndim:
        error = zero_dim_error if t.ndim == 0 else RuntimeError
        raise error(f"{fn}(): argument '{name}' must be {what} ({ndim}-D), but got a "
                    f"{t.ndim}-D tensor of shape {tuple(t.shape)}")


def _fmt(shape):
    return "x".join(map(str, shape))


# -- the plan: operands as stacks of matrices ---------------------------------------------------
def _matrix_shapes(fn, a, b):
    """torch's matmul shape rule: (a as (..., m, k), b as (..., k, n), the result's batch shape,
    the result's shape). A 1-D `a` is a row (1, k), a 1-D `b` a column (k, 1); the unit dim is
    dropped from the result."""
    sa, sb = a._data.shape, b._data.shape
    ea = (1,) + sa if len(sa) == 1 else sa
    eb = sb + (1,) if len(sb) == 1 else sb
    if ea[-1] != eb[-2]:
        if len(sa) == len(sb) == 2:
            raise RuntimeError(f"{fn}(): mat1 and mat2 shapes cannot be multiplied "
                               f"({_fmt(sa)} and {_fmt(sb)}); the columns of the first ({sa[1]}) "
                               f"must equal the rows of the second ({sb[0]})")
        da = "last" if len(sa) > 1 else "only"
        db = "second-to-last" if len(sb) > 1 else "only"
        raise RuntimeError(f"{fn}(): shapes {sa} and {sb} cannot be multiplied: the {da} dim of "
                           f"the first ({ea[-1]}) must equal the {db} dim of the second "
                           f"({eb[-2]}); transpose or reshape one of them")
    try:
        batch = broadcast_shapes(ea[:-2], eb[:-2])
    except RuntimeError:
        raise RuntimeError(f"{fn}(): the batch dims {ea[:-2]} of shape {sa} and {eb[:-2]} of "
                           f"shape {sb} do not broadcast; expand or reshape one of them") from None
    shape = batch + ea[-2:-1] * (len(sa) > 1) + eb[-1:] * (len(sb) > 1)
    return ea, eb, batch, shape


def _view(x, shape):
    """A view of the buffer `x` in `shape`, or None when that needs a copy."""
    try:
        return x.reshape(shape, copy=False)
    except ValueError:
        return None


def _reshaped(x, shape, dtype, device):
    """`x` in `shape`: a view where strides allow, else a contiguous copy made by the backend."""
    view = _view(x, shape)
    if view is not None:
        return view
    dense = allocate(x.shape, dtype, device)._data
    backend(device).copy(dense, x)
    return dense.reshape(shape)


def _batch_index(own, batch):
    """For each matrix of the broadcast `batch` (flattened), the index of the operand's matrix
    in its own flattened batch `own`: the broadcast as an index map."""
    own = (1,) * (len(batch) - len(own)) + own
    index = np.arange(math.prod(own), dtype=np.int64)
    if own == batch:
        return index
    return np.ascontiguousarray(np.broadcast_to(index.reshape(own), batch)).reshape(-1)


def _unbroadcast(x, nbatch):
    """`x` with its stride-0 (expanded) batch dims cut to size 1: the index maps then repeat
    those matrices instead of a copy materialising them."""
    key = tuple(slice(0, 1) if stride == 0 else slice(None)
                for stride in x.strides[:nbatch])
    return x[key]


_ONE = np.zeros(1, np.int64)  # the index map of a product of single matrices (kernels only read)


def _stacks(a, b, ea, eb, batch, device):
    """(a stack, b stack, ia, ib, output stack shape). When only `a` has batch dims and they
    merge with its rows, torch's fold applies: one (batch*m, k) @ (k, n) product."""
    (m, k), n = ea[-2:], eb[-1]
    ad, bd = a._data.reshape(ea), b._data.reshape(eb)  # adding a unit dim is always a view
    if not batch:
        return ad.reshape(1, m, k), bd.reshape(1, k, n), _ONE, _ONE, (1, m, n)
    if len(eb) == 2:
        rows = _view(ad, (1, math.prod(ea[:-1]), k))
        if rows is not None:
            return rows, bd.reshape(1, k, n), _ONE, _ONE, (1, rows.shape[1], n)
    ad, bd = _unbroadcast(ad, len(ea) - 2), _unbroadcast(bd, len(eb) - 2)
    a3 = _reshaped(ad, (math.prod(ad.shape[:-2]), m, k), a._dtype, device)
    b3 = _reshaped(bd, (math.prod(bd.shape[:-2]), k, n), b._dtype, device)
    ia, ib = _batch_index(ad.shape[:-2], batch), _batch_index(bd.shape[:-2], batch)
    return a3, b3, ia, ib, (len(ia), m, n)


def _writable_alone(out, a, b):
    """Whether a kernel may write `out` directly: C-contiguous, writeable, and not overlapping
    an input (else the result goes through a buffer, and the backend's copy reports a
    read-only `out`)."""
    d = out._data
    return d.flags.c_contiguous and d.flags.writeable and not (
        shares_memory(out, a) or shares_memory(out, b))


def _product(fn, a, b, out):
    """The matmul family's common path, after the argument checks of each front end."""
    sa, sb = a._data.shape, b._data.shape
    if out is None and len(sa) == len(sb) == 2 and sa[1] == sb[0] != 0 \
            and a._dtype is b._dtype is not dtypes.bool_ and a._device is b._device:
        # matrix times matrix without the general plan below (8x8 float32: 7.0 -> 3.3 us)
        (m, k), n = sa, sb[1]
        result = allocate((m, n), a._dtype, a._device)
        if m and n:
            backend(a._device).linalg.matmul(result._data.reshape(1, m, n),
                                             a._data.reshape(1, m, k), b._data.reshape(1, k, n),
                                             _ONE, _ONE)
        return result
    ea, eb, batch, shape = _matrix_shapes(fn, a, b)
    device = same_device(fn, a, b)
    _check_dtypes(fn, a, b)
    _check_not_bool(fn, a, b, shape)
    _check_out_dtype(fn, out, a._dtype)
    result = output(fn, out, shape, a._dtype, device)
    if result._data.size == 0:
        return result
    be = backend(device)
    if ea[-1] == 0:  # an empty sum is zero
        be.fill(result._data, 0)
        return result
    a3, b3, ia, ib, out_shape = _stacks(a, b, ea, eb, batch, device)
    dest = result._data
    direct = out is None or _writable_alone(result, a, b)
    target = dest if direct else allocate(shape, a._dtype, device)._data
    be.linalg.matmul(target.reshape(out_shape), a3, b3, ia, ib)
    if not direct:
        be.copy(dest, target)
    return result


# -- front ends -------------------------------------------------------------------------------
def matmul(input, other, *, out=None):
    """Matrix product with broadcasting batch dims (torch.matmul): vector . vector is a 0-d dot,
    a 1-D operand is a row (left) or column (right) whose dim is then removed, and
    (..., m, k) @ (..., k, n) multiplies matrix by matrix over the broadcast batch."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):  # (the check costs 0.6 us)
        _check_tensors("matmul", input=input, other=other)
    if not (input._data.ndim and other._data.ndim):
        raise RuntimeError(f"matmul(): both arguments to matmul need to be at least 1D, but they "
                           f"are {input.ndim}D and {other.ndim}D; reshape a scalar with "
                           f".reshape(1) or multiply with jitensor.mul")
    return _product("matmul", input, other, out)


def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors (no broadcasting)."""
    _check_tensors("mm", input=input, mat2=mat2)
    _check_ndim("mm", "input", input, 2, "a matrix")
    _check_ndim("mm", "mat2", mat2, 2, "a matrix")
    return _product("mm", input, mat2, out)


def bmm(input, mat2, *, out=None):
    """Batched matrix product of (b, n, m) and (b, m, p) tensors (no broadcasting)."""
    _check_tensors("bmm", input=input, mat2=mat2)
    _check_ndim("bmm", "input", input, 3, "a batch of matrices")
    _check_ndim("bmm", "mat2", mat2, 3, "a batch of matrices")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm(): input and mat2 must hold the same number of matrices, but "
                           f"got shapes {tuple(input.shape)} and {tuple(mat2.shape)}; use "
                           f"matmul to broadcast a batch of 1")
    return _product("bmm", input, mat2, out)


def mv(input, vec, *, out=None):
    """Product of a 2-D matrix and a 1-D vector."""
    _check_tensors("mv", input=input, vec=vec)
    _check_ndim("mv", "input", input, 2, "a matrix", IndexError)  # torch's type for a 0-d input
    _check_ndim("mv", "vec", vec, 1, "a vector")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"mv(): size mismatch, got mat ({_fmt(input.shape)}) and vec "
                           f"({vec.shape[0]}); vec needs {input.shape[1]} elements")
    return _product("mv", input, vec, out)


def dot(input, tensor, *, out=None):
    """The 0-d dot product of two 1-D tensors of the same size and dtype."""
    _check_tensors("dot", input=input, tensor=tensor)
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"dot(): 1D tensors expected, but got {input.ndim}D and "
                           f"{tensor.ndim}D tensors; use matmul for matrices")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"dot(): inconsistent tensor size, expected tensors of the same number "
                           f"of elements, but got {input.shape[0]} and {tensor.shape[0]}")
    return _product("dot", input, tensor, out)


def outer(input, vec2, *, out=None):
    """out[i, j] = input[i] * vec2[j], in the promoted dtype of the two 1-D tensors."""
    _check_tensors("outer", input=input, vec2=vec2)
    _check_ndim("outer", "input", input, 1, "a vector")
    _check_ndim("outer", "vec2", vec2, 1, "a vector")
    device = same_device("outer", input, vec2)
    dtype = dtypes.promote_types(input._dtype, vec2._dtype)
    shape = (input.shape[0], vec2.shape[0])
    result = output("outer", out, shape, dtype, device)
    if result._data.size == 0:
        return result
    be = backend(device)
    # Cast the vectors first, so the products wrap or round in the result dtype as torch's do
    # (O(m + n) work), and write through a buffer when out= is another dtype or layout.
    a, b = (x._data if x._dtype is dtype else x.to(dtype)._data for x in (input, vec2))
    dest = result._data
    direct = result._dtype is dtype and _writable_alone(result, input, vec2)
    target = dest if direct else allocate(shape, dtype, device)._data
    be.linalg.outer(target, a, b)
    if not direct:
        be.copy(dest, target)
    return result


ger = outer


def linear(input, weight, bias=None):
    """input @ weight.T + bias (torch.nn.functional.linear): `weight` is (out_features,
    in_features), `input` (..., in_features). An op of its own so that its gradient is two
    products read straight from the operands (no transposed copy of the weight's gradient)."""
    _check_tensors("linear", input=input, weight=weight)
    if input.ndim == 0 or weight.ndim not in (1, 2) or input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear(): input of shape {tuple(input.shape)} does not match weight "
                           f"of shape {tuple(weight.shape)}: the input's last dimension must "
                           f"equal in_features ({weight.shape[-1] if weight.ndim else None})")
    out = matmul(input, weight.mT if weight.ndim == 2 else weight)
    return out if bias is None else out.add_(bias)  # out is new: no copy for the sum


def _matmul_operator(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented  # Python then raises torch's "unsupported operand type(s) for @"
    return matmul(self, other)


def _rmatmul_operator(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


# No __imatmul__, as in torch 2.13: `a @= b` falls back to `a = a @ b`, a new tensor of any shape.
TENSOR_METHODS = {
    "matmul": matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot, "outer": outer, "ger": ger,
    "__matmul__": _matmul_operator, "__rmatmul__": _rmatmul_operator,
}
