"""torch.linalg's decompositions beyond LU and Cholesky (ops/factor.py, kernels
kernels/*/factor.py): QR against torch's values exactly (the same Householder convention),
eigh and svd through what does not depend on the vectors' signs; gradients against torch's."""
import numpy as np
import pytest
from conftest import assert_grads_match_torch, at_thread_counts, linalg_errors_match_torch
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
    linalg_errors_match_torch(call)


def backward_both(mine, theirs, A, tA, seed):
    rng = np.random.default_rng(seed)
    loss, tloss = 0, 0
    for x, tx in zip(mine, theirs, strict=False):
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


# -- matrix_rank, pinv, cond, lstsq (composed on svd / eigh) ------------------------------------
def low_rank(shape, rank, seed):
    rng = np.random.default_rng(seed)
    m, n = shape[-2:]
    batch = shape[:-2]
    return rng.standard_normal(batch + (m, rank)) @ rng.standard_normal(batch + (rank, n))


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
def test_matrix_rank_matches_torch(dtype):
    for a in (low_rank((2, 5, 4), 2, 40), low_rank((3, 6), 3, 41), low_rank((4, 4), 1, 42),
              np.zeros((2, 3, 3)), np.zeros((2, 0, 3)), np.diag([1.0, 1e-3, 1e-9])):
        A, tA = both(a.astype(NP[dtype]))
        for kwargs in ({}, dict(atol=1e-2), dict(rtol=1e-2), dict(atol=1e-2, rtol=0.5),
                       dict(atol=0.0), dict(hermitian=True)):
            if kwargs.get("hermitian") and a.shape[-1] != a.shape[-2]:
                continue
            mine = jt.linalg.matrix_rank(A, **kwargs)
            theirs = torch.linalg.matrix_rank(tA, **kwargs)
            assert mine.dtype is jt.int64 and mine.shape == theirs.shape
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    A, tA = both(low_rank((2, 4, 4), 2, 43) + np.diag([0, 0, 0, 0.1]))
    for kwargs in (dict(atol=jt.tensor([1e-3, 1.0])), dict(rtol=jt.tensor([1e-3, 0.5]))):
        theirs = {k: torch.tensor(v.numpy()) for k, v in kwargs.items()}
        np.testing.assert_array_equal(jt.linalg.matrix_rank(A, **kwargs).numpy(),
                                      torch.linalg.matrix_rank(tA, **theirs).numpy())
    np.testing.assert_array_equal(jt.linalg.matrix_rank(A, 0.05).numpy(),
                                  torch.linalg.matrix_rank(tA, 0.05).numpy())
    out = jt.empty(0)  # (any dtype the int64 rank casts into)
    assert jt.linalg.matrix_rank(A, out=out) is out and out.dtype is jt.float32


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
def test_pinv_matches_torch(dtype):
    rng = np.random.default_rng(44)
    for a in (rng.standard_normal((2, 5, 3)), rng.standard_normal((3, 6)), low_rank((4, 4), 2, 45),
              np.zeros((3, 2)), np.zeros((2, 0, 3)), symmetric((2,), 4, 46),
              rng.standard_normal((20, 12))):
        A, tA = both(a.astype(NP[dtype]))
        if a.shape != (4, 4):  # (the default cutoffs would fall among low_rank's rounding)
            check(jt.linalg.pinv(A), torch.linalg.pinv(tA), dtype)
            check(jt.pinverse(A), torch.pinverse(tA), dtype)
        check(jt.linalg.pinv(A, rtol=0.3), torch.linalg.pinv(tA, rtol=0.3), dtype)
        check(jt.linalg.pinv(A, atol=0.5), torch.linalg.pinv(tA, atol=0.5), dtype)
        check(jt.linalg.pinv(A, 0.3), torch.linalg.pinv(tA, 0.3), dtype)
        check(A.pinverse(rcond=0.3), tA.pinverse(rcond=0.3), dtype)
        if a.shape[-1] == a.shape[-2]:
            s = jt.tensor((a + np.swapaxes(a, -1, -2)).astype(NP[dtype]))
            check(jt.linalg.pinv(s, hermitian=True), torch.linalg.pinv(torch.tensor(s.numpy()),
                                                                        hermitian=True), dtype)
    A, tA = both(rng.standard_normal((2, 3, 3)))
    rtol = jt.tensor([0.1, 0.9])
    check(jt.linalg.pinv(A, rtol=rtol), torch.linalg.pinv(tA, rtol=torch.tensor([0.1, 0.9])))
    out = jt.empty(0, dtype=jt.float64)
    assert jt.linalg.pinv(A, out=out) is out
    check(out, torch.linalg.pinv(tA))
    out = jt.empty(0, dtype=jt.float64)  # (torch's out= takes a dtype the result casts into)
    assert jt.linalg.pinv(A.float(), out=out) is out
    check(out, torch.linalg.pinv(tA.float()).double(), jt.float32)


