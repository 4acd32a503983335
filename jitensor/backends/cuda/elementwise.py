"""CUDA elementwise kernels: the twelve op families of backends/cpu/elementwise.py, each a switch
over the same op codes calling the same scalar definitions (backends/scalar/elementwise.py,
and backends/scalar/loss.py for the pointwise losses),
run as a grid-stride loop with one element per thread step. On the GPU the op switch sits
inside the loop: every thread of a launch takes the same branch, so it costs a few
instructions, and one compile per family and dtype signature serves every op.

Each family has two shells: `*_dense` for C-contiguous operands of one shape, walked flat
(a buffer comes as pointer and element offset), and the strided one for everything else: a
4-D view (`strided.as_4d`) where a buffer comes as pointer, offset and four element strides.
Scalar operands take a buffer's place (`at` returns them as they are)."""
import numpy as np
from numba import cuda, float32
from numba.extending import register_jitable

from ..scalar import elementwise as s
from ..scalar import libm, loss as ls
from . import driver, memory
from .access import at, load4, offset4, store, store4
from .memory import pointer, strides
from ..cpu.strided import as_4d


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
def _predicate(op, o, k, x, unused_y, unused_z, unused_d):
    if op == s.LOGICAL_NOT:
        store(o, k, x == 0)
    elif op == s.ISNAN:
        store(o, k, x != x)
    elif op == s.ISINF:
        store(o, k, libm.isinf(x))
    elif op == s.ISFINITE:
        store(o, k, libm.isfinite(x))


@register_jitable
def _arith(op, o, k, x, y, alpha, unused):
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
def _compare(op, o, k, x, y, unused_z, unused_d):
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
def _bitwise(op, o, k, x, y, unused_z, unused_d):
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
def _ternary(op, o, k, c, x, y, unused):
    if op == s.WHERE:
        store(o, k, x if c else y)
    elif op == s.CLAMP_TENSOR:
        store(o, k, s.clamp(c, x, y))


@register_jitable
def _math(op, o, k, x, unused_y, unused_z, unused_d):
    if op == s.TAN:
        store(o, k, libm.tan(x))
    elif op == s.ASIN:
        store(o, k, libm.asin(x))
    elif op == s.ACOS:
        store(o, k, libm.acos(x))
    elif op == s.ATAN:
        store(o, k, libm.atan(x))
    elif op == s.SINH:
        store(o, k, libm.sinh(x))
    elif op == s.COSH:
        store(o, k, libm.cosh(x))
    elif op == s.ASINH:
        store(o, k, libm.asinh(x))
    elif op == s.ACOSH:
        store(o, k, libm.acosh(x))
    elif op == s.ATANH:
        store(o, k, libm.atanh(x))
    elif op == s.LOG2:
        store(o, k, libm.log2(x))
    elif op == s.LOG10:
        store(o, k, libm.log10(x))
    elif op == s.EXP2:
        store(o, k, libm.exp2(x))
    elif op == s.ERF:
        store(o, k, libm.erf(x))
    elif op == s.ERFC:
        store(o, k, libm.erfc(x))


@register_jitable
def _math2(op, o, k, x, y, unused_z, unused_d):
    if op == s.HYPOT:
        store(o, k, libm.hypot(x, y))
    elif op == s.COPYSIGN:
        store(o, k, libm.copysign(x, y))
    elif op == s.LOGADDEXP:
        store(o, k, s.logaddexp(x, y))
    elif op == s.LOGADDEXP2:
        store(o, k, s.logaddexp2(x, y))
    elif op == s.FMAX:
        store(o, k, s.fmax(x, y))
    elif op == s.FMIN:
        store(o, k, s.fmin(x, y))
    elif op == s.XLOGY:
        store(o, k, s.xlogy(x, y))


