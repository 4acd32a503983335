"""torch.linalg's factorisations and solvers: LU with partial pivoting and Cholesky (kernels:
kernels/<device>/factor.py, formulas: kernels/scalar/factor.py) and the ops built on them
-- solve, inv, det, slogdet, solve_triangular, lu_solve and their torch aliases; QR, eigh and
svd, and matrix_rank, pinv and lstsq composed on the last two.

Every op takes batches of matrices (*, m, n) of float32 or float64 (torch refuses float16
and integers here too), broadcasts batch dims, and hands the kernels C-contiguous copies that
they factor or solve in place. Errors are torch's, raised as `LinAlgError` (a RuntimeError)
naming the batch element. Every op but cholesky_solve and cholesky_inverse (composed of
differentiable ops) has a derivative rule in autograd/derivatives/factor.py: the _ex forms share
their plain form's, and their `info` has no gradient."""
import math

import numpy as np

from .. import dtypes
from ..creation import allocate, arange, eye, ones, tensor
from ..kernels.registry import backend
from ..tensor import Tensor
from ._common import broadcast_shapes, same_device, write_out, write_pair
from .elementwise import maximum, where
from .linalg import matmul
from .reduction import _return_type, return_types
from .shape import cat

# torch's top-level names (jitensor/linalg.py is torch.linalg: every op here)
__all__ = ["cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet", "pinverse", "qr",
           "slogdet"]

class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix the op cannot factor (singular, not
    positive-definite)."""


# torch.return_types of these ops, added to jitensor.return_types (where unpickling finds them)
for _name, _fields in (("linalg_lu_factor", ("LU", "pivots")),
                       ("linalg_lu_factor_ex", ("LU", "pivots", "info")),
                       ("linalg_lu", ("P", "L", "U")), ("linalg_slogdet", ("sign", "logabsdet")),
                       ("linalg_solve_ex", ("result", "info")),
                       ("linalg_inv_ex", ("inverse", "info")),
                       ("linalg_cholesky_ex", ("L", "info")), ("linalg_qr", ("Q", "R")),
                       ("qr", ("Q", "R")), ("linalg_eigh", ("eigenvalues", "eigenvectors")),
                       ("linalg_eig", ("eigenvalues", "eigenvectors")),
                       ("linalg_svd", ("U", "S", "Vh")),
                       ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))):
    setattr(return_types, _name, _return_type(_name, _fields))


# -- argument checks -----------------------------------------------------------------------------
def _matrices(fn, A, name="A", square=True):
    if not isinstance(A, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A._dtype in dtypes.NARROW:
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got "
                           f"{A._dtype.scalar_name}")
    if A._dtype.is_complex:
        return A
    if not A._dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{A._dtype.scalar_name}")
    return A


def _pair(fn, A, B, equation="AX = B"):
    """A and B checked to be one device and dtype, with B's rows (or, for B a vector, its
    length) matching A's."""
    same_device(fn, A, B)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{A._dtype.scalar_name} and B of type {B._dtype.scalar_name} instead")
    if B.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {equation} "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")


def _raise(fn, info, message):
    """LinAlgError for the first matrix whose info is not 0: message(info) says why."""
    codes = info.reshape(-1).tolist()
    for b, code in enumerate(codes):
        if code:
            where = f"(Batch element {b}): " if info.ndim else ""
            raise LinAlgError(f"{fn}: {where}{message(code)}")


# -- the kernels' front ends ---------------------------------------------------------------------
def _own(X, shape):
    """A C-contiguous copy of X broadcast to `shape`, and its buffer as a stack of matrices."""
    out = allocate(shape, X._dtype, X._device)
    backend(X._device).copy(out._data, X._data if X.shape == shape else X.expand(shape)._data)
    return out, out._data.reshape(math.prod(shape[:-2]), shape[-2], shape[-1])


def _info(batch, device):
    return allocate(batch, dtypes.int64, device)


def _factored(A):
    """(LU factors, pivots int64, info int64) of A's matrices."""
    m, n = A.shape[-2:]
    batch = tuple(A.shape[:-2])
    LU, a = _own(A, tuple(A.shape))
    piv, info = allocate(batch + (min(m, n),), dtypes.int64, A._device), _info(batch, A._device)
    backend(A._device).factor.lu(a, piv._data.reshape(a.shape[0], min(m, n)),
                                 info._data.reshape(-1))
    return LU, piv, info


