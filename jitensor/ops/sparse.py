"""Sparse COO tensors (layout `sparse_coo`), as torch's: `indices` (sparse_dim, nnz) int64 and
`values` (nnz, *dense_shape); entry i puts values[i] at indices[:, i], and entries at one
position add up. A tensor is coalesced when its entries are sorted by position, none twice.

A `SparseTensor` is a Tensor (isinstance, dtype, device, shape) without a dense buffer: an op
that reads one raises NotImplementedError naming the fix, as torch's sparse backends do for
the ops they lack. Sorting entries (coalesce), adding duplicates and sparse @ dense are
kernels of their own (kernels/*/sparse.py: one task per output row, so the same bits at any
thread count); the rest runs on the indices and values with the dense ops. Dense front ends
hand a sparse operand here (they test `is_sparse` of tensors that are not plain Tensors).
Sparse tensors take no part in autograd themselves; gradients reach the dense operands of
products, sums and additions (torch also gives sparse ones). docs/design.md, "Sparse COO
tensors", says why it is built so."""
import math

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.versions import version
from ..creation import empty, zeros
from ..creation import tensor as _tensor
from ..device import CPU, to_device
from ..kernels.registry import backend
from ..tensor import Size, Tensor, _new, _parse_to, _wrap, sparse_coo
from . import elementwise, indexing, linalg, reduction, scatter, shape
from ._common import same_device, write_out

__all__ = ["SparseTensor", "sparse_coo_tensor", "spmm"]

_DENSE_ONLY = ("this op runs on dense (strided) tensors and was given a sparse COO tensor; "
               "convert it with .to_dense() first. Sparse COO tensors support coalesce, "
               "to_dense, indices/values, transpose/t, add/sub/mul/div, sum, mm/matmul/addmm, "
               "softmax/log_softmax and the unary ops that keep zero at zero")


