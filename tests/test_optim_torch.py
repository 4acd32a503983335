"""jt.optim against torch.optim: every optimizer (the ones test_optim and test_optim_extra cover
too, there with torch's implementation switches) stepped alongside torch's from the same values
and gradients, parameters compared after every step and then the whole state dict; state dicts
exchanged both ways; constructor signatures and argument errors; LBFGS on Rosenbrock's function
with and without the line search; swa_utils (AveragedModel, update_bn, SWALR)."""
import copy
import inspect

import numpy as np
import pytest
from test_optim import grads_for, make_params

import jitensor as jt
from jitensor import nn, optim
from jitensor.optim import swa_utils

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

DTYPES = [jt.float32, jt.float64]


def tol(dtype):
    return dict(rtol=1e-6, atol=1e-6) if dtype is jt.float32 else dict(rtol=1e-12, atol=1e-14)


def to_torch(value):
    """A jitensor state dict (or part of one) with its tensors as torch tensors."""
    if isinstance(value, jt.Tensor):
        return torch.from_numpy(value.numpy().copy())
    if isinstance(value, dict):
        return {k: to_torch(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(v) for v in value)
    return value


def to_jt(value):
    if isinstance(value, torch.Tensor):
        return jt.tensor(value.numpy().copy())
    if isinstance(value, dict):
        return {k: to_jt(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_jt(v) for v in value)
    return value


def assert_same_values(mine, theirs, dtype, where=""):
    """Equal structure, keys in the same order, tensors of the same dtype and shape, close."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, jt.Tensor), where
        assert mine.dtype.name == str(theirs.dtype).replace("torch.", ""), where
        assert tuple(mine.shape) == tuple(theirs.shape), where
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), **tol(dtype), err_msg=where)
    elif isinstance(theirs, dict):
        assert list(mine) == list(theirs), where
        for key in theirs:
            assert_same_values(mine[key], theirs[key], dtype, f"{where}/{key}")
    elif isinstance(theirs, (list, tuple)):
        assert type(mine) is type(theirs) and len(mine) == len(theirs), where
        for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
            assert_same_values(a, b, dtype, f"{where}[{i}]")
    elif isinstance(theirs, float) and dtype is jt.float32:
        np.testing.assert_allclose(mine, theirs, **tol(dtype), err_msg=where)
    else:
        assert mine == theirs, where


def set_grads(params, step, dtype, lib):
    for p, g in zip(params, grads_for(step, dtype), strict=False):
        p.grad = lib.tensor(g.copy())


def step_both(opt, ref, mine, theirs, dtype, steps, first=0):
    for step in range(first, first + steps):
        set_grads(mine, step, dtype, jt)
        set_grads(theirs, step, dtype, torch)
        opt.step()
        ref.step()
        for p, q in zip(mine, theirs, strict=False):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **tol(dtype),
                                       err_msg=f"step {step}")


SWITCHES = ("foreach", "fused", "capturable")


def build_both(name, kwargs, dtype, switches=False):
    """jitensor's optimizer with `kwargs`, torch's with them less the implementation switches
    unless `switches`: its single-tensor implementation (its default for CPU parameters), the
    one jitensor follows operation for operation. Its foreach and fused kernels round some
    steps differently; capturable it refuses for CPU parameters."""
    arrays, mine = make_params(dtype)
    theirs = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in arrays]
    opt = getattr(optim, name)(mine, **kwargs)
    if not switches:
        kwargs = {k: v for k, v in kwargs.items() if k not in SWITCHES}
    ref = getattr(torch.optim, name)(theirs, **kwargs)
    return opt, ref, mine, theirs, arrays


def torch_state_dict(ref, kwargs):
    """torch's state dict with the switches of `kwargs` recorded as torch would have."""
    sd = ref.state_dict()
    for group in sd["param_groups"]:
        group.update((k, v) for k, v in kwargs.items() if k in SWITCHES)
    return sd


CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1}),
    ("Adadelta", {"weight_decay": 0.05, "maximize": True, "foreach": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1}),
    ("Adamax", {"eps": 1e-3, "maximize": True, "foreach": False}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("RAdam", {"betas": (0.8, 0.9)}),  # rho_t passes 5 at step 3: both branches
    ("RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1, "foreach": True}),
    ("RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1,
               "decoupled_weight_decay": True, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 2, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True, "foreach": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.08)}),
    ("Rprop", {"lr": 0.1, "maximize": True, "foreach": False}),
    # the switches on the optimizers test_optim covers without them
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True, "foreach": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.2, "weight_decay": 0.1,
             "fused": True}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "maximize": True, "weight_decay": 0.1,
              "foreach": False}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "fused": True}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "fused": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9, "maximize": True,
                 "foreach": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "maximize": True, "foreach": True}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.1, "fused": True}),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name, kwargs", CASES, ids=str)
