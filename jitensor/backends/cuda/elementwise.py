"""CUDA elementwise kernels: the six op families of backends/cpu/elementwise.py, each a switch
over the same op codes calling the same scalar definitions (backends/scalar/elementwise.py),
run as a grid-stride loop with one element per thread step. On the GPU the op switch sits
inside the loop: every thread of a launch takes the same branch, so it costs a few
instructions, and one compile per family and dtype signature serves every op.

A kernel takes (op, out, a, b, c as buffers or scalars, d, sizes, dense); each buffer comes as
(pointer, element offset, four element strides) of a 4-D view (see backends/cuda/__init__.py)."""
import numpy as np
from numba import cuda
from numba.extending import register_jitable

from ..scalar import elementwise as s
from ..scalar import libm
from . import driver
from .access import at, offset4, store
from .memory import pointer, strides
from .. cpu.strided import as_4d


@register_jitable
def _unary(op, o, k, x, p, q, r):
    if op == s.NEG:
        store(o, k, -x)
    elif op == s.ABS:
        store(o, k, abs(x))
    elif op == s.SIGN:
        store(o, k, s.sign(x))
    elif op == s.EXP:
        store(o, k, libm.exp(x))
    elif op == s.LOG:
        store(o, k, libm.log(x))
    elif op == s.LOG1P:
        store(o, k, libm.log1p(x))
    elif op == s.EXPM1:
        store(o, k, libm.expm1(x))
    elif op == s.SQRT:
        store(o, k, libm.sqrt(x))
    elif op == s.RSQRT:
        store(o, k, 1 / libm.sqrt(x))
    elif op == s.SIN:
        store(o, k, libm.sin(x))
    elif op == s.COS:
        store(o, k, libm.cos(x))
    elif op == s.TANH:
        store(o, k, libm.tanh(x))
    elif op == s.SIGMOID:
        store(o, k, s.sigmoid(x))
    elif op == s.RELU:
        store(o, k, s.relu(x))
    elif op == s.NAN_TO_NUM:
        store(o, k, s.nan_to_num(x, p, q, r))
    elif op == s.CLAMP:
        store(o, k, s.clamp(x, p, q))
    elif op == s.FLOOR:
        store(o, k, libm.floor(x))
    elif op == s.CEIL:
        store(o, k, libm.ceil(x))
    elif op == s.ROUND:
        store(o, k, libm.rint(x))
    elif op == s.TRUNC:
        store(o, k, libm.trunc(x))
    elif op == s.RECIPROCAL:
        store(o, k, 1 / x)
    elif op == s.SQUARE:
        store(o, k, x * x)


@register_jitable
def _predicate(op, o, k, x):
    if op == s.LOGICAL_NOT:
        store(o, k, x == 0)
    elif op == s.ISNAN:
        store(o, k, x != x)
    elif op == s.ISINF:
        store(o, k, libm.isinf(x))
    elif op == s.ISFINITE:
        store(o, k, libm.isfinite(x))