class SparseTensor(Tensor):
    """A sparse COO tensor; make one with `sparse_coo_tensor` or `Tensor.to_sparse()`."""

    # _memo: what was derived from the indices (`_memo` below), or None
    __slots__ = ("_idx", "_vals", "_size", "_coalesced", "_memo")

    @property
    def is_sparse(self):
        return True

    @property
    def _data(self):
        raise NotImplementedError(_DENSE_ONLY)

    # -- description ---------------------------------------------------------------------------
    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[self._dim(dim)]

    def _dim(self, dim):
        n = max(len(self._size), 1)
        if not isinstance(dim, int) or not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                             f"but got {dim})")
        return dim % n

    @property
    def ndim(self):
        return len(self._size)

    def dim(self):
        return len(self._size)

    def numel(self):
        return math.prod(self._size)

    nelement = numel

    @property
    def layout(self):
        return sparse_coo

    def is_contiguous(self, memory_format=None):
        return False

    def sparse_dim(self):
        return self._idx.shape[0]

    def dense_dim(self):
        return len(self._size) - self._idx.shape[0]

    def _nnz(self):
        return self._idx.shape[1]

    def is_coalesced(self):
        return self._coalesced

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    # -- parts -----------------------------------------------------------------------------------
    def _indices(self):
        return self._idx

    def _values(self):
        return self._vals

    def indices(self):
        """The indices (sparse_dim, nnz) of a coalesced tensor."""
        self._check_coalesced("indices")
        return self._idx

    def values(self):
        """The values (nnz, *dense_shape) of a coalesced tensor."""
        self._check_coalesced("values")
        return self._vals

    def _check_coalesced(self, what):
        if not self._coalesced:
            raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call "
                               f".coalesce() first")

    # -- autograd: none ------------------------------------------------------------------------
    @property
    def requires_grad(self):
        return False

    @requires_grad.setter
    def requires_grad(self, value):
        if value:
            raise NotImplementedError("jitensor's sparse tensors do not take part in autograd; "
                                      "make the values dense and differentiate those")

    @property
    def grad(self):
        return None

    @property
    def grad_fn(self):
        return None

    def detach(self):
        return _make(self._idx, self._vals, self._size, self._coalesced)

    # -- conversions -----------------------------------------------------------------------------
    def coalesce(self):
        return coalesce(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        return to_dense(self, dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        _check_coo(layout, "to_sparse")
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               f"argument != self.sparse_dim() is not supported; the tensor "
                               f"has sparse_dim {self.sparse_dim()}, asked {sparse_dim}")
        return self

    def to_sparse_coo(self):
        return self

    def to(self, *args, non_blocking=False, copy=False, memory_format=None, **kwargs):
        device, dtype = _parse_to(args, kwargs)
        device = self._device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        if device == self._device and dtype is self._dtype and not copy:
            return self
        return _make(self._idx.to(device, copy=copy), self._vals.to(device, dtype, copy=copy),
                     self._size, self._coalesced)

    def clone(self, *, memory_format=None):
        return _make(self._idx.clone(), self._vals.clone(), self._size, self._coalesced)

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    # -- in place: the tensor takes the result's entries ------------------------------------------
    def _become(self, result):
        self._idx, self._vals, self._coalesced = result._idx, result._vals.to(self._dtype), \
            result._coalesced
        return self

    def add_(self, other, *, alpha=1):
        return self._become(binary("add", self, other, alpha))

    def sub_(self, other, *, alpha=1):
        return self._become(binary("sub", self, other, alpha))

    def mul_(self, other):
        return self._become(binary("mul", self, other))

    def div_(self, other):
        return self._become(binary("div", self, other))

    def zero_(self):
        return self._become(sparse_coo_tensor(self._size, dtype=self._dtype,
                                              device=self._device))

    __iadd__, __isub__, __imul__, __itruediv__ = add_, sub_, mul_, div_

    # -- operators (Python tries a subclass's reflected one first: dense + sparse comes here) --
    def __add__(self, other):
        return binary("add", self, other)

    def __radd__(self, other):
        return binary("add", other, self)

    def __sub__(self, other):
        return binary("sub", self, other)

    def __rsub__(self, other):
        return binary("sub", other, self)

    def __mul__(self, other):
        return binary("mul", self, other)

    def __rmul__(self, other):
        return binary("mul", other, self)

    def __truediv__(self, other):
        return binary("div", self, other)

    def __matmul__(self, other):  # (linalg's, as autograd wraps it: a dense operand's gradient)
        return linalg.matmul(self, other)

    def __rmatmul__(self, other):
        return linalg.matmul(other, self)

    def __repr__(self):
        return _repr(self)

    def __reduce__(self):
        return (_rebuild, (self._idx, self._vals, tuple(self._size), self._coalesced))


def _make(indices, values, size, coalesced):
    s = _new(SparseTensor)
    s._idx, s._vals, s._size, s._coalesced = indices, values, Size(size), coalesced
    s._dtype, s._device, s._meta, s._memo = values._dtype, values._device, None, None
    return s


def _memo(s, key, make=None):
    """What `make()` derives from s's indices, made once and kept on s while they are unchanged
    (their version counter says so); without `make`, what was kept, or None. Products and
    their gradients thus sort a sparse matrix's structure once, not at every step."""
    stamp = version(s._idx._data)
    kept = (s._memo or {}).get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    if make is None:
        return None
    if s._memo is None:
        s._memo = {}
    value = make()
    s._memo[key] = (stamp, value)
    return value


def _rebuild(indices, values, size, coalesced):
    return _make(indices, values, size, coalesced)


def _check_coo(layout, fn):
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"{fn}(): layout={layout!r} is not supported; jitensor's sparse "
                                  f"tensors are COO (layout=jitensor.sparse_coo)")


def _repr(s):
    from .. import _format
    default = dtypes.get_default_dtype()

    def part(name, t):  # (the dtype is said once, after the parts)
        shown = t._dtype if t._dtype.is_floating_point else default
        text = _format.tensor_repr(backend(t._device).to_numpy(t._data), t._dtype, CPU, shown,
                                   False)
        if not t.numel():
            text = f"tensor([], size={tuple(t.shape)})"
        return f"{name}=" + text.replace("\n", "\n" + " " * (7 + len(name) + 1))

    lines = [part("indices", s._idx), part("values", s._vals)]
    suffixes = [f"size={tuple(s._size)}", f"nnz={s._nnz()}"]
    if s._dtype is not default and s._dtype.name not in ("int64", "bool"):
        suffixes.append(f"dtype={s._dtype}")
    if s._device.type != "cpu":
        suffixes.append(f"device='{s._device}'")
    suffixes.append(f"layout={sparse_coo!r}")
    return "tensor(" + (",\n" + " " * 7).join(lines + [", ".join(suffixes)]) + ")"


