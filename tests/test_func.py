"""jitensor.func against torch.func: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
linearize, vmap, functional_call and stack_module_state on the same inputs -- values, result
structure, argnums, has_aux, nested transforms, per-sample gradients, and errors."""
import collections
import functools

import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(33)
X, Y, W = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal((2, 3))
BX, BY = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
S = np.float64(0.7)
Point = collections.namedtuple("Point", "a b")


def both(case):
    """Run `case(lib)` with lib = jitensor and torch and compare the results."""
    _same(case(jt), case(torch))


def _same(mine, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, jt.Tensor), type(mine)
        assert tuple(mine.shape) == tuple(theirs.shape)
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-9,
                                   atol=1e-12)
    elif isinstance(theirs, dict):
        assert type(mine) is type(theirs) and list(mine) == list(theirs)
        for k in theirs:
            _same(mine[k], theirs[k])
    elif isinstance(theirs, (tuple, list)):
        assert type(mine) is type(theirs) and len(mine) == len(theirs)
        for m, t in zip(mine, theirs, strict=True):
            _same(m, t)
    else:
        assert mine == theirs


def t(lib, a):
    return lib.tensor(a)


def loss(x, y):
    return ((x.sin() * y).sum() - x.pow(2).mean()) * 0.5


# -- grad ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1,), (1, 0)])
def test_grad_argnums(argnums):
    both(lambda lib: lib.func.grad(loss, argnums)(t(lib, X), t(lib, Y)))
    both(lambda lib: lib.func.grad_and_value(loss, argnums)(t(lib, X), t(lib, Y)))


def test_grad_has_aux_pytrees_and_kwargs():
    def f(params, x, *, scale):
        out = (params["w"] @ x).tanh().sum() * scale + params["b"].pow(2).sum()
        return out, {"out": out, "h": [x * 2, params["b"]]}

    def case(lib):
        params = {"w": t(lib, W), "b": t(lib, Y[:2])}
        g = lib.func.grad(f, has_aux=True)(params, t(lib, X), scale=2.0)
        gv = lib.func.grad_and_value(f, argnums=(0, 1), has_aux=True)(params, t(lib, X),
                                                                        scale=2.0)
        return g, gv
    both(case)


def test_grad_of_grad_and_closures():
    def case(lib):
        s, x = t(lib, S), t(lib, X)
        d2 = lib.func.grad(lib.func.grad(lambda v: v.sin() * v))(s)
        d3 = lib.func.grad(lib.func.grad(lib.func.grad(lambda v: v.exp() * v.cos())))(s)
        # the inner transform's input is the outer one's, used again through a closure
        mixed = lib.func.grad(lambda a: a * lib.func.grad(lambda b: (a * b).sin())(a))(s)
        vec = lib.func.grad(lambda a: lib.func.grad(loss)(a, x).sum())(x)
        # perturbation confusion: d/da [a * d/db (a + b)] is 1
        confusion = lib.func.grad(lambda a: a * lib.func.grad(lambda b: a + b)(a))(s)
        one = lib.tensor(1.0, dtype=s.dtype)
        jvp_of_grad = lib.func.jvp(lib.func.grad(lambda v: v.sin() * v), (s,), (one,))
        vjp_of_grad = lib.func.vjp(lib.func.grad(lambda v: v.sin() * v), s)[1](one)
        return d2, d3, mixed, vec, confusion, jvp_of_grad, vjp_of_grad
    both(case)


@pytest.mark.parametrize("lib", [jt, torch], ids=["jitensor", "torch"])
def test_grad_results_as_torch_requires_grad(lib):
    x = t(lib, X)
    w = t(lib, Y).requires_grad_(True)
    g = lib.func.grad(lambda v: (v.sin() * 2).sum())(x)
    assert not g.requires_grad
    # a closed-over tensor that requires grad: the gradient stays differentiable in it
    gw = lib.func.grad(lambda v: (v * w).sum())(x)
    assert gw.requires_grad
    gw.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.ones(3))
    # an input that requires grad: grad's result is differentiable in it (second order)
    xr = t(lib, X).requires_grad_(True)
    (h,) = lib.autograd.grad(lib.func.grad(lambda v: v.sin().sum())(xr).sum(), xr)
    np.testing.assert_allclose(h.detach().numpy(), -np.sin(X), rtol=1e-12)
    with lib.no_grad():
        assert not lib.func.grad(lambda v: (v * w).sum())(x).requires_grad


