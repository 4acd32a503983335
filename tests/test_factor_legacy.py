"""torch's older top-level linear algebra (svd, cholesky, lu, lu_solve, lu_unpack,
triangular_solve, matrix_power, chain_matmul) and the removed functions, against torch."""
import warnings

import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _pair(a):
    return jt.tensor(a), torch.tensor(a)


def _close(mine, theirs, tol=1e-10):
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 3), (2, 3, 5)])
@pytest.mark.parametrize("some", [True, False])
def test_svd_reconstructs_and_matches_torch_singular_values(shape, some):
    a = RNG.standard_normal(shape)
    (m, t) = _pair(a)
    U, S, V = jt.svd(m, some=some)
    tU, tS, tV = torch.svd(t, some=some)
    for mine, theirs in ((U, tU), (S, tS), (V, tV)):
        assert tuple(mine.shape) == tuple(theirs.shape)
    _close(S, tS)
    k = S.shape[-1]
    rebuilt = (U[..., :k] * S[..., None, :]) @ V[..., :k].mT
    np.testing.assert_allclose(rebuilt.numpy(), a, atol=1e-10)
    U0, S0, V0 = jt.svd(m, compute_uv=False)
    tU0, tS0, tV0 = torch.svd(t, compute_uv=False)
    for mine, theirs in ((U0, tU0), (S0, tS0), (V0, tV0)):
        _close(mine, theirs)
    named = jt.svd(m, some=some)
    assert type(named).__name__ == "svd" and named.V.shape == V.shape


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_torch(upper):
    b = RNG.standard_normal((3, 4, 4))
    a = b @ b.transpose(0, 2, 1) + 4 * np.eye(4)
    m, t = _pair(a)
    _close(jt.cholesky(m, upper), torch.cholesky(t, upper))
    _close(m.cholesky(upper=upper), t.cholesky(upper=upper))
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        warnings.simplefilter("always")
        jt.cholesky(m)


def test_lu_family_matches_torch():
    a = RNG.standard_normal((2, 4, 4))
    rhs = RNG.standard_normal((2, 4, 3))
    m, t = _pair(a)
    LU, piv = jt.lu(m)
    tLU, tpiv = torch.lu(t)
    _close(LU, tLU)
    assert piv.tolist() == tpiv.tolist() and piv.dtype is jt.int32
    _, _, info = jt.lu(m, get_infos=True)
    assert info.tolist() == [0, 0]
    _close(jt.lu_solve(jt.tensor(rhs), LU, piv), torch.lu_solve(torch.tensor(rhs), tLU, tpiv))
    _close(jt.tensor(rhs).lu_solve(LU, piv), torch.tensor(rhs).lu_solve(tLU, tpiv))
    for flags in [(True, True), (True, False), (False, True)]:
        for mine, theirs in zip(jt.lu_unpack(LU, piv, *flags), torch.lu_unpack(tLU, tpiv,
                                                                               *flags),
                                strict=True):
            _close(mine, theirs)
    P, L, U = jt.lu_unpack(LU, piv)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    _close(jt.lu(jt.tensor(singular))[0], torch.lu(torch.tensor(singular))[0])


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_lu_unpack_of_rectangular_factors(shape):
    a = RNG.standard_normal(shape)
    LU, piv = jt.linalg.lu_factor(jt.tensor(a))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(a))
    for mine, theirs in zip(jt.lu_unpack(LU, piv), torch.lu_unpack(tLU, tpiv), strict=True):
        _close(mine, theirs)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_triangular_solve_matches_torch(upper, transpose, unitriangular):
    a = RNG.standard_normal((2, 4, 4)) + 4 * np.eye(4)
    b = RNG.standard_normal((2, 4, 2))
    (ma, ta), (mb, tb) = _pair(a), _pair(b)
    mine = jt.triangular_solve(mb, ma, upper, transpose, unitriangular)
    theirs = torch.triangular_solve(tb, ta, upper, transpose, unitriangular)
    _close(mine.solution, theirs.solution)
    _close(mine.cloned_coefficient, theirs.cloned_coefficient)
    _close(mb.triangular_solve(ma, upper)[0], tb.triangular_solve(ta, upper)[0])


def test_matrix_power_and_chain_matmul():
    a = RNG.standard_normal((3, 3))
    m, t = _pair(a)
    for n in (0, 1, 3, -2):
        _close(jt.matrix_power(m, n), torch.matrix_power(t, n), 1e-9)
        _close(m.matrix_power(n), t.matrix_power(n), 1e-9)
    mats = [RNG.standard_normal(s) for s in [(2, 3), (3, 4), (4, 2)]]
    _close(jt.chain_matmul(*map(jt.tensor, mats)), torch.chain_matmul(*map(torch.tensor, mats)))
    _close(jt.chain_matmul(m), torch.chain_matmul(t))


def test_grads_flow_through_svd_and_triangular_solve():
    a = RNG.standard_normal((4, 3))
    m, t = jt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    jt.svd(m)[1].sum().backward()
    torch.svd(t)[1].sum().backward()
    _close(m.grad, t.grad, 1e-9)


@pytest.mark.parametrize("name", ["solve", "eig", "symeig", "lstsq", "matrix_rank"])
def test_removed_functions_raise_torchs_error(name):
    a = jt.eye(2)
    with pytest.raises(RuntimeError) as mine:
        getattr(jt, name)(a, a)
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch, name)(torch.eye(2), torch.eye(2))
    assert str(mine.value).startswith("This function was deprecated since version 1.9 and is "
                                      "now removed.")
    assert str(theirs.value).split(".")[0] == str(mine.value).split(".")[0]
    if name != "matrix_rank":
        with pytest.raises(RuntimeError, match="now removed"):
            getattr(a, name)(a)
