"""CPU elementwise kernels: the op families of kernels/scalar/table.py (unary, predicate,
arith, compare, bitwise, ternary, the rarer math functions, the activations and pointwise losses
and their derivatives), each a switch over op codes generated from the family's rows, whose
branches loop over a 1-D slice calling the op's formula.

Why a switch of loops: a switch *inside* the per-element loop measured slower (it blocks
vectorisation). The switch of a kernel holds one op's loop: each op compiles, on first use,
only for the dtype signatures it is called with (a switch of the family's every op compiled
them all for each signature, most never called; docs/design.md has the cold-start figures).
The op code stays an argument, tested once per block of BLOCK elements.

Every family takes (op, out, a, b, c, d) and ignores what it does not use (unary: x and three
scalar parameters; arith: x, y, alpha; ternary: three operands). Any operand but `out` may be a
scalar (`at` reads it as a constant), so `x + 2` needs no broadcast buffer. Two paths:
`*_flat` kernels (serial, one per op) take small C-contiguous operands of one shape, seen flat
inside (`_flat`); the parallel driver `four_d`, one for every op, takes coalesced
4-D views (`strided.as_4d`), and so serves large operands, broadcasting and every stride pattern,
calling the op's row function (`*_row`, a cfunc) by address."""
import ast
import threading

import numba
import numpy as np
from numba import carray, cfunc, njit, prange, typeof, types
from numba.extending import overload, register_jitable

from ..scalar import elementwise as s
from ..scalar import libm, table
from ..scalar import loss as ls  # noqa: F401 (named by the generated formulas)
from ..scalar import special as sp  # noqa: F401 (named by the generated formulas)
from . import narrow
from .kernels import PARALLEL_MIN, num_threads, prange_only, serial
from .strided import any_layout, as_4d
from .vector import LINE, call, fence, pointer, stream, wide

ndarray = np.ndarray

BLOCK = 4096
# Rows shorter than this (after coalescing) cost four_d more per row than per element (a row's
# work item ~0.17 us: (2048, 32) + a bias row took 340 us, torch 6): into a C-contiguous out,
# such operands are copied C-contiguous first, one pass over each, and run as one row.
SHORT_ROW = 512
# Below this size a bias row broadcast into a C-contiguous out is read in place by the serial
# rows kernel, which beat the 4-D path at every size measured, on 1 and 2 threads: (256, 256) +=
# row 37 -> 7 us, (16384, 256) 2.5 -> 0.67 ms. (A dense copy of the row came first there.)
ROWS_MAX = 1 << 22
# Outputs from this size on are written by streaming stores (`vector.stream`), except by ops
# that compute more than they move. Measured on float32 (2 cores): add of 2^22 elements 1.15x
# faster, of 2^24 1.5x, neg/abs/clamp 1.5x, sqrt 1.35x; add of 2^20 7% slower (its output
# still fits in the caches); exp 0.83x (its arithmetic no longer overlaps the stores).
STREAM_MIN = 1 << 23
_HEAVY = {family: {code for code, *_, heavy in table.switch_cases(family) if heavy}
          for family in table.KERNELS}  # ops that compute more than they move


def at(x, i):
    """x[i] for an array operand, x itself for a scalar one."""


@overload(at, inline="always")
def _at(x, i):
    if isinstance(x, types.Array):
        return lambda x, i: x[i]
    return lambda x, i: x


@register_jitable(_nrt=False)
def _trig_by_libm(kind, out, x):
    """Recompute by libm the results of the vectorised sin, cos or tan (kind 0, 1, 2) that the
    reduction could not serve (libm.trig_by_libm): rarely any, so a vectorised count over the
    slice first."""
    wide()
    n = out.shape[0]
    rest = 0
    for i in range(n):
        rest += libm.trig_by_libm(x[i], out[i])
    if rest == 0:
        return
    for i in range(n):
        if libm.trig_by_libm(x[i], out[i]):
            out[i] = np.sin(x[i]) if kind == 0 else np.cos(x[i]) if kind == 1 else np.tan(x[i])


