"""Scaled dot-product attention as one op, `flash_attention`: softmax(q k^T * scale) v over the
last two dims, causal or not, without a mask or dropout, in one kernel each way where the device
has one (kernels/cpu/attention.py; rule in autograd/derivatives/attention.py).
nn.functional.scaled_dot_product_attention takes it when it can (`fused`), else composes the
same formulas from ops, as `composed` here does for the rule's recorded backward."""
import functools
import math

import numpy as np

from .. import dtypes
from ..creation import allocate, tensor
from ..kernels.registry import backend
from . import indexing, linalg, reduction
from ._common import dense

TENSOR_METHODS = {}


def fused(query, key, value):
    """Whether flash_attention serves these operands: a device with the kernels, one float32 or
    float64 dtype, the same batch dims (no broadcasting) and no empty dim."""
    kernels = getattr(backend(query._device), "attention", None)
    if kernels is None or not kernels.AVAILABLE:
        return False
    shapes = (query.shape, key.shape, value.shape)
    return query._dtype in (dtypes.float32, dtypes.float64) and \
        query._dtype is key._dtype is value._dtype and \
        query._device is key._device is value._device and \
        all(len(s) >= 2 for s in shapes) and query.shape[:-2] == key.shape[:-2] == \
        value.shape[:-2] and key.shape[-2] == value.shape[-2] and \
        query.shape[-1] == key.shape[-1] and all(n > 0 for s in shapes for n in s)


def _stack(t):
    """t's buffer as the kernels read a stack of heads: itself where it is 3-D or 4-D with a
    unit-stride last dim and no negative stride (a transformer's q, k, v, views of its (B, L,
    3 H E) projection, are read in place) and rows that do not overlap, else a C-contiguous
    (heads, rows, features) copy."""
    data = t._data
    if data.ndim == 2:
        data = data[None]
    if data.ndim in (3, 4) and data.strides[-1] == data.itemsize and min(data.strides) >= 0 \
            and (data.shape[-2] == 1 or data.strides[-2] >= data.itemsize * data.shape[-1]):
        return data
    data = dense(t)
    return data.reshape(math.prod(data.shape[:-2]), data.shape[-2], data.shape[-1])


def _like(t, shape=None):
    """A new tensor of t's shape (or `shape`, which differs in the last dim) in t's layout as
    torch's attention lays out its output: (B, L, H, E) in memory, seen as (B, H, L, E), for a
    4-D t whose heads lie closer in memory than its rows; else C-contiguous."""
    shape = tuple(t.shape) if shape is None else shape
    data = t._data
    if data.ndim == 4 and data.strides[1] < data.strides[2]:
        b, h, n, e = shape
        return allocate((b, n, h, e), t._dtype, t._device).transpose(1, 2)
    return allocate(shape, t._dtype, t._device)


def log_sum_exp(query):
    """The buffer flash_attention writes each query row's log-sum-exp into, for its backward."""
    return allocate(query.shape[:-1], query._dtype, query._device)


def flash_attention(query, key, value, scale, is_causal, lse):
    """softmax(query @ key^T * scale) @ value over (..., L, E), (..., S, E), (..., S, Ev); with
    is_causal, key j is hidden from query i when j > i. `lse` (log_sum_exp) receives each row's
    log-sum-exp."""
    out = _like(query, (*query.shape[:-1], value.shape[-1]))
    backend(query._device).attention.forward(
        _stack(query), _stack(key), _stack(value), _stack(out),
        lse._data.reshape(-1, query.shape[-2]), scale, is_causal)
    return out


def flash_attention_grad(g, out, query, key, value, scale, is_causal, lse):
    """(d query, d key, d value) of flash_attention's result `out` for its gradient g."""
    grads = [_like(t) for t in (query, key, value)]
    backend(query._device).attention.backward(
        _stack(query), _stack(key), _stack(value), _stack(out),
        lse._data.reshape(-1, query.shape[-2]), _stack(g.to(query._dtype)),
        *(_stack(t) for t in grads), scale, is_causal)
    return grads


@functools.lru_cache(maxsize=64)
def above_diagonal(length, source, device):
    """The (length, source) bool mask of the positions a causal attention hides, j > i (built
    once per shape and device: as ones().tril().logical_not() it cost more than the attention's
    products). Only read, never handed out."""
    return tensor(np.triu(np.ones((length, source), bool), 1), device=device)


def composed(query, key, value, scale, is_causal):
    """flash_attention's result composed from ops (torch's math path): differentiable on every
    device and to any order."""
    weight = linalg.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        hidden = above_diagonal(query.shape[-2], key.shape[-2], query._device)
        weight = indexing.masked_fill(weight, hidden, -math.inf)
    return linalg.matmul(reduction.softmax(weight, -1), value)