@pytest.mark.parametrize("shape, hermitian", [((4, 4), False), ((5, 3), False), ((3, 5), False),
                                              ((2, 4, 3), False), ((2, 4, 4), True)])
def test_pinv_gradients_match_torch(shape, hermitian):
    a = np.random.default_rng(47).standard_normal(shape)
    if hermitian:
        a = a + np.swapaxes(a, -1, -2)
    A, tA = both(a, True)
    g = np.random.default_rng(48).standard_normal(shape[:-2] + shape[:-3:-1])
    jt.linalg.pinv(A, hermitian=hermitian).backward(jt.tensor(g))
    torch.linalg.pinv(tA, hermitian=hermitian).backward(torch.tensor(g))
    theirs = tA.grad.numpy()
    if hermitian:  # (eigh's rule gives the symmetric part of torch's gradient: the same change
        theirs = (theirs + np.swapaxes(theirs, -1, -2)) / 2  # of a symmetric A's pinv)
    np.testing.assert_allclose(A.grad.numpy(), theirs, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("p", [None, 2, -2, "nuc", 1, -1, float("inf"), -float("inf"), "fro"])
def test_cond_matches_torch(p):
    rng = np.random.default_rng(49)
    cases = [rng.standard_normal((2, 4, 4)), rng.standard_normal((3, 3)).astype(np.float32),
             np.zeros((2, 0, 0))]
    if p in (None, 2, -2):
        cases += [rng.standard_normal((2, 5, 3)), rng.standard_normal((3, 5))]
    if p not in (None, 2, -2, "nuc"):
        cases += [np.stack([np.eye(3), np.ones((3, 3))])]  # singular: inf
    for a in cases:
        A, tA = both(a)
        mine, theirs = jt.linalg.cond(A, p), torch.linalg.cond(tA, p)
        check(mine, theirs, jt.float32 if a.dtype == np.float32 else jt.float64)
    if p in (None, 2, -2, "nuc"):  # (torch's others write its inverse in place: no gradient)
        A, tA = both(rng.standard_normal((2, 4, 4)), True)
        assert_grads_match_torch(torch, np.random.default_rng(50), jt.linalg.cond(A, p),
                                 torch.linalg.cond(tA, p), [A], [tA], 1e-7, 1e-8)


def lstsq_both(a, b, **kwargs):
    return (jt.linalg.lstsq(jt.tensor(a), jt.tensor(b), **kwargs),
            torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), **kwargs))


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
def test_lstsq_matches_torch(driver, dtype):
    """Torch's fields per driver (empty where its CPU driver computes none), shapes, dtypes."""
    rng = np.random.default_rng(51)
    f = NP[dtype]
    cases = [(rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 2))),  # tall
             (rng.standard_normal((3, 5)), rng.standard_normal((3, 2))),  # wide: minimum norm
             (rng.standard_normal((4, 4)), rng.standard_normal((4, 1))),
             (rng.standard_normal((1, 5, 3)), rng.standard_normal((4, 5, 2))),  # broadcast
             (rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5))),  # vectors
             (rng.standard_normal((5, 3)), rng.standard_normal(5)),
             (rng.standard_normal((20, 12)), rng.standard_normal((20, 3))),  # LAPACK's svd
             (np.zeros((0, 3)), np.zeros((0, 2)))]
    if driver != "gels":  # (LAPACK's gels zeroes B for an n = 0 A: residuals 0, not ||B||^2)
        cases += [(np.zeros((3, 0)), rng.standard_normal((3, 2)))]
    if driver != "gels":  # rank-deficient: the minimum-norm solution, the rank, no residuals
        cases += [(low_rank((2, 6, 4), 2, 52), rng.standard_normal((2, 6, 2))),
                  (np.stack([rng.standard_normal((5, 3)), low_rank((5, 3), 2, 53)]),
                   rng.standard_normal((2, 5, 1)))]
    for a, b in cases:
        mine, theirs = lstsq_both(a.astype(f), b.astype(f), driver=driver)
        assert type(mine).__name__ == "linalg_lstsq"
        assert mine._fields == ("solution", "residuals", "rank", "singular_values")
        for x, y in zip(mine, theirs, strict=False):
            check(x, y, dtype)
    if driver != "gels":  # (rcond: gels has no use for it)
        u, _ = np.linalg.qr(rng.standard_normal((6, 4)))
        v, _ = np.linalg.qr(rng.standard_normal((4, 4)))
        a = (u * [1, 1e-1, 1e-4, 1e-9]) @ v.T  # rank 3 at rcond 1e-6, 2 at 1e-2
        for rcond, rank in ((1e-6, 3), (1e-2, 2)):
            mine, theirs = lstsq_both(a, rng.standard_normal((6, 2)), rcond=rcond, driver=driver)
            # (torch's gelsy rank varies between calls on the same input, 1 or 2 here: the
            # known rank is the oracle)
            check(mine.rank, torch.tensor(rank))
            if driver in ("gelsd", "gelss"):  # (gelsy drops what its pivoted QR's R11 would,
                # not the small singular values: another X)
                for x, y in zip(mine, theirs, strict=False):
                    check(x, y)


