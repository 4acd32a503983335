"""torch.linalg: the factorisations and solvers of ops/factor.py (LU with partial pivoting,
Cholesky, triangular solves, Householder QR, the symmetric eigenproblem by Jacobi rotations;
their kernels are jitensor's own, on both devices; the general eigenproblem, eig and eigvals,
is LAPACK's geev on the CPU, as torch's) and the norms and products composed from other ops."""
import math

from . import dtypes
from .creation import zeros
from .ops._common import dim as _dim
from .ops._common import write_out
from .ops.elementwise import where
from .ops.factor import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    det,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_rank,
    pinv,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
    svdvals,
)
from .ops.factor import linalg_qr as qr
from .ops.factor import linalg_svd as svd
from .ops.householder import orgqr as householder_product
from .ops.linalg import cross as _cross
from .ops.linalg import matmul
from .ops.matrix import diagonal as _diagonal
from .ops.matrix_function import matrix_exp
from .ops.reduction import amax, amin
from .ops.reduction import norm as _norm
from .ops.statistics import vander as _vander
from .tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "lstsq", "lu",
           "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv",
           "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
           "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


def _floating(fn, x, dtype):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{x.dtype.scalar_name}")
    return x


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.vector_norm: (sum |x|^ord)^(1/ord) over `dim` (all dims by default);
    ord inf / -inf: the largest / smallest |x|, 0: the count of non-zeros."""
    fn = "linalg.vector_norm"
    if isinstance(x, Tensor) and x.is_complex():  # the norms of the moduli
        x = x.abs()
    x = _floating(fn, x, dtype)
    if isinstance(ord, (str, bool)) or not isinstance(ord, (int, float)):
        raise RuntimeError(f"{fn}: ord must be a number, got {ord!r}")
    if x.numel() == 0 and (ord < 0 or ord == math.inf):  # (these norms reduce by min or max)
        name = int(ord) if math.isfinite(ord) and ord == int(ord) else ord  # torch's -1, not -1.0
        if dim is None:
            raise RuntimeError(f"{fn} cannot compute the {name} norm on an empty tensor because "
                               f"the operation does not have an identity")
        for d in (dim,) if isinstance(dim, int) else dim:
            if x.shape[_dim(d, x.ndim, fn)] == 0:  # (torch's message, its missing space too)
                raise RuntimeError(f"{fn} cannot compute the {name} norm on the dimension {d}"
                                   f"because this dimension is empty and the operation does not "
                                   f"have an identity")
    return write_out(fn, out, _norm(x, ord, dim, keepdim), exact=True)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """torch.linalg.matrix_norm over the two dims `dim`: 'fro', or ord 1 / -1 (the largest /
    smallest column sum of |A|), inf / -inf (row sums), 2 / -2 (the largest / smallest
    singular value), 'nuc' (their sum)."""
    fn = "linalg.matrix_norm"
    if isinstance(A, Tensor) and A.is_complex() and (dtype is None or dtype.is_complex) and \
            ord in (2, -2, "nuc"):  # (the singular values of the complex matrices)
        A = A if dtype is None else A.to(dtype)
    else:
        if isinstance(A, Tensor) and A.is_complex():
            A = A.abs()  # the other norms are those of the moduli
        A = _floating(fn, A, dtype)
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    dim = tuple(_dim(d, A.ndim, fn) for d in dim)
    if dim[0] == dim[1]:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return write_out(fn, out, _norm(A, 2, dim, keepdim), exact=True)
    if ord in (2, -2, "nuc"):
        sv = svdvals(A.movedim(dim, (-2, -1)))
        result = sv.sum(-1) if ord == "nuc" else (amax if ord == 2 else amin)(sv, -1)
        for d in sorted(dim) if keepdim else ():
            result = result.unsqueeze(d)
        return write_out(fn, out, result, exact=True)
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"{fn}: Order {ord} not supported.")
    summed, kept = (dim[0], dim[1]) if abs(ord) == 1 else (dim[1], dim[0])
    sums = A.abs().sum(summed, keepdim=True)
    result = (amax if ord > 0 else amin)(sums, kept, keepdim=True)
    return write_out(fn, out, result if keepdim else result.squeeze(dim), exact=True)


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """torch.linalg.norm: a matrix norm for a string `ord`, or a number with two dims (or a
    2-D A and no dim); else a vector norm (ord None: the 2-norm, of A flattened without dim)."""
    fn = "linalg.norm"
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"{fn}: If dim is specified, it must be of length 1 or 2. Got "
                               f"{list(dim)}")
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError(f"{fn}: If dim is not specified but ord is, the input must be 1D or "
                           f"2D. Got {A.ndim}D.")
    if isinstance(ord, str) or ord is not None and (A.ndim if dim is None else len(dim)) == 2:
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype,
                           out=out)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


def cond(A, p=None, *, out=None):
    """torch.linalg.cond: ||A|| ||A^-1|| in the norm `p`; None, 2 and -2 from the singular
    values (s_max / s_min, s_min / s_max: any shape), 'nuc' likewise, 1, -1, inf, -inf and
    'fro' of the inverse (square A; a singular one gives inf). Empty matrices give 0."""
    fn = "linalg.cond"
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor must have at least 2 dimensions.")
    p = 2 if p is None else p
    if not (p in ("fro", "nuc") or not isinstance(p, str) and abs(p) in (1, 2, math.inf)):
        raise RuntimeError(f"{fn} got an invalid norm type: {p}")
    if p not in (2, -2):
        if A.shape[-1] != A.shape[-2]:  # (torch's name of p: C's to_string of a double)
            name = p if isinstance(p, str) or not isinstance(p, float) or math.isinf(p) \
                else f"{p:f}"
            raise RuntimeError(f"{fn}(ord={name}): A must be batches of square matrices, but "
                               f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if A.numel() == 0:
        result = zeros(tuple(A.shape[:-2]), dtype=A.dtype, device=A.device)
    elif p in (2, -2):
        s = svdvals(A)
        result = s[..., 0] / s[..., -1] if p == 2 else s[..., -1] / s[..., 0]
    elif p == "nuc":  # (matrix_norm's "nuc" of an inverse with inf in it would raise)
        s = svdvals(A)
        result = s.sum(-1) * s.reciprocal().sum(-1)
    else:
        if not A.dtype.is_floating_point:  # (torch's check, in inv's name)
            raise RuntimeError(f"linalg.inv: Expected a floating point or complex tensor as "
                               f"input. Got {A.dtype.scalar_name}")
        inverse, info = inv_ex(A)
        inverse = where((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf, inverse)
        result = (matrix_norm(A, p) * matrix_norm(inverse, p)).nan_to_num(math.inf, math.inf)
    return write_out(fn, out, result)


def matrix_power(A, n, *, out=None):
    """torch.linalg.matrix_power: A^n by repeated squaring (n < 0: of inv(A))."""
    fn = "linalg.matrix_power"
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1]} matrices")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{fn}(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        from .creation import eye
        return write_out(fn, out, eye(A.shape[-1], dtype=A.dtype, device=A.device)
                         .expand(A.shape).clone(), exact=True)
    base, result = (inv(A) if n < 0 else A), None
    n = abs(n)
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return write_out(fn, out, result, exact=True)


def multi_dot(tensors, *, out=None):
    """torch.linalg.multi_dot: the product of the matrices in order, parenthesised for the
    fewest multiply-adds; the first (last) may be a vector, read as a row (column)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    if first:
        tensors[0] = tensors[0].unsqueeze(0)
    if last:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i, t in enumerate(tensors):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    dims = [tensors[0].shape[0]] + [t.shape[1] for t in tensors]
    k = len(tensors)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):  # the matrix-chain order, by dynamic programming
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def product(i, j):
        return tensors[i] if i == j else matmul(product(i, split[i][j]),
                                                product(split[i][j] + 1, j))
    result = product(0, k - 1)
    if first:
        result = result.squeeze(0)
    if last:
        result = result.squeeze(-1)
    return write_out("multi_dot", out, result, exact=True)


