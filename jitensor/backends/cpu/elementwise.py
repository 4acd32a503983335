"""CPU elementwise kernels: twelve op families (unary, predicate, arith, compare, bitwise,
ternary, math and math2 for the rarer functions of one and two operands, activation and
activation_grad for torch.nn.functional's pointwise layers and their derivatives, loss and
loss_grad for its pointwise losses), each a switch over op codes whose branches loop over
a 1-D slice and call the shared scalar definitions in backends/scalar/elementwise.py.

Why a switch of loops: a switch *inside* the per-element loop measured 1.1-3.7x slower (it
blocks vectorisation), and one kernel per op would mean a separate compile and cache entry for
every op and dtype. Here the op is a runtime integer, so a family compiles once per dtype
signature and layout, and the branch is taken once per block of BLOCK elements. Families are
split by output kind (bool results, integer-only bitwise ops) so each compile stays small.

Every family takes (op, out, a, b, c, d) and ignores what it does not use (unary: x and three
scalar parameters; arith: x, y, alpha; ternary: three operands). Any operand but `out` may be a
scalar (`at` reads it as a constant), so `x + 2` needs no broadcast buffer. Two layouts:
`*_flat` kernels (serial) take small C-contiguous operands of one shape, seen flat inside;
`*_4d` kernels (parallel) take coalesced 4-D views (`strided.as_4d`) and so serve large
operands, broadcasting and every stride pattern."""
import numpy as np
from numba import njit, prange, types
from numba.extending import overload, register_jitable

from ..scalar import elementwise as s, libm, loss as ls
from .kernels import PARALLEL_MIN, num_threads, prange_only, serial
from .strided import as_4d
from .vector import LINE, fence, stream, wide

ndarray = np.ndarray

BLOCK = 4096
# Outputs from this size on are written by streaming stores (`vector.stream`), except by ops
# that compute more than they move. Measured on float32 (2 cores): add of 2^22 elements 1.15x
# faster, of 2^24 1.5x, neg/abs/clamp 1.5x, sqrt 1.35x; add of 2^20 7% slower (its output
# still fits in the caches); exp 0.83x (its arithmetic no longer overlaps the stores).
STREAM_MIN = 1 << 23
_COMPUTE_BOUND = {"unary": {s.EXP, s.LOG, s.LOG1P, s.EXPM1, s.SIN, s.COS, s.TANH, s.SIGMOID},
                  "arith": {s.POW, s.ATAN2, s.FMOD_FLOAT},
                  "math": set(range(s.ERFC + 1)), "math2": {s.HYPOT, s.LOGADDEXP, s.LOGADDEXP2,
                                                           s.XLOGY},
                  "activation": {s.GELU, s.GELU_TANH, s.SILU, s.MISH, s.SOFTPLUS, s.ELU,
                                 s.LOGSIGMOID},
                  "activation_grad": {s.GELU, s.GELU_TANH, s.SILU, s.MISH, s.SOFTPLUS, s.ELU,
                                      s.SELU, s.LOGSIGMOID},
                  "loss": {ls.BCE, ls.BCE_LOGITS, ls.KL_DIV, ls.KL_DIV_LOG},
                  "loss_grad": {ls.BCE_LOGITS, ls.KL_DIV_LOG}}


def at(x, i):
    """x[i] for an array operand, x itself for a scalar one."""


@overload(at, inline="always")
def _at(x, i):
    if isinstance(x, types.Array):
        return lambda x, i: x[i]
    return lambda x, i: x


@register_jitable(_nrt=False)
def _trig_by_libm(op, out, x):
    """Recompute by libm the results of the vectorised sin, cos or tan that the reduction
    could not serve (libm.trig_by_libm): rarely any, so a vectorised count over the slice first."""
    wide()
    n = out.shape[0]
    rest = 0
    for i in range(n):
        rest += libm.trig_by_libm(x[i], out[i])
    if rest == 0:
        return
    for i in range(n):
        if libm.trig_by_libm(x[i], out[i]):
            out[i] = np.sin(x[i]) if op == s.SIN else np.cos(x[i]) if op == s.COS else \
                np.tan(x[i])