def test_lstsq_gradients_match_torch():
    rng = np.random.default_rng(55)
    for shape, k, driver in (((6, 3), 2, None), ((3, 5), 2, "gelsd"), ((2, 5, 3), 1, "gels")):
        A, tA = both(rng.standard_normal(shape), True)
        B, tB = both(rng.standard_normal(shape[:-1] + (k,)), True)
        assert_grads_match_torch(torch, np.random.default_rng(56),
                                 jt.linalg.lstsq(A, B, driver=driver).solution,
                                 torch.linalg.lstsq(tA, tB, driver=driver).solution,
                                 [A, B], [tA, tB], 1e-7, 1e-8)


@pytest.mark.parametrize("call", [
    lambda la, m: la.matrix_rank(m.ones(3)),
    lambda la, m: la.matrix_rank(m.ones(3, 3, dtype=m.int64)),
    lambda la, m: la.matrix_rank(m.ones(3, 2), hermitian=True),
    lambda la, m: la.pinv(m.ones(3)),
    lambda la, m: la.pinv(m.ones(3, 3, dtype=m.int64)),
    lambda la, m: la.pinv(m.ones(3, 2), hermitian=True),
    lambda la, m: m.pinverse(m.ones(3, 3, dtype=m.int64)),
    lambda la, m: la.cond(m.ones(3)),
    lambda la, m: la.cond(m.ones(3, 3), 3),
    lambda la, m: la.cond(m.ones(3, 3), "foo"),
    lambda la, m: la.cond(m.ones(3, 2), 1),
    lambda la, m: la.cond(m.ones(3, 2), 1.0),
    lambda la, m: la.cond(m.ones(3, 2), -float("inf")),
    lambda la, m: la.cond(m.ones(3, 2), "fro"),
    lambda la, m: la.cond(m.ones(3, 3, dtype=m.int64)),
    lambda la, m: la.cond(m.ones(3, 3, dtype=m.int64), 1),
    lambda la, m: la.lstsq(m.ones(3), m.ones(3)),
    lambda la, m: la.lstsq(m.ones(3, 2), m.ones(2, 3, 2)),
    lambda la, m: la.lstsq(m.ones(3, 2), m.ones(4, 2)),
    lambda la, m: la.lstsq(m.ones(3, 2), m.ones(4)),
    lambda la, m: la.lstsq(m.ones(3, 2), m.ones(3, 2, dtype=m.float64)),
    lambda la, m: la.lstsq(m.ones(3, 2, dtype=m.int64), m.ones(3, 2, dtype=m.int64)),
    lambda la, m: la.lstsq(m.ones(3, 2), m.ones(3, 2), driver="foo"),
    lambda la, m: la.lstsq(m.ones(3, 2), m.tensor(1.0)),
    lambda la, m: la.lstsq(m.ones(3, 2), 1.0),
])
def test_rank_pinv_cond_lstsq_errors_match_torch(call):
    linalg_errors_match_torch(call)


