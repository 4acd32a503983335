"""Element access inside CUDA kernels, written once for the GPU and the simulator.

On the GPU a buffer argument is a typed pointer (numba `CPointer`) to the start of its
allocation; in the simulator it is the NumPy array of that allocation. Kernels read and write
`p[offset + index]` through `load`/`store`, which on the GPU convert between a value and its
in-memory form (a bool is a byte in memory: numba's own pointer store of a bool fails to
compile) and in the simulator are plain indexing. `at` reads an operand that may also be a
scalar, so `x + 2` needs no broadcast buffer."""
import numpy as np
from numba import types
from numba.extending import intrinsic, overload, register_jitable


def load(p, i):
    return p[i]


def store(p, i, v):
    p[i] = v


def at(x, i):
    """x[i] for a buffer operand, x itself for a scalar one."""
    return x if isinstance(x, (int, float, np.generic)) else x[i]


@intrinsic
def _load(typingctx, p, i):
    if not isinstance(p, types.CPointer):
        return None
    ty = p.dtype

    def codegen(context, builder, sig, args):
        model = context.data_model_manager[ty]
        base = builder.bitcast(args[0], model.get_data_type().as_pointer())
        return model.load_from_data_pointer(builder, builder.gep(base, [args[1]]))
    return ty(p, i), codegen


@intrinsic
def _store(typingctx, p, i, v):
    if not isinstance(p, types.CPointer):
        return None
    ty = p.dtype

    def codegen(context, builder, sig, args):
        model = context.data_model_manager[ty]
        data = model.as_data(builder, context.cast(builder, args[2], sig.args[2], ty))
        base = builder.bitcast(args[0], data.type.as_pointer())
        builder.store(data, builder.gep(base, [args[1]]))
        return context.get_dummy_value()
    return types.void(p, i, v), codegen


@overload(load, target="cuda")
def _load_cuda(p, i):
    return lambda p, i: _load(p, i)


@overload(store, target="cuda")
def _store_cuda(p, i, v):
    return lambda p, i, v: _store(p, i, v)


@overload(at, target="cuda")
def _at_cuda(x, i):
    if isinstance(x, types.CPointer):
        return lambda x, i: _load(x, i)
    return lambda x, i: x


@register_jitable
def offset4(i, n1, n2, n3, s0, s1, s2, s3):
    """The element offset of the i-th (C order) element of a 4-D view with these sizes and
    strides."""
    i3 = i % n3
    r = i // n3
    i2 = r % n2
    r //= n2
    return (r // n1) * s0 + (r % n1) * s1 + i2 * s2 + i3 * s3
