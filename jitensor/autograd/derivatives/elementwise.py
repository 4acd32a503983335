"""The rules of ops/elementwise.py's ops."""
import ast
import math

from ... import creation
from ...kernels.scalar import table
from ...kernels.scalar.elementwise import THRESHOLD
from ...ops import activation, elementwise, pointwise
from ...tensor import Tensor
from ._common import _other_operands, _pass, _recorded, _zero, rule


@rule("add", uses_inputs=False, uses_result=False)
def _add(g, result, input, other, *, alpha=1, out=None):
    return (input, g), (other, g if alpha == 1 else g * alpha)


@rule("sub", "subtract", uses_inputs=False, uses_result=False)
def _sub(g, result, input, other, *, alpha=1, out=None):
    return (input, g), (other, -g if alpha == 1 else g * -alpha)


def _quotient_operands(input, other, **kwargs):
    """The operands a quotient's gradient reads: the divisor, and the dividend where the
    divisor needs its gradient (torch's)."""
    if not isinstance(other, Tensor):
        return []
    return [input, other] if isinstance(input, Tensor) and other.requires_grad else [other]


@rule("mul", "multiply", uses_inputs=_other_operands, uses_result=False)
def _mul(g, result, input, other, *, out=None):
    return (input, g * other), (other, g * input)


@rule("div", "divide", uses_inputs=_quotient_operands, uses_result=False)
def _div(g, result, input, other, *, rounding_mode=None, out=None):
    if rounding_mode is not None:
        return (input, _zero(g)), (other, _zero(g))
    if not (isinstance(other, Tensor) and other.requires_grad):
        return ((input, g / other),)
    return (input, g / other), (other, -g * ((input / other) / other))  # (torch's order)


@rule("remainder", uses_result=False)
def _remainder(g, result, input, other, *, out=None):
    return (input, g), \
        (other, -g * elementwise.floor(input / other) if isinstance(other, Tensor) else None)


@rule("fmod", uses_result=False)
def _fmod(g, result, input, other, *, out=None):
    return (input, g), \
        (other, -g * elementwise.trunc(input / other) if isinstance(other, Tensor) else None)


def _pow_reads_result(input, exponent, **kwargs):
    """Only the exponent's gradient reads pow's result (torch saves it for that alone)."""
    return isinstance(exponent, Tensor) and exponent.requires_grad


@rule("pow", uses_result=_pow_reads_result)
def _pow(g, result, input, exponent, *, out=None):
    pairs = []
    if isinstance(input, Tensor):
        d = elementwise.where(exponent == 0, 0.0, g * exponent * input ** (exponent - 1)) \
            if isinstance(exponent, Tensor) else \
            (_zero(g) if exponent == 0 else g * exponent * input ** (exponent - 1))
        pairs.append((input, d))
    if isinstance(exponent, Tensor) and result is not None:
        base = input if isinstance(input, Tensor) else math.log(input) if input > 0 else None
        d = g * result * elementwise.log(input) if isinstance(input, Tensor) else \
            (g * result * base if base is not None else
             elementwise.where(result == 0, 0.0, g * result * math.log(abs(input) or 1)))
        real = exponent.real if exponent.is_complex() else exponent  # (torch's test)
        pairs.append((exponent, elementwise.where((input == 0) & (real >= 0), 0.0, d)
                      if isinstance(input, Tensor) else d))
    return pairs


def _extremum(larger):
    def extremum(g, result, input, other, *, out=None):
        # ties split the gradient evenly, as torch does
        wins = (input > other) if larger else (input < other)
        tie = input == other
        half = g * 0.5
        return (input, elementwise.where(tie, half, _pass(wins, g))), \
            (other, elementwise.where(tie, half, _pass(~wins, g)))
    return extremum


rule("maximum", uses_result=False)(_extremum(True))
rule("minimum", uses_result=False)(_extremum(False))


@rule("atan2", "arctan2", uses_result=False)
def _atan2(g, result, input, other, *, out=None):
    denom = input * input + other * other
    return (input, g * other / denom), (other, -g * input / denom)


# -- the rules the op table declares (kernels/scalar/table.py: a row's `grad` expression) -----
_OPS = {"elementwise": elementwise, "pointwise": pointwise, "creation": creation}


class _Qualified(ast.NodeTransformer):
    """An expression's op names as attributes of their module (`cos` -> `elementwise.cos`),
    looked up when the rule runs: wrap.install replaces the module attributes by their
    recording versions after this import, which second derivatives need."""

    def visit_Name(self, node):
        if node.id in ("g", "input", "other", "result", "math"):
            return node
        module = next(m for m, ops in _OPS.items() if hasattr(ops, node.id))
        return ast.Attribute(ast.Name(module, ast.Load()), node.id, ast.Load())