def test_grad_ignores_an_outer_no_grad_and_respects_an_inner_one():
    def f(lib):
        def inner(v):
            with lib.no_grad():
                c = v ** 2
            return (v - c).sum()
        return inner
    both(lambda lib: lib.func.grad(f(lib))(t(lib, X)))

    def outer(lib):
        with lib.no_grad():
            return lib.func.grad(lambda v: v.sin().sum())(t(lib, X))
    both(outer)


@pytest.mark.parametrize("call, error, message", [
    (lambda lib: lib.func.grad(lambda x: x * 2)(t(lib, X)), RuntimeError,
     "to return a scalar Tensor, got tensor with 1 dims"),
    (lambda lib: lib.func.grad(lambda x: 1.0)(t(lib, X)), RuntimeError,
     "to return a Tensor, got"),
    (lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(t(lib, X)), RuntimeError,
     "should be a tuple: (output, aux)"),
    (lambda lib: lib.func.grad(loss, argnums=2)(t(lib, X), t(lib, Y)), RuntimeError,
     "Got argnum=2, but only 2 positional inputs"),
    (lambda lib: lib.func.grad(loss, argnums=())(t(lib, X), t(lib, Y)), RuntimeError,
     "argnums must be non-empty"),
    (lambda lib: lib.func.grad(loss, argnums=(0, 0))(t(lib, X), t(lib, Y)), RuntimeError,
     "argnums elements must be unique"),
    (lambda lib: lib.func.grad(loss, argnums=[0])(t(lib, X), t(lib, Y)), RuntimeError,
     "argnums must be int or Tuple"),
    (lambda lib: lib.func.grad(loss, argnums=(0, 1.0))(t(lib, X), t(lib, Y)), RuntimeError,
     "argnum must be int"),
    (lambda lib: lib.func.grad(lambda x, y: x.sum())(1.0, t(lib, Y)), ValueError,
     "Thing passed to transform API must be Tensor"),
])
def test_grad_errors(call, error, message):
    for lib in (jt, torch):
        with pytest.raises(error) as info:
            call(lib)
        assert message in str(info.value), (lib.__name__, str(info.value))


# -- vjp, jvp, linearize ------------------------------------------------------------------------
def test_vjp_pytrees_has_aux_and_repeated_calls():
    def f(x, p):
        return {"a": x.sin() * p.a, "b": (p.b @ x,)}, x.sum()

    def case(lib):
        p = Point(t(lib, Y), t(lib, W))
        out, fn, aux = lib.func.vjp(f, t(lib, X), p, has_aux=True)
        ct = {"a": t(lib, Y), "b": (t(lib, X[:2]),)}
        return out, aux, fn(ct), fn(ct)
    both(case)
    both(lambda lib: lib.func.vjp(lambda x: x.exp(), t(lib, X))[1](t(lib, Y)))


def test_vjp_errors():
    for lib in (jt, torch):
        _, fn = lib.func.vjp(lambda x: (x, x * 2), t(lib, X))
        with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
            fn(t(lib, X))
        with pytest.raises(RuntimeError):  # (torch's message building fails on this one)
            fn((t(lib, X), t(lib, W)))
        with pytest.raises(RuntimeError, match="to return only tensors"):
            lib.func.vjp(lambda x: (x, 1.0), t(lib, X))
        with pytest.raises(RuntimeError, match="must be floating-point or complex"):
            lib.func.vjp(lambda x: (x > 0).long(), t(lib, X))


def test_jvp_values_pytrees_and_aux():
    def f(x, q):
        return (x.sin() * q["y"], (q["w"] @ x).tanh()), q["y"].sum()

    def case(lib):
        primals = (t(lib, X), {"y": t(lib, Y), "w": t(lib, W)})
        tangents = (t(lib, Y), {"y": t(lib, X), "w": t(lib, W * 0.5)})
        return lib.func.jvp(f, primals, tangents, has_aux=True)
    both(case)
    # an output independent of the inputs: a zero tangent
    both(lambda lib: lib.func.jvp(lambda x: (x.exp(), t(lib, Y)), (t(lib, X),), (t(lib, Y),)))


@pytest.mark.parametrize("lib", [jt, torch], ids=["jitensor", "torch"])
def test_jvp_errors(lib):
    x = t(lib, X)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        lib.func.jvp(lambda v: v, x, x)
    with pytest.raises(RuntimeError, match="same python structure"):
        lib.func.jvp(lambda v, w: v, (x, x), (x,))
    with pytest.raises(RuntimeError, match="only contain Tensors"):
        lib.func.jvp(lambda v: v, (1.0,), (1.0,))
    with pytest.raises(RuntimeError, match="different size"):
        lib.func.jvp(lambda v: v, (x,), (t(lib, W),))
    with pytest.raises(RuntimeError, match="independent of the inputs"):
        lib.func.jvp(lambda v: t(lib, Y), (x,), (x,), strict=True)