def _lu_solved(LU, piv, B):
    """A^-1 B (B (*, n, k)) from A's LU factors, batch dims broadcast."""
    batch = broadcast_shapes(LU.shape[:-2], B.shape[:-2])
    n = LU.shape[-1]
    LU = LU.expand(batch + (n, n)).contiguous()
    piv = piv.expand(batch + (n,)).contiguous()
    X, b = _own(B, batch + tuple(B.shape[-2:]))
    backend(B._device).factor.lu_solve(LU._data.reshape(b.shape[0], n, n),
                                       piv._data.reshape(b.shape[0], n), b)
    return X


def _vector_case(A, B):
    """Whether solve reads B as a (batch of) vector(s), as torch does."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


_SINGULAR = "The solver failed because the input matrix is singular."


# -- LU ------------------------------------------------------------------------------------------


def _lu_factor(fn, A, pivot):
    _matrices(fn, A, square=False)
    if not pivot:
        raise RuntimeError(f"{fn}: LU without pivoting is not implemented on the "
                           f"{A.device.type.upper()}")
    return _factored(A)


def _no_out(fn, out):
    if out is not None:
        raise TypeError(f"{fn}(): out= is not supported for this op; assign its result")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """torch.linalg.lu_factor_ex: (LU, pivots, info), LAPACK getrf's compact form: L's
    multipliers below the diagonal (its unit diagonal implied), U on and above it, pivots the
    1-based rows swapped in turn (int32), info 0 or the first zero pivot's 1-based index."""
    fn = "linalg.lu_factor_ex"
    _no_out(fn, out)
    LU, piv, info = _lu_factor(fn, A, pivot)
    if check_errors:
        _raise(fn, info, lambda k: f"U[{k},{k}] is zero and using it on lu_solve would result "
               f"in a division by zero.")
    return return_types.linalg_lu_factor_ex(LU, piv.to(dtypes.int32), info.to(dtypes.int32))