# -- the per-family switches: one branch per op, each a loop over the slice -----------------------
@register_jitable(_nrt=False)
def _unary(op, out, x, p, q, r):
    wide()
    n = out.shape[0]
    if op == s.NEG:
        for i in range(n):
            out[i] = -x[i]
    elif op == s.ABS:
        for i in range(n):
            out[i] = abs(x[i])
    elif op == s.SIGN:
        for i in range(n):
            out[i] = s.sign(x[i])
    elif op == s.EXP:
        for i in range(n):
            out[i] = s.exp(x[i])
    elif op == s.LOG:
        for i in range(n):
            out[i] = libm.log(x[i])
    elif op == s.LOG1P:
        for i in range(n):
            out[i] = libm.log1p(x[i])
    elif op == s.EXPM1:
        for i in range(n):
            out[i] = libm.expm1(x[i])
    elif op == s.SQRT:
        for i in range(n):
            out[i] = np.sqrt(x[i])
    elif op == s.RSQRT:
        for i in range(n):
            out[i] = 1 / np.sqrt(x[i])
    elif op == s.SIN:
        for i in range(n):
            out[i] = libm.reduced_sin(x[i])
        _trig_by_libm(op, out, x)
    elif op == s.COS:
        for i in range(n):
            out[i] = libm.reduced_cos(x[i])
        _trig_by_libm(op, out, x)
    elif op == s.TANH:
        for i in range(n):
            out[i] = libm.tanh(x[i])
    elif op == s.SIGMOID:
        for i in range(n):
            out[i] = s.sigmoid(x[i])
    elif op == s.RELU:
        for i in range(n):
            out[i] = s.relu(x[i])
    elif op == s.NAN_TO_NUM:
        for i in range(n):
            out[i] = s.nan_to_num(x[i], p, q, r)
    elif op == s.CLAMP:
        for i in range(n):
            out[i] = s.clamp(x[i], p, q)
    elif op == s.FLOOR:
        for i in range(n):
            out[i] = np.floor(x[i])
    elif op == s.CEIL:
        for i in range(n):
            out[i] = np.ceil(x[i])
    elif op == s.ROUND:
        for i in range(n):
            out[i] = np.rint(x[i])
    elif op == s.TRUNC:
        for i in range(n):
            out[i] = np.trunc(x[i])
    elif op == s.RECIPROCAL:
        for i in range(n):
            out[i] = 1 / x[i]
    elif op == s.SQUARE:
        for i in range(n):
            out[i] = x[i] * x[i]


@register_jitable(_nrt=False)
def _predicate(op, out, x, b, c, d):
    wide()
    n = out.shape[0]
    if op == s.LOGICAL_NOT:
        for i in range(n):
            out[i] = x[i] == 0
    elif op == s.ISNAN:
        for i in range(n):
            out[i] = x[i] != x[i]
    elif op == s.ISINF:
        for i in range(n):
            out[i] = np.isinf(x[i])
    elif op == s.ISFINITE:
        for i in range(n):
            out[i] = np.isfinite(x[i])


