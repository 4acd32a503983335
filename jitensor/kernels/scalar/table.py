"""The elementwise ops, one row each. Everything else about an op comes from its row:

- both devices' kernels: each family's switch over op codes is generated from its rows, a loop
  per op on the CPU (kernels/cpu/elementwise.py), one store per thread on CUDA
  (kernels/cuda/elementwise.py);
- the op codes: an op's position in its family;
- the front end (ops/elementwise.py): the public function, Tensor method and in-place form,
  the result dtype rule, the treatment of bool operands, the docstring;
- the derivative, for the rows that give one as an expression (autograd/derivatives).

A row's `formula` is a Python expression of its family's arguments (`ARGUMENTS`) calling the
scalar definitions both targets share: `s.` kernels/scalar/elementwise.py, `libm.`,
`ls.` kernels/scalar/loss.py, `sp.` kernels/scalar/special.py. `int` is the formula for
integer compute dtypes where it differs (it gets its own code), `cpu` the CPU's where it
differs, `cpu_then` a statement the CPU runs after the loop. `heavy` marks ops that compute
more than they move: the CPU writes their large outputs with normal stores, not streaming
ones. Activations and pointwise losses also give `kernel_grad`, the formula of g * f'(x) of
their "<family>_grad" kernel (same codes). `grad` is the derivative for autograd, an
expression of `g` (the incoming gradient), `input` and `result` (for two operands a pair, one
per operand, also of `other`; None where torch has no derivative), evaluated with the public
ops; ops without one have a rule in autograd/derivatives.

This module imports nothing, so that the elementwise kernels' disk-cache key
(kernels/kernel_cache.py) covers it and not the front end."""

SAME, FLOAT, BOOL, FLOATS_ONLY = range(4)
"""Result rules: SAME keeps the promoted dtype, FLOAT turns integer/bool results into the
default float dtype (true division, exp, ...), BOOL gives bool (comparisons, predicates),
FLOATS_ONLY refuses integer and bool operands as torch does (hypot, logaddexp)."""

# each family's kernel arguments after (op, out): three operands (array or scalar), one scalar
ARGUMENTS = {
    "unary": ("x", "p", "q", "r"), "predicate": ("x", "b", "c", "d"),
    "arith": ("x", "y", "alpha", "d"), "compare": ("x", "y", "c", "d"),
    "bitwise": ("x", "y", "c", "d"), "ternary": ("c", "x", "y", "d"),
    "math": ("x", "b", "c", "d"), "math2": ("x", "y", "c", "d"),
    "special": ("x", "b", "c", "d"), "special2": ("x", "y", "c", "d"),
    "bessel": ("x", "b", "c", "d"), "polynomial": ("x", "y", "c", "d"),
    "activation": ("x", "p", "q", "r"), "activation_grad": ("g", "x", "c", "d"),
    "loss": ("x", "y", "c", "d"), "loss_grad": ("x", "y", "c", "d"),
}
GRADIENTS = {"activation": "activation_grad", "loss": "loss_grad"}  # kernel_grad's families

NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.")
SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


class Op:
    """One elementwise op (see the module docstring). `bool_as`: the dtype name bool operands
    compute in, or None to refuse them (with `bool_error`, else "not implemented");
    `int_identity`: integers come back as they are (rounding); `public`: the front end makes a
    function and Tensor methods of it (kernel-only rows: the parts of composite ops);
    `special_only`: torch has it in torch.special alone (not a Tensor method, not top level)."""

    __slots__ = ("name", "family", "formula", "int", "cpu", "cpu_then", "heavy", "rule",
                 "bool_as", "bool_error", "int_identity", "grad", "kernel_grad", "doc",
                 "grad_heavy", "aliases", "public", "special_only", "code", "int_code")

    def __init__(self, name, family, formula, doc="", *, int=None, cpu=None, cpu_then=None,
                 heavy=False, rule=SAME, bool_as="uint8", bool_error=None, int_identity=False,
                 grad=None, kernel_grad=None, grad_heavy=None, aliases=(), public=True,
                 special_only=False):
        self.name, self.family, self.formula, self.doc = name, family, formula, doc
        self.int, self.cpu, self.cpu_then, self.heavy = int, cpu, cpu_then, heavy
        self.rule, self.bool_as, self.bool_error = rule, bool_as, bool_error
        self.int_identity, self.grad, self.kernel_grad = int_identity, grad, kernel_grad
        self.grad_heavy = grad_heavy  # heavy for the kernel_grad kernel, when it differs
        self.aliases, self.public, self.special_only = aliases, public, special_only
        self.code = self.int_code = None  # set below, from the row's place in its family

    def __repr__(self):
        return f"Op({self.name!r}, {self.family!r}, {self.formula!r})"


