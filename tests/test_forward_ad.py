"""Forward-mode AD (jitensor.autograd.forward_ad) against torch's: the tangents of elementwise,
linear, product, reduction, nn and linalg ops and of whole models; in-place ops and views;
grad mode; custom Functions; and the API's errors."""
import contextlib

import numpy as np
import pytest

import jitensor as jt
import jitensor.autograd.forward_ad as fwAD

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad

RNG = np.random.default_rng(34)


def _pair(shape, low=-2.0, high=2.0):
    """(primal, tangent) float64 arrays."""
    return RNG.uniform(low, high, shape), RNG.standard_normal(shape)


def _run(lib, fw, fn, duals, others):
    # (torch's fused CPU attention has no forward derivative: its composed form has)
    with fw.dual_level(), contextlib.nullcontext() if lib is jt else \
            torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        args = [fw.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in duals]
        out = fn(lib, *args, *[lib.tensor(o) if isinstance(o, np.ndarray) else o
                               for o in others])
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return [(o.detach().numpy(), None if (t := fw.unpack_dual(o).tangent) is None
                 else t.detach().numpy()) for o in outs if o.dtype.is_floating_point]


def check(fn, duals, others=(), rtol=1e-9, atol=1e-10):
    """fn(lib, *dual tensors, *other tensors) has the same values and tangents in both."""
    mine = _run(jt, fwAD, fn, duals, others)
    theirs = _run(torch, tfw, fn, duals, others)
    assert len(mine) == len(theirs)
    for (v, t), (tv, tt) in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(v, tv, rtol=rtol, atol=atol)
        if (t is None) != (tt is None):  # (torch gives none where an op ignores the input)
            assert not np.any(t if tt is None else tt)
        elif tt is not None:
            assert t.shape == tt.shape and t.dtype == tt.dtype
            np.testing.assert_allclose(t, tt, rtol=rtol, atol=atol)


UNARY = ["neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan",
         "tanh", "sigmoid", "relu", "reciprocal", "square", "asin", "acos", "atan", "sinh",
         "cosh", "asinh", "atanh", "log2", "log10", "exp2", "erf", "erfc", "erfinv", "lgamma",
         "digamma", "floor", "sinc", "trunc", "nan_to_num", "sign"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    low = 0.1 if name in ("log", "log1p", "sqrt", "rsqrt", "log2", "log10", "lgamma",
                          "digamma") else -0.9
    check(lambda lib, x: getattr(lib, name)(x), [_pair((3, 4), low, 0.9)])


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "maximum", "minimum",
                                  "atan2", "hypot", "fmod", "remainder", "logaddexp", "xlogy",
                                  "copysign", "fmax"])
def test_binary_broadcast(name):
    x, y = _pair((3, 4), 0.5, 2.0), _pair((4,), 0.5, 2.0)
    check(lambda lib, a, b: getattr(lib, name)(a, b), [x, y])  # both dual
    check(lambda lib, a, b: getattr(lib, name)(a, b), [x], [y[0]])  # one dual, one broadcast
    check(lambda lib, b, a: getattr(lib, name)(a, b), [y], [x[0]])


def test_operators_and_scalars():
    check(lambda lib, a, b: (a + b * 2 - 1) / (b ** 2 + 1) + 3 ** a, [_pair((2, 3)),
                                                                     _pair((2, 3))])
    check(lambda lib, a: lib.clamp(a, -0.5, 0.5) + lib.where(a > 0, a, a * a) + a.clamp(min=0),
          [_pair((5,))])
    check(lambda lib, a, b: lib.add(a, b, alpha=3) + lib.lerp(a, b, 0.3), [_pair((4,)),
                                                                          _pair((4,))])


REDUCTIONS = [
    lambda lib, a: a.sum(), lambda lib, a: a.sum(1, keepdim=True), lambda lib, a: a.mean(0),
    lambda lib, a: a.prod(1), lambda lib, a: a.amax(1), lambda lib, a: a.max(),
    lambda lib, a: a.max(1), lambda lib, a: a.var(1), lambda lib, a: a.std(),
    lambda lib, a: a.norm(), lambda lib, a: lib.logsumexp(a, 1), lambda lib, a: a.cumsum(1),
    lambda lib, a: lib.softmax(a, dim=1), lambda lib, a: lib.log_softmax(a, 0),
    lambda lib, a: lib.nn.functional.log_softmax(a, dim=-1),
    lambda lib, a: a.sort(1), lambda lib, a: a.topk(2), lambda lib, a: a.median(),
]