# -- creation ------------------------------------------------------------------------------------
def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """A sparse COO tensor of `size` (by default each sparse dim one past its largest index,
    then values' trailing dims) whose entries are the columns of `indices` (sparse_dim, nnz)
    with `values` (nnz, ...). Entries at one position add up. Indices are always checked
    (torch checks them when `check_invariants` is on): each must lie in [0, size).
    ``sparse_coo_tensor(size)`` has no entries."""
    if values is None:  # (size) alone
        size = Size(size if indices is None else indices)
        indices = zeros((len(size), 0), dtype=dtypes.int64, device=device)
        values = zeros(0, dtype=dtype or dtypes.get_default_dtype(), device=device)
    if requires_grad:
        raise NotImplementedError("sparse_coo_tensor(): jitensor's sparse tensors do not take "
                                  "part in autograd (requires_grad=True); differentiate a "
                                  "dense tensor")
    device = None if device is None else to_device(device)
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype, device=device)
    elif values.is_sparse:
        raise TypeError("sparse_coo_tensor(): argument 'values' must be a dense tensor")
    if device is not None or dtype is not None:
        values = values.to(device or values.device, dtype or values.dtype)
    _no_grad("sparse_coo_tensor", values)
    if not isinstance(indices, Tensor):
        indices = _tensor(indices, device=values.device)
    if indices.is_floating_point() or indices.is_complex() or indices.dtype is dtypes.bool_:
        raise RuntimeError(f"sparse_coo_tensor(): indices must be an int64 tensor, got "
                           f"{indices.dtype}")
    indices = indices.to(values.device, dtypes.int64).detach()
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sparse_dim, nnz = indices.shape
    if values.ndim == 0 or values.shape[0] != nnz:
        got = values.shape[0] if values.ndim else "a 0-d values tensor"
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {got}")
    dense = tuple(values.shape[1:])
    bounds = backend(indices._device).sparse.index_bounds(indices.contiguous()._data) if nnz \
        else ([0], [-1] * sparse_dim)
    low, top = ([int(v) for v in b] for b in bounds)
    if size is None:
        size = tuple(t + 1 for t in top) + dense  # (torch's sizes of an empty tensor: 0)
    else:
        size = tuple(size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size)
        if len(size) != sparse_dim + len(dense):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {sparse_dim}, dense_dim "
                               f"= {len(dense)}")
        if tuple(size[sparse_dim:]) != dense:
            raise RuntimeError(f"sparse_coo_tensor(): values' dims after the first, {list(dense)}, "
                               f"must be size's dense dims {list(size[sparse_dim:])}")
        for d, (t, n) in enumerate(zip(top, size, strict=False)):
            if t >= n:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {n} "
                                   f"but found index {t}")
    if min(low, default=0) < 0:
        raise RuntimeError(f"found negative index {min(low)} in sparse_coo_tensor(): indices "
                           f"must be >= 0")
    return _make(indices, values, size, bool(is_coalesced) or nnz <= 1 and sparse_dim > 0)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The coalesced sparse COO tensor of a dense one's nonzero entries (with `sparse_dim`,
    of its nonzero slices over the first sparse_dim dims)."""
    _check_coo(layout, "to_sparse")
    if blocksize is not None:
        raise NotImplementedError("to_sparse(): blocksize is for the block layouts (BSR/BSC), "
                                  "which jitensor does not have")
    _no_grad("to_sparse", self)
    n = self.ndim
    sd = n - (dense_dim or 0) if sparse_dim is None else sparse_dim
    if not 0 <= sd <= n:
        raise RuntimeError(f"to_sparse(): sparse_dim must be in [0, {n}], got {sd}")
    nonzero = elementwise.ne(self, 0)
    if sd < n:
        nonzero = reduction.any(shape.reshape(nonzero, tuple(self.shape[:sd]) + (-1,)), -1)
    indices = shape.transpose(indexing.nonzero(nonzero), 0, 1) if sd else \
        zeros((0, 1), dtype=dtypes.int64, device=self.device)
    values = self[tuple(indices)] if sd else shape.unsqueeze(self, 0)
    return _make(indices.contiguous(), values, self.shape, True)


def to_sparse_coo(self):
    return to_sparse(self)


# -- structure -----------------------------------------------------------------------------------
def _runs(indices, sizes):
    """(order, starts, unique, inverse), int64 tensors, of the entries at `indices` (sd, nnz)
    in a tensor of `sizes`: the stable order that sorts them by position, where each
    position's run starts in it (nnz last), the runs' indices, and each entry's run."""
    parts = backend(indices._device).sparse.coalesce_order(indices.contiguous()._data,
                                                          np.asarray(sizes, np.int64))
    return [_wrap(p, dtypes.int64, indices._device) for p in parts]


