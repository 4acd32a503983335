"""The rules of ops/matrix_function.py's ops."""
from ... import creation
from ...ops import matrix_function, shape
from ._common import rule


@rule("matrix_exp", uses_result=False)
def _matrix_exp(g, result, A):
    # torch's backward of an analytic function f of a matrix: the top right block of
    # f([[A^H, G], [0, A^H]])
    n = A.shape[-1]
    At = shape.transpose(A, -2, -1)
    top = shape.cat([At, g], -1)
    bottom = shape.cat([creation.zeros_like(A), At], -1)
    E = matrix_function.matrix_exp(shape.cat([top, bottom], -2))
    return ((A, shape.narrow(shape.narrow(E, -2, 0, n), -1, n, n)),)