def test_matches_torch(name, kwargs, dtype):
    """8 steps side by side, then the state dicts (group options included) compared whole."""
    opt, ref, mine, theirs, arrays = build_both(name, kwargs, dtype)
    step_both(opt, ref, mine, theirs, dtype, 8)
    np.testing.assert_array_equal(mine[2].detach().numpy(), arrays[2])  # never had a grad
    assert_same_values(opt.state_dict(), torch_state_dict(ref, kwargs), dtype)


@pytest.mark.parametrize("input_grad", [True, False])
@pytest.mark.parametrize("name, kwargs", [c for c in CASES if not (c[1].get("foreach") or
                                                                   c[1].get("fused"))], ids=str)
def test_a_step_counts_its_writes_as_torch(name, kwargs, input_grad):
    """A step writes the parameters in place, and their version counters count those writes as
    torch's do: a graph that saved a parameter the step changed cannot be
    backpropagated through (the GAN mistake of stepping D before G's backward through D), and
    one that did not save it (the layer's input needs no gradient) can, as under torch. (The
    single-tensor implementations': torch's foreach and fused kernels count otherwise.)"""
    seen = []
    for lib in (jt, torch):
        lin = lib.nn.Linear(3, 1)
        opt = getattr(lib.optim, name)(lin.parameters(), **kwargs)
        y = lib.sigmoid(lin(lib.ones(4, 3, requires_grad=input_grad)))
        y.mean().backward(retain_graph=True)
        if name == "LBFGS":
            opt.step(lambda lin=lin, lib=lib: lin(lib.ones(4, 3)).sum())
        else:
            opt.step()
        try:
            (-y).mean().backward()
            raised = None
        except RuntimeError as e:
            raised = "modified by an inplace operation" in str(e)
        seen.append((raised, lin.weight._version, lin.bias._version))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name, kwargs", [c for c in CASES if set(c[1]) & {"foreach", "fused"}],
                         ids=str)
def test_close_to_torch_foreach_and_fused(name, kwargs, dtype):
    """torch's foreach and fused implementations compute the same update, rounded differently
    in places (ASGD's foreach one rounds its step size to float32 by another route): close."""
    opt, ref, mine, theirs, _ = build_both(name, kwargs, dtype, switches=True)
    for step in range(8):
        set_grads(mine, step, dtype, jt)
        set_grads(theirs, step, dtype, torch)
        opt.step()
        ref.step()
    for p, q in zip(mine, theirs, strict=False):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert opt.state_dict()["param_groups"] == ref.state_dict()["param_groups"]


@pytest.mark.parametrize("name, kwargs", [c for c in CASES if not set(c[1]) & set(SWITCHES)],
                         ids=str)
