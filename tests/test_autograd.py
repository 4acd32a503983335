"""Reverse-mode autograd: the gradient of every differentiable op, checked twice -- against torch
(values, shapes and dtypes of the gradients, for a random upstream gradient) and against central
finite differences with `jt.autograd.gradcheck` in float64 (which runs without torch) -- and the
engine's semantics (accumulation, retain_graph, autograd.grad, grad modes, detach, names).
In-place ops and out=: test_autograd_inplace.py.

Every op is one row of `CASES`: `fn(ns, *tensors)` is written once against the common API of
jitensor and torch (`ns` is the module), and each `A` describes one tensor argument."""
import math
import zlib

import numpy as np
import pytest
from conftest import grad_checked as _grad
from conftest import leaf as _leaf

import jitensor as jt


def _torch():
    return pytest.importorskip("torch")


# -- the case table -------------------------------------------------------------------------------
class A:
    """A tensor argument: its shape, where its values lie (`domain`), its dtype and whether it
    requires grad; or explicit `data`.

    domains: "any" -- distinct values, at least 0.1 away from 0 and from every multiple of 0.3
    (so from the kinks of abs/relu/sign, from clamp bounds and from ties); "pos" -- in
    [0.5, 2]; "frac" -- at least 0.1 away from integers and halves (floor, round, ...); "int" --
    small integers (an int64 tensor that does not require grad)."""

    def __init__(self, shape=(), domain="any", dtype="float64", req=True, data=None):
        self.shape, self.domain, self.dtype, self.req = tuple(shape), domain, dtype, req
        self.data = None if data is None else np.asarray(data, dtype=np.float64)
        if self.data is not None:
            self.shape = self.data.shape
        if domain == "int":
            self.dtype, self.req = "int64", False

    def array(self, rng):
        if self.data is not None:
            a = self.data.copy()
        else:
            n = math.prod(self.shape)
            if self.domain == "any":
                grid = 0.3 * (np.arange(n) - n // 2 + 0.5)
                a = rng.permutation(grid) + rng.uniform(-0.05, 0.05, n)
            elif self.domain == "pos":
                a = rng.uniform(0.5, 2.0, n)
            elif self.domain == "frac":
                a = rng.integers(-2, 3, n) + rng.uniform(0.1, 0.4, n)
            elif self.domain == "int":
                a = rng.integers(-3, 4, n)
            else:
                raise ValueError(self.domain)
            a = a.reshape(self.shape)
        return a.astype(self.dtype)


class C:
    def __init__(self, id, fn, *args, gc=True, torch=True, bug=None):
        self.id, self.fn, self.args, self.gc, self.torch = id, fn, args, gc, torch
        self.bug = bug  # a known jitensor bug: the case is an xfail(strict) until it is fixed

    def param(self):
        marks = pytest.mark.xfail(strict=True, reason=f"BUG: {self.bug}") if self.bug else ()
        return pytest.param(self, id=self.id, marks=marks)

    def arrays(self):
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return [a.array(rng) for a in self.args]


# constants shared by jitensor and torch calls (each call converts them with ns.tensor)
COND = np.array([[True, False, True], [False, False, True]])
MASK23 = np.array([[True, False, True], [False, True, True]])
MASK3 = np.array([False, True, True])
ROW_IDX = np.array([0, 2, 0, 0])
GATHER_IDX = np.array([[0, 0, 2, 1], [1, 1, 1, 0]])
TAKE_IDX = np.array([[0, 5], [5, 1], [5, 5]])
NAN_DATA = [[np.nan, np.inf, -np.inf], [1.5, -0.7, 2.2]]

# known bugs (see the report): each affected case names one

ELEMENTWISE = [
    # binary arithmetic, with alpha, broadcasting, 0-d tensors and mixed dtypes
    C("add", lambda ns, a, b: ns.add(a, b), A((2, 3)), A((2, 3))),
    C("add_alpha", lambda ns, a, b: ns.add(a, b, alpha=2.5), A((2, 3)), A((2, 3))),
    C("add_bcast_3x1_4", lambda ns, a, b: a + b, A((3, 1)), A((4,))),
    C("add_0d_2x3", lambda ns, a, b: a + b, A(()), A((2, 3))),
    C("add_2x3_0d", lambda ns, a, b: ns.add(a, b, alpha=-2), A((2, 3)), A(())),
    C("add_f32_f64", lambda ns, a, b: a + b, A((2, 3), dtype="float32"), A((2, 3))),
    C("add_f32_f64_bcast", lambda ns, a, b: a + b, A((3, 1), dtype="float32"), A((4,))),
    C("add_f64_f32_0d", lambda ns, a, b: a + b, A((2, 3)), A((), dtype="float32")),
    C("mul_f32_f64_0d", lambda ns, a, b: a * b, A((2, 3), dtype="float32"), A(())),
    C("mul_bcast_middle", lambda ns, a, b: a * b, A((2, 1, 3)), A((4, 1))),
    C("add_int_tensor", lambda ns, a, b: a + b, A((2, 3)), A((3,), "int")),
    C("add_scalar", lambda ns, a: ns.add(a, 2.0, alpha=3), A((2, 3))),
    C("sub", lambda ns, a, b: ns.sub(a, b), A((2, 3)), A((2, 3))),
    C("sub_alpha_bcast", lambda ns, a, b: ns.sub(a, b, alpha=2), A((2, 1, 3)), A((3,))),
    C("subtract_alias", lambda ns, a, b: ns.subtract(a, b), A((3,)), A((2, 3))),
    C("sub_f32_f64", lambda ns, a, b: a - b, A((2, 3)), A((2, 1), dtype="float32")),
    C("mul", lambda ns, a, b: ns.mul(a, b), A((2, 3)), A((2, 3))),
    C("mul_bcast", lambda ns, a, b: a * b, A((3, 1)), A((1, 4))),
    C("mul_0d", lambda ns, a, b: a * b, A((2, 3)), A(())),
    C("multiply_alias", lambda ns, a, b: ns.multiply(a, b), A((2, 3)), A((3,))),
    C("mul_f32_f64", lambda ns, a, b: a * b, A((2, 3), dtype="float32"), A((3,))),
    C("div", lambda ns, a, b: ns.div(a, b), A((2, 3)), A((2, 3))),
    C("div_bcast", lambda ns, a, b: a / b, A((2, 3)), A((3,), "pos")),
    C("div_f64_f32", lambda ns, a, b: a / b, A((2, 3)), A((2, 1), "pos", dtype="float32")),
    C("true_divide_alias", lambda ns, a, b: ns.true_divide(a, b), A((2, 3)), A((3,), "pos")),
    C("div_floor", lambda ns, a, b: ns.div(a, b, rounding_mode="floor"), A((2, 3)),
      A((2, 3), "pos")),
    C("div_trunc", lambda ns, a, b: ns.div(a, b, rounding_mode="trunc"), A((2, 3)),
      A((3,), "pos")),
    C("remainder", lambda ns, a, b: ns.remainder(a, b), A((2, 3)), A((2, 3))),
    C("remainder_bcast", lambda ns, a, b: ns.remainder(a, b), A((2, 3)), A((3,), "pos")),
    C("remainder_scalar", lambda ns, a: ns.remainder(a, 1.5), A((2, 3))),
    C("remainder_op", lambda ns, a: a % -1.5, A((2, 3))),
    C("op_rmod", lambda ns, a: 1.7 % a, A((2, 3)), torch=False),  # torch: not implemented
    C("fmod", lambda ns, a, b: ns.fmod(a, b), A((2, 3)), A((2, 3))),
    C("fmod_scalar", lambda ns, a: ns.fmod(a, 1.5), A((2, 3))),
    C("fmod_bcast", lambda ns, a, b: ns.fmod(a, b), A((2, 3)), A((2, 1), "pos")),
    # pow: tensor and scalar exponents, scalar base
    C("pow_tensor_tensor", lambda ns, a, b: ns.pow(a, b), A((2, 3), "pos"), A((2, 3))),
    C("pow_tensor_tensor_bcast", lambda ns, a, b: a ** b, A((2, 3), "pos"), A((3,))),
    C("pow_base_zero", lambda ns, a, b: ns.pow(a, b),
      A(data=[0.0, 0.0, 1.5, 0.7], req=False), A(data=[1.5, 2.0, -0.5, 1.2])),
    C("pow_2", lambda ns, a: ns.pow(a, 2), A((2, 3))),
    C("pow_3_op", lambda ns, a: a ** 3, A((2, 3))),
    C("pow_half", lambda ns, a: a ** 0.5, A((2, 3), "pos")),
    C("pow_neg_frac", lambda ns, a: ns.pow(a, -1.5), A((2, 3), "pos")),
    C("pow_0", lambda ns, a: a ** 0, A((2, 3))),
    C("pow_0_at_zero", lambda ns, a: a ** 0, A(data=[0.0, 1.0, -2.0])),
    C("pow_scalar_base", lambda ns, a: ns.pow(2.0, a), A((2, 3))),
    C("pow_scalar_base_op", lambda ns, a: 0.5 ** a, A((2, 3))),
    C("pow_int_base_op", lambda ns, a: 3 ** a, A((2, 3))),
    # maximum/minimum (ties: test_binary_extremum_ties) and atan2
    C("maximum", lambda ns, a, b: ns.maximum(a, b), A((2, 3)), A((2, 3))),
    C("maximum_bcast", lambda ns, a, b: ns.maximum(a, b), A((2, 3)), A((3,))),
    C("maximum_0d_ties", lambda ns, a, b: ns.maximum(a, b), A(data=[[1.0, 2.0], [0.5, 2.0]]),
      A(data=2.0), gc=False),
    C("minimum", lambda ns, a, b: ns.minimum(a, b), A((2, 3)), A((2, 3))),
    C("minimum_bcast_f32", lambda ns, a, b: ns.minimum(a, b), A((2, 1), dtype="float32"),
      A((2, 3))),
    C("maximum_ties", lambda ns, a, b: ns.maximum(a, b),
      A(data=[1.0, 2.0, 3.0, -1.0]), A(data=[1.0, 5.0, 3.0, -2.0]), gc=False),
    C("minimum_ties", lambda ns, a, b: ns.minimum(a, b),
      A(data=[1.0, 2.0, 3.0, -1.0]), A(data=[1.0, 5.0, 3.0, -2.0]), gc=False),
    C("atan2", lambda ns, a, b: ns.atan2(a, b), A((2, 3)), A((2, 3))),
    C("atan2_bcast", lambda ns, a, b: ns.atan2(a, b), A((2, 3)), A((2, 1))),
    C("arctan2_alias", lambda ns, a, b: ns.arctan2(a, b), A((3,)), A((3,))),
    C("hypot_bcast", lambda ns, a, b: ns.hypot(a, b), A((2, 3)), A((3,))),
    C("copysign", lambda ns, a, b: ns.copysign(a, b), A((2, 3)), A((2, 3))),
    C("logaddexp", lambda ns, a, b: ns.logaddexp(a, b), A((2, 3)), A((2, 1))),
    C("logaddexp2", lambda ns, a, b: ns.logaddexp2(a, b), A((2, 3)), A((2, 3))),
    C("fmax", lambda ns, a, b: ns.fmax(a, b), A((2, 3)), A((2, 3))),
    C("fmin_nan", lambda ns, a, b: ns.fmin(a, b), A(data=[1.0, np.nan, 3.0]),
      A(data=[2.0, 0.5, np.nan]), gc=False),
    C("xlogy", lambda ns, a, b: ns.xlogy(a, b), A((2, 3)), A((2, 3), "pos")),
    C("xlogy_zero", lambda ns, a, b: ns.xlogy(a, b), A(data=[0.0, 1.5]),
      A(data=[0.0, 2.0]), gc=False),
    # unary
    C("neg", lambda ns, a: ns.neg(a), A((2, 3))),
    C("negative_alias", lambda ns, a: ns.negative(a), A((2, 3))),
    C("neg_op", lambda ns, a: -a, A((2, 3))),
    C("abs", lambda ns, a: ns.abs(a), A((2, 3))),
    C("abs_op", lambda ns, a: abs(a), A((2, 3))),
    C("absolute_alias", lambda ns, a: ns.absolute(a), A((2, 3))),
    C("abs_at_zero", lambda ns, a: a.abs(), A(data=[0.0, -1.0, 2.0]), gc=False),
    C("exp", lambda ns, a: ns.exp(a), A((2, 3))),
    C("exp_method", lambda ns, a: a.exp(), A((3,))),
    C("log", lambda ns, a: ns.log(a), A((2, 3), "pos")),
    C("log1p", lambda ns, a: ns.log1p(a), A((2, 3), "pos")),
    C("expm1", lambda ns, a: ns.expm1(a), A((2, 3))),
    C("sqrt", lambda ns, a: ns.sqrt(a), A((2, 3), "pos")),
    C("rsqrt", lambda ns, a: ns.rsqrt(a), A((2, 3), "pos")),
    C("reciprocal", lambda ns, a: ns.reciprocal(a), A((2, 3))),
    C("square", lambda ns, a: ns.square(a), A((2, 3))),
    C("sin", lambda ns, a: ns.sin(a), A((2, 3))),
    C("cos", lambda ns, a: ns.cos(a), A((2, 3))),
    C("tan", lambda ns, a: ns.tan(a), A((2, 3))),
    C("asin", lambda ns, a: ns.asin(a), A((2, 3))),
    C("acos", lambda ns, a: ns.acos(a), A((2, 3))),
    C("atan", lambda ns, a: ns.atan(a), A((2, 3))),
    C("arcsin_alias", lambda ns, a: ns.arcsin(a), A((3,))),
    C("sinh", lambda ns, a: ns.sinh(a), A((2, 3))),
    C("cosh", lambda ns, a: ns.cosh(a), A((2, 3))),
    C("asinh", lambda ns, a: ns.asinh(a), A((2, 3))),
    C("acosh", lambda ns, a: ns.acosh(a + 1.5), A((2, 3), "pos")),
    C("atanh", lambda ns, a: ns.atanh(a), A((2, 3))),
    C("log2", lambda ns, a: ns.log2(a), A((2, 3), "pos")),
    C("log10", lambda ns, a: ns.log10(a), A((2, 3), "pos")),
    C("exp2", lambda ns, a: ns.exp2(a), A((2, 3))),
    C("erf", lambda ns, a: ns.erf(a), A((2, 3))),
    C("erfc", lambda ns, a: ns.erfc(a), A((2, 3))),
    C("clone_fn", lambda ns, a: ns.clone(a) * 2, A((2, 3))),
    C("lerp_scalar_near_start", lambda ns, a, b: ns.lerp(a, b, 0.3), A((2, 3)), A((3,))),
    C("lerp_scalar_near_end", lambda ns, a, b: a.lerp(b, 0.8), A((2, 3)), A((2, 3))),
    C("lerp_tensor_weight", lambda ns, a, b, w: ns.lerp(a, b, w), A((2, 3)), A((2, 3)),
      A((3,), "pos")),
    C("addcmul", lambda ns, a, b, c: ns.addcmul(a, b, c, value=-0.5), A((2, 3)), A((3,)),
      A((2, 1))),
    C("addcdiv", lambda ns, a, b, c: a.addcdiv(b, c, value=2), A((2, 3)), A((2, 3)),
      A((2, 3), "pos")),
    C("lerp_in_place", lambda ns, a, b: (a * 1).lerp_(b, 0.25), A((2, 3)), A((2, 3))),
    C("addcdiv_in_place", lambda ns, a, b: (a * 1).addcdiv_(a, b), A((2, 3)), A((2, 3), "pos")),
    C("norm_all", lambda ns, a: a.norm(), A((2, 3))),
    C("norm_dim_keepdim", lambda ns, a: ns.norm(a, dim=1, keepdim=True), A((2, 3))),
    C("norm_p1", lambda ns, a: a.norm(1, dim=0), A((2, 3))),
    C("norm_p3", lambda ns, a: a.norm(3), A((2, 3))),
    C("norm_inf", lambda ns, a: a.norm(float("inf"), dim=1), A((2, 3))),
    C("norm_zero_vector", lambda ns, a: (a * 0).norm(), A((3,)), gc=False),
    C("norm_f32", lambda ns, a: a.norm(dim=(0, 1)), A((2, 3), dtype="float32"), gc=False),
    C("tril", lambda ns, a: ns.tril(a), A((3, 4))),
    C("triu_offset_batched", lambda ns, a: a.triu(-1), A((2, 2, 3))),
    C("tril_in_place", lambda ns, a: (a * 1).tril_(1), A((3, 4))),
    C("diagonal", lambda ns, a: a.diagonal(), A((3, 4))),
    C("diagonal_offset_dims", lambda ns, a: ns.diagonal(a, -1, 2, 0), A((3, 1, 4))),
    C("diag_of_vector", lambda ns, a: ns.diag(a, 1), A((3,))),
    C("diag_of_matrix", lambda ns, a: a.diag(-1), A((3, 4))),
    C("trace", lambda ns, a: ns.trace(a), A((3, 4))),
    C("repeat", lambda ns, a: a.repeat(2, 1, 3), A((2, 3))),
    C("tile", lambda ns, a: ns.tile(a, (2,)), A((2, 3))),
    C("roll", lambda ns, a: ns.roll(a, (1, -1), (0, 1)), A((2, 3))),
    C("roll_flat", lambda ns, a: a.roll(4), A((2, 3))),
    C("sort_values", lambda ns, a: ns.sort(a, 0, True).values, A((3, 4))),
    C("topk_values", lambda ns, a: a.topk(2, dim=1).values, A((3, 4))),
    C("tanh", lambda ns, a: ns.tanh(a), A((2, 3))),
    C("sigmoid", lambda ns, a: ns.sigmoid(a), A((2, 3))),
    C("sigmoid_f32", lambda ns, a: a.sigmoid(), A((2, 3), dtype="float32"), gc=False),
    C("relu", lambda ns, a: ns.relu(a), A((2, 3))),
    C("relu_at_zero", lambda ns, a: a.relu(), A(data=[0.0, -1.0, 2.0]), gc=False),
    C("relu_at_nan", lambda ns, a: a.relu(), A(data=[math.nan, -1.0, 0.0, 2.0]), gc=False),
    C("sign", lambda ns, a: ns.sign(a), A((2, 3), "frac")),
    C("floor", lambda ns, a: ns.floor(a), A((2, 3), "frac")),
    C("ceil", lambda ns, a: ns.ceil(a), A((2, 3), "frac")),
    C("round", lambda ns, a: ns.round(a), A((2, 3), "frac")),
    C("trunc", lambda ns, a: ns.trunc(a), A((2, 3), "frac")),
    C("step_then_mul", lambda ns, a: a.floor() * a, A((2, 3), "frac")),
    C("nan_to_num", lambda ns, a: ns.nan_to_num(a), A((2, 3))),
    C("nan_to_num_nonfinite", lambda ns, a: ns.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-2.0),
      A(data=NAN_DATA), gc=False),
    # clamp
    C("clamp_both", lambda ns, a: ns.clamp(a, -0.6, 0.6), A((3, 4))),
    C("clamp_min_kw", lambda ns, a: ns.clamp(a, min=0.3), A((3, 4))),
    C("clamp_max_kw", lambda ns, a: ns.clamp(a, max=-0.3), A((3, 4))),
    C("clip_alias", lambda ns, a: ns.clip(a, -0.6, 0.9), A((3, 4))),
    C("clamp_method", lambda ns, a: a.clamp(-0.9, 0.3), A((3, 4))),
    C("clamp_tensor_bounds", lambda ns, a, lo, hi: ns.clamp(a, lo, hi), A((2, 3)),
      A(data=[-0.4, -0.2, -0.5]), A(data=[[0.25], [0.55]])),
    C("clamp_tensor_min", lambda ns, a, lo: ns.clamp(a, min=lo), A((2, 3)), A((2, 1))),
    C("clamp_tensor_max_noreq", lambda ns, a, hi: ns.clamp(a, max=hi), A((2, 3)),
      A((3,), req=False)),
    C("clamp_min_fn", lambda ns, a: ns.clamp_min(a, 0.3), A((3, 4))),
    C("clamp_max_fn", lambda ns, a: ns.clamp_max(a, -0.3), A((3, 4))),
    C("clamp_min_tensor", lambda ns, a, lo: ns.clamp_min(a, lo), A((2, 3)), A((3,))),
    C("clamp_max_tensor", lambda ns, a, hi: ns.clamp_max(a, hi), A((2, 3)), A((2, 1))),
    # where
    C("where", lambda ns, a, b: ns.where(ns.tensor(COND), a, b), A((2, 3)), A((2, 3))),
    C("where_bcast", lambda ns, a, b: ns.where(ns.tensor(COND), a, b), A((3,)), A((2, 1))),
    C("where_scalar_other", lambda ns, a: ns.where(ns.tensor(COND), a, 0.0), A((2, 3))),
    C("where_method_cond", lambda ns, a, b: ns.where(a > 0, a, b), A((2, 3)), A((2, 3))),
    C("where_scalar_input", lambda ns, a: ns.where(ns.tensor(COND), 1.5, a), A((2, 3))),
    C("where_0d_branch", lambda ns, a, b: ns.where(ns.tensor(COND), a, b), A(()), A((2, 3))),
]

