"""torch.linalg's decompositions beyond LU and Cholesky (ops/factor.py, kernels
backends/*/factor.py): QR against torch's values exactly (the same Householder convention),
eigh and svd through what does not depend on the vectors' signs; gradients against torch's."""
import numpy as np
import pytest
from conftest import assert_grads_match_torch
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")

TOL = {jt.float64: dict(rtol=1e-10, atol=1e-10), jt.float32: dict(rtol=1e-4, atol=1e-4)}
NP = {jt.float64: np.float64, jt.float32: np.float32}


def both(a, grad=False):
    return jt.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def check(mine, theirs, dtype=jt.float64):
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(mine.detach().cpu().numpy(), theirs.detach().numpy(),
                               **TOL[dtype])


def symmetric(batch, n, seed, dtype=np.float64):
    a = np.random.default_rng(seed).standard_normal(tuple(batch) + (n, n))
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


def check_eigh(A, w, V, dtype=jt.float64):
    """A V = V diag(w), V orthonormal, w ascending: what eigh promises up to the signs."""
    a, w, v = (x.detach().cpu().numpy().astype(np.float64) for x in (A, w, V))
    tol = TOL[dtype]["atol"] * max(1.0, np.abs(a).max(initial=0))
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * a.shape[-1])
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(a.shape[-1]),
                               v.shape), atol=TOL[dtype]["atol"] * a.shape[-1])
    assert (np.diff(w, axis=-1) >= 0).all()


batches = st.lists(st.integers(0, 3), max_size=2)


# -- QR ------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(batch=batches, m=st.integers(0, 7), n=st.integers(0, 7),
       mode=st.sampled_from(["reduced", "complete", "r"]),
       dtype=st.sampled_from([jt.float32, jt.float64]), seed=st.integers(0, 99))
def test_qr_matches_torch(batch, m, n, mode, dtype, seed):
    a = np.random.default_rng(seed).standard_normal(tuple(batch) + (m, n)).astype(NP[dtype])
    A, tA = both(a)
    (Q, R), (tQ, tR) = jt.linalg.qr(A, mode=mode), torch.linalg.qr(tA, mode=mode)
    check(Q, tQ, dtype)
    check(R, tR, dtype)


def test_qr_of_larger_and_rank_deficient_matrices_matches_torch():
    rng = np.random.default_rng(3)
    for a in (rng.standard_normal((2, 40, 25)), rng.standard_normal((25, 40)),
              np.zeros((3, 3)), np.triu(rng.standard_normal((4, 4)))):
        (Q, R), (tQ, tR) = jt.linalg.qr(jt.tensor(a)), torch.linalg.qr(torch.tensor(a))
        check(Q, tQ)
        check(R, tR)
    a = np.outer(np.arange(6.0), np.ones(4))  # rank 1: Q's last columns come from rounding
    Q, R = (x.numpy() for x in jt.linalg.qr(jt.tensor(a)))
    np.testing.assert_allclose(Q @ R, a, atol=1e-13)
    np.testing.assert_allclose(Q.T @ Q, np.eye(4), atol=1e-13)
    np.testing.assert_allclose(R, np.triu(R))


def test_qr_forms_named_tuple_out_and_torch_qr():
    a = np.random.default_rng(4).standard_normal((5, 3))
    A, tA = both(a)
    result = jt.linalg.qr(A)
    assert type(result).__name__ == "linalg_qr" and result._fields == ("Q", "R")
    for some in (True, False):
        mine, theirs = jt.qr(A, some), torch.linalg.qr(tA, "reduced" if some else "complete")
        assert type(mine).__name__ == "qr"
        check(mine.Q, theirs.Q)
        check(A.qr(some).R, theirs.R)
    Q, R = jt.empty(0, dtype=jt.float64), jt.empty(0, dtype=jt.float64)
    out = jt.linalg.qr(A, out=(Q, R))
    assert out.Q is Q and out.R is R
    check(Q, torch.linalg.qr(tA).Q)
    with pytest.raises(RuntimeError, match="dtype"):  # (torch: the same check, its own words)
        jt.linalg.qr(A, out=(jt.empty(0), R))


