"""Write your own kernel: a scalar Python function becomes a compiled op.

``@jt.elementwise`` turns a function of N scalars into an op over tensors with torch's
broadcasting, type promotion and ``out=``, compiled with Numba like the built-in ops and
launched through the same backend registry (serial below 2^16 elements, parallel above)::

    @jt.elementwise
    def gelu(x):
        return 0.5 * x * (1.0 + math.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    @gelu.derivative                       # optional: makes gelu differentiable
    def gelu_grad(x):
        t = math.tanh(0.7978845608 * (x + 0.044715 * x ** 3))
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * 0.7978845608 * (1.0 + 0.134145 * x * x)

    y = gelu(jt.randn(1000))               # gelu(x, out=y) writes into y

``@jt.reduction(identity=0.0)`` turns ``combine(acc, x)`` into a reduction over ``dim`` (None,
an int or a tuple) with ``keepdim``, ``dtype=`` and ``out=``. Without an identity the fold starts
at each range's first element (and an empty range is an error, as for ``max``)::

    @jt.reduction(identity=0.0)
    def sum_of_squares(acc, x):
        return acc + x * x

    sum_of_squares(jt.randn(4, 5), dim=1)  # 4 values

Dtypes. The arguments (tensors and Python scalars) are promoted with ``jt.result_type`` and the
body runs in that dtype; the result has it too, except that a body returning a float for
integer or bool arguments (``x * 0.5``) runs in the default float dtype instead, as torch's
float ops do, and a body returning a bool (``x > 0``) gives a bool tensor. A reduction keeps its
input's dtype (or ``dtype=``; the same float rule applies) in its accumulator; rows are folded
with reassociation allowed, as the built-in sums are (a sum vectorises; its rounding may differ
from a left-to-right fold).

Bodies. In a float32 body Python floats (literals and float globals) are float32, as Python
scalars are in torch (``0.5 * x`` stays float32): write ``2.0 * x``, not ``2 * x`` (an int
literal promotes to float64, as in NumPy 1). ``math.exp``/``math.tanh``/``np.exp``/``np.tanh``
(as module attributes or imported names) run jitensor's float32 versions, which vectorise
(libm's do not; other math functions call libm). Both rules cover the decorated function's own
code; it may call helpers compiled with ``numba.njit`` or ``numba.extending.register_jitable``.
A body that does not compile for the arguments' dtypes raises a RuntimeError naming the op, the
dtypes and Numba's message.

Gradients. With a derivative (``@op.derivative`` or ``grad=``: a scalar function of the same
inputs returning the partial derivative, or for N inputs a tuple of the N partials), the op is
recorded by autograd and its backward runs one compiled kernel per input, ``grad * partial``;
the engine sums gradients over broadcast dims. Derivatives are not themselves differentiable:
double backward raises. Without one, backward through the op raises. Reductions are not
differentiable.

The disk cache. Kernels are generated as a small module per op in
``jitensor.kernels.cpu.custom.kernel_dir()`` and cached by Numba there, so a new process loads
them in milliseconds. The file's name hashes the function's code, the values of the globals
it reads and the code of the Python functions it calls: an edit makes a new file. Closures
(functions that read a variable of an enclosing function) and bodies reading a global that is
neither a number, a string, a tuple of those, an array, a module nor a function compile in
memory once per process instead.

The escape hatch. For a kernel that is not elementwise or a fold, write it with Numba yourself
and run it on the tensors' buffers: on the CPU ``t.numpy()`` shares memory with ``t`` (use
``t.contiguous()`` first if your loop assumes C order, and ``t.detach()`` for a tensor that
requires grad), and ``jt.from_numpy(a)`` wraps an array back without copying::

    @numba.njit(parallel=True, cache=True)
    def softplus_(out, x):
        for i in numba.prange(x.size):
            out[i] = np.log1p(np.exp(x[i]))

    x = jt.randn(1 << 20)
    out = jt.empty_like(x)
    softplus_(out.numpy(), x.contiguous().numpy())

Autograd does not see such calls. On CUDA (the backend is pending) the same works with
``numba.cuda.as_cuda_array(t)`` through ``__cuda_array_interface__`` and ``@cuda.jit``."""
import hashlib
import inspect
import re
import types

