"""jt.optim: SGD, Adam and AdamW against torch.optim step for step (same initial values, the
same gradients set by hand each step, float32 and float64), parameter groups, zero_grad, state
dicts in torch's format, argument errors. torch-based tests skip cleanly without torch."""
import itertools

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn, optim

DTYPES = [jt.float32, jt.float64]
SHAPES = [(3, 4), (5,), ()]  # the 0-d parameter never gets a gradient: it must stay untouched


def tol(dtype):
    return dict(rtol=2e-5, atol=1e-6) if dtype is jt.float32 else dict(rtol=1e-12, atol=1e-13)


def make_params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype.np) for s in SHAPES]
    return arrays, [nn.Parameter(jt.tensor(a)) for a in arrays]


def grads_for(step, dtype):
    """The gradients of step `step` for the first two parameters (the third has none)."""
    rng = np.random.default_rng(100 + step)
    return [rng.standard_normal(s).astype(dtype.np) for s in SHAPES[:2]]


def run_both(torch, make_mine, make_theirs, dtype, steps=6):
    """Step jitensor's and torch's optimizers over the same parameters and gradients, checking
    the parameters after every step; returns both optimizers and both parameter lists."""
    arrays, mine = make_params(dtype)
    theirs = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in arrays]
    opt, ref = make_mine(mine), make_theirs(theirs)
    for step in range(steps):
        for p, q, g in zip(mine, theirs, grads_for(step, dtype), strict=False):
            p.grad, q.grad = jt.tensor(g), torch.from_numpy(g.copy())
        opt.step()
        ref.step()
        for p, q in zip(mine, theirs, strict=False):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **tol(dtype),
                                       err_msg=f"step {step}")
    np.testing.assert_array_equal(mine[2].detach().numpy(), arrays[2])
    return opt, ref, mine, theirs


def assert_states_match(opt, ref, mine, theirs, dtype):
    for p, q in zip(mine, theirs, strict=False):
        assert set(opt.state[p]) == set(ref.state[q])
        for key, value in ref.state[q].items():
            got = opt.state[p][key]
            if value is None:
                assert got is None
                continue
            assert got.dtype.name == str(value.dtype).replace("torch.", ""), key
            np.testing.assert_allclose(got.numpy(), value.numpy(), **tol(dtype), err_msg=key)


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1),
    dict(lr=0.02, momentum=0.5, maximize=True),
    dict(lr=0.1, weight_decay=0.2, maximize=True),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kwargs", SGD_CASES, ids=str)
def test_sgd_matches_torch(dtype, kwargs):
    torch = pytest.importorskip("torch")
    opt, ref, mine, theirs = run_both(torch, lambda ps: optim.SGD(ps, **kwargs),
                                      lambda ps: torch.optim.SGD(ps, **kwargs), dtype)
    assert_states_match(opt, ref, mine, theirs, dtype)


ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.02, amsgrad=True, maximize=True, weight_decay=0.05),
    dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kwargs", ADAM_CASES, ids=str)
def test_adam_matches_torch(dtype, kwargs):
    torch = pytest.importorskip("torch")
    opt, ref, mine, theirs = run_both(torch, lambda ps: optim.Adam(ps, **kwargs),
                                      lambda ps: torch.optim.Adam(ps, **kwargs), dtype)
    assert_states_match(opt, ref, mine, theirs, dtype)
    assert opt.state[mine[0]]["step"].shape == () and opt.state[mine[0]]["step"].item() == 6


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.05, weight_decay=0.3, amsgrad=True)],
                         ids=str)
def test_adamw_matches_torch(dtype, kwargs):
    torch = pytest.importorskip("torch")
    opt, ref, mine, theirs = run_both(torch, lambda ps: optim.AdamW(ps, **kwargs),
                                      lambda ps: torch.optim.AdamW(ps, **kwargs), dtype)
    assert_states_match(opt, ref, mine, theirs, dtype)
    assert opt.param_groups[0]["weight_decay"] == ref.param_groups[0]["weight_decay"]


