"""jt.optim.Adafactor and jt.optim.Muon against torch.optim's: stepped side by side from the same
values and gradients (float32 and float64), parameters compared after every step and the whole
state dicts at the end, over their options, several parameter groups and a learning-rate
schedule; state dicts exchanged both ways; signatures, default groups and errors; Muon's
bfloat16 rounding against torch's conversion; both on CUDA against the CPU."""
import inspect

import numpy as np
import pytest
from test_optim_torch import assert_same_error, assert_same_values, to_jt, to_torch, tol

import jitensor as jt
from jitensor import nn, optim
from jitensor.optim.muon import _bfloat16

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

DTYPES = [jt.float32, jt.float64]
# Adafactor: a matrix, a vector, a 3-D stack of matrices and a scalar with gradients, and a
# vector without (never changed). Muon: tall, wide and square matrices, and one without.
SHAPES = {"Adafactor": [(3, 4), (5,), (2, 3, 4), (), (4,)],
          "Muon": [(6, 4), (3, 8), (5, 5), (2, 3)]}


def make_params(name, dtype, lib):
    rng = np.random.default_rng(0)
    return [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(dtype.np)))
            for s in SHAPES[name]]


def set_grads(name, params, step, dtype, lib):
    rng = np.random.default_rng(100 + step)
    for p, s in zip(params[:-1], SHAPES[name][:-1], strict=True):
        p.grad = lib.tensor(rng.standard_normal(s).astype(dtype.np))


def groups(params, split):
    """All parameters in one group, or (`split`: the group options of the second group) the
    first two in a group of the constructor's options and the rest in one of `split`'s."""
    if split is None:
        return params
    return [{"params": params[:2]}, {"params": params[2:], **split}]


def build_both(name, kwargs, dtype, split=None, torch_kwargs=None):
    mine, theirs = make_params(name, dtype, jt), make_params(name, dtype, torch)
    opt = getattr(optim, name)(groups(mine, split), **kwargs)
    ref = getattr(torch.optim, name)(groups(theirs, split), **(torch_kwargs or kwargs))
    return opt, ref, mine, theirs


def step_both(name, opt, ref, mine, theirs, dtype, steps, first=0, schedule=False):
    for step in range(first, first + steps):
        set_grads(name, mine, step, dtype, jt)
        set_grads(name, theirs, step, dtype, torch)
        opt.step()
        ref.step()
        for i, (p, q) in enumerate(zip(mine, theirs, strict=True)):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **tol(dtype),
                                       err_msg=f"step {step}, parameter {i}")
        if schedule:  # a learning-rate schedule, written into the groups as schedulers do
            for o in (opt, ref):
                for group in o.param_groups:
                    group["lr"] *= 0.7


