"""Matrix products with torch's rules: `matmul` (the @ operator), `mm`, `bmm`, `mv`, `dot`,
`outer` / `ger`; and the ops composed from them (see "composites" below).

Every product is planned here as a stack of matrix products: the operands viewed as
(..., m, k) and (..., k, n) (a 1-D operand becomes a row or a column), their batch dimensions
broadcast, and each operand's batch flattened into one stack with an index array naming its
matrix for every output matrix. The backend's `linalg.matmul` then runs the whole stack in one
kernel call. As in torch, both operands must have the same dtype (no promotion) and bool is not
implemented; `outer` is an elementwise product and promotes."""
import math
import warnings

import numpy as np

from .. import dtypes
from ..creation import allocate, ones, ones_like
from ..kernels.registry import backend
from ..tensor import Tensor, check_fill_value
from . import elementwise as _elementwise
from ._common import broadcast_shapes, in_place, output, same_device, shares_memory, write_out
from ._common import dim as _dim
from ._common import dims as _dims
from .elementwise import add, mul, where
from .indexing import masked_fill
from .reduction import norm
from .reduction import sum as _sum
from .shape import cat, expand, narrow, stack, unbind

__all__ = ["addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "cdist", "cross", "dist", "dot",
           "ger", "inner", "kron", "matmul", "mm", "mv", "outer", "tensordot", "vdot"]


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
    if a.__class__ is not Tensor and a.is_sparse or b.__class__ is not Tensor and b.is_sparse:
        from . import sparse
        if fn != "mm":
            raise NotImplementedError(f"{fn}() is not implemented for sparse COO tensors; use "
                                      f"mm/matmul, or call .to_dense() first")
        return sparse.mm(a, b, out)
    if a._dtype.is_complex or b._dtype.is_complex:
        _check_dtypes(fn, a, b)
        from .complex_ops import complex_matmul
        return write_out(fn, out, complex_matmul(a, b))
    if out is None:
        result, _ = _folded(a, b)
        if result is not None:
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


def _folded(a, b, bias=None, transposed=False):
    """(a @ b, whether it holds bias too) for a strided (not sparse) matrix, or a dense stack
    folded into one (torch's fold), times a strided matrix, without the general plan of
    `_product`; (None, False) for other operands. bias: None or a 1-D tensor of b's columns;
    `transposed`: a @ b.mT (linear's weight), without making that view a tensor."""
    # (the plan cost more than a small product: 8x8 float32 7.0 -> 3.3 us)
    bd = b._data.T if transposed else b._data
    sa, sb = a._data.shape, bd.shape
    if not (len(sb) == 2 and len(sa) >= 2 and sa[-1] == sb[0] != 0
            and a._dtype is b._dtype is not dtypes.bool_ and a._device is b._device
            and (len(sa) == 2 or a._data.flags.c_contiguous)):
        return None, False
    k, n = sb
    m = a._data.size // k
    result = allocate(sa[:-1] + (n,), a._dtype, a._device)
    if not (m and n):
        return result, False
    if bias is not None and (bias._dtype is not a._dtype or bias._device is not a._device
                             or bias._data.shape != (n,)):
        bias = None
    added = backend(a._device).linalg.matmul(
        result._data.reshape(1, m, n), a._data.reshape(1, m, k), bd.reshape(1, k, n), _ONE, _ONE,
        bias=None if bias is None else bias._data)
    return result, added


# -- front ends -------------------------------------------------------------------------------
def matmul(input, other, *, out=None):
    """Matrix product with broadcasting batch dims (torch.matmul): vector . vector is a 0-d dot,
    a 1-D operand is a row (left) or column (right) whose dim is then removed, and
    (..., m, k) @ (..., k, n) multiplies matrix by matrix over the broadcast batch."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):  # (the check costs 0.6 us)
        _check_tensors("matmul", input=input, other=other)
    if input.__class__ is not Tensor and input.is_sparse or \
            other.__class__ is not Tensor and other.is_sparse:
        from . import sparse
        return sparse.matmul(input, other, out)
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
_ADD = _elementwise.B["add"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias (torch.nn.functional.linear): `weight` is (out_features,
    in_features), `input` (..., in_features). An op of its own so that its gradient is two
    products read straight from the operands (no transposed copy of the weight's gradient)."""
    _check_tensors("linear", input=input, weight=weight)
    if input.ndim == 0 or weight.ndim not in (1, 2) or input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear(): input of shape {tuple(input.shape)} does not match weight "
                           f"of shape {tuple(weight.shape)}: the input's last dimension must "
                           f"equal in_features ({weight.shape[-1] if weight.ndim else None})")
    dense = weight.ndim == 2 and not (input.__class__ is not Tensor and input.is_sparse or
                                      weight.__class__ is not Tensor and weight.is_sparse)
    out, added = _folded(input, weight, bias, True) if dense else (None, False)
    if out is None:
        out = matmul(input, weight.mT if weight.ndim == 2 else weight)
    # out is new: the sum in place, by the small-op path where it serves (no in-place checks)
    if bias is not None and not added and not _elementwise._fast_inplace(_ADD, out, bias):
        out.add_(bias)
    return out


