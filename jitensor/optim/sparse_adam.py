"""SparseAdam: torch's Adam for sparse gradients (embeddings), which refuses dense ones. jitensor
has no sparse tensors, so no gradient could ever reach it: the constructor says so."""
from .optimizer import Optimizer


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        raise NotImplementedError(
            "SparseAdam updates from sparse gradients only, and jitensor has no sparse tensors; "
            "use Adam (or AdamW), its counterpart for dense gradients")
