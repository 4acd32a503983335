"""jitensor.amp: GradScaler step by step against torch.amp.GradScaler("cpu") (scale, growth,
backoff after overflow, skipped steps, state dicts, errors), and autocast against
torch.autocast("cpu"): the dtype each op of the policy runs in, a training step's losses and
gradients, nesting, the cast cache, custom_fwd; disabled is a pass-through, CUDA without a
device disables itself."""
import pickle
import warnings

import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")


def _models(seed=0):
    rng = np.random.default_rng(seed)
    w1, b1 = rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal(8).astype(
        np.float32)
    w2 = rng.standard_normal((1, 8)).astype(np.float32)
    mods = []
    for lib in (jt, torch):
        m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1, bias=False))
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(w1))
            m[0].bias.copy_(lib.tensor(b1))
            m[2].weight.copy_(lib.tensor(w2))
        mods.append(m)
    return mods


def _batches(steps):
    rng = np.random.default_rng(1)
    out = []
    for i in range(steps):
        x = rng.standard_normal((5, 4)).astype(np.float32)
        if i in (2, 6):
            x[0, 0] = np.inf  # an overflowing gradient: the step is skipped, the scale backs off
        out.append(x)
    return out


@pytest.mark.parametrize("unscale_first", [False, True])
def test_grad_scaler_follows_torch_step_by_step(unscale_first):
    mine, theirs = _models()
    opts = [jt.optim.SGD(mine.parameters(), lr=0.1),
            torch.optim.SGD(theirs.parameters(), lr=0.1)]
    scalers = [jt.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3),
               torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)]
    for x in _batches(10):
        results = []
        for lib, model, opt, scaler in zip((jt, torch), (mine, theirs), opts, scalers,
                                           strict=True):
            opt.zero_grad()
            loss = model(lib.tensor(x)).pow(2).mean()
            scaled = scaler.scale(loss)
            scaled.backward()
            if unscale_first:
                scaler.unscale_(opt)
            results.append(scaler.step(opt))
            scaler.update()
        assert results[0] == results[1]
        assert scalers[0].get_scale() == scalers[1].get_scale()
        assert scalers[0].state_dict() == scalers[1].state_dict()
        for a, b in zip(mine.parameters(), theirs.parameters(), strict=True):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6,
                                       atol=1e-7)
    # two overflows (steps 2 and 6), each followed by growth_interval clean steps
    assert scalers[0].get_scale() == 2.0**10 * 0.5 * 2 * 0.5 * 2


def test_scale_nested_outputs_and_errors_match_torch():
    for lib in (jt, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        a, b = lib.ones(2), lib.ones(3)
        out = scaler.scale([a, (b, a)])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[1][0].tolist() == [4.0] * 3
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable"):
            scaler.scale([a, 3.0])
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        opt.param_groups[0]["params"][0].grad = lib.ones(1)
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called on this optimizer"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            scaler.step(opt, closure=lambda: 0)
        scaler.update(8.0)
        assert scaler.get_scale() == 8.0
        with pytest.raises(AssertionError, match="growth factor"):
            lib.amp.GradScaler("cpu", growth_factor=1.0)
        fresh = lib.amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="_scale is None"):
            fresh.unscale_(opt)


def test_state_dict_and_pickle_round_trip():
    scaler = jt.amp.GradScaler("cpu", init_scale=16.0, growth_interval=5)
    scaler.scale(jt.ones(1))
    state = scaler.state_dict()
    other = jt.amp.GradScaler("cpu")
    other.load_state_dict(state)
    assert other.state_dict() == state == {"scale": 16.0, "growth_factor": 2.0,
                                           "backoff_factor": 0.5, "growth_interval": 5,
                                           "_growth_tracker": 0}
    again = pickle.loads(pickle.dumps(scaler))
    assert again.get_scale() == 16.0
    with pytest.raises(RuntimeError, match="state dict is empty"):
        other.load_state_dict({})
    off = jt.amp.GradScaler("cpu", enabled=False)
    assert off.state_dict() == {} and off.get_scale() == 1.0
    x = jt.ones(2)
    assert off.scale(x) is x