@pytest.mark.parametrize("call", [
    lambda la, m: la.qr(m.ones(3, 2), mode="x"),
    lambda la, m: la.qr(m.ones(3)),
    lambda la, m: la.qr(m.ones(3, 3, dtype=m.int64)),
    lambda la, m: la.qr(m.ones(3, 2), out=m.empty(0)),
    lambda la, m: la.eigh(m.ones(2, 3)),
    lambda la, m: la.eigh(m.ones(3)),
    lambda la, m: la.eigh(m.ones(2, 2), UPLO="X"),
    lambda la, m: la.eigvalsh(m.ones(2, 3)),
    lambda la, m: la.eigh(m.ones(2, 2), out=m.empty(0)),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch.linalg, torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(jt.linalg, jt)
    assert str(ours.value) == str(theirs.value)


def backward_both(mine, theirs, A, tA, seed):
    rng = np.random.default_rng(seed)
    loss, tloss = 0, 0
    for x, tx in zip(mine, theirs):
        g = rng.standard_normal(tuple(tx.shape))
        loss, tloss = loss + (x * jt.tensor(g)).sum(), tloss + (tx * torch.tensor(g)).sum()
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (2, 2, 5)])
@pytest.mark.parametrize("parts", ["QR", "Q", "R"])
def test_qr_gradients_match_torch(shape, parts):
    a = np.random.default_rng(5).standard_normal(shape)
    A, tA = both(a, True)
    mine, theirs = jt.linalg.qr(A), torch.linalg.qr(tA)
    pick = [i for i, p in enumerate("QR") if p in parts]
    backward_both([mine[i] for i in pick], [theirs[i] for i in pick], A, tA, 6)


@pytest.mark.parametrize("shape, mode", [((3, 2), "complete"), ((3, 3), "r")])
def test_qr_gradient_errors_match_torch(shape, mode):
    a = np.random.default_rng(7).standard_normal(shape)
    A, tA = both(a, True)
    with pytest.raises(RuntimeError) as theirs:
        torch.linalg.qr(tA, mode=mode).R.sum().backward()
    with pytest.raises(RuntimeError) as ours:
        jt.linalg.qr(A, mode=mode).R.sum().backward()
    assert str(ours.value) == str(theirs.value)
    A, tA = both(np.random.default_rng(7).standard_normal((2, 4)), True)  # wide: any mode
    backward_both(jt.linalg.qr(A, "complete"), torch.linalg.qr(tA, "complete"), A, tA, 8)


# -- eigh ----------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(batch=batches, n=st.integers(0, 8), uplo=st.sampled_from("LU"),
       dtype=st.sampled_from([jt.float32, jt.float64]), seed=st.integers(0, 99))
def test_eigh_matches_torch(batch, n, uplo, dtype, seed):
    a = np.random.default_rng(seed).standard_normal(tuple(batch) + (n, n)).astype(NP[dtype])
    A, tA = both(a)  # not symmetric: only the UPLO triangle may be read
    w, V = jt.linalg.eigh(A, UPLO=uplo)
    tw, tV = torch.linalg.eigh(tA, UPLO=uplo)
    check(w, tw, dtype)
    assert V.shape == tV.shape and V.dtype is A.dtype
    half = np.tril(a) if uplo == "L" else np.triu(a)
    check_eigh(jt.tensor(half + np.swapaxes(np.tril(a, -1) if uplo == "L" else np.triu(a, 1),
                                            -1, -2)), w, V, dtype)
    check(jt.linalg.eigvalsh(A, UPLO=uplo), tw, dtype)