# -- composites -------------------------------------------------------------------------------
# Built from the products above and elementwise ops, so autograd records them through those ops
# and they run on every device. Their out= is torch's (see _common.write_out).
COMPOSED = ("addmm", "addmv", "addr", "baddbmm", "addbmm")  # their in-place forms run them


def _scaled(t, s):
    """s * t for a scalar s already in t's dtype. s = 0 gives zeros even where t is NaN or inf
    (BLAS never reads a term scaled by 0), which still differentiate (to 0) in t."""
    if s == 0:
        return masked_fill(t, ones((), dtype=dtypes.bool_, device=t._device), 0)
    return t if s == 1 else mul(t, s)


def _blend(input, product, beta, alpha, zero_alpha_drops=True):
    """beta * input + alpha * product in product's dtype, `input` broadcast to product's shape
    and never beyond it (as the in-place forms need). beta and alpha are converted as torch
    converts them (a float truncates for an integer dtype; one out of range raises); beta = 0
    drops input, NaN and inf included, and so does alpha = 0 the product where torch's kernel
    is BLAS's (`zero_alpha_drops`)."""
    dtype = product._dtype
    beta, alpha = check_fill_value(beta, dtype), check_fill_value(alpha, dtype)
    scaled = _scaled(product, alpha) if zero_alpha_drops or alpha else mul(product, alpha)
    return add(_scaled(expand(input, product.shape).to(dtype), beta), scaled)


def _check_batches(fn, batch1, batch2):
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{fn}(): {name} must be a 3D tensor, but got a {t.ndim}-D tensor "
                               f"of shape {tuple(t.shape)}")
    _check_dtypes(fn, batch1, batch2)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape; all three
    of one dtype. beta = 0 ignores input (NaN and inf too), alpha = 0 the product."""
    _check_tensors("addmm", input=input, mat1=mat1, mat2=mat2)
    _check_ndim("addmm", "mat1", mat1, 2, "a matrix")
    _check_ndim("addmm", "mat2", mat2, 2, "a matrix")
    _check_dtypes("addmm", mat1, mat2)
    _check_dtypes("addmm", input, mat1)
    return write_out("addmm", out, _blend(input, mm(mat1, mat2), beta, alpha), exact=True)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec), input a vector (or a number) broadcast to the
    product's length; all three of one dtype. Zero beta or alpha drops its term, as addmm's."""
    _check_tensors("addmv", input=input, mat=mat, vec=vec)
    if input.ndim > 1 or mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"addmv(): vector + matrix @ vector expected, got {input.ndim}, "
                           f"{mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or input.numel() not in (1, mat.shape[0]):
        raise RuntimeError(f"addmv(): size mismatch, got input ({input.numel()}), mat "
                           f"({_fmt(mat.shape)}), vec ({vec.shape[0]})")
    _check_dtypes("addmv", mat, vec)
    _check_dtypes("addmv", input, mat)
    return write_out("addmv", out, _blend(input, mv(mat, vec), beta, alpha), exact=True)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2), in the promoted dtype of all three (for bool:
    an or of ands). As torch's, an integer or bool result refuses a float beta or alpha, and
    only a bool result takes a bool one."""
    _check_tensors("addr", input=input, vec1=vec1, vec2=vec2)
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    product = outer(vec1, vec2)
    dtype = dtypes.promote_types(input._dtype, product._dtype)
    for name, s in (("beta", beta), ("alpha", alpha)):
        if isinstance(s, bool) and dtype is not dtypes.bool_:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if isinstance(s, (float, np.floating)) and not dtype.is_floating_point:
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               f"floating point number.")
    result = _blend(input, product.to(dtype), beta, alpha, zero_alpha_drops=False)
    return write_out("addr", out, result)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * bmm(batch1, batch2), input broadcast to the (b, n, p) product; all
    three of one dtype. beta = 0 ignores input (NaN and inf too)."""
    _check_tensors("baddbmm", input=input, batch1=batch1, batch2=batch2)
    _check_batches("baddbmm", batch1, batch2)
    want = [batch1.shape[0], batch1.shape[2]]
    if list(batch2.shape[:2]) != want:
        raise RuntimeError(f"baddbmm(): Expected size for first two dimensions of batch2 tensor to "
                           f"be: {want} but got: {list(batch2.shape[:2])}.")
    _check_dtypes("baddbmm", input, batch1)
    result = _blend(input, bmm(batch1, batch2), beta, alpha, zero_alpha_drops=False)
    return write_out("baddbmm", out, result, exact=True)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i], as one (n, b*k)
    @ (b*k, p) product; all three of one dtype. Zero beta or alpha drops its term."""
    _check_tensors("addbmm", input=input, batch1=batch1, batch2=batch2)
    _check_batches("addbmm", batch1, batch2)
    (b, n, k), (b2, k2, p) = batch1.shape, batch2.shape
    if b != b2:
        raise RuntimeError(f"addbmm(): batch1 and batch2 must have same number of batches, got "
                           f"{b} and {b2}")
    if k != k2:
        raise RuntimeError(f"addbmm(): Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    _check_dtypes("addbmm", input, batch1)
    product = mm(batch1.permute(1, 0, 2).reshape(n, b * k), batch2.reshape(b * k, p))
    return write_out("addbmm", out, _blend(input, product, beta, alpha), exact=True)


def _contracted(dims, ndim_a, ndim_b):
    """tensordot's `dims` (an int, a pair of lists, or a tensor holding either) as the two lists
    of dims, as given (negative dims included)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(ndim_a, ndim_b):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if not isinstance(dims, (tuple, list)):
        raise RuntimeError(  # noqa: TRY004 (torch's type)
            f"tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
            f"containing two lists, but got dims={dims}")
    dims_a, dims_b = dims
    for ds in (dims_a, dims_b):
        if not isinstance(ds, (tuple, list)) or not all(
                isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in ds):
            raise TypeError(f"tensordot(): argument 'dims' must be an int or a pair of lists of "
                            f"ints, but got {dims!r}")
    return list(dims_a), list(dims_b)


