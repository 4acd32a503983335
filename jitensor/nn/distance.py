"""Distances: pdist (the distances between the rows of a matrix, composed from its row pairs),
and the modules over functional's cosine_similarity and pairwise_distance."""
import math

from ..ops.matrix import triu_indices
from ..tensor import Tensor
from . import functional as F
from .module import Module

FUNCTIONS = ["pdist"]  # re-exported by nn.functional
__all__ = ["CosineSimilarity", "PairwiseDistance"]


def pdist(input, p=2):
    """The p-norm distances ||x_i - x_j||_p between rows i < j of the (N, M) input, in the
    order of torch's (row 0 against 1, ..., N-1, then row 1 against 2, ...): N (N - 1) / 2 of
    them. As torch's, the gradient of p = inf goes in full to every difference that reaches the
    maximum (the norm's own splits it between ties), and a zero distance passes none."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pdist(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype.name}; "
                           f"convert the input with .float()")
    if not p >= 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    n = input.shape[0]
    rows, cols = triu_indices(n, n, 1, device=input.device)
    diff = input[rows] - input[cols]
    if input.shape[1] == 0:
        return diff.sum(1)  # (rows of nothing are 0 apart for every p; amax would refuse them)
    if p != math.inf:
        return diff.norm(p, 1)
    size = diff.abs()
    top = size.amax(1, keepdim=True).detach()
    # top plus zeros whose gradient is sign(diff) at each maximal difference
    return (top + ((size - top) * (size == top)).sum(1, keepdim=True)).squeeze(1)


class PairwiseDistance(Module):
    """F.pairwise_distance: ||x1 - x2 + eps||_p along the last dim (p is stored as `norm`, as
    in torch)."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """F.cosine_similarity along `dim`."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