def test_state_dict_loads_into_torch_and_back(name, kwargs):
    """3 steps, state dict converted to torch's tensors and loaded into a fresh torch optimizer
    (and torch's into a fresh jitensor one), 3 more steps each: both continue alike."""
    dtype = jt.float64
    opt, ref, mine, theirs, _ = build_both(name, kwargs, dtype)
    step_both(opt, ref, mine, theirs, dtype, 3)
    mine2 = [nn.Parameter(p.detach().clone()) for p in mine]
    theirs2 = [torch.nn.Parameter(q.detach().clone()) for q in theirs]
    opt2 = getattr(optim, name)(mine2, lr=123.0)
    ref2 = getattr(torch.optim, name)(theirs2, lr=123.0)
    ref2.load_state_dict(to_torch(opt.state_dict()))
    opt2.load_state_dict(to_jt(torch_state_dict(ref, kwargs)))
    assert opt2.param_groups[0]["lr"] == ref2.param_groups[0]["lr"] == ref.param_groups[0]["lr"]
    step_both(opt2, ref2, mine2, theirs2, dtype, 3, first=3)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "NAdam", "RAdam", "Adadelta", "Adamax",
                                  "RMSprop", "Rprop"])
def test_capturable_gives_the_same_steps(name):
    """torch refuses capturable=True for CPU parameters; here it only places the step counter
    (on the parameter's device), so the steps equal torch's (single-tensor) ones."""
    opt, ref, mine, theirs, _ = build_both(name, {"capturable": True}, jt.float64)
    step_both(opt, ref, mine, theirs, jt.float64, 4)
    assert opt.param_groups[0]["capturable"] is True
    assert opt.state[mine[0]]["step"].device == mine[0].device


NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
         "ASGD", "Rprop", "LBFGS", "SparseAdam"]


@pytest.mark.parametrize("name", NAMES)
def test_signature_matches_torch(name):
    """The same parameters, in order, of the same kinds, with the same defaults."""
    def describe(cls):
        return [(p.name, p.kind, p.default)
                for p in inspect.signature(cls.__init__).parameters.values()]

    assert describe(getattr(optim, name)) == describe(getattr(torch.optim, name))


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("LBFGS", "SparseAdam")])
def test_default_groups_match_torch(name):
    """param_groups as torch records them: the same options, in the same order, with the
    switches (foreach, fused, capturable, differentiable) where torch has them."""
    mine = getattr(optim, name)([nn.Parameter(jt.zeros(2))])
    theirs = getattr(torch.optim, name)([torch.zeros(2)])
    assert mine.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
    switches = {"foreach": True, "capturable": True} if "capturable" in mine.defaults else \
        {"foreach": False}
    mine = getattr(optim, name)([nn.Parameter(jt.zeros(2))], **switches)
    theirs = getattr(torch.optim, name)([torch.zeros(2)], **switches)
    assert mine.param_groups[0].keys() == theirs.param_groups[0].keys()
    assert all(mine.param_groups[0][k] == v for k, v in switches.items())


def test_lbfgs_groups_match_torch():
    mine = optim.LBFGS([nn.Parameter(jt.zeros(2))], max_iter=8, line_search_fn="strong_wolfe")
    theirs = torch.optim.LBFGS([torch.zeros(2)], max_iter=8, line_search_fn="strong_wolfe")
    assert mine.state_dict() == theirs.state_dict()
    assert mine.param_groups[0]["max_eval"] == 10


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("LBFGS", "SparseAdam")])
def test_differentiable_is_refused(name):
    with pytest.raises(NotImplementedError, match="differentiable=True is not supported"):
        getattr(optim, name)([nn.Parameter(jt.zeros(2))], differentiable=True)
    opt = getattr(optim, name)([nn.Parameter(jt.zeros(2))])
    with pytest.raises(NotImplementedError, match="differentiable"):
        opt.add_param_group({"params": [nn.Parameter(jt.zeros(2))], "differentiable": True})


