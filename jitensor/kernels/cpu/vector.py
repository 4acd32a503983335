"""Code generation the CPU kernels ask LLVM for: 512-bit vectors, streaming stores, inlining,
calls by address (`pointer`, `call`).

`wide()`: on CPUs with AVX-512, LLVM vectorises loops at 256 bits unless a function asks for
more (its "prefer-vector-width" attribute, which clang sets from -mprefer-vector-width). A
function that calls `wide()` gets that attribute, so its loops run at 512 bits, which made exp
and softmax faster and, less so, a float32 sum streamed from memory (docs/design.md). Numba
optimises (and vectorises) each helper in a module of its own before a caller inlines it, so
the helpers that hold the loops call it; marking only the kernels changed nothing. Without
AVX-512 it changes nothing."""
import platform

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_X86 = platform.machine().lower() in ("x86_64", "amd64")
_WIDE = '"prefer-vector-width"="512"'


@intrinsic
def wide(typingctx):
    def codegen(context, builder, sig, args):
        # llvmlite checks attribute names against its list of enum attributes; this is a
        # string attribute, which its printer writes out as given
        set.add(builder.function.attributes, _WIDE)
        return context.get_dummy_value()

    return types.none(), codegen


LINE = 64  # bytes: a cache line, and the width of one streaming store


@intrinsic
def stream(typingctx, dst, src):
    """dst[:] = src[:src.size] with non-temporal stores, which write memory without first
    reading each line into the cache (a normal store's read-for-ownership): an output that is
    only written moves 12 bytes per float32 add, not 16. dst must start on a 64-byte boundary
    and src hold a whole number of 64-byte lines; both are C-contiguous 1-D arrays of one
    dtype. A thread calls `fence()` after its last streaming store."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)
            and dst.dtype == src.dtype):
        return None

    def codegen(context, builder, sig, args):
        d = context.make_array(sig.args[0])(context, builder, args[0])
        s = context.make_array(sig.args[1])(context, builder, args[1])
        line = ir.VectorType(ir.IntType(64), LINE // 8)
        src_ptr = builder.bitcast(s.data, line.as_pointer())
        dst_ptr = builder.bitcast(d.data, line.as_pointer())
        nbytes = builder.mul(s.nitems, s.itemsize)
        lines = builder.udiv(nbytes, context.get_constant(types.intp, LINE))
        nontemporal = builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        with cgutils.for_range(builder, lines) as loop:
            value = builder.load(builder.gep(src_ptr, [loop.index]), align=1)
            store = builder.store(value, builder.gep(dst_ptr, [loop.index]), align=LINE)
            store.set_metadata("nontemporal", nontemporal)
        return context.get_dummy_value()

    return types.none(dst, src), codegen


@intrinsic
def fence(typingctx):
    """Make this thread's streaming stores visible to the others: they are weakly ordered, and
    LLVM's own fences order only ordinary accesses on x86. Once per task, not per store: each
    fence waits for the stores in flight."""
    def codegen(context, builder, sig, args):
        if _X86:
            sfence = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse.sfence")
            builder.call(sfence, [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic
def always_inline(typingctx):
    """Mark the calling function `alwaysinline` for LLVM, which then inlines it into every
    caller, where the caller's constants (a reduction's op) fold its branches away. Numba
    compiles each helper as a function of its own, and LLVM's cost model left the larger ones as
    calls (paid on every row of a reduction). Unlike Numba's `inline="always"` this works on
    the typed, optimised function, so helpers keep their own flags (`_nrt=False`, fast-math)."""
    def codegen(context, builder, sig, args):
        builder.function.attributes.add("alwaysinline")
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic
def pointer(typingctx, array, i):
    """The address of array[i] (1-D, in bounds), typed a pointer to its dtype: how a kernel
    hands a row to a function it calls by address (`call`)."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        return builder.gep(a.data, [args[1]])

    return types.CPointer(array.dtype)(array, i), codegen


@intrinsic
def as_pointer(typingctx, address, like):
    """The integer `address` typed a pointer to like's type: how a function called by address
    reads the arrays it was passed as addresses (`carray(as_pointer(a, np.float32(0)), n)`)."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(sig.return_type))

    return types.CPointer(types.unliteral(like))(address, like), codegen


@intrinsic
def call(typingctx, address, args):
    """Call the C function at `address` (an integer: a cfunc's `.address`) with the tuple
    `args`, its parameters as typed here; it returns nothing. A kernel compiled once then runs
    any function of that signature: the elementwise 4-D driver serves every op through its
    row function (kernels/cpu/elementwise.py)."""
    if not (isinstance(address, types.Integer) and isinstance(args, types.BaseTuple)):
        return None

    def codegen(context, builder, sig, llargs):
        values = [builder.extract_value(llargs[1], k) for k in range(len(args))]
        function = ir.FunctionType(ir.VoidType(), [v.type for v in values])
        builder.call(builder.inttoptr(llargs[0], function.as_pointer()), values)
        return context.get_dummy_value()

    return types.none(address, args), codegen
