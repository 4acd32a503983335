"""torch's remaining pointwise functions, predicates and small creation routines, composed from
the public ops (so they differentiate and run wherever those do; no kernel of their own).

- Simple ops (deg2rad, frac, sgn, signbit, heaviside, gcd, ldexp, nextafter, ...): a few
  elementwise ops each, with torch's dtypes (integers promote as torch promotes them) and errors.
- polygamma and mvlgamma, on the special-function kernels of the op table (lgamma, digamma,
  erfinv, i0 and the rest of torch.special are rows of kernels/scalar/table.py).
- torch's module-level in-place functions (torch.abs_, torch.zero_, ...), thin wrappers around
  the Tensor methods.
- Predicates (is_tensor, is_nonzero, ...) and creation routines (logspace, the window functions,
  scalar_tensor, empty_strided)."""
import math

import numpy as np

from .. import creation, dtypes
from ..autograd.graph import differentiable, node_class
from ..device import device as _to_device
from ..kernels.registry import backend
from ..tensor import Tensor
from . import complex_ops
from . import elementwise as E
from ._common import in_place, write_out
from .reduction import _return_type, return_types
from .shape import strided_view


# -- shared checks ----------------------------------------------------------------------------
def _tensor(fn, x, name="input", position=1):
    """x, which must be a Tensor (torch's TypeError otherwise)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _not_for(fn, dtype, fix):
    return NotImplementedError(f'"{fn}" not implemented for \'{dtype.scalar_name}\' '
                               f"tensors; {fix}")


def _floating(x):
    """x itself when floating point, else x converted to the default float dtype (torch's
    rule for unary float functions of integer and bool tensors)."""
    return x if x._dtype.is_floating_point else x.to(dtypes.get_default_dtype())


def _bool_out(fn, out, result):
    """`result` (bool), or out= (which must be a bool tensor, as torch requires) holding it."""
    if out is not None and isinstance(out, Tensor) and out._dtype is not dtypes.bool_:
        raise RuntimeError(f"{fn} does not support non-boolean outputs; pass out with dtype "
                           f"jitensor.bool (got {out._dtype})")
    return write_out(fn, out, result)


def _with_rule(name, rule, uses_result=True):
    """Decorator: `fn` records itself as one node whose derivative is `rule(grad, result,
    *args, **kwargs)` (graph.py's convention) when grad mode is on and an input requires grad;
    inside, nothing is recorded."""
    cls = node_class(name, rule, uses_inputs=True, uses_result=uses_result)
    return lambda fn: differentiable(fn, cls)


def deg2rad(input, *, out=None):
    """Degrees to radians: input * pi / 180 (integer and bool inputs give the default float
    dtype)."""
    x = _floating(_tensor("deg2rad", input))
    return write_out("deg2rad", out, E.mul(x, math.pi / 180))


def rad2deg(input, *, out=None):
    """Radians to degrees: input * 180 / pi."""
    x = _floating(_tensor("rad2deg", input))
    return write_out("rad2deg", out, E.mul(x, 180 / math.pi))


def frac(input, *, out=None):
    """The fractional part, input - trunc(input), with input's sign (floating point only, as
    in torch; +-inf gives NaN)."""
    x = _tensor("frac", input)
    if not x._dtype.is_floating_point:
        raise _not_for("frac", x._dtype, "convert the tensor with .float() first")
    return write_out("frac", out, E.sub(x, E.trunc(x)))


fix = E.trunc  # torch's alias (trunc keeps integers as they are; bool is refused)
def sgn(input, *, out=None):
    """The sign: z / |z| of complex numbers (0 at 0), sign() of real ones (NaN gives 0, as
    torch's)."""
    x = _tensor("sgn", input)
    if x._dtype.is_complex:
        return write_out("sgn", out, complex_ops.complex_sgn(x))
    return E.sign(x, out=out)


def signbit(input, *, out=None):
    """Whether the sign bit is set (bool): true for negatives, -0.0 and NaNs with the sign bit;
    never for unsigned and bool tensors."""
    x = _tensor("signbit", input)
    if x._dtype.is_floating_point:  # copysign reads the bit itself: -0.0 and -NaN count
        result = E.lt(E.copysign(1.0, x.detach()), 0)
    elif x._dtype.is_signed:
        result = E.lt(x, 0)
    else:
        result = creation.zeros(x.shape, dtype=dtypes.bool_, device=x.device)
    return _bool_out("signbit", out, result)


def heaviside(input, values, *, out=None):
    """The Heaviside step: 0 where input < 0, `values` where input == 0, 1 where input > 0
    (and 0 for NaN, as torch's kernel gives). Both tensors must have one dtype; broadcast. Not
    differentiable (torch defines no derivative): the result does not require grad."""
    x = _tensor("heaviside", input)
    v = _tensor("heaviside", values, "values", 2)
    if x._dtype is not v._dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes "
                           f"({x._dtype} and {v._dtype}); convert values with "
                           f".to({x._dtype})")
    x, v = x.detach(), v.detach()
    step = E.gt(x, 0) if x._dtype is dtypes.bool_ else E.gt(x, 0).to(x._dtype)
    return write_out("heaviside", out, E.where(E.eq(x, 0), v, step))