SQRT_DATA = [-1.0, 0.5, 0.0, 2.0]  # sqrt of a masked 0 has an infinite gradient

EDGE_VALUES = [
    C("clamp_ties", lambda ns, a, lo, hi: ns.clamp(a, lo, hi),
      A(data=[0.5, 1.0, 1.5, 2.0, -1.0]), A(data=[0.5, 0.25, 1.0, 1.0, 0.0]),
      A(data=[1.5, 1.0, 1.5, 3.0, 2.0]), gc=False),
    C("clamp_scalar_ties", lambda ns, a: ns.clamp(a, -1.0, 1.0), A(data=[-1.0, 0.2, 1.0, 3.0]),
      gc=False),
    C("sqrt_at_zero", lambda ns, a: ns.sqrt(a), A(data=[0.0, 1.0, 4.0]), gc=False),
    C("pow_half_at_zero", lambda ns, a: a ** 0.5, A(data=[0.0, 1.0, 4.0]), gc=False),
    C("relu_then_sqrt", lambda ns, a: ns.relu(a).sqrt(), A(data=SQRT_DATA), gc=False),
    C("clamp_then_sqrt", lambda ns, a: ns.clamp(a, min=0.0).sqrt(), A(data=SQRT_DATA), gc=False),
    C("where_then_sqrt", lambda ns, a: ns.where(a > 0, a, 0.0).sqrt(), A(data=SQRT_DATA),
      gc=False),
    C("masked_fill_then_sqrt", lambda ns, a: a.masked_fill(a < 0, 0.0).sqrt(),
      A(data=SQRT_DATA), gc=False),
    C("maximum_then_sqrt", lambda ns, a, b: ns.maximum(a, b).sqrt(), A(data=SQRT_DATA),
      A(data=[0.0, 0.0, -1.0, 0.0], req=False), gc=False),
    C("floor_then_sqrt", lambda ns, a: ns.floor(a).sqrt(), A(data=[0.5, 1.5, 2.5]), gc=False),
]