@register_jitable
def _activation(op, o, k, x, p, q, r):
    if op == s.GELU:
        store(o, k, s.gelu(x))
    elif op == s.GELU_TANH:
        store(o, k, s.gelu_tanh(x))
    elif op == s.SILU:
        store(o, k, s.silu(x))
    elif op == s.MISH:
        store(o, k, s.mish(x))
    elif op == s.SOFTPLUS:
        store(o, k, s.softplus(x, p, q))
    elif op == s.LEAKY_RELU:
        store(o, k, s.leaky_relu(x, p))
    elif op == s.ELU:
        store(o, k, s.elu(x, p, q, r))
    elif op == s.LOGSIGMOID:
        store(o, k, s.logsigmoid(x))
    elif op == s.HARDSIGMOID:
        store(o, k, s.hardsigmoid(x))
    elif op == s.HARDSWISH:
        store(o, k, s.hardswish(x))
    elif op == s.THRESHOLD:
        store(o, k, s.threshold(x, p, q))


@register_jitable
def _activation_grad(op, o, k, g, x, c, d):
    if op == s.GELU:
        store(o, k, s.gelu_grad(g, x))
    elif op == s.GELU_TANH:
        store(o, k, s.gelu_tanh_grad(g, x))
    elif op == s.SILU:
        store(o, k, s.silu_grad(g, x))
    elif op == s.MISH:
        store(o, k, s.mish_grad(g, x))
    elif op == s.SOFTPLUS:
        store(o, k, s.softplus_grad(g, x, c, d))
    elif op == s.LEAKY_RELU:
        store(o, k, s.leaky_relu_grad(g, x, c))
    elif op == s.ELU:
        store(o, k, s.elu_grad(g, x, c, d))
    elif op == s.SELU:
        store(o, k, s.selu_grad(g, x))
    elif op == s.LOGSIGMOID:
        store(o, k, s.logsigmoid_grad(g, x))
    elif op == s.HARDSIGMOID:
        store(o, k, s.hardsigmoid_grad(g, x))
    elif op == s.HARDSWISH:
        store(o, k, s.hardswish_grad(g, x))
    elif op == s.THRESHOLD:
        store(o, k, s.threshold_grad(g, x, c))
    elif op == s.HARDTANH:
        store(o, k, s.hardtanh_grad(g, x, c, d))


@register_jitable
def _loss(op, o, k, x, y, c, d):
    if op == ls.SMOOTH_L1:
        store(o, k, ls.smooth_l1(x, y, d))
    elif op == ls.HUBER:
        store(o, k, ls.huber(x, y, d))
    elif op == ls.BCE:
        store(o, k, ls.bce(x, y))
    elif op == ls.BCE_LOGITS:
        store(o, k, ls.bce_logits(x, y, c))
    elif op == ls.KL_DIV:
        store(o, k, ls.kl_div(x, y))
    elif op == ls.KL_DIV_LOG:
        store(o, k, ls.kl_div_log(x, y))


@register_jitable
def _loss_grad(op, o, k, x, y, c, d):
    if op == ls.SMOOTH_L1:
        store(o, k, ls.smooth_l1_grad(x, y, d))
    elif op == ls.HUBER:
        store(o, k, ls.huber_grad(x, y, d))
    elif op == ls.BCE:
        store(o, k, ls.bce_grad(x, y))
    elif op == ls.BCE_LOGITS:
        store(o, k, ls.bce_logits_grad(x, y, c))
    elif op == ls.KL_DIV:
        store(o, k, -y)
    elif op == ls.KL_DIV_LOG:
        store(o, k, -libm.exp(y))


@register_jitable
def _at(i, x, xo, s0, s1, s2, s3, n1, n2, n3):
    """Element i of operand x in a 4-D walk (a buffer, or a scalar returned as is)."""
    return at(x, xo + offset4(i, n1, n2, n3, s0, s1, s2, s3))


