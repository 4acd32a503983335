"""The rules of ops/complex_ops.py's ops: the parts' views and conj. A real gradient reaching a
complex input is its real part; the engine converts (graph._fit)."""
from ...ops import complex_ops
from ._common import rule


@rule("complex_real", uses_inputs=False, uses_result=False)
def _real(g, result, input):
    return ((input, g),)


@rule("complex_imag", uses_inputs=False, uses_result=False)
def _imag(g, result, input):
    return ((input, complex_ops.complex(g.new_zeros(g.shape), g)),)


@rule("view_as_real", uses_inputs=False, uses_result=False)
def _view_as_real(g, result, input):
    return ((input, complex_ops.view_as_complex(g.contiguous())),)


@rule("view_as_complex", uses_inputs=False, uses_result=False)
def _view_as_complex(g, result, input):
    return ((input, complex_ops.view_as_real(g)),)


@rule("complex", uses_inputs=False, uses_result=False)
def _complex(g, result, real, imag, *, out=None):
    return (real, complex_ops.real(g)), (imag, complex_ops.imag(g))


@rule("complex_conj", uses_inputs=False, uses_result=False)
def _conj(g, result, input, *, out=None):
    return ((input, complex_ops.conj(g)),)
