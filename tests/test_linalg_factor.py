"""torch.linalg's factorisations and solvers (ops/factor.py, kernels kernels/*/factor.py)
and the composed norms and products of jitensor/linalg.py: torch is the oracle for values,
dtypes, shapes, gradients and errors (NumPy for the factors where torch is absent)."""
import math

import numpy as np
import pytest
from conftest import assert_grads_match_torch, linalg_errors_match_torch
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")

TOL = {jt.float64: dict(rtol=1e-10, atol=1e-10), jt.float32: dict(rtol=2e-4, atol=2e-4)}


def well_conditioned(batch, n, seed, dtype=np.float64):
    """Random matrices plus n on the diagonal: invertible, pivoting still exercised."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(tuple(batch) + (n, n)) + n * np.eye(n)[::-1]  # pivots swap rows
    return a.astype(dtype)


def spd(batch, n, seed):
    a = np.random.default_rng(seed).standard_normal(tuple(batch) + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def both(a, grad=False):
    return (jt.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad))


def check(mine, theirs, dtype=jt.float64):
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), **TOL[dtype])


batches = st.lists(st.integers(0, 3), max_size=2)


@settings(max_examples=20, deadline=None)
@given(batch=batches, n=st.integers(0, 6), k=st.integers(1, 3),
       dtype=st.sampled_from([jt.float32, jt.float64]), seed=st.integers(0, 99))
def test_solve_inv_det_match_torch(batch, n, k, dtype, seed):
    npd = np.float64 if dtype is jt.float64 else np.float32
    a = well_conditioned(batch, n, seed, npd)
    b = np.random.default_rng(seed + 1).standard_normal(tuple(batch) + (n, k)).astype(npd)
    (A, tA), (B, tB) = both(a), both(b)
    check(jt.linalg.solve(A, B), torch.linalg.solve(tA, tB), dtype)
    check(jt.linalg.solve(A, B[..., 0]), torch.linalg.solve(tA, tB[..., 0]), dtype)
    check(jt.linalg.inv(A), torch.linalg.inv(tA), dtype)
    check(jt.linalg.det(A), torch.linalg.det(tA), dtype)
    sign, logabs = jt.linalg.slogdet(A)
    tsign, tlogabs = torch.linalg.slogdet(tA)
    check(sign, tsign, dtype)
    check(logabs, tlogabs, dtype)
    bt = np.swapaxes(b, -1, -2).copy()
    check(jt.linalg.solve(A, jt.tensor(bt), left=False),
          torch.linalg.solve(tA, torch.tensor(bt), left=False), dtype)


@settings(max_examples=15, deadline=None)
@given(batch=batches, m=st.integers(0, 5), n=st.integers(0, 5), seed=st.integers(0, 99))
def test_lu_factor_and_lu_match_torch(batch, m, n, seed):
    a = np.random.default_rng(seed).standard_normal(tuple(batch) + (m, n))
    A, tA = both(a)
    LU, piv, info = jt.linalg.lu_factor_ex(A)
    tLU, tpiv, tinfo = torch.linalg.lu_factor_ex(tA)
    check(LU, tLU)
    assert piv.dtype is jt.int32 and info.dtype is jt.int32
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())
    P, L, U = jt.linalg.lu(A)
    for mine, theirs in zip((P, L, U), torch.linalg.lu(tA), strict=False):
        check(mine, theirs)


def test_lu_solve_all_forms_match_torch():
    a = well_conditioned((2,), 4, 3)
    b = np.random.default_rng(4).standard_normal((2, 4, 3))
    LU, piv = jt.linalg.lu_factor(jt.tensor(a))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(a))
    for left in (True, False):
        for adjoint in (False, True):
            B = b if left else np.swapaxes(b, -1, -2).copy()
            check(jt.linalg.lu_solve(LU, piv, jt.tensor(B), left=left, adjoint=adjoint),
                  torch.linalg.lu_solve(tLU, tpiv, torch.tensor(B), left=left, adjoint=adjoint))


@settings(max_examples=15, deadline=None)
@given(batch=batches, n=st.integers(0, 6), upper=st.booleans(), seed=st.integers(0, 99))
def test_cholesky_and_its_solvers_match_torch(batch, n, upper, seed):
    A, tA = both(spd(batch, n, seed))
    L, tL = jt.linalg.cholesky(A, upper=upper), torch.linalg.cholesky(tA, upper=upper)
    check(L, tL)
    b = np.random.default_rng(seed).standard_normal(tuple(batch) + (n, 2))
    check(jt.cholesky_solve(jt.tensor(b), L, upper), torch.cholesky_solve(torch.tensor(b), tL,
                                                                          upper))
    check(jt.cholesky_inverse(L, upper), torch.cholesky_inverse(tL, upper))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_matches_torch(upper, left, unit):
    a = well_conditioned((2,), 4, 1)
    b = np.random.default_rng(2).standard_normal((2, 4, 3) if left else (2, 3, 4))
    (A, tA), (B, tB) = both(a, True), both(b, True)
    out = jt.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)
    theirs = torch.linalg.solve_triangular(tA, tB, upper=upper, left=left, unitriangular=unit)
    check(out, theirs)
    assert_grads_match_torch(torch, np.random.default_rng(0), out, theirs, (A, B), (tA, tB),
                             1e-9, 1e-9)


@pytest.mark.parametrize("name", ["solve", "solve_vector", "solve_right", "inv", "det",
                                  "slogdet", "cholesky", "cholesky_upper", "lu_solve", "logdet"])
def test_gradients_match_torch(name):
    a = well_conditioned((2,), 3, 5)
    if name.startswith("cholesky") or name == "logdet":
        a = spd((2,), 3, 5)
    b = np.random.default_rng(6).standard_normal((2, 3, 2))
    (A, tA), (B, tB) = both(a, True), both(b, True)
    mine, theirs = (A, B), (tA, tB)

    def run(lib, A, B):
        la = lib.linalg
        if name == "solve":
            return la.solve(A, B)
        if name == "solve_vector":
            return la.solve(A, B[..., 0])
        if name == "solve_right":
            return la.solve(A, B.mT, left=False)
        if name == "inv":
            return la.inv(A)
        if name == "det":
            return la.det(A)
        if name == "slogdet":
            return la.slogdet(A)[1]
        if name == "logdet":
            return lib.logdet(A)
        if name.startswith("cholesky"):
            return la.cholesky(A, upper=name.endswith("upper"))
        LU, piv = la.lu_factor(A.detach())
        return la.lu_solve(LU, piv, B)
    out, ref = run(jt, A, B), run(torch, tA, tB)
    check(out, ref)
    used = (0, 1) if name.startswith("solve") else (1,) if name == "lu_solve" else (0,)
    assert_grads_match_torch(torch, np.random.default_rng(1), out, ref, [mine[i] for i in used],
                             [theirs[i] for i in used], 1e-8, 1e-9)


def test_double_backward_of_inv():
    a = well_conditioned((), 3, 7)
    (A, tA) = both(a, True)
    g, = jt.autograd.grad(jt.linalg.inv(A).sum(), A, create_graph=True)
    tg, = torch.autograd.grad(torch.linalg.inv(tA).sum(), tA, create_graph=True)
    check(g, tg)
    (gg,), (tgg,) = jt.autograd.grad((g * g).sum(), A), torch.autograd.grad((tg * tg).sum(), tA)
    check(gg, tgg)


def test_singular_and_indefinite_matrices():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    A, tA = both(np.stack([np.eye(2), s]))
    check(jt.linalg.det(A), torch.linalg.det(tA))
    sign, logabs = jt.linalg.slogdet(A)
    assert sign.tolist() == [1.0, 0.0] and logabs.tolist()[1] == -math.inf
    for call in (lambda la, X: la.inv(X), lambda la, X: la.solve(X, X),
                 lambda la, X: la.cholesky(X), lambda la, X: la.lu_factor(X)):
        with pytest.raises(RuntimeError) as theirs:
            call(torch.linalg, tA)
        with pytest.raises(jt.linalg.LinAlgError if "lu_factor" not in str(theirs.value)
                           else RuntimeError) as ours:
            call(jt.linalg, A)
        assert str(ours.value) == str(theirs.value)
    inverse, info = jt.linalg.inv_ex(A)
    assert info.tolist() == [0, 2] and info.dtype is jt.int32
    L, info = jt.linalg.cholesky_ex(A)
    assert info.tolist() == torch.linalg.cholesky_ex(tA).info.tolist()
    assert jt.logdet(-jt.eye(3, dtype=jt.float64)).isnan().item()


@pytest.mark.parametrize("call", [
    lambda la, m: la.inv(m.ones(2, 3)),
    lambda la, m: la.inv(m.ones(3)),
    lambda la, m: la.inv(m.ones(2, 2, dtype=m.int64)),
    lambda la, m: la.solve(m.eye(2), m.ones(3)),
    lambda la, m: la.solve(m.eye(2), m.ones(2, 1, dtype=m.float64)),
    lambda la, m: la.solve_triangular(m.eye(2), m.ones(2), upper=True),
    lambda la, m: la.solve_triangular(m.eye(2), m.ones(3, 1), upper=True),
    lambda la, m: la.lu_factor(m.eye(2), pivot=False),
    lambda la, m: la.matrix_norm(m.ones(2, 2), ord=3),
    lambda la, m: la.matrix_norm(m.ones(2, 3), dim=(0, 1, 2)),
    lambda la, m: la.matrix_norm(m.ones(2, 3), dim=(1, -1)),
    lambda la, m: la.matrix_norm(m.ones(2, 3), dim=(0, 5)),
    lambda la, m: la.norm(m.ones(2, 3), ord="fro", dim=(1,)),
    lambda la, m: la.norm(m.ones(2, 3), dim=(0, 1, 1)),
    lambda la, m: la.vector_norm(m.zeros(2, 0), ord=math.inf, dim=1),
    lambda la, m: la.vector_norm(m.zeros(2, 0), ord=-math.inf, dim=(-1,)),
    lambda la, m: la.vector_norm(m.zeros(0, 0), ord=-1.0, dim=(1, 0)),
    lambda la, m: la.vector_norm(m.zeros(3, 0, 2), ord=-0.5, dim=(2, 1)),
    lambda la, m: la.vector_norm(m.zeros(0, 2), ord=-1),
    lambda la, m: la.vander(m.ones(3), N=1),
    lambda la, m: la.vander(m.tensor(1.0)),
    lambda la, m: la.vander(m.tensor([True, False])),
])
def test_errors_match_torch(call):
    linalg_errors_match_torch(call)


def backward_both(outs, theirs, rng):
    """Send one random upstream gradient through each output of jitensor's `outs` and torch's
    `theirs` (None: that output is not used)."""
    mine_loss, their_loss = 0, 0
    for o, t in zip(outs, theirs, strict=False):
        if o is not None:
            g = rng.standard_normal(tuple(t.shape))
            mine_loss = mine_loss + (o * jt.tensor(g, dtype=o.dtype)).sum()
            their_loss = their_loss + (t * torch.tensor(g, dtype=t.dtype)).sum()
    mine_loss.backward()
    their_loss.backward()


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (3, 5), (2, 5, 3), (1, 4), (4, 1), (0, 3)])
@pytest.mark.parametrize("form", ["lu", "lu_L", "lu_U", "lu_factor", "lu_factor_ex"])
def test_lu_gradients_match_torch(shape, form):
    """torch's linalg_lu_backward: square, wide (the extra columns of U) and tall (the extra
    rows of L); P and the pivots are constants."""
    A, tA = both(np.random.default_rng(len(shape) + shape[-1]).standard_normal(shape), True)

    def run(la, A):
        if form.startswith("lu_factor"):
            return [getattr(la, form)(A)[0]]
        P, L, U = la.lu(A)
        return [None if form == "lu_U" else L, None if form == "lu_L" else U]
    outs, theirs = run(jt.linalg, A), run(torch.linalg, tA)
    for o, t in zip(outs, theirs, strict=False):
        if o is not None:
            check(o, t)
    backward_both(outs, theirs, np.random.default_rng(0))
    check(A.grad, tA.grad)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_gradients_in_LU_and_B_match_torch(left, adjoint):
    a = well_conditioned((2,), 4, 8)
    b = np.random.default_rng(9).standard_normal((3, 2, 4, 3) if left else (3, 2, 3, 4))
    grads = []
    for lib in (jt, torch):
        A = lib.tensor(a, requires_grad=True)
        LU, piv = lib.linalg.lu_factor(A)  # through lu_factor too: A's gradient
        B = lib.tensor(b, requires_grad=True)
        X = lib.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint)
        LU.retain_grad()
        (X * lib.tensor(np.cos(np.arange(X.numel())).reshape(tuple(X.shape)))).sum().backward()
        grads.append((X, LU.grad, B.grad, A.grad))
    for mine, theirs in zip(*grads, strict=False):
        check(mine, theirs)


@pytest.mark.parametrize("name", ["inv_ex", "solve_ex", "solve_ex_right", "solve_ex_vector",
                                  "cholesky_ex"])
def test_ex_forms_share_their_plain_forms_gradients(name):
    a = well_conditioned((2,), 3, 10)
    b = np.random.default_rng(11).standard_normal((2, 3, 2))
    (A, tA), (B, tB) = both(a, True), both(b, True)

    def run(la, A, B):
        if name == "inv_ex":
            return la.inv_ex(A)
        if name == "cholesky_ex":
            return la.cholesky_ex(A @ A.mT, upper=True)
        if name == "solve_ex_right":
            return la.solve_ex(A, B.mT, left=False)
        return la.solve_ex(A, B[..., 0] if name.endswith("vector") else B)
    (out, info), (theirs, _tinfo) = run(jt.linalg, A, B), run(torch.linalg, tA, tB)
    check(out, theirs)
    assert info.dtype is jt.int32 and not info.requires_grad
    backward_both([out], [theirs], np.random.default_rng(12))
    check(A.grad, tA.grad)
    if name.startswith("solve"):
        check(B.grad, tB.grad)


# (n, matrices): exactly singular ones (rank n - 1 and less: duplicated, doubled or zero rows
# and columns, nilpotent and triangular ones) among invertible ones, in one batch
SINGULAR = [
    (1, [[[0.0]], [[2.0]]]),
    (2, [[[1, 2], [2, 4]], [[0, 1], [0, 1]], [[0, 1], [0, 0]], [[1, 0], [0, 0]], [[0, 0], [0, 0]],
         [[2, 1], [1, 3]]]),
    (3, [[[1, 2, 3], [2, 4, 6], [1, 1, 1]], [[1, 2, 3], [2, 4, 6], [3, 6, 9]],
         [[0, 1, 0], [0, 0, 1], [0, 0, 0]], [[0, 1, 2], [0, 3, 4], [0, 5, 6]],
         [[1, 0, 0], [0, 2, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0], [0, 0, 0]],
         [[4, 1, 0], [1, 3, 1], [0, 1, 2]]]),
    (5, [np.r_[r[:3], r[1:2], r[4:5]] for r in np.random.default_rng(0).integers(-4, 5, (3, 5, 5))]
     + [np.r_[r[:2], 2 * r[:1], r[2:3], np.zeros((1, 5))] for r in
        np.random.default_rng(1).integers(-4, 5, (2, 5, 5))]),
]


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
@pytest.mark.parametrize("n, matrices", SINGULAR)
def test_det_gradient_at_singular_matrices_is_the_adjugate(n, matrices, dtype):
    """adj(A)^T: torch's (an SVD's) where it differentiates det with create_graph. (Without
    create_graph torch returns det(A) A^-T from an LU whose zero pivots it nudges by eps: 0
    where det is exactly 0 and n > 1; the adjugate is det's derivative there too.)"""
    npd = np.float64 if dtype is jt.float64 else np.float32
    a = np.array(matrices, dtype=npd)
    A, tA = both(a, True)
    assert (jt.linalg.lu_factor_ex(A.detach()).info != 0).any().item()  # a singular path
    g = np.random.default_rng(n).standard_normal(len(a)).astype(npd)
    mine, = jt.autograd.grad(jt.linalg.det(A), A, jt.tensor(g))
    theirs, = torch.autograd.grad(torch.linalg.det(tA), tA, torch.tensor(g), create_graph=True)
    assert mine.dtype is dtype and mine.shape == A.shape
    tol = dict(rtol=1e-9, atol=1e-9) if dtype is jt.float64 else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mine.numpy(), theirs.detach().numpy(), **tol)
    adjugate_t = np.array([[[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(m, i, 0), j, 1))
                             for j in range(n)] for i in range(n)] if n > 1 else [[1.0]]
                           for m in a.astype(np.float64)])
    np.testing.assert_allclose(mine.numpy(), g[:, None, None] * adjugate_t, **tol)


