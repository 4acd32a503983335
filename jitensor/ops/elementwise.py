"""Elementwise ops: torch's type promotion and broadcasting, then one kernel launch.

Every op is a row of a table (family, op codes, result rule); `_unary`, `_binary` and
`_ternary` do the rest for all of them: decide the compute and result dtypes, check `out=` and
in-place targets, convert operands to the compute dtype (tensors through the copy kernel,
Python scalars on the host), broadcast them as stride-0 views, and launch
`backend(device).elementwise`. Nothing is written before every check has passed."""
import ast

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import _state as _grad
from ..autograd.graph import fusion
from ..creation import allocate, tensor
from ..dtypes import bool_, int64, result_type, uint8
from ..kernels.registry import backend
from ..kernels.scalar import elementwise as k
from ..kernels.scalar import table
from ..kernels.scalar.table import BOOL, FLOAT, FLOATS_ONLY, SAME
from ..tensor import Tensor, _new
from ._common import broadcast_shapes, check_out, in_place, same_device, write_out


class _Op:
    """The front end's view of one elementwise op: its kernel family, op code for integer and
    for float compute dtypes, result rule, and whether bool operands are allowed (`bool_as`:
    the dtype they compute in, or None with the error torch raises)."""

    __slots__ = ("name", "family", "int_code", "float_code", "rule", "bool_as", "bool_error",
                 "fast")

    def __init__(self, name, family, int_code, float_code=None, rule=SAME, bool_as=uint8,
                 bool_error=None):
        self.name, self.family, self.int_code = name, family, int_code
        self.float_code = int_code if float_code is None else float_code
        self.rule, self.bool_as, self.bool_error = rule, bool_as, bool_error
        self.fast = {}  # dtype -> (result dtype, op code, scalar) where the small-op paths may
        # run it unchecked (scalar: add's and sub's alpha 1; for unary ops the parameters' 0)

    @classmethod
    def of(cls, row):
        """The op of a row of the op table."""
        return cls(row.name, row.family, row.int_code, row.code, row.rule,
                   row.bool_as and getattr(dtypes, row.bool_as), row.bool_error)

    def code(self, dtype):
        return self.float_code if dtype.is_floating_point else self.int_code


def _not_for_bool(name):
    return f'"{name}" is not implemented for bool tensors; convert with .int() or .float() first'


def _is_binary(row):
    return any(isinstance(n, ast.Name) and n.id == "y" for n in ast.walk(ast.parse(row.formula)))


# the families whose ops this module fronts (the activations' and losses': ops/activation.py,
# ops/loss.py)
_FAMILIES = ("unary", "predicate", "arith", "compare", "bitwise", "math", "math2", "special",
             "special2", "bessel", "polynomial")
_ROWS = [row for row in table.OPS if row.family in _FAMILIES]
U = {row.name: _Op.of(row) for row in _ROWS if not _is_binary(row) and row.public}
B = {row.name: _Op.of(row) for row in _ROWS if _is_binary(row)}
_INTEGER_IDENTITY = {row.name for row in _ROWS if row.int_identity}  # no-ops on integers
_INT_DIVISION = {"div_trunc", "floor_divide", "remainder", "fmod"}
# what torch computes for uint16/32/64 besides the ops that convert to float first
_BAREBONES_OPS = {"mul", "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor", "isnan", "isinf",
                  "isfinite", "isposinf", "isneginf", "signbit", *_INTEGER_IDENTITY}
for _op in B.values():  # same-dtype operands that need no conversion and no zero/sign checks
    _op.fast = {
        d: (bool_ if _op.rule == BOOL else d, _op.code(d), d.np.type(1))
        for d in dtypes.CPU_DTYPES if d is not bool_ and (
            _op.family != "bitwise" if d.is_floating_point else
            _op.rule not in (FLOAT, FLOATS_ONLY) and _op.name not in _INT_DIVISION and
            _op.name != "pow")}

# -- dtype decisions --------------------------------------------------------------------------


def _dtypes(op, promoted):
    """(dtype the kernel computes in, dtype of the result) for a promoted operand dtype. Bool
    operands compute as 0/1 integers (`bool_as`); the result stays bool unless the op widens."""
    if promoted in dtypes.BAREBONES and op.rule != FLOAT and op.name not in _BAREBONES_OPS:
        raise NotImplementedError(f'"{op.name}" not implemented for \'{promoted.scalar_name}\'')
    if op.family == "bitwise" and promoted.is_floating_point:
        raise TypeError(f'"{op.name}" is not implemented for floating-point tensors '
                        f"({promoted}); it needs integer or bool operands")
    if op.rule == FLOAT and not promoted.is_floating_point:
        return (dtypes.get_default_dtype(),) * 2
    if op.rule == FLOATS_ONLY and not promoted.is_floating_point:
        raise NotImplementedError(f'"{op.name}" is not implemented for {promoted} operands; '
                                  f"convert them with .float() first")
    if promoted is not bool_:
        return promoted, bool_ if op.rule == BOOL else promoted
    if op.bool_as is None:
        raise (RuntimeError if op.bool_error else NotImplementedError)(
            op.bool_error or _not_for_bool(op.name))
    return op.bool_as, op.bool_as if op.bool_as is int64 else bool_


for _op in U.values():  # dtypes the op computes in as they are: no conversion, no parameters
    for _d in dtypes.CPU_DTYPES:
        if _d is bool_ or _op.name in _INTEGER_IDENTITY and not _d.is_floating_point:
            continue
        try:
            _compute, _result = _dtypes(_op, _d)
        except (TypeError, RuntimeError):
            continue
        if _compute is _d:  # with the scalar arguments `_unary` passes (the same signatures)
            _op.fast[_d] = (_result, _op.code(_d), _d.np.type(0) if _op.family == "unary" else 0)


