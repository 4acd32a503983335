"""torch.autograd's remaining public helpers: Variable (the pre-0.4 wrapper), gradgradcheck,
is_tensor_like; each as torch behaves."""
import numpy as np
import pytest

import jitensor as jt
from jitensor.autograd import Variable, gradgradcheck, is_tensor_like

torch = pytest.importorskip("torch")


def test_variable_is_a_detached_leaf_sharing_data():
    for lib in (jt, torch):
        t = lib.ones(2)
        v = lib.autograd.Variable(t, requires_grad=True)
        assert v is not t and v.requires_grad and not t.requires_grad and v.is_leaf
        assert isinstance(t, lib.autograd.Variable)
        with lib.no_grad():
            v[0] = 5
        assert t[0].item() == 5
        w = lib.ones(2, requires_grad=True) * 2
        assert lib.autograd.Variable(w).grad_fn is None
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
            lib.autograd.Variable(3)
        with pytest.warns(UserWarning, match="volatile was removed"):
            lib.autograd.Variable(t, volatile=True)
    assert not isinstance(3, Variable)
    assert jt.autograd.variable.Variable is Variable


def test_is_tensor_like():
    assert is_tensor_like(jt.ones(1)) and not is_tensor_like(3) and not is_tensor_like(
        np.ones(1))


def test_gradgradcheck_passes_and_catches_a_wrong_second_derivative():
    x = jt.tensor(np.random.default_rng(0).standard_normal(4), requires_grad=True)
    assert gradgradcheck(lambda t: (t.sin() * t).sum(), (x,))
    assert gradgradcheck(lambda t: t.tanh() ** 2, x)

    class WrongSecond(jt.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t ** 3

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * 3 * t * t.detach()  # drops half of the second derivative

    assert not gradgradcheck(WrongSecond.apply, (x,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradgradcheck(WrongSecond.apply, (x,))
    with pytest.raises(NotImplementedError, match="check_batched_grad"):
        gradgradcheck(lambda t: t * 2, (x,), check_batched_grad=True)