def vecdot(x, y, *, dim=-1, out=None):
    """torch.linalg.vecdot: the dot products of x and y along `dim` (broadcast)."""
    return write_out("linalg.vecdot", out, (x * y).sum(dim), exact=True)


def cross(input, other, *, dim=-1, out=None):
    """torch.linalg.cross: the cross product along `dim` (default -1, unlike torch.cross)."""
    return _cross(input, other, dim=dim, out=out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal: torch.diagonal with the last two dims by default."""
    return _diagonal(A, offset, dim1, dim2)


def _square(rows, cols, what):
    """torch's error when A's two sides, as a matrix, hold different numbers of elements."""
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[{what}:]) "
                           f"== prod(self.shape[:{what}]), but got {cols} != {rows}")


def tensorinv(A, ind=2, *, out=None):
    """torch.linalg.tensorinv: X with tensordot(A, X, ind) the identity, shaped
    A.shape[ind:] + A.shape[:ind] (A's first `ind` dims against the rest, as a square matrix)."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    m = math.prod(A.shape[:ind])
    _square(m, math.prod(A.shape[ind:]), "ind")
    result = inv(A.reshape(m, m)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))
    return write_out("linalg.tensorinv", out, result, exact=True)


def tensorsolve(A, B, dims=None, *, out=None):
    """torch.linalg.tensorsolve: X (shaped A.shape[B.ndim:]) with tensordot(A, X, X.ndim) == B;
    `dims` of A are moved to its end first."""
    if dims is not None:
        A = A.movedim(tuple(dims), tuple(range(A.ndim - len(dims), A.ndim)))
    m = B.numel()
    _square(m, math.prod(A.shape[B.ndim:]), "other.ndim")
    result = solve(A.reshape(m, m), B.reshape(m)).reshape(tuple(A.shape[B.ndim:]))
    return write_out("linalg.tensorsolve", out, result, exact=True)


def vander(x, *, N=None):
    """torch.linalg.vander: x (*, n) to (*, n, N), the columns x^0, x^1, ..., x^(N-1) (N = n
    by default, and more than 1); integers give int64. torch.vander(increasing=True) of each
    row: a batch is one long row to it."""
    if x.dtype in (dtypes.bool_, *dtypes.NARROW):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {x.dtype.scalar_name}")
    shape = tuple(x.shape) or (1,)  # (a 0-d x is one value)
    N = shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _vander(x.reshape(-1), N, increasing=True).reshape(shape + (N,))