def _integers(fn, input, other):
    x = _tensor(fn, input)
    y = _tensor(fn, other, "other", 2)
    dtype = dtypes.result_type(x, y)
    if dtype.is_floating_point or dtype is dtypes.bool_:
        raise _not_for(fn, dtype, f"{fn} needs integer tensors")
    return x.detach().to(dtype), y.detach().to(dtype)


def _gcd(a, b):
    """Euclid's algorithm as torch's calc_gcd runs it (|a|, |b|, then a, b = b % a, a until a
    is 0; C's truncated remainder), on every element at once: a bounded loop, as the remainders
    fall at least as fast as Fibonacci numbers rise (92 steps cover int64)."""
    a, b = E.abs(a), E.abs(b)
    a, b = E.add(a, E.mul(b, 0)), E.add(b, E.mul(a, 0))  # (broadcast against each other)
    for _ in range(a._dtype.itemsize * 12 + 2):
        live = E.ne(a, 0)
        if not bool(live.any()):
            break
        a, b = E.where(live, E.fmod(b, E.where(live, a, 1)), 0), E.where(live, a, b)
    return b


def gcd(input, other, *, out=None):
    """Greatest common divisor of integer tensors, elementwise (broadcast; gcd(0, 0) = 0)."""
    a, b = _integers("gcd", input, other)
    return write_out("gcd", out, _gcd(a, b))


def lcm(input, other, *, out=None):
    """Least common multiple of integer tensors: |a / gcd(a, b) * b| (0 when both are 0),
    wrapping on overflow as torch's (whose C++ computes 8- and 16-bit types in int)."""
    a, b = _integers("lcm", input, other)
    g = _gcd(a, b)
    zero = E.eq(g, 0)
    dtype = a._dtype
    if dtype.itemsize < 4:  # C++ promotes small integers to int for the arithmetic
        a, b, g = a.to(dtypes.int32), b.to(dtypes.int32), g.to(dtypes.int32)
    m = E.abs(E.mul(E.div(a, E.where(zero, 1, g), rounding_mode="trunc"), b))
    return write_out("lcm", out, E.where(zero, 0, m).to(dtype))


def _logit_rule(g, result, input, eps=None, *, out=None):
    x = input
    d = g / (x * (1 - x))
    if eps is None or eps < 0:  # torch: NaN outside [0, 1]
        return ((x, E.where(E.logical_or(E.lt(x, 0), E.gt(x, 1)), math.nan, d)),)
    return ((x, E.where(E.logical_or(E.lt(x, eps), E.gt(x, 1 - eps)), 0.0, d)),)