# the same tensor as several operands: every use adds to its gradient
ALIASED = [
    C("alias_mul", lambda ns, a: ns.mul(a, a), A((2, 3))),
    C("alias_maximum_ties", lambda ns, a: ns.maximum(a, a), A((2, 3))),
    C("alias_minimum_ties", lambda ns, a: ns.minimum(a * 2, a + a), A((2, 3)), gc=False),
    C("alias_atan2", lambda ns, a: ns.atan2(a, a), A((2, 3))),
    C("alias_div", lambda ns, a: ns.div(a, a * a), A((2, 3))),
    C("alias_pow", lambda ns, a: ns.pow(a, a), A((2, 3), "pos")),
    C("alias_where", lambda ns, a: ns.where(ns.tensor(COND), a, a * 2), A((2, 3))),
    C("alias_cat", lambda ns, a: ns.cat([a, a.flip([0]), a]), A((2, 3))),
    C("alias_matmul", lambda ns, a: a @ a.t(), A((2, 3))),
    C("alias_clamp_bounds", lambda ns, a: ns.clamp(a * 2, a - 1, a + 1), A((2, 3))),
    C("alias_masked_fill_value", lambda ns, a: a.masked_fill(ns.tensor(MASK23), a[0, 0]),
      A((2, 3))),
]

OPERATORS = [
    C("op_add", lambda ns, a, b: a + b, A((2, 3)), A((2, 3))),
    C("op_radd", lambda ns, a: 2 + a, A((2, 3))),
    C("op_sub", lambda ns, a, b: a - b, A((2, 3)), A((3,))),
    C("op_rsub", lambda ns, a: 2 - a, A((2, 3))),
    C("op_sub_scalar", lambda ns, a: a - 1.5, A((2, 3))),
    C("op_mul", lambda ns, a: a * 2.5, A((2, 3))),
    C("op_rmul", lambda ns, a: 2.5 * a, A((2, 3))),
    C("op_truediv", lambda ns, a: a / 3, A((2, 3))),
    C("op_rtruediv", lambda ns, a: 1 / a, A((2, 3))),
    C("op_rtruediv_2", lambda ns, a: 2.0 / a, A((2, 3))),
    C("op_pow", lambda ns, a, b: a ** b, A((2, 3), "pos"), A((2, 3))),
    C("op_rpow", lambda ns, a: 2 ** a, A((2, 3))),
    C("op_matmul", lambda ns, a, b: a @ b, A((2, 3)), A((3, 2))),
    C("op_neg", lambda ns, a: -a, A((2, 3))),
    C("op_pos_abs", lambda ns, a: abs(+a), A((2, 3))),
    C("op_f32_scalar", lambda ns, a: (a * 2.5 + 1) / 3, A((2, 3), dtype="float32"), gc=False),
    C("op_chain", lambda ns, a, b: (a * b - a / (b * b + 1)) ** 2, A((2, 3)), A((3,))),
]

R = (2, 3, 2)
REDUCTIONS = [
    C("sum_all", lambda ns, a: ns.sum(a), A(R)),
    C("sum_method", lambda ns, a: a.sum(), A((2, 3))),
    C("sum_dim1", lambda ns, a: ns.sum(a, dim=1), A(R)),
    C("sum_dim_neg_keep", lambda ns, a: ns.sum(a, dim=-1, keepdim=True), A(R)),
    C("sum_dim_tuple", lambda ns, a: ns.sum(a, dim=(0, 2)), A(R)),
    C("sum_dim_tuple_neg_keep", lambda ns, a: a.sum((-1, 0), keepdim=True), A(R)),
    C("sum_0d", lambda ns, a: a.sum(), A(())),
    C("sum_0d_dim0", lambda ns, a: a.sum(0), A(())),
    C("sum_empty", lambda ns, a: ns.sum(a, dim=0), A((0, 3)), gc=False),
    C("mean_dim_size1", lambda ns, a: ns.mean(a, dim=1), A((3, 1))),
    C("sum_dtype", lambda ns, a: a.sum(dtype=ns.float32), A((2, 3)), gc=False),
    C("mean_all", lambda ns, a: ns.mean(a), A(R)),
    C("mean_dim0", lambda ns, a: ns.mean(a, 0), A(R)),
    C("mean_dim_neg_keep", lambda ns, a: a.mean(dim=-2, keepdim=True), A(R)),
    C("mean_dim_tuple", lambda ns, a: ns.mean(a, dim=(0, 1)), A(R)),
    C("mean_dim_tuple_keep", lambda ns, a: ns.mean(a, dim=(2, 0), keepdim=True), A(R)),
    C("prod_all", lambda ns, a: ns.prod(a), A((2, 3))),
    C("prod_dim", lambda ns, a: ns.prod(a, 1), A((3, 4))),
    C("prod_dim_neg_keep", lambda ns, a: a.prod(dim=-2, keepdim=True), A((3, 4))),
    C("prod_dim_zeros", lambda ns, a: ns.prod(a, dim=1),
      A(data=[[1.5, -2.0, 0.5, 1.2], [0.7, 0.0, -1.1, 2.0], [0.0, 1.3, 0.0, 0.9]])),
    C("prod_dim0_zeros_keep", lambda ns, a: ns.prod(a, dim=0, keepdim=True),
      A(data=[[1.5, 0.0, 0.0], [0.7, 1.1, 0.0], [-0.8, 1.3, 2.0]])),
    C("prod_all_one_zero", lambda ns, a: ns.prod(a), A(data=[[1.5, -2.0, 0.5], [0.7, 0.0, 1.2]])),
    C("prod_all_two_zeros", lambda ns, a: ns.prod(a), A(data=[[1.5, 0.0, 0.5], [0.7, 0.0, 1.2]])),
    C("prod_0d", lambda ns, a: ns.prod(a), A(())),
    C("max_all", lambda ns, a: ns.max(a), A((3, 4))),
    C("min_all", lambda ns, a: a.min(), A((3, 4))),
    C("max_all_ties", lambda ns, a: ns.max(a), A(data=[[1.0, 3.0], [3.0, -1.0], [3.0, 0.5]]),
      gc=False),
    C("min_all_ties", lambda ns, a: ns.min(a), A(data=[[1.0, -3.0], [-3.0, -1.0]]), gc=False),
    C("max_dim", lambda ns, a: ns.max(a, dim=1).values, A((3, 4))),
    C("max_dim_keep_index0", lambda ns, a: ns.max(a, 1, keepdim=True)[0], A((3, 4))),
    C("max_dim_neg", lambda ns, a: a.max(dim=-2)[0], A(R)),
    C("max_dim_1d", lambda ns, a: a.max(dim=0).values, A((5,))),
    C("min_dim", lambda ns, a: ns.min(a, dim=0).values, A((3, 4))),
    C("min_dim_keep", lambda ns, a: a.min(dim=-1, keepdim=True).values, A(R)),
    C("amax_dim", lambda ns, a: ns.amax(a, dim=1), A((3, 4))),
    C("amax_all", lambda ns, a: ns.amax(a), A((3, 4))),
    C("amax_tuple_keep", lambda ns, a: ns.amax(a, dim=(0, -1), keepdim=True), A(R)),
    C("amin_dim_neg", lambda ns, a: ns.amin(a, dim=-1), A((3, 4))),
    C("amin_tuple", lambda ns, a: a.amin(dim=(0, 1)), A(R)),
    C("amax_ties", lambda ns, a: ns.amax(a, dim=1),
      A(data=[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [0.5, -1.0, 0.25]]), gc=False),
    C("amax_ties_tuple", lambda ns, a: ns.amax(a, dim=(0, 1)),
      A(data=[[1.0, 3.0, 3.0], [3.0, 2.0, 2.0]]), gc=False),
    C("amin_ties_keep", lambda ns, a: ns.amin(a, dim=0, keepdim=True),
      A(data=[[1.0, -3.0, 3.0], [1.0, -3.0, 2.0]]), gc=False),
    C("var_all", lambda ns, a: ns.var(a), A((3, 4))),
    C("var_dim", lambda ns, a: ns.var(a, dim=1), A((3, 4))),
    C("var_unbiased_false", lambda ns, a: ns.var(a, dim=0, unbiased=False), A((3, 4))),
    C("var_correction0_keep", lambda ns, a: ns.var(a, dim=-1, correction=0, keepdim=True),
      A((3, 4))),
    C("var_correction2_tuple", lambda ns, a: ns.var(a, dim=(0, 2), correction=2), A(R)),
    C("var_method", lambda ns, a: a.var(1, keepdim=True), A((3, 4))),
    C("var_all_keep", lambda ns, a: a.var(correction=0, keepdim=True), A((3, 4))),
    C("std_all", lambda ns, a: ns.std(a), A((3, 4))),
    C("std_dim", lambda ns, a: ns.std(a, dim=1), A((3, 4))),
    C("std_unbiased_false_keep", lambda ns, a: ns.std(a, dim=0, unbiased=False, keepdim=True),
      A((3, 4))),
    C("std_correction0_tuple", lambda ns, a: ns.std(a, dim=(-1, 0), correction=0), A(R)),
    C("std_correction2", lambda ns, a: a.std(dim=1, correction=2), A((2, 4))),
    C("std_all_keep", lambda ns, a: ns.std(a, dim=None, correction=0, keepdim=True), A((3, 4))),
    C("logsumexp_dim", lambda ns, a: ns.logsumexp(a, dim=1), A((3, 4))),
    C("logsumexp_neg_keep", lambda ns, a: ns.logsumexp(a, dim=-1, keepdim=True), A(R)),
    C("logsumexp_tuple", lambda ns, a: ns.logsumexp(a, dim=(0, 1)), A(R)),
    C("logsumexp_large", lambda ns, a: ns.logsumexp(a * 300, dim=1), A((2, 3))),
    C("cumsum_0", lambda ns, a: ns.cumsum(a, dim=0), A((3, 4))),
    C("cumsum_1", lambda ns, a: ns.cumsum(a, 1), A((3, 4))),
    C("cumsum_neg", lambda ns, a: a.cumsum(dim=-1), A(R)),
    C("cumsum_1d", lambda ns, a: ns.cumsum(a, 0), A((5,))),
    C("cumsum_0d", lambda ns, a: a.cumsum(0), A(())),
    C("softmax_1", lambda ns, a: ns.softmax(a, dim=1), A((3, 4))),
    C("softmax_0", lambda ns, a: ns.softmax(a, 0), A((3, 4))),
    C("softmax_neg", lambda ns, a: a.softmax(dim=-1), A(R)),
    C("log_softmax_1", lambda ns, a: ns.log_softmax(a, dim=1), A((3, 4))),
    C("log_softmax_0", lambda ns, a: ns.log_softmax(a, 0), A((3, 4))),
    C("log_softmax_neg", lambda ns, a: a.log_softmax(dim=-1), A(R)),
    C("softmax_1d", lambda ns, a: ns.softmax(a, 0), A((5,))),
    C("softmax_large", lambda ns, a: ns.softmax(a * 300, dim=1), A((2, 3))),
    C("log_softmax_large", lambda ns, a: ns.log_softmax(a * 300, dim=0), A((2, 3))),
    C("softmax_f32", lambda ns, a: ns.softmax(a, dim=1), A((3, 4), dtype="float32"), gc=False),
]