# the CPU's sin, cos and tan (0, 1, 2) recompute by libm the few results their reduction
# cannot serve
_FIX_SIN, _FIX_COS, _FIX_TAN = (f"_trig_by_libm({kind}, out, x)" for kind in range(3))
_ZERO = "zeros_like(g)"  # the derivative of a step function

OPS = [
    # -- unary: the common functions of one operand --------------------------------------------
    Op("neg", "unary", "-x", "-input.", bool_as=None, bool_error=NEG_BOOL, grad="-g",
       aliases=("negative",)),
    Op("abs", "unary", "abs(x)", "|input|.", bool_as=None, grad="g * sgn(input)",
       aliases=("absolute",)),
    Op("sign", "unary", "s.sign(x)", "-1, 0 or 1 by the sign of each element (NaN stays NaN).",
       grad=_ZERO),
    Op("exp", "unary", "libm.exp(x)", "e ** input (integers give floats).", rule=FLOAT,
       heavy=True, grad="g * result"),
    Op("log", "unary", "libm.log(x)", "Natural logarithm (integers give floats).", rule=FLOAT,
       heavy=True, grad="g / input"),
    Op("log1p", "unary", "libm.log1p(x)", "log(1 + input), accurate near 0.", rule=FLOAT,
       heavy=True, grad="g / (input + 1)"),
    Op("expm1", "unary", "libm.expm1(x)", "exp(input) - 1, accurate near 0.", rule=FLOAT,
       heavy=True, grad="g * (result + 1)"),
    Op("sqrt", "unary", "libm.sqrt(x)", "Square root (integers give floats).", rule=FLOAT,
       grad="g / (2 * result)"),
    Op("rsqrt", "unary", "1 / libm.sqrt(x)", "1 / sqrt(input).", rule=FLOAT,
       grad="g * -0.5 * result * result * result"),
    Op("sin", "unary", "libm.sin(x)", "Sine.", cpu="libm.reduced_sin(x)", cpu_then=_FIX_SIN,
       rule=FLOAT, heavy=True, grad="g * cos(input)"),
    Op("cos", "unary", "libm.cos(x)", "Cosine.", cpu="libm.reduced_cos(x)", cpu_then=_FIX_COS,
       rule=FLOAT, heavy=True, grad="-g * sin(input)"),
    Op("tanh", "unary", "libm.tanh(x)", "Hyperbolic tangent.", rule=FLOAT, heavy=True,
       grad="g * (1 - result * result)"),
    Op("sigmoid", "unary", "s.sigmoid(x)",
       "1 / (1 + exp(-input)), without overflow for large |input|.", rule=FLOAT, heavy=True,
       grad="g * result * (1 - result)"),
    Op("relu", "unary", "s.relu(x)", "max(input, 0); NaN propagates.", bool_as=None,
       bool_error="Boolean inputs not supported for relu"),
    Op("floor", "unary", "libm.floor(x)", "Round down (integers are returned as they are).",
       bool_as=None, int_identity=True, grad=_ZERO),
    Op("ceil", "unary", "libm.ceil(x)", "Round up (integers are returned as they are).",
       bool_as=None, int_identity=True, grad=_ZERO),
    Op("round", "unary", "libm.rint(x)",
       "Round half to even (integers are returned as they are).", bool_as=None,
       int_identity=True, grad=_ZERO),
    Op("trunc", "unary", "libm.trunc(x)",
       "Round toward zero (integers are returned as they are).", bool_as=None,
       int_identity=True, grad=_ZERO),
    Op("reciprocal", "unary", "1 / x", "1 / input (integers give floats).", rule=FLOAT,
       grad="-g * result * result"),
    Op("square", "unary", "x * x", "input * input.", bool_as="int64", grad="2 * g * input"),
    Op("nan_to_num", "unary", "s.nan_to_num(x, p, q, r)", public=False),
    Op("clamp", "unary", "s.clamp(x, p, q)", public=False),
    # -- predicate: functions of one operand with a bool result --------------------------------
    Op("logical_not", "predicate", "x == 0", "input == 0 (bool).", rule=BOOL),
    Op("isnan", "predicate", "x != x", "Whether each element is NaN (bool).", rule=BOOL),
    Op("isinf", "predicate", "libm.isinf(x)", "Whether each element is +-inf (bool).",
       rule=BOOL),
    Op("isfinite", "predicate", "libm.isfinite(x)",
       "Whether each element is neither NaN nor +-inf (bool).", rule=BOOL),
    # -- arith: the operators and their kin ----------------------------------------------------
    # (add, sub, div: functions of their own signatures, documented there)
    Op("add", "arith", "s.add(x, y, alpha)"),
    Op("sub", "arith", "s.sub(x, y, alpha)", bool_as=None, bool_error=SUB_BOOL,
       aliases=("subtract",)),
    Op("mul", "arith", "x * y", "input * other, with broadcasting and type promotion.",
       aliases=("multiply",)),
    Op("div", "arith", "x / y", rule=FLOAT, aliases=("divide", "true_divide")),
    Op("floor_divide", "arith", "s.floor_divide_float(x, y)",
       "Division rounded toward negative infinity.", int="s.floor_divide_int(x, y)",
       bool_as=None),
    Op("div_trunc", "arith", "libm.trunc(x / y)", int="s.trunc_divide(x, y)", bool_as=None,
       public=False),
    Op("remainder", "arith", "x % y", "Python's modulo: the result takes the divisor's sign.",
       bool_as=None),
    Op("fmod", "arith", "libm.fmod(x, y)", "C's fmod: the result takes the dividend's sign.",
       int="s.fmod(x, y)", heavy=True, bool_as=None),
    Op("pow", "arith", "x ** y", int="s.int_pow(x, y)", heavy=True, bool_as=None,
       public=False),
    Op("maximum", "arith", "s.maximum(x, y)", "Elementwise maximum; NaN propagates."),
    Op("minimum", "arith", "s.minimum(x, y)", "Elementwise minimum; NaN propagates."),
    Op("atan2", "arith", "libm.atan2(x, y)", "The angle of (other, input), elementwise.",
       rule=FLOAT, heavy=True, aliases=("arctan2",)),
    # -- compare: two operands, a bool result --------------------------------------------------
    Op("eq", "compare", "x == y", "input == other, elementwise (bool).", rule=BOOL),
    Op("ne", "compare", "x != y", "input != other, elementwise (bool).", rule=BOOL,
       aliases=("not_equal",)),
    Op("lt", "compare", "x < y", "input < other, elementwise (bool).", rule=BOOL,
       aliases=("less",)),
    Op("le", "compare", "x <= y", "input <= other, elementwise (bool).", rule=BOOL,
       aliases=("less_equal",)),
    Op("gt", "compare", "x > y", "input > other, elementwise (bool).", rule=BOOL,
       aliases=("greater",)),
    Op("ge", "compare", "x >= y", "input >= other, elementwise (bool).", rule=BOOL,
       aliases=("greater_equal",)),
    Op("logical_and", "compare", "(x != 0) & (y != 0)", "Both nonzero (bool).", rule=BOOL),
    Op("logical_or", "compare", "(x != 0) | (y != 0)", "Either nonzero (bool).", rule=BOOL),
    Op("logical_xor", "compare", "s.logical_xor(x, y)", "Exactly one nonzero (bool).",
       rule=BOOL),
    # -- bitwise: integer and bool operands only -----------------------------------------------
    Op("bitwise_and", "bitwise", "x & y", "Bitwise AND of integer or bool tensors."),
    Op("bitwise_or", "bitwise", "x | y", "Bitwise OR of integer or bool tensors."),
    Op("bitwise_xor", "bitwise", "x ^ y", "Bitwise XOR of integer or bool tensors."),
    Op("bitwise_left_shift", "bitwise", "s.shift_left(x, y)",
       "input << other for integer tensors (0 for a shift by the width or more, or negative).",
       bool_as=None),
    Op("bitwise_right_shift", "bitwise", "s.shift_right(x, y)",
       "input >> other for integer tensors (the sign bits for a shift by the width or more, or "
       "negative).", bool_as=None),
    Op("bitwise_not", "bitwise", "~x", "~input for integers; logical not for bool.",
       bool_as=None),
    # -- ternary: a condition or an input and two bounds ---------------------------------------
    Op("where", "ternary", "x if c else y", public=False),
    Op("clamp_tensor", "ternary", "s.clamp(c, x, y)", public=False),
    # -- math, math2: the rarer functions, families of their own so that the common families'
    # kernels, compiled by nearly every program, stay small --------------------------------------
    Op("tan", "math", "libm.tan(x)", "Tangent (integers give floats).",
       cpu="libm.reduced_tan(x)", cpu_then=_FIX_TAN, rule=FLOAT, heavy=True,
       grad="g * (1 + result * result)"),
    Op("asin", "math", "libm.asin(x)", "Arcsine.", rule=FLOAT, heavy=True,
       grad="g * rsqrt(1 - input * input)", aliases=("arcsin",)),
    Op("acos", "math", "libm.acos(x)", "Arccosine.", rule=FLOAT, heavy=True,
       grad="-g * rsqrt(1 - input * input)", aliases=("arccos",)),
    Op("atan", "math", "libm.atan(x)", "Arctangent.", rule=FLOAT, heavy=True,
       grad="g / (1 + input * input)", aliases=("arctan",)),
    Op("sinh", "math", "libm.sinh(x)", "Hyperbolic sine.", rule=FLOAT, heavy=True,
       grad="g * cosh(input)"),
    Op("cosh", "math", "libm.cosh(x)", "Hyperbolic cosine.", rule=FLOAT, heavy=True,
       grad="g * sinh(input)"),
    Op("asinh", "math", "libm.asinh(x)", "Inverse hyperbolic sine.", rule=FLOAT, heavy=True,
       grad="g * rsqrt(input * input + 1)", aliases=("arcsinh",)),
    Op("acosh", "math", "libm.acosh(x)", "Inverse hyperbolic cosine.", rule=FLOAT, heavy=True,
       grad="g * rsqrt((input - 1) * (input + 1))", aliases=("arccosh",)),
    Op("atanh", "math", "libm.atanh(x)", "Inverse hyperbolic tangent.", rule=FLOAT,
       heavy=True, grad="g / (1 - input * input)", aliases=("arctanh",)),
    Op("log2", "math", "libm.log2(x)", "Base-2 logarithm.", rule=FLOAT, heavy=True,
       grad="g / (input * math.log(2))"),
    Op("log10", "math", "libm.log10(x)", "Base-10 logarithm.", rule=FLOAT, heavy=True,
       grad="g / (input * math.log(10))"),
    Op("exp2", "math", "libm.exp2(x)", "2 ** input.", rule=FLOAT, heavy=True,
       grad="g * result * math.log(2)"),
    Op("erf", "math", "libm.erf(x)", "The error function.", rule=FLOAT, heavy=True,
       grad="g * (2 / math.sqrt(math.pi)) * exp(-input * input)"),
    Op("erfc", "math", "libm.erfc(x)", "1 - erf(input), accurate where erf is near 1.",
       rule=FLOAT, heavy=True, grad="g * (-2 / math.sqrt(math.pi)) * exp(-input * input)"),
    Op("hypot", "math2", "libm.hypot(x, y)", "sqrt(input ** 2 + other ** 2), without overflow.",
       rule=FLOATS_ONLY, heavy=True),
    Op("copysign", "math2", "libm.copysign(x, y)",
       "|input| with the sign of other (a float result).", rule=FLOAT),
    Op("logaddexp", "math2", "s.logaddexp(x, y)",
       "log(exp(input) + exp(other)), without overflow.", rule=FLOATS_ONLY, heavy=True),
    Op("logaddexp2", "math2", "s.logaddexp2(x, y)",
       "log2(2 ** input + 2 ** other), without overflow.", rule=FLOATS_ONLY, heavy=True),
    Op("fmax", "math2", "s.fmax(x, y)",
       "Elementwise maximum that ignores NaN unless both are NaN."),
    Op("fmin", "math2", "s.fmin(x, y)",
       "Elementwise minimum that ignores NaN unless both are NaN."),
    Op("xlogy", "math2", "s.xlogy(x, y)",
       "input * log(other), 0 where input is 0 (unless other is NaN).", rule=FLOAT,
       heavy=True),
    # -- special, special2: torch.special's functions (kernels/scalar/special.py); families of
    # their own, compiled only by the programs that use them -----------------------------------
    Op("lgamma", "special", "sp.lgamma(x)",
       "log|Gamma(input)|: +inf at the poles (0 and the negative integers) and at +-inf.",
       rule=FLOAT, heavy=True, grad="g * digamma(input)"),
    Op("digamma", "special", "sp.digamma(x)",
       "The logarithmic derivative of Gamma (Cephes' psi, as torch): -inf at +0, NaN at the "
       "negative integers.", rule=FLOAT, heavy=True, grad="g * polygamma(1, input)"),
    Op("erfinv", "special", "sp.erfinv(x)",
       "The inverse error function on [-1, 1] (+-inf at +-1, NaN outside).", rule=FLOAT,
       heavy=True, grad="g * (math.sqrt(math.pi) / 2) * exp(result * result)"),
    Op("i0", "special", "sp.i0(x)",
       "The modified Bessel function of the first kind of order 0 (Cephes', as torch).",
       rule=FLOAT, heavy=True, grad="g * i1(input)"),
    Op("i0e", "special", "sp.i0e(x)", "exp(-|input|) i0(input), without overflow.", rule=FLOAT,
       heavy=True, grad="g * (i1e(input) - sign(input) * result)", special_only=True),
    Op("i1", "special", "sp.i1(x)",
       "The modified Bessel function of the first kind of order 1 (Cephes', as torch).",
       rule=FLOAT, heavy=True,
       grad="g * where(input == 0, 0.5, i0(input) - result * reciprocal(input))",
       special_only=True),
    Op("i1e", "special", "sp.i1e(x)", "exp(-|input|) i1(input), without overflow.", rule=FLOAT,
       heavy=True, special_only=True,
       grad="g * where(input == 0, 0.5, i0e(input) - result * (sign(input) + reciprocal(input)))"),
    Op("ndtr", "special", "sp.ndtr(x)", "The standard normal CDF, Phi(input).", rule=FLOAT,
       heavy=True, special_only=True,
       grad="g * exp(-0.5 * input * input) * (2 / math.sqrt(math.pi) * math.sqrt(0.5) * 0.5)"),
    Op("ndtri", "special", "sp.ndtri(x)",
       "The inverse of the standard normal CDF (-inf at 0, +inf at 1, NaN outside [0, 1]).",
       rule=FLOAT, heavy=True, special_only=True,
       grad="g * math.sqrt(2 * math.pi) * exp(result * result / 2)"),
    Op("log_ndtr", "special", "sp.log_ndtr(x)", "log(ndtr(input)), accurate in the lower tail.",
       rule=FLOAT, heavy=True, special_only=True,
       grad="g / math.sqrt(2 * math.pi) * exp(-(result + input * input / 2))"),
    Op("erfcx", "special", "sp.erfcx(x)", "exp(input ** 2) erfc(input), without overflow.",
       rule=FLOAT, heavy=True, special_only=True,
       grad="(2.0 * input * result - 2.0 / math.sqrt(math.pi)) * g"),
    Op("entr", "special", "sp.entr(x)", "-input log(input): 0 at 0, -inf below 0.", rule=FLOAT,
       heavy=True, special_only=True, grad="g * -(1 + log(input))"),
    Op("sinc", "special", "sp.sinc(x)", "sin(pi input) / (pi input), 1 at 0.", rule=FLOAT,
       heavy=True, grad="where(input == 0, 0.0, (math.pi * input * cos(math.pi * input) "
                        "- sin(math.pi * input)) / (math.pi * input * input)) * g"),
    Op("bessel_j0", "special", "sp.bessel_j0(x)",
       "The Bessel function of the first kind of order 0 (not differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("bessel_j1", "special", "sp.bessel_j1(x)",
       "The Bessel function of the first kind of order 1 (not differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("xlog1py", "special2", "sp.xlog1py(x, y)",
       "input * log1p(other), 0 where input is 0 (unless other is NaN).", rule=FLOAT,
       heavy=True, special_only=True,
       grad=("where((input == 0) & (other <= -1), 0.0, xlog1py(g, other))",
             "g * input / (other + 1)")),
    Op("zeta", "special2", "sp.zeta(x, y)",
       "The Hurwitz zeta function, sum over k >= 0 of (other + k) ** -input.", rule=FLOAT,
       heavy=True, special_only=True,
       grad=(None, "g * -input * zeta(input + 1.0, other)")),
    Op("polygamma", "special2", "sp.polygamma(int(x), y)", rule=FLOAT, heavy=True,
       public=False),  # polygamma(n, input): ops/pointwise.py
    Op("igamma", "special2", "sp.igamma(x, y)",
       "The regularized lower incomplete gamma function P(input, other) "
       "(torch.special.gammainc); a derivative for other only, as in torch.",
       rule=FLOATS_ONLY, heavy=True,
       grad=(None, "g * exp((input - 1) * log(other) - other - lgamma(input))")),
    Op("igammac", "special2", "sp.igammac(x, y)",
       "The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other) "
       "(torch.special.gammaincc); a derivative for other only, as in torch.",
       rule=FLOATS_ONLY, heavy=True,
       grad=(None, "-g * exp((input - 1) * log(other) - other - lgamma(input))")),
    # -- bessel, polynomial: torch.special's functions without derivatives (as in torch): the
    # Bessel functions of the second kind, modified and spherical ones, Airy's Ai, and the
    # orthogonal polynomials of (input, n); families of their own, so that the special
    # families' CUDA compiles (lgamma, digamma, ...) stay as they were ---------------------------
    Op("airy_ai", "bessel", "sp.airy_ai(x)",
       "Airy's function Ai (not differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("bessel_y0", "bessel", "sp.bessel_y0(x)",
       "The Bessel function of the second kind of order 0: -inf at 0, NaN below (not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("bessel_y1", "bessel", "sp.bessel_y1(x)",
       "The Bessel function of the second kind of order 1: -inf at 0, NaN below (not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("modified_bessel_i0", "bessel", "sp.i0(x)",
       "The modified Bessel function of the first kind of order 0, i0 (not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("modified_bessel_i1", "bessel", "sp.i1(x)",
       "The modified Bessel function of the first kind of order 1, i1 (not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("modified_bessel_k0", "bessel", "sp.modified_bessel_k0(x)",
       "The modified Bessel function of the second kind of order 0: inf at 0, NaN below (not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("modified_bessel_k1", "bessel", "sp.modified_bessel_k1(x)",
       "The modified Bessel function of the second kind of order 1: inf at 0, NaN below (not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("scaled_modified_bessel_k0", "bessel", "sp.scaled_modified_bessel_k0(x)",
       "exp(input) modified_bessel_k0(input), without underflow (not differentiable, as in "
       "torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("scaled_modified_bessel_k1", "bessel", "sp.scaled_modified_bessel_k1(x)",
       "exp(input) modified_bessel_k1(input), without underflow (not differentiable, as in "
       "torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("spherical_bessel_j0", "bessel", "sp.spherical_bessel_j0(x)",
       "The spherical Bessel function of the first kind of order 0, sin(input) / input (not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("chebyshev_polynomial_t", "polynomial", "sp.chebyshev_polynomial_t(x, y)",
       "The Chebyshev polynomial of the first kind T_n(input) (n truncated to an integer; not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("chebyshev_polynomial_u", "polynomial", "sp.chebyshev_polynomial_u(x, y)",
       "The Chebyshev polynomial of the second kind U_n(input) (n truncated to an integer; not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("chebyshev_polynomial_v", "polynomial", "sp.chebyshev_polynomial_v(x, y)",
       "The Chebyshev polynomial of the third kind V_n(input) (n truncated to an integer; not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("chebyshev_polynomial_w", "polynomial", "sp.chebyshev_polynomial_w(x, y)",
       "The Chebyshev polynomial of the fourth kind W_n(input) (n truncated to an integer; not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("shifted_chebyshev_polynomial_t", "polynomial", "sp.shifted_chebyshev_polynomial_t(x, y)",
       "T_n(2 input - 1), the shifted Chebyshev polynomial of the first kind (n truncated to an "
       "integer; not differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("shifted_chebyshev_polynomial_u", "polynomial", "sp.shifted_chebyshev_polynomial_u(x, y)",
       "U_n(2 input - 1), the shifted Chebyshev polynomial of the second kind (n truncated to an"
       " integer; not differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("shifted_chebyshev_polynomial_v", "polynomial", "sp.shifted_chebyshev_polynomial_v(x, y)",
       "V_n(2 input - 1), the shifted Chebyshev polynomial of the third kind (n truncated to an "
       "integer; not differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("shifted_chebyshev_polynomial_w", "polynomial", "sp.shifted_chebyshev_polynomial_w(x, y)",
       "W_n(2 input - 1), the shifted Chebyshev polynomial of the fourth kind (n truncated to an"
       " integer; not differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("hermite_polynomial_h", "polynomial", "sp.hermite_polynomial_h(x, y)",
       "The physicists' Hermite polynomial H_n(input) (n truncated to an integer; not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("hermite_polynomial_he", "polynomial", "sp.hermite_polynomial_he(x, y)",
       "The probabilists' Hermite polynomial He_n(input) (n truncated to an integer; not "
       "differentiable, as in torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("laguerre_polynomial_l", "polynomial", "sp.laguerre_polynomial_l(x, y)",
       "The Laguerre polynomial L_n(input) (n truncated to an integer; not differentiable, as in"
       " torch).",
       rule=FLOAT, heavy=True, special_only=True),
    Op("legendre_polynomial_p", "polynomial", "sp.legendre_polynomial_p(x, y)",
       "The Legendre polynomial P_n(input) (n truncated to an integer; not differentiable, as in"
       " torch).",
       rule=FLOAT, heavy=True, special_only=True),
    # -- activation: torch.nn.functional's pointwise layers (ops/activation.py), parameters
    # p, q, r; their "activation_grad" kernels take g, x and parameters c, d ---------------------
    Op("gelu", "activation", "s.gelu(x)", heavy=True, kernel_grad="s.gelu_grad(g, x)",
       public=False),
    Op("gelu_tanh", "activation", "s.gelu_tanh(x)", heavy=True,
       kernel_grad="s.gelu_tanh_grad(g, x)", public=False),
    Op("silu", "activation", "s.silu(x)", heavy=True, kernel_grad="s.silu_grad(g, x)",
       public=False),
    Op("mish", "activation", "s.mish(x)", heavy=True, kernel_grad="s.mish_grad(g, x)",
       public=False),
    Op("softplus", "activation", "s.softplus(x, p, q)", heavy=True,
       kernel_grad="s.softplus_grad(g, x, c, d)", public=False),
    Op("leaky_relu", "activation", "s.leaky_relu(x, p)",
       kernel_grad="s.leaky_relu_grad(g, x, c)", public=False),
    Op("elu", "activation", "s.elu(x, p, q, r)", heavy=True,
       kernel_grad="s.elu_grad(g, x, c, d)", public=False),
    Op("logsigmoid", "activation", "s.logsigmoid(x)", heavy=True,
       kernel_grad="s.logsigmoid_grad(g, x)", public=False),
    Op("hardsigmoid", "activation", "s.hardsigmoid(x)",
       kernel_grad="s.hardsigmoid_grad(g, x)", public=False),
    Op("hardswish", "activation", "s.hardswish(x)", kernel_grad="s.hardswish_grad(g, x)",
       public=False),
    Op("threshold", "activation", "s.threshold(x, p, q)",
       kernel_grad="s.threshold_grad(g, x, c)", public=False),
    # derivatives only: selu runs forward as elu, hardtanh as a clamp
    Op("selu", "activation", None, kernel_grad="s.selu_grad(g, x)", grad_heavy=True,
       public=False),
    Op("hardtanh", "activation", None, kernel_grad="s.hardtanh_grad(g, x, c, d)",
       public=False),
    # -- loss: torch.nn.functional's pointwise losses (ops/loss.py), unreduced; parameter d ------
    Op("smooth_l1", "loss", "ls.smooth_l1(x, y, d)", kernel_grad="ls.smooth_l1_grad(x, y, d)",
       public=False),
    Op("huber", "loss", "ls.huber(x, y, d)", kernel_grad="ls.huber_grad(x, y, d)",
       public=False),
    Op("bce", "loss", "ls.bce(x, y)", heavy=True, kernel_grad="ls.bce_grad(x, y)",
       grad_heavy=False, public=False),
    Op("bce_logits", "loss", "ls.bce_logits(x, y, c)", heavy=True,
       kernel_grad="ls.bce_logits_grad(x, y, c)", public=False),
    Op("kl_div", "loss", "ls.kl_div(x, y)", heavy=True, kernel_grad="-y", grad_heavy=False,
       public=False),
    Op("kl_div_log", "loss", "ls.kl_div_log(x, y)", heavy=True, kernel_grad="-libm.exp(y)",
       public=False),
]