def test_slogdet_gradient_at_singular_matrices_is_not_finite_as_torch():
    """log|det| is -inf there, with no derivative: g A^-T is inf/NaN, where torch's is."""
    for m in ([[0.0]], [[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [0.0, 1.0]],
              [[1.0, 0, 0], [0, 2, 0], [0, 0, 0]]):
        grads = []
        for lib in (jt, torch):
            A = lib.tensor(m, requires_grad=True)
            grads.append(lib.autograd.grad(lib.linalg.slogdet(A).logabsdet, A)[0].numpy())
        np.testing.assert_array_equal(*grads)
        assert not np.isfinite(grads[0]).all()


def test_out_matches_torch():
    """out=: written in place where its dtype is the result's (an empty out is resized),
    refused (RuntimeError) where it is not, as torch's linalg ops; cholesky_solve casts."""
    a = well_conditioned((2,), 3, 13)
    A, tA = both(a)
    v, tv = both(a[:, 0])
    ops = [lambda la, X, out: la.inv(X, out=out), lambda la, X, out: la.det(X, out=out),
           lambda la, X, out: la.solve(X, X, out=out),
           lambda la, X, out: la.cholesky(X @ X.mT, out=out),
           lambda la, X, out: la.solve_triangular(X, X, upper=True, out=out),
           lambda la, X, out: la.matrix_power(X, 3, out=out),
           lambda la, X, out: la.matrix_norm(X, out=out),
           lambda la, X, out: la.norm(X, dim=(1,), out=out),
           lambda la, X, out: la.vector_norm(X, 3, dim=(0, 2), out=out),
           lambda la, X, out: la.vecdot(X, X, out=out),
           lambda la, X, out: la.multi_dot([X[0], X[1]], out=out)]
    for op in ops:
        theirs = op(torch.linalg, tA, None)
        for shape in (tuple(theirs.shape), (0,)):
            out = jt.empty(shape, dtype=jt.float64)
            assert op(jt.linalg, A, out) is out
            check(out, theirs)
        with pytest.raises(RuntimeError):
            op(torch.linalg, tA, torch.empty(theirs.shape, dtype=torch.float32))
        with pytest.raises(RuntimeError):
            op(jt.linalg, A, jt.empty(tuple(theirs.shape), dtype=jt.float32))
    L = jt.linalg.cholesky(A @ A.mT)
    out = jt.empty((2, 3, 3), dtype=jt.float32)
    jt.cholesky_solve(A, L, out=out)
    check(out, torch.cholesky_solve(tA, torch.linalg.cholesky(tA @ tA.mT)).float(), jt.float32)
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        jt.linalg.inv(jt.tensor(a, requires_grad=True), out=jt.empty((2, 3, 3), dtype=jt.float64))


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=3),
       ord=st.sampled_from(["fro", 1, -1, math.inf, -math.inf]), keepdim=st.booleans(),
       seed=st.integers(0, 99))
