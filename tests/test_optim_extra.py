"""jt.optim's RMSprop and Adagrad against torch.optim step for step (same initial values and
gradients, float32 and float64), and jt.optim.lr_scheduler against torch.optim.lr_scheduler:
every scheduler's learning rates and cycled momentums over 30 steps, closed forms, state-dict
resumes, ReduceLROnPlateau on metric sequences, and argument errors with torch's messages."""
import copy
import itertools
import warnings

import numpy as np
import pytest
from test_optim import DTYPES, assert_states_match, grads_for, make_params
from test_optim import run_both as _run_both

import jitensor as jt
from jitensor import nn, optim
from jitensor.optim import lr_scheduler


def set_grads(params, step, dtype, lib=jt):
    for p, g in zip(params, grads_for(step, dtype), strict=False):
        p.grad = lib.tensor(g.copy())


def run_both(torch, name, kwargs, dtype, steps=6):
    """test_optim's run_both for the optimizer `name` of both libraries, built with `kwargs`."""
    return _run_both(torch, lambda p: getattr(optim, name)(p, **kwargs),
                     lambda p: getattr(torch.optim, name)(p, **kwargs), dtype, steps)


def assert_same_error(make_mine, make_theirs):
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as mine:
        make_mine()
    with pytest.raises(Exception) as theirs:
        make_theirs()
    assert type(mine.value).__name__ == type(theirs.value).__name__
    assert str(mine.value) == str(theirs.value)


RMSPROP_CASES = [{}] + [
    {"lr": 0.01, "alpha": 0.9, "centered": centered, "momentum": momentum,
     "weight_decay": decay, "maximize": maximize}
    for centered, momentum, decay, maximize in itertools.product(
        [False, True], [0, 0.9], [0, 0.1], [False, True])]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kwargs", RMSPROP_CASES, ids=str)
def test_rmsprop_matches_torch(dtype, kwargs):
    torch = pytest.importorskip("torch")
    opt, ref, mine, theirs = run_both(torch, "RMSprop", kwargs, dtype)
    assert_states_match(opt, ref, mine, theirs, dtype)
    assert opt.state[mine[0]]["step"].item() == 6


