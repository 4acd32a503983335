"""Tensor hooks (register_hook, register_post_accumulate_grad_hook, retain_grad) and
nn.Module hooks (forward, backward, state dict, global), run the same way on jitensor and
torch (`ns` is the module) and compared: values, gradients, call order and errors."""
import numpy as np
import pytest

import jitensor as jt
from jitensor.nn.modules import module as jt_module

torch = pytest.importorskip("torch")
import torch.nn.modules.module as torch_module  # noqa: E402

X = np.array([0.5, -1.5, 2.0])
GLOBAL = {jt: jt_module, torch: torch_module}


def _plain(v):
    if isinstance(v, (jt.Tensor, torch.Tensor)):
        return v.detach().numpy().tolist()
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def same(run):
    assert _plain(run(jt)) == _plain(run(torch))


def same_error(run):
    with pytest.raises(Exception) as theirs:
        run(torch)
    with pytest.raises(type(theirs.value)) as ours:
        run(jt)
    assert str(ours.value) == str(theirs.value)


def _x(ns):
    return ns.tensor(X, requires_grad=True)


# -- tensor hooks -------------------------------------------------------------------------------
def test_hooks_on_leaves_and_non_leaves_order_and_replacement():
    def run(ns):
        log = []
        x = _x(ns)
        x.register_hook(lambda g: log.append(("x", g)) or g * 10)
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post", t.grad)))
        y = x * 3
        y.register_hook(lambda g: log.append(("y", g)))
        y.retain_grad()
        y.register_hook(lambda g: log.append(("y2", g)) or g * 2)
        log.append(ns.autograd.grad(y.sum(), x, retain_graph=True))
        log.append(("y.grad", y.grad))
        y.sum().backward()
        log.append((x.grad, y.grad))
        return log
    same(run)


def test_hook_handle_remove_and_context():
    def run(ns):
        log = []
        x = _x(ns)
        h = x.register_hook(lambda g: log.append("a"))
        with x.register_hook(lambda g: log.append("b")):
            (x * 2).sum().backward()
        h.remove()
        h.remove()  # twice: nothing
        (x * 2).sum().backward()
        return log, x.grad
    same(run)


def test_hooks_and_in_place_ops():
    def run(ns):
        log = []
        x = _x(ns)
        a = x * 1
        a.register_hook(lambda g: log.append(("before", g)))
        a.mul_(2)
        a.register_hook(lambda g: log.append(("after", g)))
        a.sum().backward()
        return log
    same(run)


def test_hooks_on_outputs_without_gradient():
    def run(ns):
        log = []
        p, q = (_x(ns) * 1).split([1, 2])
        p.register_hook(lambda g: log.append(("p", g)))
        q.register_hook(lambda g: log.append(("q", g)))
        p.sum().backward()
        return log
    same(run)


@pytest.mark.parametrize("case", ["no_grad", "post_non_leaf", "retain_no_grad"])
def test_tensor_hook_errors(case):
    def run(ns):
        if case == "no_grad":
            ns.ones(2).register_hook(print)
        elif case == "post_non_leaf":
            (_x(ns) * 2).register_post_accumulate_grad_hook(print)
        else:
            ns.ones(2).retain_grad()
    same_error(run)


# -- module hooks -------------------------------------------------------------------------------
def _linear(ns):
    ns.manual_seed(0)
    m = ns.nn.Linear(3, 2).double()
    with ns.no_grad():
        m.weight.copy_(ns.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        m.bias.copy_(ns.tensor([0.05, -0.05]))
    return m


def test_forward_pre_hooks_and_forward_hooks():
    def run(ns):
        log = []
        m = _linear(ns)
        m.register_forward_pre_hook(lambda mod, args: log.append("pre") or (args[0] * 2,))
        m.register_forward_pre_hook(lambda mod, args: log.append("pre first"), prepend=True)
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: log.append(("pre kw", sorted(kwargs))), with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("hook", args)) or out + 1)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append("kw"),
                                with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append("hook first"), prepend=True)
        out = m(_x(ns))
        return log, out
    same(run)


def test_forward_pre_hook_with_kwargs_must_return_pair():
    def run(ns):
        m = _linear(ns)
        m.register_forward_pre_hook(lambda mod, args, kwargs: "args", with_kwargs=True)
        m(_x(ns))
    same_error(run)