def test_eigh_of_hard_spectra():
    """Repeated, zero, tiny and huge eigenvalues, a diagonal and a larger matrix."""
    rng = np.random.default_rng(9)
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    cases = [q @ np.diag([1, 1, 1, 2, 2, 0.0]) @ q.T, q @ np.diag([1e-12, 1, 1e8, -1e8, 3, 4])
             @ q.T, np.diag([3.0, -1, 2]), np.zeros((3, 3)), symmetric((), 40, 1),
             np.ones((5, 5))]
    for a in cases:
        w, V = jt.linalg.eigh(jt.tensor(a))
        np.testing.assert_allclose(w.numpy(), torch.linalg.eigvalsh(torch.tensor(a)).numpy(),
                                   atol=1e-13 * max(1, np.abs(a).max()) * 10)
        check_eigh(jt.tensor(a), w, V)


def test_eigh_named_tuple_and_out():
    a = symmetric((2,), 3, 10)
    result = jt.linalg.eigh(jt.tensor(a))
    assert type(result).__name__ == "linalg_eigh"
    assert result._fields == ("eigenvalues", "eigenvectors")
    w, V = jt.empty(0, dtype=jt.float64), jt.empty(0, dtype=jt.float64)
    jt.linalg.eigh(jt.tensor(a), out=(w, V))
    check_eigh(jt.tensor(a), w, V)
    out = jt.empty(0, dtype=jt.float64)
    assert jt.linalg.eigvalsh(jt.tensor(a), out=out) is out
    check(out, torch.linalg.eigvalsh(torch.tensor(a)))


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("of", ["eigenvalues", "projector", "abs_vectors", "both"])
def test_eigh_gradients_match_torch(uplo, of):
    """Through functions of (w, V) that do not change when a column of V changes sign."""
    a = np.random.default_rng(11).standard_normal((2, 4, 4))
    A, tA = both(a, True)

    def f(la, A):
        w, V = la.eigh(A, UPLO=uplo)
        if of == "eigenvalues":
            return [w]
        if of == "abs_vectors":
            return [V.abs()]
        projector = (V * w.unsqueeze(-2)) @ V.mT  # V diag(w) V^T
        return [projector] if of == "projector" else [w, V[..., :2] @ V[..., :2].mT]
    backward_both(f(jt.linalg, A), f(torch.linalg, tA), A, tA, 12)
    A.grad = tA.grad = None
    A2, tA2 = both(a, True)
    assert_grads_match_torch(torch, np.random.default_rng(13), jt.linalg.eigvalsh(A2, uplo),
                             torch.linalg.eigvalsh(tA2, uplo), [A2], [tA2], 1e-8, 1e-9)


# -- SVD -----------------------------------------------------------------------------------------
def check_svd(A, U, S, Vh, full, dtype=jt.float64):
    """A = U diag(S) Vh, U and Vh orthonormal, S descending: what svd promises up to signs."""
    a, u, s, vh = (x.detach().cpu().numpy().astype(np.float64) for x in (A, U, S, Vh))
    m, n = a.shape[-2:]
    k, tol = min(m, n), TOL[dtype]["atol"] * max(1, m, n)
    assert u.shape[-1] == (m if full else k) and vh.shape[-2] == (n if full else k)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a,
                               atol=tol * max(1.0, np.abs(a).max(initial=0)))
    for x in (np.swapaxes(u, -1, -2) @ u, vh @ np.swapaxes(vh, -1, -2)):
        np.testing.assert_allclose(x, np.broadcast_to(np.eye(x.shape[-1]), x.shape), atol=tol)
    assert (np.diff(s, axis=-1) <= 0).all()


@settings(max_examples=25, deadline=None)
@given(batch=batches, m=st.integers(0, 7), n=st.integers(0, 7), full=st.booleans(),
       dtype=st.sampled_from([jt.float32, jt.float64]), seed=st.integers(0, 99))
def test_svd_matches_torch(batch, m, n, full, dtype, seed):
    a = np.random.default_rng(seed).standard_normal(tuple(batch) + (m, n)).astype(NP[dtype])
    A, tA = both(a)
    U, S, Vh = jt.linalg.svd(A, full_matrices=full)
    tU, tS, tVh = torch.linalg.svd(tA, full_matrices=full)
    check(S, tS, dtype)
    assert U.shape == tU.shape and Vh.shape == tVh.shape and U.dtype is Vh.dtype is A.dtype
    check_svd(A, U, S, Vh, full, dtype)
    check(jt.linalg.svdvals(A), tS, dtype)