MATMUL = [
    C("matmul_1d_1d", lambda ns, a, b: ns.matmul(a, b), A((4,)), A((4,))),
    C("matmul_1d_2d", lambda ns, a, b: ns.matmul(a, b), A((3,)), A((3, 4))),
    C("matmul_2d_1d", lambda ns, a, b: ns.matmul(a, b), A((3, 4)), A((4,))),
    C("matmul_2d_2d", lambda ns, a, b: ns.matmul(a, b), A((2, 3)), A((3, 4))),
    C("matmul_batched", lambda ns, a, b: ns.matmul(a, b), A((2, 2, 3)), A((2, 3, 2))),
    C("matmul_bcast_batch_small", lambda ns, a, b: a @ b, A((2, 1, 2, 3)), A((2, 3, 1))),
    C("matmul_bcast_batch", lambda ns, a, b: a @ b, A((2, 1, 3, 4)), A((5, 4, 2)), gc=False),
    C("matmul_batch_2d", lambda ns, a, b: ns.matmul(a, b), A((2, 2, 3)), A((3, 2))),
    C("matmul_2d_batch", lambda ns, a, b: ns.matmul(a, b), A((2, 3)), A((2, 3, 2))),
    C("matmul_1d_batch", lambda ns, a, b: ns.matmul(a, b), A((3,)), A((2, 3, 2))),
    C("matmul_batch_1d", lambda ns, a, b: ns.matmul(a, b), A((2, 2, 3)), A((3,))),
    C("matmul_b_noreq", lambda ns, a, b: ns.matmul(a, b), A((2, 3)), A((3, 2), req=False)),
    C("matmul_a_noreq", lambda ns, a, b: ns.matmul(a, b), A((2, 3), req=False), A((3, 2))),
    C("matmul_transposed_operand", lambda ns, a, b: a.t() @ b, A((3, 2)), A((3, 4))),
    C("matmul_f32", lambda ns, a, b: a @ b, A((2, 3), dtype="float32"),
      A((3, 4), dtype="float32"), gc=False),
    C("mm", lambda ns, a, b: ns.mm(a, b), A((2, 3)), A((3, 2))),
    C("bmm", lambda ns, a, b: ns.bmm(a, b), A((2, 2, 3)), A((2, 3, 2))),
    C("mv", lambda ns, a, b: ns.mv(a, b), A((3, 4)), A((4,))),
    C("dot", lambda ns, a, b: ns.dot(a, b), A((4,)), A((4,))),
    C("outer", lambda ns, a, b: ns.outer(a, b), A((3,)), A((4,))),
    C("ger", lambda ns, a, b: a.ger(b), A((2,)), A((3,))),
]

VIEWS = [
    C("view", lambda ns, a: a.view(3, 4), A((2, 6))),
    C("flatten_0d", lambda ns, a: a.flatten() * 2, A(())),
    C("squeeze_noop_dim", lambda ns, a: a.squeeze(0), A((3, 4))),
    C("view_neg1", lambda ns, a: a.view(-1), A((3, 4))),
    C("view_as", lambda ns, a, b: a.view_as(b), A((2, 6)), A((4, 3), req=False)),
    C("reshape_neg1", lambda ns, a: a.reshape(-1, 2), A((2, 3, 2))),
    C("reshape_fn", lambda ns, a: ns.reshape(a, (3, 4)), A((2, 6))),
    C("reshape_of_transpose", lambda ns, a: a.t().reshape(-1), A((3, 4))),
    C("reshape_as", lambda ns, a, b: a.reshape_as(b), A((3, 4)), A((6, 2), req=False)),
    C("flatten", lambda ns, a: a.flatten(), A(R)),
    C("flatten_1", lambda ns, a: ns.flatten(a, 1), A(R)),
    C("unflatten", lambda ns, a: a.unflatten(1, (2, 3)), A((2, 6))),
    C("unflatten_neg1", lambda ns, a: a.unflatten(-1, (-1, 3)), A((2, 6))),
    C("transpose", lambda ns, a: a.transpose(0, 2), A(R)),
    C("transpose_fn_neg", lambda ns, a: ns.transpose(a, -1, 0), A((3, 4))),
    C("swapaxes", lambda ns, a: ns.swapaxes(a, 0, 1), A((3, 4))),
    C("t", lambda ns, a: a.t(), A((3, 4))),
    C("t_1d", lambda ns, a: ns.t(a), A((4,))),
    C("T", lambda ns, a: a.T, A((3, 4))),
    C("mT", lambda ns, a: a.mT, A(R)),
    C("permute", lambda ns, a: a.permute(2, 0, 1), A(R)),
    C("permute_fn_neg", lambda ns, a: ns.permute(a, (-1, 0, 1)), A(R)),
    C("unsqueeze", lambda ns, a: a.unsqueeze(1), A((3, 4))),
    C("unsqueeze_neg", lambda ns, a: ns.unsqueeze(a, -1), A((3, 4))),
    C("squeeze_all", lambda ns, a: a.squeeze(), A((3, 1, 4))),
    C("squeeze_dim", lambda ns, a: ns.squeeze(a, 1), A((3, 1, 4))),
    C("expand", lambda ns, a: a.expand(2, 3, 4), A((3, 1))),
    C("expand_neg1", lambda ns, a: a.expand(-1, 4), A((3, 1))),
    C("expand_0d", lambda ns, a: a.expand(2, 3), A(())),
    C("unsqueeze_0d", lambda ns, a: a.unsqueeze(0), A(())),
    C("expand_as", lambda ns, a, b: a.expand_as(b), A((4,)), A((3, 4), req=False)),
    C("broadcast_to", lambda ns, a: ns.broadcast_to(a, (2, 3, 4)), A((1, 4))),
    C("broadcast_tensors", lambda ns, a, b: (lambda p: p[0] * p[1] + p[0])(
        ns.broadcast_tensors(a, b)), A((3, 1)), A((4,))),
    C("narrow", lambda ns, a: a.narrow(1, 1, 2), A((3, 4))),
    C("narrow_fn_neg", lambda ns, a: ns.narrow(a, -2, 0, 2), A((3, 4))),
    C("movedim", lambda ns, a: ns.movedim(a, 0, -1), A(R)),
    C("movedim_method", lambda ns, a: a.movedim(2, 0), A(R)),
    C("movedim_tuples", lambda ns, a: ns.movedim(a, (0, 1), (2, 0)), A(R)),
    C("flip", lambda ns, a: ns.flip(a, [0, 1]), A((3, 4))),
    C("flip_neg", lambda ns, a: a.flip([-1]), A(R)),
    C("chunk_some", lambda ns, a: (lambda p: p[0] * p[2])(ns.chunk(a, 3, dim=1)), A((2, 6))),
    C("chunk_one", lambda ns, a: a.chunk(2)[1], A((4, 3))),
    C("split_int", lambda ns, a: ns.split(a, 2, dim=1)[1], A((2, 5))),
    C("split_int_last", lambda ns, a: a.split(2, dim=1)[2] * 3, A((2, 5))),
    C("chunk_uneven", lambda ns, a: (lambda p: p[-1])(ns.chunk(a, 3)), A((4, 3))),
    C("split_sizes", lambda ns, a: (lambda p: p[0].sum(1, keepdim=True) * p[2])(
        ns.split(a, [1, 2, 1], dim=1)), A((3, 4))),
    C("split_method_neg", lambda ns, a: a.split([3, 1], -1)[0], A((3, 4))),
    C("unbind_some", lambda ns, a: (lambda p: p[0] - 2 * p[2])(ns.unbind(a, 1)), A((2, 3))),
    C("unbind_method", lambda ns, a: a.unbind()[1], A((3, 4))),
    C("cat", lambda ns, a, b, c: ns.cat([a, b, c]), A((1, 3)), A((2, 3)), A((1, 3))),
    C("cat_dim1", lambda ns, a, b: ns.cat([a, b], dim=1), A((2, 1)), A((2, 3))),
    C("cat_neg_mixed_req", lambda ns, a, b: ns.cat((a, b, a), -1), A((2, 2)),
      A((2, 3), req=False)),
    C("cat_with_empty", lambda ns, a, e, b: ns.cat([a, e, b]), A((2, 3)), A((0, 3)),
      A((1, 3))),
    C("cat_legacy_empty_1d", lambda ns, a, e: ns.cat([a, e]), A((2, 3)), A((0,)), gc=False),
    C("stack", lambda ns, a, b: ns.stack([a, b]), A((2, 3)), A((2, 3))),
    C("stack_dim1", lambda ns, a, b: ns.stack([a, b, a], dim=1), A((2, 3)), A((2, 3))),
    C("stack_neg", lambda ns, a, b: ns.stack([a, b], dim=-1), A((4,)), A((4,))),
    C("stack_single", lambda ns, a: ns.stack([a]), A((2, 3))),
    C("clone", lambda ns, a: a.clone(), A((3, 4))),
    C("contiguous", lambda ns, a: a.t().contiguous(), A((3, 4))),
    C("contiguous_noop", lambda ns, a: (a * 1).contiguous(), A((3, 4))),
    C("to_float32", lambda ns, a: a.to(ns.float32), A((3, 4)), gc=False),
    C("to_float64_from32", lambda ns, a: a.to(ns.float64) * 2, A((3, 4), dtype="float32"),
      gc=False),
    C("to_same_dtype", lambda ns, a: a.to(ns.float64), A((3, 4))),
    C("double_method", lambda ns, a: a.double() * 2, A((3, 4), dtype="float32"), gc=False),
    C("float_method", lambda ns, a: a.float() * 2, A((3, 4)), gc=False),
    C("view_chain", lambda ns, a: a.view(2, 6).t().unsqueeze(0).flip([1]).reshape(4, 3), A((3, 4))),
]