ADAGRAD_CASES = [
    {},
    {"lr": 0.1, "lr_decay": 0.05},
    {"lr": 0.1, "initial_accumulator_value": 0.5},
    {"lr": 0.05, "weight_decay": 0.1, "maximize": True},
    {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.2, "initial_accumulator_value": 0.1,
     "eps": 1e-6, "maximize": True},
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kwargs", ADAGRAD_CASES, ids=str)
def test_adagrad_matches_torch(dtype, kwargs):
    torch = pytest.importorskip("torch")
    opt, ref, mine, theirs = run_both(torch, "Adagrad", kwargs, dtype)
    assert_states_match(opt, ref, mine, theirs, dtype)
    # every parameter has a state from the start, the one never stepped too
    assert opt.state[mine[2]]["step"].item() == 0


def test_adagrad_initializes_added_groups_lazily():
    """A group added later gets its state at its first step, filled with the constructor's
    initial_accumulator_value even where the group sets its own (as torch)."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (jt, torch):
        a, b = (lib.nn.Parameter(lib.ones(2, dtype=lib.float64)) for _ in range(2))
        opt = lib.optim.Adagrad([a], lr=0.1, initial_accumulator_value=0.5)
        opt.add_param_group({"params": [b], "initial_accumulator_value": 3.0})
        assert len(opt.state) == 1
        b.grad = lib.full((2,), 2.0, dtype=lib.float64)
        opt.step()
        results.append((opt.state[b]["sum"].tolist(), b.tolist()))
    assert results[0][0] == results[1][0] == [4.5, 4.5]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-15)


@pytest.mark.parametrize("name, kwargs", [
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.2}),
], ids=["RMSprop", "Adagrad"])
def test_state_dict_round_trip(name, kwargs):
    """torch's format (the same state keys and group options), and a resume: 3 steps, save,
    load into a fresh optimizer over copies, 3 more equals 6 uninterrupted steps."""
    torch = pytest.importorskip("torch")
    opt, ref, *_ = run_both(torch, name, kwargs, jt.float64, steps=2)
    sd, ref_sd = opt.state_dict(), ref.state_dict()
    assert list(sd["state"]) == list(ref_sd["state"])
    for index, state in sd["state"].items():
        assert list(state) == list(ref_sd["state"][index])
    for group, ref_group in zip(sd["param_groups"], ref_sd["param_groups"], strict=False):
        assert set(group) <= set(ref_group)  # torch adds its own switches (foreach...)
        assert all(group[k] == ref_group[k] for k in group)

    make = getattr(optim, name)
    _, straight = make_params(jt.float64)
    _, first = make_params(jt.float64)
    opt_straight, opt_first = make(straight, **kwargs), make(first, **kwargs)
    for step in range(6):
        set_grads(straight, step, jt.float64)
        opt_straight.step()
    for step in range(3):
        set_grads(first, step, jt.float64)
        opt_first.step()
    resumed = [nn.Parameter(p.detach().clone()) for p in first]
    opt_resumed = make(resumed, lr=123.0)
    opt_resumed.load_state_dict(opt_first.state_dict())
    assert opt_resumed.param_groups[0]["lr"] == kwargs["lr"]
    for step in range(3, 6):
        set_grads(resumed, step, jt.float64)
        opt_resumed.step()
    for p, q in zip(straight, resumed, strict=False):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


@pytest.mark.parametrize("name, kwargs", [
    ("RMSprop", {"lr": -0.1}), ("RMSprop", {"eps": -1e-8}), ("RMSprop", {"momentum": -0.5}),
    ("RMSprop", {"weight_decay": -1}), ("RMSprop", {"alpha": -0.9}),
    ("Adagrad", {"lr": -0.1}), ("Adagrad", {"lr_decay": -1}),
    ("Adagrad", {"weight_decay": -0.1}), ("Adagrad", {"initial_accumulator_value": -1}),
    ("Adagrad", {"eps": -1e-10}),
], ids=str)
def test_optimizer_argument_errors(name, kwargs):
    torch = pytest.importorskip("torch")
    assert_same_error(lambda: getattr(optim, name)([nn.Parameter(jt.zeros(2))], **kwargs),
                      lambda: getattr(torch.optim, name)([torch.zeros(2)], **kwargs))


# -- schedulers ---------------------------------------------------------------------------------
def make_optimizer(lib, kind):
    """Two parameter groups (lr 0.1 and 0.05): SGD with momentum, Adam (betas), RMSprop
    (momentum) or Adagrad (neither)."""
    groups = [{"params": [lib.nn.Parameter(lib.zeros(2))]},
              {"params": [lib.nn.Parameter(lib.zeros(3))], "lr": 0.05}]
    if kind == "sgd":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    if kind == "adam":
        return lib.optim.Adam(groups, lr=0.1, betas=(0.9, 0.99))
    if kind == "rmsprop":
        return lib.optim.RMSprop(groups, lr=0.1, momentum=0.5)
    return lib.optim.Adagrad(groups, lr=0.1)


def decay(epoch):
    return 0.9 ** epoch


def warmup(epoch):
    return min(1.0, (epoch + 1) / 5)


class Power:
    """A callable object: its attributes go into state dicts, unlike a function's."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, x):
        return self.rate ** x


def cyclic_after_step_lr(S, o):
    S.StepLR(o, 2)  # the groups now have an 'initial_lr', which CyclicLR must not take as base
    return S.CyclicLR(o, 0.02, 0.2, step_size_up=3)


SCHEDULERS = {
    "StepLR": ("sgd", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5)),
    "StepLR-adam": ("adam", lambda S, o: S.StepLR(o, 7, gamma=0.9)),
    "MultiStepLR": ("sgd", lambda S, o: S.MultiStepLR(o, milestones=[2, 5, 5, 11], gamma=0.3)),
    "MultiStepLR-unsorted": ("rmsprop", lambda S, o: S.MultiStepLR(o, [20, 4])),
    "ExponentialLR": ("sgd", lambda S, o: S.ExponentialLR(o, gamma=0.9)),
    "ExponentialLR-rmsprop": ("rmsprop", lambda S, o: S.ExponentialLR(o, 0.97)),
    "LambdaLR": ("sgd", lambda S, o: S.LambdaLR(o, decay)),
    "LambdaLR-per-group": ("adam", lambda S, o: S.LambdaLR(o, [warmup, Power(0.8)])),
    "MultiplicativeLR": ("sgd", lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95)),
    "MultiplicativeLR-per-group": ("sgd", lambda S, o: S.MultiplicativeLR(o, (decay, warmup))),
    "ConstantLR": ("sgd", lambda S, o: S.ConstantLR(o)),
    "ConstantLR-half": ("adam", lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=4)),
    "LinearLR": ("sgd", lambda S, o: S.LinearLR(o)),
    "LinearLR-down": ("sgd", lambda S, o: S.LinearLR(o, start_factor=0.9, end_factor=0.1,
                                                     total_iters=10)),
    "CosineAnnealingLR": ("sgd", lambda S, o: S.CosineAnnealingLR(o, T_max=7, eta_min=1e-3)),
    "CosineAnnealingLR-long": ("adam", lambda S, o: S.CosineAnnealingLR(o, 30)),
    "CosineAnnealingWarmRestarts": ("sgd", lambda S, o: S.CosineAnnealingWarmRestarts(o, 5)),
    "CosineAnnealingWarmRestarts-mult": ("sgd", lambda S, o: S.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01)),
    "PolynomialLR": ("sgd", lambda S, o: S.PolynomialLR(o)),
    "PolynomialLR-square": ("sgd", lambda S, o: S.PolynomialLR(o, total_iters=12, power=2.0)),
    "SequentialLR": ("sgd", lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.1, total_iters=5), S.ExponentialLR(o, 0.9)], [5])),
    "SequentialLR-three": ("adam", lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, 0.1, total_iters=4), S.CosineAnnealingLR(o, T_max=10),
            S.StepLR(o, 3)], milestones=[4, 14])),
    "ChainedScheduler": ("sgd", lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.1, total_iters=6), S.ExponentialLR(o, 0.9)], optimizer=o)),
    "ChainedScheduler-nested": ("sgd", lambda S, o: S.ChainedScheduler(
        [S.LinearLR(o, 0.5, total_iters=8), S.MultiStepLR(o, [3, 9], 0.5)])),
    "OneCycleLR": ("sgd", lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=30)),
    "OneCycleLR-three-phase-adam": ("adam", lambda S, o: S.OneCycleLR(
        o, [0.5, 0.2], epochs=3, steps_per_epoch=10, pct_start=0.25, anneal_strategy="linear",
        three_phase=True, base_momentum=[0.8, 0.7], max_momentum=0.9)),
    "OneCycleLR-no-momentum": ("adagrad", lambda S, o: S.OneCycleLR(
        o, 0.3, total_steps=40, cycle_momentum=False, div_factor=10, final_div_factor=100)),
    "CyclicLR": ("sgd", lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4)),
    "CyclicLR-triangular2-adam": ("adam", lambda S, o: S.CyclicLR(
        o, [0.01, 0.02], 0.2, step_size_up=3, step_size_down=5, mode="triangular2",
        base_momentum=0.85, max_momentum=[0.95, 0.9])),
    "CyclicLR-exp_range-rmsprop": ("rmsprop", lambda S, o: S.CyclicLR(
        o, 0.001, 0.1, step_size_up=5, mode="exp_range", gamma=0.9)),
    "CyclicLR-scale_fn": ("sgd", lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, step_size_up=2, scale_fn=Power(0.95), scale_mode="iterations")),
    "CyclicLR-no-momentum": ("adagrad", lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, cycle_momentum=False)),
    "CyclicLR-after-StepLR": ("sgd", cyclic_after_step_lr),
}