@_with_rule("logit", _logit_rule, uses_result=False)
def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)); with `eps`, p is first clamped to [eps, 1 - eps] (where the gradient
    is 0 outside, as torch's). Integer and bool inputs give the default float dtype."""
    x = _floating(_tensor("logit", input))
    if eps is not None and eps >= 0:
        x = E.clamp(x, eps, 1 - eps)
    return write_out("logit", out, E.log(E.div(x, E.sub(1, x))))


def float_power(input, exponent, *, out=None):
    """input ** exponent computed in float64 whatever the dtypes (either may be a number);
    out= must be float64, as torch requires."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"float_power(): expected a Tensor for input or exponent, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    if isinstance(out, Tensor) and out._dtype is not dtypes.float64:
        raise RuntimeError(f"the output given to float_power has dtype "
                           f"{out.dtype.scalar_name} but the operation's result requires "
                           f"dtype Double; pass out with dtype jitensor.float64")
    base = input.to(dtypes.float64) if isinstance(input, Tensor) else float(input)
    exp = exponent.to(dtypes.float64) if isinstance(exponent, Tensor) else exponent
    if not isinstance(exp, Tensor) and not isinstance(exp, bool):
        exp = float(exp)
    return write_out("float_power", out, E.pow(base, exp))


def _double_base(self):
    """`self`, which float_power_ writes its float64 result into: float64 itself, as torch."""
    if self._dtype is not dtypes.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{self.dtype.scalar_name} but the operation's result requires "
                           f"dtype Double; convert it with .double() first")
    return self


def _float_power_(self, exponent):
    return in_place(float_power)(_double_base(self), exponent)


_float_power_.out_of_place = lambda self, exponent: float_power(_double_base(self), exponent)


def _exact_pow2(x, e):
    """x * 2**e for float x and integer e, as C's ldexp: one multiply by an exact power of two
    where 2**e is representable (subnormals included), two halves beyond (so 1e-300 * 2**1100
    does not overflow on the way)."""
    info = np.finfo(x._dtype.np)
    low, high = int(info.minexp) - int(info.nmant), int(info.maxexp) - 1
    e = E.clamp(e.to(dtypes.int64), 2 * low - 2, 2 * high + 2)
    inside = E.logical_and(E.ge(e, low), E.le(e, high))
    half = E.div(e, 2, rounding_mode="floor")
    first = E.where(inside, e, half).to(x._dtype)
    second = E.where(inside, 0, E.sub(e, half)).to(x._dtype)
    return E.mul(E.mul(x, E.pow(2.0, first)), E.pow(2.0, second))


def ldexp(input, other, *, out=None):
    """input * 2 ** other. A float input with an integer `other` is scaled exactly (C's ldexp,
    in input's dtype); otherwise torch's product with a power of two computed in float32 for
    integer and float32 inputs, in input's dtype (promoted with other's) for the rest."""
    x = _tensor("ldexp", input)
    e = _tensor("ldexp", other, "other", 2)
    if out is not None and isinstance(out, Tensor) and not out._dtype.is_floating_point:
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{out.dtype.scalar_name}; pass a floating-point out")
    if x._dtype.is_floating_point and not e._dtype.is_floating_point:
        result = _exact_pow2(x, e.detach())
    else:
        # torch's _pow2: a float32 power for integer and float32 inputs, input's dtype else
        base = 2.0 if not x._dtype.is_floating_point or x._dtype is dtypes.float32 else \
            creation.full((), 2.0, dtype=x._dtype, device=x.device)
        result = E.mul(x, E.pow(base, e))
    return write_out("ldexp", out, result)


_BITS = {dtypes.float16: dtypes.int16, dtypes.float32: dtypes.int32,
         dtypes.float64: dtypes.int64}


def nextafter(input, other, *, out=None):
    """The next representable value after input towards other (floating point, promoted;
    broadcast), by stepping the bit pattern viewed as an integer. Not differentiable (torch
    defines no derivative)."""
    x = _tensor("nextafter", input)
    y = _tensor("nextafter", other, "other", 2)
    dtype = dtypes.result_type(x, y)
    if not dtype.is_floating_point:
        raise _not_for("nextafter", dtype, "nextafter needs floating-point tensors")
    x, y = x.detach().to(dtype), y.detach().to(dtype)
    shape = tuple(E.add(x, y).shape) if x.shape != y.shape else tuple(x.shape)
    x, y = x.expand(shape).contiguous(), y.expand(shape).contiguous()
    bits = x.view(_BITS[dtype])
    # away from zero: +1 on the bit pattern when moving up from a positive or down from a
    # negative, -1 otherwise; from +-0 the smallest subnormal with y's sign
    away = E.eq(E.lt(x, y), E.gt(x, 0))
    stepped = E.add(bits, E.where(away, 1, -1).to(bits.dtype)).view(dtype)
    tiny = float(np.nextafter(dtype.np.type(0), dtype.np.type(1)))
    result = E.where(E.eq(x, 0), E.copysign(tiny, y), stepped)
    result = E.where(E.eq(x, y), y, result)
    result = E.where(E.logical_or(E.isnan(x), E.isnan(y)), math.nan, result)
    return write_out("nextafter", out, result)


def positive(input):
    """input itself (torch's unary +); bool tensors are refused as torch refuses them."""
    x = _tensor("positive", input)
    if x._dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


def rsub(input, other, *, alpha=1):
    """other - alpha * input (other may be a number)."""
    return E.sub(other, _tensor("rsub", input), alpha=alpha)


def isposinf(input, *, out=None):
    """Whether each element is +inf (bool; never for integer tensors)."""
    x = _tensor("isposinf", input).detach()
    if not x._dtype.is_floating_point:
        return _bool_out("isposinf", out, creation.zeros(x.shape, dtype=dtypes.bool_,
                                                         device=x.device))
    return _bool_out("isposinf", out, E.eq(x, math.inf))


def isneginf(input, *, out=None):
    """Whether each element is -inf (bool; never for integer tensors)."""
    x = _tensor("isneginf", input).detach()
    if not x._dtype.is_floating_point:
        return _bool_out("isneginf", out, creation.zeros(x.shape, dtype=dtypes.bool_,
                                                         device=x.device))
    return _bool_out("isneginf", out, E.eq(x, -math.inf))



# -- polygamma and mvlgamma (lgamma, digamma, erfinv, i0 and sinc are kernels: the op table) --
_POLYGAMMA = E.B["polygamma"]
_MAX_TERMS = (1 << 22) - 9  # beyond, the kernel's zeta gives NaN (kernels/scalar/special.py)


def _polygamma_rule(g, result, n, input, *, out=None):
    return ((input, g * polygamma(n + 1, input)),)


@_with_rule("polygamma", _polygamma_rule, uses_result=False)
def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma: digamma for n = 0, torch's trigamma for n = 1, and
    (-1)^(n+1) n! zeta(n + 1, x) for n >= 2 (Cephes' Hurwitz zeta, in float64 for float32
    inputs as torch's CPU kernel accumulates); one kernel (kernels/scalar/special.py)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    x = _tensor("polygamma", input, position=2)
    if n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got n={n})")
    if n >= 2 and x.numel() and float(x.min()) < -_MAX_TERMS:
        raise RuntimeError(f"polygamma(): n >= 2 below x = -{_MAX_TERMS} is not supported (got "
                           f"x = {float(x.min())!r}): Cephes' series would sum |x| terms, and "
                           f"cancels to noise there")
    return E._binary(_POLYGAMMA, int(n), x, out)


def _polygamma_(self, n):
    def op(x):
        return polygamma(n, x)
    op.__name__ = "polygamma"  # (the name in_place's messages give)
    return in_place(op)(self)


_polygamma_.out_of_place = lambda self, n: polygamma(n, self)  # (n comes first)


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma of dimension p: p(p-1)/4 log(pi) + sum_{j<p} lgamma(input -
    j/2) (integer inputs give the default float dtype)."""
    x = _floating(_tensor("mvlgamma", input))
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1 (got p={p})")
    shifts = creation.arange(-(p - 1) / 2, 0.25, 0.5, dtype=x.dtype, device=x.device)
    terms = E.lgamma(E.add(x.unsqueeze(-1), shifts))
    return write_out("mvlgamma", out, E.add(terms.sum(-1), p * (p - 1) / 4 * math.log(math.pi)))


# -- module-level in-place functions (torch.abs_(x), ...) -------------------------------------
_TORCH_INPLACE = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_",
    "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
    "floor_", "frac_", "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
    "resize_as_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "xlogy_", "zero_")


def _module_inplace(name):
    def fn(input, *args, **kwargs):
        # the method looked up per call: autograd's wrapper (version counter, graph) is attached
        # to Tensor after this module is imported
        return getattr(_tensor(name, input), name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: torch's module-level form of the in-place method."
    return fn


globals().update({name: _module_inplace(name) for name in _TORCH_INPLACE})


# -- predicates -------------------------------------------------------------------------------
def is_tensor(obj):
    """Whether obj is a jitensor Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """Whether input's dtype is a floating-point dtype."""
    return _tensor("is_floating_point", input)._dtype.is_floating_point


def is_complex(input):
    """Whether input's dtype is complex (complex64 or complex128)."""
    return _tensor("is_complex", input)._dtype.is_complex


def is_signed(input):
    """Whether input's dtype is signed (not bool or uint8)."""
    return _tensor("is_signed", input)._dtype.is_signed


def is_nonzero(input):
    """Whether the single element of input is nonzero (NaN is); errors for zero or several
    elements, as torch's."""
    n = _tensor("is_nonzero", input).numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if not n else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.detach().item() != 0)


def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    return _tensor("is_same_size", input).shape == \
        _tensor("is_same_size", other, "other", 2).shape


def get_device(input):
    """The CUDA device index of input, or -1 for a CPU tensor (torch's convention)."""
    d = _tensor("get_device", input)._device
    return -1 if d.type == "cpu" else (d.index or 0)


# -- creation ---------------------------------------------------------------------------------
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`steps` powers base ** e, e evenly spaced from start to end, as torch computes them:
    exponents and powers in float64 from bounds rounded to the dtype (integer dtypes: the
    bounds truncated, base taken as float32, the powers truncated)."""
    start = creation._number(start, "logspace", "start")
    end = creation._number(end, "logspace", "end")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"logspace(): argument 'steps' (position 3) must be int, not "
                        f"{type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative (got steps={steps})")
    t = creation._target("logspace", (int(steps),), out, dtype, layout, device, requires_grad,
                         False)
    if t._dtype is dtypes.bool_:
        raise _not_for("logspace", t._dtype, "pass a numeric dtype")
    if not steps:
        return t
    if t._dtype.is_floating_point:
        lo, hi, base = float(t._dtype.np.type(start)), float(t._dtype.np.type(end)), float(base)
    else:
        lo, hi, base = float(int(start)), float(int(end)), float(np.float32(base))
    i = creation.arange(steps, dtype=dtypes.float64, device=t.device)
    if steps == 1:
        exponent = E.add(E.mul(i, 0), lo)
    else:  # torch's two halves: from start up to the middle, from end down after it
        step = (hi - lo) / (steps - 1)
        exponent = E.where(E.lt(i, steps // 2), E.add(E.mul(i, step), lo),
                           E.sub(hi, E.mul(E.sub(steps - 1, i), step)))
    backend(t._device).copy(t._data, E.pow(base, exponent)._data)
    return t


def _window_length(fn, window_length, dtype, layout, device):
    if isinstance(window_length, bool) or not isinstance(window_length, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{fn} requires non-negative window_length, got "
                           f"window_length={window_length}")
    creation._check_layout(layout, None, fn)
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{fn} expects floating point dtypes, got: {dtype}")
    return dtype, creation.CPU if device is None else _to_device(device)


def _window(fn, window_length, periodic, dtype, layout, device, requires_grad, make):
    """torch's frame for the window functions: checks, [] for length 0, [1] for length 1, one
    extra point dropped when periodic; `make(n, dtype, device)` gives the symmetric window of
    n >= 2 points."""
    dtype, device = _window_length(fn, window_length, dtype, layout, device)
    if window_length <= 1:
        w = creation.ones(int(window_length), dtype=dtype, device=device)
    else:
        n = int(window_length) + 1 if periodic else int(window_length)
        w = make(n, dtype, device)
        if periodic:
            w = w[:n - 1].contiguous()
    return w.requires_grad_(requires_grad) if requires_grad else w


def _cosine_window(alpha, beta):
    def make(n, dtype, device):
        k = creation.arange(n, dtype=dtype, device=device)
        return E.add(E.mul(E.cos(E.mul(k, math.pi * 2 / (n - 1))), -beta), alpha)
    return make


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """0.5 - 0.5 cos(2 pi k / (N - 1)) (N = window_length, + 1 when periodic)."""
    return _window("hann_window", window_length, periodic, dtype, layout, device, requires_grad,
                   _cosine_window(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """alpha - beta cos(2 pi k / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _cosine_window(alpha, beta))


def _blackman(n, dtype, device):
    k = E.mul(creation.arange(n, dtype=dtype, device=device), math.pi / (n - 1))
    return E.add(E.sub(E.mul(E.cos(E.mul(k, 4)), 0.08), E.mul(E.cos(E.mul(k, 2)), 0.5)), 0.42)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _blackman)