# -- the per-family switches, generated from the op table: one branch per op, each a loop over
# the slice ----------------------------------------------------------------------------------------
class _Elements(ast.NodeTransformer):
    """A formula's operands read at element i: `at(x, i)`, or the expression `reads` gives."""

    def __init__(self, reads):
        self.reads = reads

    def visit_Name(self, node):
        read = self.reads.get(node.id)
        return ast.parse(read, mode="eval").body if read else node


def _element(formula, reads):
    return ast.unparse(_Elements(reads).visit(ast.parse(formula, mode="eval")))


def _switch(family, name, parameters, reads, cases):
    """Define the switch `name`(op, out, *parameters) over `cases` (kernels/scalar/table.py's
    switch_cases) here, under that name (which pickles it by reference in its kernels' cache
    keys), as a helper the kernels inline."""
    lines = [f"def {name}(op, out, {', '.join(parameters)}):", "    wide()", "    n = out.shape[0]"]
    for k, (code, _, formula, then, _) in enumerate(cases):
        lines += [f"    {'elif' if k else 'if'} op == {code}:", "        for i in range(n):",
                  f"            out[i] = {_element(formula, reads)}"]
        lines += [f"        {then}"] if then else []
    exec(compile("\n".join(lines), f"<{family} switch of {__name__}>", "exec"), globals())
    return register_jitable(_nrt=False)(globals()[name])


def _op_switch(family, op):
    """The switch of op code `op` alone, `_<family>_<op>`: a kernel compiles only its op's loop
    (a family's every loop took 1-3.5 s per dtype signature, mostly for ops never called)."""
    parameters = table.ARGUMENTS[family]
    return _switch(family, f"_{family}_{op}", parameters,
                   {p: f"at({p}, i)" for p in parameters[:3]},
                   [case for case in table.switch_cases(family) if case[0] == op])


# -- operand access: arrays are sliced, scalars pass through -------------------------------
def _flat(x):
    """x viewed 1-D, or the scalar itself. An array Numba does not type C-contiguous is copied
    first (the launchers pass C-contiguous ones to flat kernels, `out` always). A 1-D one is
    itself: a reshape compiles for every signature, half of a flat kernel's are 1-D."""


@overload(_flat, inline="always")
def _flat_impl(x):
    if not isinstance(x, types.Array):
        return lambda x: x
    if x.layout != "C":
        return lambda x: np.ascontiguousarray(x).reshape(-1)
    return (lambda x: x) if x.ndim == 1 else (lambda x: x.reshape(-1))


def _row(x, i, j, k, lo, hi):
    """x[i, j, k, lo:hi] of a 4-D view, x[i, j, k] of a 3-D one (a value per row), or the
    scalar itself."""


@overload(_row, inline="always")
def _row_impl(x, i, j, k, lo, hi):
    if isinstance(x, types.Array) and x.ndim == 3:
        return lambda x, i, j, k, lo, hi: x[i, j, k]
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


ROW_MIN = 16  # elements of a broadcast row worth a loop per row (shorter: one copy, one loop)


def _bias_row(x):
    """x's one row when x is an array that is a last-dim row of at least ROW_MIN elements
    broadcast over its other dims (a bias added to every row: strides 0 but the last, which is
    unit), as a 1-D view; else None."""
    if x.__class__ is not ndarray or x.ndim < 2 or x.shape[-1] < ROW_MIN \
            or x.strides[-1] != x.itemsize or any(x.strides[:-1]):
        return None
    return x[(0,) * (x.ndim - 1)]


def _column(x):
    """x's values, one per row of its last dim, as a 1-D view when x is an array of at least
    ROW_MIN columns broadcast along that dim from a C-contiguous column (strides 0 in the last
    dim: a keepdim reduction expanded); else None."""
    if x.__class__ is not ndarray or x.ndim < 2 or x.shape[-1] < ROW_MIN or x.strides[-1]:
        return None
    column = x[..., 0]
    return column.reshape(-1) if column.flags.c_contiguous else None


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


# -- kernel shells: for each op a serial flat kernel (small contiguous operands, the latency
# path), a rows kernel (a bias row broadcast down a small out) and row functions for the
# parallel 4-D driver --------------------------------------------------------------------------
_serial = dict(cache=True, error_model="numpy")  # numpy model: x / 0.0 is inf, no raising


