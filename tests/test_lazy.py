"""The lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*,
LazyInstanceNorm*), UninitializedParameter/UninitializedBuffer and LazyModuleMixin, against
torch: placeholders and state dict before the first call, shapes, class and hooks after it,
loading initialized and uninitialized state dicts, outputs with torch's weights, errors."""
import copy
import pickle

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn
from jitensor.nn.modules.lazy import LazyModuleMixin
from jitensor.nn.parameter import is_lazy

torch = pytest.importorskip("torch")

CASES = [("LazyLinear", (4,), {}, (2, 3)),
         ("LazyLinear", (4,), dict(bias=False), (5, 2, 3)),
         ("LazyConv1d", (4, 3), dict(padding=1), (2, 3, 6)),
         ("LazyConv2d", (4, 3), dict(groups=2, bias=False), (2, 6, 5, 5)),
         ("LazyConv2d", (4, 3), {}, (2, 5, 5)),  # unbatched
         ("LazyConv3d", (2, 2), {}, (1, 2, 3, 3, 3)),
         ("LazyConvTranspose1d", (4, 3), dict(stride=2), (2, 3, 5)),
         ("LazyConvTranspose2d", (4, 3), dict(groups=2), (2, 2, 4, 4)),
         ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 2, 2, 2)),
         ("LazyBatchNorm1d", (), {}, (4, 3)),
         ("LazyBatchNorm2d", (), dict(affine=False), (2, 3, 4, 4)),
         ("LazyBatchNorm3d", (), dict(track_running_stats=False), (2, 3, 2, 2, 2)),
         ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
         ("LazyInstanceNorm2d", (), dict(affine=True, track_running_stats=True), (2, 3, 4, 4)),
         ("LazyInstanceNorm3d", (), dict(affine=True), (1, 2, 3, 3, 3))]


def both(name, args, kwargs):
    cls = getattr(nn, name, None)
    if cls is None:
        pytest.skip(f"nn.{name}'s base class is not in jitensor yet")
    return cls(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)


@pytest.mark.parametrize("name, args, kwargs, shape", CASES)
def test_lazy_modules_match_torch(name, args, kwargs, shape):
    mine, theirs = both(name, args, kwargs)
    assert isinstance(mine, LazyModuleMixin)
    assert mine.has_uninitialized_params() == theirs.has_uninitialized_params()
    assert repr(mine) == repr(theirs)
    state, tstate = mine.state_dict(), theirs.state_dict()
    assert list(state) == list(tstate)
    for k, v in tstate.items():
        assert is_lazy(state[k]) == torch.nn.parameter.is_lazy(v), k
        assert type(state[k]).__name__ == type(v).__name__, k
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    theirs(torch.tensor(x))
    mine(jt.tensor(x))
    assert type(mine).__name__ == type(theirs).__name__  # cls_to_become
    assert repr(mine) == repr(theirs)
    assert not mine._forward_pre_hooks and not mine._load_state_dict_pre_hooks
    for (k, a), (tk, b) in zip(mine.state_dict().items(), theirs.state_dict().items(),
                               strict=True):
        assert k == tk and tuple(a.shape) == tuple(b.shape) and type(a) is jt.Tensor, k
    for a in mine.parameters():
        assert type(a) is nn.Parameter and a.requires_grad
    # with torch's values (its first call updated running stats: load the state after it)
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    mine.eval()
    theirs.eval()
    np.testing.assert_allclose(mine(jt.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, args, kwargs, shape", [CASES[0], CASES[3], CASES[10]])
def test_loading_a_state_dict_materializes(name, args, kwargs, shape):
    mine, theirs = both(name, args, kwargs)
    theirs(torch.randn(*shape))
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert not mine.has_uninitialized_params()
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(mine.state_dict()[k].numpy(), v.numpy())
    assert type(mine).__name__ == name  # still lazy until the first call, as torch's
    mine(jt.randn(*shape))
    assert type(mine).__name__ == type(theirs).__name__
    for k, v in theirs.state_dict().items():  # the call keeps the loaded values
        if not k.startswith("running") and k != "num_batches_tracked":
            np.testing.assert_array_equal(mine.state_dict()[k].numpy(), v.numpy())


def test_uninitialized_into_uninitialized_and_initialized_into_lazy_errors():
    a, b = nn.LazyLinear(3), nn.LazyLinear(3)
    assert a.load_state_dict(b.state_dict()) is not None and a.has_uninitialized_params()
    lin = nn.Linear(2, 3)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        lin.load_state_dict(nn.LazyLinear(3).state_dict())


def test_uninitialized_parameter_and_buffer():
    p = nn.UninitializedParameter(dtype=jt.float64)
    assert isinstance(p, nn.Parameter) and p.requires_grad and repr(p) == "<UninitializedParameter>"
    assert repr(torch.nn.UninitializedParameter()) == "<UninitializedParameter>"
    q = copy.deepcopy(p)
    assert type(q) is nn.UninitializedParameter and q.dtype == jt.float64
    assert type(pickle.loads(pickle.dumps(p))) is nn.UninitializedParameter
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == jt.float64
    b = nn.UninitializedBuffer()
    assert not b.requires_grad and is_lazy(b) and repr(b) == "<UninitializedBuffer>"
    b.materialize(4, dtype=jt.float64)
    assert type(b) is jt.Tensor and b.shape == (4,) and not is_lazy(b)


def test_lazy_errors_match_torch():
    def same(make, x):
        with pytest.raises(Exception) as expected:
            make(torch.nn)(torch.zeros(*x))
        with pytest.raises(expected.type) as got:
            make(nn)(jt.zeros(*x))
        assert str(got.value).replace("jitensor.Size", "torch.Size") == str(expected.value)
    same(lambda n: n.LazyConv2d(4, 3), (2, 3, 5, 5, 5))  # wrong dims
    same(lambda n: n.LazyConv1d(4, 3, groups=2), (2, 3, 5))  # not divisible by groups
    with pytest.raises(ValueError) as expected:
        torch.nn.utils.spectral_norm(torch.nn.LazyLinear(3))
    with pytest.raises(ValueError) as got:
        nn.utils.spectral_norm(nn.LazyLinear(3))
    assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError, match="uninitialized parameters"), \
            pytest.warns(FutureWarning):
        nn.utils.weight_norm(nn.LazyLinear(3))


def test_lazy_module_in_a_model_trains():
    model = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(2))
    x = jt.randn(4, 5)
    model(x).sum().backward()
    assert [tuple(p.shape) for p in model.parameters()] == [(8, 5), (8,), (2, 8), (2,)]
    assert all(p.grad is not None for p in model.parameters())
    opt = jt.optim.SGD(model.parameters(), lr=0.1)
    opt.step()
    assert type(model[0]) is nn.Linear