def _scalar(value, dtype):
    """A Python scalar as a NumPy scalar of `dtype`, integers wrapping as a C cast does."""
    if dtype.is_floating_point:  # float16 and bfloat16 compute in float32, and so does the
        return (np.float32 if dtype in dtypes.NARROW else dtype.np.type)(value)  # number (torch's)
    if dtype is bool_:
        return np.bool_(value)
    if isinstance(value, float):
        raise RuntimeError(f"a float scalar ({value}) cannot be used with integer dtype {dtype}")
    if isinstance(value, bool):
        return dtype.np.type(value)
    value = int(value)
    if not -2**63 <= value < 2**64:  # (torch's error)
        raise OverflowError(f"int too big to convert: {value} is outside int64 and uint64")
    return np.array(value % 2**64, np.uint64).astype(dtype.np)[()]  # (wraps as a C cast)


def _operand(x, compute, shape, b, number=True, opmath=False):
    """What the kernel reads for operand `x`: a scalar in the compute dtype, or the tensor's
    buffer converted to the compute dtype (bool reinterpreted as uint8 for free) and broadcast;
    one element broadcast as the backend's `one_element` says, unless `number` is False (the
    unary families' input must stay an array). A number operand of a float16 or bfloat16 op
    is rounded to that dtype first, as torch's, unless `opmath` (mul and div: float32)."""
    if not isinstance(x, Tensor):
        return compute.np.type(x) if compute in dtypes.NARROW and not opmath else \
            _scalar(x, compute)
    data = x._data
    if x._dtype is not compute:
        if x._dtype is bool_ and compute is uint8:
            data = data.view(np.uint8)
        else:
            converted = allocate(data.shape, compute, x._device)._data
            b.copy(converted, data)
            data = converted
    if data.shape == shape and (data.size <= 1 or any(data.strides) or not number):
        return data
    if number and (data.size == 1 or data.size and not any(data.strides)):  # one, broadcast
        return b.one_element(data, shape)
    return b.broadcast_to(data, shape)


def _unwrap(x):
    """Tensors pass; Python and NumPy scalars become Python scalars (np.float64 first: it is a
    float subclass); sequences become tensors."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, Tensor) or isinstance(x, (bool, int, float, complex)):
        return x
    return tensor(x)


def _target(op, out, inplace, shape, result, device):
    """Where the result goes: a new tensor, `out=` (checked), or self for in-place ops."""
    if inplace is not None:
        if tuple(inplace._data.shape) != shape:
            raise RuntimeError(f"output with shape {list(inplace._data.shape)} doesn't match the "
                               f"broadcast shape {list(shape)} (in-place {op.name}_)")
        if not dtypes.can_cast(result, inplace._dtype):
            raise RuntimeError(f"result type {result.name} can't be cast to the desired output "
                               f"type {inplace._dtype.name} (in-place {op.name}_); use the "
                               f"out-of-place {op.name}() instead")
        return inplace
    if out is not None:
        check_out(op.name, out, shape, result, device)
        return out
    return allocate(shape, result, device)


def _aliased(dest, arrays):
    """Whether `dest` overlaps an input other than by being exactly that input (in place)."""
    d = dest._data
    for a in arrays:  # (a loop, not any(): on every in-place and out= op of small tensors;
        # isinstance: CUDA buffers are an ndarray subclass)
        if a is d or not isinstance(a, np.ndarray) or not np.may_share_memory(d, a):
            continue
        if not (a.shape == d.shape and a.strides == d.strides and
                a.__array_interface__["data"][0] == d.__array_interface__["data"][0]):
            return True
    return False


# ops whose CPU kernels read the input again after writing the output (sin/cos/tan recompute
# by libm the arguments their vectorised reduction cannot serve): in place only via a temporary
# (exact class test: CPU buffers only, CUDA's ndarray subclass kernels do not re-read)
_REREAD = {"sin", "cos", "tan"}


def _launch(op, family_code, dest, operands, b, extra=0, fresh=False):
    """Run the kernel into dest; through a temporary when dest overlaps an input other than
    by being it (a `fresh` dest, allocated for this result, cannot): docs/design.md, "Writes
    that overlap their inputs"."""
    if not fresh and (_aliased(dest, operands) or op.name in _REREAD and any(
            a.__class__ is np.ndarray and np.may_share_memory(dest._data, a) for a in operands)):
        tmp = allocate(dest._data.shape, dest._dtype, dest._device)
        b.elementwise.launch(op.family, family_code, tmp._data, *operands, extra)
        b.copy(dest._data, tmp._data)
    else:
        b.elementwise.launch(op.family, family_code, dest._data, *operands, extra)
    return dest