def test_linearize():
    def case(lib):
        out, fn = lib.func.linearize(lambda x, y: (x.sin() * y, x.exp()), t(lib, X), t(lib, Y))
        return out, fn(t(lib, Y), t(lib, X)), fn(t(lib, X), t(lib, X))
    both(case)
    for lib in (jt, torch):
        _, fn = lib.func.linearize(lambda x: x.sin(), t(lib, X))
        with pytest.raises(RuntimeError, match="doesn't match the shape"):
            fn(t(lib, W))


# -- Jacobians and Hessians -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
def test_jacobians(name, argnums):
    def f(x, w):
        return (w @ x).tanh(), {"e": x.exp() * w.sum(), "s": (x * x).sum()}
    both(lambda lib: getattr(lib.func, name)(f, argnums)(t(lib, X), t(lib, W)))


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobian_has_aux_pytree_input_and_nesting(name):
    def f(p):
        out = p["w"] @ p["x"].sin()
        return out, out.sum()

    def case(lib):
        jac = getattr(lib.func, name)
        p = {"x": t(lib, X), "w": t(lib, W)}
        return (jac(f, has_aux=True)(p),
                jac(jac(lambda x: x.sin() * x.sum()))(t(lib, X)),
                lib.func.jacrev(lib.func.jacfwd(lambda x: x.exp().sum() * x))(t(lib, X)),
                jac(lambda s: s * s)(t(lib, S)))
    both(case)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_hessian(argnums):
    both(lambda lib: lib.func.hessian(loss, argnums)(t(lib, X), t(lib, Y)))


@pytest.mark.parametrize("lib", [jt, torch], ids=["jitensor", "torch"])
def test_jacobian_errors(lib):
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        lib.func.jacrev(loss, chunk_size=0)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        lib.func.jacfwd(lambda x: x * lib.rand(3))(t(lib, X))
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        lib.func.jacfwd(lambda x: x, randomness="maybe")(t(lib, X))
both(lambda lib: lib.func.jacrev(lambda x: x * 2, chunk_size=2)(t(lib, X)))


# -- vmap ---------------------------------------------------------------------------------------
def test_vmap_in_dims_out_dims_and_kwargs():
    def case(lib):
        bx, by, x = t(lib, BX), t(lib, BY), t(lib, X)
        vm = lib.func.vmap
        return (vm(lib.dot)(bx, by),
                vm(lib.dot, in_dims=(0, None))(bx, x),
                vm(lib.dot, in_dims=1)(bx.T, by.T),
                vm(lambda a, b: a * b, in_dims=(-1, 0), out_dims=1)(bx.T, by),
                vm(lambda a, b: (a + b, a.sum()), out_dims=(1, 0))(bx, by),
                vm(lambda a, scale=1.0: a * scale)(bx, scale=3.0),
                vm(lambda a, k: a * k, in_dims=(0, None))(bx, 2),
                vm(lambda a, b: a @ b, in_dims=(0, None))(bx, t(lib, W).T))
    both(case)


def test_vmap_pytrees():
    def f(d, p):
        return {"sum": d["x"] + d["y"][0], "pair": Point(p.a * 2, p.b)}

    def case(lib):
        d = {"x": t(lib, BX), "y": [t(lib, BY)]}
        p = Point(t(lib, BY.T), t(lib, X))
        return lib.func.vmap(f, in_dims=({"x": 0, "y": [0]}, Point(1, None)),
                             out_dims={"sum": 0, "pair": Point(0, None)})(d, p)
    both(case)