# -- LAPACK: the CPU's path for matrices larger than SMALL --------------------------------------
@pytest.mark.parametrize("dtype", [jt.float32, jt.float64])
def test_lapack_sizes_match_torch(dtype):
    """geqrf/orgqr, syevd and gesdd: one matrix (OpenBLAS's threads) and a stack large enough
    for Numba's (one OpenBLAS thread each), at one Numba thread and all."""
    rng = np.random.default_rng(30)
    for shape in ((40, 25), (25, 40), (60, 12, 12), (3, 0, 20), (20, 0)):
        a = rng.standard_normal(shape).astype(NP[dtype])
        A, tA = both(a)

        def run(A=A):
            return ([jt.linalg.qr(A, mode=m) for m in ("reduced", "complete", "r")],
                    [jt.linalg.svd(A, full_matrices=f) for f in (True, False)])
        for qrs, svds in at_thread_counts(run):
            for mode, (Q, R) in zip(("reduced", "complete", "r"), qrs, strict=False):
                tQ, tR = torch.linalg.qr(tA, mode=mode)
                check(Q, tQ, dtype)
                check(R, tR, dtype)
            for full, (U, S, Vh) in zip((True, False), svds, strict=False):
                tU, tS, tVh = torch.linalg.svd(tA, full_matrices=full)
                check(S, tS, dtype)
                assert U.shape == tU.shape and Vh.shape == tVh.shape
                check_svd(A, U, S, Vh, full, dtype)
    for batch, n in (((), 30), ((60,), 12)):
        a = symmetric(batch, n, 31, NP[dtype])
        for w, V in at_thread_counts(lambda a=a: jt.linalg.eigh(jt.tensor(a))):
            check(w, torch.linalg.eigvalsh(torch.tensor(a)), dtype)
            check_eigh(jt.tensor(a), w, V, dtype)


def test_the_scalar_kernels_match_lapack(monkeypatch):
    """Where NumPy ships no LAPACK (and for matrices up to SMALL) the CPU runs the scalar
    definitions, CUDA's too: QR's factors as LAPACK's, eigh's and svd's values and what does
    not depend on the vectors' signs; NaN propagates through both."""
    from jitensor.kernels.cpu import factor
    n = factor.SMALL + 3
    rng = np.random.default_rng(32)
    a, wide, s = rng.standard_normal((3, n, n - 2)), rng.standard_normal((n - 2, n + 1)), \
        symmetric((2,), n, 33)
    rank1 = np.outer(np.arange(n + 1.0), np.ones(n))  # zero singular values: U completed

    def run():
        out = [*jt.linalg.qr(jt.tensor(a), mode="complete"), *jt.linalg.qr(jt.tensor(wide))]
        w, V = jt.linalg.eigh(jt.tensor(s))
        out += [w, V @ (V * w.unsqueeze(-2)).mT, V.abs()]
        for x, r in ((a, n - 2), (wide, n - 2), (rank1, 1)):
            U, S, Vh = jt.linalg.svd(jt.tensor(x))  # (past the rank the vectors are any basis)
            out += [S, U[..., :r] @ U[..., :r].mT, Vh[..., :r, :].mT @ Vh[..., :r, :],
                    Vh @ Vh.mT, U.mT @ U]
        return out
    theirs = run()
    monkeypatch.setattr(factor, "SMALL", 1 << 30)
    for mine, ref in zip(run(), theirs, strict=False):
        np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=1e-10, atol=1e-10)
    for small in (1 << 30, 0):
        monkeypatch.setattr(factor, "SMALL", small)
        bad = a.copy()
        bad[1, 2, 3] = np.nan
        assert jt.linalg.svdvals(jt.tensor(bad))[1].isnan().all().item()
        assert not jt.linalg.svdvals(jt.tensor(bad))[0].isnan().any().item()
        bad = s.copy()
        bad[0, 3, 2] = np.nan
        w, V = jt.linalg.eigh(jt.tensor(bad))
        assert w[0].isnan().any().item() and not w[1].isnan().any().item()
        assert jt.linalg.qr(jt.tensor(bad)).R[0].isnan().any().item()


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


