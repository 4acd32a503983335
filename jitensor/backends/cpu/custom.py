"""CPU kernels for user-written ops (`jitensor/custom.py`): code generation, disk cache, launch.

Numba caches a kernel only when it is a module-level function of a source file, and a kernel
built in a factory (a closure) or one taking the scalar function as an argument misses that
cache. So each user op gets a small generated module: a source file in `kernel_dir()` whose
name carries a hash of everything the compiled code depends on (the user's code and the
values it reads, see `custom.fingerprint`; this file's templates; the jitensor helpers they
import), so an edit makes a new file and a second process loads the compiled kernels from disk.
The user's function is not imported by the file: it is set as the global `_fn` before the file
runs, so any function works; one whose fingerprint cannot be taken (a closure, an unhashable
global) runs the same source in memory, compiled once per process.

Per op the file defines `body` (the user's function, inlined), `result` (compiled per argument
types only to learn the body's return type: the front end's dtype rule needs it) and the loops:
`flat` (serial, small C-contiguous operands) and `nd` (parallel above PARALLEL_MIN, the
coalesced 4-D views of `strided.as_4d`: broadcasting and any strides) for elementwise ops,
`rows` and `columns` for reductions (parallel over outputs above PARALLEL_MIN: a reduction to
one value folds serially, since combine(acc, x) says nothing of merging two accumulators).

In the body, Python floats (literals, float globals) take the float32 type when the arguments
are float32 (as Python scalars do in torch: `0.5 * x` stays float32), and math.exp, math.tanh,
np.exp and np.tanh (module attributes or imported names) are float32 versions that vectorise
(libm's do not).

A CUDA backend provides the same four functions (`kernels`, `return_kind`, `launch`, `reduce`)
over its own template (`@cuda.jit` loops calling the same inlined body)."""
import hashlib
import importlib.util
import math
import os
import sys
import types as pytypes
import warnings

import numba
import numpy as np
from numba import types
from numba.core.errors import NumbaError
from numba.extending import overload, register_jitable
from numpy.lib.stride_tricks import as_strided

from ..scalar import elementwise as s
from . import elementwise as _elementwise_kernels
from .kernels import PARALLEL_MIN
from .reduction import _contiguous_copy
from .strided import as_4d, coalesce

ndarray = np.ndarray

COLUMN_BLOCK = 512  # outputs a reduction task updates per reduced row: 2 KiB of float32 in L1
COLUMNS_MIN = 16  # fewer kept outputs than this, densest in memory: rows do better
REASSOC = {"reassoc"}  # lets LLVM fold a row over vector lanes (acc + x, max, ...): a blocked
# sum, as the built-in reductions do; a fold that is no such pattern keeps its order


# -- what a body's exp and tanh become: float32 versions that vectorise ----------------------------
# Compiled as calls that Numba does not inline (LLVM does, and vectorises them): two inlined
# copies of one helper in a function trip Numba's SSA checks (NumbaIRAssumptionWarning).
@register_jitable
def exp(x):
    """The built-ins' exp (backends/scalar/elementwise.py): within 1 ulp for float32."""
    return s.exp(x)


def tanh(x):
    """tanh: for float32 Cephes' tanhf without branches (LLVM vectorises it; libm's tanhf is a
    call per element), within 2 ulp; other types use np.tanh."""


@register_jitable
def _tanh_float32(x):
    a = abs(x)
    z = x * x
    small = ((((np.float32(-5.70498872745e-3) * z + np.float32(2.06390887954e-2)) * z
               - np.float32(5.37397155531e-2)) * z + np.float32(1.33314422036e-1)) * z
             - np.float32(3.33332819422e-1)) * z * x + x
    large = np.float32(1.0) - np.float32(2.0) / (s.exp(a + a) + np.float32(1.0))
    small = x if z == np.float32(0.0) else small  # keeps the sign of -0.0 (and tiny x exact)
    return small if a < np.float32(0.625) else (large if x >= np.float32(0.0) else -large)


@overload(tanh)
def _tanh(x):
    if x == types.float32:
        return _tanh_float32
    return lambda x: np.tanh(x)