import numpy as np

from .autograd import grad_mode
from .autograd.graph import differentiable, needs_grad, node_class, record
from .creation import allocate
from .dtypes import bool_, get_default_dtype, result_type, to_dtype
from .kernels.registry import backend
from .ops._common import broadcast_shapes, check_out, same_device
from .ops.elementwise import _aliased, _operand, _scalar, _target, _unwrap
from .ops.reduction import _check_nonempty, _finish, _input, _reduced, _shapes
from .tensor import Tensor

__all__ = ["elementwise", "reduction"]


# -- what makes a kernel's cache key ----------------------------------------------------------
def fingerprint(fn, seen=None):
    """Text that changes whenever `fn`'s compiled code could: its bytecode, constants and
    defaults, the values of the globals it reads and, recursively, the code of the functions
    it calls. None when that cannot be pinned down (a closure, an opaque global)."""
    if fn.__closure__:
        return None
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return fn.__qualname__  # recursion: the code is in the text already
    seen.add(id(fn))
    parts, names, codes = [fn.__module__, fn.__qualname__, repr(fn.__defaults__)], set(), \
        [fn.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        parts += [code.co_code.hex(), repr(code.co_names),  # (the code indexes the names)
                  repr([c for c in code.co_consts if not isinstance(c, types.CodeType)])]
        names.update(code.co_names)
    for name in sorted(names & fn.__globals__.keys()):
        part = _value(fn.__globals__[name], names, seen)
        if part is None:
            return None
        parts.append(f"{name}={part}")
    return "\n".join(parts)


def _value(v, names, seen):
    """The cache-key text of a global a body reads (Numba freezes globals as constants)."""
    if isinstance(v, (bool, int, float, complex, str, bytes, type(None), np.generic)):
        return f"{type(v).__name__}:{v!r}"
    if isinstance(v, tuple):
        items = [_value(x, names, seen) for x in v]
        return None if None in items else f"({', '.join(items)})"
    if isinstance(v, np.ndarray):
        return f"array {v.dtype} {v.shape} {hashlib.sha256(v.tobytes()).hexdigest()}"
    fn = getattr(v, "py_func", v)  # a Numba dispatcher compiles its Python function
    if isinstance(fn, types.FunctionType):
        return fingerprint(fn, seen)
    if isinstance(v, types.ModuleType) and v.__name__.startswith("jitensor.") and \
            getattr(v, "__file__", None):  # jitensor's own: its code and what it imports
        from .kernels.kernel_cache import sources_hash
        return f"module {v.__name__} {sources_hash(v.__file__)}"
    if isinstance(v, types.ModuleType):  # module.helper(...): the helpers' code counts
        helpers = [(a, getattr(v, a)) for a in sorted(names) if isinstance(
            getattr(getattr(v, a, None), "py_func", getattr(v, a, None)), types.FunctionType)]
        parts = [_value(h, names, seen) for _, h in helpers]
        return None if None in parts else \
            f"module {v.__name__} " + " ".join(f"{a}={p}" for (a, _), p
                                               in zip(helpers, parts, strict=False))
    name = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
    library = type(v).__module__.partition(".")[0] in ("numba", "numpy", "llvmlite")
    if name and (isinstance(v, (type, types.BuiltinFunctionType, np.ufunc)) or library):
        return f"{getattr(v, '__module__', '')}.{name}"  # a library function or type
    return None


class Spec:
    """What a backend compiles for a user kernel: `fn` called as the Python expression `expr`
    over the kernel's scalar arguments `params` (`user_params`: fn's own names); a reduction
    (`reduce`: params are acc, x) or elementwise. `compiled` holds each backend's kernels."""

    __slots__ = ("name", "fn", "params", "user_params", "expr", "reduce", "tag", "compiled",
                 "_key")

    def __init__(self, name, fn, params, user_params, expr, reduce=False, suffix=""):
        self.name, self.fn, self.params, self.user_params = name, fn, params, user_params
        self.expr, self.reduce, self.compiled, self._key = expr, reduce, {}, []
        tag = re.sub(r"\W+", "_", f"{fn.__module__}.{fn.__qualname__}{suffix}")
        self.tag = tag.strip("_")[-80:]

    def key(self):
        """The cache key (None: compile in memory), taken at first use: globals the function
        reads may be defined after it."""
        if not self._key:
            self._key.append(fingerprint(self.fn))
        return self._key[0]


# -- elementwise ops --------------------------------------------------------------------------
def _params(fn, what):
    """The names of fn's parameters, all positional (the kernel passes every one)."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        raise TypeError(f"{what}: the scalar function must take positional arguments only "
                        f"(no *args, **kwargs or keyword-only arguments)")
    return tuple(p.name for p in params)


class _Map:
    """One user kernel and its dtype decisions; called, it runs as an elementwise op behind the
    tensor-level checks (promotion, broadcasting, out=). Reductions use its dtypes only."""

    def __init__(self, spec):
        self.spec, self._dtypes = spec, {}
        self.name = self.__name__ = spec.name  # for the messages of _target and record

    def dtypes(self, promoted, device):
        """(compute dtype, result dtype) for arguments promoting to `promoted`."""
        key = (device.type, promoted, get_default_dtype())
        found = self._dtypes.get(key)
        if found is None:
            b, n = backend(device), len(self.spec.params)
            kind = b.custom.return_kind(self.spec, [promoted.np] * n)
            compute = promoted
            if kind == "f" and not promoted.is_floating_point:
                compute = get_default_dtype()  # as torch's float ops on integers
                b.custom.return_kind(self.spec, [compute.np] * n)
            found = self._dtypes[key] = compute, bool_ if kind == "b" else compute
        return found

    def __call__(self, *args, out=None):
        if len(args) != len(self.spec.params):
            raise TypeError(f"{self.name}() takes {len(self.spec.params)} arguments but "
                            f"{len(args)} were given")
        args = [_unwrap(a) for a in args]
        tensors = [a for a in args if isinstance(a, Tensor)]
        if not tensors:
            raise TypeError(f"{self.name}(): expected at least one tensor argument")
        device = same_device(self.name, *tensors)
        compute, result = self.dtypes(result_type(*args), device)
        shape = broadcast_shapes(*(t._data.shape for t in tensors))
        dest = _target(self, out, None, shape, result, device)
        b = backend(device)
        operands = [_operand(a, compute, shape, b) for a in args]
        if _aliased(dest, operands):  # out overlaps an input: through a temporary
            tmp = allocate(shape, result, device)
            b.custom.launch(self.spec, tmp._data, operands)
            b.copy(dest._data, tmp._data)
        else:
            b.custom.launch(self.spec, dest._data, operands)
        return dest


def _no_double_backward(name):
    def rule(g, result, *args):
        raise RuntimeError(f"the derivative of {name} is not differentiable: double backward "
                           f"through user ops is not supported")
    return rule


class ElementwiseOp:
    """A user elementwise op (see the module docstring). `scalar` is the decorated function,
    `grad` its derivative or None."""

    def __init__(self, fn, grad=None):
        names = _params(fn, f"elementwise({fn.__name__})")
        self.scalar, self.arity = fn, len(names)
        self.__name__, self.__qualname__ = fn.__name__, fn.__qualname__
        self.__module__, self.__doc__ = fn.__module__, fn.__doc__
        params = tuple(f"x{i}" for i in range(self.arity))
        self._map = _Map(Spec(fn.__name__, fn, params, names, f"_user({', '.join(params)})"))
        self._node = node_class(fn.__name__, self._rule, uses_inputs=True, uses_result=False)
        self._node.tangent = "symmetric"  # (forward AD: its rule applied to tangents)
        self._call = differentiable(self._map, self._node)
        self._twice = node_class(fn.__name__ + "_backward", _no_double_backward(fn.__name__),
                                 uses_inputs=False, uses_result=False)
        self.grad, self._partials = None, None
        if grad is not None:
            self.derivative(grad)

    def derivative(self, fn):
        """Set the derivative (decorator): a scalar function of the op's inputs returning the
        partial derivative (one input) or a tuple of the partials (N inputs)."""
        if len(_params(fn, f"{self.__name__}.derivative")) != self.arity:
            raise TypeError(f"{self.__name__}.derivative: the derivative must take the op's "
                            f"{self.arity} inputs")
        self.grad, self._partials = fn, None
        return fn

    def _partial(self, i):
        """The kernel g * d op / d input_i."""
        if self._partials is None:
            params = tuple(f"x{j}" for j in range(self.arity))
            call = f"_user({', '.join(params)})"
            names = _params(self.grad, f"{self.__name__}.derivative")
            self._partials = [_Map(Spec(
                f"{self.__name__}.derivative", self.grad, ("g",) + params, names,
                f"g * {call}" if self.arity == 1 else f"g * {call}[{j}]", suffix=f"_d{j}"))
                for j in range(self.arity)]
        return self._partials[i]

    def _rule(self, g, result, *args):
        if self.grad is None:
            raise RuntimeError(f"the derivative of {self.__name__} is not implemented: define "
                               f"it with @{self.__name__}.derivative or grad=")
        pairs = []
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and a.requires_grad:
                kernel, inputs = self._partial(i), (g, *args)
                if grad_mode._state.enabled and needs_grad(inputs, None):  # create_graph=True
                    pairs.append((a, record(self._twice, kernel, inputs, {})))
                else:
                    pairs.append((a, kernel(*inputs)))
        return pairs

    def __call__(self, *args, out=None):
        return self._call(*args) if out is None else self._call(*args, out=out)

    def __repr__(self):
        return f"<jitensor elementwise op {self.__qualname__}>"


def elementwise(fn=None, *, grad=None):
    """Decorator: the scalar function `fn` of N inputs as an elementwise op over tensors.
    `grad`: its derivative (or set it later with ``@op.derivative``). See the module doc."""
    if fn is None:
        return lambda f: ElementwiseOp(f, grad)
    return ElementwiseOp(fn, grad)


# -- reductions -------------------------------------------------------------------------------
class ReductionOp:
    """A user reduction (see the module docstring): `scalar` is combine(acc, x)."""

    def __init__(self, fn, identity=None):
        names = _params(fn, f"reduction({fn.__name__})")
        if len(names) != 2:
            raise TypeError(f"reduction({fn.__name__}): the combine function takes (acc, x)")
        self.scalar, self.identity = fn, identity
        self.__name__, self.__qualname__ = fn.__name__, fn.__qualname__
        self.__module__, self.__doc__ = fn.__module__, fn.__doc__
        self._map = _Map(Spec(fn.__name__, fn, ("acc", "x"), names, "_user(acc, x)",
                              reduce=True, suffix="_reduce"))

    def __call__(self, input, dim=None, keepdim=False, *, dtype=None, out=None):
        name = self.__name__
        _input(name, input)
        reduced = _reduced(name, input, dim)
        if self.identity is None:
            _check_nonempty(name, input, reduced, dim is None)
        device = input._device
        if dtype is None:
            dtype = self._map.dtypes(input._dtype, device)[0]
        else:
            dtype = to_dtype(dtype)
            backend(device).custom.return_kind(self._map.spec, [dtype.np] * 2)
        try:
            init = _scalar(0 if self.identity is None else self.identity, dtype)
        except RuntimeError as e:
            raise RuntimeError(f"{name}: the identity does not fit {dtype}: {e}") from None
        kept, shape = _shapes(input, reduced, keepdim)
        if out is not None:
            check_out(name, out, shape, dtype, device)
        b = backend(device)
        src = input._data
        if input._dtype is not dtype:
            src = allocate(src.shape, dtype, device)._data
            b.copy(src, input._data)
        res = allocate(kept, dtype, device)
        if res._data.size:
            b.custom.reduce(self._map.spec, res._data, src, reduced, init,
                            int(self.identity is None))
        return _finish(res, shape, out)

    def __repr__(self):
        return f"<jitensor reduction {self.__qualname__}>"


def reduction(fn=None, *, identity=None):
    """Decorator: ``combine(acc, x)`` as a reduction op ``op(input, dim=None, keepdim=False,
    *, dtype=None, out=None)``. `identity`: the accumulator's start (None: each range's first
    element). See the module doc."""
    if fn is None:
        return lambda f: ReductionOp(f, identity)
    return ReductionOp(fn, identity)
