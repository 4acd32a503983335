"""nn.Module's get_parameter, get_buffer, get_submodule, set_submodule, get_extra_state /
set_extra_state (``_extra_state`` in the state dict), to_empty, half / bfloat16 / type /
share_memory / ipu / xpu / mtia, register_backward_hook, call_super_init, dump_patches and
T_destination, against torch (values, keys, errors)."""
import pickle

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn

torch = pytest.importorskip("torch")


def model(n):
    lib = torch if n is torch.nn else jt
    m = n.Sequential(n.Linear(2, 3), n.BatchNorm1d(3))
    m.scale = n.Parameter(lib.ones(1))
    m.register_buffer("steps", lib.zeros(1))
    m.name = "plain"
    return m


def same_error(fn):
    with pytest.raises(Exception) as expected:
        fn(model(torch.nn))
    with pytest.raises(expected.type) as got:
        fn(model(nn))
    assert str(got.value) == str(expected.value)


def test_get_parameter_buffer_submodule_match_torch():
    m = model(nn)
    assert m.get_parameter("0.weight") is m[0].weight and m.get_parameter("scale") is m.scale
    assert m.get_buffer("1.running_mean") is m[1].running_mean
    assert m.get_buffer("steps") is m.steps
    assert m.get_submodule("") is m and m.get_submodule("1") is m[1]
    for target in ("0.nope", "2.weight", "steps", "0.weight.x", "name", "1.num_batches"):
        same_error(lambda m, t=target: m.get_parameter(t))
    for target in ("scale", "1.weight", "nope", "name"):
        same_error(lambda m, t=target: m.get_buffer(t))
    for target in ("3", "0.weight", "name", "1.x"):
        same_error(lambda m, t=target: m.get_submodule(t))


def test_set_submodule_matches_torch():
    m = model(nn)
    relu = nn.ReLU()
    m.set_submodule("1", relu)
    assert m[1] is relu
    m.set_submodule("extra", relu)
    assert m.extra is relu
    nested = nn.Sequential(model(nn))
    nested.set_submodule("0.0", nn.Identity())
    assert isinstance(nested[0][0], nn.Identity)
    def nn_of(m):
        return torch.nn if type(m).__module__.startswith("torch") else nn
    for target, cls in [("", "Identity"), ("0", None), ("name", "Identity"),
                        ("0.weight", "Identity"), ("x.y", "Identity")]:
        same_error(lambda m, t=target, c=cls: m.set_submodule(
            t, None if c is None else getattr(nn_of(m), c)()))
    same_error(lambda m: m.set_submodule("new", nn_of(m).ReLU(), strict=True))


class Counter:
    """A module with extra state, defined for either library."""

    @staticmethod
    def build(n):
        class WithState(n.Module):
            def __init__(self):
                super().__init__()
                self.lin = n.Linear(2, 2)
                self.count = 0

            def get_extra_state(self):
                return {"count": self.count}

            def set_extra_state(self, state):
                self.count = state["count"]
        return WithState()


