"""jitensor.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) against
torch.autograd.functional: values, result structure (Tensor vs tuples), create_graph, strict
mode and errors."""
import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
A, B = RNG.standard_normal(3), RNG.standard_normal((2, 3))


def _pairs(*arrays):
    return tuple(jt.tensor(a) for a in arrays), tuple(torch.tensor(a) for a in arrays)


def _same(mine, theirs):
    if isinstance(theirs, tuple):
        assert isinstance(mine, tuple) and len(mine) == len(theirs)
        for m, t in zip(mine, theirs, strict=True):
            _same(m, t)
        return
    assert isinstance(mine, jt.Tensor)
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)


def one(x):
    return (x.sin() * x).sum()


def two(x, w):
    return (w @ x).tanh(), x.exp()


def vector(x):
    return x.sin() * x


@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
def test_products_match_torch(name):
    (mine_x,), (theirs_x,) = _pairs(A)
    (mine_v,), (theirs_v,) = _pairs(RNG.standard_normal(3))
    f = vector if name in ("vjp", "jvp") else one
    _same(getattr(jt.autograd.functional, name)(f, mine_x, mine_v),
          getattr(torch.autograd.functional, name)(f, theirs_x, theirs_v))
    _same(getattr(jt.autograd.functional, name)(f, (mine_x,), (mine_v,)),
          getattr(torch.autograd.functional, name)(f, (theirs_x,), (theirs_v,)))


def test_vjp_and_jvp_of_several_inputs_and_outputs():
    (x, w), (tx, tw) = _pairs(A, B)
    (u, s), (tu, ts) = _pairs(RNG.standard_normal(2), RNG.standard_normal(3))
    _same(jt.autograd.functional.vjp(two, (x, w), (u, s)),
          torch.autograd.functional.vjp(two, (tx, tw), (tu, ts)))
    (dx, dw), (tdx, tdw) = _pairs(RNG.standard_normal(3), RNG.standard_normal((2, 3)))
    _same(jt.autograd.functional.jvp(two, (x, w), (dx, dw)),
          torch.autograd.functional.jvp(two, (tx, tw), (tdx, tdw)))


@pytest.mark.parametrize("f,args", [(vector, (A,)), (two, (A, B)), (one, (A,))])
def test_jacobian_matches_torch(f, args):
    mine, theirs = _pairs(*args)
    _same(jt.autograd.functional.jacobian(f, mine), torch.autograd.functional.jacobian(f, theirs))
    if len(args) == 1:
        _same(jt.autograd.functional.jacobian(f, mine[0]),
              torch.autograd.functional.jacobian(f, theirs[0]))


def test_hessian_matches_torch():
    (x, w), (tx, tw) = _pairs(A, B)
    _same(jt.autograd.functional.hessian(one, x), torch.autograd.functional.hessian(one, tx))

    def scalar(x, w):
        return (w @ x).pow(2).sum()
    _same(jt.autograd.functional.hessian(scalar, (x, w)),
          torch.autograd.functional.hessian(scalar, (tx, tw)))


def test_create_graph_keeps_the_result_differentiable():
    x = jt.tensor(A, requires_grad=True)
    tx = torch.tensor(A, requires_grad=True)
    _, g = jt.autograd.functional.vjp(one, x, create_graph=True)
    _, tg = torch.autograd.functional.vjp(one, tx, create_graph=True)
    assert g.requires_grad
    g.sum().backward()
    tg.sum().backward()
    _same(x.grad, tx.grad)
    _, plain = jt.autograd.functional.vjp(one, x)
    assert not plain.requires_grad


def test_unused_inputs_strict_and_errors_match_torch():
    def ignores_w(x, w):
        return x * 2

    (x, w), (tx, tw) = _pairs(A, A)
    _same(jt.autograd.functional.jacobian(ignores_w, (x, w)),
          torch.autograd.functional.jacobian(ignores_w, (tx, tw)))
    for lib, args in ((jt, (x, w)), (torch, (tx, tw))):
        with pytest.raises(RuntimeError, match="independent of input 1"):
            lib.autograd.functional.jacobian(ignores_w, args, strict=True)
        with pytest.raises(RuntimeError, match="can only be None"):
            lib.autograd.functional.vjp(vector, args[0])
        with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
            lib.autograd.functional.vjp(vector, [args[0]])
        with pytest.raises(RuntimeError, match="single element"):
            lib.autograd.functional.hessian(vector, args[0])