@needs_cuda
def test_rank_pinv_cond_lstsq_on_cuda_as_on_the_cpu():
    a = np.random.default_rng(57).standard_normal((2, 5, 3))
    b = np.random.default_rng(58).standard_normal((2, 5, 2))
    A = jt.tensor(a, device="cuda", requires_grad=True)
    tA = torch.tensor(a, requires_grad=True)
    check(jt.linalg.matrix_rank(A.detach()).cpu(), torch.linalg.matrix_rank(tA.detach()))
    check(jt.linalg.cond(A.detach()).cpu(), torch.linalg.cond(tA.detach()))
    mine, theirs = jt.linalg.lstsq(A.detach(), jt.tensor(b, device="cuda")), \
        torch.linalg.lstsq(tA.detach(), torch.tensor(b), driver="gels")  # (CUDA's default)
    for x, y in zip(mine, theirs, strict=False):
        check(x.cpu(), y)
    P = jt.linalg.pinv(A)
    assert P.device.type == "cuda"
    check(P.cpu(), torch.linalg.pinv(tA))
    P.sum().backward()
    torch.linalg.pinv(tA).sum().backward()
    check(A.grad.cpu(), tA.grad)


# -- the general eigenproblem (LAPACK's geev, as torch's) ----------------------------------------
EIG_DTYPES = ["float32", "float64", "complex64", "complex128"]


def general(batch, n, seed, dtype):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(tuple(batch) + (n, n))
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(a.shape)
    return a.astype(dtype)


def check_eig(a, w, V, theirs_w, dtype):
    """A V = V diag(w), unit columns whose largest component is real (geev's normalisation),
    the eigenvalues torch's as a set (their order is each LAPACK's)."""
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    w, v, a = w.numpy(), V.numpy(), a.astype(np.complex128)
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    if not v.size:
        return
    assert str(w.dtype) == {"float32": "complex64", "float64": "complex128"}.get(dtype, dtype)
    scale = max(1.0, np.abs(a).max(initial=0)) * a.shape[-1]
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * scale)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol)
    top = np.take_along_axis(v, np.abs(v).argmax(-2)[..., None, :], -2)
    np.testing.assert_allclose(top.imag, 0, atol=tol)
    np.testing.assert_allclose(np.sort_complex(w.reshape(-1, w.shape[-1])),
                               np.sort_complex(theirs_w.numpy().reshape(-1, w.shape[-1])),
                               atol=tol * scale)


@settings(max_examples=20, deadline=None)
@given(batch=batches, n=st.integers(0, 6), dtype=st.sampled_from(EIG_DTYPES),
       seed=st.integers(0, 99))
def test_eig_matches_torch(batch, n, dtype, seed):
    a = general(batch, n, seed, dtype)
    A, tA = both(a)
    w, V = jt.linalg.eig(A)
    tw, _ = torch.linalg.eig(tA)
    check_eig(a, w, V, tw, dtype)
    values = jt.linalg.eigvals(A)
    assert values.dtype is w.dtype and values.shape == w.shape
    np.testing.assert_allclose(np.sort_complex(values.numpy().reshape(-1, max(n, 1))),
                               np.sort_complex(w.numpy().reshape(-1, max(n, 1))), atol=1e-4)


def test_eig_of_real_matrices_gives_exact_conjugate_pairs():
    w = jt.linalg.eigvals(jt.tensor([[0.0, 1.0], [-1.0, 0.0]]))
    assert w.dtype is jt.complex64 and sorted(w.tolist(), key=lambda z: z.imag) == [-1j, 1j]
    w = jt.linalg.eigvals(jt.tensor(general((), 5, 3, "float64")))
    real = w.numpy()[np.abs(w.numpy().imag) < 1e-12]
    assert (real.imag == 0).all()  # (a real eigenvalue of a real matrix has no imaginary part)


@pytest.mark.parametrize("dtype", EIG_DTYPES)
def test_eig_gradients_match_torch(dtype):
    a = general((2,), 4, 7, dtype)
    A, tA = both(a, grad=True)
    weights = np.arange(4.0)
    for lib, X in ((jt, A), (torch, tA)):
        w, V = lib.linalg.eig(X)  # a loss that does not depend on the vectors' phases
        loss = (w * (1 + 2j)).real.sum() + (V.abs() ** 2 * lib.tensor(weights)).sum() + \
            (lib.linalg.eigvals(X).abs() ** 2).sum()
        loss.backward()
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-9
    assert A.grad.dtype is A.dtype
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("call", [
    lambda la, lib: la.eig(lib.ones(2, 3)), lambda la, lib: la.eig(lib.ones(3)),
    lambda la, lib: la.eigvals(lib.ones(2, 3)),
    lambda la, lib: la.eig(lib.tensor([[float("nan"), 0.0], [0.0, 1.0]])),
    lambda la, lib: la.eig(lib.tensor([[float("inf")]]))])