def test_param_groups_match_torch():
    torch = pytest.importorskip("torch")

    def groups(ps, lib):
        return lib.optim.SGD([{"params": ps[:1], "lr": 0.5}, {"params": ps[1:]}], lr=0.1,
                             momentum=0.9)

    opt, ref, *_ = run_both(torch, lambda ps: groups(ps, jt), lambda ps: groups(ps, torch),
                            jt.float64)
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    for group, ref_group in zip(opt.param_groups, ref.param_groups, strict=False):
        for key, value in group.items():
            if key != "params":
                assert ref_group[key] == value, key


def test_state_dict_format_matches_torch():
    torch = pytest.importorskip("torch")
    for make in (lambda lib, ps: lib.optim.Adam(ps, lr=0.01, amsgrad=True),
                 lambda lib, ps: lib.optim.SGD([{"params": ps[:2]}, {"params": ps[2:]}],
                                               lr=0.1, momentum=0.9)):
        opt, ref, *_ = run_both(torch, lambda ps, make=make: make(jt, ps),
                                lambda ps, make=make: make(torch, ps), jt.float32, steps=2)
        sd, ref_sd = opt.state_dict(), ref.state_dict()
        assert list(sd) == ["state", "param_groups"]
        assert list(sd["state"]) == list(ref_sd["state"]) == [0, 1]
        for mine, theirs in zip(sd["param_groups"], ref_sd["param_groups"], strict=False):
            assert mine["params"] == theirs["params"]
            assert set(mine) <= set(theirs)  # torch adds its own switches (foreach, fused...)
            assert all(mine[k] == theirs[k] for k in mine)
        for index, state in sd["state"].items():
            assert list(state) == list(ref_sd["state"][index])


def test_load_state_dict_resumes_exactly():
    """Train 3 steps, save, load into a fresh optimizer over copies, train 3 more: the result
    equals 6 uninterrupted steps, and the loaded state is the new optimizer's own."""
    for make in (lambda ps: optim.Adam(ps, lr=0.05, amsgrad=True),
                 lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True)):
        _, straight = make_params(jt.float64)
        _, first = make_params(jt.float64)
        opt_straight, opt_first = make(straight), make(first)

        def steps(opt, params, rng):
            for step in rng:
                for p, g in zip(params, grads_for(step, jt.float64), strict=False):
                    p.grad = jt.tensor(g)
                opt.step()

        steps(opt_straight, straight, range(6))
        steps(opt_first, first, range(3))
        resumed = [nn.Parameter(p.detach().clone()) for p in first]
        opt_resumed = make(resumed)
        opt_resumed.load_state_dict(opt_first.state_dict())
        steps(opt_resumed, resumed, range(3, 6))
        for p, q in zip(straight, resumed, strict=False):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        for key, value in opt_resumed.state[resumed[0]].items():
            assert not np.shares_memory(value.numpy(), opt_first.state[first[0]][key].numpy())


def test_load_state_dict_casts_and_checks():
    _, params = make_params(jt.float32)
    opt = optim.Adam(params[:2])
    for p in params[:2]:
        p.grad = jt.ones_like(p)
    opt.step()
    _, wide = make_params(jt.float64)
    opt64 = optim.Adam(wide[:2], lr=0.5)
    opt64.load_state_dict(opt.state_dict())
    assert opt64.state[wide[0]]["exp_avg"].dtype is jt.float64
    assert opt64.state[wide[0]]["step"].dtype is jt.float32  # the counter keeps its dtype
    assert opt64.param_groups[0]["lr"] == 1e-3 and opt64.param_groups[0]["params"] == wide[:2]
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([{"params": wide[:1]}, {"params": wide[1:2]}]).load_state_dict(
            opt.state_dict())
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.Adam(wide).load_state_dict(opt.state_dict())


