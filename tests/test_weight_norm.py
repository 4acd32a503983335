"""nn.utils.weight_norm / spectral_norm (hook forms and their removal), nn.utils.parametrizations'
weight_norm and spectral_norm, and stateless / func.functional_call, against torch: state dict
keys, values after loading torch's state, power-iteration buffers in train and eval mode,
gradients, errors."""
import warnings

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn

torch = pytest.importorskip("torch")

TOL = dict(rtol=1e-9, atol=1e-12)


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)


def twins(factory, seed=0):
    torch.manual_seed(seed)
    theirs = factory(torch.nn).double()
    mine = factory(nn).double()
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


def sync(mine, theirs):
    """Copy torch's state (after a torch-side random init) into jitensor's module."""
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})


def run_both(mine, theirs, shape, seed=0):
    """Forward, backward of a random projection; compare outputs and parameter grads."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    out, tout = mine(jt.tensor(x)), theirs(torch.tensor(x))
    close(out, tout)
    g = rng.standard_normal(tuple(tout.shape))
    (out * jt.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    for (k, a), b in zip(mine.named_parameters(), theirs.parameters(), strict=True):
        assert a.grad is not None, k
        close(a.grad, b.grad)


CONV = (lambda n: n.Conv2d(2, 3, 3), (2, 2, 5, 5))
CONVT = (lambda n: n.ConvTranspose2d(2, 3, 3), (2, 2, 4, 4))
LINEAR = (lambda n: n.Linear(4, 3), (5, 4))


@pytest.mark.parametrize("dim", [0, 1, None, -2])
@pytest.mark.parametrize("factory, shape", [LINEAR, CONV])
def test_weight_norm_hook_matches_torch(factory, shape, dim):
    mine, theirs = twins(factory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(theirs, dim=dim)
    with pytest.warns(FutureWarning, match="deprecated"):
        nn.utils.weight_norm(mine, dim=dim)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        close(mine.state_dict()[k], v)
    run_both(mine, theirs, shape)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), \
            pytest.warns(FutureWarning):
        nn.utils.weight_norm(mine, dim=dim)
    nn.utils.remove_weight_norm(mine)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert isinstance(mine.weight, nn.Parameter)
    close(mine.weight, theirs.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(mine)


@pytest.mark.parametrize("factory, shape", [LINEAR, CONV, CONVT])
def test_spectral_norm_hook_matches_torch_in_train_and_eval(factory, shape):
    mine, theirs = twins(factory)
    torch.nn.utils.spectral_norm(theirs, n_power_iterations=2)
    nn.utils.spectral_norm(mine, n_power_iterations=2)
    sync(mine, theirs)  # the random u and v
    for _ in range(2):  # each training-mode call advances u and v in place
        run_both(mine, theirs, shape)
        for k, v in theirs.state_dict().items():
            close(mine.state_dict()[k], v)
    mine.eval()
    theirs.eval()
    u = mine.weight_u.clone()
    run_both(mine, theirs, shape, seed=1)
    close(mine.weight_u, u)  # eval mode leaves them
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(mine)
    nn.utils.remove_spectral_norm(mine)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    close(mine.weight, theirs.weight)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(mine)


def test_spectral_norm_errors_match_torch():
    for n_iter in (0, -1):
        with pytest.raises(ValueError) as expected:
            torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2), n_power_iterations=n_iter)
        with pytest.raises(ValueError) as got:
            nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=n_iter)
        assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError, match="parameter `bias` is None"):
        nn.utils.spectral_norm(nn.Linear(2, 2, bias=False), name="bias")


@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("factory, shape", [LINEAR, CONV])
def test_parametrized_weight_norm_matches_torch(factory, shape, dim):
    mine, theirs = twins(factory)
    torch.nn.utils.parametrizations.weight_norm(theirs, dim=dim)
    nn.utils.parametrizations.weight_norm(mine, dim=dim)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        close(mine.state_dict()[k], v)
    run_both(mine, theirs, shape)
    close(mine.weight, theirs.weight)


def test_parametrized_weight_norm_loads_the_hook_forms_state_dict():
    mine, theirs = twins(LINEAR[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(theirs)
    nn.utils.parametrizations.weight_norm(mine)
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    close(mine.weight, theirs.weight)


@pytest.mark.parametrize("factory, shape", [LINEAR, CONV, CONVT])
def test_parametrized_spectral_norm_matches_torch(factory, shape):
    mine, theirs = twins(factory)
    torch.nn.utils.parametrizations.spectral_norm(theirs)
    nn.utils.parametrizations.spectral_norm(mine)
    sync(mine, theirs)
    for _ in range(2):
        run_both(mine, theirs, shape)
        for k, v in theirs.state_dict().items():
            close(mine.state_dict()[k], v)
    mine.eval()
    theirs.eval()
    run_both(mine, theirs, shape, seed=2)
    close(mine.weight, theirs.weight)
    nn.utils.parametrize.remove_parametrizations(mine, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    assert list(mine.state_dict()) == list(theirs.state_dict())
    close(mine.weight, theirs.weight)


def test_parametrized_spectral_norm_1d_and_errors():
    mine, theirs = twins(lambda n: n.Linear(3, 4))
    torch.nn.utils.parametrizations.spectral_norm(theirs, "bias")
    nn.utils.parametrizations.spectral_norm(mine, "bias")
    close(mine.bias, theirs.bias)  # a vector is normalized
    for kwargs in (dict(dim=2), dict(n_power_iterations=0)):
        with pytest.raises(Exception) as expected:
            torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(2, 2), **kwargs)
        with pytest.raises(expected.type) as got:
            nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), **kwargs)
        assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), "w")


def tied(n):
    """Two linears sharing one weight, and a buffer."""
    class M(n.Module):
        def __init__(self):
            super().__init__()
            self.a = n.Linear(3, 3)
            self.b = n.Linear(3, 3)
            self.b.weight = self.a.weight
            self.register_buffer("scale", (torch if n is torch.nn else jt).ones(3))

        def forward(self, x):
            return self.b(self.a(x)) * self.scale
    return M()


def test_functional_call_matches_torch():
    mine, theirs = twins(tied)
    rng = np.random.default_rng(0)
    w, scale, x = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal((2, 3))
    jw = jt.tensor(w, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    out = jt.func.functional_call(mine, ({"a.weight": jw}, {"scale": jt.tensor(scale)}),
                                  jt.tensor(x))
    tout = torch.func.functional_call(theirs, ({"a.weight": tw}, {"scale": torch.tensor(scale)}),
                                      torch.tensor(x))
    close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    close(jw.grad, tw.grad)  # tied: b.weight took the given tensor too
    assert mine.a.weight.grad is None and isinstance(mine.a.weight, nn.Parameter)
    assert mine.b.weight is mine.a.weight
    close(mine(jt.tensor(x)), theirs(torch.tensor(x)))  # restored
    with pytest.warns(FutureWarning, match="deprecated"):
        nn.utils.stateless.functional_call(mine, {"scale": jt.tensor(scale)}, (jt.tensor(x),))
    cases = [(lambda f, lib: f(lib[0], ({"scale": lib[1]}, {"scale": lib[1]}), lib[2])),
             (lambda f, lib: f(lib[0], {"scale": lib[1]}, lib[2], strict=True)),
             (lambda f, lib: f(lib[0], {"a.weight": lib[3], "b.weight": lib[3] * 2}, lib[2])),
             (lambda f, lib: f(lib[0], 3, lib[2]))]
    for case in cases:
        with pytest.raises(Exception) as expected:
            case(torch.func.functional_call, (theirs, torch.ones(3), torch.tensor(x),
                                              torch.ones(3, 3, dtype=torch.float64)))
        with pytest.raises(expected.type) as got:
            case(jt.func.functional_call, (mine, jt.ones(3), jt.tensor(x),
                                           jt.ones(3, 3, dtype=jt.float64)))
        assert str(got.value).replace("jitensor", "torch") == str(expected.value)