def lu_factor(A, *, pivot=True, out=None):
    """torch.linalg.lu_factor: (LU, pivots) of lu_factor_ex; a zero pivot raises."""
    fn = "linalg.lu_factor"
    _no_out(fn, out)
    LU, piv, info = _lu_factor(fn, A, pivot)
    _raise("torch." + fn, info, lambda k: f"U[{k},{k}] is zero and using it on lu_solve would "
           f"result in a division by zero. If you still want to perform the factorization, "
           f"consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return return_types.linalg_lu_factor(LU, piv.to(dtypes.int32))


def _row_order(piv, m):
    """index (int64, (*, m)) with P B = B[index], A = P L U, from getrf's 1-based pivots
    (*, k): getrf's swaps in turn give P^T B = B[order], and index inverts order."""
    batch = tuple(piv.shape[:-1])
    perms = []
    for swaps in piv.reshape(-1, piv.shape[-1]).tolist() if piv.shape[-1] else [[]] * \
            math.prod(batch):
        order = list(range(m))
        for i, p in enumerate(swaps):
            order[i], order[p - 1] = order[p - 1], order[i]
        inverse = [0] * m
        for i, r in enumerate(order):
            inverse[r] = i
        perms.append(inverse)
    return tensor(perms, dtype=dtypes.int64, device=piv.device).reshape(batch + (m,))


def _permuted(piv, B):
    """P B (batch dims broadcast): B's rows gathered, which no dense P has to be built for."""
    batch = broadcast_shapes(tuple(piv.shape[:-1]), tuple(B.shape[:-2]))
    index = _row_order(piv, B.shape[-2]).expand(batch + (B.shape[-2],))
    B = B.expand(batch + tuple(B.shape[-2:]))
    return B.gather(-2, index.unsqueeze(-1).expand(B.shape))


def _permutation(piv, m, dtype, device):
    """P (*, m, m) with A = P L U, from getrf's pivots (*, k)."""
    batch = tuple(piv.shape[:-1])
    return _permuted(piv, eye(m, dtype=dtype, device=device).expand(batch + (m, m)))


def lu(A, *, pivot=True, out=None):
    """torch.linalg.lu: (P, L, U) with A = P L U; L (*, m, k) unit lower, U (*, k, n) upper,
    k = min(m, n)."""
    fn = "linalg.lu"
    _no_out(fn, out)
    LU, piv, _ = _lu_factor(fn, A, pivot)
    m, n = A.shape[-2:]
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + eye(m, k, dtype=A.dtype, device=A.device)
    U = LU[..., :k, :].triu()
    return return_types.linalg_lu(_permutation(piv, m, A.dtype, A.device), L, U)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """torch.linalg.lu_solve: X with A X = B (X A = B where not `left`; A^H for `adjoint`)
    from lu_factor's (LU, pivots)."""
    fn = "linalg.lu_solve"
    _matrices(fn, LU, "LU")
    _matrices(fn, B, "B", square=False)
    _no_out(fn, out)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    _pair(fn, LU, B)
    pivots = pivots.to(dtypes.int64)
    if adjoint:  # A^T = U^T L^T P^T: solve with U^T, then L^T, then undo the swaps
        Y = solve_triangular(LU.mT, B, upper=False)
        Z = solve_triangular(LU.mT, Y, upper=True, unitriangular=True)
        return _permuted(pivots, Z)
    return _lu_solved(LU, pivots, B)


# -- solvers and inverse -------------------------------------------------------------------------
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """torch.linalg.solve_ex: (result, info) of solve, info the LU's."""
    fn = "torch.linalg.solve_ex"
    _no_out(fn, out)
    X, info = _solve(fn, A, B, left)
    if check_errors:
        _raise(fn, info, lambda k: _SINGULAR)
    return return_types.linalg_solve_ex(X, info.to(dtypes.int32))


def _solve(fn, A, B, left):
    _matrices(fn, A)
    if not isinstance(B, Tensor):
        raise TypeError(f"{fn}(): argument 'B' must be Tensor, not {type(B).__name__}")
    vector = _vector_case(A, B)
    if not left:
        if vector:
            raise RuntimeError(f"{fn}: Vector broadcasting of the left hand side is not "
                               f"supported for left=False. In this case linalg.solve is "
                               f"equivalent to B / A.squeeze(-1)")
        X, info = _solve(fn, A.mT, B.mT, True)
        return X.mT, info
    B2 = B.unsqueeze(-1) if vector else B
    if B2.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 1 dimensions.")
    _pair(fn.replace("torch.", ""), A, B2)
    LU, piv, info = _factored(A)
    X = _lu_solved(LU, piv, B2)
    return (X.squeeze(-1) if vector else X), info


def solve(A, B, *, left=True, out=None):
    """torch.linalg.solve: X with A X = B (X A = B where not `left`) by LU with partial
    pivoting; B (*, n) is read as vectors where torch does (see _vector_case)."""
    fn = "torch.linalg.solve"
    X, info = _solve(fn, A, B, left)
    _raise(fn, info, lambda k: _SINGULAR)
    return write_out(fn, out, X, exact=True)


def inv_ex(A, *, check_errors=False, out=None):
    """torch.linalg.inv_ex: (inverse, info)."""
    fn = "linalg.inv_ex"
    _matrices(fn, A)
    _no_out(fn, out)
    LU, piv, info = _factored(A)
    n = A.shape[-1]
    X = _lu_solved(LU, piv, eye(n, dtype=A.dtype, device=A.device).expand(A.shape))
    if check_errors:
        _raise(fn, info, _singular_inverse)
    return return_types.linalg_inv_ex(X, info.to(dtypes.int32))


def _singular_inverse(k):
    return (f"The diagonal element {k} is zero, the inversion could not be completed because "
            f"the input matrix is singular.")


def inv(A, *, out=None):
    """torch.linalg.inv: A^-1 by LU with partial pivoting; a singular A raises."""
    fn = "linalg.inv"
    _matrices(fn, A)
    LU, piv, info = _factored(A)
    _raise(fn, info, _singular_inverse)
    n = A.shape[-1]
    X = _lu_solved(LU, piv, eye(n, dtype=A.dtype, device=A.device).expand(A.shape))
    return write_out(fn, out, X, exact=True)


def inverse(input, *, out=None):
    """torch.inverse: linalg.inv."""
    return inv(input, out=out)


# -- determinants --------------------------------------------------------------------------------


def _product(d):
    """The product over the last dim (complex: column by column, as `prod` takes no complex
    input)."""
    if not d.is_complex():
        return d.prod(-1)
    total = ones(d.shape[:-1], dtype=d.dtype, device=d.device)
    for k in range(d.shape[-1]):
        total = total * d[..., k]
    return total


def _lu_diagonal(A):
    """(U's diagonal, the sign of the row swaps' permutation) of A's LU: det(A) is their
    product."""
    LU, piv, _ = _factored(A)
    swaps = (piv != arange(1, A.shape[-1] + 1, device=A.device)).sum(-1)
    return LU.diagonal(0, -2, -1), (1 - 2 * (swaps % 2)).to(A.dtype)


def det(A, *, out=None):
    """torch.linalg.det: the product of U's diagonal, signed by the swaps (0 when singular)."""
    fn = "linalg.det"
    _matrices(fn, A)
    d, parity = _lu_diagonal(A)
    return write_out(fn, out, _product(d) * parity, exact=True)


def slogdet(A, *, out=None):
    """torch.linalg.slogdet: (sign, log|det|); sign 0 and -inf for a singular A."""
    fn = "linalg.slogdet"
    _no_out(fn, out)
    _matrices(fn, A)
    d, parity = _lu_diagonal(A)
    return return_types.linalg_slogdet(_product(d.sgn()) * parity, d.abs().log().sum(-1))


def logdet(input):
    """torch.logdet: log(det), NaN where det < 0, -inf where it is 0 (of a complex matrix,
    the complex logarithm)."""
    sign, logabs = slogdet(input)
    if sign.is_complex():
        return logabs + sign.log()
    return where(sign < 0, float("nan"), logabs)


# -- Cholesky and triangular solves --------------------------------------------------------------
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """torch.linalg.cholesky_ex: (L, info); L from A's lower triangle (U = L^T from the upper
    one where `upper`), info 0 or the order of the first leading minor that is not
    positive-definite."""
    fn = "linalg.cholesky_ex"
    _matrices(fn, A)
    _no_out(fn, out)
    L, info = _cholesky(A, upper)
    if check_errors:
        _raise(fn, info, _not_definite)
    return return_types.linalg_cholesky_ex(L, info.to(dtypes.int32))


def _cholesky(A, upper):
    batch = tuple(A.shape[:-2])
    # upper: U^H U = A, U^H the lower factor of A^H (A's upper triangle, conjugate transposed)
    L, a = _own(A.mH if upper else A, tuple(A.shape))
    info = _info(batch, A._device)
    backend(A._device).factor.cholesky(a, info._data.reshape(-1))
    return (L.mH if upper else L), info


def _not_definite(k):
    return (f"The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite).")


def cholesky(A, *, upper=False, out=None):
    """torch.linalg.cholesky: L lower with A = L L^H (U = L^H where `upper`); A must be
    symmetric (Hermitian) positive-definite (only one triangle is read), else LinAlgError."""
    fn = "linalg.cholesky"
    _matrices(fn, A)
    L, info = _cholesky(A, upper)
    _raise(fn, info, _not_definite)
    return write_out(fn, out, L, exact=True)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """torch.linalg.solve_triangular: X with T X = B (X T = B where not `left`), T the upper or
    lower triangle of A (with ones on its diagonal where `unitriangular`)."""
    fn = "linalg.solve_triangular"
    _matrices(fn, A)
    _matrices(fn, B, "B", square=False)
    if not left:  # X T = B  <=>  T^T X^T = B^T
        return write_out(fn, out, solve_triangular(A.mT, B.mT, upper=not upper,
                                                   unitriangular=unitriangular).mT, exact=True)
    _pair(fn, A, B)
    batch = broadcast_shapes(A.shape[:-2], B.shape[:-2])
    n = A.shape[-1]
    T = A.expand(batch + (n, n)).contiguous()
    X, b = _own(B, batch + tuple(B.shape[-2:]))
    backend(B._device).factor.triangular(T._data.reshape(b.shape[0], n, n), b, bool(upper),
                                         bool(unitriangular))
    return write_out(fn, out, X, exact=True)


def cholesky_solve(B, L, upper=False, *, out=None):
    """torch.cholesky_solve: X with A X = B from A's Cholesky factor L (U where `upper`)."""
    fn = "cholesky_solve"
    _matrices(fn, L, "L")
    _matrices(fn, B, "B", square=False)
    if upper:
        X = solve_triangular(L, solve_triangular(L.mH, B, upper=False), upper=True)
    else:
        X = solve_triangular(L.mH, solve_triangular(L, B, upper=False), upper=True)
    return write_out(fn, out, X)  # (torch's out= here takes any dtype X casts into)


def cholesky_inverse(L, upper=False, *, out=None):
    """torch.cholesky_inverse: A^-1 from A's Cholesky factor L (U where `upper`)."""
    _matrices("cholesky_inverse", L, "L")
    n = L.shape[-1]
    return cholesky_solve(eye(n, dtype=L.dtype, device=L.device).expand(L.shape), L, upper,
                          out=out)


# -- QR and the symmetric eigenproblem -----------------------------------------------------------
def linalg_qr(A, mode="reduced", *, out=None):
    """torch.linalg.qr: (Q, R) with A = Q R by Householder reflections (LAPACK's geqrf/orgqr,
    so R's diagonal has LAPACK's signs, as torch's). k = min(m, n); 'reduced': Q (*, m, k), R
    (*, k, n); 'complete': Q (*, m, m), R (*, m, n); 'r': R only (Q empty)."""
    fn = "linalg.qr"
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    _matrices(fn, A, square=False)
    m, n = A.shape[-2:]
    k, batch = min(m, n), tuple(A.shape[:-2])
    t = math.prod(batch)
    F, a = _own(A, tuple(A.shape))
    tau = allocate(batch + (k,), A._dtype, A._device)
    columns = {"reduced": k, "complete": m, "r": 0}[mode]
    Q = allocate(batch + (m, columns), A._dtype, A._device)
    backend(A._device).factor.qr(a, tau._data.reshape(t, k), Q._data.reshape(t, m, columns))
    R = F[..., :m if mode == "complete" else k, :].triu()
    if mode == "r":
        Q = allocate((0,), A._dtype, A._device)
    return write_pair(fn, out, (Q, R), return_types.linalg_qr, "tuple of Tensors",
                      fn.replace(".", "_"))


def qr(input, some=True, *, out=None):
    """torch.qr: linalg.qr in mode 'reduced' (`some`) or 'complete'."""
    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return write_pair("qr", out, (Q, R), return_types.qr, "tuple of Tensors")


def _symmetric(fn, A, UPLO):
    """A's triangle `UPLO` mirrored into a full symmetric (Hermitian) matrix (torch reads only
    that one)."""
    _matrices(fn, A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if UPLO == "L":
        return A.tril() + A.tril(-1).mH
    return A.triu() + A.triu(1).mH


def eigh(A, UPLO="L", *, out=None):
    """torch.linalg.eigh: (eigenvalues ascending (*, n), eigenvectors as columns (*, n, n)) of
    the symmetric matrices whose `UPLO` triangle A holds, by cyclic Jacobi rotations (scalar
    kernel, both devices) or LAPACK's syevd: eigenvalues as accurate as LAPACK's, eigenvectors
    up to sign. Complex Hermitian ones by LAPACK's heevd (the CPU's), eigenvectors up to a
    phase: real eigenvalues."""
    fn = "linalg.eigh"
    S = _symmetric(fn, A, UPLO)
    n, batch = A.shape[-1], tuple(A.shape[:-2])
    S, a = _own(S, tuple(S.shape))
    V = allocate(tuple(A.shape), A._dtype, A._device)
    w = allocate(batch + (n,), A._dtype.to_real(), A._device)
    t = math.prod(batch)
    backend(A._device).factor.eigh(a, V._data.reshape(t, n, n), w._data.reshape(t, n))
    return write_pair(fn, out, (w, V), return_types.linalg_eigh, "tuple of Tensors",
                      fn.replace(".", "_"))


def _general_eigen(fn, A, vectors):
    """(eigenvalues, eigenvectors or None) of A's matrices by LAPACK's geev, complex."""
    _matrices(fn, A)
    if vectors and not bool(A.isfinite().all()):  # (torch's eigvals returns NaN instead)
        raise RuntimeError(f"torch.{fn}: input tensor should not contain infs or NaNs.")
    n, batch = A.shape[-1], tuple(A.shape[:-2])
    _, a = _own(A, tuple(A.shape))
    cdtype = A._dtype if A._dtype.is_complex else A._dtype.to_complex()
    w = allocate(batch + (n,), cdtype, A._device)
    V = allocate(tuple(A.shape), cdtype, A._device) if vectors else None
    t = math.prod(batch)
    info = backend(A._device).factor.eig(a, w._data.reshape(t, n),
                                         None if V is None else V._data.reshape(t, n, n))
    if info:
        raise LinAlgError(f"{fn}: The algorithm failed to converge because the input matrix is "
                          f"ill-conditioned or has too many repeated eigenvalues (error code: "
                          f"{info}).")
    return w, V


def eig(A, *, out=None):
    """torch.linalg.eig: (eigenvalues (*, n), eigenvectors as columns (*, n, n)) of square
    matrices, complex (LAPACK's geev: each eigenvector of unit norm with its largest component
    real; the order is geev's)."""
    fn = "linalg.eig"
    w, V = _general_eigen(fn, A, True)
    return write_pair(fn, out, (w, V), return_types.linalg_eig, "tuple of Tensors",
                      fn.replace(".", "_"))


def eigvals(A, *, out=None):
    """torch.linalg.eigvals: eig's eigenvalues, computed without the eigenvectors (as torch's
    when no gradient is needed), so they may differ from eig's in the last bits; the gradient
    computes the eigenvectors then."""
    return write_out("linalg.eigvals", out, _general_eigen("linalg.eigvals", A, False)[0],
                     exact=True)


def eigvalsh(A, UPLO="L", *, out=None):
    """torch.linalg.eigvalsh: eigh's eigenvalues (its gradient too)."""
    return write_out("linalg.eigvalsh", out, eigh(A, UPLO).eigenvalues, exact=True)


def _completed(U, S):
    """U (*, p, q) with orthonormal columns where S > 0 (zero columns where S is 0, last: S
    descends) completed to p orthonormal columns: Householder QR's Q agrees with U's leading
    columns up to R's diagonal signs, and its others span what U's leave out."""
    Q, R = linalg_qr(U, "complete")
    signs = R.diagonal(0, -2, -1).sgn()
    signs = where(signs == 0, 1.0, signs)
    pad = ones(tuple(signs.shape[:-1]) + (U.shape[-2] - U.shape[-1],), dtype=U._dtype,
               device=U._device)
    return Q * cat([signs, pad], -1).unsqueeze(-2)


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """torch.linalg.svd: (U, S, Vh) with A = U diag(S) Vh, S descending, by one-sided Jacobi
    (scalar kernel, both devices: accurate small singular values) or LAPACK's gesdd (large
    real ones, complex ones: CPU); the real vectors' signs are Jacobi's, not LAPACK's, complex
    ones are defined up to a phase. full_matrices: U (*, m, m), Vh (*, n, n), else k = min(m,
    n)."""
    fn = "linalg.svd"
    _matrices(fn, A, square=False)
    m, n = A.shape[-2:]
    wide = m < n
    B = A.mH if wide else A  # (A^H = U S V^H gives A = V S U^H)
    p, q = B.shape[-2:]
    batch = tuple(A.shape[:-2])
    t = math.prod(batch)
    U, u = _own(B, batch + (p, q))
    V = allocate(batch + (q, q), A._dtype, A._device)
    S = allocate(batch + (q,), A._dtype.to_real(), A._device)
    backend(A._device).factor.svd(u, V._data.reshape(t, q, q), S._data.reshape(t, q))
    if full_matrices and p > q or S.numel() and (S == 0).any().item():
        U = _completed(U, S)
        U = U if full_matrices else U[..., :q]
    U, Vh = (V, U.mH) if wide else (U, V.mH)
    result = (U.contiguous(), S, Vh.contiguous())
    if out is None:
        return return_types.linalg_svd(*result)
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        raise TypeError(f"linalg_svd(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    return return_types.linalg_svd(*(write_out(fn, o, r, exact=True)
                                     for o, r in zip(out, result, strict=False)))


def svdvals(A, *, driver=None, out=None):
    """torch.linalg.svdvals: svd's S (its gradient too)."""
    return write_out("linalg.svdvals", out, linalg_svd(A, False).S, exact=True)


# -- composed on svd and eigh: rank, pseudo-inverse, least squares ------------------------------
def _float_or_double(A):
    if not (A._dtype.is_floating_point or A._dtype.is_complex) or A._dtype in dtypes.NARROW:
        raise RuntimeError("This function doesn't handle types other than float and double")


def _tolerance(A, atol, rtol):
    """(atol, rtol) as float64 tensors on A's device, with torch's defaults: atol 0, rtol
    eps * max(m, n), or 0 where atol > 0 (torch's get_atol_rtol)."""
    _float_or_double(A)

    def as_tensor(x):
        x = x if isinstance(x, Tensor) else tensor(x, device=A.device)
        return x.to(device=A.device, dtype=dtypes.float64)
    eps = float(np.finfo(A._dtype.np).eps) * max(A.shape[-2:])
    atol_t = as_tensor(0.0 if atol is None else atol)
    if rtol is not None:
        return atol_t, as_tensor(rtol)
    return atol_t, as_tensor(eps if atol is None else where(atol_t > 0, 0.0, eps))


def _spectrum(A, hermitian, vectors):
    """(U, S, Vh) of svd (reduced), or for `hermitian` eigh's (V, w, V^T): A = U diag(S) Vh;
    with |S| the singular values (their largest, (*, 1), last)."""
    if hermitian:
        w, V = eigh(A) if vectors else (eigvalsh(A), None)
        return V, w, None if V is None else V.mH, w.abs().amax(-1, keepdim=True)
    if vectors:
        U, S, Vh = linalg_svd(A, full_matrices=False)
    else:
        U, S, Vh = None, svdvals(A), None
    return U, S, Vh, S[..., :1]


def _cutoff(atol, rtol, largest):
    """max(atol, rtol * largest): the singular values at or below it count as zero."""
    return maximum(atol.unsqueeze(-1), rtol.unsqueeze(-1) * largest.to(dtypes.float64))


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """torch.linalg.matrix_rank: the count of singular values (|eigenvalues| for `hermitian`)
    above max(atol, rtol * the largest); `tol` (torch's older form) is atol with rtol 0."""
    fn = "torch.linalg.matrix_rank"
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_matrix_rank(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of arguments: "
                            "tol with atol or rtol")
        atol, rtol = tol, 0.0
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor input must have at least 2 dimensions.")
    atol, rtol = _tolerance(A, atol, rtol)
    if A.numel() == 0:  # (no singular values, and no largest one)
        rank = allocate(tuple(A.shape[:-2]), dtypes.int64, A._device)
        rank.fill_(0)
    else:
        _, S, _, largest = _spectrum(A, hermitian, False)
        rank = (S.abs().to(dtypes.float64) > _cutoff(atol, rtol, largest)).sum(-1)
    return write_out(fn, out, rank)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """torch.linalg.pinv: V diag(1/S) U^H over the singular values above max(atol, rtol * the
    largest) (eigh's for `hermitian`: U diag(1/w) U^H over |w|); `rcond` (NumPy's) is rtol
    with atol 0. Differentiable through svd/eigh where the kept values are distinct."""
    fn = "linalg.pinv"
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_pinv(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    if A.ndim < 2 or not (A._dtype.is_floating_point or A._dtype.is_complex) or \
            A._dtype in dtypes.NARROW:
        raise RuntimeError(f"{fn}({A._dtype.scalar_name}{{{list(A.shape)}}}): expected a "
                           f"tensor with 2 or more dimensions of float, double, cfloat or "
                           f"cdouble types")
    if rcond is not None:
        atol, rtol = 0.0, rcond
    atol, rtol = _tolerance(A, atol, rtol)
    if A.numel() == 0:
        result = allocate(tuple(A.shape[:-2]) + (A.shape[-1], A.shape[-2]), A._dtype, A._device)
        return write_out(fn, out, result.fill_(0))
    U, S, Vh, largest = _spectrum(A, hermitian, True)
    kept = S.abs().to(dtypes.float64) > _cutoff(atol, rtol, largest)
    inverse_s = where(kept, S.reciprocal(), 0.0)
    return write_out(fn, out, matmul(Vh.mH * inverse_s.unsqueeze(-2).to(A._dtype), U.mH))


def pinverse(input, rcond=1e-15):
    """torch.pinverse: linalg.pinv with rtol `rcond`."""
    return pinv(input, rcond=rcond)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """torch.linalg.lstsq: (solution, residuals, rank, singular_values) of min ||A X - B||.
    The solution is the minimum-norm one, V diag(1/S) U^H B over the singular values above
    rcond (default eps * max(m, n)) times the largest, for every driver ('gels', for full-rank
    A, keeps them all); LAPACK's gelsy finds the rank by a pivoted QR instead, which agrees but
    where a singular value lies at the cutoff. Which fields hold values follows torch's CPU
    drivers (gelsy its default; on CUDA 'gels', as torch's): rank for gelsy/gelsd/gelss,
    singular values for gelsd/gelss, the squared residuals of each column (*, k) for m > n
    and gels, or gelsd/gelss where every A has full rank; the others are empty. B (*, m) with
    one dim fewer than A is a batch of vectors."""
    fn = "torch.linalg.lstsq"
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_lstsq(): argument 'self' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_lstsq(): argument 'b' (position 2) must be Tensor, not "
                        f"{type(B).__name__}")
    same_device(fn, A, B)
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError(f"{fn}: other must have at least 1 dimension.")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A._dtype.scalar_name} and other's dtype "
                           f"{B._dtype.scalar_name}")
    _float_or_double(A)
    vector = A.ndim - 1 == B.ndim
    if not vector and A.ndim != B.ndim:
        raise RuntimeError(f"{fn}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    if A.shape[-2] != B.shape[-1 if vector else -2]:
        raise RuntimeError(f"{fn}: input.size(-2) should match other.size("
                           f"{-1 if vector else -2})")
    if driver is None:
        driver = "gelsy" if A.device.type == "cpu" else "gels"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{fn}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    m, n = A.shape[-2:]
    if rcond is None or rcond < 0:  # (LAPACK reads a negative rcond as eps)
        rcond = float(np.finfo(A._dtype.np).eps) * (max(m, n) if rcond is None else 1)
    if vector:
        B = B.unsqueeze(-1)
    U, S, Vh, largest = _spectrum(A, False, True)
    if driver == "gels":  # (all of them: gels solves as though A had full rank)
        kept = S == S
    else:
        kept = S.to(dtypes.float64) > _cutoff(*_tolerance(A, 0.0, rcond), largest)
    rank = kept.sum(-1)
    inverse_s = where(kept, S.reciprocal(), 0.0)
    X = matmul(Vh.mH * inverse_s.unsqueeze(-2).to(A._dtype), matmul(U.mH, B))
    empty = allocate((0,), A._dtype.to_real(), A._device)
    residuals = empty
    if m > n and (driver == "gels" or driver in ("gelsd", "gelss")
                  and bool((rank == n).all().item())):
        residuals = (matmul(A, X) - B).abs().square().sum(-2)
    return return_types.linalg_lstsq(
        X.squeeze(-1) if vector else X, residuals,
        rank if driver != "gels" else allocate((0,), dtypes.int64, A._device),
        S.detach() if driver in ("gelsd", "gelss") else empty)  # (not differentiable: torch's)


TENSOR_METHODS = {"qr": qr, "det": det, "slogdet": slogdet, "logdet": logdet, "inverse": inverse,
                  "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
                  "pinverse": pinverse}