def assert_same_error(make_mine, make_theirs):
    with pytest.raises(Exception) as mine:
        make_mine()
    with pytest.raises(Exception) as theirs:
        make_theirs()
    assert type(mine.value).__name__ == type(theirs.value).__name__
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", {"fused": True, "foreach": True}), ("Adam", {"fused": True, "foreach": True}),
    ("Adagrad", {"fused": True, "foreach": True}), ("Adam", {"betas": (0, 0.9)}),
    ("Adadelta", {"lr": -1}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1}),
    ("Adadelta", {"weight_decay": -1}),
    ("Adamax", {"lr": -1}), ("Adamax", {"eps": -1}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, -0.1)}), ("Adamax", {"weight_decay": -1}),
    ("NAdam", {"betas": (0.9, 1.0)}), ("NAdam", {"momentum_decay": -1}),
    ("NAdam", {"weight_decay": -0.5}),
    ("RAdam", {"lr": -0.1}), ("RAdam", {"betas": (-0.1, 0.9)}), ("RAdam", {"eps": -1e-8}),
    ("ASGD", {"lr": -1}), ("ASGD", {"weight_decay": -1}),
    ("Rprop", {"lr": -1}), ("Rprop", {"etas": (1.2, 1.5)}), ("Rprop", {"etas": (0.5, 0.9)}),
    ("LBFGS", {"lr": -1}),
], ids=str)
def test_argument_errors_match_torch(name, kwargs):
    assert_same_error(lambda: getattr(optim, name)([nn.Parameter(jt.zeros(2))], **kwargs),
                      lambda: getattr(torch.optim, name)([torch.zeros(2)], **kwargs))


def test_sparse_adam_says_why_it_cannot_be():
    with pytest.raises(NotImplementedError, match="no sparse tensors"):
        optim.SparseAdam([nn.Parameter(jt.zeros(2))])


# -- LBFGS ------------------------------------------------------------------------------------
def rosenbrock(x):
    """Rosenbrock's function of a flat NumPy vector and its gradient, in its dtype."""
    f = ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()
    g = np.zeros_like(x)
    g[:-1] += -2 * (1 - x[:-1]) - 400 * x[:-1] * (x[1:] - x[:-1] ** 2)
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return f, g


def lbfgs_run(lib, dtype, steps, **kwargs):
    """LBFGS over two parameters making the point (-1.2, 1) of Rosenbrock's valley. The closure
    sets the gradients from NumPy, the same bits for both libraries, so only the optimizers
    differ. Returns the point and loss after each step, and the optimizer."""
    ps = [lib.nn.Parameter(lib.tensor(np.array([v], dtype=dtype.np))) for v in (-1.2, 1.0)]
    opt = lib.optim.LBFGS(ps, **kwargs)

    def closure():
        opt.zero_grad()
        f, g = rosenbrock(np.concatenate([p.detach().numpy() for p in ps]))
        for p, gi in zip(ps, g, strict=False):
            p.grad = lib.tensor(np.array([gi], dtype=dtype.np))
        return lib.tensor(f)

    trace = []
    for _ in range(steps):
        loss = float(opt.step(closure))
        trace.append((loss, np.array([p.item() for p in ps])))
    return trace, opt


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_matches_torch_on_rosenbrock(line_search_fn):
    """float64, step after step: the same points (to 1e-9: the inner products round
    differently in the last bit, which the line search's interpolation magnifies), the same
    evaluation and iteration counts, and the same state dict; converged near (1, 1)."""
    kwargs = dict(lr=1 if line_search_fn else 0.1, max_iter=8, history_size=5,
                  line_search_fn=line_search_fn)
    steps = 8 if line_search_fn else 4
    mine, opt = lbfgs_run(jt, jt.float64, steps, **kwargs)
    theirs, ref = lbfgs_run(torch, jt.float64, steps, **kwargs)
    for (loss, x), (ref_loss, ref_x) in zip(mine, theirs, strict=False):
        np.testing.assert_allclose(x, ref_x, rtol=1e-9)
        np.testing.assert_allclose(loss, ref_loss, rtol=1e-9, atol=1e-12)
    sd, ref_sd = opt.state_dict(), ref.state_dict()
    state, ref_state = sd["state"][0], ref_sd["state"][0]
    assert list(state) == list(ref_state)
    for key in ("func_evals", "n_iter"):
        assert state[key] == ref_state[key], key
    for key in ("old_dirs", "old_stps", "ro"):
        assert len(state[key]) == len(ref_state[key]) <= 5
    assert type(state["t"]) is type(ref_state["t"])
    assert sd["param_groups"] == ref_sd["param_groups"]
    if line_search_fn:
        np.testing.assert_allclose(mine[-1][1], [1.0, 1.0], atol=1e-4)