INDEXING = [
    C("getitem_int", lambda ns, a: a[1], A((3, 4))),
    C("getitem_neg_int", lambda ns, a: a[-1, 2], A((3, 4))),
    C("getitem_slice", lambda ns, a: a[:, 1:3], A((3, 4))),
    C("getitem_step", lambda ns, a: a[::2, 1::2], A((3, 4))),
    C("getitem_none_ellipsis", lambda ns, a: a[None, ..., 1], A(R)),
    C("getitem_mixed", lambda ns, a: a[1, None, 0:2], A((3, 4))),
    C("getitem_0d_int_tensor", lambda ns, a: a[ns.tensor(1)], A((3, 4))),
    C("getitem_neg_adv", lambda ns, a: a[ns.tensor([-1, 0, -1])], A((3, 4))),
    C("getitem_ellipsis_step", lambda ns, a: a[..., ::2], A(R)),
    C("getitem_adv_repeated", lambda ns, a: a[ns.tensor(ROW_IDX)], A((3, 4))),
    C("getitem_adv_list_pairs", lambda ns, a: a[[0, 0, 1, 0], [1, 1, 2, 1]], A((3, 4))),
    C("getitem_adv_col_repeated", lambda ns, a: a[:, ns.tensor([2, 2, 0])], A((3, 4))),
    C("getitem_adv_2d_index", lambda ns, a: a[ns.tensor([[0, 1], [1, 1]])], A((3, 4))),
    C("getitem_slice_then_adv", lambda ns, a: a[1:, [0, 2, 2]], A((3, 4))),
    C("getitem_adv_then_slice", lambda ns, a: a[ns.tensor([2, 0, 2]), 1:3], A((3, 4))),
    C("getitem_adv_3d", lambda ns, a: a[:, [1, 1], 0], A(R)),
    C("getitem_bool_mask", lambda ns, a: a[ns.tensor(MASK23)], A((2, 3))),
    C("getitem_bool_rows", lambda ns, a: a[ns.tensor(MASK3)], A((3, 4))),
    C("getitem_bool_cmp", lambda ns, a: a[a > 0], A((3, 4))),
    C("index_select", lambda ns, a: ns.index_select(a, 1, ns.tensor([2, 0, 2])), A((3, 4))),
    C("index_select_dim0", lambda ns, a: a.index_select(0, ns.tensor([1, 1, 1, 0])), A((3, 4))),
    C("gather", lambda ns, a: ns.gather(a, 1, ns.tensor(GATHER_IDX)), A((2, 3))),
    C("gather_dim0", lambda ns, a: a.gather(0, ns.tensor([[1, 0, 1], [1, 1, 0]])), A((2, 3))),
    C("take", lambda ns, a: ns.take(a, ns.tensor(TAKE_IDX)), A((2, 3))),
    C("masked_select", lambda ns, a: ns.masked_select(a, ns.tensor(MASK23)), A((2, 3))),
    C("masked_select_bcast_mask", lambda ns, a: ns.masked_select(a, ns.tensor(MASK3)),
      A((2, 3))),
    C("masked_fill_scalar", lambda ns, a: ns.masked_fill(a, ns.tensor(MASK23), 0.5), A((2, 3))),
    C("masked_fill_bcast", lambda ns, a: a.masked_fill(ns.tensor(MASK3), -1.0), A((2, 3))),
    C("masked_fill_tensor_value", lambda ns, a, v: ns.masked_fill(a, ns.tensor(MASK23), v),
      A((2, 3)), A(())),
]

CASES = ELEMENTWISE + EDGE_VALUES + ALIASED + OPERATORS + REDUCTIONS + MATMUL + VIEWS + INDEXING
_ids = [c.id for c in CASES]
assert len(_ids) == len(set(_ids)), "duplicate case ids"


# -- running a case ---------------------------------------------------------------------------
def _make(ns, spec, arr):
    if ns is jt:
        return jt.tensor(arr, requires_grad=spec.req)
    return ns.tensor(arr, requires_grad=spec.req)


def _tol(dtype_name):
    return dict(rtol=1e-4, atol=1e-5) if dtype_name == "float32" else dict(rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("case", [c.param() for c in CASES if c.torch])
def test_grad_matches_torch(case):
    torch = _torch()
    arrays = case.arrays()
    jx = [_make(jt, s, a) for s, a in zip(case.args, arrays, strict=False)]
    tx = [_make(torch, s, a) for s, a in zip(case.args, arrays, strict=False)]
    jout, tout = case.fn(jt, *jx), case.fn(torch, *tx)

    tname = str(tout.dtype).removeprefix("torch.")
    assert jout.dtype.name == tname
    assert tuple(jout.shape) == tuple(tout.shape)
    assert jout.requires_grad and tout.requires_grad
    np.testing.assert_allclose(jout.detach().numpy(), tout.detach().numpy(), **_tol(tname),
                               equal_nan=True)

    seed = np.random.default_rng(zlib.crc32(case.id.encode()) + 1)
    g = seed.uniform(-1.5, 1.5, tuple(tout.shape)).astype(tname)
    jout.backward(jt.tensor(g))
    tout.backward(torch.tensor(g))

    for i, (spec, j, t) in enumerate(zip(case.args, jx, tx, strict=False)):
        if not spec.req:
            assert j.grad is None, f"input {i} does not require grad but got one"
            continue
        assert (j.grad is None) == (t.grad is None), (i, j.grad, t.grad)
        if t.grad is None:
            continue
        assert isinstance(j.grad, jt.Tensor)
        assert tuple(j.grad.shape) == tuple(t.grad.shape) == tuple(j.shape), i
        assert j.grad.dtype is j.dtype, (i, j.grad.dtype, j.dtype)
        assert not j.grad.requires_grad
        coarse = "float32" if "float32" in (spec.dtype, tname) else "float64"
        np.testing.assert_allclose(j.grad.numpy(), t.grad.numpy(), **_tol(coarse),
                                   err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("case", [c.param() for c in CASES if c.gc])
def test_gradcheck(case):
    arrays = case.arrays()
    inputs = []
    for spec, arr in zip(case.args, arrays, strict=False):
        if spec.req:
            assert arr.size <= 12, "keep gradcheck inputs tiny"
            arr = arr.astype(np.float64)
        inputs.append(jt.tensor(arr, requires_grad=spec.req))
    assert jt.autograd.gradcheck(lambda *ts: case.fn(jt, *ts), inputs)
    # and the gradients' shapes and dtypes, in the inputs' own dtypes (float32 ones too)
    inputs = [jt.tensor(arr, requires_grad=spec.req)
              for spec, arr in zip(case.args, arrays, strict=False)]
    case.fn(jt, *inputs).sum().backward()
    for spec, t in zip(case.args, inputs, strict=False):
        if spec.req:
            assert t.grad is not None and tuple(t.grad.shape) == tuple(t.shape)
            assert t.grad.dtype is t.dtype and not t.grad.requires_grad


# -- explicit expectations that run without torch -------------------------------------------------
@pytest.mark.parametrize("op, expected_a, expected_b", [
    (jt.maximum, [0.5, 0.0, 0.5, 1.0], [0.5, 1.0, 0.5, 0.0]),
    (jt.minimum, [0.5, 1.0, 0.5, 0.0], [0.5, 0.0, 0.5, 1.0]),
])
def test_binary_extremum_ties(op, expected_a, expected_b):
    a, b = _leaf([1.0, 2.0, 3.0, -1.0]), _leaf([1.0, 5.0, 3.0, -2.0])
    op(a, b).sum().backward()
    np.testing.assert_array_equal(_grad(a), expected_a)
    np.testing.assert_array_equal(_grad(b), expected_b)


@pytest.mark.parametrize("fn, data, expected", [
    (lambda x: x.max(), [[1.0, 3.0], [3.0, -1.0], [3.0, 0.5]],
     [[0, 1 / 3], [1 / 3, 0], [1 / 3, 0]]),
    (lambda x: x.min(), [[1.0, -3.0], [-3.0, -1.0]], [[0, 0.5], [0.5, 0]]),
    (lambda x: x.amax(), [[2.0, 2.0], [1.0, 2.0]], [[1 / 3, 1 / 3], [0, 1 / 3]]),
    (lambda x: x.amax(dim=1).sum(), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]],
     [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]),
    (lambda x: x.amin(dim=0).sum(), [[1.0, -3.0], [1.0, 2.0]], [[0.5, 1.0], [0.5, 0.0]]),
    (lambda x: x.max(dim=1).values.sum(), [[1.0, 4.0, 3.0], [5.0, 2.0, 2.5]],
     [[0, 1, 0], [1, 0, 0]]),
])
def test_extremum_reduction_ties(fn, data, expected):
    x = _leaf(data)
    fn(x).backward()
    np.testing.assert_allclose(_grad(x), expected, rtol=1e-12)


@pytest.mark.parametrize("data, dim, expected", [
    ([[2.0, 3.0, 4.0]], 1, [[12.0, 8.0, 6.0]]),
    ([[2.0, 0.0, 4.0]], 1, [[0.0, 8.0, 0.0]]),      # one zero: the product of the others
    ([[0.0, 3.0, 0.0]], 1, [[0.0, 0.0, 0.0]]),      # two zeros: all 0
    ([[2.0, 0.0], [0.0, 5.0]], None, [[0.0, 0.0], [0.0, 0.0]]),
    ([[2.0, 0.0], [3.0, 5.0]], None, [[0.0, 30.0], [0.0, 0.0]]),
    ([[2.0, 0.0], [0.0, 5.0]], 0, [[0.0, 5.0], [2.0, 0.0]]),
])
def test_prod_zeros(data, dim, expected):
    x = _leaf(data)
    (x.prod() if dim is None else x.prod(dim)).sum().backward()
    np.testing.assert_array_equal(_grad(x), expected)


def test_broadcast_grads_are_summed_to_input_shape():
    a, b = _leaf(np.arange(3.0).reshape(3, 1)), _leaf([1.0, 2.0, 3.0, 4.0])
    (a * b).sum().backward()
    np.testing.assert_allclose(_grad(a), np.full((3, 1), 10.0))
    np.testing.assert_allclose(_grad(b), np.full(4, 3.0))
    s, m = _leaf(2.0), _leaf(np.ones((2, 3)))
    (s * m + s).sum().backward()
    assert s.grad.shape == () and s.grad.dtype is jt.float64
    assert s.grad.item() == 12.0
    np.testing.assert_allclose(_grad(m), np.full((2, 3), 2.0))


def test_mixed_dtype_grads_keep_each_inputs_dtype():
    a = _leaf([[1.0], [2.0], [3.0]], jt.float32)
    b = _leaf([1.0, 2.0, 3.0, 4.0], jt.float64)
    out = a * b
    assert out.dtype is jt.float64
    out.sum().backward()
    assert a.grad.dtype is jt.float32 and a.grad.shape == (3, 1)
    assert b.grad.dtype is jt.float64 and b.grad.shape == (4,)
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 10.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 6.0))
    c = _leaf([1.0, 2.0], jt.float64)
    c.to(jt.float32).sum().backward()
    assert c.grad.dtype is jt.float64
    np.testing.assert_array_equal(c.grad.numpy(), [1.0, 1.0])


def test_masked_gradient_stays_finite():
    x = _leaf([-1.0, 4.0])
    x.relu().sqrt().sum().backward()  # sqrt'(0) = inf, but relu passes no gradient at x < 0
    np.testing.assert_array_equal(_grad(x), [0.0, 0.25])


def test_step_functions_give_zero_grads():
    for name in ("sign", "floor", "ceil", "round", "trunc"):
        x = _leaf([0.3, -1.7, 2.2])
        getattr(jt, name)(x).sum().backward()
        np.testing.assert_array_equal(_grad(x), [0.0, 0.0, 0.0])