def test_cuda_scaler_and_autocast_without_cuda_disable_as_torch(monkeypatch):
    from jitensor import cuda
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    for lib in (jt, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            scaler = lib.amp.GradScaler("cuda")
            with lib.autocast("cuda"):
                pass
        assert not scaler.is_enabled()
        assert sum("Disabling" in str(w.message) for w in seen) == 2


def test_autocast_switches():
    with jt.autocast("cpu", enabled=False):
        assert (jt.ones(2) @ jt.ones(2)).dtype is jt.float32

    @jt.autocast("cpu", enabled=False)
    def f(x):
        return x * 2
    assert f(jt.ones(1)).tolist() == [2.0]
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        jt.autocast("tpu")
    with pytest.raises(RuntimeError):
        torch.autocast("tpu")
    assert jt.amp.is_autocast_available("cpu") and jt.amp.is_autocast_available("cuda")
    for lib in (jt, torch):  # a dtype autocast cannot run in: a warning, and no autocast
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            with lib.autocast("cpu", dtype=lib.float32):
                assert not lib.is_autocast_enabled("cpu")
                assert lib.get_autocast_dtype("cpu") is lib.float32
        with lib.autocast("cpu"):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled()
            with lib.autocast("cpu", enabled=False):
                assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.float32
            assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.bfloat16
            with lib.autocast("cpu", dtype=lib.float16):
                assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.float16
            wide = lib.ones(2, 2, dtype=lib.float64)
            assert (wide @ wide).dtype is lib.float64 and lib.stack([wide, wide.float()]).dtype \
                is lib.float64 and lib.nn.functional.mse_loss(wide, wide).dtype is lib.float64
            assert lib.get_autocast_dtype("cpu") is lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")
        lib.set_autocast_enabled("cpu", True)
        try:
            assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.bfloat16
        finally:
            lib.set_autocast_enabled("cpu", False)
    fn = jt.amp.custom_fwd(device_type="cuda")(abs)
    assert fn is abs and jt.amp.custom_bwd(abs, device_type="cuda") is abs


def _policy_cases(L, dtype):
    F = L.nn.functional

    def rand(*shape):
        return L.randn(*shape).to(dtype)
    a, v, img, w = rand(4, 4), rand(4), rand(1, 2, 6, 6), rand(3, 2, 3, 3)
    p, t, q = (L.rand(4, 4) * 0.8 + 0.1).to(dtype), L.tensor([0, 1, 2, 3]), rand(1, 2, 4, 8)
    img3 = rand(1, 2, 4, 4, 4)
    return {
        "conv2d": lambda: F.conv2d(img, w), "conv1d": lambda: F.conv1d(img[:, :, 0], w[:, :, 0]),
        "conv_transpose2d": lambda: F.conv_transpose2d(img, w.transpose(0, 1)),
        "bmm": lambda: L.bmm(a[None], a[None]), "mm": lambda: L.mm(a, a),
        "matmul": lambda: a @ a, "baddbmm": lambda: L.baddbmm(a[None], a[None], a[None]),
        "addmm": lambda: L.addmm(a, a, a), "linear": lambda: F.linear(a, a, v),
        "einsum": lambda: L.einsum("ij,jk->ik", a, a),
        "prelu": lambda: F.prelu(a, L.ones(1).to(dtype)),
        "sdpa": lambda: F.scaled_dot_product_attention(q, q, q),
        "softmax": lambda: a.softmax(1), "layer_norm": lambda: F.layer_norm(a, (4,)),
        "exp": lambda: a.exp(), "sum": lambda: a.sum(), "gelu": lambda: F.gelu(a),
        "add": lambda: a + v, "mv": lambda: L.mv(a, v), "prod": lambda: a.prod(),
        "cross_entropy": lambda: F.cross_entropy(a, t), "nll_loss": lambda: F.nll_loss(a, t),
        "mse_loss": lambda: F.mse_loss(a, a * 2), "l1_loss": lambda: F.l1_loss(a, a * 2),
        "kl_div": lambda: F.kl_div(a, p, reduction="batchmean"),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(a, p),
        "bce": lambda: F.binary_cross_entropy(p, p), "cdist": lambda: L.cdist(a, a),
        "avg_pool3d": lambda: F.avg_pool3d(img3, 2), "max_pool3d": lambda: F.max_pool3d(img3, 2),
        "trace": lambda: L.trace(a), "inverse": lambda: L.inverse(a + 4 * L.eye(4).to(dtype)),
        "cat": lambda: L.cat([a, a]), "stack": lambda: L.stack([a, a]),
        "cat_mixed": lambda: L.cat([a, a.float()]),
        "stack_double": lambda: L.stack([a, a.double()]),
    }


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("source", ["float32", "low"])
def test_each_op_runs_in_the_dtype_torchs_policy_picks(low, source):
    """float32 inputs are lowered for products, narrow ones widened for losses; the other ops
    run as they would outside (float64 inputs are left alone: test_autocast_switches)."""
    found = []
    for lib in (torch, jt):
        lib.manual_seed(0)
        d = getattr(lib, low if source == "low" else source)
        with lib.autocast("cpu", dtype=getattr(lib, low)):
            found.append({name: str((out[0] if isinstance(out, tuple) else out).dtype)
                          .split(".")[-1] for name, make in _policy_cases(lib, d).items()
                          for out in [make()]})
    assert found[1] == found[0]


def test_a_training_step_under_autocast_follows_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 2, 8, 8)).astype(np.float32)
    y = rng.integers(0, 5, 8)
    results = []
    for lib in (torch, jt):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Flatten(),
                              nn.LayerNorm(256), nn.Linear(256, 5))
        if lib is jt:
            model.load_state_dict({k: jt.tensor(v.detach().numpy())
                                   for k, v in results[0][2].items()})
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        with lib.autocast("cpu"):
            out = model(lib.tensor(x))
            loss = nn.functional.cross_entropy(out, lib.tensor(y))
        loss.backward()
        grads = [p.grad for p in model.parameters()]
        assert out.dtype is lib.bfloat16 and loss.dtype is lib.float32
        assert all(g.dtype is lib.float32 for g in grads)
        results.append((loss.item(), [g.numpy() for g in grads], state))
    assert abs(results[0][0] - results[1][0]) < 2e-2
    for want, got in zip(results[0][1], results[1][1], strict=True):
        np.testing.assert_allclose(got, want, rtol=0.1, atol=2e-2)


