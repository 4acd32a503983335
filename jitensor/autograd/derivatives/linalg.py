"""The rules of ops/linalg.py's ops: the matrix products."""
from ...ops import linalg, shape
from ._common import _other_operands, _wanted, rule


@rule("matmul", "mm", "bmm", "mv", "dot", uses_inputs=_other_operands, uses_result=False)
def _matmul(g, result, a, b, *, out=None):
    if a.ndim == 1 and b.ndim == 1:  # a dot product: g is 0-d
        return (a, g * b), (b, g * a)
    a2 = shape.unsqueeze(a, 0) if a.ndim == 1 else a
    b2 = shape.unsqueeze(b, -1) if b.ndim == 1 else b
    g2 = shape.unsqueeze(g, -2) if a.ndim == 1 else g
    g2 = shape.unsqueeze(g2, -1) if b.ndim == 1 else g2
    pairs = []
    if _wanted(a):
        ga = linalg.matmul(g2, shape.transpose(b2, -1, -2))
        pairs.append((a, shape.squeeze(ga, -2) if a.ndim == 1 else ga))
    if _wanted(b):
        gb = linalg.matmul(shape.transpose(a2, -1, -2), g2)
        pairs.append((b, shape.squeeze(gb, -1) if b.ndim == 1 else gb))
    return pairs


@rule("linear", uses_inputs=lambda input, weight, bias=None: _other_operands(input, weight),
      uses_result=False)
def _linear(g, result, input, weight, bias=None):
    x = shape.reshape(input, (-1, input.shape[-1]))  # every row of input
    pairs = [(bias, g)]  # the engine sums g over the rows for the bias
    if weight.ndim == 1:  # one output per row
        if _wanted(input):
            pairs.append((input, shape.unsqueeze(g, -1) * weight))
        if _wanted(weight):
            pairs.append((weight, linalg.matmul(shape.reshape(g, (-1,)), x)))
        return pairs
    if _wanted(input):
        pairs.append((input, linalg.matmul(g, weight)))
    if _wanted(weight):
        rows = shape.reshape(g, (-1, g.shape[-1]))
        pairs.append((weight, linalg.matmul(shape.transpose(rows, 0, 1), x)))
    return pairs


@rule("outer", "ger", uses_result=False)
def _outer(g, result, input, vec2, *, out=None):
    return (input, linalg.mv(g, vec2)), (vec2, linalg.mv(shape.transpose(g, 0, 1), input))