def snapshot(opt, sched):
    """The scheduler's last lrs and every group's options (lr, momentum or betas, the bounds
    the schedulers store there)."""
    return [list(sched.get_last_lr())] + [{k: v for k, v in g.items() if k != "params"}
                                          for g in opt.param_groups]


def trace(opt, sched, steps):
    """Snapshots after construction and after each of `steps` optimizer + scheduler steps.
    jitensor's scheduler must not warn."""
    rows = [snapshot(opt, sched)]
    for _ in range(steps):
        opt.step()
        with warnings.catch_warnings():
            if isinstance(opt, optim.Optimizer):
                warnings.simplefilter("error")
            sched.step()
        rows.append(snapshot(opt, sched))
    return rows


def assert_traces_match(mine, theirs):
    for step, (row, ref) in enumerate(zip(mine, theirs, strict=True)):
        np.testing.assert_allclose(row[0], ref[0], rtol=1e-12, atol=1e-15,
                                   err_msg=f"step {step}")
        for group, ref_group in zip(row[1:], ref[1:], strict=True):
            assert set(group) <= set(ref_group)
            for key, value in group.items():
                np.testing.assert_allclose(np.asarray(value, dtype=float),
                                           np.asarray(ref_group[key], dtype=float),
                                           rtol=1e-12, atol=1e-15, err_msg=f"step {step} {key}")