@pytest.mark.parametrize("fn", REDUCTIONS, ids=[str(i) for i in range(len(REDUCTIONS))])
def test_reductions(fn):
    check(fn, [_pair((3, 4))])


VIEWS = [
    lambda lib, a: a.t(), lambda lib, a: a.reshape(4, 3), lambda lib, a: a.view(-1),
    lambda lib, a: a[1:, ::2], lambda lib, a: a[:, None],
    lambda lib, a: a.unsqueeze(0).expand(2, 3, 4),
    lambda lib, a: a.permute(1, 0), lambda lib, a: a.split(2, 1), lambda lib, a: a.unbind(0),
    lambda lib, a: a.diagonal(), lambda lib, a: a.flip(0), lambda lib, a: a.clone(),
    lambda lib, a: lib.cat([a, a * 2], 1), lambda lib, a: lib.stack([a, a], 0),
    lambda lib, a: a.index_select(1, lib.tensor([0, 2])),
    lambda lib, a: a.gather(1, lib.tensor([[0, 1], [2, 3], [1, 1]])),
    lambda lib, a: a[lib.tensor([0, 2])], lambda lib, a: a.masked_fill(a > 0, 1.0),
    lambda lib, a: a.to(lib.float32), lambda lib, a: a.flatten(), lambda lib, a: a.movedim(0, 1),
    lambda lib, a: lib.tril(a), lambda lib, a: a.repeat(2, 1), lambda lib, a: a.roll(1, 1),
]


@pytest.mark.parametrize("fn", VIEWS, ids=[str(i) for i in range(len(VIEWS))])
def test_shape_and_indexing(fn):
    check(fn, [_pair((3, 4))], rtol=1e-6)


def test_cat_with_a_plain_tensor():
    check(lambda lib, a, b: lib.cat([a, b]), [_pair((2, 3))], [RNG.standard_normal((2, 3))])


def test_products():
    a, b = _pair((3, 4)), _pair((4, 5))
    check(lambda lib, x, y: x @ y, [a, b])
    check(lambda lib, x, y: lib.mm(x, y), [a], [b[0]])
    check(lambda lib, y, x: x @ y, [b], [a[0]])
    check(lambda lib, x, y: lib.bmm(x, y), [_pair((2, 3, 4)), _pair((2, 4, 2))])
    check(lambda lib, x, y: lib.outer(x, y) + lib.dot(x, x), [_pair((3,)), _pair((3,))])
    check(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
          [_pair((2, 3)), _pair((4, 3)), _pair((4,))])
    check(lambda lib, x, w, b: lib.nn.functional.linear(input=x, weight=w, bias=b),
          [_pair((2, 3)), _pair((4, 3)), _pair((4,))])


def test_nn_functions():
    F = "nn.functional"

    def f(lib):
        mod = lib
        for part in F.split("."):
            mod = getattr(mod, part)
        return mod
    x = _pair((2, 3, 6, 6))
    check(lambda lib, a, w: f(lib).conv2d(a, w, padding=1), [x, _pair((4, 3, 3, 3))], rtol=1e-7)
    check(lambda lib, a: f(lib).max_pool2d(a, 2) + f(lib).avg_pool2d(a, 2), [x])
    check(lambda lib, a, w, b: f(lib).layer_norm(a, (6,), w, b),
          [x, _pair((6,)), _pair((6,))], rtol=1e-7)
    check(lambda lib, a: f(lib).batch_norm(a, None, None, training=True), [x], rtol=1e-7)
    check(lambda lib, a: f(lib).gelu(a) + f(lib).silu(a) + f(lib).softplus(a) +
          f(lib).leaky_relu(a, 0.1) + f(lib).elu(a) + f(lib).hardtanh(a), [x])
    logits = _pair((4, 5))
    check(lambda lib, a, t: f(lib).cross_entropy(a, t), [logits], [np.array([0, 2, 4, 1])])
    check(lambda lib, a, b: f(lib).mse_loss(a, b), [logits, _pair((4, 5))])
    check(lambda lib, w, i: f(lib).embedding(i, w), [_pair((5, 3))], [np.array([[0, 4], [2, 2]])])
    q, k, v = _pair((1, 2, 4, 3)), _pair((1, 2, 4, 3)), _pair((1, 2, 4, 3))
    check(lambda lib, a, b, c: f(lib).scaled_dot_product_attention(a, b, c, is_causal=True),
          [q, k, v], rtol=1e-7)