@register_jitable(_nrt=False)
def _arith(op, out, x, y, alpha, unused):
    wide()
    n = out.shape[0]
    if op == s.ADD:
        for i in range(n):
            out[i] = s.add(at(x, i), at(y, i), alpha)
    elif op == s.SUB:
        for i in range(n):
            out[i] = s.sub(at(x, i), at(y, i), alpha)
    elif op == s.MUL:
        for i in range(n):
            out[i] = at(x, i) * at(y, i)
    elif op == s.DIV:
        for i in range(n):
            out[i] = at(x, i) / at(y, i)
    elif op == s.FLOOR_DIVIDE:
        for i in range(n):
            out[i] = at(x, i) // at(y, i)
    elif op == s.FLOOR_DIVIDE_FLOAT:
        for i in range(n):
            out[i] = s.floor_divide_float(at(x, i), at(y, i))
    elif op == s.TRUNC_DIVIDE:
        for i in range(n):
            out[i] = s.trunc_divide(at(x, i), at(y, i))
    elif op == s.TRUNC_DIVIDE_FLOAT:
        for i in range(n):
            out[i] = np.trunc(at(x, i) / at(y, i))
    elif op == s.REMAINDER:
        for i in range(n):
            out[i] = at(x, i) % at(y, i)
    elif op == s.FMOD:
        for i in range(n):
            out[i] = s.fmod(at(x, i), at(y, i))
    elif op == s.FMOD_FLOAT:
        for i in range(n):
            out[i] = np.fmod(at(x, i), at(y, i))
    elif op == s.POW:
        for i in range(n):
            out[i] = at(x, i) ** at(y, i)
    elif op == s.POW_INT:
        for i in range(n):
            out[i] = s.int_pow(at(x, i), at(y, i))
    elif op == s.MAXIMUM:
        for i in range(n):
            out[i] = s.maximum(at(x, i), at(y, i))
    elif op == s.MINIMUM:
        for i in range(n):
            out[i] = s.minimum(at(x, i), at(y, i))
    elif op == s.ATAN2:
        for i in range(n):
            out[i] = np.arctan2(at(x, i), at(y, i))


@register_jitable(_nrt=False)
def _compare(op, out, x, y, c, d):
    wide()
    n = out.shape[0]
    if op == s.EQ:
        for i in range(n):
            out[i] = at(x, i) == at(y, i)
    elif op == s.NE:
        for i in range(n):
            out[i] = at(x, i) != at(y, i)
    elif op == s.LT:
        for i in range(n):
            out[i] = at(x, i) < at(y, i)
    elif op == s.LE:
        for i in range(n):
            out[i] = at(x, i) <= at(y, i)
    elif op == s.GT:
        for i in range(n):
            out[i] = at(x, i) > at(y, i)
    elif op == s.GE:
        for i in range(n):
            out[i] = at(x, i) >= at(y, i)
    elif op == s.LOGICAL_AND:
        for i in range(n):
            out[i] = (at(x, i) != 0) & (at(y, i) != 0)
    elif op == s.LOGICAL_OR:
        for i in range(n):
            out[i] = (at(x, i) != 0) | (at(y, i) != 0)
    elif op == s.LOGICAL_XOR:
        for i in range(n):
            out[i] = s.logical_xor(at(x, i), at(y, i))


@register_jitable(_nrt=False)
def _bitwise(op, out, x, y, c, d):
    wide()
    n = out.shape[0]
    if op == s.AND:
        for i in range(n):
            out[i] = at(x, i) & at(y, i)
    elif op == s.OR:
        for i in range(n):
            out[i] = at(x, i) | at(y, i)
    elif op == s.XOR:
        for i in range(n):
            out[i] = at(x, i) ^ at(y, i)
    elif op == s.LSHIFT:
        for i in range(n):
            out[i] = at(x, i) << at(y, i)
    elif op == s.RSHIFT:
        for i in range(n):
            out[i] = at(x, i) >> at(y, i)
    elif op == s.NOT:
        for i in range(n):
            out[i] = ~at(x, i)


@register_jitable(_nrt=False)
def _ternary(op, out, c, x, y, unused):
    wide()
    n = out.shape[0]
    if op == s.WHERE:
        for i in range(n):
            out[i] = at(x, i) if at(c, i) else at(y, i)
    elif op == s.CLAMP_TENSOR:
        for i in range(n):
            out[i] = s.clamp(at(c, i), at(x, i), at(y, i))