def test_vmap_nested_and_of_transforms():
    def case(lib):
        vm, bx, by = lib.func.vmap, t(lib, BX), t(lib, BY)
        outer = vm(vm(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(bx, by)
        dots = vm(vm(lib.dot, in_dims=(None, 0)), in_dims=(0, None))(bx, by)
        grads = vm(lib.func.grad(loss))(bx, by)
        gy = vm(lib.func.grad(loss, argnums=1), in_dims=(None, 0))(t(lib, X), by)
        jacs = vm(lib.func.jacrev(lambda a: a.sin() * a.sum()))(bx)
        hess = vm(lib.func.hessian(lambda a: a.exp().sum()))(bx)
        jvps = vm(lambda a, v: lib.func.jvp(lambda u: u.tanh(), (a,), (v,))[1])(bx, by)
        return outer, dots, grads, gy, jacs, hess, jvps
    both(case)


def test_vmap_in_place_and_outputs_that_are_not_mapped():
    def case(lib):
        bx = t(lib, BX).clone()
        lib.func.vmap(lambda a: a.mul_(2))(bx)
        unmapped = lib.func.vmap(lambda a, b: (a * 2, b + 1), in_dims=(0, None),
                                 out_dims=(0, None))(t(lib, BX), t(lib, X))
        return bx, unmapped, lib.func.vmap(lambda a: (a, 5), out_dims=(0, None))(t(lib, BX))
    both(case)


@pytest.mark.parametrize("lib", [jt, torch], ids=["jitensor", "torch"])
def test_vmap_randomness(lib):
    bx = t(lib, BX)
    same = lib.func.vmap(lambda a: lib.rand(()) + a.sum() * 0, randomness="same")(bx)
    assert bool((same == same[0]).all())
    different = lib.func.vmap(lambda a: lib.rand(()) + a.sum() * 0, randomness="different")(bx)
    assert len(set(different.tolist())) == 4
    with pytest.raises(RuntimeError, match="randomness error mode"):
        lib.func.vmap(lambda a: a + lib.randn(3))(bx)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        lib.func.vmap(lambda a: torch_or_jt_dropout(lib, a))(bx)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        lib.func.vmap(lib.func.vmap(lambda a: a + lib.rand(())))(bx)


def torch_or_jt_dropout(lib, a):
    return lib.nn.functional.dropout(a, 0.5, training=True)


def test_vmap_chunk_size_changes_nothing():
    both(lambda lib: lib.func.vmap(lambda a: a.sin().sum(), chunk_size=3)(t(lib, BX)))


def _err(lib, call):
    with pytest.raises(Exception) as info:
        call(lib)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("call, gist", [
    (lambda lib: lib.func.vmap(lambda a, b: a + b)(t(lib, BX), t(lib, W)),
     "Expected all tensors to have the same size in the mapped dimension, got sizes [4, 2]"),
    (lambda lib: lib.func.vmap(lambda a, b: a + b, in_dims=(0,))(t(lib, BX), t(lib, BX)),
     "in_dims is not compatible with the structure of `inputs`"),
    (lambda lib: lib.func.vmap(lambda a: a, in_dims=[0])(t(lib, BX)),
     "expected `in_dims` to be int or a (potentially nested) tuple"),
    (lambda lib: lib.func.vmap(lambda a: a, in_dims=2)(t(lib, BX)),
     "expected in_dim to satisfy -2 <= in_dim < 2"),
    (lambda lib: lib.func.vmap(lambda a: a, in_dims=(0.5,))(t(lib, BX)),
     "in_dim must be either an integer dimension or None"),
    (lambda lib: lib.func.vmap(lambda a: a)(1.0),
     "We cannot vmap over non-Tensor arguments"),
    (lambda lib: lib.func.vmap(lambda a: a, in_dims=(None,))(t(lib, BX)),
     "at least one Tensor to vmap over"),
    (lambda lib: lib.func.vmap(lambda: 1)(),
     "got no inputs"),
    (lambda lib: lib.func.vmap(lambda a: 1.0)(t(lib, BX)),
     "must only return Tensors, got type <class 'float'>"),
    (lambda lib: lib.func.vmap(lambda a: a, out_dims=None)(t(lib, BX)),
     "can not return a BatchedTensor when out_dim is None"),
    (lambda lib: lib.func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(t(lib, BX)),
     "out_dims is not compatible with the structure of `outputs`"),
    (lambda lib: lib.func.vmap(lambda a: a, out_dims="a")(t(lib, BX)),
     "`out_dims` must be an int, None or a python collection of ints"),
    (lambda lib: lib.func.vmap(lambda a: a, randomness="sometimes"),
     "Only allowed values for randomness are 'error', 'different', or 'same'"),
    (lambda lib: lib.func.vmap(lambda a: a, chunk_size=0),
     "chunk_size should be None or greater than 0"),
])
def test_vmap_errors(call, gist):
    mine, theirs = _err(jt, call), _err(torch, call)
    assert mine[0] is theirs[0], (mine, theirs)
    assert gist in mine[1] and gist in theirs[1], (mine, theirs)


def test_vmap_out_dims_out_of_range_and_empty_batch():
    with pytest.raises(IndexError):
        jt.func.vmap(lambda a: a, out_dims=3)(jt.tensor(BX))
    with pytest.raises(NotImplementedError, match="size 0"):
        jt.func.vmap(lambda a: a)(jt.zeros(0, 3))


def test_vmap_keeps_the_function_name():
    def my_function(a):
        return a
    assert jt.func.vmap(my_function).__name__ == "my_function"
    assert jt.func.grad(my_function).__name__ == "my_function"
    assert jt.vmap is jt.func.vmap  # torch.vmap is torch.func.vmap


# -- modules: per-sample gradients and ensembles ------------------------------------------------
def _mlp(lib, seed=0):
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return model


def test_per_sample_gradients_of_an_mlp():
    """torch's per-sample-gradients tutorial: vmap(grad(loss of functional_call))."""
    data = RNG.standard_normal((6, 5)).astype(np.float32)
    targets = RNG.integers(0, 3, 6)

    def case(lib):
        model = _mlp(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
            predictions = lib.func.functional_call(model, (params, buffers), (batch,))
            return lib.nn.functional.cross_entropy(predictions, targets)

        grads = lib.func.vmap(lib.func.grad(compute_loss), in_dims=(None, None, 0, 0))(
            params, buffers, lib.tensor(data), lib.tensor(targets))
        # the loop it replaces
        per_sample = [lib.autograd.grad(
            lib.nn.functional.cross_entropy(model(lib.tensor(data[i:i + 1])),
                                            lib.tensor(targets[i:i + 1])),
            list(model.parameters())) for i in range(6)]
        for j, k in enumerate(params):
            np.testing.assert_allclose(grads[k].numpy(),
                                       np.stack([g[j].numpy() for g in per_sample]),
                                       rtol=1e-5, atol=1e-6)
        return grads

    mine, theirs = case(jt), case(torch)
    assert list(mine) == list(theirs)
    for k in theirs:
        np.testing.assert_allclose(mine[k].numpy(), theirs[k].numpy(), rtol=1e-4, atol=1e-5)


def test_stack_module_state_and_vmap_over_an_ensemble():
    data = RNG.standard_normal((4, 5)).astype(np.float32)

    def case(lib):
        models = [_mlp(lib, seed) for seed in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        assert all(p.requires_grad and p.is_leaf for p in params.values())
        base = models[0]

        def run(params, buffers, x):
            return lib.func.functional_call(base, (params, buffers), (x,))
        out = lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, lib.tensor(data))
        return {k: v.detach() for k, v in params.items()}, out.detach()

    mine, theirs = case(jt), case(torch)
    for m, th in zip(mine[0].values(), theirs[0].values(), strict=True):
        np.testing.assert_allclose(m.numpy(), th.numpy())
    np.testing.assert_allclose(mine[1].numpy(), theirs[1].numpy(), rtol=1e-5, atol=1e-6)


def test_stack_module_state_errors():
    for lib in (jt, torch):
        with pytest.raises(RuntimeError, match="Expected at least one model"):
            lib.func.stack_module_state([])
        with pytest.raises(RuntimeError, match="same class"):
            lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Sequential()])
        with pytest.raises(RuntimeError, match="training/eval mode"):
            lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()])