def test_always_call_forward_hook_runs_when_forward_raises():
    def run(ns):
        log = []
        m = _linear(ns)
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)),
                                always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append("never"))
        try:
            m(ns.ones(4, dtype=ns.float64))
        except RuntimeError:
            log.append("raised")
        return log
    same(run)


def test_full_backward_hooks():
    def run(ns):
        log = []
        m = _linear(ns)
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", go)))
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append(("full", gi, go)) or (gi[0] * 2,))
        x = _x(ns)
        m(x).sum().backward()
        log.append(("x.grad", x.grad, m.weight.grad))
        return log
    same(run)


def test_full_backward_pre_hook_replaces_grad_output():
    def run(ns):
        m = _linear(ns)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
        x = _x(ns)
        m(x).sum().backward()
        return x.grad, m.bias.grad
    same(run)


def test_full_backward_hook_without_input_requiring_grad():
    def run(ns):
        log = []
        m = _linear(ns)
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            m(ns.tensor(X)).sum().backward()
        return log
    same(run)


def test_full_backward_hook_wrong_count_raises():
    def run(ns):
        m = _linear(ns)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        m(_x(ns)).sum().backward()
    same_error(run)


def test_global_module_hooks_run_before_the_modules():
    def run(ns):
        log = []
        g = GLOBAL[ns]
        m = ns.nn.Sequential(_linear(ns), ns.nn.Tanh())
        m[0].register_forward_hook(lambda mod, a, o: log.append("own"))
        handles = [
            g.register_module_forward_pre_hook(lambda mod, a: log.append(("pre", type(mod)
                                                                           .__name__))),
            g.register_module_forward_hook(lambda mod, a, o: log.append(("post", type(mod)
                                                                         .__name__))),
            g.register_module_full_backward_hook(lambda mod, gi, go: log.append(
                ("bw", type(mod).__name__))),
        ]
        try:
            m(_x(ns)).sum().backward()
        finally:
            for h in handles:
                h.remove()
        m(_x(ns))
        return log
    same(run)


def test_state_dict_hooks():
    def run(ns):
        log = []
        m = ns.nn.Sequential(_linear(ns))
        m[0].register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix)))
        m.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta: log.append(("post", sorted(sd))))

        def drop_bias(mod, sd, prefix, meta):
            del sd[prefix + "bias"]
        m[0]._register_state_dict_hook(drop_bias)
        return log, sorted(m.state_dict())
    same(run)


def test_state_dict_post_hook_must_return_none():
    def run(ns):
        m = _linear(ns)
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd)
        m.state_dict()
    same_error(run)


def test_load_state_dict_hooks():
    def run(ns):
        log = []
        m = ns.nn.Sequential(_linear(ns))

        def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            log.append(("pre", prefix))
            if prefix + "w" in sd:
                sd[prefix + "weight"] = sd.pop(prefix + "w")
        m[0].register_load_state_dict_pre_hook(rename)
        m.register_load_state_dict_post_hook(
            lambda mod, keys: log.append(("post", list(keys.missing_keys),
                                          list(keys.unexpected_keys))))
        sd = {"0.w": ns.ones(2, 3, dtype=ns.float64), "extra": ns.ones(1)}
        result = m.load_state_dict(sd, strict=False)
        log.append((sorted(sd), m[0].weight, list(result.missing_keys),
                    list(result.unexpected_keys)))
        return log
    same(run)


def test_hooks_survive_pickling_old_modules():
    m = _linear(jt)
    state = dict(m.__dict__)
    del state["_forward_hooks"]
    fresh = jt.nn.Linear.__new__(jt.nn.Linear)
    fresh.__setstate__(state)
    assert fresh._forward_hooks == {}
    with jt.no_grad():
        np.testing.assert_array_equal(fresh(jt.tensor(X)).numpy(), m(jt.tensor(X)).numpy())


def test_legacy_backward_hook_is_registered():
    # (it runs as a full backward hook: tests/test_module_methods.py)
    m = _linear(jt)
    m.register_backward_hook(print).remove()
    assert not m._backward_hooks