# -- the three generic front ends -------------------------------------------------------------
def _unary(op, x, out=None, inplace=None, params=(0, 0, 0)):
    x = _unwrap(x)
    if not isinstance(x, Tensor):
        x = tensor(x)
    elif x.__class__ is not Tensor and x.is_sparse and inplace is None:
        from . import sparse
        return sparse.unary(op.name, x, out=out)
    if x._dtype.is_complex:
        return _complex(op.name, (x,), x._dtype, out, inplace)
    if op.name == "bitwise_not" and x._dtype is bool_:
        op = U["logical_not"]  # ~ on a mask inverts it, as in torch
    compute, result = _dtypes(op, x._dtype)
    shape = tuple(x._data.shape)
    dest = _target(op, out, inplace, shape, result, x._device)
    b = backend(x._device)
    if op.name in _INTEGER_IDENTITY and not compute.is_floating_point:
        b.copy(dest._data, x._data)
        return dest
    a = _operand(x, compute, shape, b, number=False)
    p = tuple(_scalar(v, compute) for v in params)
    if op.family in ("unary", "activation"):  # the families that take scalar parameters
        return _launch(op, op.code(compute), dest, (a, *p[:2]), b, p[2],
                       fresh=out is None and inplace is None)
    return _launch(op, op.code(compute), dest, (a, 0, 0), b, fresh=out is None and inplace is None)


def _binary(op, x, y, out=None, inplace=None, alpha=1):
    x, y = _unwrap(x), _unwrap(y)
    if x.__class__ is not Tensor and getattr(x, "is_sparse", False) or \
            y.__class__ is not Tensor and getattr(y, "is_sparse", False):
        from . import sparse
        if inplace is None:
            return sparse.binary(op.name, x, y, alpha, out)
        y = sparse.to_dense(y)  # dense op= sparse: as with its dense form (sparse ones: theirs)
    tensors = [t for t in (x, y) if isinstance(t, Tensor)]
    if not tensors:
        x = tensor(x)
        tensors = [x]
    device = same_device(op.name, *tensors)
    if op.name == "sub":  # a Python bool counts as a bool operand, as in torch
        bools = sum(v.__class__ is bool or isinstance(v, Tensor) and v._dtype is bool_
                    for v in (x, y))
        if bools:
            raise RuntimeError(table.SUB_BOOL if bools == 1 else _SUB_BOOLS)
    promoted = result_type(x, y)
    if promoted.is_complex:
        if alpha != 1:
            y = mul(y, alpha)
        return _complex(op.name, (x, y), promoted, out, inplace)
    compute, result = _dtypes(op, promoted)
    if alpha.__class__ is bool and result is not bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not compute.is_floating_point:
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating "
                           f"point number (got alpha={alpha})")
    shape = broadcast_shapes(*(t._data.shape for t in tensors))
    dest = _target(op, out, inplace, shape, result, device)
    b = backend(device)
    opmath = op.name in _OPMATH
    a1, a2 = _operand(x, compute, shape, b, opmath=opmath), \
        _operand(y, compute, shape, b, opmath=opmath)
    if not compute.is_floating_point:
        if op.name in _INT_DIVISION and b.elementwise.any_compare(k.EQ, a2, 0):
            raise RuntimeError(f"ZeroDivisionError: integer {op.name} by zero")
        if op.name == "pow" and not isinstance(y, Tensor) and y < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _launch(op, op.code(compute), dest, (a1, a2, _scalar(alpha, compute)), b,
                   fresh=out is None and inplace is None)


_OPMATH = {"mul", "div", "floor_divide"}  # torch's CPU kernels read their number in float32
_SUB_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
              "`^` or `logical_xor()` operator instead.")


def _ternary(name, code, c, x, y, out=None, inplace=None, compute=None):
    """where (c is the bool condition) and clamp with tensor bounds (c is the input)."""
    c, x, y = _unwrap(c), _unwrap(x), _unwrap(y)
    tensors = [t for t in (c, x, y) if isinstance(t, Tensor)]
    device = same_device(name, *tensors)
    compute = compute or result_type(x, y)
    result = compute
    op = _Op(name, "ternary", code)
    shape = broadcast_shapes(*(t._data.shape for t in tensors))
    dest = _target(op, out, inplace, shape, result, device)
    b = backend(device)
    cond = _operand(c, bool_ if code == _WHERE else compute, shape, b)
    return _launch(op, code, dest, (cond, _operand(x, compute, shape, b),
                                    _operand(y, compute, shape, b)), b,
                   fresh=out is None and inplace is None)


# -- complex operands --------------------------------------------------------------------------
_COMPOSED_COMPLEX = {"abs", "eq", "ne", "isnan", "isinf", "isfinite"}  # (ops/complex_ops.py)


def _complex(name, operands, dtype, out, inplace):
    """Op `name` of operands promoting to the complex `dtype`: the complex kernel, or its form
    composed from the parts, or torch's error for an op complex numbers do not have."""
    from . import complex_ops
    if name == "abs":
        if inplace is not None:
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        result = complex_ops.complex_abs(operands[0])
    elif name in ("eq", "ne"):
        result = complex_ops.complex_compare(name, *operands)
    elif name in _COMPOSED_COMPLEX:
        result = complex_ops.complex_predicate(name, operands[0])
    else:
        return complex_kernel(name, operands, dtype, out, inplace)
    if inplace is not None:
        _target(_Op(name, "complex", 0), None, inplace, result.shape, result._dtype,
                inplace._device)
        backend(inplace._device).copy(inplace._data, result._data)
        return inplace
    return write_out(name, out, result)