def _segment_sum(values, order, starts):
    """The sums of values' rows order[starts[u]:starts[u + 1]], each in that order."""
    runs, dense = starts.shape[0] - 1, tuple(values.shape[1:])
    wide = dtypes.float32 if values.dtype in (dtypes.float16, dtypes.bfloat16) else values.dtype
    src = values.to(wide).contiguous()
    out = empty((runs,) + dense, dtype=wide, device=values.device)
    width = math.prod(dense)
    backend(values._device).sparse.segment_sum(out._data.reshape(runs, width),
                                               src._data.reshape(src.shape[0], width),
                                               order._data, starts._data)
    return out.to(values.dtype)


def coalesce(s):
    """`s` with its entries sorted by position and those at one position added (in order)."""
    if s._coalesced:
        return s
    order = _memo(s, "order")  # (a transposed coalesced tensor's: its entries, sorted)
    if order is not None:
        out = _make(s._idx[:, order], s._vals[order], s._size, True)
        csr = _memo(s, "csr")
        if csr is not None:
            out._memo = {"csr": (version(out._idx._data), csr)}
        return out
    order, starts, unique, _ = _runs(s._idx, s._size[:s.sparse_dim()])
    return _make(unique, _segment_sum(s._vals, order, starts), s._size, True)


def to_dense(s, dtype=None):
    out = zeros(s._size, dtype=s._dtype, device=s._device)
    out = scatter.index_put(out, tuple(s._idx), s._vals, accumulate=True)
    return out if dtype is None else out.to(dtype)


def transpose(s, dim0, dim1):
    d0, d1, sd = s._dim(dim0), s._dim(dim1), s.sparse_dim()
    size = list(s._size)
    size[d0], size[d1] = size[d1], size[d0]
    if d0 == d1:
        return s.detach()
    if d0 < sd and d1 < sd:
        dims = list(range(sd))
        dims[d0], dims[d1] = d1, d0
        out = _make(s._idx[dims], s._vals, size, s._nnz() <= 1)
        if s._coalesced and not out._coalesced:  # how to sort its entries: found once, on s
            order, csr = _memo(s, ("transpose", d0, d1), lambda: _sorting(out))
            stamp = version(out._idx._data)
            out._memo = {"order": (stamp, order), "csr": (stamp, csr)}
        return out
    if d0 >= sd and d1 >= sd:
        return _make(s._idx, shape.transpose(s._vals, d0 - sd + 1, d1 - sd + 1), size,
                     s._coalesced)
    raise RuntimeError(f"transpose(): cannot transpose a sparse dim with a dense dim (dims "
                       f"{d0} and {d1}; the first {sd} are sparse)")


def _sorting(s):
    """(the order that sorts the entries of s, which has no position twice; for a matrix, the
    CSR structure of the sorted entries, else None)."""
    order, _, unique, _ = _runs(s._idx, s._size[:s.sparse_dim()])
    return order, _csr_structure(unique, s._size) if s.ndim == 2 else None


def t(s):
    if s.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                           f"got {s.sparse_dim()} sparse and {s.dense_dim()} dense dimensions")
    return transpose(s, 0, 1) if s.ndim == 2 else s.detach()