def test_eig_errors_match_torch(call):
    linalg_errors_match_torch(call)


def test_eig_of_empty_and_out():
    w, V = jt.linalg.eig(jt.ones(0, 0))
    assert w.shape == (0,) and V.shape == (0, 0) and w.dtype is jt.complex64
    out = (jt.empty(0, dtype=jt.complex128), jt.empty(0, dtype=jt.complex128))
    got = jt.linalg.eig(jt.tensor(general((), 3, 1, "float64")), out=out)
    assert got[0] is out[0] and got[1] is out[1] and out[0].shape == (3,)


def test_eigvals_of_non_finite_input_is_nan_as_torch():
    for a in ([[float("inf")]], [[float("nan"), 0.0], [0.0, 1.0]]):
        mine, theirs = jt.linalg.eigvals(jt.tensor(a)), torch.linalg.eigvals(torch.tensor(a))
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


# -- complex Hermitian eigenproblems -------------------------------------------------------------
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (3, 3), (2, 12, 12)])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_eigh_matches_torch(dtype, shape, uplo):
    """Real eigenvalues and their gradient, and the eigenvectors up to each column's phase
    (|V|^2 and a loss of it, which the phase leaves alone), against torch's; only the UPLO
    triangle is read, the diagonal's imaginary parts not at all (LAPACK's heevd, as torch)."""
    rng = np.random.default_rng(len(shape) + shape[-1])
    m = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    a = (m + m.conj().swapaxes(-1, -2)).astype(dtype)
    n = shape[-1]
    a[..., np.arange(n), np.arange(n)] += 0.3j
    a[..., np.triu_indices(n, 1)[0] if uplo == "L" else np.tril_indices(n, -1)[0],
      np.triu_indices(n, 1)[1] if uplo == "L" else np.tril_indices(n, -1)[1]] = 7  # unread
    weights = rng.standard_normal(shape)
    results = []
    for lib in (jt, torch):
        A = lib.tensor(a, requires_grad=True)
        w, V = lib.linalg.eigh(A, UPLO=uplo)
        density = V.abs() ** 2
        ((w * lib.arange(n, dtype=w.dtype)).sum() + (density * lib.tensor(weights).to(w.dtype))
         .sum()).backward()
        results.append([w.detach(), density.detach(), A.grad,
                        lib.linalg.eigvalsh(A.detach(), UPLO=uplo)])
    tol = 2e-3 if dtype == "complex64" else 1e-9
    for mine, theirs in zip(*results, strict=True):
        assert mine.dtype.name == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=tol, atol=tol)


def test_complex_eigh_refuses_a_loss_of_the_eigenvectors_phase_as_torch():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    for lib in (jt, torch):
        A = lib.tensor(m + m.conj().T, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"specified up to multiplication by e\^\{i phi\}"):
            lib.linalg.eigh(A)[1].real.sum().backward()


# -- complex QR ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (5, 3), (3, 5), (2, 12, 9), (2, 9, 12)])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_qr_matches_torch(dtype, shape, mode):
    """Q and R themselves (LAPACK's complex geqrf/ungqr, as torch's: R's diagonal real) and the
    gradient of a loss of both, wide and tall, against torch's."""
    rng = np.random.default_rng(shape[-1] * 7 + shape[-2])
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    weights = rng.standard_normal(shape)
    differentiable = mode != "r" and not (mode == "complete" and shape[-2] > shape[-1])
    results = []
    for lib in (jt, torch):
        A = lib.tensor(a, requires_grad=True)
        Q, R = lib.linalg.qr(A, mode=mode)
        results.append([Q.detach(), R.detach()])
        if differentiable and a.size:
            w = lib.tensor(weights[..., :R.shape[-2], :]).to(R.dtype)
            ((Q.real * Q.imag).sum() + (R * w).real.sum()).backward()
            results[-1].append(A.grad)
    tol = 2e-3 if dtype == "complex64" else 1e-9
    for mine, theirs in zip(*results, strict=True):
        assert mine.dtype.name == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=tol, atol=tol)