def complex_kernel(name, operands, dtype, out=None, inplace=None):
    """Op `name` of the complex kernel (kernels/cpu/complex_ops.py) of operands (tensors or
    numbers) broadcast and converted to the complex `dtype`, into a new tensor, out= or
    inplace."""
    tensors = [t for t in operands if isinstance(t, Tensor)]
    device = same_device(name, *tensors)
    b = backend(device)
    if name not in b.complex_ops.CODE:
        raise RuntimeError(f'"{name}" is not implemented for complex tensors ({dtype}); '
                           f"apply it to their parts (.real, .imag, .abs(), .angle())")
    shape = broadcast_shapes(*(t._data.shape for t in tensors))
    dest = _target(_Op(name, "complex", 0), out, inplace, shape, dtype, device)
    n = dest._data.size

    def dense(x):  # x as a C-contiguous 1-D buffer of the result's size and dtype
        if isinstance(x, Tensor) and x._dtype is dtype and x._data.shape == shape and \
                x._data.flags.c_contiguous:
            return x._data.reshape(n)
        buf = b.empty(shape, dtype.np)
        if isinstance(x, Tensor):
            b.copy(buf, b.broadcast_to(x._data, shape))
        else:
            b.fill(buf, complex(x))
        return buf.reshape(n)

    arrays = [dense(x) for x in operands]
    fresh = out is None and inplace is None
    result = dest._data if fresh else b.empty(shape, dtype.np)
    b.complex_ops.elementwise(name, result.reshape(n), arrays[0], arrays[-1])
    if not fresh:
        b.copy(dest._data, result)
    return dest


# -- the small-tensor fast path ----------------------------------------------------------------
def _fast(op, x, y):
    """`x op y` for the commonest calls -- a tensor and a tensor of its dtype, shape and device,
    or a float tensor and a Python number -- or None when the general path is needed. Kept
    short: for 2x3 tensors this path is the whole cost of the op."""
    dt, xd, device = x._dtype, x._data, x._device
    m = x._meta
    if m is not None and (m.requires_grad and _grad.enabled or m.fw_grad is not None):
        return None  # the op must be recorded: autograd's wrapper of the function does it
    shape = xd.shape
    if isinstance(y, Tensor):  # (a Parameter too: a bias)
        if y.__class__ is not Tensor and y.is_sparse:
            return None
        yd = y._data
        if y._dtype is not dt or y._device is not device:
            return None
        if yd.shape != shape:  # only y a row of x's last dim (x + bias), else the general path
            if yd.ndim != 1 or not shape or yd.shape[0] != shape[-1] or shape[-1] == 1:
                return None
            yd = backend(device).broadcast_to(yd, shape)
        m = y._meta
        if m is not None and (m.requires_grad and _grad.enabled or m.fw_grad is not None):
            return None
    elif dt.is_floating_point and (y.__class__ is float or y.__class__ is int):
        yd = dt.np.type(y)
    else:
        return None
    fast = op.fast.get(dt)
    return None if fast is None else _fresh(op, fast, device, shape, xd, yd, fast[2], 0)


def _fresh(op, fast, device, shape, a, b, c, d):
    """A new tensor of `shape` on `device`: op's kernel run unchecked on a, b, c, d as its
    `fast` entry says (result dtype, op code)."""
    rt, code, _ = fast
    be = backend(device)
    out = be.empty(shape, rt.np)
    be.elementwise.launch_fresh(op.family, code, out, a, b, c, d)
    t = _new(Tensor)  # _wrap spelled out
    t._data, t._dtype, t._device, t._meta = out, rt, device, None
    return t


def _binary_fn(name):
    op, row = B[name], table.BY_NAME[name]

    def fn(input, other, *, out=None):
        if out is None and input.__class__ is Tensor:
            result = _fast(op, input, other)
            if result is not None:
                return result
        return _binary(op, input, other, out)
    fn.__name__ = fn.__qualname__ = row.name
    fn.__doc__ = row.doc
    return fn


def _unary_fn(name):
    op, row = U[name], table.BY_NAME[name]

    def fn(input, *, out=None):
        fast = op.fast.get(input._dtype) if out is None and input.__class__ is Tensor else None
        if fast is None:
            if op.family in ("special", "bessel") and not isinstance(input, Tensor):
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                                f"{type(input).__name__}")  # (torch's; older ops take numbers)
            return _unary(op, input, out)
        zero = fast[2]  # `_unary`'s work for the commonest call
        return _fresh(op, fast, input._device, input._data.shape, input._data, zero, zero, zero)
    fn.__name__ = fn.__qualname__ = row.name
    fn.__doc__ = row.doc
    return fn


# -- public functions -------------------------------------------------------------------------
def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, with broadcasting and type promotion."""
    return _with_alpha(B["add"], input, other, alpha, out)


def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other."""
    return _with_alpha(B["sub"], input, other, alpha, out)


def _with_alpha(op, input, other, alpha, out):
    if alpha.__class__ is int and alpha == 1 and out is None and input.__class__ is Tensor:
        result = _fast(op, input, other)
        if result is not None:
            return result
    return _binary(op, input, other, out, alpha=alpha)


def div(input, other, *, rounding_mode=None, out=None):
    """True division (integers give floats); rounding_mode "trunc" or "floor" rounds the
    quotient and keeps integer dtypes."""
    if rounding_mode is None:
        return _binary(B["div"], input, other, out)
    if rounding_mode == "trunc":
        return _binary(B["div_trunc"], input, other, out)
    if rounding_mode == "floor":
        return _binary(B["floor_divide"], input, other, out)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found {rounding_mode!r}")