def test_partial_names_in_messages():
    f = functools.partial(lambda a, b: a + b, 1.0)
    with pytest.raises(ValueError, match=r"vmap\(functools.partial\(<lambda>, ...\)"):
        jt.func.vmap(f, in_dims=[0])(jt.tensor(BX))


def test_functorch_helpers_as_torch():
    for lib in (jt, torch):
        def f(x):
            y = x.clone()
            y.add_(1)
            x.mul_(2)
            return y
        x = lib.ones(2)
        assert lib.func.functionalize(f)(x).tolist() == [2.0, 2.0] and x.tolist() == [2.0, 2.0]
        with pytest.raises(RuntimeError, match="invalid argument for remove=bad"):
            lib.func.functionalize(f, remove="bad")
        model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))
        assert lib.func.replace_all_batch_norm_modules_(model) is model
        bn = model[1]
        assert bn.running_mean is None and bn.running_var is None
        assert bn.num_batches_tracked is None and not bn.track_running_stats
        assert "running_mean" not in dict(model.named_buffers())
        assert lib.func.debug_unwrap(x) is x
    seen = []
    jt.func.vmap(lambda t: seen.append(jt.func.debug_unwrap(t).shape) or t)(jt.ones(4, 2))
    assert seen == [(4, 2)]  # (the batched value inside vmap)
