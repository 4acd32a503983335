"""jitensor.amp: GradScaler step by step against torch.amp.GradScaler("cpu") (scale, growth,
backoff after overflow, skipped steps, state dicts, errors), and autocast's policy: disabled
is a pass-through, CUDA without a device disables itself, enabled raises."""
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


def test_autocast_policy():
    with jt.autocast("cpu", enabled=False):
        assert (jt.ones(2) @ jt.ones(2)).dtype is jt.float32

    @jt.autocast("cpu", enabled=False)
    def f(x):
        return x * 2
    assert f(jt.ones(1)).tolist() == [2.0]
    with pytest.raises(NotImplementedError, match="mixed precision"):
        jt.autocast("cpu", dtype=jt.float16)
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        jt.autocast("tpu")
    with pytest.raises(RuntimeError):
        torch.autocast("tpu")
    assert not jt.amp.is_autocast_available("cpu")
    fn = jt.amp.custom_fwd(device_type="cuda", cast_inputs=jt.float32)(abs)
    assert fn is abs and jt.amp.custom_bwd(abs, device_type="cuda") is abs