def tensordot(a, b, dims=2, out=None):
    """The sum of products over pairs of dims, one of `a`, one of `b`: dims=n pairs a's last n
    with b's first n, a pair of lists names them. A contracted dim of size 1 pairs with any size
    (the other is summed first), as in torch. The result has a's free dims, then b's; a and b
    have one dtype. Computed as one matrix product of the two, permuted and flattened."""
    _check_tensors("tensordot", a=a, b=b)
    dims_a, dims_b = _contracted(dims, a.ndim, b.ndim)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("tensordot(): both dimension lists should have same length")
    _check_dtypes("tensordot", a, b)
    ia = [_dim(d, a.ndim, "tensordot") for d in dims_a]
    ib = [_dim(d, b.ndim, "tensordot") for d in dims_b]
    _dims(ia, a.ndim, "tensordot")  # (raises for a dim named twice)
    _dims(ib, b.ndim, "tensordot")
    for da, db, given_a, given_b in zip(ia, ib, dims_a, dims_b, strict=False):
        na, nb = a.shape[da], b.shape[db]
        if nb == 1 and na != 1:
            a = _sum(a, da, keepdim=True, dtype=a.dtype)
        elif na == 1 and nb != 1:
            b = _sum(b, db, keepdim=True, dtype=b.dtype)
        elif na != nb:
            raise RuntimeError(f"tensordot(): contracted dimensions need to match, but first has "
                               f"size {na} in dim {given_a} and second has size {nb} in dim "
                               f"{given_b}")
    free_a = [d for d in range(a.ndim) if d not in ia]
    free_b = [d for d in range(b.ndim) if d not in ib]
    m, k, n = (math.prod(t.shape[d] for d in ds) for t, ds in ((a, free_a), (a, ia), (b, free_b)))
    product = mm(a.permute(free_a + ia).reshape(m, k), b.permute(ib + free_b).reshape(k, n))
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return write_out("tensordot", out, product.reshape(shape), exact=True)


def inner(input, other, *, out=None):
    """Sums of products over the last dim of both (shape input.shape[:-1] + other.shape[:-1]);
    with a 0-d operand, the elementwise product, which promotes."""
    _check_tensors("inner", input=input, other=other)
    if not (input.ndim and other.ndim):
        return write_out("inner", out, mul(input, other))
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]), out=out)


def vdot(input, other, *, out=None):
    """The dot product of two 1-D tensors, the first conjugated (complex input)."""
    from .complex_ops import conj
    return write_out("vdot", out, dot(conj(input) if isinstance(input, Tensor) else input,
                                      other), exact=True)