def _shells(family, body):
    """The (flat, rows, row, columns) kernels of the family whose switch is `body`, named
    `<family>_flat`, ... (the name keys each one's on-disk cache); `row` is the Python function
    of its row functions (compiled by `_row_function`). Each compiles on first call, for the
    signatures it is called with."""
    def flat(op, out, a, b, c, d):
        body(op, _flat(out), _flat(a), _flat(b), _flat(c), d)

    def rows(op, out, a, b, c, d, row):
        """flat's work with operand `row` (1: a, 2: b) one row of out's last dim, read in place
        for every row of out (`_bias_row`); the other an array of out's shape or a scalar."""
        o, n = out.reshape(-1), out.shape[-1]
        x, y = _flat(a), _flat(b)
        for lo in range(0, o.size, n):
            body(op, o[lo:lo + n], x if row == 1 else _span(x, lo, lo + n),
                 y if row == 2 else _span(y, lo, lo + n), c, d)

    def row(op, out, a, b, c, d, n):
        """The op on n elements, out and the array operands given as pointers to their first
        (`_row_function`)."""
        body(op, carray(out, n), _elements(a, n), _elements(b, n), _elements(c, n), d)

    def columns(op, out, a, b, c, d, column):
        """flat's work with operand `column` (1: a, 2: b) one value per row of out's last dim
        (`_column`: x - x.mean(-1, keepdim=True)), a number for each row's loop; the other an
        array of out's shape or a scalar."""
        o, n = out.reshape(-1), out.shape[-1]
        x, y = _flat(a), _flat(b)
        if column == 1:
            for r in range(o.size // n):
                body(op, o[r * n:(r + 1) * n], at(x, r), _span(y, r * n, (r + 1) * n), c, d)
        else:
            for r in range(o.size // n):
                body(op, o[r * n:(r + 1) * n], _span(x, r * n, (r + 1) * n), at(y, r), c, d)

    flat.__name__ = flat.__qualname__ = family + "_flat"
    rows.__name__ = rows.__qualname__ = family + "_rows"
    row.__name__ = row.__qualname__ = family + "_row"
    columns.__name__ = columns.__qualname__ = family + "_columns"
    return njit(**_serial)(flat), njit(**_serial)(rows), row, njit(**_serial)(columns)


def _elements(x, n):
    """The n elements pointer x points at, as a 1-D array; a scalar x itself."""


@overload(_elements, inline="always")
def _elements_impl(x, n):
    if isinstance(x, types.CPointer):
        return lambda x, n: carray(x, n)
    return lambda x, n: x


def _address(x, i):
    """The address of x[i] for an array operand, x itself for a scalar one."""


@overload(_address, inline="always")
def _address_impl(x, i):
    if isinstance(x, types.Array):
        return lambda x, i: pointer(x, i)
    return lambda x, i: x


def _argument(x):
    """The type a row function takes for operand x: a pointer for an array, else x's own."""
    if x.__class__ is ndarray:
        return types.CPointer(numba.from_dtype(x.dtype))
    return typeof(x)


# The 4-D path runs op `op` through `four_d` and the op's row function, both found under the
# key (family, op, out's dtype, each operand's dtype or class).
_ROWS = {}  # key -> the address of the row function (a cfunc)
_ROW_FUNCTIONS = []  # the cfuncs, kept alive
_BUILDS = {}  # (key, all arrays aligned) -> the build of four_d for views of any layout


def _row_function(key, kernels, out, a, b, c, d):
    """The address of the row function of `key`'s op for operands like these: the op's loop
    alone, serial and small, a cfunc compiled now. One parallel driver, `four_d`, serves every
    op of the same operand types through it (a parallel kernel per op compiled in 1.5-4 s a
    signature, a row function compiles in about a tenth of that)."""
    with _made:
        if key not in _ROWS:
            signature = types.void(types.int64, *(_argument(x) for x in (out, a, b, c, d)),
                                   types.intp)
            _ROW_FUNCTIONS.append(cfunc(signature, **_serial)(kernels[2]))
            _ROWS[key] = _ROW_FUNCTIONS[-1].address
    return _ROWS[key]


@register_jitable
def _call(row, op, dst, x, y, z, d, lo):
    """The row function at address `row` on dst (C-contiguous, 1-D) and the operands'
    elements lo to lo + dst.size."""
    call(row, (op, pointer(dst, 0), _address(x, lo), _address(y, lo), _address(z, lo), d,
               dst.size))


@njit(**_serial)
def _run(row, op, out, a, b, c, d, w, chunks, scratch, streamed):
    """Work item w of `four_d`."""
    i, j, k, lo, hi = _item(w, out, chunks)
    o = out[i, j, k, lo:hi]
    # rows made C-contiguous (a row of a 4-D view that Numba types strided ran 10x slower
    # even at unit stride): strided ones are gathered
    x, y = _dense(_row(a, i, j, k, lo, hi)), _dense(_row(b, i, j, k, lo, hi))
    z = _dense(_row(c, i, j, k, lo, hi))
    n = hi - lo
    if o.strides[0] != o.itemsize:  # a strided out=: computed into scratch, then copied
        _call(row, op, scratch[:n], x, y, z, d, 0)
        for m in range(n):
            o[m] = scratch[m]
        return
    oc = np.ascontiguousarray(o)
    s, e = _lines(oc, scratch if streamed else scratch[:0])
    if s:
        _call(row, op, oc[:s], x, y, z, d, 0)
    if s < e:
        _call(row, op, scratch[:e - s], x, y, z, d, s)
        stream(oc[s:e], scratch[:e - s])
    _call(row, op, oc[e:], x, y, z, d, e)


@njit(**_serial, parallel=prange_only())
def four_d(row, op, out, a, b, c, d, tasks, streamed):
    """Op `op` by its row function at address `row` (`_row_function`) on coalesced 4-D views
    (`strided.as_4d`). `tasks` (>= the threads) share the work items; when `streamed`, each
    item's whole cache lines are computed into an L1 scratch row and written by streaming
    stores. Compiled per operand types, whatever the op."""
    items, chunks = _work(out)
    one_thread = serial(out.size)
    streamed = streamed and not one_thread  # on one thread, plain stores measured faster
    if one_thread:
        scratch = np.empty(BLOCK, out.dtype)
        for w in range(items):
            _run(row, op, out, a, b, c, d, w, chunks, scratch, streamed)
        return
    tasks = min(tasks, items)
    for t in prange(tasks):
        scratch = np.empty(BLOCK, out.dtype)
        for w in range(items * t // tasks, items * (t + 1) // tasks):
            _run(row, op, out, a, b, c, d, w, chunks, scratch, streamed)
        if streamed:
            fence()


# family -> op code -> (flat, rows, row) kernels of that op, None until first use (lists: a launch
# indexes them without building a key)
_KERNELS = {family: [None] * (1 + max(case[0] for case in table.switch_cases(family)))
            for family in table.KERNELS}
_made = threading.Lock()


def _kernels(family, op):
    """The kernels of op code `op` of `family` (`_shells`: `<family>_<op>_flat`, ...). Made on
    first use, under a lock: each kernel's cache key pickles its switch by reference to the
    module global of that name, which must stay the same object."""
    with _made:
        kernels = _KERNELS[family][op]
        if kernels is None:
            kernels = _KERNELS[family][op] = _shells(f"{family}_{op}", _op_switch(family, op))
    return kernels


def _streamed(family, op, out):
    return out.nbytes >= STREAM_MIN and op not in _HEAVY[family]


# -- in place: out = out op y --------------------------------------------------------------------
INPLACE = table.codes("arith", "add", "sub", "mul", "div")  # the ops with an in-place kernel
# _arith's loops of INPLACE with x = out. Called as _arith(op, out, out, y), each loop failed its
# run-time test that out and x do not overlap (they are the same array) and ran unvectorised:
# an in-place add of 2^15 float32 took 11 us, into a fresh out 5.
_arith_inplace = _switch("arith", "_arith_inplace", ("y", "alpha"),
                         {"x": "out[i]", "y": "at(y, i)"},
                         [case for case in table.switch_cases("arith") if case[0] in INPLACE])


@njit(**_serial)
def arith_inplace_flat(op, out, y, alpha):
    """out = out op y for op in INPLACE, out C-contiguous, y a C-contiguous array of out's shape
    or a scalar."""
    _arith_inplace(op, out.reshape(-1), _flat(y), alpha)


@njit(**_serial)
def arith_inplace_rows(op, out, row, alpha):
    """out = out op row for op in INPLACE, out C-contiguous, `row` (1-D) one row of its last
    dim broadcast down every row (`_bias_row`)."""
    o, n = out.reshape(-1), row.size
    for lo in range(0, o.size, n):
        _arith_inplace(op, o[lo:lo + n], row, alpha)


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
    a scalar, a dense array of out's shape, a row broadcast down a small out, or one element
    broadcast, which is read as a scalar: a full reduction's gradient); False when it is
    not."""
    if op not in INPLACE or family != "arith" or not out.flags.c_contiguous:
        return False
    if b.__class__ is ndarray and not (b.flags.c_contiguous and b.shape == out.shape):
        b = _one(b)
        if b.__class__ is ndarray:
            row = _bias_row(b) if out.size < ROWS_MAX else None
            if row is None:
                return False
            arith_inplace_rows(op, out, row, c)
            return True
    if not FLAT_NDIM[out.ndim]:
        out, b = out.ravel(), _raveled(b)
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
    kernels = _KERNELS[family][op] or _kernels(family, op)
    n = out.size
    dense = out.flags.c_contiguous
    if a.__class__ is ndarray and not a.flags.c_contiguous:
        a = _one(a)  # (an operand the same everywhere, as an expanded gradient: a number)
    if b.__class__ is ndarray and not b.flags.c_contiguous:
        b = _one(b)
    if dense and n < ROWS_MAX and (a.__class__ is ndarray and not a.flags.c_contiguous
                                   and _by_rows(kernels, op, out, a, b, c, d, 1)
                                   or b.__class__ is ndarray and not b.flags.c_contiguous
                                   and _by_rows(kernels, op, out, a, b, c, d, 2)):
        return  # a bias row, read in place by the serial rows kernel
    if n < PARALLEL_MIN and dense:
        # small: the flat kernel, on strided and broadcast operands copied contiguous here (a
        # 64x10 + row: 20 -> 3 us; the 4-D kernel's per-row work cost 0.13 us a row)
        if FLAT_NDIM[out.ndim]:
            kernels[0](op, out, _dense_copy(a), _dense_copy(b), _dense_copy(c), d)
        else:
            kernels[0](op, out.ravel(), _raveled(a), _raveled(b), _raveled(c), d)
        return
    if not n:
        return
    operands = (a, b, c)
    shape = out.shape
    if d.__class__ is int and c.__class__ is not ndarray:
        # d typed as c (an int d is most families' unused default, next to a float alpha or
        # parameter): four_d compiled once more for an int d, ~1 s
        d = c.__class__(d)
    key = (family, op, out.dtype, a.dtype if a.__class__ is ndarray else a.__class__,
           b.dtype if b.__class__ is ndarray else b.__class__,
           c.dtype if c.__class__ is ndarray else c.__class__, d.__class__)
    row = _ROWS.get(key)
    if row is None:
        if narrow.any_narrow((out, *operands)):  # no row function: computed in float32
            return narrow.call(launch, (family, op, out, a, b, c, d))
        row = _row_function(key, kernels, out, *operands, d)
    tasks, streamed = 4 * num_threads(), _streamed(family, op, out)
    slabs = None
    if not (dense and all(x.__class__ is not ndarray or x.shape == shape and x.flags.c_contiguous
                          for x in operands)):
        slabs = as_4d(out, *(x for x in operands if x.__class__ is ndarray))
        view = slabs[0][0]
        if dense and len(slabs) == 1 and view.shape[3] < SHORT_ROW and view.shape[2] > 1:
            operands, slabs = [_dense_copy(x) for x in operands], None
    if slabs is None:
        # dense: one row, no coalescing to work out, through a build typed C-contiguous (the
        # general build's per-row layout tests cost 15% of an add of 2^17 float32)
        flat4 = (1, 1, 1, n)
        four_d(row, op, out.reshape(flat4),
               *(x.reshape(flat4) if x.__class__ is ndarray else x for x in operands), d, tasks,
               streamed)
        return
    key = key, all(x.flags.aligned for x in (out, *operands) if x.__class__ is ndarray)
    build = _BUILDS.get(key)
    for slab in slabs:
        rest = iter(slab[1:])
        views = (slab[0], *(next(rest) if x.__class__ is ndarray else x for x in operands))
        if build is None:
            build = _BUILDS[key] = any_layout(four_d, row, op, *views, d, tasks, streamed)
        build(row, op, *views, d, tasks, streamed)


def launch_fresh(family, op, out, a, b, c=0, d=0):
    """`launch` for the small-op fast paths: `out` newly allocated (C-contiguous), `a` an array
    of its shape, `b` one too or a scalar, `c` and `d` scalars. Skips launch's general layout
    tests, which cost more than the kernel on 2x3 operands (the flat kernel copies a small
    strided operand)."""
    if a is out and _inplace(family, op, out, a, b, c):
        return
    if out.size < PARALLEL_MIN:
        kernels = _KERNELS[family][op] or _kernels(family, op)
        if not a.flags.c_contiguous:
            if family not in _ONE_INPUT:
                a = _one(a)
                if _by_rows(kernels, op, out, a, b, c, d, 1):
                    return
            a = _dense_copy(a)
        if b.__class__ is ndarray and not b.flags.c_contiguous:
            b = _one(b)
            if _by_rows(kernels, op, out, a, b, c, d, 2):
                return
            b = _dense_copy(b)
        if FLAT_NDIM[out.ndim]:
            kernels[0](op, out, a, b, c, d)
        else:
            kernels[0](op, out.ravel(), _raveled(a), _raveled(b), c, d)
    else:
        launch(family, op, out, a, b, c, d)


_ONE_INPUT = ("unary", "predicate", "math", "activation")  # families whose input is an array


# A flat kernel compiles per type of its operands (0.1-0.3 s each): per dtype mix, layout and
# ndim. Operands of 1 or 2 dims, the common ones, are passed as they are, C-contiguous (a ravel
# costs ~40 ns an operand, 15% of x + y on 2x3); the others are raveled to 1-D, so that 0-D and
# 3-D to 6-D share the 1-D kernels (a clean test run compiled 1,696 flat kernels for 852 op and
# dtype mixes).
FLAT_NDIM = [False, True, True] + [False] * 62  # indexed by ndim (NumPy's limit is 64)


def _dense_copy(x):
    """An array operand copied C-contiguous if it is not; a scalar as it is."""
    return np.ascontiguousarray(x) if x.__class__ is ndarray and not x.flags.c_contiguous else x


def _raveled(x):
    """An array operand as a 1-D C-contiguous array (a view when it is C-contiguous, else a
    copy); a scalar as it is."""
    return x.ravel() if x.__class__ is ndarray else x


def _by_rows(kernels, op, out, a, b, c, d, k):
    """Run the rows kernel when operand k (1: a, 2: b), which is not C-contiguous, is one row
    broadcast down a small out (x + bias: read in place, where the flat kernel would copy it
    out first), or the columns kernel when it is one column broadcast along out's rows (x /
    norm); False when it is neither. Called only for such operands, off the common path."""
    if c.__class__ is ndarray:
        return False
    x = a if k == 1 else b
    row = _bias_row(x)
    if row is not None:
        kernels[1](op, out, *((row, b) if k == 1 else (a, row)), c, d, k)
        return True
    column = _column(x)
    if column is None:
        return False
    kernels[3](op, out, *((column, b) if k == 1 else (a, column)), c, d, k)
    return True


def _one(x):
    """A strided operand's one element when it is that element everywhere (stride 0 in every
    dim: the expanded gradient of a full reduction), as a number: the flat kernel would copy
    it contiguous first."""
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
