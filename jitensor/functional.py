"""torch.functional: the module torch defines these top-level functions in. They are the same
objects as jitensor's top level."""
from . import (  # (loaded on first use, after the top level is complete)
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    istft,
    lu,
    meshgrid,
    norm,
    pca_lowrank,
    split,
    stft,
    svd_lowrank,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
           "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot", "unique",
           "unique_consecutive", "unravel_index"]