@register_jitable(_nrt=False)
def _math(op, out, x, b, c, d):
    wide()
    n = out.shape[0]
    if op == s.TAN:
        for i in range(n):
            out[i] = libm.reduced_tan(x[i])
        _trig_by_libm(op, out, x)
    elif op == s.ASIN:
        for i in range(n):
            out[i] = libm.asin(x[i])
    elif op == s.ACOS:
        for i in range(n):
            out[i] = libm.acos(x[i])
    elif op == s.ATAN:
        for i in range(n):
            out[i] = libm.atan(x[i])
    elif op == s.SINH:
        for i in range(n):
            out[i] = libm.sinh(x[i])
    elif op == s.COSH:
        for i in range(n):
            out[i] = libm.cosh(x[i])
    elif op == s.ASINH:
        for i in range(n):
            out[i] = libm.asinh(x[i])
    elif op == s.ACOSH:
        for i in range(n):
            out[i] = libm.acosh(x[i])
    elif op == s.ATANH:
        for i in range(n):
            out[i] = libm.atanh(x[i])
    elif op == s.LOG2:
        for i in range(n):
            out[i] = libm.log2(x[i])
    elif op == s.LOG10:
        for i in range(n):
            out[i] = libm.log10(x[i])
    elif op == s.EXP2:
        for i in range(n):
            out[i] = libm.exp2(x[i])
    elif op == s.ERF:
        for i in range(n):
            out[i] = libm.erf(x[i])
    elif op == s.ERFC:
        for i in range(n):
            out[i] = libm.erfc(x[i])


@register_jitable(_nrt=False)
def _math2(op, out, x, y, c, d):
    wide()
    n = out.shape[0]
    if op == s.HYPOT:
        for i in range(n):
            out[i] = libm.hypot(at(x, i), at(y, i))
    elif op == s.COPYSIGN:
        for i in range(n):
            out[i] = libm.copysign(at(x, i), at(y, i))
    elif op == s.LOGADDEXP:
        for i in range(n):
            out[i] = s.logaddexp(at(x, i), at(y, i))
    elif op == s.LOGADDEXP2:
        for i in range(n):
            out[i] = s.logaddexp2(at(x, i), at(y, i))
    elif op == s.FMAX:
        for i in range(n):
            out[i] = s.fmax(at(x, i), at(y, i))
    elif op == s.FMIN:
        for i in range(n):
            out[i] = s.fmin(at(x, i), at(y, i))
    elif op == s.XLOGY:
        for i in range(n):
            out[i] = s.xlogy(at(x, i), at(y, i))


@register_jitable(_nrt=False)
def _activation(op, out, x, p, q, r):
    wide()
    n = out.shape[0]
    if op == s.GELU:
        for i in range(n):
            out[i] = s.gelu(x[i])
    elif op == s.GELU_TANH:
        for i in range(n):
            out[i] = s.gelu_tanh(x[i])
    elif op == s.SILU:
        for i in range(n):
            out[i] = s.silu(x[i])
    elif op == s.MISH:
        for i in range(n):
            out[i] = s.mish(x[i])
    elif op == s.SOFTPLUS:
        for i in range(n):
            out[i] = s.softplus(x[i], p, q)
    elif op == s.LEAKY_RELU:
        for i in range(n):
            out[i] = s.leaky_relu(x[i], p)
    elif op == s.ELU:
        for i in range(n):
            out[i] = s.elu(x[i], p, q, r)
    elif op == s.LOGSIGMOID:
        for i in range(n):
            out[i] = s.logsigmoid(x[i])
    elif op == s.HARDSIGMOID:
        for i in range(n):
            out[i] = s.hardsigmoid(x[i])
    elif op == s.HARDSWISH:
        for i in range(n):
            out[i] = s.hardswish(x[i])
    elif op == s.THRESHOLD:
        for i in range(n):
            out[i] = s.threshold(x[i], p, q)