ADAFACTOR = [
    ({}, None),
    ({"lr": 0.05, "weight_decay": 0.1, "maximize": True}, None),
    ({"beta2_decay": -0.5, "eps": (1e-3, 1e-2), "d": 1.5}, None),
    ({"lr": 0.2, "eps": (0.0, 0.0), "d": 3.0, "weight_decay": 0.05}, None),
    ({"lr": 0.05, "foreach": True}, None),
    ({"lr": 0.05}, {"lr": 0.3, "weight_decay": 0.2, "maximize": True, "beta2_decay": -0.6}),
]
MUON = [
    ({}, None),
    ({"lr": 0.02, "nesterov": False}, None),
    ({"lr": 0.02, "weight_decay": 0.0, "momentum": 0.9, "adjust_lr_fn": "match_rms_adamw"},
     None),
    ({"lr": 0.05, "adjust_lr_fn": "original", "ns_steps": 3, "ns_coefficients": (2.0, -1.5, 0.5),
      "eps": 1e-5}, None),
    ({"lr": 0.02}, {"lr": 0.1, "nesterov": False, "weight_decay": 0.3, "momentum": 0.5}),
]
CASES = [("Adafactor", *c) for c in ADAFACTOR] + [("Muon", *c) for c in MUON]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name, kwargs, split", CASES, ids=str)
def test_matches_torch(name, kwargs, split, dtype):
    """6 steps side by side (torch's foreach implementation compared below), then the state
    dicts compared whole: states' keys, shapes and dtypes, and the groups."""
    torch_kwargs = {k: v for k, v in kwargs.items() if k != "foreach"}
    opt, ref, mine, theirs = build_both(name, kwargs, dtype, split, torch_kwargs)
    step_both(name, opt, ref, mine, theirs, dtype, 6, schedule=split is not None)
    untouched = make_params(name, dtype, jt)[-1]
    np.testing.assert_array_equal(mine[-1].detach().numpy(), untouched.detach().numpy())
    sd, ref_sd = opt.state_dict(), ref.state_dict()
    for group in ref_sd["param_groups"]:
        group.update((k, v) for k, v in kwargs.items() if k == "foreach")
    # a group's own options come first in torch's dicts, after the defaults in jitensor's
    for d in (sd, ref_sd):
        d["param_groups"] = [dict(sorted(g.items())) for g in d["param_groups"]]
    assert_same_values(sd, ref_sd, dtype)
    assert len(sd["state"]) == len(SHAPES[name]) - 1


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_adafactor_close_to_torch_foreach(dtype):
    """torch's foreach Adafactor computes the same update, scaled and added in two roundings."""
    kwargs = {"lr": 0.05, "weight_decay": 0.1, "maximize": True, "foreach": True}
    opt, ref, mine, theirs = build_both("Adafactor", kwargs, dtype)
    for step in range(6):
        set_grads("Adafactor", mine, step, dtype, jt)
        set_grads("Adafactor", theirs, step, dtype, torch)
        opt.step()
        ref.step()
    for p, q in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert opt.state_dict()["param_groups"] == ref.state_dict()["param_groups"]


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_tensor_lr_matches_torch(name):
    dtype = jt.float32
    opt, ref, mine, theirs = build_both(name, {}, dtype)
    for o, lib in ((opt, jt), (ref, torch)):
        o.param_groups[0]["lr"] = lib.tensor(0.03)
    step_both(name, opt, ref, mine, theirs, dtype, 3)
    assert isinstance(opt.param_groups[0]["lr"], jt.Tensor)


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_state_dict_loads_into_torch_and_back(name):
    """3 steps; jitensor's state dict, converted, loaded into a fresh torch optimizer and
    torch's into a fresh jitensor one; 3 more steps each continue alike."""
    dtype = jt.float64
    kwargs = {"lr": 0.05, "weight_decay": 0.1}
    opt, ref, mine, theirs = build_both(name, kwargs, dtype)
    step_both(name, opt, ref, mine, theirs, dtype, 3)
    mine2 = [nn.Parameter(p.detach().clone()) for p in mine]
    theirs2 = [torch.nn.Parameter(q.detach().clone()) for q in theirs]
    opt2 = getattr(optim, name)(mine2, lr=123.0)
    ref2 = getattr(torch.optim, name)(theirs2, lr=123.0)
    ref2.load_state_dict(to_torch(opt.state_dict()))
    opt2.load_state_dict(to_jt(ref.state_dict()))
    assert opt2.param_groups[0]["lr"] == ref2.param_groups[0]["lr"] == 0.05
    assert_same_values(opt2.state_dict(), ref2.state_dict(), dtype)
    assert opt2.state[mine2[0]][next(iter(opt2.state[mine2[0]]))] is not \
        opt.state[mine[0]][next(iter(opt.state[mine[0]]))]  # copies
    step_both(name, opt2, ref2, mine2, theirs2, dtype, 3, first=3)
    assert_same_values(opt2.state_dict(), ref2.state_dict(), dtype)