# -- complex SVD and what is built on it ----------------------------------------------------------
@pytest.mark.parametrize("full_matrices", [False, True])
@pytest.mark.parametrize("shape", [(0, 3), (4, 0), (1, 1), (5, 3), (3, 5), (2, 12, 9), (2, 9, 12)])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_svd_matches_torch(dtype, shape, full_matrices):
    """Real singular values, the vectors up to their columns' phases (U_k Vh_k and |U|, which
    the phases leave alone), and the gradient of a loss of all three, against torch's."""
    rng = np.random.default_rng(shape[-1] * 5 + shape[-2])
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    results = []
    for lib in (jt, torch):
        A = lib.tensor(a, requires_grad=True)
        U, S, Vh = lib.linalg.svd(A, full_matrices=full_matrices)
        k = S.shape[-1]
        P, Uk = U[..., :k] @ Vh[..., :k, :], U[..., :k].abs()
        results.append([S.detach(), P.detach(), Uk.detach()])
        if a.size:
            ((S * lib.arange(k, dtype=S.dtype)).sum() + (P.real ** 2).sum() + (Uk ** 3).sum()
             ).backward()
            results[-1].append(A.grad)
    tol = 2e-3 if dtype == "complex64" else 1e-8
    for mine, theirs in zip(*results, strict=True):
        assert mine.dtype.name == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=tol, atol=tol)


SPECTRAL = {
    "svdvals": lambda L, A, B: L.linalg.svdvals(A),
    "matrix_rank": lambda L, A, B: L.linalg.matrix_rank(A),
    "pinv": lambda L, A, B: L.linalg.pinv(A),
    "pinv_hermitian": lambda L, A, B: L.linalg.pinv(A @ A.mH, hermitian=True),
    "matrix_norm_2": lambda L, A, B: L.linalg.matrix_norm(A, 2),
    "matrix_norm_-2": lambda L, A, B: L.linalg.matrix_norm(A, -2),
    "matrix_norm_nuc": lambda L, A, B: L.linalg.matrix_norm(A, "nuc"),
    "lstsq_gelsd": lambda L, A, B: L.linalg.lstsq(A, B, driver="gelsd"),
    "lstsq_gelsy": lambda L, A, B: L.linalg.lstsq(A, B),
}


@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
@pytest.mark.parametrize("op", sorted(SPECTRAL))
def test_what_complex_svd_serves_matches_torch(op, shape):
    """Values, dtypes (real singular values, residuals and norms) and gradients."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    b = rng.standard_normal((shape[0], 2)) + 1j * rng.standard_normal((shape[0], 2))
    results = []
    for lib in (jt, torch):
        A = lib.tensor(a, requires_grad=True)
        out = SPECTRAL[op](lib, A, lib.tensor(b))
        outs = list(out) if isinstance(out, tuple) else [out]
        differentiable = [o for o in outs if o.requires_grad]
        if differentiable:
            sum((o.abs() if o.is_complex() else o).sum() for o in differentiable).backward()
        results.append([o.detach() for o in outs] + ([A.grad] if differentiable else []))
    for mine, theirs in zip(*results, strict=True):
        assert mine.dtype.name == str(theirs.dtype).split(".")[-1] and mine.shape == theirs.shape
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-8, atol=1e-8)


def test_complex_svd_refuses_a_loss_of_the_vectors_phase_as_torch():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    for lib in (jt, torch):
        A = lib.tensor(m, requires_grad=True)
        with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
            lib.linalg.svd(A)[0].real.sum().backward()


@pytest.mark.parametrize("dtype", ["complex128"])
def test_gradients_of_complex_eigenvalues_alone_match_torch(dtype):
    """eigvalsh and svdvals: the gradient reaches the rules as a real one, which hands them the
    vectors unconjugated."""
    rng = np.random.default_rng(4)
    m = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))).astype(dtype)
    grads = []
    for lib in (jt, torch):
        A = lib.tensor(m, requires_grad=True)
        (lib.linalg.eigvalsh(A) * lib.arange(3.0)).sum().backward()
        B = lib.tensor(m, requires_grad=True)
        (lib.linalg.svdvals(B) * lib.arange(3.0)).sum().backward()
        grads.append([A.grad.numpy(), B.grad.numpy()])
    for mine, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