@register_jitable
def _arith(op, o, k, x, y, alpha):
    if op == s.ADD:
        store(o, k, s.add(x, y, alpha))
    elif op == s.SUB:
        store(o, k, s.sub(x, y, alpha))
    elif op == s.MUL:
        store(o, k, x * y)
    elif op == s.DIV:
        store(o, k, x / y)
    elif op == s.FLOOR_DIVIDE:
        store(o, k, x // y)
    elif op == s.FLOOR_DIVIDE_FLOAT:
        store(o, k, s.floor_divide_float(x, y))
    elif op == s.TRUNC_DIVIDE:
        store(o, k, s.trunc_divide(x, y))
    elif op == s.TRUNC_DIVIDE_FLOAT:
        store(o, k, libm.trunc(x / y))
    elif op == s.REMAINDER:
        store(o, k, x % y)
    elif op == s.FMOD:
        store(o, k, s.fmod(x, y))
    elif op == s.FMOD_FLOAT:
        store(o, k, libm.fmod(x, y))
    elif op == s.POW:
        store(o, k, x ** y)
    elif op == s.POW_INT:
        store(o, k, s.int_pow(x, y))
    elif op == s.MAXIMUM:
        store(o, k, s.maximum(x, y))
    elif op == s.MINIMUM:
        store(o, k, s.minimum(x, y))
    elif op == s.ATAN2:
        store(o, k, libm.atan2(x, y))


@register_jitable
def _compare(op, o, k, x, y):
    if op == s.EQ:
        store(o, k, x == y)
    elif op == s.NE:
        store(o, k, x != y)
    elif op == s.LT:
        store(o, k, x < y)
    elif op == s.LE:
        store(o, k, x <= y)
    elif op == s.GT:
        store(o, k, x > y)
    elif op == s.GE:
        store(o, k, x >= y)
    elif op == s.LOGICAL_AND:
        store(o, k, (x != 0) & (y != 0))
    elif op == s.LOGICAL_OR:
        store(o, k, (x != 0) | (y != 0))
    elif op == s.LOGICAL_XOR:
        store(o, k, s.logical_xor(x, y))


@register_jitable
def _bitwise(op, o, k, x, y):
    if op == s.AND:
        store(o, k, x & y)
    elif op == s.OR:
        store(o, k, x | y)
    elif op == s.XOR:
        store(o, k, x ^ y)
    elif op == s.LSHIFT:
        store(o, k, x << y)
    elif op == s.RSHIFT:
        store(o, k, x >> y)
    elif op == s.NOT:
        store(o, k, ~x)


@register_jitable
def _ternary(op, o, k, c, x, y):
    if op == s.WHERE:
        store(o, k, x if c else y)
    elif op == s.CLAMP_TENSOR:
        store(o, k, s.clamp(c, x, y))


@register_jitable
def _at(i, x, xo, s0, s1, s2, s3, n1, n2, n3, dense):
    """Element i of operand x (a buffer, or a scalar returned as is)."""
    return at(x, xo + (i if dense else offset4(i, n1, n2, n3, s0, s1, s2, s3)))


# -- kernel shells: one per family (a family's ops share the operand and result kinds) ----------
@driver.jit
def unary(op, o, oo, o0, o1, o2, o3, a, ao, a0, a1, a2, a3, b, bo, b0, b1, b2, b3,
          c, co, c0, c1, c2, c3, d, n, n1, n2, n3, dense):
    i = cuda.grid(1)
    while i < n:
        k = oo + (i if dense else offset4(i, n1, n2, n3, o0, o1, o2, o3))
        _unary(op, o, k, _at(i, a, ao, a0, a1, a2, a3, n1, n2, n3, dense), b, c, d)
        i += cuda.gridsize(1)


@driver.jit
def predicate(op, o, oo, o0, o1, o2, o3, a, ao, a0, a1, a2, a3, b, bo, b0, b1, b2, b3,
              c, co, c0, c1, c2, c3, d, n, n1, n2, n3, dense):
    i = cuda.grid(1)
    while i < n:
        k = oo + (i if dense else offset4(i, n1, n2, n3, o0, o1, o2, o3))
        _predicate(op, o, k, _at(i, a, ao, a0, a1, a2, a3, n1, n2, n3, dense))
        i += cuda.gridsize(1)


@driver.jit
def arith(op, o, oo, o0, o1, o2, o3, a, ao, a0, a1, a2, a3, b, bo, b0, b1, b2, b3,
          c, co, c0, c1, c2, c3, d, n, n1, n2, n3, dense):
    i = cuda.grid(1)
    while i < n:
        k = oo + (i if dense else offset4(i, n1, n2, n3, o0, o1, o2, o3))
        _arith(op, o, k, _at(i, a, ao, a0, a1, a2, a3, n1, n2, n3, dense),
               _at(i, b, bo, b0, b1, b2, b3, n1, n2, n3, dense), c)
        i += cuda.gridsize(1)


@driver.jit
def compare(op, o, oo, o0, o1, o2, o3, a, ao, a0, a1, a2, a3, b, bo, b0, b1, b2, b3,
            c, co, c0, c1, c2, c3, d, n, n1, n2, n3, dense):
    i = cuda.grid(1)
    while i < n:
        k = oo + (i if dense else offset4(i, n1, n2, n3, o0, o1, o2, o3))
        _compare(op, o, k, _at(i, a, ao, a0, a1, a2, a3, n1, n2, n3, dense),
                 _at(i, b, bo, b0, b1, b2, b3, n1, n2, n3, dense))
        i += cuda.gridsize(1)


@driver.jit
def bitwise(op, o, oo, o0, o1, o2, o3, a, ao, a0, a1, a2, a3, b, bo, b0, b1, b2, b3,
            c, co, c0, c1, c2, c3, d, n, n1, n2, n3, dense):
    i = cuda.grid(1)
    while i < n:
        k = oo + (i if dense else offset4(i, n1, n2, n3, o0, o1, o2, o3))
        _bitwise(op, o, k, _at(i, a, ao, a0, a1, a2, a3, n1, n2, n3, dense),
                 _at(i, b, bo, b0, b1, b2, b3, n1, n2, n3, dense))
        i += cuda.gridsize(1)


@driver.jit
def ternary(op, o, oo, o0, o1, o2, o3, a, ao, a0, a1, a2, a3, b, bo, b0, b1, b2, b3,
            c, co, c0, c1, c2, c3, d, n, n1, n2, n3, dense):
    i = cuda.grid(1)
    while i < n:
        k = oo + (i if dense else offset4(i, n1, n2, n3, o0, o1, o2, o3))
        _ternary(op, o, k, _at(i, a, ao, a0, a1, a2, a3, n1, n2, n3, dense),
                 _at(i, b, bo, b0, b1, b2, b3, n1, n2, n3, dense),
                 _at(i, c, co, c0, c1, c2, c3, n1, n2, n3, dense))
        i += cuda.gridsize(1)


KERNELS = {"unary": unary, "predicate": predicate, "arith": arith, "compare": compare,
           "bitwise": bitwise, "ternary": ternary}
_SCALAR = (0, 0, 0, 0, 0)  # the offset and strides of a scalar operand (unused)


def launch(family, op, out, a, b=0, c=0, d=0):
    """Run op `op` of `family` into the DeviceArray `out` (see the CPU backend's `launch`)."""
    if not out.size:
        return
    operands = (a, b, c)
    arrays = [x for x in operands if isinstance(x, np.ndarray)]
    dense = out.flags.c_contiguous and all(x.shape == out.shape and x.flags.c_contiguous
                                           for x in arrays)
    groups = [[out, *arrays]] if dense else as_4d(out, *arrays)
    for views in groups:
        shape = (1, 1, 1, out.size) if dense else views[0].shape
        rest = iter(views[1:])
        args = [op, *_buffer(views[0], dense)]
        for x in operands:
            args += _buffer(next(rest), dense) if isinstance(x, np.ndarray) else (x, *_SCALAR)
        n = shape[0] * shape[1] * shape[2] * shape[3]
        driver.launch_1d(KERNELS[family], n, *args, d, n, *shape[1:], dense)


def _buffer(v, dense):
    return (*pointer(v), *((0, 0, 0, 1) if dense else strides(v)))


def launch_fresh(family, op, out, a, b, c=0):
    launch(family, op, out, a, b, c)


def any_compare(op, x, value):
    """Whether any element of `x` (buffer or scalar) is == `value` (op EQ) or < it (op LT)."""
    if not isinstance(x, np.ndarray):
        return bool(x == value if op == s.EQ else x < value)
    from . import empty, reduction
    hits = empty(x.shape, np.bool_)
    launch("compare", op, hits, x, x.dtype.type(value))
    return bool(reduction.any_true(hits))