# -- elementwise ---------------------------------------------------------------------------------
# f(0) == 0: computed on the values alone (after coalescing, unless f is linear)
_LINEAR = {"neg", "negative"}
_ZERO_KEEPING = {"abs", "absolute", "sqrt", "sin", "tan", "tanh", "sinh", "asin", "arcsin",
                 "asinh", "arcsinh", "atan", "arctan", "atanh", "arctanh", "sign", "ceil",
                 "floor", "round", "trunc", "expm1", "log1p", "square", "erf", "erfinv",
                 "nan_to_num", "isnan", "isinf"}


def unary(name, s, *args, out=None, **kwargs):
    """The elementwise op `name` of a sparse tensor: sparse, where it keeps zero at zero."""
    fn = getattr(elementwise, name, None)
    if fn is None or name not in _LINEAR | _ZERO_KEEPING:
        raise NotImplementedError(f"{name}() is not implemented for sparse COO tensors (it "
                                  f"does not keep zero at zero); call .to_dense() first")
    if out is not None:
        raise NotImplementedError(f"{name}(): out= is not implemented for sparse COO tensors")
    if name not in _LINEAR:
        s = coalesce(s)
    return _make(s._idx, fn(s._vals, *args, **kwargs), s._size, s._coalesced)


def _same_size(fn, a, b):
    if a.shape != b.shape:
        raise RuntimeError(f"{fn}: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(a.shape)} while other has size {list(b.shape)} (FYI: "
                           f"op2-sparse addition does not currently support broadcasting)")


def binary(name, x, y, alpha=1, out=None):
    """add/sub/mul/div with a sparse operand: dense + sparse is dense, sparse +- sparse sparse,
    sparse * dense (either order), sparse * sparse and sparse * or / a number sparse."""
    x_sparse = isinstance(x, Tensor) and x.is_sparse
    y_sparse = isinstance(y, Tensor) and y.is_sparse
    if name in ("add", "sub"):
        if not y_sparse:
            raise RuntimeError(f"{name}(sparse, dense) is not supported. Use {name}(dense, "
                               f"sparse) instead.")
        if alpha != 1 or name == "sub":
            y = binary("mul", y, -alpha if name == "sub" else alpha)
        if not x_sparse:  # dense + sparse: the dense result, duplicates added first
            return elementwise.add(x, to_dense(y), out=out)
        same_device(name, x, y)
        _same_size(name, x, y)
        _no_out(name, out)
        if x.dense_dim() != y.dense_dim():
            raise RuntimeError(f"{name}: expected 'self' and 'other' to have the same number of "
                               f"sparse dims, got {x.sparse_dim()} and {y.sparse_dim()}")
        dt = dtypes.result_type(x, y)
        if x._idx is y._idx:  # (as torch: one pattern, so the values add)
            return _make(x._idx, elementwise.add(x._vals.to(dt), y._vals.to(dt)), x._size,
                         x._coalesced)
        both = _make(shape.cat([x._idx, y._idx], 1),
                     shape.cat([x._vals.to(dt), y._vals.to(dt)]), x._size, False)
        return coalesce(both) if x._coalesced and y._coalesced else both
    if name not in ("mul", "div"):
        raise NotImplementedError(f"{name}() is not implemented for sparse COO tensors; call "
                                  f".to_dense() first")
    _no_out(name, out)
    _no_grad(name, x, y)
    if name == "div" and y_sparse:
        raise RuntimeError("div(): dividing by a sparse tensor divides by its zeros; divide by "
                           "a number or a dense tensor")
    if not isinstance(y, Tensor) or not y.ndim and not y_sparse:  # a number: linear
        op = getattr(elementwise, name)
        return _make(x._idx, op(x._vals, y), x._size, x._coalesced)
    if not x_sparse:
        return binary(name, y, x)  # (mul: dense * sparse is sparse * dense)
    same_device(name, x, y)
    _same_size(name, x, y)
    if y_sparse:  # where both have an entry: the runs of two among both's entries
        x, y = coalesce(x), coalesce(y)
        order, starts, unique, _ = _runs(shape.cat([x._idx, y._idx], 1), x._size[:x.sparse_dim()])
        both = indexing.nonzero(elementwise.eq(starts[1:] - starts[:-1], 2)).reshape(-1)
        first = starts[both]  # (the stable order puts x's entry first)
        product = elementwise.mul(x._vals[order[first]],
                                  y._vals[order[first + 1] - x._nnz()])
        return _make(unique[:, both], product, x._size, True)
    op = getattr(elementwise, name)  # entry by entry (linear in x: no coalescing)
    return _make(x._idx, op(x._vals, y[tuple(x._idx)]), x._size, x._coalesced)


