"""2-d max pooling as two recorded ops, one kernel each (kernels/<device>/pool.py): each
window's max with its index, and the gradient by the input, each output's gradient back at its
index. nn.functional's max_pool1d/2d check the arguments and call `max_pool2d_with_indices`.

kernel, stride, padding (top, left) and dilation are (h, w) pairs; `size` is the output's
(N, C, OH, OW), which ceil_mode decides."""
from .. import dtypes
from ..creation import allocate
from ..kernels.registry import backend
from ._common import dense

TENSOR_METHODS = {}  # torch has these in nn.functional only


def max_pool2d_with_indices(input, kernel, stride, padding, dilation, size):
    """(values, indices) of `size`: each window's max over the (N, C, H, W) input (the padding
    never wins) and where it is in its plane, h * W + w (int64), as torch's."""
    values = allocate(size, input._dtype, input._device)
    indices = allocate(size, dtypes.int64, input._device)
    if values.numel():
        backend(input._device).pool.max_pool2d(values._data, indices._data, dense(input), kernel,
                                               stride, padding, dilation)
    return values, indices


def max_pool2d_backward(grad, indices, shape, kernel, stride, padding, dilation):
    """The gradient of max_pool2d_with_indices by its input (of `shape`) for the gradient
    `grad` of its values: each input element gets the sum of grad over the windows whose max it
    is."""
    out = allocate(shape, grad._dtype, grad._device)
    if out.numel():
        backend(grad._device).pool.max_pool2d_grad(out._data, dense(grad), dense(indices),
                                                   kernel, stride, padding, dilation)
    return out