def build(lib, name):
    kind, factory = SCHEDULERS[name]
    opt = make_optimizer(lib, kind)
    return opt, factory(lib.optim.lr_scheduler, opt)


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_matches_torch(name):
    torch = pytest.importorskip("torch")
    mine = trace(*build(jt, name), steps=30)
    theirs = trace(*build(torch, name), steps=30)
    assert_traces_match(mine, theirs)
    assert len({row[0][0] for row in mine}) > 1  # the schedule did move


def assert_same_keys(sd, ref_sd):
    assert set(sd) == set(ref_sd)
    for nested, ref_nested in zip(sd.get("_schedulers", []), ref_sd.get("_schedulers", []),
                                  strict=False):
        assert_same_keys(nested, ref_nested)


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_state_dict_resumes(name):
    """12 steps, save the optimizer and the scheduler, load both into fresh ones (scheduler
    made first, as torch documents), 12 more: the same rates as 24 uninterrupted steps. The
    state dict has torch's keys."""
    torch = pytest.importorskip("torch")
    opt, sched = build(jt, name)
    straight = trace(opt, sched, 24)
    opt, sched = build(jt, name)
    trace(opt, sched, 12)
    assert_same_keys(sched.state_dict(), build(torch, name)[1].state_dict())
    opt_resumed, sched_resumed = build(jt, name)
    opt_resumed.load_state_dict(opt.state_dict())
    sched_resumed.load_state_dict(copy.deepcopy(sched.state_dict()))
    resumed = trace(opt_resumed, sched_resumed, 12)
    assert resumed == straight[12:]


def test_callable_objects_restored_from_state_dict():
    opt = make_optimizer(jt, "sgd")
    saved = lr_scheduler.LambdaLR(opt, [decay, Power(0.8)]).state_dict()
    assert saved["lr_lambdas"] == [None, {"rate": 0.8}]
    fresh = lr_scheduler.LambdaLR(make_optimizer(jt, "sgd"), [decay, Power(0.3)])
    fresh.load_state_dict(saved)
    assert fresh.lr_lambdas[1].rate == 0.8 and "lr_lambdas" in saved
    cyclic = lr_scheduler.CyclicLR(opt, 0.01, 0.1, scale_fn=Power(0.9)).state_dict()
    assert cyclic["_scale_fn_custom"] == {"rate": 0.9} and "_scale_fn_ref" not in cyclic
    fresh = lr_scheduler.CyclicLR(make_optimizer(jt, "sgd"), 0.01, 0.1, scale_fn=Power(0.5))
    fresh.load_state_dict(cyclic)
    assert fresh._scale_fn_custom.rate == 0.9


