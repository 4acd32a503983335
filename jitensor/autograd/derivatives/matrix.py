"""The rules of ops/matrix.py's ops."""
from ...ops import matrix, scatter
from ._common import _accumulate, rule


@rule("diagonal", uses_inputs=False, uses_result=False)
def _diagonal(g, result, input, offset=0, dim1=0, dim2=1):
    positions = matrix.diagonal(scatter.positions(input), offset, dim1, dim2)
    return ((input, _accumulate(input, positions, g)),)