def test_zero_grad_and_closure():
    _, params = make_params(jt.float32)
    opt = optim.SGD(params, lr=0.1)
    for p in params:
        p.grad = jt.ones_like(p)
    grad = params[0].grad
    opt.zero_grad(set_to_none=False)
    assert params[0].grad is grad and grad.numpy().sum() == 0
    opt.zero_grad()
    assert all(p.grad is None for p in params)
    calls = []

    def closure():
        calls.append(1)
        for p in params:
            p.grad = jt.ones_like(p)
        return 1.5

    before = params[0].detach().clone()
    assert opt.step(closure) == 1.5 and calls == [1]
    np.testing.assert_allclose(params[0].detach().numpy(), before.numpy() - 0.1, rtol=1e-6)


@pytest.mark.skipif(not hasattr(jt.Tensor, "backward"), reason="needs autograd (backward)")
def test_zero_grad_cuts_a_graph_gradient():
    p = nn.Parameter(jt.tensor([1.0, 2.0]))
    (p ** 3).sum().backward(create_graph=True)
    grad = p.grad
    assert grad.grad_fn is not None
    optim.SGD([p]).zero_grad(set_to_none=False)
    assert p.grad is grad and grad.grad_fn is None and not grad.requires_grad
    assert grad.tolist() == [0.0, 0.0]


def test_add_param_group_and_errors():
    _, params = make_params(jt.float32)
    opt = optim.SGD(params[:1], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": params[1], "lr": 0.01})
    assert opt.param_groups[1]["params"] == [params[1]]
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["lr"] == 0.01
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [params[0]]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {params[2]}})
    with pytest.raises(TypeError, match="can only optimize Tensors, but one of the params is int"):
        opt.add_param_group({"params": [3]})
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(params[0])
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([params[0], params[0]])
    bad = [(lambda: optim.SGD(params, lr=-1), "Invalid learning rate: -1"),
           (lambda: optim.SGD(params, momentum=-0.5), "Invalid momentum value: -0.5"),
           (lambda: optim.SGD(params, weight_decay=-1), "Invalid weight_decay value: -1"),
           (lambda: optim.SGD(params, momentum=0.9, dampening=0.1, nesterov=True),
            "Nesterov momentum requires a momentum and zero dampening"),
           (lambda: optim.Adam(params, lr=-0.1), "Invalid learning rate: -0.1"),
           (lambda: optim.Adam(params, eps=-1e-8), "Invalid epsilon value: -1e-08"),
           (lambda: optim.Adam(params, betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
           (lambda: optim.AdamW(params, betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
           (lambda: optim.AdamW(params, weight_decay=-1), "Invalid weight_decay value: -1")]
    for make, message in bad:
        with pytest.raises(ValueError, match=message):
            make()


def test_repr_matches_torch_layout():
    torch = pytest.importorskip("torch")
    _, params = make_params(jt.float32)
    mine = repr(optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}], lr=0.1))
    theirs = repr(torch.optim.SGD([{"params": [torch.zeros(1)]},
                                   {"params": [torch.zeros(1)], "lr": 0.5}], lr=0.1))
    mine_lines = mine.split("\n")
    assert mine_lines[0] == "SGD (" and mine_lines[-1] == ")"
    assert set(mine_lines) <= set(theirs.split("\n"))


def test_optimizer_follows_module_conversion():
    """Module.to keeps Parameter objects, so an optimizer made before it still updates them."""
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=1.0)
    model.double()
    for p in model.parameters():
        p.grad = jt.ones_like(p)
    before = model.weight.detach().clone()
    opt.step()
    assert model.weight.dtype is jt.float64
    np.testing.assert_allclose(model.weight.detach().numpy(), before.numpy() - 1)


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.1)])
def test_step_records_no_graph(make):
    _, params = make_params(jt.float32)
    opt = make(params)
    for _ in itertools.repeat(None, 2):
        for p in params:
            p.grad = jt.ones_like(p)
        opt.step()
    assert all(p.is_leaf and p.grad_fn is None and p.requires_grad for p in params)
    for state in opt.state.values():
        assert all(not v.requires_grad for v in state.values() if isinstance(v, jt.Tensor))