def test_lbfgs_float32_converges_as_torch():
    mine, _ = lbfgs_run(jt, jt.float32, 6, line_search_fn="strong_wolfe")
    theirs, _ = lbfgs_run(torch, jt.float32, 6, line_search_fn="strong_wolfe")
    np.testing.assert_allclose(mine[0][1], theirs[0][1], rtol=1e-3)
    np.testing.assert_allclose(mine[-1][1], theirs[-1][1], atol=1e-3)
    np.testing.assert_allclose(mine[-1][1], [1.0, 1.0], atol=1e-3)


@pytest.mark.skipif(not hasattr(jt.Tensor, "backward"), reason="needs autograd (backward)")
def test_lbfgs_with_autograd_closure_resumes_from_its_state():
    """A closure that backpropagates (step() runs it with grad enabled inside its no_grad);
    saving and loading the state mid-way continues exactly."""
    def run(opt_steps, params, opt):
        def closure():
            opt.zero_grad()
            x = jt.cat(params)
            loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
            loss.backward()
            return loss
        for _ in range(opt_steps):
            opt.step(closure)

    def fresh():
        params = [nn.Parameter(jt.tensor([v], dtype=jt.float64)) for v in (-1.2, 1.0)]
        return params, optim.LBFGS(params, max_iter=5, line_search_fn="strong_wolfe")

    straight, opt = fresh()
    run(4, straight, opt)
    first, opt1 = fresh()
    run(2, first, opt1)
    resumed, opt2 = fresh()
    for p, q in zip(resumed, first, strict=False):
        p.detach().copy_(q.detach())
    opt2.load_state_dict(opt1.state_dict())
    assert opt2.state[resumed[0]]["d"] is not opt1.state[first[0]]["d"]
    run(2, resumed, opt2)
    assert [p.item() for p in resumed] == [p.item() for p in straight]
    with pytest.raises(TypeError):
        opt.step()  # the closure is required


def test_lbfgs_errors_match_torch():
    assert_same_error(
        lambda: optim.LBFGS([{"params": [nn.Parameter(jt.zeros(1))]},
                             {"params": [nn.Parameter(jt.zeros(1))]}]),
        lambda: torch.optim.LBFGS([{"params": [torch.zeros(1)]}, {"params": [torch.zeros(1)]}]))

    def bad_line_search(lib):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.LBFGS([p], line_search_fn="armijo")

        def closure():
            p.grad = lib.ones(1)
            return lib.tensor(1.0)
        opt.step(closure)

    assert_same_error(lambda: bad_line_search(jt), lambda: bad_line_search(torch))


# -- swa_utils --------------------------------------------------------------------------------
def model_pair(dtype):
    """The same small model (Linear, BatchNorm1d, Linear) in jitensor and in torch."""
    jt.manual_seed(0)
    mine = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).to(dtype)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.Linear(4, 2)).to(getattr(torch, dtype.name))
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in mine.state_dict().items()})
    return mine, theirs


def perturb(model, lib, dtype, rng):
    """The same random change to both models: a step of 'training'."""
    with lib.no_grad():
        for p in model.parameters():
            p.add_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype.np)))
        for b in model.buffers():
            if b.is_floating_point():
                b.add_(lib.tensor(rng.random(tuple(b.shape)).astype(dtype.np)))
            else:
                b.add_(3)