# -- kernel shells: for each family a dense one (C-contiguous operands of one shape, walked flat:
# fewer arguments to pass) and a strided one (4-D views: broadcasting and any strides) ---------
def _shells(family, body):
    """The (dense, strided) kernels of the family whose switch is `body`, named
    `<family>_dense` and `<family>` (the name keys each one's on-disk cache and CI's PTX
    check). Every switch takes (op, out, index, x, y, z, d) and ignores what it does not use."""
    def dense(op, o, oo, a, ao, b, bo, c, co, d, n):
        i = cuda.grid(1)
        while i < n:
            body(op, o, oo + i, at(a, ao + i), at(b, bo + i), at(c, co + i), d)
            i += cuda.gridsize(1)

    def strided(op, o, oo, o0, o1, o2, o3, a, ao, a0, a1, a2, a3, b, bo, b0, b1, b2, b3,
                c, co, c0, c1, c2, c3, d, n, n1, n2, n3):
        i = cuda.grid(1)
        while i < n:
            body(op, o, oo + offset4(i, n1, n2, n3, o0, o1, o2, o3),
                 _at(i, a, ao, a0, a1, a2, a3, n1, n2, n3),
                 _at(i, b, bo, b0, b1, b2, b3, n1, n2, n3),
                 _at(i, c, co, c0, c1, c2, c3, n1, n2, n3), d)
            i += cuda.gridsize(1)

    dense.__name__ = dense.__qualname__ = family + "_dense"
    strided.__name__ = strided.__qualname__ = family
    return driver.jit(dense), driver.jit(strided)


unary_dense, unary = _shells("unary", _unary)
predicate_dense, predicate = _shells("predicate", _predicate)
arith_dense, arith = _shells("arith", _arith)
compare_dense, compare = _shells("compare", _compare)
bitwise_dense, bitwise = _shells("bitwise", _bitwise)
ternary_dense, ternary = _shells("ternary", _ternary)
math_dense, math = _shells("math", _math)
math2_dense, math2 = _shells("math2", _math2)
activation_dense, activation = _shells("activation", _activation)
activation_grad_dense, activation_grad = _shells("activation_grad", _activation_grad)
loss_dense, loss = _shells("loss", _loss)
loss_grad_dense, loss_grad = _shells("loss_grad", _loss_grad)


