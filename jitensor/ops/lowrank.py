"""Randomised low-rank factorisations, as torch's _lowrank.py: svd_lowrank (Halko, Martinsson
and Tropp 2009, algorithms 4.4 and 5.1: a range finder by subspace iteration, then the SVD of
the small projected matrix) and pca_lowrank (svd_lowrank of the column-centred matrix).
Composed of matmul, linalg.qr and linalg.svd, so they run on every device and differentiate;
the Gaussian test matrix comes from jitensor's default generator (seeded runs repeat, the
values are not torch's)."""
import importlib

from .. import dtypes
from ..creation import randn
from ..tensor import Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]


def _linalg():
    return importlib.import_module("jitensor.linalg")


def _h(X):
    return X.transpose(-2, -1)  # (methods: the recording ops, where grad is on)


def matmul(X, Y):
    return X @ Y


def _floating_dtype(A):
    return A.dtype if A.dtype.is_floating_point else dtypes.float32


def _basis(A, q, niter, M):
    """An orthonormal (*, m, q) basis approximating the range of A - M."""
    qr = _linalg().qr
    R = randn(A.shape[-1], q, dtype=_floating_dtype(A), device=A.device)
    X = matmul(A, R)
    if M is not None:
        X = X - matmul(M, R)
    Q = qr(X).Q
    for _ in range(niter):
        X = matmul(_h(A), Q)
        if M is not None:
            X = X - matmul(_h(M), Q)
        Q = qr(X).Q
        X = matmul(A, Q)
        if M is not None:
            X = X - matmul(M, Q)
        Q = qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:
        A = _h(A)
        if M is not None:
            M = _h(M)
    Q = _basis(A, q, niter, M)
    B = matmul(_h(Q), A)
    if M is not None:
        B = B - matmul(_h(Q), M)
    U, S, Vh = _linalg().svd(B, full_matrices=False)
    V = _h(Vh)
    U = matmul(Q, U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """torch.svd_lowrank: (U, S, V), A - M ~ U diag(S) V^T of rank q (q <= min(m, n); 6 by
    default), after `niter` subspace iterations."""
    if not isinstance(A, Tensor):
        raise TypeError(f"svd_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """torch.pca_lowrank: svd_lowrank of A less its column means (`center`), q = min(6, m, n)
    by default."""
    if not isinstance(A, Tensor):
        raise ValueError(f"input is expected to be a tensor, but got {type(A)}")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
