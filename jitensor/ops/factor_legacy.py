"""torch's older top-level linear algebra (`torch.svd`, `cholesky`, `lu`, `lu_solve`,
`lu_unpack`, `triangular_solve`, `matrix_power`, `chain_matmul`) as torch defines them over
torch.linalg's, with its deprecation warnings; and the functions torch has removed (`solve`,
`eig`, `symeig`, `lstsq`, `matrix_rank`), which raise torch's error saying what replaces them."""
import warnings

from .. import dtypes
from ..creation import arange, zeros
from ..tensor import Tensor
from . import factor
from .factor import return_types
from .matrix import tril, triu
from .reduction import _return_type

__all__ = ["chain_matmul", "cholesky", "eig", "lstsq", "lu", "lu_solve", "lu_unpack",
           "matrix_power", "matrix_rank", "solve", "svd", "symeig", "triangular_solve"]

for _name, _fields in (("svd", ("U", "S", "V")),
                       ("triangular_solve", ("solution", "cloned_coefficient")),
                       ("lu_unpack", ("P", "L", "U"))):
    setattr(return_types, _name, _return_type(_name, _fields))


def _deprecated(message):
    warnings.warn(message, UserWarning, stacklevel=3)


def svd(input, some=True, compute_uv=True, *, out=None):
    """(U, S, V) with ``input = U diag(S) V^T``: V, not linalg.svd's Vh. `some` gives the
    reduced factors; without `compute_uv`, U and V are zero matrices of shapes (m, m), (n, n)."""
    if out is not None:
        raise TypeError("jitensor.svd(out=...) is not supported; use jitensor.linalg.svd")
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return return_types.svd(zeros(batch + (m, m), dtype=input.dtype, device=input.device),
                                factor.svdvals(input),
                                zeros(batch + (n, n), dtype=input.dtype, device=input.device))
    U, S, Vh = factor.linalg_svd(input, full_matrices=not some)
    return return_types.svd(U, S, Vh.mT)


def cholesky(input, upper=False, *, out=None):
    """The Cholesky factor L (``input = L L^T``), or U = L^T with `upper`."""
    _deprecated("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced "
                "with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
                "should be replaced with\nU = torch.linalg.cholesky(A).mH")
    return factor.cholesky(input, upper=upper, out=out)


def lu(A, pivot=True, get_infos=False, out=None):
    """(LU, pivots) of linalg.lu_factor_ex, and its infos with `get_infos`; a singular matrix
    factors without error, as in torch."""
    LU, pivots, info = factor.lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """linalg.lu_solve with torch.lu_solve's argument order (right-hand side first)."""
    return factor.lu_solve(LU_data, LU_pivots, b, out=out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from a packed LU factorisation: ``A = P @ L @ U``. L and U are empty when
    not `unpack_data`, P when not `unpack_pivots`."""
    if out is not None:
        raise TypeError("jitensor.lu_unpack(out=...) is not supported")
    if not isinstance(LU_data, Tensor) or not isinstance(LU_pivots, Tensor):
        raise TypeError("lu_unpack(): LU_data and LU_pivots must be Tensors")
    if LU_pivots.dtype is not dtypes.int32:
        raise RuntimeError(f"torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           f"of torch.int32 dtype. Note: this function is intended to be used "
                           f"with the output produced by torch.linalg.lu_factor, but got "
                           f"{LU_pivots.dtype}")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = zeros(0, dtype=LU_data.dtype, device=LU_data.device)
    L = U = empty
    if unpack_data:
        eye = (arange(m, device=LU_data.device)[:, None] ==
               arange(k, device=LU_data.device)).to(LU_data.dtype)
        L = tril(LU_data[..., :, :k], -1) + eye
        U = triu(LU_data[..., :k, :])
    P = empty
    if unpack_pivots:
        # apply the row swaps to the identity's rows: row i of P^T A is row perm[i] of A
        batch = tuple(LU_pivots.shape[:-1])
        swaps = LU_pivots.reshape(-1, LU_pivots.shape[-1]).cpu().tolist()
        perms = []
        for row in swaps:
            perm = list(range(m))
            for i, p in enumerate(row):
                perm[i], perm[p - 1] = perm[p - 1], perm[i]
            perms.append(perm)
        from ..creation import tensor
        index = tensor(perms, dtype=dtypes.int64, device=LU_data.device).reshape(batch + (m,))
        P = (index[..., None, :] == arange(m, device=LU_data.device)[:, None]).to(LU_data.dtype)
    return return_types.lu_unpack(P, L, U)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(X, A's copy) with ``A X = b`` (``A^T X = b`` with `transpose`) for triangular A."""
    if out is not None:
        raise TypeError("jitensor.triangular_solve(out=...) is not supported; use "
                        "jitensor.linalg.solve_triangular")
    _deprecated("torch.triangular_solve is deprecated in favor of "
                "torch.linalg.solve_triangularand will be removed in a future PyTorch release.\n"
                "torch.linalg.solve_triangular has its arguments reversed and does not return a "
                "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould "
                "be replaced with\nX = torch.linalg.solve_triangular(A, B).")
    coefficient = A.mT if transpose else A
    X = factor.solve_triangular(coefficient, b, upper=upper != transpose,
                                unitriangular=unitriangular)
    return return_types.triangular_solve(X, A.clone())


def matrix_power(input, n, *, out=None):
    from ..linalg import matrix_power as linalg_matrix_power
    return linalg_matrix_power(input, n, out=out)


def chain_matmul(*matrices, out=None):
    """The product of the matrices, in the cheapest order (linalg.multi_dot)."""
    _deprecated("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                "more tensors rather than multiple parameters.")
    from ..linalg import multi_dot
    if len(matrices) == 1:
        return matrices[0].clone() if out is None else out.copy_(matrices[0])
    return multi_dot(matrices, out=out)


def _removed(name, advice):
    def removed(*args, **kwargs):
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. "
                           f"{advice}")
    removed.__name__ = removed.__qualname__ = name
    removed.__doc__ = f"Removed from torch: {advice}"
    return removed


solve = _removed("solve", "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
                 "`torch.linalg.solve` has its arguments reversed and does not return the LU "
                 "factorization.")
eig = _removed("eig", "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or "
               "`cdouble` rather than real tensors mimicking complex tensors.")
symeig = _removed("symeig", "The default behavior has changed from using the upper "
                  "triangular portion of the matrix by default to using the lower triangular "
                  "portion. Use `torch.linalg.eigvalsh` or `torch.linalg.eigh`.")
lstsq = _removed("lstsq", "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`. "
                 "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
                 "decomposition in the returned tuple.")
matrix_rank = _removed("matrix_rank", "Please use the `torch.linalg.matrix_rank` function "
                       "instead. The parameter 'symmetric' was renamed in "
                       "`torch.linalg.matrix_rank()` to 'hermitian'.")


TENSOR_METHODS = {"svd": svd, "cholesky": cholesky, "lu": lu, "matrix_power": matrix_power,
                  "triangular_solve": triangular_solve, "solve": solve, "eig": eig,
                  "symeig": symeig, "lstsq": lstsq, "lu_solve": lu_solve}