def test_norms_match_torch(shape, ord, keepdim, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    A, tA = both(a, True)
    out = jt.linalg.matrix_norm(A, ord, keepdim=keepdim)
    theirs = torch.linalg.matrix_norm(tA, ord, keepdim=keepdim)
    check(out, theirs)
    assert_grads_match_torch(torch, np.random.default_rng(seed), out, theirs, [A], [tA], 1e-9,
                             1e-9)
    vord = 3 if ord == "fro" else ord
    check(jt.linalg.vector_norm(A, vord, dim=-1, keepdim=keepdim),
          torch.linalg.vector_norm(tA, vord, dim=-1, keepdim=keepdim))
    check(jt.linalg.norm(A), torch.linalg.norm(tA))
    check(jt.linalg.norm(A, dim=(0, 1)), torch.linalg.norm(tA, dim=(0, 1)))
    check(jt.linalg.norm(A, dim=(1,)), torch.linalg.norm(tA, dim=(1,)))
    check(jt.linalg.norm(A, vord, dim=[0], keepdim=keepdim),
          torch.linalg.norm(tA, vord, dim=[0], keepdim=keepdim))
    check(jt.linalg.vector_norm(A[:, :0], vord, dim=0), torch.linalg.vector_norm(tA[:, :0], vord,
                                                                                 dim=0))


def test_products_match_torch():
    rng = np.random.default_rng(0)
    a = well_conditioned((2,), 3, 0)
    A, tA = both(a)
    for n in (-3, -1, 0, 1, 2, 5):
        check(jt.linalg.matrix_power(A, n), torch.linalg.matrix_power(tA, n))
    mats = [rng.standard_normal(s) for s in ((4,), (4, 6), (6, 2), (2, 5), (5,))]
    check(jt.linalg.multi_dot([jt.tensor(m) for m in mats]),
          torch.linalg.multi_dot([torch.tensor(m) for m in mats]))
    check(jt.linalg.multi_dot([jt.tensor(m) for m in mats[1:4]]),
          torch.linalg.multi_dot([torch.tensor(m) for m in mats[1:4]]))
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    check(jt.linalg.vecdot(jt.tensor(x), jt.tensor(y)),
          torch.linalg.vecdot(torch.tensor(x), torch.tensor(y)))
    check(jt.linalg.cross(jt.tensor(x[:, :3]), jt.tensor(x[:, 1:])),
          torch.linalg.cross(torch.tensor(x[:, :3]), torch.tensor(x[:, 1:])))
    check(jt.linalg.diagonal(A, offset=1), torch.linalg.diagonal(tA, offset=1))
    check(jt.linalg.vander(jt.tensor(y), N=3), torch.linalg.vander(torch.tensor(y), N=3))
    check(jt.linalg.vander(jt.tensor(x)), torch.linalg.vander(torch.tensor(x)))
    check(jt.linalg.vander(jt.tensor(2.0), N=3), torch.linalg.vander(torch.tensor(2.0), N=3))
    check(jt.linalg.vander(jt.zeros(2, 0), N=2), torch.linalg.vander(torch.zeros(2, 0), N=2),
          jt.float32)
    for dtype in ("int32", "uint8", "float32"):
        check(jt.linalg.vander(jt.tensor([[1, 2], [3, 4]], dtype=getattr(jt, dtype)), N=4),
              torch.linalg.vander(torch.tensor([[1, 2], [3, 4]], dtype=getattr(torch, dtype)),
                                  N=4), jt.float32)
    check(jt.det(A), torch.det(tA))
    check(A.inverse(), tA.inverse())
    check(A.logdet(), tA.logdet())


def test_inputs_are_left_unchanged_and_views_work():
    a = well_conditioned((), 4, 9)
    A = jt.tensor(a)
    before = A.numpy().copy()
    jt.linalg.lu_factor(A), jt.linalg.inv(A), jt.linalg.cholesky(A @ A.mT)
    np.testing.assert_array_equal(A.numpy(), before)
    tA = torch.tensor(a)
    check(jt.linalg.inv(A.mT[1:, 1:]), torch.linalg.inv(tA.mT[1:, 1:]))
    check(jt.linalg.solve(A.mT, A[:, ::2]), torch.linalg.solve(tA.mT, tA[:, ::2]))


@needs_cuda
def test_on_cuda_as_on_the_cpu():
    a = well_conditioned((2,), 3, 11)
    b = np.random.default_rng(12).standard_normal((2, 3, 2))
    A = jt.tensor(a, device="cuda", requires_grad=True)
    B = jt.tensor(b, device="cuda")
    tA, tB = torch.tensor(a, requires_grad=True), torch.tensor(b)
    X = jt.linalg.solve(A, B)
    assert X.device.type == "cuda"
    check(X.cpu(), torch.linalg.solve(tA, tB))
    check(jt.linalg.det(A).cpu(), torch.linalg.det(tA))
    jt.linalg.inv(A).sum().backward()
    torch.linalg.inv(tA).sum().backward()
    check(A.grad.cpu(), tA.grad)
    S = jt.tensor(spd((2,), 3, 13), device="cuda")
    check(jt.linalg.cholesky(S).cpu(), torch.linalg.cholesky(torch.tensor(spd((2,), 3, 13))))
    LU, piv = jt.linalg.lu_factor(A.detach())
    check(jt.linalg.lu_solve(LU, piv, B).cpu(), torch.linalg.solve(tA, tB))
    with pytest.raises(jt.linalg.LinAlgError, match="Batch element 1"):
        jt.linalg.inv(jt.tensor(np.stack([np.eye(2), np.ones((2, 2))]), device="cuda"))


def test_the_scalar_kernels_match_lapack(monkeypatch):
    """Where NumPy ships no LAPACK (and for matrices up to SMALL) the CPU runs the scalar
    definitions, CUDA's too: the same factors and solutions as LAPACK's."""
    from jitensor.kernels.cpu import factor
    rng = np.random.default_rng(0)
    n = factor.SMALL + 3
    a = well_conditioned((3,), n, 1)
    rect = rng.standard_normal((2, n - 2, n + 2))
    b = rng.standard_normal((3, n, 2))
    s = spd((3,), n, 2)

    def run():
        A, B = jt.tensor(a), jt.tensor(b)
        return [*jt.linalg.lu_factor_ex(A), *jt.linalg.lu_factor_ex(jt.tensor(rect)),
                jt.linalg.solve(A, B), jt.linalg.cholesky(jt.tensor(s)),
                jt.linalg.solve_triangular(A, B, upper=True),
                jt.linalg.solve_triangular(A, B, upper=False, unitriangular=True)]
    theirs = run()
    monkeypatch.setattr(factor, "SMALL", 1 << 30)
    for mine, ref in zip(run(), theirs, strict=False):
        np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
    a[2, 1, 3] = np.nan  # NaN propagates (where it lands differs: NaN pivots)
    assert jt.linalg.solve_ex(jt.tensor(a), jt.tensor(b)).result[2].isnan().all().item()
    monkeypatch.setattr(factor, "SMALL", 0)
    assert jt.linalg.solve_ex(jt.tensor(a), jt.tensor(b)).result[2].isnan().any().item()


# -- complex matrices: the LU family ---------------------------------------------------------------
COMPLEX_LU = {
    "solve": lambda L, A, B: L.linalg.solve(A, B),
    "solve_right": lambda L, A, B: L.linalg.solve(A, B.mT, left=False).mT,
    "inv": lambda L, A, B: L.linalg.inv(A) @ B,
    "det": lambda L, A, B: L.linalg.det(A)[..., None, None] * B,
    "slogdet": lambda L, A, B: (L.linalg.slogdet(A)[0] * L.linalg.slogdet(A)[1])[..., None,
                                                                                   None] * B,
    "logdet": lambda L, A, B: L.logdet(A)[..., None, None] * B,
    "lu_factor": lambda L, A, B: L.linalg.lu_factor(A)[0] @ B,
    "lu": lambda L, A, B: L.linalg.lu(A)[1] @ L.linalg.lu(A)[2] @ B,
    "lu_solve": lambda L, A, B: L.linalg.lu_solve(*L.linalg.lu_factor(A), B),
    "solve_triangular": lambda L, A, B: L.linalg.solve_triangular(
        A + 4 * L.eye(A.shape[-1], dtype=A.dtype), B, upper=True),
}


@pytest.mark.parametrize("n", [3, 12])  # (scalar kernels, and sizes LAPACK takes when real)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", sorted(COMPLEX_LU))
def test_complex_lu_family_matches_torch(op, dtype, n):
    """Values and gradients of complex solves, inverses and determinants against torch's
    (LAPACK's pivoting by |re| + |im|, so the LU factors themselves agree too)."""
    rng = np.random.default_rng(n)
    a = (rng.standard_normal((2, n, n)) + 1j * rng.standard_normal((2, n, n))).astype(dtype)
    _complex_matches_torch(COMPLEX_LU[op], a, rng, dtype)


def _complex_matches_torch(fn, a, rng, dtype):
    """fn(lib, A, B) of the complex matrices a and a random B, and the gradients of a real loss
    of it, against torch's: values, dtypes."""
    n = a.shape[-1]
    b = (rng.standard_normal((2, n, 2)) + 1j * rng.standard_normal((2, n, 2))).astype(dtype)
    w = rng.standard_normal((2, n, 2))
    results = []
    for lib in (jt, torch):
        A, B = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = fn(lib, A, B)
        (out.real * lib.tensor(w) + out.imag).sum().backward()
        results.append([out.detach(), A.grad, B.grad])
    tol = 2e-4 if dtype == "complex64" else 1e-10
    for mine, theirs in zip(*results, strict=True):
        theirs = theirs.resolve_conj().numpy()
        scale = max(1.0, np.abs(theirs).max())
        assert mine.dtype.name == str(theirs.dtype)
        np.testing.assert_allclose(mine.numpy(), theirs, rtol=tol, atol=tol * scale)


# -- complex matrices: Cholesky ------------------------------------------------------------------
COMPLEX_CHOLESKY = {
    "cholesky": lambda L, A, B, upper: L.linalg.cholesky(A, upper=upper) @ B,
    "cholesky_ex": lambda L, A, B, upper: L.linalg.cholesky_ex(A, upper=upper)[0] @ B,
    "cholesky_solve": lambda L, A, B, upper: L.cholesky_solve(
        B, L.linalg.cholesky(A, upper=upper), upper=upper),
    "cholesky_inverse": lambda L, A, B, upper: L.cholesky_inverse(
        L.linalg.cholesky(A, upper=upper), upper=upper) @ B,
}


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("n", [1, 3, 12])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", sorted(COMPLEX_CHOLESKY))
def test_complex_cholesky_family_matches_torch(op, dtype, n, upper):
    """Values and gradients of the Cholesky factor of Hermitian positive-definite matrices, and
    of the solves and inverses made from it, against torch's."""
    rng = np.random.default_rng(n)
    m = rng.standard_normal((2, n, n)) + 1j * rng.standard_normal((2, n, n))
    a = (m @ m.conj().swapaxes(-1, -2) + n * np.eye(n)).astype(dtype)
    _complex_matches_torch(lambda lib, A, B: COMPLEX_CHOLESKY[op](lib, A, B, upper), a, rng,
                           dtype)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("n", [2, 10])  # (scalar kernel; LAPACK's potrf where real)
def test_cholesky_ex_of_an_indefinite_matrix_leaves_what_torch_leaves(dtype, n):
    """The factor up to the failing minor, that minor's pivot on the diagonal, the rest of the
    lower triangle as it was, and info naming the minor."""
    a = np.ones((n, n)) + 0.5 * np.eye(n)
    a[n // 2, n // 2] = -3
    a = a.astype(dtype)
    mine, theirs = jt.linalg.cholesky_ex(jt.tensor(a)), torch.linalg.cholesky_ex(torch.tensor(a))
    assert int(mine.info) == int(theirs.info) == n // 2 + 1
    np.testing.assert_allclose(mine.L.numpy(), theirs.L.numpy(), rtol=1e-12, atol=1e-12)