def _bartlett(n, dtype, device):
    k = creation.arange(n, dtype=dtype, device=device)
    w = E.mul(k, 2 / (n - 1))
    return E.where(E.ge(k, ((n - 1) >> 1) + 1), E.add(E.neg(w), 2), w)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The triangle 1 - |2k / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _bartlett)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """i0(beta sqrt(1 - ((k - a) / a)^2)) / i0(beta), a = (N - 1) / 2."""
    def make(n, dtype, device):
        a = (n - 1) / 2
        k = creation.arange(n, dtype=dtype, device=device)
        r = E.sqrt(E.abs(E.sub(1, E.square(E.div(E.sub(k, a), a)))))
        beta_ = creation.full((), beta, dtype=dtype, device=device)
        return E.div(E.i0(E.mul(r, beta_)), E.i0(beta_))
    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, make)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A 0-d tensor holding the number s, of the default float dtype unless dtype says
    otherwise (even for an int or bool s, as torch's)."""
    if isinstance(s, Tensor):
        s = s.item()
    dtype = dtypes.get_default_dtype() if dtype is None else dtype
    return creation.full((), s, dtype=dtype, layout=layout, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of `size` whose strides (in elements) are `stride`: a view of a
    new buffer just large enough for its last element (strides may overlap or be 0)."""
    size, stride = list(size), list(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    for values, what in ((size, "sizes"), (stride, "strides")):
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"empty_strided(): {what} must be ints, got "
                                f"{type(v).__name__}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {size}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided(): negative strides are not supported, got "
                           f"strides={stride}")
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=False))
    buf = creation.empty(extent, dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory)
    t = strided_view(buf, [int(n) for n in size], [int(s) for s in stride])
    return t.requires_grad_(requires_grad) if requires_grad else t


# (bits dtype, mantissa bits, exponent field mask, exponent bias - 1) of each float dtype
_FLOAT_BITS = {dtypes.float16: (dtypes.int16, 10, 0x1F, 14),
               dtypes.float32: (dtypes.int32, 23, 0xFF, 126),
               dtypes.float64: (dtypes.int64, 52, 0x7FF, 1022)}
return_types.frexp = _return_type("frexp", ("mantissa", "exponent"))


def frexp(input, *, out=None):
    """(mantissa, exponent): input = mantissa * 2 ** exponent with |mantissa| in [0.5, 1)
    (0, inf and nan: themselves and 0); exponent int32. The exponent is read from the bits
    (a subnormal's after an exact scaling up), the mantissa scaled by two exact powers of two
    (one could overflow), so it has input's gradient times 2 ** -exponent."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    bits, shift, mask, bias = _FLOAT_BITS[input.dtype]
    x = input.detach()
    field = (x.view(bits) >> shift) & mask
    up = shift + 1  # scales a subnormal to a normal number, exactly
    scaled = ((x * float(2 ** up)).view(bits) >> shift) & mask
    e = E.where(field == 0, scaled - (bias + up), field - bias)
    e = E.where(E.isfinite(x) & (x != 0), e, 0).to(dtypes.int32)
    half = E.floor_divide(e, 2)
    mantissa = input * E.exp2((-half).to(input.dtype)) * E.exp2((half - e).to(input.dtype))
    if out is not None:
        out[0].copy_(mantissa)
        out[1].copy_(e)
        mantissa, e = out
    return return_types.frexp(mantissa, e)


# -- exports ----------------------------------------------------------------------------------
# in-place methods that run their out-of-place op (autograd/wrap.py rebases self on its graph)
COMPOSED = ("deg2rad", "rad2deg", "frac", "fix", "sgn", "heaviside", "gcd", "lcm", "logit",
            "float_power", "ldexp", "nextafter", "mvlgamma")

_FUNCTIONS = ("deg2rad", "rad2deg", "frac", "fix", "sgn", "signbit", "heaviside", "gcd", "lcm",
              "logit", "float_power", "ldexp", "nextafter", "positive", "rsub", "isposinf",
              "isneginf", "polygamma", "mvlgamma", "is_tensor", "is_floating_point",
              "is_complex", "is_signed", "is_nonzero", "is_same_size", "get_device", "logspace",
              "hann_window", "hamming_window", "blackman_window", "bartlett_window",
              "kaiser_window", "scalar_tensor", "empty_strided", "frexp")

__all__ = sorted(_FUNCTIONS + _TORCH_INPLACE)

_METHODS = ("deg2rad", "rad2deg", "frac", "fix", "sgn", "signbit", "heaviside", "gcd", "lcm",
            "logit", "float_power", "ldexp", "nextafter", "positive", "isposinf", "isneginf",
            "mvlgamma", "is_complex", "frexp",
            "is_signed", "is_nonzero", "is_same_size", "get_device")
TENSOR_METHODS = {name: globals()[name] for name in _METHODS}
TENSOR_METHODS.update({name + "_": in_place(globals()[name]) for name in COMPOSED})
TENSOR_METHODS.update(
    polygamma=lambda self, n, *, out=None: polygamma(n, self, out=out),
    # (not in COMPOSED: its method's argument order is not the function's, so it is not
    # differentiable in place)
    polygamma_=_polygamma_,
    clamp_min_=in_place(E.clamp_min), clamp_max_=in_place(E.clamp_max),
    float_power_=_float_power_,
    type_as=lambda self, other: self.to(_tensor("type_as", other, "other")),
    ndimension=lambda self: self.ndim,
)
