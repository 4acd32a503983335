"""Element access inside CUDA kernels, written once for the GPU and the simulator.

On the GPU a buffer argument is a typed pointer (numba `CPointer`) to the start of its
allocation; in the simulator it is the NumPy array of that allocation. Kernels read and write
`p[offset + index]` through `load`/`store`, which on the GPU convert between a value and its
in-memory form (a bool is a byte in memory: numba's own pointer store of a bool fails to
compile) and in the simulator are plain indexing. `at` reads an operand that may also be a
scalar, so `x + 2` needs no broadcast buffer."""
import threading

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload, register_jitable


def load(p, i):
    return p[i]


def store(p, i, v):
    p[i] = v


def at(x, i):
    """x[i] for a buffer operand, x itself for a scalar one."""
    return x if isinstance(x, (int, float, np.generic)) else x[i]


def load4(p, i):
    """Elements 4i .. 4i+3 of a float32 buffer in one 128-bit load (4i must be 16-byte aligned
    from the allocation's start), or a scalar operand four times. `p` may also be a
    C-contiguous float32 array (shared memory allocated 16-byte aligned), indexed flat."""
    if isinstance(p, (int, float, np.generic)):
        return p, p, p, p
    if p.ndim > 1:
        p = p.reshape(-1)
    return p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]


def store4(p, i, v):
    """Store the 4-tuple v at elements 4i .. 4i+3 of a float32 buffer in one 128-bit store."""
    p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3] = v


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


_VEC4 = ir.VectorType(ir.FloatType(), 4)


@intrinsic
def _load4(typingctx, p, i):
    if p != types.CPointer(types.float32):
        return None
    tuple4 = types.UniTuple(types.float32, 4)

    def codegen(context, builder, sig, args):
        vector = builder.load(builder.gep(builder.bitcast(args[0], _VEC4.as_pointer()),
                                          [args[1]]), align=16)
        lanes = [builder.extract_element(vector, ir.Constant(ir.IntType(32), k))
                 for k in range(4)]
        return context.make_tuple(builder, tuple4, lanes)
    return tuple4(p, i), codegen


@intrinsic
def _store4(typingctx, p, i, v):
    if p != types.CPointer(types.float32):
        return None

    def codegen(context, builder, sig, args):
        vector = ir.Constant(_VEC4, ir.Undefined)
        for k in range(4):
            lane = context.cast(builder, builder.extract_value(args[2], k), sig.args[2][k],
                                types.float32)
            vector = builder.insert_element(vector, lane, ir.Constant(ir.IntType(32), k))
        builder.store(vector, builder.gep(builder.bitcast(args[0], _VEC4.as_pointer()),
                                          [args[1]]), align=16)
        return context.get_dummy_value()
    return types.void(p, i, v), codegen


@intrinsic
def _array_load4(typingctx, a, i):
    if not (isinstance(a, types.Array) and a.dtype == types.float32 and a.layout == "C"):
        return None
    tuple4 = types.UniTuple(types.float32, 4)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        vector = builder.load(builder.gep(builder.bitcast(data, _VEC4.as_pointer()),
                                          [args[1]]), align=16)
        lanes = [builder.extract_element(vector, ir.Constant(ir.IntType(32), k))
                 for k in range(4)]
        return context.make_tuple(builder, tuple4, lanes)
    return tuple4(a, i), codegen


@overload(load4, target="cuda")
def _load4_cuda(p, i):
    if isinstance(p, types.CPointer):
        return lambda p, i: _load4(p, i)
    if isinstance(p, types.Array):
        return lambda p, i: _array_load4(p, i)
    return lambda p, i: (p, p, p, p)


@overload(store4, target="cuda")
def _store4_cuda(p, i, v):
    return lambda p, i, v: _store4(p, i, v)


@overload(load, target="cuda")
def _load_cuda(p, i):
    return lambda p, i: _load(p, i)


@overload(store, target="cuda")
def _store_cuda(p, i, v):
    if isinstance(p, types.Array):  # a local array
        def store_array(p, i, v):
            p[i] = v
        return store_array
    return lambda p, i, v: _store(p, i, v)


@overload(at, target="cuda")
def _at_cuda(x, i):
    if isinstance(x, types.CPointer):
        return lambda x, i: _load(x, i)
    return lambda x, i: x


_SIM_LOCK = threading.Lock()  # the simulator runs a thread per GPU thread


def atomic_add(p, i, v):
    """p[i] += v as one atomic read-modify-write, so threads may add to the same element.
    On the GPU p is a float32, float64, int32 or int64 buffer."""
    with _SIM_LOCK:
        p[i] += v


_ATOMIC_ADD = (types.float32, types.float64, types.int32, types.int64)


@intrinsic
def _atomic_add(typingctx, p, i, v):
    if not isinstance(p, types.CPointer) or p.dtype not in _ATOMIC_ADD:
        return None
    ty = p.dtype

    def codegen(context, builder, sig, args):
        from numba.cuda import nvvmutils  # numba-cuda's own atomics (cuda.atomic.add)
        ptr = builder.gep(builder.bitcast(args[0], context.get_value_type(ty).as_pointer()),
                          [args[1]])
        value = context.cast(builder, args[2], sig.args[2], ty)
        if ty == types.float32:
            builder.call(nvvmutils.declare_atomic_add_float32(builder.module), (ptr, value))
        elif ty == types.float64:
            builder.call(nvvmutils.declare_atomic_add_float64(builder.module), (ptr, value))
        else:
            builder.atomic_rmw("add", ptr, value, "monotonic")
        return context.get_dummy_value()
    return types.void(p, i, v), codegen


@overload(atomic_add, target="cuda")
def _atomic_add_cuda(p, i, v):
    return lambda p, i, v: _atomic_add(p, i, v)


@register_jitable
def offset4(i, n1, n2, n3, s0, s1, s2, s3):
    """The element offset of the i-th (C order) element of a 4-D view with these sizes and
    strides."""
    i3 = i % n3
    r = i // n3
    i2 = r % n2
    r //= n2
    return (r // n1) * s0 + (r % n1) * s1 + i2 * s2 + i3 * s3
