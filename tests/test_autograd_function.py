"""autograd.Function, once_differentiable, saved tensor hooks, anomaly detection and
checkpointing, each run the same way on jitensor and torch (`ns` is the module) and compared:
values, gradients, call order and errors."""
import numpy as np
import pytest

import jitensor as jt
import jitensor.utils.checkpoint  # noqa: F401 (jt.utils.checkpoint below)
from jitensor.autograd.function import FunctionCtx, once_differentiable

torch = pytest.importorskip("torch")
pytest.importorskip("torch.utils.checkpoint")

X = np.array([0.5, -1.5, 2.0])


def both(run):
    """run(ns) on jitensor and on torch; both results as NumPy-comparable nested values."""
    def plain(v):
        if isinstance(v, (jt.Tensor, torch.Tensor)):
            return v.detach().numpy()
        if isinstance(v, (tuple, list)):
            return [plain(x) for x in v]
        return v
    return plain(run(jt)), plain(run(torch))


def same(run):
    ours, theirs = both(run)
    _assert_same(ours, theirs)


def _assert_same(a, b):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), (a, b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    elif isinstance(b, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    else:
        assert a == b


def same_error(run):
    with pytest.raises(Exception) as theirs:
        run(torch)
    with pytest.raises(type(theirs.value)) as ours:
        run(jt)
    assert str(ours.value) == str(theirs.value)


def _x(ns):
    return ns.tensor(X, requires_grad=True)


def _exp_fn(ns):
    class Exp(ns.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y
    return Exp


def test_save_for_backward_output():
    def run(ns):
        x = _x(ns)
        y = _exp_fn(ns).apply(x)
        y.sum().backward()
        return y, x.grad, type(y.grad_fn).__name__, y.grad_fn.name()
    same(run)


def test_non_tensor_args_needs_input_grad_and_ctx_attributes():
    def run(ns):
        seen = []

        class Scale(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, w):
                seen.append(ctx.needs_input_grad)
                ctx.k = k
                ctx.save_for_backward(x, w)
                return x * k * w

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                seen.append(ctx.needs_input_grad)
                return g * ctx.k * w, None, (g * ctx.k * x).sum()
        x, w = _x(ns), ns.tensor(3.0, dtype=ns.float64)
        Scale.apply(x, 2.0, w).sum().backward()
        return x.grad, seen
    same(run)


def test_multiple_outputs_non_tensor_output_and_non_differentiable():
    def run(ns):
        got = []

        class Split(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = x.argmax()
                ctx.mark_non_differentiable(idx)
                return x * 2, x * 3, idx, "tag"

            @staticmethod
            def backward(ctx, g1, g2, g3, g4):
                got.extend([g2, g3, g4])
                return g1 * 2 + g2 * 3
        x = _x(ns)
        a, b, i, tag = Split.apply(x)
        a.sum().backward()
        return x.grad, i, tag, i.requires_grad, b.requires_grad, got
    same(run)


def test_set_materialize_grads_false():
    def run(ns):
        got = []

        class Two(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                got.append(g2 is None)
                return g1 * 2
        x = _x(ns)
        Two.apply(x)[0].sum().backward()
        return x.grad, got
    same(run)


def test_mark_dirty():
    def run(ns):
        class Double(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = _x(ns)
        a = x * 1
        v = a._version
        b = Double.apply(a)
        (b * b).sum().backward()
        return b is a, a._version - v, type(a.grad_fn).__name__, x.grad
    same(run)


def test_mark_dirty_on_leaf_raises():
    def run(ns):
        class Double(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x
        Double.apply(_x(ns))
    same_error(run)


def test_input_returned_as_is_is_a_new_tensor():
    def run(ns):
        class Ident(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5
        x = _x(ns)
        y = Ident.apply(x)
        y.sum().backward()
        return y is x, y.grad_fn is not None, x.grad
    same(run)


def test_setup_context_form():
    def run(ns):
        class Mul(ns.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * y

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(*inputs)

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y, g * x
        x, y = _x(ns), ns.tensor(X[::-1].copy(), requires_grad=True)
        Mul.apply(x, y).sum().backward()
        return x.grad, y.grad
    same(run)


def test_modified_saved_tensor_raises_at_backward():
    def run(ns):
        class Sq(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        x = _x(ns) * 1
        y = Sq.apply(x)
        with ns.no_grad():
            x.add_(1)
        y.sum().backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(jt)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(torch)


def test_second_backward_frees_saved_tensors_only():
    def run(ns, save):
        class F(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                if save:
                    ctx.saved_tensors  # noqa: B018
                return g * 2
        x = _x(ns)
        y = F.apply(x).sum()
        y.backward()
        y.backward()
        return x.grad
    same(lambda ns: run(ns, False))
    same_error(lambda ns: run(ns, True))


@pytest.mark.parametrize("grads", ["one", "three", "shape", "non_tensor"])
def test_wrong_gradients_raise_torchs_error(grads):
    def run(ns):
        class F(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return {"one": (g,), "three": (g, None, g), "shape": (g[:2], None),
                        "non_tensor": (g, g)}[grads]
        F.apply(_x(ns), 2).sum().backward()
    same_error(run)


def test_extra_none_gradients_are_allowed():
    def run(ns):
        class F(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None
        x = _x(ns)
        F.apply(x).sum().backward()
        return x.grad
    same(run)


def test_broadcast_gradient_is_summed_to_input_shape():
    def run(ns):
        class F(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.sum()

            @staticmethod
            def backward(ctx, g):
                return g.expand(2, 3)
        x = _x(ns)
        F.apply(x).backward()
        return x.grad
    same(run)


def test_legacy_call_and_missing_forward_raise():
    def legacy(ns):
        class F(ns.autograd.Function):
            pass
        with pytest.warns(DeprecationWarning) if ns is torch else _nothing():
            F()(_x(ns))
    same_error(legacy)
    same_error(lambda ns: ns.autograd.Function.apply(_x(ns)))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_no_grad_apply_records_nothing():
    def run(ns):
        with ns.no_grad():
            y = _exp_fn(ns).apply(_x(ns))
        return y.requires_grad, y.grad_fn is None
    same(run)


def test_double_backward_through_differentiable_backward():
    def run(ns):
        class Cube(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x ** 2 * g
        x = _x(ns)
        (gx,) = ns.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        (ggx,) = ns.autograd.grad(gx.sum(), x)
        return gx, ggx
    same(run)


def test_double_backward_through_saved_output():
    def run(ns):
        x = _x(ns)
        (gx,) = ns.autograd.grad(_exp_fn(ns).apply(x).sum(), x, create_graph=True)
        gx.sum().backward()
        return gx, x.grad
    same(run)


def test_once_differentiable():
    def run(ns, once):
        class Sq(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @once(ns)
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        x = _x(ns)
        y = Sq.apply(x)
        (gx,) = ns.autograd.grad(y.sum(), x, create_graph=True)
        out = [gx, gx.requires_grad]
        g = ns.ones(3, dtype=ns.float64, requires_grad=True)
        (gx,) = ns.autograd.grad(y, x, g, create_graph=True)
        out.append(gx.requires_grad)
        gx.sum().backward()
    once = {jt: lambda ns: once_differentiable,
            torch: lambda ns: torch.autograd.function.once_differentiable}
    same_error(lambda ns: run(ns, once[ns]))


def test_function_ctx_and_module_path():
    assert jt.autograd.function.FunctionCtx is FunctionCtx
    ctx = FunctionCtx()
    ctx.save_for_backward(3)  # checked only when a Function records, as torch's
    assert ctx.to_save == (3,)


def test_saving_a_non_tensor_raises():
    def run(ns):
        class F(ns.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(3)
                return x * 2
        F.apply(_x(ns))
    same_error(run)


def test_saved_tensors_hooks_pack_and_unpack_function_tensors():
    def run(ns):
        calls = []

        def pack(t):
            calls.append("pack")
            return t * 1

        def unpack(t):
            calls.append("unpack")
            return t
        x = _x(ns)
        with ns.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = _exp_fn(ns).apply(x)
        y.sum().backward()
        return x.grad, calls
    same(run)


def test_saved_tensors_hooks_around_builtin_ops_raise():
    x = _x(jt)
    with jt.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t), \
            pytest.raises(RuntimeError, match="saved_tensors_hooks"):
        x.exp()


def test_save_on_cpu():
    def run(ns):
        x = _x(ns)
        with ns.autograd.graph.save_on_cpu():
            y = _exp_fn(ns).apply(x)
        y.sum().backward()
        return x.grad
    same(run)


# -- anomaly detection --------------------------------------------------------------------------
def test_detect_anomaly_names_the_function():
    def run(ns):
        x = ns.tensor([0.0, 1.0], requires_grad=True)
        with pytest.warns(UserWarning), ns.autograd.detect_anomaly():
            (x / x).sum().backward()
    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(jt)
    assert str(ours.value) == str(theirs.value)


def test_anomaly_mode_switches():
    def run(ns):
        enabled = torch.is_anomaly_enabled if ns is torch else \
            jt.autograd.anomaly_mode.is_anomaly_enabled
        out = []
        with pytest.warns(UserWarning), ns.autograd.detect_anomaly(check_nan=False):
            x = ns.tensor([0.0, 1.0], requires_grad=True)
            (x / x).sum().backward()
            out.append(enabled())
        out.append(enabled())
        with ns.autograd.set_detect_anomaly(True):
            out.append(enabled())
        out.append(enabled())
        return out
    same(run)


# -- checkpoint ---------------------------------------------------------------------------------
def _block(ns, seed=0):
    ns.manual_seed(seed)
    return ns.nn.Sequential(ns.nn.Linear(3, 4), ns.nn.Tanh(), ns.nn.Dropout(0.5),
                            ns.nn.Linear(4, 2)).double()


def _copy_weights(ours, theirs):
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        with jt.no_grad():
            p.copy_(jt.tensor(q.detach().numpy()))


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_matches_plain_backward(reentrant):
    calls = []

    def run(ns, model, ckpt):
        x = ns.tensor(np.arange(6.0).reshape(2, 3) / 5, requires_grad=True)

        def fn(t):
            calls.append(ns.__name__)
            return model(t)
        ns.manual_seed(7)
        out = ckpt(fn, x, use_reentrant=reentrant) if ckpt else fn(x)
        out.sum().backward()
        return [out, x.grad] + [p.grad for p in model.parameters()]
    tmodel = _block(torch)
    jmodel = _block(jt)
    _copy_weights(jmodel, tmodel)
    plain = run(jt, jmodel, None)
    jmodel.zero_grad()
    checkpointed = run(jt, jmodel, jt.utils.checkpoint.checkpoint)
    assert calls == ["jitensor"] * 3  # the rerun in backward
    for a, b in zip(plain, checkpointed, strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())  # same dropout
    theirs = run(torch, tmodel, torch.utils.checkpoint.checkpoint)
    for a, b in zip(checkpointed[2:], theirs[2:], strict=True):
        assert a.shape == tuple(b.shape)


def test_checkpoint_without_input_requiring_grad_reaches_parameters():
    model = _block(jt)
    model.eval()
    x = jt.tensor(np.ones((2, 3)))
    jt.utils.checkpoint.checkpoint(model, x, use_reentrant=False).sum().backward()
    ref = _block(jt)
    ref.eval()
    ref(x).sum().backward()
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy())


def test_checkpoint_kwargs_and_errors():
    def run(ns):
        x = _x(ns)
        y = ns.utils.checkpoint.checkpoint(lambda a, k=1: a * k, x, use_reentrant=False, k=3)
        y.sum().backward()
        return x.grad
    same(run)
    same_error(lambda ns: ns.utils.checkpoint.checkpoint(lambda a, k=1: a, _x(ns),
                                                        use_reentrant=True, k=3))


def test_checkpoint_sequential():
    def run(ns):
        ns.manual_seed(0)
        model = ns.nn.Sequential(*[ns.nn.Linear(3, 3) for _ in range(4)]).double()
        x = ns.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        out = ns.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False)
        out.sum().backward()
        return out.shape == (2, 3), x.grad.shape == (2, 3)
    same(run)