AVERAGING = {
    "swa": lambda su: {},
    "ema-multi": lambda su: {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
    "swa-multi": lambda su: {"multi_avg_fn": su.get_swa_multi_avg_fn()},
    "ema": lambda su: {"avg_fn": su.get_ema_avg_fn(0.8)},
    "swa-fn": lambda su: {"avg_fn": su.get_swa_avg_fn()},
    "ema-multi-buffers": lambda su: {"multi_avg_fn": su.get_ema_multi_avg_fn(0.7),
                                     "use_buffers": True},
    "swa-buffers": lambda su: {"use_buffers": True},
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", AVERAGING)
def test_averaged_model_matches_torch(kind, dtype):
    mine, theirs = model_pair(dtype)
    avg = swa_utils.AveragedModel(mine, **AVERAGING[kind](swa_utils))
    ref = torch.optim.swa_utils.AveragedModel(theirs, **AVERAGING[kind](torch.optim.swa_utils))
    for step in range(5):
        perturb(mine, jt, dtype, np.random.default_rng(step))
        perturb(theirs, torch, dtype, np.random.default_rng(step))
        avg.update_parameters(mine)
        ref.update_parameters(theirs)
        assert_same_values(avg.state_dict(), ref.state_dict(), dtype, f"update {step}")
    assert avg.n_averaged.item() == 5
    x = np.random.default_rng(9).standard_normal((5, 3)).astype(dtype.np)
    avg.eval()
    ref.eval()
    np.testing.assert_allclose(avg(jt.tensor(x)).detach().numpy(),
                               ref(torch.from_numpy(x)).detach().numpy(), **tol(dtype))


def test_averaging_function_errors_match_torch():
    for name in ("get_ema_multi_avg_fn", "get_ema_avg_fn"):
        assert_same_error(lambda name=name: getattr(swa_utils, name)(1.5),
                          lambda name=name: getattr(torch.optim.swa_utils, name)(1.5))
    assert_same_error(
        lambda: swa_utils.AveragedModel(nn.Linear(1, 1), avg_fn=swa_utils.get_swa_avg_fn(),
                                        multi_avg_fn=swa_utils.get_swa_multi_avg_fn()),
        lambda: torch.optim.swa_utils.AveragedModel(
            torch.nn.Linear(1, 1), avg_fn=torch.optim.swa_utils.get_swa_avg_fn(),
            multi_avg_fn=torch.optim.swa_utils.get_swa_multi_avg_fn()))


@pytest.mark.parametrize("batches", ["tensors", "lists"])
def test_update_bn_matches_torch(batches):
    """Running statistics recomputed from the loader with equal weights; momentum and the
    training flag put back."""
    mine, theirs = model_pair(jt.float64)
    rng = np.random.default_rng(3)
    data = [rng.standard_normal((n, 3)) for n in (4, 6, 5)]
    for model, lib in ((mine, jt), (theirs, torch)):
        model.eval()
        loader = [lib.tensor(x) if batches == "tensors" else [lib.tensor(x), 0] for x in data]
        (swa_utils if lib is jt else torch.optim.swa_utils).update_bn(loader, model)
        assert not model.training and model[1].momentum == 0.1
    assert_same_values(mine.state_dict(), theirs.state_dict(), jt.float64)
    assert mine[1].num_batches_tracked.item() == 3


def test_update_bn_leaves_instance_norm_alone():
    """torch's InstanceNorm is no _BatchNorm: update_bn neither resets its statistics nor
    changes its momentum (the pass still updates them, as any forward in training mode)."""
    data = [np.random.default_rng(n).standard_normal((2, 3, 5)) for n in range(3)]
    models = []
    for lib in (jt, torch):
        model = lib.nn.Sequential(lib.nn.InstanceNorm1d(3, track_running_stats=True)).double()
        model.train()
        model(lib.tensor(data[0] + 2))  # statistics that a reset would lose
        (swa_utils if lib is jt else torch.optim.swa_utils).update_bn(
            [lib.tensor(x) for x in data], model)
        models.append(model)
    assert_same_values(models[0].state_dict(), models[1].state_dict(), jt.float64)
    assert models[0][0].momentum == 0.1
    assert models[0][0].running_mean.numpy().min() > 0.1  # 0.9 ** 3 of the first update kept


SWALR_CASES = [
    dict(swa_lr=0.05),
    dict(swa_lr=[0.01, 0.2], anneal_epochs=4, anneal_strategy="linear"),
    dict(swa_lr=0.02, anneal_epochs=0),
    dict(swa_lr=0.3, anneal_epochs=1, anneal_strategy="cos"),
]


def sgd_pair():
    return [lib.optim.SGD([{"params": [lib.nn.Parameter(lib.zeros(2))]},
                           {"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.5}],
                          lr=0.1, momentum=0.9) for lib in (jt, torch)]


@pytest.mark.parametrize("kwargs", SWALR_CASES, ids=str)
def test_swalr_matches_torch(kwargs):
    """15 epochs of learning rates, equal to the last bit; then a state-dict round trip."""
    opt, ref = sgd_pair()
    mine = swa_utils.SWALR(opt, **kwargs)
    theirs = torch.optim.swa_utils.SWALR(ref, **kwargs)
    for _ in range(15):
        assert mine.get_last_lr() == theirs.get_last_lr()
        assert [g["swa_lr"] for g in opt.param_groups] == [g["swa_lr"] for g in ref.param_groups]
        opt.step()
        ref.step()
        mine.step()
        theirs.step()
    sd, ref_sd = mine.state_dict(), theirs.state_dict()
    assert set(sd) == set(ref_sd) and "anneal_func" not in sd
    fresh_opt, _ = sgd_pair()
    fresh = swa_utils.SWALR(fresh_opt, 1.0, anneal_strategy="linear")
    fresh.load_state_dict(copy.deepcopy(sd))
    assert fresh.anneal_func(0.5) == mine.anneal_func(0.5)


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.1, anneal_strategy="exp"),
                                    dict(swa_lr=0.1, anneal_epochs=-1),
                                    dict(swa_lr=0.1, anneal_epochs=2.5),
                                    dict(swa_lr=[0.1, 0.2, 0.3])], ids=str)
def test_swalr_errors_match_torch(kwargs):
    opt, ref = sgd_pair()
    assert_same_error(lambda: swa_utils.SWALR(opt, **kwargs),
                      lambda: torch.optim.swa_utils.SWALR(ref, **kwargs))


def _hook_log(lib):
    """What an optimizer's step, state-dict and global hooks see, in order, under lib."""
    import importlib
    log = []
    module = importlib.import_module(lib.__name__ + ".optim.optimizer")
    p = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([p], lr=0.1)
    pre = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", a[0] is o, a[1:], k)))
    post = opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), k)))
    gpre = module.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre"))
    gpost = module.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post"))
    sched = lib.optim.lr_scheduler.StepLR(opt, 1)  # (schedulers watch step too)
    p.grad = lib.ones(3)
    opt.step()
    sched.step()
    pre.remove()
    gpre.remove()
    opt.step(closure=None)
    post.remove()
    gpost.remove()
    opt.step()
    with opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: log.append("c")})):
        opt.step()  # a pre-hook's (args, kwargs) replace the step's
    opt.register_state_dict_pre_hook(lambda o: log.append("state_dict pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_load_state_dict_pre_hook(lambda o, sd: {k: v for k, v in sd.items()
                                                         if k != "extra"})
    opt.register_load_state_dict_post_hook(lambda o: log.append("load post"), prepend=True)
    state = opt.state_dict()
    log.append(sorted(state))
    opt.load_state_dict(state)
    adam = lib.optim.Adam([p])
    adam.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        adam.step()
    return log, [round(v, 6) for v in p.tolist()]


def test_optimizer_hooks_match_torch():
    assert _hook_log(jt) == _hook_log(torch)