def _no_grad(fn, *operands):
    """The error where a dense operand would need a gradient through a sparse result."""
    for x in operands:
        if isinstance(x, Tensor) and x.requires_grad and grad_mode.is_grad_enabled():
            raise NotImplementedError(f"{fn}(): the result is sparse, and jitensor's sparse "
                                      f"tensors do not take part in autograd, so the gradient of "
                                      f"the dense operand that requires grad would be lost; "
                                      f"call .to_dense() on the sparse one first")


def _no_out(fn, out):
    if out is not None:
        raise NotImplementedError(f"{fn}(): out= is not implemented for sparse COO results")


# -- reductions ----------------------------------------------------------------------------------
def sum(s, dim=None, keepdim=False, *, dtype=None, out=None):
    """The sum of all elements (dense, 0-d), or over `dim`s: sparse while a dim is left."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == s.ndim):
        return reduction.sum(s._vals, dtype=dtype, out=out)
    if keepdim:
        raise NotImplementedError("sum(): keepdim=True is not implemented for sparse COO tensors")
    _no_out("sum", out)
    dims = sorted({s._dim(d) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))})
    sd = s.sparse_dim()
    values = s._vals if dtype is None else s._vals.to(dtype)
    dense = [d - sd + 1 for d in dims if d >= sd]
    if dense:
        values = reduction.sum(values, dense)
    values = values.to(reduction._sum_dtype("sum", values, None, None))  # (ints: int64)
    kept = [d for d in range(sd) if d not in dims]
    size = [n for d, n in enumerate(s._size) if d not in dims]
    if not kept:  # every sparse dim summed: a dense tensor
        return reduction.sum(values, 0)
    return coalesce(_make(s._idx[kept], values, size, False))


# -- products ------------------------------------------------------------------------------------
def _csr(s):
    """(crow, col, val) of a coalesced 2-D sparse matrix: row r's entries are crow[r]:crow[r+1]."""
    s = coalesce(s)
    crow, col = _memo(s, "csr", lambda: _csr_structure(s._idx, s._size))
    return crow, col, s._vals.contiguous()


def _csr_structure(indices, size):
    """(crow, col) of a matrix's sorted entries at `indices` (2, nnz)."""
    rows, col = indices.contiguous()
    crow = backend(rows._device).sparse.row_starts(rows._data, size[0])
    return _wrap(crow, dtypes.int64, rows._device), col


def _spmm(s, d):
    """sparse (m, k) @ dense (k, n) as a dense (m, n)."""
    crow, col, val = _csr(s)
    d = d.contiguous()
    out = empty((s._size[0], d.shape[1]), dtype=s._dtype, device=s._device)  # (all written)
    backend(s._device).sparse.spmm(out._data, crow._data, col._data, val._data, d._data)
    return out


def mm(a, b, out=None, fn="mm"):
    """a @ b of two matrices, one or both sparse: dense unless both are sparse."""
    for name, m in (("input", a), ("mat2", b)):
        if not isinstance(m, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(m).__name__}")
        if m.ndim != 2 or m.is_sparse and m.dense_dim():
            raise RuntimeError(f"{fn}(): {name} must be a matrix (2 sparse dims for a sparse one), "
                               f"got shape {list(m.shape)}")
    same_device(fn, a, b)
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"{fn}(): mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"{fn}(): expected mat1 and mat2 to have the same dtype, but got: "
                           f"{a._dtype} != {b._dtype}")
    if a.is_sparse and b.is_sparse:
        _no_out(fn, out)
        return to_sparse(_spmm(a, to_dense(b)))
    if a.is_sparse:
        result = _spmm(a, b)
    else:  # dense @ sparse = (sparse^T @ dense^T)^T
        result = shape.transpose(_spmm(t(b), shape.transpose(a, 0, 1)), 0, 1).contiguous()
    return write_out(fn, out, result, exact=True)