@register_jitable(_nrt=False)
def _activation_grad(op, out, g, x, c, d):
    wide()
    n = out.shape[0]
    if op == s.GELU:
        for i in range(n):
            out[i] = s.gelu_grad(at(g, i), at(x, i))
    elif op == s.GELU_TANH:
        for i in range(n):
            out[i] = s.gelu_tanh_grad(at(g, i), at(x, i))
    elif op == s.SILU:
        for i in range(n):
            out[i] = s.silu_grad(at(g, i), at(x, i))
    elif op == s.MISH:
        for i in range(n):
            out[i] = s.mish_grad(at(g, i), at(x, i))
    elif op == s.SOFTPLUS:
        for i in range(n):
            out[i] = s.softplus_grad(at(g, i), at(x, i), c, d)
    elif op == s.LEAKY_RELU:
        for i in range(n):
            out[i] = s.leaky_relu_grad(at(g, i), at(x, i), c)
    elif op == s.ELU:
        for i in range(n):
            out[i] = s.elu_grad(at(g, i), at(x, i), c, d)
    elif op == s.SELU:
        for i in range(n):
            out[i] = s.selu_grad(at(g, i), at(x, i))
    elif op == s.LOGSIGMOID:
        for i in range(n):
            out[i] = s.logsigmoid_grad(at(g, i), at(x, i))
    elif op == s.HARDSIGMOID:
        for i in range(n):
            out[i] = s.hardsigmoid_grad(at(g, i), at(x, i))
    elif op == s.HARDSWISH:
        for i in range(n):
            out[i] = s.hardswish_grad(at(g, i), at(x, i))
    elif op == s.THRESHOLD:
        for i in range(n):
            out[i] = s.threshold_grad(at(g, i), at(x, i), c)
    elif op == s.HARDTANH:
        for i in range(n):
            out[i] = s.hardtanh_grad(at(g, i), at(x, i), c, d)


@register_jitable(_nrt=False)
def _loss(op, out, x, y, c, d):
    wide()
    n = out.shape[0]
    if op == ls.SMOOTH_L1:
        for i in range(n):
            out[i] = ls.smooth_l1(at(x, i), at(y, i), d)
    elif op == ls.HUBER:
        for i in range(n):
            out[i] = ls.huber(at(x, i), at(y, i), d)
    elif op == ls.BCE:
        for i in range(n):
            out[i] = ls.bce(at(x, i), at(y, i))
    elif op == ls.BCE_LOGITS:
        for i in range(n):
            out[i] = ls.bce_logits(at(x, i), at(y, i), at(c, i))
    elif op == ls.KL_DIV:
        for i in range(n):
            out[i] = ls.kl_div(at(x, i), at(y, i))
    elif op == ls.KL_DIV_LOG:
        for i in range(n):
            out[i] = ls.kl_div_log(at(x, i), at(y, i))


@register_jitable(_nrt=False)
def _loss_grad(op, out, x, y, c, d):
    wide()
    n = out.shape[0]
    if op == ls.SMOOTH_L1:
        for i in range(n):
            out[i] = ls.smooth_l1_grad(at(x, i), at(y, i), d)
    elif op == ls.HUBER:
        for i in range(n):
            out[i] = ls.huber_grad(at(x, i), at(y, i), d)
    elif op == ls.BCE:
        for i in range(n):
            out[i] = ls.bce_grad(at(x, i), at(y, i))
    elif op == ls.BCE_LOGITS:
        for i in range(n):
            out[i] = ls.bce_logits_grad(at(x, i), at(y, i), at(c, i))
    elif op == ls.KL_DIV:
        for i in range(n):
            out[i] = -at(y, i)
    elif op == ls.KL_DIV_LOG:
        for i in range(n):
            out[i] = -libm.exp(at(y, i))


# -- operand access: arrays are sliced, scalars pass through -------------------------------
def _flat(x):
    """x viewed 1-D, or the scalar itself. An array Numba does not type C-contiguous is copied
    first (a no-op for the C-contiguous ones): `launch_fresh` passes small operands unchecked,
    testing their layout in Python would cost more than the copy."""


@overload(_flat, inline="always")
def _flat_impl(x):
    if isinstance(x, types.Array):
        return lambda x: np.ascontiguousarray(x).reshape(-1)
    return lambda x: x


