"""CUDA elementwise kernels: the op families of kernels/scalar/table.py, each a switch over the
same op codes calling the same formulas as the CPU's (generated from the same rows), run as a
grid-stride loop with one element per thread step. On the GPU the op switch sits
inside the loop: every thread of a launch takes the same branch, so it costs a few
instructions, and one compile per family and dtype signature serves every op.

Each family has two shells: `*_dense` for C-contiguous operands of one shape, walked flat
(a buffer comes as pointer and element offset), and the strided one for everything else: a
4-D view (`strided.as_4d`) where a buffer comes as pointer, offset and four element strides.
Scalar operands take a buffer's place (`at` returns them as they are)."""
import numpy as np
from numba import cuda, float32
from numba.extending import register_jitable

from ..cpu.strided import as_4d
from ..scalar import elementwise as s
from ..scalar import libm, table  # noqa: F401 (libm: named by the generated formulas)
from ..scalar import loss as ls  # noqa: F401 (named by the generated formulas)
from ..scalar import special as sp  # noqa: F401 (named by the generated formulas)
from . import driver, memory
from .access import at, load4, offset4, store, store4  # noqa: F401 (store: the switches')
from .memory import pointer, strides


def _family_switch(family):
    """The family's switch, generated from its rows (kernels/scalar/table.py) and defined here
    under the name `_<family>` (which pickles it by reference in its kernels' cache keys): each
    op's formula stored at index k of o."""
    name, parameters = "_" + family, table.ARGUMENTS[family]
    lines = [f"def {name}(op, o, k, {', '.join(parameters)}):"]
    for n, (code, formula, *_) in enumerate(table.switch_cases(family)):
        lines += [f"    {'elif' if n else 'if'} op == {code}:", f"        store(o, k, {formula})"]
    exec(compile("\n".join(lines), f"<{family} switch of {__name__}>", "exec"), globals())
    return register_jitable(globals()[name])


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


_SWITCHES = {family: _family_switch(family) for family in table.KERNELS}
_unary, _arith = _SWITCHES["unary"], _SWITCHES["arith"]  # (the 128-bit kernels' below)
KERNELS = {family: _shells(family, switch) for family, switch in _SWITCHES.items()}
# each kernel under its own name too, as in the other kernel modules: CI's PTX check imports
# every launched kernel by module and name
globals().update((kernel.py_func.__name__, kernel) for pair in KERNELS.values() for kernel in pair)


# -- float32 in 128-bit accesses: four elements per thread step (on an H200, 4310 GB/s
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
