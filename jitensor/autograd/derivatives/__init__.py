"""The derivative rule of every differentiable op (wrap.py installs them on the ops).

A rule is called as `rule(grad, result, *args, **kwargs)` with the op's own arguments (and the
op's result when the rule is registered with uses_result, else None) and returns
`(input, gradient)` pairs (see graph.py). Rules are built from the public ops, so
backward runs the same @njit/@cuda.jit kernels as forward, on the tensors' own device, and is
itself differentiable (create_graph=True). The engine sums gradients back over broadcast dims
and converts them to each input's dtype, so rules never do either.

Each file holds the rules of the ops of its namesake in ops/ (elementwise.py those of
ops/elementwise.py, ...); inplace.py defines the ops only autograd has (what in-place writes
record) with their rules; _common.py the registry, `rule` and `RULES`, and the shared helpers.
Rules call ops through their modules (`elementwise.where(...)`), never names bound at import:
wrap.py replaces the module attributes by the recording ops after this package is loaded.
"""
# ruff: noqa: F401
# (the rule files are imported for their rules, which they register as they load)
from . import (
    activation,
    attention,
    complex_ops,
    conv,
    elementwise,
    factor,
    indexing,
    linalg,
    loss,
    matrix,
    matrix_function,
    norm,
    pool,
    recurrent,
    reduction,
    scatter,
    shape,
    sort,
    spectral,
)
from ._common import RULES, rule
from .inplace import copied, filled, index_put