def test_advanced_index_repeated_indices_accumulate():
    x = _leaf(np.arange(6.0).reshape(2, 3))
    x[jt.tensor([1, 1, 0, 1])].sum().backward()
    np.testing.assert_array_equal(_grad(x), [[1, 1, 1], [3, 3, 3]])
    x.grad = None
    x.gather(1, jt.tensor([[0, 0, 0], [2, 1, 2]])).sum().backward()
    np.testing.assert_array_equal(_grad(x), [[3, 0, 0], [0, 1, 2]])
    x.grad = None
    jt.take(x, jt.tensor([5, 5, 0])).sum().backward()
    np.testing.assert_array_equal(_grad(x), [[1, 0, 0], [0, 0, 2]])
    x.grad = None
    x.index_select(1, jt.tensor([2, 2, 2])).sum().backward()
    np.testing.assert_array_equal(_grad(x), [[0, 0, 3], [0, 0, 3]])


def test_split_pieces_unused_get_zero_grad():
    x = _leaf(np.arange(6.0).reshape(2, 3))
    a, b, c = x.unbind(1)
    (a * 2 + c).sum().backward()
    np.testing.assert_array_equal(_grad(x), [[2, 0, 1], [2, 0, 1]])


@pytest.mark.parametrize("shapes", [
    ((4,), (4,)),
    ((3,), (3, 2)), ((2, 3), (3,)),
                                    ((2, 3), (3, 2)), ((2, 1, 3, 4), (5, 4, 2)),
                                    ((4,), (2, 4, 3)), ((2, 3, 4), (4,))])
def test_matmul_grads_against_numpy(shapes):
    rng = np.random.default_rng(7)
    an, bn = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    a, b = _leaf(an), _leaf(bn)
    out = a @ b
    gn = rng.standard_normal(tuple(out.shape))
    out.backward(jt.tensor(gn))
    # expected: the gradient of sum(g * matmul(a, b)) by the chain rule, in NumPy
    a2 = an[None, :] if an.ndim == 1 else an
    b2 = bn[:, None] if bn.ndim == 1 else bn
    g2 = gn.reshape((a2 @ b2).shape)  # the gradient with the 1-D operands' dims put back
    ga, gb = g2 @ np.swapaxes(b2, -1, -2), np.swapaxes(a2, -1, -2) @ g2

    def fold(g, shape, squeeze_axis):
        if squeeze_axis is not None:
            g = g.squeeze(squeeze_axis)
        while g.ndim > len(shape):
            g = g.sum(0)
        for i, n in enumerate(shape):
            if n == 1 and g.shape[i] != 1:
                g = g.sum(i, keepdims=True)
        return g
    np.testing.assert_allclose(_grad(a), fold(ga, an.shape, -2 if an.ndim == 1 else None),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_grad(b), fold(gb, bn.shape, -1 if bn.ndim == 1 else None),
                               rtol=1e-10, atol=1e-12)


