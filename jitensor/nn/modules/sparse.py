"""Embedding: a lookup table over functional.embedding."""
from ...autograd import no_grad
from ...creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding"]


class Embedding(Module):
    """A lookup table: forward(input) gives the rows of weight (num_embeddings, embedding_dim)
    at the positions in input; weight is drawn from N(0, 1) with padding_idx's row zero, as in
    torch (see functional.embedding for max_norm and scale_grad_by_freq)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        if sparse:
            raise RuntimeError("Embedding(sparse=True) asks for sparse gradients, and jitensor "
                               "has no sparse tensors; use sparse=False")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = F._padding_index(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device,
                                          dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:  # (torch asserts)
                raise AssertionError(f"Shape of weight {list(_weight.shape)} does not match "
                                 f"num_embeddings and embedding_dim "
                                 f"{[num_embeddings, embedding_dim]}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        for name, default in (("padding_idx", None), ("max_norm", None), ("norm_type", 2.0),
                              ("scale_grad_by_freq", False), ("sparse", False)):
            value = getattr(self, name)
            if value != default:
                text += f", {name}={value}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is `embeddings` (2-D, used as is: no copy), frozen unless
        freeze=False."""
        if embeddings.ndim != 2:  # (torch asserts)
            raise AssertionError(f"Embeddings parameter is expected to be 2-dimensional, got "
                             f"{embeddings.ndim} dimension(s)")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)
