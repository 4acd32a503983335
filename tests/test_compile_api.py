"""jitensor.compile's API as torch.compile's (its fusion: tests/test_fusion.py): results equal
eager ones, modules keep parameters, state dict keys (with torch's `_orig_mod.` prefix), hooks
and train/eval; arguments checked as torch checks them."""
import numpy as np
import pytest

import jitensor as jt


def _model():
    jt.manual_seed(0)
    return jt.nn.Sequential(jt.nn.Linear(4, 8), jt.nn.GELU(), jt.nn.Linear(8, 2))


def test_a_compiled_module_runs_the_module():
    model = _model()
    compiled = jt.compile(model)
    x = jt.randn(3, 4)
    np.testing.assert_array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is model
    assert list(compiled.state_dict()) == [f"_orig_mod.{k}" for k in model.state_dict()]
    assert all(p is q for p, q in zip(compiled.parameters(), model.parameters(), strict=True))
    assert jt.compile(jt.nn.Linear(2, 3)).out_features == 3  # attributes of the original
    compiled.eval()
    assert not model.training
    seen = []
    model.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
    compiled(x).sum().backward()
    assert seen == [(3, 2)] and model[0].weight.grad is not None
    assert model.compile() is None and model(x).shape == (3, 2)


def test_compiled_functions_and_decorators():
    def f(x, y=1.0):
        return (x * y).relu()

    x = jt.randn(5)
    for compiled in (jt.compile(f), jt.compile()(f), jt.compile(mode="reduce-overhead")(f),
                     jt.compile(f, backend="eager", fullgraph=True, dynamic=True)):
        np.testing.assert_array_equal(compiled(x, y=2.0).numpy(), f(x, 2.0).numpy())
        assert compiled.__name__ == "f"
    assert jt.compile(f, disable=True) is f


def test_arguments_are_checked_as_torch_does():
    with pytest.raises(RuntimeError, match="Either mode or options"):
        jt.compile(_model(), mode="default", options={})
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest"):
        jt.compile(_model(), mode="fastest")
    with pytest.raises(RuntimeError, match="Invalid backend: 'nope'"):
        jt.compile(_model(), backend="nope")
    with pytest.raises(RuntimeError, match="must be a function or a Module"):
        jt.compile(3)


def test_compiler_namespace():
    assert not jt.compiler.is_compiling() and not jt.compiler.is_dynamo_compiling()
    assert "eager" in jt.compiler.list_backends()
    assert jt.compiler.get_default_backend() == "inductor"
    with pytest.raises(RuntimeError, match="Invalid backend"):
        jt.compiler.set_default_backend("nope")

    @jt.compiler.disable
    def g(x):
        return x + 1
    assert g(jt.ones(1)).tolist() == [2.0]
    assert jt.compiler.disable(recursive=False)(g)(jt.ones(1)).tolist() == [2.0]
    import jitensor._dynamo as dynamo
    dynamo.config.suppress_errors = True
    dynamo.reset()
    assert dynamo.OptimizedModule is jt.compiler.OptimizedModule