def test_linalg():
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3), RNG.standard_normal((3, 3))
    check(lambda lib, m: lib.linalg.det(m), [a], rtol=1e-7)
    check(lambda lib, m: lib.linalg.inv(m), [a], rtol=1e-7)
    check(lambda lib, m, b: lib.linalg.solve(m, b), [a, _pair((3, 2))], rtol=1e-7)


def test_models_against_torch():
    """An MLP and a small transformer layer with dual inputs and weights, as torch runs them."""
    def mlp(lib, x, w1, w2):
        F = lib.nn.functional
        return F.log_softmax(F.linear(F.gelu(F.linear(x, w1)), w2), -1).sum()
    check(mlp, [_pair((4, 5)), _pair((8, 5)), _pair((3, 8))], rtol=1e-7)

    def block(lib, x):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        layer.double()
        for p in layer.parameters():  # the same weights in both libraries
            p.data = lib.tensor(np.linspace(-0.3, 0.3, p.numel()).reshape(p.shape))
        return layer(x)
    check(block, [_pair((2, 5, 8))], rtol=1e-6, atol=1e-8)


def test_jvp_agrees_with_func_jvp():
    """Forward AD's tangent equals jitensor.func.jvp's (computed by double backward)."""
    x, t = (jt.tensor(a) for a in _pair((3, 4)))
    w = jt.tensor(RNG.standard_normal((4, 2)))

    def f(a):
        return (a.tanh() @ w).softmax(-1)
    _, expected = jt.func.jvp(f, (x,), (t,))
    with fwAD.dual_level():
        got = fwAD.unpack_dual(f(fwAD.make_dual(x, t))).tangent
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10)


# -- in-place ops and views ----------------------------------------------------------------------
def test_inplace_and_views():
    def f(lib, a, b):
        c = a.clone()
        c.mul_(b)
        c[0] = b[1] * 3
        c.add_(1.0)
        v = c[1]
        v.sin_()  # through a view: c's tangent follows
        c.t_()
        return c
    check(f, [_pair((3, 3)), _pair((3, 3))])

    def g(lib, a):
        z = lib.zeros(3, dtype=lib.float64)
        z.copy_(a)  # a plain tensor written with a dual value takes its tangent
        z.zero_()
        z += a
        return z
    check(g, [_pair((3,))])


def test_grad_modes_and_reverse_through_tangents():
    x = jt.tensor(np.array([0.3, -0.7]), requires_grad=True)
    xt = torch.tensor(np.array([0.3, -0.7]), requires_grad=True)
    for lib, fw, p in ((jt, fwAD, x), (torch, tfw, xt)):
        with fw.dual_level():
            with lib.no_grad():  # forward AD ignores no_grad
                d = fw.make_dual(p.detach(), lib.ones(2, dtype=lib.float64))
                assert fw.unpack_dual((d * d).sum()).tangent.item() == pytest.approx(
                    2 * (0.3 - 0.7))
            # the tangent of sum(sin(x)) along 1 is sum(cos(x)): its gradient is -sin(x)
            d = fw.make_dual(p, lib.ones(2, dtype=lib.float64))
            tangent = fw.unpack_dual(d.sin().sum()).tangent
            assert tangent.requires_grad
            tangent.backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), -np.sin([0.3, -0.7]), rtol=1e-12)