# -- float32 in 128-bit accesses: four elements per thread step (../shared/ANCHORS.md: 4310 GB/s
# on an add where the one-element loop reached 3640 and torch 4294) --------------------------------
@driver.jit
def unary_vec4(op, o, oo, a, ao, b, bo, c, co, d, n4):
    """unary_dense on float32 with every offset a multiple of 4 and n4 = n / 4."""
    lanes = cuda.local.array(4, float32)
    i = cuda.grid(1)
    while i < n4:
        x = load4(a, ao // 4 + i)
        _unary(op, lanes, 0, x[0], b, c, d)  # spelled out: constant indices keep lanes in
        _unary(op, lanes, 1, x[1], b, c, d)  # registers (a loop put them in local memory)
        _unary(op, lanes, 2, x[2], b, c, d)
        _unary(op, lanes, 3, x[3], b, c, d)
        store4(o, oo // 4 + i, (lanes[0], lanes[1], lanes[2], lanes[3]))
        i += cuda.gridsize(1)


@driver.jit
def arith_vec4(op, o, oo, a, ao, b, bo, c, co, d, n4):
    """arith_dense on float32 with every offset a multiple of 4 and n4 = n / 4."""
    lanes = cuda.local.array(4, float32)
    i = cuda.grid(1)
    while i < n4:
        x = load4(a, ao // 4 + i)
        y = load4(b, bo // 4 + i)
        _arith(op, lanes, 0, x[0], y[0], c, d)  # spelled out: see unary_vec4
        _arith(op, lanes, 1, x[1], y[1], c, d)
        _arith(op, lanes, 2, x[2], y[2], c, d)
        _arith(op, lanes, 3, x[3], y[3], c, d)
        store4(o, oo // 4 + i, (lanes[0], lanes[1], lanes[2], lanes[3]))
        i += cuda.gridsize(1)


VEC4 = {"unary": unary_vec4, "arith": arith_vec4}
KERNELS = {name: (globals()[name + "_dense"], globals()[name]) for name in
           ("unary", "predicate", "arith", "compare", "bitwise", "ternary", "math", "math2",
            "activation", "activation_grad", "loss", "loss_grad")}
_SCALAR = (0, 0, 0, 0, 0)  # the offset and strides of a scalar operand (unused)
ndarray = np.ndarray


def _dense_arg(x):
    return pointer(x) if isinstance(x, ndarray) else (x, 0)


def _vec4(x):
    """Whether operand x suits the 128-bit kernels: float32 (or a scalar)."""
    return not isinstance(x, ndarray) or x.dtype.char == "f"


def launch(family, op, out, a, b=0, c=0, d=0):
    """Run op `op` of `family` into the DeviceArray `out` (see the CPU backend's `launch`).
    Operands are DeviceArrays (or NumPy views of them) or scalars."""
    n = out.size
    if not n:
        return
    shape = out.shape
    dense_kernel, kernel = KERNELS[family]
    # inline tests: on the path of every small op
    if out.flags.c_contiguous \
            and (not isinstance(a, ndarray) or a.shape == shape and a.flags.c_contiguous) \
            and (not isinstance(b, ndarray) or b.shape == shape and b.flags.c_contiguous) \
            and (not isinstance(c, ndarray) or c.shape == shape and c.flags.c_contiguous):
        args = (*pointer(out), *_dense_arg(a), *_dense_arg(b), *_dense_arg(c))
        vec4 = VEC4.get(family)
        if vec4 is not None and n % 4 == 0 and out.dtype.char == "f" and _vec4(a) \
                and _vec4(b) and _vec4(c) and not (args[1] % 4 or args[3] % 4 or args[5] % 4
                                                   or args[7] % 4):
            driver.launch_1d(vec4, n // 4, op, *args, d, n // 4)
        else:
            driver.launch_1d(dense_kernel, n, op, *args, d, n)
        return
    operands = (a, b, c)
    for views in as_4d(out, *[x for x in operands if isinstance(x, ndarray)]):
        rest = iter(views[1:])
        args = [op, *pointer(views[0]), *strides(views[0])]
        for x in operands:
            if isinstance(x, ndarray):
                v = next(rest)
                args += (*pointer(v), *strides(v))
            else:
                args += (x, *_SCALAR)
        n0, n1, n2, n3 = views[0].shape
        m = n0 * n1 * n2 * n3
        driver.launch_1d(kernel, m, *args, d, m, n1, n2, n3)


def launch_fresh(family, op, out, a, b, c=0, d=0):
    """`launch` for the small-op fast paths (see the CPU backend's): `out` newly allocated, `a`
    an array of its shape, `b` one too or a scalar, `c` and `d` scalars. Arrays that are whole
    new allocations (memory.empty's own arrays: C-contiguous from their block's start) go
    straight to the dense kernels, skipping launch's layout tests."""
    fa, fb = memory.fresh(a), memory.fresh(b)
    if fa is None or fb is None and isinstance(b, ndarray):
        return launch(family, op, out, a, b, c, d)
    n, p = out.size, out.base.pointer
    args = (p, 0, fa.pointer, 0, b if fb is None else fb.pointer, 0, c, 0, d)
    if n % 4 == 0 and family in VEC4 and p.dtype.char == "f" and fa.pointer.dtype.char == "f" \
            and (fb is None or fb.pointer.dtype.char == "f"):
        driver.launch_1d(VEC4[family], n // 4, op, *args, n // 4)
    elif n:
        driver.launch_1d(KERNELS[family][0], n, op, *args, n)


def any_compare(op, x, value):
    """Whether any element of `x` (buffer or scalar) is == `value` (op EQ), < it (LT) or >= it
    (GE)."""
    if not isinstance(x, np.ndarray):
        return bool(x == value if op == s.EQ else x < value if op == s.LT else x >= value)
    from . import empty, reduction
    hits = empty(x.shape, np.bool_)
    launch("compare", op, hits, x, x.dtype.type(value))
    return bool(reduction.any_true(hits))