def _shim(module):
    """A copy of `module` whose exp and tanh are the vectorisable ones."""
    copy = pytypes.ModuleType(module.__name__)
    copy.__dict__.update(module.__dict__)
    copy.exp, copy.tanh = exp, tanh
    return copy


# the body's globals are remapped by identity: the math and numpy modules, and their exp/tanh
# imported by name
_FAST = {id(math): _shim(math), id(np): _shim(np), id(math.exp): exp, id(np.exp): exp,
         id(math.tanh): tanh, id(np.tanh): tanh}


def variant(fn, literal):
    """`fn` with its Python floats (literals and float globals) of type `literal` (None:
    unchanged) and its exp/tanh remapped: what the generated kernels inline."""
    def weak(v):
        return literal(v) if literal is not None and type(v) is float else v
    code = fn.__code__
    code = code.replace(co_consts=tuple(weak(c) for c in code.co_consts))
    names = {k: weak(_FAST.get(id(v), v)) for k, v in fn.__globals__.items()}
    return pytypes.FunctionType(code, names, fn.__name__, fn.__defaults__, fn.__closure__)


def all_float32(*argtypes):
    """Whether a body's arguments (Numba types) are all float32: then its literals are too."""
    return all(t == types.float32 for t in argtypes)


# -- the generated module ---------------------------------------------------------------------
_HEADER = '''\
"""Kernels of the jitensor user op {name!r} ({tag}), generated by jitensor/backends/cpu/custom.py.
The file name's hash changes with the user's code: never edited, only replaced."""
import numpy as np
from numba import njit, prange
from numba.extending import overload, register_jitable

from jitensor.backends.cpu import custom as _c
from jitensor.backends.cpu.kernels import PARALLEL_MIN

_F64, _F32 = _c.variant(_fn, None), _c.variant(_fn, np.float32)  # _fn: set before this runs


def _user({user}):  # the user's parameter names: Numba checks that overloads keep them
    """The user's function in the variant for its argument types."""


@overload(_user, inline="always")
def _user_variant({user}):
    return _F32 if _c.all_float32({user}) else _F64


@register_jitable(inline="always")
def body({params}):
    return {expr}


@njit(cache={cache})
def result({params}):
    return body({params})
'''

_MAP = '''
from jitensor.backends.cpu.elementwise import _flat, _item, _row, _work, at


@register_jitable
def _loop(out, {params}):
    for i in range(out.shape[0]):
        out[i] = body({at})


@njit(cache={cache}, error_model="numpy")
def flat(out, {params}):
    _loop(out.reshape(-1), {flat})


@njit(cache={cache}, parallel=True, error_model="numpy")
def nd(out, {params}):
    items, chunks = _work(out)
    if out.size < PARALLEL_MIN:  # starting the thread pool costs more than the work
        for w in range(items):
            i, j, k, lo, hi = _item(w, out, chunks)
            _loop(out[i, j, k, lo:hi], {row})
    else:
        for w in prange(items):
            i, j, k, lo, hi = _item(w, out, chunks)
            _loop(out[i, j, k, lo:hi], {row})
'''

_REDUCE = '''
from jitensor.backends.scalar.reduction import cast_like


@register_jitable(fastmath=_c.REASSOC)  # flags count where the loop is compiled: here
def _fold(src, r, init, first):
    # loops index row views from 0: a runtime start would add negative-index checks, which
    # stop vectorisation
    rest = src[r, first:]
    acc = src[r, 0] if first else init
    for j in range(rest.shape[0]):
        acc = cast_like(body(acc, rest[j]), init)  # the accumulator keeps the result dtype
    return acc


@njit(cache={cache}, parallel=True, error_model="numpy")
def rows(out, src, init, first):
    if src.size < PARALLEL_MIN:  # starting the thread pool costs more than the work
        for r in range(out.size):
            out[r] = _fold(src, r, init, first)
    else:
        for r in prange(out.size):
            out[r] = _fold(src, r, init, first)


@register_jitable
def _columns(out, src, b, init, first):
    lo, hi = b * _c.COLUMN_BLOCK, (b + 1) * _c.COLUMN_BLOCK
    acc, head = out[lo:hi], src[0, lo:hi]
    for k in range(acc.shape[0]):
        acc[k] = head[k] if first else init
    for j in range(first, src.shape[0]):
        row = src[j, lo:hi]
        for k in range(acc.shape[0]):
            acc[k] = body(acc[k], row[k])


@njit(cache={cache}, parallel=True, error_model="numpy")
def columns(out, src, init, first):
    blocks = (out.size + _c.COLUMN_BLOCK - 1) // _c.COLUMN_BLOCK
    if src.size < PARALLEL_MIN:
        for b in range(blocks):
            _columns(out, src, b, init, first)
    else:
        for b in prange(blocks):
            _columns(out, src, b, init, first)
'''