def test_gradcheck_detects_a_wrong_gradient():
    x = jt.tensor([0.5, -1.2, 2.0], dtype=jt.float64, requires_grad=True)
    # x * x.detach(): backward sees x, the function's true derivative is 2x
    assert jt.autograd.gradcheck(lambda t: t * t.detach(), (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        jt.autograd.gradcheck(lambda t: t * t.detach(), (x,))
    assert jt.autograd.gradcheck(lambda t: t * t, (x,))
    assert jt.autograd.gradcheck(lambda t: (t.exp(), t.max(dim=0), t.sin()), (x,))
    assert jt.autograd.gradcheck(lambda t: (t.exp(), t * t.detach()), (x,),
                                 raise_exception=False) is False


# -- second derivatives (create_graph=True), by finite differences of the first --------------
def _first_derivative(f):
    def df(x):
        with jt.enable_grad():  # gradcheck evaluates func under no_grad for its differences
            (g,) = jt.autograd.grad(f(x).sum(), x, create_graph=True)
        return g
    return df


GRADGRAD = [
    ("cube", lambda x: x ** 3),
    ("mul_self", lambda x: x * x * x.sum()),
    ("div", lambda x: 1 / (x * x + 1)),
    ("exp", lambda x: x.exp()),
    ("log", lambda x: (x * x + 1).log()),
    ("sin_cos", lambda x: x.sin() * x.cos()),
    ("tanh", lambda x: x.tanh()),
    ("sigmoid", lambda x: x.sigmoid()),
    ("sqrt", lambda x: (x * x + 1).sqrt()),
    ("softmax", lambda x: x.softmax(dim=-1) * jt.tensor([1.0, 2.0, 3.0], dtype=jt.float64)),
    ("log_softmax", lambda x: x.log_softmax(dim=0) ** 2),
    ("logsumexp", lambda x: x.logsumexp(dim=0) ** 2),
    ("var", lambda x: x.var() * x),
    ("std", lambda x: x.std() * x),
    ("prod", lambda x: x.prod() * x),
    ("matmul", lambda x: (x.unsqueeze(1) @ x.unsqueeze(0)).sum(0) * x),
    ("cumsum", lambda x: x.cumsum(0) ** 2),
    ("views", lambda x: (x.reshape(3, 1).expand(3, 2).t() ** 2).flip([0])),
    ("cat_stack", lambda x: (jt.cat([x * x, x]) ** 2).sum() * x
     + (jt.stack([x, x * x]) ** 2).sum(0)),
    ("getitem_basic", lambda x: x[1:] ** 2),
    ("getitem_advanced", lambda x: x[jt.tensor([0, 0, 2])] ** 2),
    ("index_select", lambda x: x.index_select(0, jt.tensor([2, 2])) ** 2),
    ("gather", lambda x: x.gather(0, jt.tensor([1, 1])) ** 3),
    ("take", lambda x: jt.take(x, jt.tensor([2, 0, 2])) ** 2),
    ("masked_select", lambda x: jt.masked_select(x, jt.tensor([True, False, True])) ** 3),
    ("masked_fill", lambda x: x.masked_fill(jt.tensor([True, False, False]), 2.0) ** 2),
    ("maximum", lambda x: jt.maximum(x, x.flip([0]) * 0.5) ** 2),
    ("pow_tensor", lambda x: (x * x + 1) ** x),
    ("atan2", lambda x: jt.atan2(x, x * x + 1)),
    ("where", lambda x: jt.where(x > 0, x ** 2, x ** 3)),
    ("amax", lambda x: x.amax() * x),
]


@pytest.mark.parametrize("f", [
    pytest.param(f, id=name, marks=pytest.mark.xfail(strict=True, reason=f"BUG: {bug[0]}")
                 if bug else ()) for name, f, *bug in GRADGRAD])
def test_second_derivative_gradcheck(f):
    x = jt.tensor([0.4, -1.1, 0.9], dtype=jt.float64, requires_grad=True)
    assert jt.autograd.gradcheck(_first_derivative(f), (x,))


# -- engine semantics ---------------------------------------------------------------------------
def test_grad_accumulates_over_backward_calls():
    x = _leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(_grad(x), [5.0, 7.0, 9.0])
    y = (x ** 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(_grad(x), [9.0, 15.0, 21.0])


def test_backward_twice_without_retain_graph_raises():
    x = _leaf([1.0, 2.0, 3.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    z = x.exp().sum()
    jt.autograd.grad(z, x)
    with pytest.raises(RuntimeError, match="second time"):
        z.backward()


def test_retain_graph_allows_three_backwards():
    x = _leaf([1.0, 2.0])
    y = (x.sin() * x).sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    y.backward()
    expected = 3 * (np.sin([1.0, 2.0]) + np.array([1.0, 2.0]) * np.cos([1.0, 2.0]))
    np.testing.assert_allclose(_grad(x), expected)


def test_backward_twice_through_graph_that_saves_nothing():
    x = _leaf([1.0, 2.0, 3.0])
    y = (x + 1).sum()
    y.backward()
    y.backward()  # torch: fine (AddBackward0 and SumBackward0 save no tensors)
    np.testing.assert_array_equal(_grad(x), [2.0, 2.0, 2.0])


def test_backward_non_scalar_needs_gradient():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * x
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        y.backward()
    y.backward(gradient=jt.tensor([1.0, 0.5, -2.0], dtype=jt.float64))
    np.testing.assert_array_equal(_grad(x), [2.0, 2.0, -12.0])
    with pytest.raises(RuntimeError, match="(?i)shape"):
        (x * 2).backward(jt.tensor([1.0, 2.0], dtype=jt.float64))
    x1 = _leaf([[4.0]])
    (x1 * 3).backward()  # one element: fine without gradient, as in torch
    np.testing.assert_array_equal(_grad(x1), [[3.0]])


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        jt.tensor([1.0, 2.0]).sum().backward()


def test_tensor_used_twice():
    x = _leaf([1.0, -2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(_grad(x), [2.0, -4.0, 6.0])
    x.grad = None
    (x + x).sum().backward()
    np.testing.assert_array_equal(_grad(x), [2.0, 2.0, 2.0])
    x.grad = None
    (x * x * x).sum().backward()
    np.testing.assert_array_equal(_grad(x), [3.0, 12.0, 27.0])
    x.grad = None
    jt.stack([x, x, x * 2]).sum().backward()
    np.testing.assert_array_equal(_grad(x), [4.0, 4.0, 4.0])


def test_diamond_graphs():
    xn = np.array([0.3, -0.8, 1.1])
    x = _leaf(xn)
    a = x * 2
    (a.exp() * a.sin()).sum().backward()
    e, s, c = np.exp(2 * xn), np.sin(2 * xn), np.cos(2 * xn)
    np.testing.assert_allclose(_grad(x), 2 * e * s + 2 * e * c, rtol=1e-12)
    # paths of different lengths into the same node: d = (3a + a) * a = 16 x^2
    x.grad = None
    a = x * 2
    b = a * 3
    c = b + a
    (c * a).sum().backward()
    np.testing.assert_allclose(_grad(x), 32 * xn, rtol=1e-12)


def test_autograd_grad():
    x, w = _leaf([1.0, 2.0, 3.0]), _leaf([0.5, -1.0, 2.0])
    y = (x * x * w).sum()
    gx, gw = jt.autograd.grad(y, (x, w))
    np.testing.assert_array_equal(gx.numpy(), [1.0, -4.0, 12.0])
    np.testing.assert_array_equal(gw.numpy(), [1.0, 4.0, 9.0])
    assert gx.dtype is jt.float64 and gx.shape == (3,)
    assert x.grad is None and w.grad is None  # autograd.grad does not touch .grad
    assert not gx.requires_grad
    res = jt.autograd.grad((x * 2).sum(), x)
    assert isinstance(res, tuple) and len(res) == 1
    np.testing.assert_array_equal(res[0].numpy(), [2.0, 2.0, 2.0])


def test_autograd_grad_outputs_and_multiple_outputs():
    x = _leaf([1.0, 2.0])
    y1, y2 = x * 3, x * x
    (g,) = jt.autograd.grad([y1, y2], x, grad_outputs=[jt.tensor([1.0, 2.0], dtype=jt.float64),
                                                      jt.tensor([0.5, 1.0], dtype=jt.float64)])
    np.testing.assert_array_equal(g.numpy(), [3.0 + 1.0, 6.0 + 4.0])


def test_autograd_grad_allow_unused():
    x, w = _leaf([1.0, 2.0]), _leaf([3.0, 4.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        jt.autograd.grad(y, [x, w], retain_graph=True)
    gx, gw = jt.autograd.grad(y, [x, w], allow_unused=True)
    np.testing.assert_array_equal(gx.numpy(), [2.0, 2.0])
    assert gw is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        jt.autograd.grad((x * 2).sum(), [jt.tensor([1.0])])


def test_autograd_grad_create_graph_second_derivative():
    x = _leaf([1.0, 2.0, 3.0])
    (g,) = jt.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_array_equal(g.detach().numpy(), [3.0, 12.0, 27.0])
    (g2,) = jt.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_array_equal(g2.detach().numpy(), [6.0, 12.0, 18.0])
    (g3,) = jt.autograd.grad(g2.sum(), x)
    np.testing.assert_array_equal(g3.numpy(), [6.0, 6.0, 6.0])
    # without create_graph the gradient is a constant
    (h,) = jt.autograd.grad((x ** 3).sum(), x)
    assert not h.requires_grad and h.grad_fn is None


def test_create_graph_then_backward_of_gradient():
    x, y = _leaf([1.0, 2.0]), _leaf([3.0, -1.0])
    (gx,) = jt.autograd.grad((x * x * y).sum(), x, create_graph=True)  # 2xy
    gx.sum().backward()
    np.testing.assert_array_equal(_grad(x), [6.0, -2.0])  # d/dx 2xy = 2y
    np.testing.assert_array_equal(_grad(y), [2.0, 4.0])   # d/dy 2xy = 2x


def test_backward_inputs():
    x, w = _leaf([1.0, 2.0]), _leaf([3.0, 4.0])
    z = (x * w).sum()
    z.backward(inputs=[x], retain_graph=True)
    np.testing.assert_array_equal(_grad(x), [3.0, 4.0])
    assert w.grad is None
    z.backward(inputs=w)
    np.testing.assert_array_equal(_grad(w), [1.0, 2.0])
    np.testing.assert_array_equal(_grad(x), [3.0, 4.0])
    # a non-leaf in inputs gets its .grad too
    x.grad = None
    h = x * 2
    (h * h).sum().backward(inputs=[h])
    np.testing.assert_array_equal(_grad(h), [4.0, 8.0])
    assert x.grad is None


def test_retain_grad_on_non_leaf():
    x = _leaf([1.0, 2.0])
    y = x * 2
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    u = x * 3  # not retained
    (y * y + u).sum().backward()
    np.testing.assert_array_equal(_grad(y), [4.0, 8.0])
    np.testing.assert_array_equal(_grad(x), [8.0 + 3.0, 16.0 + 3.0])
    assert u.grad is None
    x.retain_grad()  # a no-op on leaves, as in torch
    assert x.grad is not None


def test_retain_grad_accumulates():
    x = _leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    z = (y * 3).sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_array_equal(_grad(y), [6.0, 6.0])


def test_functional_backward():
    x, w = _leaf([1.0, 2.0]), _leaf([3.0, 4.0])
    y1, y2 = x * w, (x * x).sum()
    jt.autograd.backward([y1, y2], [jt.tensor([1.0, 2.0], dtype=jt.float64), None])
    np.testing.assert_array_equal(_grad(x), [3.0 + 2.0, 8.0 + 4.0])
    np.testing.assert_array_equal(_grad(w), [1.0, 4.0])


def test_autograd_grad_wrt_non_leaf():
    x = _leaf([1.0, 2.0])
    h = x * 3
    (gh, gx) = jt.autograd.grad((h * h).sum(), [h, x])
    np.testing.assert_array_equal(gh.numpy(), [6.0, 12.0])
    np.testing.assert_array_equal(gx.numpy(), [18.0, 36.0])
    assert h.grad is None and x.grad is None


def test_long_chain_has_no_recursion_limit():
    x = _leaf([1.0, 2.0])
    y = x
    for _ in range(3000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(_grad(x), np.full(2, 1.0001 ** 3000), rtol=1e-10)


def test_multi_output_node_partial_use():
    x = _leaf(np.arange(6.0).reshape(2, 3))
    a, b, c = x.split(1, dim=1)
    (a * 2).sum().backward(retain_graph=True)
    np.testing.assert_array_equal(_grad(x), [[2, 0, 0], [2, 0, 0]])
    (c * b).sum().backward()
    np.testing.assert_array_equal(_grad(x), [[2, 2, 1], [2, 5, 4]])
    x.grad = None
    v, i = x.max(dim=1)
    (v * 3).sum().backward()
    np.testing.assert_array_equal(_grad(x), [[0, 0, 3], [0, 0, 3]])


def test_grad_accumulates_in_place():
    x = _leaf([1.0, 2.0])
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g
    np.testing.assert_array_equal(g.numpy(), [5.0, 5.0])


def test_backward_create_graph_makes_grad_differentiable():
    x = _leaf([1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    np.testing.assert_array_equal(x.grad.detach().numpy(), [3.0, 12.0])
    (g2,) = jt.autograd.grad(x.grad.sum(), x)
    np.testing.assert_array_equal(g2.numpy(), [6.0, 12.0])


@pytest.mark.parametrize("make", [
    lambda: jt.zeros(2, 3, dtype=jt.float64, requires_grad=True),
    lambda: jt.ones(2, 3, dtype=jt.float64, requires_grad=True),
    lambda: jt.full((2, 3), 2.0, dtype=jt.float64, requires_grad=True),
    lambda: jt.randn(2, 3, dtype=jt.float64, requires_grad=True),
    lambda: jt.tensor(np.ones((2, 3)), requires_grad=True),
    lambda: jt.zeros(3, dtype=jt.float64).new_ones((2, 3), requires_grad=True),
])
def test_creation_with_requires_grad_makes_leaves(make):
    x = make()
    assert x.requires_grad and x.is_leaf and x.grad is None and x.dtype is jt.float64
    (x * 3).sum().backward()
    np.testing.assert_array_equal(_grad(x), np.full((2, 3), 3.0))


def test_numpy_of_tensor_requiring_grad_raises():
    x = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="detach"):
        x.numpy()
    with pytest.raises(RuntimeError, match="detach"):
        (x * 2).numpy()
    assert x.detach().numpy().tolist() == [1.0, 2.0]
    assert (x * 2)[1].item() == 4.0 and float(x.sum()) == 3.0


def test_no_grad():
    x = _leaf([1.0, 2.0])
    assert jt.is_grad_enabled()
    with jt.no_grad():
        assert not jt.is_grad_enabled()
        y = x * 2
        z = (x.exp() @ x)
    assert jt.is_grad_enabled()
    for t in (y, z):
        assert not t.requires_grad and t.grad_fn is None and t.is_leaf
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
    assert (x * 2).requires_grad


def test_no_grad_restores_after_exception():
    with pytest.raises(ValueError):
        with jt.no_grad():
            raise ValueError
    assert jt.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = _leaf([1.0, 2.0])
    with jt.no_grad():
        with jt.enable_grad():
            assert jt.is_grad_enabled()
            y = x * x
        assert not jt.is_grad_enabled()
        z = x * 3
    assert y.requires_grad and y.grad_fn is not None
    assert not z.requires_grad
    y.sum().backward()
    np.testing.assert_array_equal(_grad(x), [2.0, 4.0])


def test_set_grad_enabled_function_and_context():
    x = _leaf([1.0, 2.0])
    try:
        jt.set_grad_enabled(False)
        assert not jt.is_grad_enabled()
        assert not (x * 2).requires_grad
        jt.set_grad_enabled(True)
        assert jt.is_grad_enabled() and (x * 2).requires_grad
    finally:
        jt.set_grad_enabled(True)
    with jt.set_grad_enabled(False):
        assert not jt.is_grad_enabled()
        assert not (x * 2).requires_grad
        with jt.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not jt.is_grad_enabled()
    assert jt.is_grad_enabled()
    with jt.no_grad():
        with jt.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not jt.is_grad_enabled()
    assert jt.is_grad_enabled()


def test_grad_mode_decorators():
    x = _leaf([1.0, 2.0])

    @jt.no_grad()
    def f(t):
        assert not jt.is_grad_enabled()
        return t * 2

    @jt.no_grad
    def f_bare(t):
        return t * 2

    @jt.enable_grad()
    def g(t):
        return t * 2

    @jt.set_grad_enabled(False)
    def h(t):
        return t * 2

    assert jt.is_grad_enabled()  # decorating changes nothing
    assert f.__name__ == "f"
    assert not f(x).requires_grad and not f_bare(x).requires_grad and not h(x).requires_grad
    assert jt.is_grad_enabled()
    with jt.no_grad():
        assert g(x).requires_grad
        assert not jt.is_grad_enabled()
    assert jt.is_grad_enabled()


def test_detach():
    x = _leaf([1.0, 2.0, 3.0])
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d[0] = 10.0  # shares memory with x
    assert x[0].item() == 10.0
    y = (x * 2).detach()
    assert not y.requires_grad
    x.grad = None
    (x * x.detach()).sum().backward()  # the detached factor is a constant
    np.testing.assert_array_equal(_grad(x), [10.0, 2.0, 3.0])
    d2 = x.data
    assert not d2.requires_grad


def test_detach_inplace():
    x = _leaf([1.0, 2.0])
    y = x * 2
    y.detach_()
    assert not y.requires_grad and y.is_leaf


@pytest.mark.parametrize("dtype", [jt.int64, jt.int32, jt.uint8, jt.bool])
def test_requires_grad_on_integer_tensors_raises(dtype):
    with pytest.raises(RuntimeError, match="floating point"):
        jt.tensor([1, 0], dtype=dtype, requires_grad=True)
    t = jt.tensor([1, 0], dtype=dtype)
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad = True
    assert not t.requires_grad
    t.requires_grad_(False)  # turning it off is fine


def test_requires_grad_flags():
    x = jt.tensor([1.0, 2.0])
    assert not x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    x.requires_grad_(False)
    assert not (x * 2).requires_grad


def test_integer_and_bool_results_do_not_require_grad():
    x = _leaf([1.0, -2.0, 3.0])
    for t in (x > 0, x == 1, x.argmax(), jt.isfinite(x), x.to(jt.int64), x.nonzero()):
        assert not t.requires_grad and t.grad_fn is None
    values, indices = x.max(dim=0)
    assert values.requires_grad and not indices.requires_grad


def test_grad_fn_names_end_with_backward_and_a_number():
    x, w = _leaf([[1.0, 2.0], [3.0, 4.0]]), _leaf([[0.5, 1.0], [1.5, -1.0]])
    outs = [x + w, x * w, x @ w, x.sum(), x.exp(), x[0], x.t(), x.reshape(-1), jt.cat([x, w]),
            x.softmax(1), x.clamp(0, 2), x.max(dim=1).values, x[jt.tensor([0, 0])]]
    for out in outs:
        name = out.grad_fn.name()
        assert name[:-1].endswith("Backward") and type(out.grad_fn).__name__ == name, name
        assert f"grad_fn=<{name}>" in repr(out)
    assert x.grad_fn is None


@pytest.mark.parametrize("expr", [
    "x + w", "x * w", "x - w", "x / w", "-x", "x.sum()", "x.mean()", "x.exp()", "x.view(-1)",
    "x.unsqueeze(0)", "x.expand(2, 2, 2)", "x.clone()", "x.pow(2)", "ns.cat([x, w])",
    "ns.stack([x, w])", "x.flip([0])", "x.cumsum(0)", "x.prod()", "x.softmax(0)",
    "x.log_softmax(0)", "x.amax()", "x.t()", "x.permute(1, 0)", "x.transpose(0, 1)",
    "x.reshape(2, 1, 2).squeeze()", "ns.where(x > 1, x, w)", "x.relu()", "x.sigmoid()",
    "x.tanh()", "x.abs()", "x.var()", "x.std()", "x.logsumexp(0)", "ns.mm(x, w)",
    "x.gather(0, ns.tensor([[0, 1]]))", "x.index_select(0, ns.tensor([0]))",
    "x.masked_fill(x > 1, 0.0)", "ns.maximum(x, w)", "ns.atan2(x, w)", "x.sqrt()", "x.rsqrt()",
    "x.reciprocal()", "x.sign()", "x.floor()", "ns.dot(x[0], w[0])", "x.sin()", "x.cos()",
    "x.log()",
    # torch names these by the call (its overloads), or after the op it records instead
    "x.sum(1)", "x.mean(0)", "x.prod(1)", "x.max()", "x.min(1).values", "ns.max(x, w)",
    "x.reshape(1, 2, 2).squeeze(0)", "x.clamp(0, 2)", "x.clamp(w, w + 1)", "x.norm()",
    "x[0]", "x[1:]", "x[0, 1:]", "x[:, 0]", "x[None]", "x[ns.tensor([1, 0])]", "x[x > 1]",
    "x[True]", "x[..., 1]", "x[:, None]",
    "x.reshape(-1)", "x.t().reshape(-1)", "x.flatten()", "x.t().flatten()", "x.double()",
    "x.t().contiguous()", "x.chunk(2)[0]", "1 - x", "2 / x", "2 ** x", "x ** w", "x @ w",
    "x @ w[0]", "x[0] @ w[0]", "x[0] @ w", "x.view(1, 2, 2) @ w.view(1, 2, 2)",
    "ns.nn.functional.linear(x, w, w[0])", "ns.nn.functional.linear(x, w)",
    "ns.nn.functional.linear(x.view(1, 2, 2), w, w[0])", "ns.nn.functional.linear(x[0], w)",
    "ns.nn.functional.mse_loss(x, w)", "ns.nn.functional.smooth_l1_loss(x, w)",
    "ns.nn.functional.huber_loss(x, w, reduction='none')",
    "ns.nn.functional.binary_cross_entropy(x.sigmoid(), w.sigmoid())",
    "ns.nn.functional.binary_cross_entropy_with_logits(x, w.sigmoid())",
    "ns.nn.functional.soft_margin_loss(x, w.detach())",
    "ns.nn.functional.multi_margin_loss(x, ns.tensor([1, 0]))",
    "ns.nn.functional.multilabel_margin_loss(x, ns.tensor([[1, -1], [0, 1]]))",
    "ns.nn.functional.l1_loss(x, w)", "ns.nn.functional.avg_pool2d(x.view(1, 1, 2, 2), 2)",
    "ns.nn.functional.max_pool2d(x.view(1, 1, 2, 2), 2)",
])
def test_grad_fn_names_match_torch(expr):
    torch = _torch()
    names = []
    for ns in (jt, torch):
        x = ns.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = ns.tensor([[0.5, 1.0], [1.5, -1.0]], requires_grad=True)
        names.append(eval(expr, {"ns": ns, "x": x, "w": w}).grad_fn.name())
    assert names[0] == names[1]


def test_repr_with_grad_like_torch():
    x = jt.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr((x * 2).sum()) == "tensor(6., grad_fn=<SumBackward0>)"
    x64 = jt.tensor([1.0, 2.0], dtype=jt.float64, requires_grad=True)
    assert repr(x64 + 1) == "tensor([2., 3.], dtype=jitensor.float64, grad_fn=<AddBackward0>)"
    with jt.no_grad():
        assert repr(x * 2) == "tensor([2., 4.])"


def test_repr_matches_torch():
    torch = _torch()
    reprs = []
    for ns in (jt, torch):
        x = ns.tensor([1.0, 2.5], requires_grad=True)
        reprs.append([repr(x), repr(x * 2), repr(x.exp().sum()), repr(x.detach())])
    assert reprs[0] == reprs[1]


def test_is_leaf():
    x = _leaf([1.0])
    c = jt.tensor([1.0])
    assert x.is_leaf and c.is_leaf
    y = x * 2
    assert not y.is_leaf and y.grad_fn is not None
    assert (c * 2).is_leaf  # no input requires grad: nothing recorded
    assert y.detach().is_leaf
    with jt.no_grad():
        assert (x * 2).is_leaf


def test_non_leaf_grad_is_none_after_backward():
    x = _leaf([1.0, 2.0])
    y = x * 2
    y.sum().backward()
    assert y.grad is None
    np.testing.assert_array_equal(_grad(x), [2.0, 2.0])




@pytest.mark.parametrize("loss", [
    lambda x, b: x.sum(),
    lambda x, b: x.mean() * 4,
    lambda x, b: (x + b).sum(),
    lambda x, b: x.sum(0).sum(),
    lambda x, b: (x + b.sum()).sum(),
], ids=["sum", "mean", "add_sum", "sum_dim_sum", "bcast_0d"])
def test_leaf_grad_can_be_modified_in_place(loss):
    x, b = _leaf(np.ones((2, 2))), _leaf(np.ones((2, 2)))
    loss(x, b).backward()
    np.testing.assert_allclose(_grad(x), np.ones((2, 2)))
    b_grad = None if b.grad is None else _grad(b).copy()
    with jt.no_grad():
        x.grad.mul_(10)  # as gradient clipping does
        x.grad.add_(jt.ones(2, 2, dtype=jt.float64))
    np.testing.assert_allclose(_grad(x), np.full((2, 2), 11.0))
    if b_grad is not None:  # b's gradient is a tensor of its own
        np.testing.assert_allclose(_grad(b), b_grad)


def test_grad_setter():
    x = _leaf([1.0, 2.0])
    x.grad = jt.tensor([5.0, 5.0], dtype=jt.float64)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(_grad(x), [7.0, 7.0])
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError):
        x.grad = jt.tensor([1.0, 2.0, 3.0], dtype=jt.float64)


def test_grad_is_not_aliased_to_upstream_gradient():
    x = _leaf([1.0, 2.0])
    g = jt.tensor([1.0, 1.0], dtype=jt.float64)
    (x * 1).backward(g)
    x.grad.add_(1)  # the stored .grad must not be the caller's tensor
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    a, b = _leaf([1.0, 2.0]), _leaf([1.0, 2.0])
    (a + b).sum().backward()
    with jt.no_grad():
        a.grad.mul_(10)
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])


@pytest.mark.parametrize("split", [lambda x: x.unbind(0), lambda x: x.split(1),
                                   lambda x: x.chunk(1), lambda x: x.split([1])])
def test_a_split_into_one_piece_backpropagates(split):
    x = jt.arange(15.0).reshape(1, 3, 5).requires_grad_()
    (piece,) = split(x)
    (piece * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((1, 3, 5), 2.0))


def test_broadcast_tensors_of_one_tensor_gradient():
    """One tensor in, one view out: its gradient reaches the input whole (not row by row)."""
    p = jt.ones(2, 3, requires_grad=True)
    (a,) = jt.broadcast_tensors(p)
    (g,) = jt.autograd.grad((a * 2).sum(), [p])
    np.testing.assert_array_equal(g.numpy(), np.full((2, 3), 2.0))


def test_a_graph_alive_at_exit_prints_nothing():
    # (the version counters' weakref callbacks once ran after the module's globals were gone
    # and printed "Exception ignored in _drop")
    import subprocess
    import sys
    script = "import jitensor as jt\nx = jt.ones(3, requires_grad=True)\ny = x.clamp(0, 1).sum()\n"
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def _graph_names(node, depth=0):
    """The class names of a grad_fn's graph, walked through next_functions."""
    if node is None:
        return []
    names = ["  " * depth + type(node).__name__]
    for nxt, _ in node.next_functions:
        names += _graph_names(nxt, depth + 1)
    return names


def test_graph_of_a_network_walks_as_torch():
    """The walk of torch's "neural networks" tutorial: a loss's graph through linear layers
    (addmm of the bias, the input and the transposed weight), activations, pooling and
    convolutions shows torch's nodes in torch's order; composite losses are one node."""
    torch = _torch()
    walks = []
    for lib in (jt, torch):
        lib.manual_seed(0)
        F = lib.nn.functional
        conv, fc1 = lib.nn.Conv2d(1, 2, 3), lib.nn.Linear(8, 4)
        fc2 = lib.nn.Linear(4, 3, bias=False)
        x = lib.randn(1, 1, 6, 6)
        h = F.max_pool2d(F.relu(conv(x)), 2).flatten(1)
        out = fc2(F.relu(fc1(h)))
        target = lib.randn(1, 3)
        transpose = out.grad_fn.next_functions[1][0]  # (the same node at every look)
        assert type(transpose).__name__ == "TBackward0"
        assert transpose is out.grad_fn.next_functions[1][0]
        walks.append([_graph_names(loss.grad_fn) for loss in (
            F.mse_loss(out, target), F.binary_cross_entropy_with_logits(out, target.sigmoid()),
            F.smooth_l1_loss(out, target, reduction="sum"))])
    assert walks[0] == walks[1]


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "binary_cross_entropy"])
def test_composite_loss_nodes_differentiate_twice_as_torch(loss):
    """A loss recorded as one node: its gradient, its second derivative (create_graph), hooks
    on its input and retain_graph behave as the composed ops' did, and as torch's."""
    torch = _torch()
    results = []
    for lib in (jt, torch):
        x = lib.tensor([[0.2, 0.7], [0.4, 0.9]], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([[0.1, 0.8], [0.5, 0.3]], dtype=lib.float64, requires_grad=True)
        seen = []
        x.register_hook(lambda g, seen=seen: seen.append(g.sum().item()))
        out = getattr(lib.nn.functional, loss)(x * 0.5, t)
        gx, gt = lib.autograd.grad(out, (x, t), create_graph=True)
        hx, = lib.autograd.grad(gx.pow(2).sum() + gt.sum(), x, retain_graph=True)
        out.backward(retain_graph=True)
        out.backward()
        results.append([np.asarray(v.tolist()) for v in (out, gx, gt, hx, x.grad, t.grad)] +
                       [np.asarray(seen)])
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            out.backward()
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_next_functions_as_torch():
    """Each tensor input's (grad_fn or AccumulateGrad, output number), None for one that needs
    no gradient: the walk torch's autograd tutorial does, and graph viewers do."""
    torch = pytest.importorskip("torch")
    for lib in (jt, torch):
        a = lib.ones(3, requires_grad=True)
        b = lib.sin(a)
        leaf = b.grad_fn.next_functions[0][0]
        assert type(leaf).__name__ == "AccumulateGrad" and leaf.variable is a
        assert leaf.next_functions == () and leaf is b.grad_fn.next_functions[0][0]
        assert leaf.name() == "torch::autograd::AccumulateGrad"
        product = lib.mm(a.view(1, 3), lib.ones(3, 2))
        view, constant = product.grad_fn.next_functions
        assert type(view[0]).__name__ == "ViewBackward0" and constant == (None, 0)
        assert view[0].next_functions[0][0] is leaf
        (b * a).sum().backward()
        np.testing.assert_allclose(np.asarray(a.grad.tolist()),
                                   np.sin(1.0) + np.cos(1.0), rtol=1e-6)