CLOSED_FORM = {
    "StepLR": lambda S, o: S.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, [2, 5, 5, 11], gamma=0.3),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=4),
    "LinearLR": lambda S, o: S.LinearLR(o, start_factor=0.2, total_iters=6),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, 0.9),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=8, power=1.5),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    "LambdaLR": lambda S, o: S.LambdaLR(o, decay),  # no closed form: get_lr()
}


@pytest.mark.parametrize("name", CLOSED_FORM)
def test_step_with_epoch_uses_closed_form(name):
    """step(epoch) jumps there (deprecated: it warns) with the closed form where torch has one;
    plain steps after it go on recursively from there."""
    torch = pytest.importorskip("torch")
    rates = []
    for lib in (jt, torch):
        opt = make_optimizer(lib, "sgd")
        sched = CLOSED_FORM[name](lib.optim.lr_scheduler, opt)
        row = []
        for epoch in [3, 1, 10, 5, 0, None, None, 13, None]:
            opt.step()
            if epoch is None:
                sched.step()
            else:
                with pytest.warns(UserWarning, match="epoch parameter"):
                    sched.step(epoch)
            row.append(sched.get_last_lr())
        rates.append(row)
    np.testing.assert_allclose(rates[0], rates[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("T_mult", [1, 2])
def test_warm_restarts_fractional_epochs(T_mult):
    torch = pytest.importorskip("torch")
    rates = []
    for lib in (jt, torch):
        opt = make_optimizer(lib, "sgd")
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=T_mult)
        row = []
        for epoch in [0.5, 1.25, 3.9, 4.0, 7.5, None, 20.2, None, None, 2]:
            opt.step()
            sched.step(epoch)
            row.append(sched.get_last_lr() + [sched.T_cur, sched.T_i, sched.last_epoch])
        rates.append(row)
    np.testing.assert_allclose(rates[0], rates[1], rtol=1e-12, atol=1e-15)


def test_get_lr_outside_step_warns():
    sched = lr_scheduler.StepLR(make_optimizer(jt, "sgd"), 2)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_initial_lr_and_resume_from_last_epoch():
    """The constructor keeps an existing 'initial_lr' (a second scheduler starts from the
    first one's base), and resuming with last_epoch >= 0 continues the schedule from there."""
    opt = make_optimizer(jt, "sgd")
    lr_scheduler.ExponentialLR(opt, 0.5).step()
    second = lr_scheduler.StepLR(opt, 2)
    assert second.base_lrs == [0.1, 0.05] and opt.param_groups[0]["lr"] == 0.05
    resumed = lr_scheduler.StepLR(opt, 2, gamma=0.5, last_epoch=3)
    assert resumed.last_epoch == 4 and resumed.get_last_lr() == [0.025, 0.0125]


PLATEAU_CASES = [
    {},
    {"mode": "min", "patience": 2, "threshold": 0.01, "cooldown": 3},
    {"mode": "min", "threshold_mode": "abs", "threshold": 0.02, "patience": 1, "min_lr": 0.004},
    {"mode": "max", "patience": 1, "factor": 0.5, "threshold": 0.05},
    {"mode": "max", "threshold_mode": "abs", "threshold": 0.01, "patience": 0, "cooldown": 2,
     "min_lr": [0.02, 0.001], "factor": 0.3},
    {"patience": 0, "factor": 0.5, "eps": 0.01},
]


def metric_sequence(mode):
    """40 positive noisy values improving then stalling: decreasing for min, increasing for
    max."""
    rng = np.random.default_rng(7)
    values = 1 / (1 + np.minimum(np.arange(40), 15) / 5) + 0.03 * rng.standard_normal(40)
    return [float(v) for v in (values if mode == "min" else 2 - values)]


def borderline_metrics(mode, threshold_mode, threshold):
    """Values just short of the improvement boundary of the best so far, exact repeats of the
    best, and values just past the boundary, in turn."""
    sign = -1 if mode == "min" else 1
    best, values = 1.0, [1.0]
    for i in range(23):
        bound = best * (1 + sign * threshold) if threshold_mode == "rel" else \
            best + sign * threshold
        value = [bound - sign * 1e-4, best, bound + sign * 1e-4][i % 3]
        best = value if i % 3 == 2 else best
        values.append(value)
    return values


def plateau_trace(sched, metrics):
    """After each metric: the lrs, and the scheduler's best, bad-epoch count and cooldown."""
    rows = []
    for metric in metrics:
        sched.step(metric)
        rows.append([*sched.get_last_lr(), sched.best, sched.num_bad_epochs,
                     sched.cooldown_counter])
    return rows


def plateau_traces(torch, kwargs, metrics):
    return [plateau_trace(lib.optim.lr_scheduler.ReduceLROnPlateau(make_optimizer(lib, "sgd"),
                                                                   **kwargs), metrics)
            for lib in (jt, torch)]


@pytest.mark.parametrize("kwargs", PLATEAU_CASES, ids=str)
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    mine, theirs = plateau_traces(torch, kwargs, metric_sequence(kwargs.get("mode", "min")))
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-15)
    assert mine[-1][0] < 0.1  # it did reduce