BY_NAME = {op.name: op for op in OPS}
FAMILIES = {}  # family -> its rows, in code order
for _op in OPS:
    _op.code = len(FAMILIES.setdefault(_op.family, []))
    FAMILIES[_op.family].append(_op)
for _rows in FAMILIES.values():  # integer variants take the codes after the family's rows
    _next = len(_rows)
    for _op in _rows:
        _op.int_code = _op.code if _op.int is None else _next
        _next += _op.int is not None
_SOURCE = {grad: family for family, grad in GRADIENTS.items()}
KERNELS = (*FAMILIES, *(GRADIENTS[family] for family in FAMILIES if family in GRADIENTS))
"""The kernel families: on CUDA each compiles as one switch per dtype signature and layout; on
the CPU each op of a family has kernels of its own (kernels/cpu/elementwise.py)."""


def switch_cases(family):
    """(code, formula, the CPU's formula, the CPU's statement after the loop, heavy) of every
    kernel branch of `family`, a kernel_grad family included, in code order."""
    if family in _SOURCE:
        return [(op.code, op.kernel_grad, op.kernel_grad, None,
                 op.heavy if op.grad_heavy is None else op.grad_heavy)
                for op in FAMILIES[_SOURCE[family]] if op.kernel_grad is not None]
    rows = FAMILIES[family]
    return [(op.code, op.formula, op.cpu or op.formula, op.cpu_then, op.heavy)
            for op in rows if op.formula is not None] + \
        [(op.int_code, op.int, op.int, None, False) for op in rows if op.int is not None]


def codes(family, *names):
    """The op codes of the rows `names` of `family`, for the kernels' callers."""
    rows = [BY_NAME[name] for name in names]
    if any(op.family != family for op in rows):
        raise KeyError(f"not all of {names} are ops of the {family!r} family")
    return tuple(op.code for op in rows)
