"""The rules of ops/conv.py's ops: the convolution is bilinear in (input, weight), so each op's
derivatives are the other two ops, with the same geometry."""
from ...ops import conv
from ._common import _wanted, rule


@rule("convolution", uses_result=False)
def _convolution(g, result, input, weight, bias, *geometry):
    pairs = [(bias, g.sum((0, 2, 3)))] if _wanted(bias) else []
    if _wanted(input):
        pairs.append((input, conv.convolution_input_grad(g, weight, input.shape, *geometry)))
    if _wanted(weight):
        pairs.append((weight, conv.convolution_weight_grad(g, input, weight.shape, *geometry)))
    return pairs


@rule("convolution_input_grad", uses_result=False)
def _convolution_input_grad(u, result, grad, weight, shape, *geometry):
    """The input's gradient gx(g, w) = J^T g: <u, gx> = <g, conv(u, w)>."""
    pairs = []
    if _wanted(grad):
        pairs.append((grad, conv.convolution(u, weight, None, *geometry)))
    if _wanted(weight):
        pairs.append((weight, conv.convolution_weight_grad(grad, u, weight.shape, *geometry)))
    return pairs


@rule("convolution_weight_grad", uses_result=False)
def _convolution_weight_grad(v, result, grad, input, shape, *geometry):
    """The weight's gradient gw(g, x): <v, gw> = <g, conv(x, v)>."""
    pairs = []
    if _wanted(grad):
        pairs.append((grad, conv.convolution(input, v, None, *geometry)))
    if _wanted(input):
        pairs.append((input, conv.convolution_input_grad(grad, v, input.shape, *geometry)))
    return pairs