@pytest.mark.parametrize("threshold", [0.1, 0.0])
@pytest.mark.parametrize("threshold_mode", ["rel", "abs"])
@pytest.mark.parametrize("mode", ["min", "max"])
def test_reduce_lr_on_plateau_threshold_boundaries(mode, threshold_mode, threshold):
    torch = pytest.importorskip("torch")
    kwargs = {"mode": mode, "threshold_mode": threshold_mode, "threshold": threshold,
              "patience": 1, "factor": 0.5}
    mine, theirs = plateau_traces(torch, kwargs,
                                  borderline_metrics(mode, threshold_mode, threshold))
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-15)


def test_reduce_lr_on_plateau_state_dict_and_tensor_metric():
    metrics = metric_sequence("min")
    kwargs = {"patience": 1, "cooldown": 2, "threshold_mode": "abs", "threshold": 0.01}
    straight = plateau_trace(lr_scheduler.ReduceLROnPlateau(make_optimizer(jt, "sgd"),
                                                            **kwargs), metrics)
    opt = make_optimizer(jt, "sgd")
    sched = lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    plateau_trace(sched, [jt.tensor(m, dtype=jt.float64) for m in metrics[:20]])
    resumed = lr_scheduler.ReduceLROnPlateau(make_optimizer(jt, "sgd"), mode="max")
    resumed.optimizer.load_state_dict(opt.state_dict())
    resumed.load_state_dict(copy.deepcopy(sched.state_dict()))
    assert resumed.mode == "min" and resumed.mode_worse == float("inf")
    assert plateau_trace(resumed, metrics[20:]) == straight[20:]


def steps(sched, count):
    for _ in range(count):
        sched.step()