def _row(x, i, j, k, lo, hi):
    """x[i, j, k, lo:hi] of a 4-D view, or the scalar itself."""


@overload(_row, inline="always")
def _row_impl(x, i, j, k, lo, hi):
    if isinstance(x, types.Array):
        return lambda x, i, j, k, lo, hi: x[i, j, k, lo:hi]
    return lambda x, i, j, k, lo, hi: x


def _dense(x):
    """A row as a C-contiguous array: itself at unit stride (typed so), else a gathered copy;
    a scalar passes through."""


@overload(_dense, inline="always")
def _dense_impl(x):
    if isinstance(x, types.Array):
        return lambda x: np.ascontiguousarray(x)
    return lambda x: x


def _span(x, lo, hi):
    """x[lo:hi] of a 1-D row, or the scalar itself."""


@overload(_span, inline="always")
def _span_impl(x, lo, hi):
    if isinstance(x, types.Array):
        return lambda x, lo, hi: x[lo:hi]
    return lambda x, lo, hi: x


@register_jitable
def _work(out):
    """Work items of one row slice of at most BLOCK elements each, so that threads split rows
    and long rows alike (a coalesced contiguous operand is a single row)."""
    n0, n1, n2, n3 = out.shape
    chunks = max(1, (n3 + BLOCK - 1) // BLOCK)
    return n0 * n1 * n2 * chunks, chunks


@register_jitable
def _item(w, out, chunks):
    """(i, j, k, lo, hi): the row and the slice of it that work item w covers."""
    _, n1, n2, n3 = out.shape
    r = w // chunks
    lo = (w % chunks) * BLOCK
    return r // (n1 * n2), r // n2 % n1, r % n2, lo, min(lo + BLOCK, n3)


@register_jitable
def _lines(o, scratch):
    """(s, e): o[:s] reaches the first 64-byte boundary of the contiguous row slice o, and
    o[s:e] holds its whole lines, written through `scratch` by streaming stores (e == s when
    no scratch is given). Splitting off the head keeps the vector stores aligned."""
    head = -o.ctypes.data % LINE
    if head % o.itemsize:
        return 0, 0
    s = min(o.size, head // o.itemsize)
    per_line = LINE // o.itemsize
    return s, s + (o.size - s) // per_line * per_line if scratch.size else s


# -- kernel shells: for each family a serial flat kernel (small contiguous operands, the
# latency path) and a parallel 4-D one (everything else) --------------------------------------
_serial = dict(cache=True, error_model="numpy")  # numpy model: x / 0.0 is inf, no raising


def _shells(family, body):
    """The (flat, 4-D) kernels of the family whose switch is `body`, named `<family>_flat` and
    `<family>_4d` (the name keys each one's on-disk cache)."""
    def flat(op, out, a, b, c, d):
        body(op, out.reshape(-1), _flat(a), _flat(b), _flat(c), d)

    def four_d(op, out, a, b, c, d, tasks, streamed):
        """`tasks` (>= the threads) share the work items; when `streamed`, each item's whole
        cache lines are computed into an L1 scratch row and written by streaming stores."""
        items, chunks = _work(out)

        def run(w, scratch):
            i, j, k, lo, hi = _item(w, out, chunks)
            o = out[i, j, k, lo:hi]
            if o.strides[0] != o.itemsize:  # a strided out=: element by element
                body(op, o, _row(a, i, j, k, lo, hi), _row(b, i, j, k, lo, hi),
                     _row(c, i, j, k, lo, hi), d)
                return
            # rows typed C-contiguous, so the loops vectorise (a row of a 4-D view that Numba
            # types strided ran 10x slower even at unit stride); strided rows are gathered
            oc, x = np.ascontiguousarray(o), _dense(_row(a, i, j, k, lo, hi))
            y, z = _dense(_row(b, i, j, k, lo, hi)), _dense(_row(c, i, j, k, lo, hi))
            s, e = _lines(oc, scratch)
            n = oc.size
            body(op, oc[:s], _span(x, 0, s), _span(y, 0, s), _span(z, 0, s), d)
            if s < e:
                body(op, scratch[:e - s], _span(x, s, e), _span(y, s, e), _span(z, s, e), d)
                stream(oc[s:e], scratch[:e - s])
            body(op, oc[e:], _span(x, e, n), _span(y, e, n), _span(z, e, n), d)

        if serial(out.size):
            none = np.empty(0, out.dtype)
            for w in range(items):
                run(w, none)
            return
        tasks = min(tasks, items)
        for t in prange(tasks):
            scratch = np.empty(BLOCK if streamed else 0, out.dtype)
            for w in range(items * t // tasks, items * (t + 1) // tasks):
                run(w, scratch)
            if streamed:
                fence()

    flat.__name__ = flat.__qualname__ = family + "_flat"
    four_d.__name__ = four_d.__qualname__ = family + "_4d"
    return njit(**_serial)(flat), njit(**_serial, parallel=prange_only())(four_d)


_KERNELS = {family: _shells(family, body) for family, body in (
    ("unary", _unary), ("predicate", _predicate), ("arith", _arith), ("compare", _compare),
    ("bitwise", _bitwise), ("ternary", _ternary), ("math", _math), ("math2", _math2),
    ("activation", _activation), ("activation_grad", _activation_grad), ("loss", _loss),
    ("loss_grad", _loss_grad))}
_FLAT = {family: kernels[0] for family, kernels in _KERNELS.items()}


def _streamed(family, op, out):
    return out.nbytes >= STREAM_MIN and op not in _COMPUTE_BOUND.get(family, ())


# -- in place: out = out op y --------------------------------------------------------------------
INPLACE = (s.ADD, s.SUB, s.MUL, s.DIV)  # the arith ops with an in-place kernel


@register_jitable(_nrt=False)
def _arith_inplace(op, out, y, alpha):
    """_arith's loops of INPLACE with x = out. Called as _arith(op, out, out, y), each loop
    failed its run-time test that out and x do not overlap (they are the same array) and ran
    unvectorised: an in-place add of 2^15 float32 took 11 us, into a fresh out 5."""
    wide()
    n = out.shape[0]
    if op == s.ADD:
        for i in range(n):
            out[i] = s.add(out[i], at(y, i), alpha)
    elif op == s.SUB:
        for i in range(n):
            out[i] = s.sub(out[i], at(y, i), alpha)
    elif op == s.MUL:
        for i in range(n):
            out[i] = out[i] * at(y, i)
    else:
        for i in range(n):
            out[i] = out[i] / at(y, i)


@njit(**_serial)
def arith_inplace_flat(op, out, y, alpha):
    """out = out op y for op in INPLACE, out C-contiguous, y a C-contiguous array of out's shape
    or a scalar."""
    _arith_inplace(op, out.reshape(-1), _flat(y), alpha)


@njit(**_serial, parallel=prange_only())
def arith_inplace(op, out, y, alpha, tasks):
    """arith_inplace_flat in `tasks` slices on the thread pool."""
    o, v = out.reshape(-1), _flat(y)
    n = o.size
    if serial(n):
        _arith_inplace(op, o, v, alpha)
        return
    for t in prange(tasks):
        lo, hi = n * t // tasks, n * (t + 1) // tasks
        _arith_inplace(op, o[lo:hi], _span(v, lo, hi), alpha)


def _inplace(family, op, out, a, b, c):
    """Run `out = a op b` (alpha c; a is out) by arith_inplace when it can (op in INPLACE, b
    a scalar, a dense array of out's shape, or one element broadcast, which is read as a
    scalar: a full reduction's gradient); False when it is not."""
    if op not in INPLACE or family != "arith" or not out.flags.c_contiguous:
        return False
    if b.__class__ is ndarray and not (b.flags.c_contiguous and b.shape == out.shape):
        b = _one(b)
        if b.__class__ is ndarray:
            return False
    if out.size < PARALLEL_MIN:
        arith_inplace_flat(op, out, b, c)
    else:
        arith_inplace(op, out, b, c, 4 * num_threads())
    return True


def launch(family, op, out, a, b=0, c=0, d=0):
    """Run op `op` of `family` into the array `out`. Array operands have out's shape (broadcast
    views are fine) or are scalars already in the compute dtype; none may overlap `out` unless it
    is exactly `out` (in place)."""
    if a is out and _inplace(family, op, out, a, b, c):
        return
    flat, nd = _KERNELS[family]
    n = out.size
    if n < PARALLEL_MIN and out.flags.c_contiguous:
        # small: the flat kernel, which copies strided and broadcast operands contiguous (a
        # 64x10 + row: 20 -> 3 us; the 4-D kernel's per-row work cost 0.13 us a row)
        flat(op, out, a, b, c, d)
        return
    shape = out.shape
    # inline tests: this is on the path of every op, where each call costs ~0.1 µs
    dense = out.flags.c_contiguous \
        and (a.__class__ is not ndarray or a.shape == shape and a.flags.c_contiguous) \
        and (b.__class__ is not ndarray or b.shape == shape and b.flags.c_contiguous) \
        and (c.__class__ is not ndarray or c.shape == shape and c.flags.c_contiguous)
    if dense:
        flat4 = (1, 1, 1, n)
        nd(op, out.reshape(flat4), *(x.reshape(flat4) if x.__class__ is ndarray else x
                                     for x in (a, b, c)), d, 4 * num_threads(),
           _streamed(family, op, out))
    elif n:
        operands = (a, b, c)
        arrays = [x for x in operands if x.__class__ is ndarray]
        tasks, streamed = 4 * num_threads(), _streamed(family, op, out)
        for views in as_4d(out, *arrays):
            rest = iter(views[1:])
            nd(op, views[0], *(next(rest) if x.__class__ is ndarray else x
                               for x in operands), d, tasks, streamed)


def launch_fresh(family, op, out, a, b, c=0, d=0):
    """`launch` for the small-op fast paths: `out` newly allocated (C-contiguous), `a` an array
    of its shape, `b` one too or a scalar, `c` and `d` scalars. Skips launch's general layout
    tests, which cost more than the kernel on 2x3 operands (the flat kernel copies a small
    strided operand)."""
    if a is out and _inplace(family, op, out, a, b, c):
        return
    if out.size < PARALLEL_MIN:
        if not a.flags.c_contiguous and family not in _ONE_INPUT:
            a = _one(a)
        if b.__class__ is ndarray and not b.flags.c_contiguous:
            b = _one(b)
        _FLAT[family](op, out, a, b, c, d)
    else:
        launch(family, op, out, a, b, c, d)


_ONE_INPUT = ("unary", "predicate", "math", "activation")  # families whose input is an array


def _one(x):
    """A strided operand's one element when it is that element everywhere (stride 0 in every
    dim: the expanded gradient of a full reduction), as a number: the flat kernel would copy
    it contiguous first (g * 2 of an expanded 2^15: 14 -> 5 us)."""
    return x[(0,) * x.ndim] if x.size and not any(x.strides) else x


@njit(cache=True)
def _any_4d(op, x, value):
    n0, n1, n2, n3 = x.shape
    for i in range(n0):
        for j in range(n1):
            for k in range(n2):
                for m in range(n3):
                    v = x[i, j, k, m]
                    if op == s.EQ and v == value or op == s.LT and v < value or \
                            op == s.GE and v >= value:
                        return True
    return False


def any_compare(op, x, value):
    """Whether any element of `x` (array or scalar) is == `value` (op EQ), < it (LT) or >= it
    (GE): the checks that must pass before an integer division, a power or a scatter writes
    anything."""
    if x.__class__ is not np.ndarray:
        return bool(x == value if op == s.EQ else x < value if op == s.LT else x >= value)
    return x.size > 0 and any(_any_4d(op, v, value) for (v,) in as_4d(x))