def matmul(a, b, out=None):
    """matmul with a sparse operand: matrix @ matrix as `mm`, a vector as a column (right) or
    a row (left)."""
    if a.ndim == 2 and b.ndim == 1:
        return write_out("matmul", out, mm(a, shape.unsqueeze(b, 1), fn="matmul").reshape(-1))
    if a.ndim == 1 and b.ndim == 2:
        return write_out("matmul", out, mm(shape.unsqueeze(a, 0), b, fn="matmul").reshape(-1))
    if a.ndim != 2 or b.ndim != 2:
        raise NotImplementedError(f"matmul(): sparse COO operands must be matrices (or a matrix "
                                  f"and a vector), got shapes {list(a.shape)} and "
                                  f"{list(b.shape)}")
    return mm(a, b, out, "matmul")


def spmm(input, mat2):
    """sparse matrix @ dense matrix (torch.spmm; dense operands too, as `mm`)."""
    return linalg.mm(input, mat2)  # (linalg's, as autograd wraps it)


# -- softmax -------------------------------------------------------------------------------------
def softmax(s, dim, dtype=None, log=False):
    """softmax over `dim` of each line's entries, the missing ones counting as -inf (so they
    stay missing): sparse, coalesced."""
    d, sd = s._dim(dim), s.sparse_dim()
    s = coalesce(s if dtype is None else s.to(dtype))
    fn = "log_softmax" if log else "softmax"
    values = s._vals
    if not values.is_floating_point():
        raise RuntimeError(f"{fn}(): expected a floating point sparse tensor, got {s.dtype}")
    if d >= sd:  # a dense dim: softmax of each entry's values
        from .activation import log_softmax as dense_log_softmax
        from .activation import softmax as dense_softmax
        op = dense_log_softmax if log else dense_softmax
        return _make(s._idx, op(values, d - sd + 1), s._size, True)
    others = [k for k in range(sd) if k != d]
    _, starts, _, line = _runs(s._idx[others], [s._size[k] for k in others])
    lines = (starts.shape[0] - 1,) + tuple(values.shape[1:])
    index = line.reshape((-1,) + (1,) * (values.ndim - 1)).expand(values.shape)
    top = scatter.scatter_reduce(zeros(lines, dtype=values.dtype, device=s._device), 0, index,
                                 values, "amax", include_self=False)
    shifted = values - top[line]
    e = elementwise.exp(shifted)
    total = scatter.index_add(zeros(lines, dtype=values.dtype, device=s._device), 0, line, e)
    result = shifted - elementwise.log(total[line]) if log else e / total[line]
    return _make(s._idx, result, s._size, True)


def sparse_mask(self, mask):
    """The entries of dense `self` where sparse `mask` has one: a sparse tensor of mask's
    pattern."""
    if not (isinstance(mask, Tensor) and mask.is_sparse):
        raise RuntimeError("sparse_mask(): expected mask to be a sparse COO tensor")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    return _make(mask._idx, self[tuple(mask._idx)], mask._size, mask._coalesced)


# a dense tensor's answers to the sparse-only methods, as torch's
def _layout_error(name, kind="sparse coordinate tensor"):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {kind} layout but got Strided")
    method.__name__ = name
    return method


TENSOR_METHODS = {
    "to_sparse": to_sparse, "to_sparse_coo": to_sparse_coo, "sparse_mask": sparse_mask,
    "coalesce": _layout_error("coalesce"), "is_coalesced": _layout_error("is_coalesced"),
    "indices": _layout_error("indices"), "values": _layout_error("values", "sparse tensor"),
    "_indices": _layout_error("_indices"), "_values": _layout_error("_values", "sparse tensor"),
    "_nnz": _layout_error("_nnz"), "sparse_dim": lambda self: 0,
}
