"""The rules of ops/pool.py's ops: max pooling's gradient goes back to each window's max, by
its index; the backward is linear in its gradient, which its own derivative gathers at the
same indices."""
from ...ops import pool
from ._common import rule


@rule("max_pool2d_with_indices", uses_inputs=False, uses_result=(1,))
def _max_pool2d_with_indices(g, result, input, kernel, stride, padding, dilation, size):
    g = g[0]  # (the indices have no gradient)
    if g is None:
        return ()
    return ((input, pool.max_pool2d_backward(g, result[1], input.shape, kernel, stride, padding,
                                             dilation)),)


@rule("max_pool2d_backward", uses_inputs=lambda grad, indices, *geometry: (indices,),
      uses_result=False)
def _max_pool2d_backward(u, result, grad, indices, shape, *geometry):
    n, c, oh, ow = indices.shape
    return ((grad, u.reshape(n, c, -1).gather(2, indices.reshape(n, c, -1)).view(n, c, oh, ow)),)