def test_svd_keeps_small_singular_values_and_completes_rank_deficient_bases():
    rng = np.random.default_rng(16)
    u, _ = np.linalg.qr(rng.standard_normal((7, 7)))
    v, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    s = np.array([1e6, 1, 1e-3, 1e-9, 1e-14])
    a = (u[:, :5] * s) @ v.T  # condition 1e20: A^T A would lose the last two
    S = jt.linalg.svdvals(jt.tensor(a)).numpy()
    np.testing.assert_allclose(S, s, rtol=1e-6, atol=1e-16 * 1e6 * 10)
    for a in (np.outer(np.arange(5.0), np.ones(3)), np.zeros((3, 4)), np.diag([2.0, 0, 1])):
        for full in (True, False):
            check_svd(jt.tensor(a), *jt.linalg.svd(jt.tensor(a), full_matrices=full), full)


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("dim, keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False)])
def test_matrix_norms_of_singular_values_match_torch(ord, dim, keepdim):
    a = np.random.default_rng(17).standard_normal((2, 3, 4))
    A, tA = both(a, True)
    out = jt.linalg.matrix_norm(A, ord, dim, keepdim)
    ref = torch.linalg.matrix_norm(tA, ord, dim, keepdim)
    check(out, ref)
    assert_grads_match_torch(torch, np.random.default_rng(18), out, ref, [A], [tA], 1e-8, 1e-9)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_gradients_match_torch(shape, full):
    """Through svdvals and U diag(S) Vh's sign-invariant products (U_k U_k^T, V_k V_k^T)."""
    a = np.random.default_rng(19).standard_normal(shape)
    A, tA = both(a, True)

    def f(la, A):
        U, S, Vh = la.svd(A, full_matrices=full)
        k = S.shape[-1]
        return [S, U[..., :k - 1] @ U[..., :k - 1].mT, Vh[..., :2, :].mT @ Vh[..., :2, :],
                (U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]]
    backward_both(f(jt.linalg, A), f(torch.linalg, tA), A, tA, 20)
    A2, tA2 = both(a, True)
    assert_grads_match_torch(torch, np.random.default_rng(21), jt.linalg.svdvals(A2),
                             torch.linalg.svdvals(tA2), [A2], [tA2], 1e-8, 1e-9)


# -- CUDA ----------------------------------------------------------------------------------------
@needs_cuda
def test_qr_on_cuda_as_on_the_cpu():
    a = np.random.default_rng(14).standard_normal((2, 4, 3))
    A, tA = jt.tensor(a, device="cuda", requires_grad=True), torch.tensor(a, requires_grad=True)
    for mode in ("reduced", "complete", "r"):
        (Q, R), (tQ, tR) = jt.linalg.qr(A.detach(), mode), torch.linalg.qr(tA.detach(), mode)
        assert R.device.type == "cuda"
        check(Q, tQ)
        check(R, tR)
    jt.linalg.qr(A).R.sum().backward()
    torch.linalg.qr(tA).R.sum().backward()
    check(A.grad, tA.grad)


@needs_cuda
def test_eigh_on_cuda_as_on_the_cpu():
    for dtype in (jt.float32, jt.float64):
        a = symmetric((2,), 3, 15, NP[dtype])
        A = jt.tensor(a, device="cuda")
        w, V = jt.linalg.eigh(A)
        assert w.device.type == "cuda" and V.dtype is dtype
        check(w, torch.linalg.eigvalsh(torch.tensor(a)), dtype)
        check_eigh(A, w, V, dtype)


@needs_cuda
def test_svd_on_cuda_as_on_the_cpu():
    for shape in ((2, 4, 3), (3, 2)):
        a = np.random.default_rng(22).standard_normal(shape)
        A = jt.tensor(a, device="cuda")
        U, S, Vh = jt.linalg.svd(A)
        assert S.device.type == "cuda"
        check(S, torch.linalg.svdvals(torch.tensor(a)))
        check_svd(A, U, S, Vh, True)