def test_adafactor_state_dtypes_and_number_steps():
    """The step counter is a CPU scalar of the default dtype's width (float64 under
    set_default_dtype(float64)) whatever the parameter's; a state dict whose steps are numbers
    loads with tensor steps (torch's __setstate__), and `foreach` is restored where missing."""
    for default in (jt.float32, jt.float64):
        old = jt.get_default_dtype(), torch.get_default_dtype()
        jt.set_default_dtype(default)
        torch.set_default_dtype(getattr(torch, default.name))
        try:
            opt, ref, mine, theirs = build_both("Adafactor", {}, jt.float32)
            step_both("Adafactor", opt, ref, mine, theirs, jt.float32, 1)
            assert_same_values(opt.state_dict(), ref.state_dict(), jt.float32)
            assert opt.state[mine[0]]["step"].dtype is default
        finally:
            jt.set_default_dtype(old[0])
            torch.set_default_dtype(old[1])
    sd = to_jt(ref.state_dict())
    for state in sd["state"].values():
        state["step"] = 1.0
    del sd["param_groups"][0]["foreach"]
    opt.load_state_dict(sd)
    assert opt.state[mine[0]]["step"].item() == 1.0
    assert opt.param_groups[0]["foreach"] is None


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_signature_and_default_groups_match_torch(name):
    def describe(cls):
        return [(p.name, p.kind, p.default)
                for p in inspect.signature(cls.__init__).parameters.values()]

    assert describe(getattr(optim, name)) == describe(getattr(torch.optim, name))
    mine = getattr(optim, name)([nn.Parameter(jt.zeros(2, 2))])
    theirs = getattr(torch.optim, name)([torch.zeros(2, 2)])
    assert mine.state_dict() == theirs.state_dict()
    assert name in optim.__all__


ADAFACTOR_ERRORS = [{"lr": -1.0}, {"beta2_decay": 0.1}, {"eps": (-1e-3, 1e-3)},
                    {"eps": (None, -1.0)}, {"d": 0.5}, {"weight_decay": -0.1},
                    {"capturable": True}]
MUON_ERRORS = [{"lr": -1.0}, {"momentum": -0.5}, {"weight_decay": -0.1},
               {"adjust_lr_fn": "rms"}, {"foreach": True}, {"maximize": True}]


@pytest.mark.parametrize("name, kwargs", [("Adafactor", k) for k in ADAFACTOR_ERRORS]
                         + [("Muon", k) for k in MUON_ERRORS], ids=str)
def test_argument_errors_match_torch(name, kwargs):
    assert_same_error(lambda: getattr(optim, name)([nn.Parameter(jt.zeros(2, 2))], **kwargs),
                      lambda: getattr(torch.optim, name)([torch.zeros(2, 2)], **kwargs))


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_tensor_lr_of_several_elements_is_refused(name):
    assert_same_error(
        lambda: getattr(optim, name)([nn.Parameter(jt.zeros(2, 2))], lr=jt.tensor([0.1, 0.2])),
        lambda: getattr(torch.optim, name)([torch.zeros(2, 2)], lr=torch.tensor([0.1, 0.2])))


def one_step(lib, name, shape, group=None, **kwargs):
    """A step of `name` over a parameter of `shape` of ones, gradient 0.5 (a second parameter
    in a group added after construction, if `group` is its shape); the values after it."""
    p = lib.nn.Parameter(lib.ones(shape))
    opt = getattr(lib.optim, name)([p], **kwargs)
    p.grad = lib.full(shape, 0.5)
    if group is not None:
        q = lib.nn.Parameter(lib.ones(group))
        q.grad = lib.ones(group)
        opt.add_param_group({"params": [q]})
    opt.step()
    return p.detach().numpy()


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 3)], ids=str)
def test_adafactor_empty_parameters_raise_as_torch(shape):
    """torch divides the parameter's norm by the square root of its size in Python: a
    ZeroDivisionError for a parameter without elements, kept here."""
    assert_same_error(lambda: one_step(jt, "Adafactor", shape),
                      lambda: one_step(torch, "Adafactor", shape))


def test_muon_empty_and_degenerate_matrices():
    """(0, 3) steps (nothing to update); (3, 0), whose shape ratio divides by zero in torch's
    learning-rate adjustment, raises its ZeroDivisionError."""
    assert one_step(jt, "Muon", (0, 3)).shape == (0, 3)
    assert_same_error(lambda: one_step(jt, "Muon", (3, 0)),
                      lambda: one_step(torch, "Muon", (3, 0)))
    np.testing.assert_allclose(one_step(jt, "Muon", (1, 1), lr=0.1),
                               one_step(torch, "Muon", (1, 1), lr=0.1), rtol=1e-6)