def _no_derivative(name, operand):
    """torch's error for an operand whose derivative it does not implement (None otherwise:
    the operand needs no gradient)."""
    if isinstance(operand, Tensor) and operand.requires_grad:
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


def _table_rule(op):
    """Register the rule of table row `op`: its `grad` expression (one, or a pair for two
    operands), compiled once into a function of (g, result, input[, other])."""
    binary = isinstance(op.grad, tuple)
    expressions = op.grad if binary else (op.grad,)
    names = {n.id for e in expressions if e for n in ast.walk(ast.parse(e))
             if isinstance(n, ast.Name)}
    terms = [ast.unparse(_Qualified().visit(ast.parse(e, mode="eval"))) if e else
             f"_no_derivative({op.name!r}, {operand})"
             for e, operand in zip(expressions, ("input", "other"), strict=False)]
    source = (f"lambda g, result, input, other, *, out=None: ((input, {terms[0]}), (other, "
              f"{terms[1]} if isinstance(other, Tensor) else None))" if binary else
              f"lambda g, result, input, *, out=None: ((input, {terms[0]}),)")
    fn = eval(compile(source, f"<the grad of {op.name}: kernels/scalar/table.py>", "eval"),
              {**_OPS, "math": math, "Tensor": Tensor, "_no_derivative": _no_derivative})
    rule(op.name, *op.aliases, uses_inputs="input" in names or "other" in names,
         uses_result="result" in names)(fn)


for _op in table.OPS:
    if _op.grad is not None:
        _table_rule(_op)


@rule("hypot")
def _hypot(g, result, input, other, *, out=None):
    return (input, g * input / result), (other, g * other / result)


@rule("copysign")
def _copysign(g, result, input, other, *, out=None):
    # d|x|sign(y)/dx = sign(x) sign(y) = result / x where x != 0 (torch gives 0 there);
    # the sign's source gets zeros, as in torch
    return (input, _pass(input != 0, g * result / input)), (other, _zero(g))


@rule("logaddexp")
def _logaddexp(g, result, input, other, *, out=None):
    return (input, g * elementwise.exp(input - result)), \
        (other, g * elementwise.exp(other - result))


@rule("logaddexp2")
def _logaddexp2(g, result, input, other, *, out=None):
    return (input, g * elementwise.exp2(input - result)), \
        (other, g * elementwise.exp2(other - result))


def _nan_ignoring(larger):
    def extremum(g, result, input, other, *, out=None):
        # torch: the gradient goes to input where it won or other is NaN, else to other
        first = ((input >= other) if larger else (input <= other)) | elementwise.isnan(other)
        return (input, _pass(first, g)), (other, _pass(~first, g))
    return extremum


rule("fmax", uses_result=False)(_nan_ignoring(True))
rule("fmin", uses_result=False)(_nan_ignoring(False))


@rule("xlogy", uses_result=False)
def _xlogy(g, result, input, other, *, out=None):
    pairs = [(other, g * input / other)]
    if isinstance(input, Tensor):  # torch: 0 where input is 0 and other <= 0
        pairs.append((input, _pass(~((input == 0) & (other <= 0)), elementwise.xlogy(g, other))))
    return pairs


@rule("relu", uses_inputs=False)
def _relu(g, result, input, *, out=None):
    # torch's threshold_backward of the result: g unless it is <= 0 (a NaN passes g), in one
    # kernel (a comparison and a selection took two passes)
    if not _recorded(g, result):
        return ((input, activation.backward(THRESHOLD, g, result, 0)),)
    return ((input, elementwise.where(result <= 0, 0.0, g)),)


@rule("clamp", uses_result=False)
def _clamp(g, result, input, min=None, max=None, *, out=None):
    keep = None
    pairs = []
    if min is not None:
        keep = input >= min
        pairs.append((min, _pass(input < min, g)))
    if max is not None:
        below = input <= max
        keep = below if keep is None else keep & below
        pairs.append((max, _pass(input > max, g)))
    pairs.append((input, g if keep is None else _pass(keep, g)))
    return pairs


@rule("clamp_min", uses_result=False)
def _clamp_min(g, result, input, min):
    return _clamp(g, result, input, min=min)


@rule("clamp_max", uses_result=False)
def _clamp_max(g, result, input, max):
    return _clamp(g, result, input, max=max)


@rule("where", uses_result=False)
def _where(g, result, condition, input=None, other=None, *, out=None):
    return (input, _pass(condition, g)), (other, _pass(~condition, g))


@rule("nan_to_num", uses_result=False)
def _nan_to_num(g, result, input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return ((input, _pass(elementwise.isfinite(input), g)),)
