"""torch.sparse: the functions of sparse COO tensors (the tensors themselves: ops/sparse.py)."""
from .legacy_types import SPARSE_TYPES as _SPARSE_TYPES
from .ops import linalg as _linalg
from .ops import sparse as _sparse
from .ops.sparse import SparseTensor  # noqa: F401 (the type of sparse tensors)
from .tensor import Tensor as _Tensor

__all__ = ["addmm", "log_softmax", "mm", "softmax", "sum", *_SPARSE_TYPES]
globals().update(_SPARSE_TYPES)  # FloatTensor, LongTensor, ... (torch's legacy sparse types)


def mm(mat1, mat2, reduce="sum"):
    """mat1 @ mat2 with mat1 sparse COO (mat2 sparse or dense): dense unless both are sparse."""
    if reduce != "sum":
        raise NotImplementedError(f"sparse.mm(): reduce={reduce!r} is for CSR tensors, which "
                                  f"jitensor does not have; only reduce='sum'")
    if not (isinstance(mat1, _Tensor) and mat1.is_sparse):
        raise TypeError("sparse.mm(): mat1 must be a sparse COO tensor; use jitensor.mm for "
                        "dense ones")
    return _linalg.mm(mat1, mat2)  # (linalg's, as autograd wraps it)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse COO, mat and mat2 dense."""
    return _linalg.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse COO tensor's elements (a dense 0-d tensor), or over `dim`: sparse
    while a dim is left."""
    return _sparse.sum(input, dim, dtype=dtype)


def softmax(input, dim, *, dtype=None):
    """softmax over `dim` of each line's entries, missing entries counting as -inf: a sparse
    tensor of the same entries."""
    return _sparse.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """log of `softmax`, computed as x - logsumexp."""
    return _sparse.softmax(input, dim, dtype, log=True)