def test_muon_larger_matrices_agree_to_bfloat16_precision():
    """Beyond small matrices, float32 sums accumulated in another order round now and then to
    the other bfloat16 neighbour, and the iteration spreads it: within two units of bfloat16 of
    the orthogonalised update (elements below 1) a step."""
    lr = 0.02
    params = [lib.nn.Parameter(lib.zeros(96, 160)) for lib in (jt, torch)]
    opts = [lib.optim.Muon([p], lr=lr, weight_decay=0.0) for lib, p in zip((jt, torch), params,
                                                                            strict=True)]
    for step in range(2):
        g = np.random.default_rng(step).standard_normal((96, 160)).astype(np.float32)
        for p, o, lib in zip(params, opts, (jt, torch), strict=True):
            p.grad = lib.tensor(g)
            o.step()
        mine, theirs = (p.detach().numpy() for p in params)
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=(step + 1) * lr * 2 ** -7)
        assert np.abs(mine - theirs).mean() < 0.1 * lr * 2 ** -8


@pytest.mark.parametrize("shape", [(), (3,), (2, 2, 2)], ids=str)
def test_muon_refuses_other_than_matrices(shape):
    """torch's message names the shape as torch.Size; the same words otherwise."""
    with pytest.raises(ValueError) as mine:
        optim.Muon([nn.Parameter(jt.zeros(shape))])
    with pytest.raises(ValueError) as theirs:
        torch.optim.Muon([torch.zeros(shape)])
    assert str(mine.value).replace("jitensor.", "torch.") == str(theirs.value)


@pytest.mark.parametrize("kwargs", [{"group": (3,)}, {"ns_steps": 100},
                                    {"ns_coefficients": (3.0, -4.0)}], ids=str)
def test_muon_step_errors_match_torch(kwargs):
    """Errors torch raises only in step(): a non-matrix in a group added later, too many
    Newton-Schulz steps, a wrong number of coefficients."""
    assert_same_error(lambda: one_step(jt, "Muon", (2, 2), **kwargs),
                      lambda: one_step(torch, "Muon", (2, 2), **kwargs))


def test_adafactor_scalar_parameter_matches_torch():
    for kwargs in ({}, {"lr": 0.5, "eps": (1e-3, 0.1), "maximize": True}):
        np.testing.assert_allclose(one_step(jt, "Adafactor", (), **kwargs),
                                   one_step(torch, "Adafactor", (), **kwargs), rtol=1e-6)


def test_bfloat16_rounding_matches_torch():
    """The same bits as torch's conversion: round to nearest, ties to even, overflow to inf,
    subnormals, inf and NaN kept; float64 through float32 (twice rounded, as torch's)."""
    rng = np.random.default_rng(0)
    bits = np.concatenate([rng.integers(0, 2 ** 32, 4000, dtype=np.uint64),
                           np.arange(0x3F808000, 0x3F818001, 0x4000)]).astype(np.uint32)
    x32 = bits.view(np.float32)
    x32 = np.concatenate([x32[np.isfinite(x32)], [np.inf, -np.inf, np.nan, 3.4e38, -3.39e38,
                                                  1e-40, -2e-45, 0.0, -0.0]]).astype(np.float32)
    x64 = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000),
                          1 + np.array([2.0 ** -8, 3 * 2.0 ** -8, 2.0 ** -8 + 2.0 ** -40,
                                        2.0 ** -8 - 2.0 ** -40])])
    for x in (x32, x64):
        mine = _bfloat16(jt.tensor(x)).numpy()
        theirs = torch.from_numpy(x).bfloat16().float().numpy()
        assert mine.dtype == np.float32
        nan = np.isnan(theirs)  # NaN stays NaN (torch's payload is its own)
        np.testing.assert_array_equal(np.isnan(mine), nan)
        np.testing.assert_array_equal(mine[~nan].view(np.uint32), theirs[~nan].view(np.uint32))


@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
def test_cuda_steps_equal_cpu_steps():
    """One step of each on CUDA tensors, against the same step on the CPU."""
    rng = np.random.default_rng(0)
    cases = [("Muon", (3, 4), {"lr": 0.02}), ("Adafactor", (2, 3), {"lr": 0.05}),
             ("Adafactor", (3,), {"weight_decay": 0.1})]
    for name, shape, kwargs in cases:
        a, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
        results = []
        for device in ("cpu", "cuda"):
            p = nn.Parameter(jt.tensor(a, device=device))
            opt = getattr(optim, name)([p], **kwargs)
            p.grad = jt.tensor(g, device=device)
            opt.step()
            assert all(v.device == p.device for k, v in opt.state[p].items() if k != "step")
            results.append(p.detach().cpu().numpy())
        np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-7,
                                   err_msg=name)