# Bad constructions and steps: (optimizer kind, function of the scheduler module and a fresh
# optimizer of that kind).
SCHEDULER_ERRORS = {
    "not-an-optimizer": ("sgd", lambda S, o: S.StepLR([1], 3)),
    "resume-without-initial_lr": ("sgd", lambda S, o: S.StepLR(o, 3, last_epoch=4)),
    "ConstantLR-factor": ("sgd", lambda S, o: S.ConstantLR(o, factor=1.5)),
    "LinearLR-start": ("sgd", lambda S, o: S.LinearLR(o, start_factor=0)),
    "LinearLR-end": ("sgd", lambda S, o: S.LinearLR(o, end_factor=-0.1)),
    "LambdaLR-count": ("sgd", lambda S, o: S.LambdaLR(o, [decay])),
    "MultiplicativeLR-not-callable": ("sgd", lambda S, o: S.MultiplicativeLR(o, 0.9)),
    "WarmRestarts-T_0": ("sgd", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0)),
    "WarmRestarts-T_mult": ("sgd", lambda S, o: S.CosineAnnealingWarmRestarts(o, 2, T_mult=0)),
    "WarmRestarts-eta_min": ("sgd", lambda S, o: S.CosineAnnealingWarmRestarts(
        o, 2, eta_min="0")),
    "WarmRestarts-negative-epoch": ("sgd", lambda S, o: S.CosineAnnealingWarmRestarts(
        o, 2).step(-1)),
    "SequentialLR-empty": ("sgd", lambda S, o: S.SequentialLR(o, [], [])),
    "SequentialLR-milestones": ("sgd", lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o), S.StepLR(o, 2)], [1, 2])),
    "SequentialLR-plateau": ("sgd", lambda S, o: S.SequentialLR(
        o, [S.ReduceLROnPlateau(o)], [])),
    "SequentialLR-no-optimizer": ("sgd", lambda S, o: S.SequentialLR(o, [object()], [])),
    "ChainedScheduler-empty": ("sgd", lambda S, o: S.ChainedScheduler([])),
    "Plateau-factor": ("sgd", lambda S, o: S.ReduceLROnPlateau(o, factor=1.0)),
    "Plateau-mode": ("sgd", lambda S, o: S.ReduceLROnPlateau(o, mode="mean")),
    "Plateau-threshold_mode": ("sgd", lambda S, o: S.ReduceLROnPlateau(
        o, threshold_mode="ratio")),
    "Plateau-min_lr": ("sgd", lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1])),
    "CyclicLR-mode": ("sgd", lambda S, o: S.CyclicLR(o, 0.1, 1.0, mode="sine")),
    "CyclicLR-base_lr-count": ("sgd", lambda S, o: S.CyclicLR(o, [0.1], 1.0)),
    "CyclicLR-no-momentum": ("adagrad", lambda S, o: S.CyclicLR(o, 0.1, 1.0)),
    "OneCycleLR-no-total": ("sgd", lambda S, o: S.OneCycleLR(o, 1.0)),
    "OneCycleLR-total_steps": ("sgd", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=0)),
    "OneCycleLR-epochs": ("sgd", lambda S, o: S.OneCycleLR(o, 1.0, epochs=0,
                                                           steps_per_epoch=3)),
    "OneCycleLR-steps_per_epoch": ("sgd", lambda S, o: S.OneCycleLR(o, 1.0, epochs=2,
                                                                    steps_per_epoch=1.5)),
    "OneCycleLR-pct_start": ("sgd", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=10,
                                                              pct_start=1.5)),
    "OneCycleLR-anneal": ("sgd", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=10,
                                                           anneal_strategy="exp")),
    "OneCycleLR-no-momentum": ("adagrad", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=10)),
    "OneCycleLR-past-the-end": ("sgd", lambda S, o: steps(S.OneCycleLR(o, 1.0, total_steps=3),
                                                          4)),
}


@pytest.mark.parametrize("name", SCHEDULER_ERRORS)
def test_scheduler_errors_match_torch(name):
    torch = pytest.importorskip("torch")
    kind, make = SCHEDULER_ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's stepping-order warning
        assert_same_error(lambda: make(lr_scheduler, make_optimizer(jt, kind)),
                          lambda: make(torch.optim.lr_scheduler, make_optimizer(torch, kind)))


def test_composite_refuses_another_optimizer():
    first, second = make_optimizer(jt, "sgd"), make_optimizer(jt, "sgd")
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same "
                                         "optimizer, but got scheduler StepLR at index 1"):
        lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(first, 2),
                                       lr_scheduler.StepLR(second, 2)])