def test_parameters_are_cast_once_per_region():
    w = jt.ones(3, 3, requires_grad=True)
    with jt.autocast("cpu"):
        a, b = w @ w, w @ w
        assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]
    with jt.autocast("cpu"):
        c = w @ w
    assert c.grad_fn.next_functions[0][0] is not a.grad_fn.next_functions[0][0]
    with jt.autocast("cpu", cache_enabled=False):
        d, e = w @ w, w @ w
        assert d.grad_fn.next_functions[0][0] is not e.grad_fn.next_functions[0][0]
    (a.sum() + b.sum()).float().backward()
    assert w.grad.dtype is jt.float32 and w.grad.tolist() == [[12.0] * 3] * 3


def test_custom_fwd_casts_inputs_inside_a_region():
    class Square(jt.autograd.Function):
        @staticmethod
        @jt.amp.custom_fwd(device_type="cpu", cast_inputs=jt.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x @ x, jt.is_autocast_enabled("cpu"))[0]

        @staticmethod
        @jt.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g @ x.T + x.T @ g

    x = jt.ones(2, 2, dtype=jt.bfloat16, requires_grad=True)
    with jt.autocast("cpu"):
        out = Square.apply(x)
    assert out.dtype is jt.float32
    out.sum().backward()
    assert x.grad.dtype is jt.bfloat16