def test_custom_function_jvp():
    def make(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                ctx.save_for_forward(x, y)
                ctx.k = k
                return x * y * k

            @staticmethod
            def jvp(ctx, tx, ty, tk):
                assert tk is None
                x, y = ctx.saved_tensors
                return (tx * y + x * ty) * ctx.k

        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return Scale, NoJvp

    check(lambda lib, a, b: make(lib)[0].apply(a, b, 2.0), [_pair((3,))], [np.ones(3)])
    check(lambda lib, a, b: make(lib)[0].apply(a, b, 2.0), [_pair((3,)), _pair((3,))])
    for lib, fw in ((jt, fwAD), (torch, tfw)):
        with fw.dual_level():
            d = fw.make_dual(lib.ones(2), lib.ones(2))
            with pytest.raises(NotImplementedError, match="jvp function for custom"):
                make(lib)[1].apply(d)
            assert fw.unpack_dual(make(lib)[1].apply(lib.ones(2))).tangent is None


def test_user_elementwise_kernel():
    @jt.elementwise
    def cube(x):
        return x * x * x

    @cube.derivative
    def _(x):
        return 3 * x * x
    with fwAD.dual_level():
        d = fwAD.make_dual(jt.tensor([1.0, 2.0]), jt.tensor([1.0, 0.5]))
        assert fwAD.unpack_dual(cube(d)).tangent.tolist() == [3.0, 6.0]


# -- the API ------------------------------------------------------------------------------------
def test_api_against_torch():
    for lib, fw in ((jt, fwAD), (torch, tfw)):
        x = lib.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError, match="no level exists"):
            fw.make_dual(x, lib.ones(2))
        assert fw.unpack_dual(x) == (x, None)
        with fw.dual_level() as level:
            assert level == 0
            with pytest.raises(RuntimeError, match="Nested forward mode AD"):
                fw.enter_dual_level()
            with pytest.raises(RuntimeError, match="different size"):
                fw.make_dual(x, lib.ones(3))
            with pytest.raises(ValueError, match="floating point or complex"):
                fw.make_dual(lib.tensor([1, 2]), lib.ones(2))
            with pytest.raises(RuntimeError, match="Invalid level"):
                fw.make_dual(x, lib.ones(2), level=3)
            t = lib.ones(2)
            d = fw.make_dual(x, t)
            assert fw.unpack_dual(d).tangent is t and not d.requires_grad
            with pytest.raises(RuntimeError, match="already has a forward gradient"):
                fw.make_dual(d, lib.ones(2))
            primal, tangent = fw.unpack_dual(d)
            assert fw.unpack_dual(primal).tangent is None and tangent is t
            assert fw.unpack_dual(d.detach()).tangent is None
            assert fw.unpack_dual(d.argmax()).tangent is None
            assert fw.unpack_dual(d > 0).tangent is None
            y = d * 3
        assert fw.unpack_dual(y).tangent is None and fw.unpack_dual(d).tangent is None
        with pytest.raises(RuntimeError, match="positive number"):  # (no level to exit)
            fw.exit_dual_level()
        assert fw.enter_dual_level() == 0
        fw.exit_dual_level()


def test_out_is_refused_as_torch():
    for lib, fw in ((jt, fwAD), (torch, tfw)):
        with fw.dual_level():
            d = fw.make_dual(lib.ones(2), lib.ones(2))
            with pytest.raises(NotImplementedError, match="forward AD with sin"):
                lib.sin(d, out=lib.empty(2))


@pytest.mark.cuda
def test_cuda_tangents_equal_the_cpu_ones():
    x, t, w = (RNG.standard_normal(s).astype(np.float32) for s in ((3, 4), (3, 4), (2, 4)))
    got = []
    for device in ("cpu", "cuda"):
        F = jt.nn.functional
        with fwAD.dual_level():
            d = fwAD.make_dual(jt.tensor(x, device=device), jt.tensor(t, device=device))
            y = F.log_softmax(F.linear(d.tanh(), jt.tensor(w, device=device)), -1).sum(0)
            got.append(fwAD.unpack_dual(y).tangent.cpu().numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-5, atol=1e-6)


def test_decorator_and_repr():
    @fwAD.dual_level()
    def f():
        d = fwAD.make_dual(jt.tensor([1.0]), jt.tensor([2.0]))
        assert "tangent=tensor([2.])" in repr(d)
        return d
    assert fwAD.unpack_dual(f()).tangent is None


@pytest.mark.parametrize("create_graph", [True, False])
def test_backward_within_a_level_gives_hessian_vector_products(create_graph):
    """Forward over reverse: the tangent of a gradient taken within the level is H·t, also for
    ops whose derivative reads their result (exp, softmax, tanh) or runs fused kernels without
    create_graph (softmax, gelu, layer_norm, cross_entropy, indexing, embedding)."""
    p, t = _pair((2, 5))
    got = []
    for lib, fw in ((jt, fwAD), (torch, tfw)):
        x = lib.tensor(p, requires_grad=True)
        F = lib.nn.functional
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor(t))
            y = (d.exp() * d.tanh()).sum() + d.softmax(1).pow(2).sum() + d.sigmoid().prod() + \
                F.gelu(d).pow(2).sum() + F.layer_norm(d, (5,)).pow(3).sum() + \
                F.cross_entropy(d, lib.tensor([1, 3])) + d[lib.tensor([1, 0, 1])].pow(3).sum() + \
                F.embedding(lib.tensor([0, 1, 1]), d).pow(3).sum() + F.mse_loss(d.sin(), d)
            g, = lib.autograd.grad(y, x, create_graph=create_graph)
            got.append(fw.unpack_dual(g).tangent.detach().numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-8)