def test_extra_state_matches_torch():
    mine, theirs = Counter.build(nn), Counter.build(torch.nn)
    mine.count = theirs.count = 7
    outer, touter = nn.Sequential(mine), torch.nn.Sequential(theirs)
    assert list(outer.state_dict()) == list(touter.state_dict())
    assert outer.state_dict()["0._extra_state"] == {"count": 7}
    fresh = nn.Sequential(Counter.build(nn))
    fresh.load_state_dict(outer.state_dict())
    assert fresh[0].count == 7
    state = dict(outer.state_dict())
    del state["0._extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0._extra_state"'):
        fresh.load_state_dict(state)
    plain = nn.Linear(2, 2)
    result = plain.load_state_dict({**plain.state_dict(), "_extra_state": 1}, strict=False)
    assert result.unexpected_keys == ["_extra_state"] and result.missing_keys == []  # as torch
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        plain.load_state_dict({**plain.state_dict(), "_extra_state": 1})
    for name in ("get_extra_state", "set_extra_state"):
        with pytest.raises(RuntimeError) as expected:
            getattr(torch.nn.Linear(1, 1), name)(*([None] if name[0] == "s" else []))
        with pytest.raises(RuntimeError) as got:
            getattr(nn.Linear(1, 1), name)(*([None] if name[0] == "s" else []))
        assert str(got.value) == str(expected.value)


def test_conversions():
    m = model(nn)
    w = m[0].weight
    m.to_empty(device="cpu")
    assert m[0].weight is w and m[0].weight.shape == (3, 2)
    m.type(jt.float64)
    assert m[0].weight.dtype == jt.float64 and m[1].num_batches_tracked.dtype == jt.float64
    m.to_empty(device="cpu", recurse=False)
    assert m.bfloat16()[0].weight.dtype is jt.bfloat16
    assert m.half()[0].weight.dtype is jt.float16
    assert m.share_memory() is m and all(t.is_shared() for t in m.state_dict().values())
    for kind in ("ipu", "xpu", "mtia"):
        with pytest.raises(RuntimeError, match=f"Module.{kind}: jitensor has no {kind}"):
            getattr(m, kind)()


def test_class_attributes_and_init_arguments():
    assert nn.Module.dump_patches is False and nn.Module.call_super_init is False
    assert nn.Module.T_destination.__bound__ == torch.nn.Module.T_destination.__bound__
    for args, kwargs in [((1,), {}), ((), dict(x=1))]:
        with pytest.raises(TypeError) as expected:
            torch.nn.Module(*args, **kwargs)
        with pytest.raises(TypeError) as got:
            nn.Module(*args, **kwargs)
        assert str(got.value) == str(expected.value)

    class Base:
        def __init__(self, tag=None):
            self.tag = tag

    class Mixed(nn.Module, Base):
        call_super_init = True

    assert Mixed(tag="t").tag == "t"
    m = pickle.loads(pickle.dumps(nn.Linear(2, 2)))
    assert m.weight.shape == (2, 2) and m._forward_hooks == {}
    m.__setstate__({"extra": 1})
    assert m.extra == 1


def test_register_backward_hook_runs_on_the_input_gradients():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3))
    seen = {}
    for lib, n in ((jt, nn), (torch, torch.nn)):
        m = n.Tanh()  # one autograd node taking the module's input: the two forms agree

        def hook(module, grad_input, grad_output, lib=lib):
            seen[lib.__name__] = (grad_input[0].detach().numpy(), grad_output[0].detach().numpy())
            return (grad_input[0] * 2,)
        m.register_backward_hook(hook)
        t = lib.tensor(x, requires_grad=True)
        m(t).sum().backward()
        seen[lib.__name__ + ".grad"] = t.grad.detach().numpy()
    for suffix in ("", ".grad"):
        a, b = seen["jitensor" + suffix], seen["torch" + suffix]
        for u, v in zip(a if suffix == "" else (a,), b if suffix == "" else (b,), strict=True):
            np.testing.assert_allclose(u, v, rtol=1e-6)


def test_to_memory_format_lays_out_4d_and_5d_tensors_as_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (jt, torch):
        conv = lib.nn.Conv2d(3, 4, 3).to(memory_format=lib.channels_last)
        got = [conv.weight.stride(), conv.bias.stride(), type(conv.weight).__name__]
        conv3 = lib.nn.Conv3d(3, 4, 3)
        with pytest.raises(RuntimeError) as e:  # channels_last needs rank 4
            conv3.to(memory_format=lib.channels_last)
        conv3.to(lib.float64, memory_format=lib.channels_last_3d)
        got += [str(e.value), conv3.weight.stride(), str(conv3.weight.dtype).split(".")[1]]
        got.append(lib.nn.Linear(2, 2).to(memory_format=lib.channels_last).weight.stride())
        results.append(got)
    assert results[0] == results[1]
    x = jt.randn(2, 3, 8, 8)
    conv = jt.nn.Conv2d(3, 4, 3)
    before = conv(x)
    assert jt.equal(conv.to(memory_format=jt.channels_last)(x), before)


def test_load_state_dict_assign_takes_the_tensors_as_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (jt, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        m[0].weight.requires_grad_(False)
        sd = {k: v.clone() * 2 if v.is_floating_point() else v.clone()
              for k, v in m.state_dict().items()}
        keys = m.load_state_dict(sd, assign=True)
        got = [type(m[0].weight).__name__, m[0].weight.requires_grad, m[0].bias.requires_grad,
               m[0].weight.data_ptr() == sd["0.weight"].data_ptr(),
               m[1].running_mean.data_ptr() == sd["1.running_mean"].data_ptr(), tuple(keys)]
        linear = lib.nn.Linear(2, 3)
        sd = linear.state_dict()
        sd["weight"] = lib.nn.Parameter(sd["weight"].clone(), requires_grad=False)
        linear.load_state_dict(sd, assign=True)
        got += [linear.weight is sd["weight"], linear.weight.requires_grad]
        results.append(got)
    assert results[0] == results[1]