def source(spec, cache):
    """The generated module's text for `spec` (see jitensor/custom.py `Spec`)."""
    if {"_c", "_F32", "_F64"} & set(spec.user_params):  # the variant picker would see those
        raise ValueError(f"{spec.name}: rename the parameters named _c, _F32 or _F64")
    params = ", ".join(spec.params)
    fields = dict(name=spec.name, tag=spec.tag, user=", ".join(spec.user_params), params=params,
                  expr=spec.expr, cache=cache)
    if spec.reduce:
        return (_HEADER + _REDUCE).format(**fields)
    return (_HEADER + _MAP).format(
        at=", ".join(f"at({p}, i)" for p in spec.params),
        flat=", ".join(f"_flat({p})" for p in spec.params),
        row=", ".join(f"_row({p}, i, j, k, lo, hi)" for p in spec.params), **fields)


def kernel_dir():
    """Where generated kernel modules (and Numba's cache of them) live: $JITENSOR_KERNEL_DIR,
    else jitensor_kernels/ under $NUMBA_CACHE_DIR, else ~/.cache/jitensor/kernels. Safe to
    delete: files are made again on first use."""
    found = os.environ.get("JITENSOR_KERNEL_DIR")
    if found:
        return found
    if numba.config.CACHE_DIR:
        return os.path.join(numba.config.CACHE_DIR, "jitensor_kernels")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jitensor", "kernels")


_helpers = []  # hash of the jitensor sources a generated module imports (read once)


def _helpers_hash():
    if not _helpers:
        from ..scalar import reduction
        digest = hashlib.sha256(numba.__version__.encode())
        for path in (__file__, _elementwise_kernels.__file__, s.__file__, reduction.__file__):
            with open(path, "rb") as f:
                digest.update(f.read())
        _helpers.append(digest.hexdigest())
    return _helpers[0]


def _write(path, text):
    """Write `text` to `path` unless it is there (a rewrite would change the file's time stamp,
    which invalidates Numba's cache of it); atomically, so parallel processes never read half."""
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def load(spec, source_of=None, suffix=""):
    """The module of `source_of(spec, cache)` (default: this file's `source`): written to
    kernel_dir() and imported when the spec has a cache key, else run in memory. The CUDA
    backend loads its own template through this too."""
    source_of = source_of or source
    key = spec.key()
    if key is not None:
        text = source_of(spec, True)
        digest = hashlib.sha256("\0".join((key, text, _helpers_hash())).encode()).hexdigest()
        stem = f"{spec.tag}{suffix}_{digest[:16]}"
        path = os.path.join(kernel_dir(), stem + ".py")
        try:
            _write(path, text)
        except OSError as e:
            warnings.warn(f"jitensor: cannot write user kernels to {os.path.dirname(path)} "
                          f"({e}); compiling {spec.name!r} without the disk cache (set "
                          f"JITENSOR_KERNEL_DIR to a writable directory)", stacklevel=4)
        else:
            # Numba re-imports a cached kernel's module by name: register it before it runs
            name = f"_jitensor_kernels_{stem}"
            found = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(found)
            module._fn = spec.fn
            sys.modules[name] = module
            found.loader.exec_module(module)
            return module
    module = pytypes.ModuleType(f"_jitensor_kernels_{spec.tag}{suffix}")
    module._fn = spec.fn
    exec(compile(source_of(spec, False), f"<jitensor kernels of {spec.name}>", "exec"),
         module.__dict__)
    return module


