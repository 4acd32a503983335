"""The 2-d convolution as three recorded ops, one kernel each (kernels/<device>/conv.py): the
forward, and its gradients by the input and by the weight. The convolution is bilinear, so the
derivatives of each op are the other two (autograd/derivatives/conv.py): create_graph=True
differentiates them again with the same kernels. nn.functional's conv1d and conv2d check the
arguments and call `convolution`.

`padding` is (top, bottom, left, right), as 'same' pads unevenly; stride and dilation are
(h, w) pairs."""
from ..creation import allocate
from ..kernels.registry import backend
from ._common import dense, same_device

TENSOR_METHODS = {}  # torch has these in nn.functional only


def output_size(size, kernel, stride, padding, dilation):
    """(OH, OW) of a convolution of an input of spatial `size`."""
    (h, w), (kh, kw), (sh, sw), (top, bottom, left, right), (dh, dw) = \
        size, kernel, stride, padding, dilation
    return (h + top + bottom - dh * (kh - 1) - 1) // sh + 1, \
        (w + left + right - dw * (kw - 1) - 1) // sw + 1


def _checked(fn, a, b, bias=None):
    """The device of a, b (and bias), checked to have a's dtype too."""
    device = same_device(fn, a, b, *(() if bias is None else (bias,)))
    for name, t in (("weight", b), ("bias", bias)):
        if t is not None and t._dtype is not a._dtype:
            raise RuntimeError(f"{fn}(): input type ({a._dtype.name}) and {name} type "
                               f"({t._dtype.name}) should be the same; convert one with "
                               f".to({a._dtype})")
    return device


def convolution(input, weight, bias, stride, padding, dilation, groups):
    """input (N, C, H, W) cross-correlated with weight (O, C / groups, kh, kw), plus bias (O,)
    or None."""
    device = _checked("conv2d", input, weight, bias)
    n, o = input.shape[0], weight.shape[0]
    out = allocate((n, o, *output_size(input.shape[2:], weight.shape[2:], stride, padding,
                                       dilation)), input._dtype, device)
    if out.numel():
        backend(device).conv.conv(out._data, dense(input), dense(weight),
                                  None if bias is None else dense(bias), stride,
                                  padding[::2], dilation, groups)
    return out


def convolution_input_grad(grad, weight, shape, stride, padding, dilation, groups):
    """The gradient of `convolution` by its input (of `shape`) for upstream gradient grad."""
    return _gradient("conv_grad_input", grad, weight, shape, stride, padding, dilation, groups)


def convolution_weight_grad(grad, input, shape, stride, padding, dilation, groups):
    """The gradient of `convolution` by its weight (of `shape`) for upstream gradient grad."""
    return _gradient("conv_grad_weight", grad, input, shape, stride, padding, dilation, groups)


def _gradient(launcher, grad, other, shape, stride, padding, dilation, groups):
    """A gradient op's result of `shape`, from grad (converted to other's dtype, as torch's
    engine does) and the forward's other operand."""
    grad = grad if grad._dtype is other._dtype else grad.to(other._dtype)
    device = _checked("conv2d_backward", grad, other)
    out = allocate(shape, grad._dtype, device)
    if out.numel():
        getattr(backend(device).conv, launcher)(out._data, dense(grad), dense(other), stride,
                                                padding[::2], dilation, groups)
    return out