def kron(input, other, *, out=None):
    """The Kronecker product: the block at index i is input[i] * other, the shapes aligned at
    the right (the shorter padded with 1s). A broadcast product of the two with their dims
    interleaved, so it promotes as mul."""
    _check_tensors("kron", input=input, other=other)
    ndim = max(input.ndim, other.ndim)
    sa = (1,) * (ndim - input.ndim) + tuple(input.shape)
    sb = (1,) * (ndim - other.ndim) + tuple(other.shape)
    a = input.reshape([n for size in sa for n in (size, 1)])
    b = other.reshape([n for size in sb for n in (1, size)])
    return write_out("kron", out, mul(a, b).reshape([x * y for x, y in zip(sa, sb, strict=False)]))


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along `dim` (broadcast over the other dims); without dim,
    the first dim of input of size 3, torch's deprecated default."""
    _check_tensors("cross", input=input, other=other)
    if dim is None:
        warnings.warn("Using cross without specifying the dim arg is deprecated (as in torch, "
                      "whose default will become dim=-1, as linalg.cross's); pass dim explicitly",
                      UserWarning, stacklevel=2)
        dim = next((d for d, size in enumerate(input.shape) if size == 3), None)
        if dim is None:
            raise RuntimeError("cross(): no dimension of size 3 in input")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _dim(dim, input.ndim, "cross")
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    _check_dtypes("cross", input, other)
    if input._dtype is dtypes.bool_:
        raise NotImplementedError("cross(): not implemented for 'Bool' (as in torch)")
    a0, a1, a2 = unbind(input, d)
    b0, b1, b2 = unbind(other, d)
    result = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)
    return write_out("cross", out, result, exact=True)


CDIST_CHUNK = 1 << 22  # differences cdist forms at once (16 MiB of float32)
_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 (..., P, M) and each of x2 (..., R, M), as a
    (..., P, R) tensor, the batch dims broadcast. p = 0 counts the differing coordinates, inf
    takes the largest difference. As torch, p = 2 is one matrix product, |a|^2 + |b|^2 - 2 a.b
    (_euclidean), for more than 25 rows on either side (the default compute_mode) or always
    ("use_mm_for_euclid_dist"): fast, though small distances lose digits to cancellation. Other
    cases take the differences directly, a few rows of x1 at a time; their gradient is `norm`'s,
    0 at a zero distance as torch's (for p = inf tied largest differences share it, where
    torch's cdist gives each the whole)."""
    _check_tensors("cdist", x1=x1, x2=x2)
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if not x._dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{x._dtype.name}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    _check_dtypes("cdist", x1, x2)
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got p={p}")
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    (n1, m), n2 = x1.shape[-2:], x2.shape[-2]
    if p == 2 and (compute_mode == _CDIST_MODES[1]
                   or compute_mode == _CDIST_MODES[0] and max(n1, n2) > 25):
        return _euclidean(x1, x2)
    a = x1.expand(batch + (n1, m)).unsqueeze(-2)
    b = x2.expand(batch + (n2, m)).unsqueeze(-3)
    # the differences of a few rows of x1 at a time: memory stays bounded (all at once, two
    # 4096 x 128 float32 sets would need 8 GiB)
    rows = max(1, CDIST_CHUNK // max(1, math.prod(batch) * n2 * m))
    parts = [norm(narrow(a, a.ndim - 3, i, min(rows, n1 - i)) - b, float(p), -1)
             for i in range(0, max(n1, 1), rows)]
    return parts[0] if len(parts) == 1 else cat(parts, -2)


def _euclidean(x1, x2):
    """torch's _euclidean_dist, op for op (so the values agree): the squared norms appended to
    the rows, one batched product, whose entries of 0 or below (an exact zero, or cancellation)
    give 0. Their gradient is 0, as torch's: the root is taken of 1 there, then replaced (a root
    of 0 would send inf * 0 = NaN back)."""
    n1 = _sum(x1 * x1, -1, keepdim=True)
    n2 = _sum(x2 * x2, -1, keepdim=True)
    a = cat([x1 * -2, n1, ones_like(n1)], -1)
    b = cat([x2, ones_like(n2), n2], -1)
    squares = matmul(a, b.transpose(-2, -1))
    positive = squares > 0
    return where(positive, where(positive, squares, 1).sqrt(), 0)


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast) as a 0-d tensor: `norm`'s p (inf, -inf, 0, any
    number) and gradient (0 at a zero distance)."""
    _check_tensors("dist", input=input, other=other)
    return norm(input - other, float(p))


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
    "addmm": addmm, "addmv": addmv, "addr": addr, "baddbmm": baddbmm, "addbmm": addbmm,
    "inner": inner, "vdot": vdot, "kron": kron, "cross": cross, "dist": dist,
}
TENSOR_METHODS.update({name + "_": in_place(globals()[name]) for name in COMPOSED})