def kernels(spec):
    """The generated module of `spec`, made or loaded once per process."""
    found = spec.compiled.get("cpu")
    if found is None:
        found = spec.compiled["cpu"] = load(spec)
    return found


# -- launchers --------------------------------------------------------------------------------
def _compile_error(spec, argtypes, error):
    names = ", ".join(str(t) for t in argtypes)
    return RuntimeError(f"{spec.name}: the scalar function does not compile for ({names}) "
                        f"arguments. Numba says:\n{error}")


def return_kind(spec, np_dtypes):
    """'b', 'i' or 'f': what the body returns for arguments of these NumPy dtypes."""
    argtypes = tuple(numba.from_dtype(d) for d in np_dtypes)
    compiled = kernels(spec).result
    try:
        compiled.compile(argtypes)
    except NumbaError as e:
        raise _compile_error(spec, argtypes, e) from None
    returned = compiled.overloads[argtypes].signature.return_type
    for kind, numba_type in (("b", types.Boolean), ("i", types.Integer), ("f", types.Float)):
        if isinstance(returned, numba_type):
            return kind
    raise RuntimeError(f"{spec.name}: the scalar function must return one number; for "
                       f"({', '.join(map(str, argtypes))}) arguments it returns {returned}")


def _call(spec, kernel, *args):
    try:
        kernel(*args)
    except NumbaError as e:
        raise _compile_error(spec, [numba.typeof(a) for a in args], e) from None


def launch(spec, out, operands):
    """out[...] = body(*operands) elementwise. Array operands have out's shape (broadcast views
    are fine) and none overlaps out unless it is exactly out; the others are scalars, all in
    the compute dtype."""
    m = kernels(spec)
    shape = out.shape
    # an operand broadcast from one element (the gradient of a sum) is passed as that element:
    # a stride-0 row would keep the loop from vectorising
    operands = [x[(0,) * x.ndim] if x.__class__ is ndarray and x.size and not any(x.strides)
                else x for x in operands]
    arrays = [x for x in operands if x.__class__ is ndarray]
    dense = out.flags.c_contiguous and all(a.shape == shape and a.flags.c_contiguous
                                           for a in arrays)
    n = out.size
    if dense and n < PARALLEL_MIN:
        _call(spec, m.flat, out, *operands)
    elif dense:
        flat4 = (1, 1, 1, n)
        _call(spec, m.nd, out.reshape(flat4),
              *(x.reshape(flat4) if x.__class__ is ndarray else x for x in operands))
    elif n:
        for views in as_4d(out, *arrays):
            rest = iter(views[1:])
            _call(spec, m.nd, views[0],
                  *(next(rest) if x.__class__ is ndarray else x for x in operands))


def _frame(src, kept, reduced):
    """src as a 2-D view (kept, reduced) when each group of dims merges into one stride."""
    sizes, strides = [], []
    for dims in (kept, reduced):
        merged, (step,) = coalesce([src.shape[d] for d in dims], [src.strides[d] for d in dims])
        if len(merged) > 1:
            return None
        sizes.append(merged[0])
        strides.append(step[0])
    return as_strided(src, sizes, strides)


def reduce(spec, out, src, reduced, init, first):
    """out = the fold of src over the `reduced` dims: acc starts at `init` (first=0) or at the
    range's first element (first=1, every range non-empty), then acc = body(acc, x). out is
    C-contiguous, nonempty, with src's shape without those dims; src and init have its dtype."""
    m = kernels(spec)
    kept = [d for d in range(src.ndim) if d not in reduced]
    frame = _frame(src, kept, reduced)
    if frame is None:  # some dims do not merge: a copy, kept dims first, does
        frame = _contiguous_copy(src, kept)[0].reshape(out.size, -1)
    if 0 < abs(frame.strides[0]) < abs(frame.strides[1]) and out.size >= COLUMNS_MIN:
        # kept outputs densest: each reduced row updates a block of outputs, reading the
        # transposed frame so that its inner loop runs along memory (C-contiguous when dense)
        _call(spec, m.columns, out.reshape(-1), frame.T, init, first)
    else:
        _call(spec, m.rows, out.reshape(-1), frame, init, first)