# every other public op of the table is a function of its tensors alone (torch's signature,
# with out=), its docstring the row's (tests/test_elementwise.py checks this list is the table's)
neg = _unary_fn("neg")
abs = _unary_fn("abs")
sign = _unary_fn("sign")
exp = _unary_fn("exp")
log = _unary_fn("log")
log1p = _unary_fn("log1p")
expm1 = _unary_fn("expm1")
sqrt = _unary_fn("sqrt")
rsqrt = _unary_fn("rsqrt")
sin = _unary_fn("sin")
cos = _unary_fn("cos")
tanh = _unary_fn("tanh")
sigmoid = _unary_fn("sigmoid")
relu = _unary_fn("relu")
floor = _unary_fn("floor")
ceil = _unary_fn("ceil")
round = _unary_fn("round")
trunc = _unary_fn("trunc")
reciprocal = _unary_fn("reciprocal")
square = _unary_fn("square")
logical_not = _unary_fn("logical_not")
isnan = _unary_fn("isnan")
isinf = _unary_fn("isinf")
isfinite = _unary_fn("isfinite")
mul = _binary_fn("mul")
floor_divide = _binary_fn("floor_divide")
remainder = _binary_fn("remainder")
fmod = _binary_fn("fmod")
maximum = _binary_fn("maximum")
minimum = _binary_fn("minimum")
atan2 = _binary_fn("atan2")
eq = _binary_fn("eq")
ne = _binary_fn("ne")
lt = _binary_fn("lt")
le = _binary_fn("le")
gt = _binary_fn("gt")
ge = _binary_fn("ge")
logical_and = _binary_fn("logical_and")
logical_or = _binary_fn("logical_or")
logical_xor = _binary_fn("logical_xor")
bitwise_and = _binary_fn("bitwise_and")
bitwise_or = _binary_fn("bitwise_or")
bitwise_xor = _binary_fn("bitwise_xor")
bitwise_left_shift = _binary_fn("bitwise_left_shift")
bitwise_right_shift = _binary_fn("bitwise_right_shift")
bitwise_not = _unary_fn("bitwise_not")
tan = _unary_fn("tan")
asin = _unary_fn("asin")
acos = _unary_fn("acos")
atan = _unary_fn("atan")
sinh = _unary_fn("sinh")
cosh = _unary_fn("cosh")
asinh = _unary_fn("asinh")
acosh = _unary_fn("acosh")
atanh = _unary_fn("atanh")
log2 = _unary_fn("log2")
log10 = _unary_fn("log10")
exp2 = _unary_fn("exp2")
erf = _unary_fn("erf")
erfc = _unary_fn("erfc")
lgamma = _unary_fn("lgamma")
digamma = _unary_fn("digamma")
erfinv = _unary_fn("erfinv")
i0 = _unary_fn("i0")
i0e = _unary_fn("i0e")
i1 = _unary_fn("i1")
i1e = _unary_fn("i1e")
ndtr = _unary_fn("ndtr")
ndtri = _unary_fn("ndtri")
log_ndtr = _unary_fn("log_ndtr")
erfcx = _unary_fn("erfcx")
entr = _unary_fn("entr")
sinc = _unary_fn("sinc")
bessel_j0 = _unary_fn("bessel_j0")
bessel_j1 = _unary_fn("bessel_j1")
hypot = _binary_fn("hypot")
copysign = _binary_fn("copysign")
logaddexp = _binary_fn("logaddexp")
logaddexp2 = _binary_fn("logaddexp2")
fmax = _binary_fn("fmax")
fmin = _binary_fn("fmin")
xlogy = _binary_fn("xlogy")
xlog1py = _binary_fn("xlog1py")
zeta = _binary_fn("zeta")
airy_ai = _unary_fn("airy_ai")
bessel_y0 = _unary_fn("bessel_y0")
bessel_y1 = _unary_fn("bessel_y1")
modified_bessel_i0 = _unary_fn("modified_bessel_i0")
modified_bessel_i1 = _unary_fn("modified_bessel_i1")
modified_bessel_k0 = _unary_fn("modified_bessel_k0")
modified_bessel_k1 = _unary_fn("modified_bessel_k1")
scaled_modified_bessel_k0 = _unary_fn("scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _unary_fn("scaled_modified_bessel_k1")
spherical_bessel_j0 = _unary_fn("spherical_bessel_j0")
igamma = _binary_fn("igamma")
igammac = _binary_fn("igammac")
chebyshev_polynomial_t = _binary_fn("chebyshev_polynomial_t")
chebyshev_polynomial_u = _binary_fn("chebyshev_polynomial_u")
chebyshev_polynomial_v = _binary_fn("chebyshev_polynomial_v")
chebyshev_polynomial_w = _binary_fn("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _binary_fn("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _binary_fn("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _binary_fn("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _binary_fn("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _binary_fn("hermite_polynomial_h")
hermite_polynomial_he = _binary_fn("hermite_polynomial_he")
laguerre_polynomial_l = _binary_fn("laguerre_polynomial_l")
legendre_polynomial_p = _binary_fn("legendre_polynomial_p")
# NumPy's and torch's other names (functions, methods and in-place forms)
_ALIASES = {alias: row.name for row in _ROWS for alias in row.aliases}
_module = globals()
_module.update({alias: _module[name] for alias, name in _ALIASES.items()})


# float tensors to these number exponents run as products, square roots and reciprocals, as
# torch's do (libm's pow per element made x ** 2 of 2^19 float32 40x slower than x.square():
# 2.1 ms against 0.05)
_POWERS = {1: lambda x, out=None: _module["mul"](x, 1, out=out),  # (not libm's pow: x is x)
           2: lambda x, out=None: _module["square"](x, out=out),
           3: lambda x, out=None: _module["mul"](_module["square"](x), x, out=out),
           0.5: lambda x, out=None: _module["sqrt"](x, out=out),
           -0.5: lambda x, out=None: _module["rsqrt"](x, out=out),
           -1: lambda x, out=None: _module["reciprocal"](x, out=out),
           -2: lambda x, out=None: _module["reciprocal"](_module["square"](x), out=out)}


def _power(input, exponent):
    """The exact form (torch's) that computes input ** exponent, or None."""
    if isinstance(exponent, np.generic):
        exponent = exponent.item()
    if (exponent.__class__ is int or exponent.__class__ is float) and \
            isinstance(input, Tensor) and input._dtype.is_floating_point:
        return _POWERS.get(exponent)
    return None


def pow(input, exponent, *, out=None):
    """input ** exponent; integer tensors to negative integer scalar powers raise as in torch."""
    unary = _power(input, exponent)
    if unary is not None:
        return unary(input, out=out)
    return _binary(B["pow"], input, exponent, out)


def _pow_operator(self, other):
    """`**`: the recorded pow where the exponent has an exact form (the fast path would run
    libm's pow), else as the other operators."""
    return _module["pow"](self, other) if _power(self, other) is not None else \
        _pow_method(self, other)


# the parts of composite ops: kernel rows with no function of their own
_CLAMP, _NAN_TO_NUM = _Op.of(table.BY_NAME["clamp"]), _Op.of(table.BY_NAME["nan_to_num"])
_WHERE, _CLAMP_TENSOR = table.codes("ternary", "where", "clamp_tensor")


def _limits(dtype):
    if dtype.is_floating_point:
        return -np.inf, np.inf
    if dtype is bool_:
        return False, True
    info = np.iinfo(dtype.np)
    return int(info.min), int(info.max)


def clamp(input, min=None, max=None, *, out=None):
    """Bound every element to [min, max]; bounds may be scalars or tensors (broadcast)."""
    return _clamp(input, min, max, out)


def _clamp(input, lo, hi, out=None, inplace=None):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    input = _unwrap(input)
    bounds = [v for v in (lo, hi) if v is not None]
    compute = result_type(input, *bounds)
    if compute is bool_:
        raise NotImplementedError(_not_for_bool("clamp"))
    low, high = _limits(compute)
    lo = low if lo is None else _unwrap(lo)
    hi = high if hi is None else _unwrap(hi)
    if not isinstance(lo, Tensor) and not isinstance(hi, Tensor):
        op = _CLAMP
        if compute is not input._dtype:
            return _ternary("clamp", _CLAMP_TENSOR, input, lo, hi, out, inplace, compute)
        return _unary(op, input, out, inplace, params=(lo, hi, 0))
    return _ternary("clamp", _CLAMP_TENSOR, input, lo, hi, out, inplace, compute)


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def where(condition, input=None, other=None, *, out=None):
    """`input` where `condition` holds, else `other` (broadcast); ``where(condition)`` is
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    condition = _unwrap(condition)
    if not isinstance(condition, Tensor) or condition._dtype is not bool_:
        found = condition._dtype if isinstance(condition, Tensor) else type(condition).__name__
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {found}; compare first (e.g. x > 0)")
    if _is_complex(input) or _is_complex(other):
        from .complex_ops import complex_where
        return write_out("where", out, complex_where(condition, _unwrap(input), _unwrap(other)))
    return _ternary("where", _WHERE, condition, input, other, out)


def _is_complex(x):
    return x.__class__ is complex or isinstance(x, Tensor) and x._dtype.is_complex


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replace NaN with `nan` and infinities with `posinf`/`neginf` (default: the dtype's
    largest and smallest finite values). Integer and bool tensors come back unchanged."""
    return _nan_to_num(input, nan, posinf, neginf, out)


def _nan_to_num(input, nan, posinf, neginf, out=None, inplace=None):
    input = _unwrap(input)
    if not input._dtype.is_floating_point:
        dest = _target(U["abs"], out, inplace, tuple(input._data.shape), input._dtype,
                       input._device)
        if dest is not input:
            backend(input._device).copy(dest._data, input._data)
        return dest
    info = np.finfo(input._dtype.np)
    params = (nan, float(info.max) if posinf is None else posinf,
              float(info.min) if neginf is None else neginf)
    return _unary(_NAN_TO_NUM, input, out, inplace, params)


# -- composites (built from the ops above: they record their gradients through them) ----------
COMPOSED = ("lerp", "addcmul", "addcdiv")  # their in-place forms run them (autograd/wrap.py)


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input), from the nearer end as torch computes it (weight 1
    gives end exactly); `weight` a number or a tensor, all broadcast."""
    if out is not None:
        return write_out("lerp", out, lerp(input, end, weight))
    end, weight = _unwrap(end), _unwrap(weight)
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"lerp(): not implemented for {input._dtype} input; convert "
                                  f"it with .float() first")
    if isinstance(end, Tensor) and end._dtype is not input._dtype:
        raise RuntimeError(f"lerp(): expected end to have the dtype of input ({input._dtype}), "
                           f"got {end._dtype}; convert it with .to({input._dtype})")
    diff = sub(end, input)
    if not isinstance(weight, Tensor):
        return add(input, mul(diff, weight)) if abs(weight) < 0.5 else \
            sub(end, mul(diff, 1 - weight))
    return where(lt(abs(weight), 0.5), add(input, mul(diff, weight)),
                 sub(end, mul(diff, sub(1, weight))))


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2, broadcast."""
    return write_out("addcmul", out, add(input, mul(tensor1, tensor2), alpha=value))


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2, broadcast (floating point: integer division is
    refused, as in torch)."""
    if not any(isinstance(t, Tensor) and t._dtype.is_floating_point for t in (tensor1, tensor2)):
        raise RuntimeError("addcdiv(): integer division is not supported; convert tensor1 or "
                           "tensor2 to a floating dtype (or use addcmul with a reciprocal)")
    return write_out("addcdiv", out, add(input, div(tensor1, tensor2), alpha=value))


# -- closeness ----------------------------------------------------------------------------------
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether |input - other| <= atol + rtol * |other|, elementwise (bool, broadcast). Equal
    values are always close, infinities only to themselves, NaN only with `equal_nan`. Both
    operands must have the same dtype (a number is taken in input's)."""
    input = _unwrap(input)
    if not isinstance(input, Tensor):
        input = tensor(input)
    other = _unwrap(other)
    if not isinstance(other, Tensor):
        other = tensor(other, dtype=input._dtype, device=input._device)
    if input._dtype is not other._dtype:
        raise RuntimeError(f"isclose(): both inputs must have the same dtype, but got "
                           f"{input._dtype} and {other._dtype}; convert one with .to()")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"isclose(): {name} must be greater than or equal to zero, but "
                               f"got {value}")
    a, b = input.detach(), other.detach()  # a bool result: nothing to differentiate
    close = eq(a, b)
    if equal_nan and a._dtype.category > 1:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    if rtol == 0 and atol == 0:
        return close
    if a._dtype.category < 2:  # (integer differences would wrap)
        a, b = (t.to(dtypes.get_default_dtype()) for t in (a, b))
    actual = abs(sub(a, b))
    allowed = add(abs(mul(b, rtol)), atol)
    return logical_or(close, logical_and(isfinite(actual), le(actual, allowed)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of input is close to other's (see isclose): a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """Whether the two tensors have the same shape and elements, compared after type
    promotion as `==` compares (NaN is never equal)."""
    same_device("equal", input, other)
    if input.shape != other.shape:
        return False
    return bool(eq(input.detach(), other.detach()).all())


# -- Tensor methods, operators and in-place variants ------------------------------------------
_OPERANDS = (Tensor, bool, int, float, complex, np.generic, np.ndarray, list, tuple)


def _operator(name, dunder, symbol):
    """The operator method `dunder` for binary op `name`: the fast path first, NotImplemented
    for operands of other types (so `t == None` is False and Python can try the other one)."""
    op = B[name]

    def method(self, other):
        if fusion[0] is None:  # (inside jitensor.compile the op may be deferred)
            result = _fast(op, self, other)
            if result is not None:
                return result
        # the module's function, looked up at call time: autograd wraps it after import
        return _module[name](self, other) if isinstance(other, _OPERANDS) else NotImplemented
    return _named(method, dunder, f"self {symbol} other: jitensor.{name}(self, other).")


def _named(method, dunder, doc):
    method.__name__, method.__qualname__, method.__doc__ = dunder, f"Tensor.{dunder}", doc
    return method


def _swap(name, dunder, symbol):
    return _named(lambda self, other: _module[name](other, self)
                  if isinstance(other, _OPERANDS) else NotImplemented,
                  dunder, f"other {symbol} self: jitensor.{name}(other, self).")


def _fast_inplace(op, x, y):
    """`x op= y` into a C-contiguous CPU x for the commonest calls (y a tensor of x's dtype and
    device that is x or does not overlap it, of x's shape or a trailing part of it, as a bias
    row is; or a number for a float x; and a result of x's dtype), as `_fast`; False when the
    general path is needed. (Gradient accumulation in backward and F.linear's bias are such
    calls.)"""
    xd, dt = x._data, x._dtype
    if x.__class__ is not Tensor or xd.__class__ is not np.ndarray or not xd.flags.c_contiguous:
        return False  # (CPU tensors only: a CUDA in-place op takes the general path)
    if isinstance(y, Tensor):
        if y.__class__ is not Tensor and y.is_sparse:
            return False
        yd, shape = y._data, xd.shape
        if y._dtype is not dt or y._device is not x._device or \
                yd is not xd and np.may_share_memory(xd, yd):
            return False
        if yd.shape != shape:
            if yd.shape != shape[len(shape) - yd.ndim:]:
                return False
            yd = backend(x._device).broadcast_to(yd, shape)
    elif dt.is_floating_point and (y.__class__ is float or y.__class__ is int):
        yd = dt.np.type(y)
    else:
        return False
    fast = op.fast.get(dt)
    if fast is None or fast[0] is not dt:
        return False
    backend(x._device).elementwise.launch_fresh(op.family, fast[1], xd, xd, yd, fast[2], 0)
    return True


def _inplace_binary(name, alpha=False):
    op = B[name]

    def method(self, other, *, alpha=1):
        if alpha.__class__ is int and alpha == 1 and _fast_inplace(op, self, other):
            return self
        return _binary(op, self, other, inplace=self, alpha=alpha)
    if alpha:
        return method
    return lambda self, other: method(self, other)


def _inplace_unary(name):
    op = U[name]
    return lambda self: _unary(op, self, inplace=self)


def _div_(self, other, *, rounding_mode=None):
    name = {None: "div", "trunc": "div_trunc", "floor": "floor_divide"}.get(rounding_mode)
    if name is None:
        return div(self, other, rounding_mode=rounding_mode)  # raises the ValueError
    return _binary(B[name], self, other, inplace=self)


_FUNCTIONS = dict(
    add=add, sub=sub, mul=mul, div=div, true_divide=div, floor_divide=floor_divide,
    remainder=remainder, fmod=fmod, pow=pow, maximum=maximum, minimum=minimum, atan2=atan2,
    eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, logical_and=logical_and, logical_or=logical_or,
    logical_xor=logical_xor, bitwise_and=bitwise_and, bitwise_or=bitwise_or,
    bitwise_xor=bitwise_xor, bitwise_left_shift=bitwise_left_shift,
    bitwise_right_shift=bitwise_right_shift, clamp=clamp, clip=clamp, clamp_min=clamp_min,
    clamp_max=clamp_max, where=where, nan_to_num=nan_to_num, isclose=isclose, allclose=allclose,
    equal=equal, lerp=lerp, addcmul=addcmul, addcdiv=addcdiv,
)
_FUNCTIONS.update({name: _module[name] for name in (
    *(row.name for row in _ROWS if row.public and not row.special_only), *_ALIASES)})


TENSOR_METHODS = dict(_FUNCTIONS)
# operator -> (op, symbol)
_ARITHMETIC = dict(add=("add", "+"), sub=("sub", "-"), mul=("mul", "*"), truediv=("div", "/"),
                   floordiv=("floor_divide", "//"), mod=("remainder", "%"), pow=("pow", "**"),
                   and_=("bitwise_and", "&"), or_=("bitwise_or", "|"), xor=("bitwise_xor", "^"),
                   lshift=("bitwise_left_shift", "<<"), rshift=("bitwise_right_shift", ">>"))
_COMPARISONS = dict(eq="==", ne="!=", lt="<", le="<=", gt=">", ge=">=")
TENSOR_METHODS.update({f"__{k.rstrip('_')}__": _operator(name, f"__{k.rstrip('_')}__", symbol)
                       for k, (name, symbol) in _ARITHMETIC.items()})
_pow_method, TENSOR_METHODS["__pow__"] = TENSOR_METHODS["__pow__"], _pow_operator


def _pow_inplace(self, exponent):
    """pow_ and **=: the exact forms of `_POWERS` too, written into self."""
    form = _power(self, exponent)
    if form is None:
        return _pow_kernel_inplace(self, exponent)
    form(self, out=self)
    return self


_pow_kernel_inplace = _inplace_binary("pow")
TENSOR_METHODS.update({f"__r{k.rstrip('_')}__": _swap(name, f"__r{k.rstrip('_')}__", symbol)
                       for k, (name, symbol) in _ARITHMETIC.items()})
TENSOR_METHODS.update({f"__{k}__": _operator(k, f"__{k}__", symbol)
                       for k, symbol in _COMPARISONS.items()})
TENSOR_METHODS.update(
    __neg__=neg, __pos__=lambda self: self, __abs__=abs, __invert__=bitwise_not,
    # in-place variants
    add_=_inplace_binary("add", alpha=True), sub_=_inplace_binary("sub", alpha=True),
    mul_=_inplace_binary("mul"), div_=_div_, true_divide_=_div_,
    floor_divide_=_inplace_binary("floor_divide"), remainder_=_inplace_binary("remainder"),
    fmod_=_inplace_binary("fmod"), pow_=_pow_inplace,
    eq_=_inplace_binary("eq"), ne_=_inplace_binary("ne"), lt_=_inplace_binary("lt"),
    le_=_inplace_binary("le"), gt_=_inplace_binary("gt"), ge_=_inplace_binary("ge"),
    logical_and_=_inplace_binary("logical_and"), logical_or_=_inplace_binary("logical_or"),
    logical_xor_=_inplace_binary("logical_xor"), bitwise_and_=_inplace_binary("bitwise_and"),
    bitwise_or_=_inplace_binary("bitwise_or"), bitwise_xor_=_inplace_binary("bitwise_xor"),
    __iadd__=_inplace_binary("add"), __isub__=_inplace_binary("sub"),
    __imul__=_inplace_binary("mul"), __itruediv__=_div_,
    __ifloordiv__=_inplace_binary("floor_divide"), __imod__=_inplace_binary("remainder"),
    __ipow__=_pow_inplace, __iand__=_inplace_binary("bitwise_and"),
    __ior__=_inplace_binary("bitwise_or"), __ixor__=_inplace_binary("bitwise_xor"),
    __ilshift__=_inplace_binary("bitwise_left_shift"),
    __irshift__=_inplace_binary("bitwise_right_shift"),
    clamp_=lambda self, min=None, max=None: _clamp(self, min, max, inplace=self),
    nan_to_num_=lambda self, nan=0.0, posinf=None, neginf=None:
        _nan_to_num(self, nan, posinf, neginf, inplace=self),
    __hash__=Tensor.__hash__,  # defining __eq__ would otherwise make tensors unhashable
)
TENSOR_METHODS.update({n + "_": _inplace_unary(n) for n in U
                       if n not in ("isnan", "isinf", "isfinite") and n in _FUNCTIONS})
TENSOR_METHODS.update({n + "_": _inplace_binary(n) for n in ("atan2", "hypot", "copysign",
                                                               "xlogy", "bitwise_left_shift",
                                                               "bitwise_right_shift", "igamma",
                                                               "igammac")})
TENSOR_METHODS.update({alias + "_": TENSOR_METHODS[name + "_"] for alias, name in _ALIASES.items()})
TENSOR_METHODS.update({name + "_": in_place(_module[name]) for name in COMPOSED})
TENSOR_METHODS["clip_"] = TENSOR_METHODS["clamp_"]
TENSOR_METHODS["where"] = lambda self, condition, other: where(condition, self, other)

__all__ = sorted(_FUNCTIONS)
