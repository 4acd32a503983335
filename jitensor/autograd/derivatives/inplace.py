"""The ops only autograd defines, what in-place writes record: index_put (`t[key] = value`),
copied (`copy_`) and filled (`fill_`, `zero_`), with their rules."""
from ... import creation
from ...ops import indexing, shape
from ...tensor import Tensor
from ._common import _zero, rule


def index_put(input, key, value):
    """`input` with `input[key] = value` applied to a copy: what `t[key] = value` records."""
    out = input.clone()
    indexing.setitem(out, key, value)
    return out


@rule("index_put", uses_inputs=False, uses_result=False)
def _index_put(g, result, input, key, value, accumulate=False):
    # (also the rule of ops/scatter.py's index_put, whose values add up with accumulate)
    if accumulate:
        return (input, g), (value, g[key])
    grad = g.clone()
    grad[key] = 0
    return (input, grad), (value, g[key])


@rule("copied", "filled", uses_inputs=False, uses_result=False)
def _copied(g, result, self, src, non_blocking=False):
    return (src, g), (self, _zero(g))  # self's old values are gone: its history gets zeros


def copied(self, src, non_blocking=False):
    """What `self.copy_(src)` records: src converted and broadcast to self's shape."""
    if not isinstance(src, Tensor):
        src = creation.tensor(src, dtype=self.dtype, device=self.device)
    return shape.expand(src.to(self.device, self.dtype), self.shape).clone()


def filled(self, value):
    """What `self.fill_(value)` records: value (a number or 0-d tensor) in self's shape."""
    return copied(self, value)
