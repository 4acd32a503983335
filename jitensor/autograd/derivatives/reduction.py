"""The rules of ops/reduction.py's ops."""
import math

from ... import creation
from ...ops import elementwise, reduction, shape
from ...tensor import Tensor
from ._common import _count, _dims, _pass, _unreduce, _zero, rule
from .elementwise import _extremum


@rule("sum", uses_inputs=False, uses_result=False)
def _sum(g, result, input, dim=None, keepdim=False, *, dtype=None, out=None):
    return ((input, shape.expand(_unreduce(g, input, dim, keepdim), input.shape)),)


@rule("mean", uses_inputs=False, uses_result=False)
def _mean(g, result, input, dim=None, keepdim=False, *, dtype=None, out=None):
    g = _unreduce(g, input, dim, keepdim) / _count(input, dim)
    return ((input, shape.expand(g, input.shape)),)


@rule("prod")
def _prod(g, result, input, dim=None, keepdim=False, *, dtype=None, out=None):
    g, p = _unreduce(g, input, dim, keepdim), _unreduce(result, input, dim, keepdim)
    # the product of the others: result / x where x != 0; where x is the slice's only zero, the
    # product of the slice's other elements; with two zeros or more, 0
    zero = input == 0
    over = {} if dim is None else {"dim": dim, "keepdim": True}
    zeros = reduction.sum(zero, **over)
    others = reduction.prod(elementwise.where(zero, 1.0, input), **over)
    d = elementwise.where(zero, elementwise.where(zeros == 1, others, 0.0),
                          p / elementwise.where(zero, 1.0, input))
    return ((input, g * d),)


@rule("amax", "amin")
def _amax(g, result, input, dim=(), keepdim=False, *, out=None):
    hit = input == _unreduce(result, input, dim, keepdim)  # ties share the gradient evenly
    dims = _dims(dim, input.ndim) if input.ndim else None
    ties = reduction.sum(hit, dim=dims, keepdim=True) if dims else 1
    return ((input, _pass(hit, _unreduce(g, input, dim, keepdim) / ties)),)


@rule("norm")
def _norm(g, result, input, p="fro", dim=None, keepdim=False, dtype=None):
    x = input if dtype is None else input.to(dtype)  # (the engine converts the gradient back)
    p = 2 if p == "fro" else p
    norm, g = _unreduce(result, x, dim, keepdim), _unreduce(g, x, dim, keepdim)
    if p == 0:
        return ((input, _zero(x)),)
    if p == 1:
        return ((input, g * elementwise.sign(x)),)
    if p == math.inf or p == -math.inf:  # ties share the gradient evenly, as in amax
        hit = x.abs() == norm
        ties = reduction.sum(hit, dim=_dims(dim, x.ndim), keepdim=True) if x.ndim else 1
        return ((input, _pass(hit, g * elementwise.sign(x) / ties)),)
    if p == 2:
        return ((input, _pass(norm != 0, g * x / norm)),)  # a zero norm: 0, as in torch
    # (zero elements get 0, as in torch: |x| ** (p - 1) is infinite there for p < 1)
    return ((input, _pass(x != 0, g * elementwise.sign(x) * x.abs() ** (p - 1) / norm ** (p - 1))),)


def _max(larger):
    def max_rule(g, result, input, dim=None, keepdim=False, *, out=None, other=None):
        if other is not None or isinstance(dim, Tensor):  # the binary form: maximum
            return _extremum(larger)(g, result, input, dim if other is None else other)
        return _max_along(g, result, input, dim, keepdim)
    return max_rule


rule("max")(_max(True))
rule("min")(_max(False))


def _max_along(g, result, input, dim, keepdim):
    if dim is None:
        return _amax(g, result, input)
    values, indices = result
    g = g[0]
    if g is None:
        return ()
    d = dim % input.ndim if input.ndim else 0
    g, idx = _unreduce(g, input, d, keepdim), _unreduce(indices, input, d, keepdim)
    size = [1] * input.ndim
    if input.ndim:
        size[d] = input.shape[d]
    span = creation.arange(input.shape[d] if input.ndim else 1, device=input.device).reshape(size)
    return ((input, _pass(span == idx, g)),)


def _correction(unbiased, correction):
    return correction if correction is not None else 0 if unbiased is False else 1


@rule("var", uses_result=False)
def _var(g, result, input, dim=None, unbiased=None, keepdim=False, *, correction=None,
         out=None):
    n = _count(input, dim) - _correction(unbiased, correction)
    centred = input - reduction.mean(input, dim=_dims(dim, input.ndim), keepdim=True)
    return ((input, _unreduce(g, input, dim, keepdim) * centred * (2.0 / n)),)


@rule("std")
def _std(g, result, input, dim=None, unbiased=None, keepdim=False, *, correction=None,
         out=None):
    n = _count(input, dim) - _correction(unbiased, correction)
    centred = input - reduction.mean(input, dim=_dims(dim, input.ndim), keepdim=True)
    scale = _unreduce(g / result, input, dim, keepdim) / n
    return ((input, centred * scale),)


@rule("logsumexp")
def _logsumexp(g, result, input, dim, keepdim=False, *, out=None):
    lse = _unreduce(result, input, dim, keepdim)
    return ((input, _unreduce(g, input, dim, keepdim) * elementwise.exp(input - lse)),)


@rule("softmax", uses_inputs=False)
def _softmax(g, result, input, dim, dtype=None):
    return ((input, reduction.softmax_backward(g, result, dim)),)


@rule("log_softmax", uses_inputs=False)
def _log_softmax(g, result, input, dim, dtype=None):
    return ((input, reduction.softmax_backward(g, result, dim, log=True)),)


@rule("cumsum", uses_inputs=False, uses_result=False)
def _cumsum(g, result, input, dim, *, dtype=None, out=None):
    return ((input, shape.flip(reduction.cumsum(shape.flip(g, [dim]), dim), [dim])),)
