"""The rules of ops/factor.py's ops, the factorisations and solvers. (An _ex form's result is
(value, info): info, an integer, has no gradient.)"""
from ... import creation
from ...ops import complex_ops, factor, linalg, matrix, reduction, shape
from ..graph import _is_complex
from ._common import _zero, rule


def _batched_outer(u, v):
    return shape.unsqueeze(u, -1) * shape.unsqueeze(v, -2)


def _matrices_of(t):
    return shape.unsqueeze(shape.unsqueeze(t, -1), -1)


@rule("solve")
def _solve(g, X, A, B, *, left=True, out=None):
    # A X = B: dX = A^-1 (dB - dA X), so gB = A^-T g and gA = -gB X^T (X A = B: mirrored)
    gB = factor.solve(shape.transpose(A, -2, -1), g, left=left)
    if not left:
        return (A, -linalg.matmul(shape.transpose(X, -2, -1), gB)), (B, gB)
    if factor._vector_case(A, B):
        return (A, -_batched_outer(gB, X)), (B, gB)
    return (A, -linalg.matmul(gB, shape.transpose(X, -2, -1))), (B, gB)


@rule("solve_ex")
def _solve_ex(g, result, A, B, *, left=True, check_errors=False, out=None):
    return _solve(g[0], result[0], A, B, left=left)


@rule("inv", uses_inputs=False)
def _inv(g, Y, A, *, out=None):
    Yt = shape.transpose(Y, -2, -1)
    return ((A, -linalg.matmul(linalg.matmul(Yt, g), Yt)),)


@rule("inv_ex", uses_inputs=False)
def _inv_ex(g, result, A, *, check_errors=False, out=None):
    return _inv(g[0], result[0], A)


def _singular_cofactors(A):
    """The cofactor matrix adj(A)^T of one n x n A whose LU has a zero pivot, exactly, where
    det(A) A^-T is 0 * inf. With A = P L U, adj(A)^T = det(P) P L^-T adj(U)^T, and for U with
    zero pivots at z0 < ... < z1 only, adj(U) = c x y^T: x spans U's null space (x[z0] = 1,
    x = 0 below), y its left null space (y[z1] = 1, y = 0 above), c is (-1)^(z0+z1) times U's
    pivots before z0 and after z1 times det(U[a:b, a+1:b+1]) for each pair of consecutive
    zero pivots a < b (U's cofactors factor into those blocks; c = 0 where rank(A) < n-1)."""
    n = A.shape[-1]
    P, L, U = factor.lu(A)
    pivots = matrix.diagonal(U, 0, -2, -1)
    zero = [k for k, u in enumerate(pivots.tolist()) if u == 0]
    z0, z1 = zero[0], zero[-1]
    c = (-1) ** (z0 + z1) * factor.det(P) * reduction.prod(pivots[:z0]) \
        * reduction.prod(pivots[z1 + 1:])
    for a, b in zip(zero, zero[1:], strict=False):
        c = c * factor.det(U[a:b, a + 1:b + 1])

    def unit(k):
        return creation.eye(n, dtype=A.dtype, device=A.device)[k]
    x = unit(z0) - shape.cat([factor.solve_triangular(U[:z0, :z0], U[:z0, z0:z0 + 1],
                                                      upper=True)[:, 0],
                              creation.zeros(n - z0, dtype=A.dtype, device=A.device)])
    y = unit(z1) - shape.cat([creation.zeros(z1 + 1, dtype=A.dtype, device=A.device),
                              factor.solve_triangular(U[z1 + 1:, z1 + 1:], U[z1:z1 + 1, z1 + 1:],
                                                      upper=True, left=False)[0]])
    w = factor.solve_triangular(shape.transpose(L, -2, -1), shape.unsqueeze(y, -1), upper=True,
                                unitriangular=True)
    return c * _batched_outer(linalg.matmul(P, w)[:, 0], x)


@rule("det")
def _det(g, d, A, *, out=None):
    """g adj(A)^T, the cofactors: det(A) A^-T where A is invertible, and from the LU where it
    is not (torch's, which differentiates an SVD there; its first-order backward without
    create_graph gives 0 instead where det is exactly 0 and n > 1)."""
    inverse, info = factor.inv_ex(A)
    cofactors = _matrices_of(d) * shape.transpose(inverse, -2, -1)
    singular = [b for b, k in enumerate(info.reshape(-1).tolist()) if k]
    if singular:
        n = A.shape[-1]
        flat, cofactors = A.reshape(-1, n, n), cofactors.reshape(-1, n, n).clone()
        for b in singular:
            cofactors[b] = _singular_cofactors(flat[b])
        cofactors = cofactors.reshape(A.shape)
    return ((A, _matrices_of(g) * cofactors),)


@rule("slogdet", uses_result=False)
def _slogdet(g, result, A, *, out=None):
    """g A^-T; at a singular A (log|det| = -inf) inf and NaN, as torch's: no derivative. A
    complex A's sign has one too: gA = (g_logabsdet - i Im(conj(g_sign) sign)) A^-H (torch's
    linalg_slogdet_backward)."""
    g_sign, g = g
    if not A.is_complex():
        if g is None:  # (a real sign is piecewise constant)
            return ()
        # (A^T's LU, as torch's: its infs and NaNs at a singular A fall where torch's do)
        return ((A, _matrices_of(g) * factor.inv_ex(shape.transpose(A, -2, -1)).inverse),)
    # the engine hands A conjugated where a gradient is complex (graph.call_rule): g_sign is
    original = A if g_sign is None else complex_ops.conj(A)
    c = creation.zeros(tuple(A.shape[:-2]), dtype=A.dtype, device=A.device) if g is None \
        else g.to(A.dtype)
    if g_sign is not None:
        sign = factor.slogdet(original).sign
        c = c - 1j * (complex_ops.conj(g_sign) * sign).imag
    inverse = factor.inv_ex(original).inverse
    return ((A, _matrices_of(c) * complex_ops.conj(shape.transpose(inverse, -2, -1))),)


def _computed(g, *tensors):
    """`tensors` as the op computed them: the engine hands a rule its complex operands
    conjugated when a gradient is complex (its real-coefficient rules need conj(f'(z)):
    graph.call_rule), and the factorisations' formulas are torch's own, on the operands as
    they are."""
    if not _is_complex(g):
        return tensors
    return tuple(complex_ops.conj(t) if t.is_complex() else t for t in tensors)


@rule("cholesky", uses_inputs=False)
def _cholesky(g, result, A, *, upper=False, out=None):
    # A = L L^H: gA = L^-H S L^-1, S = (P + tril(P, -1)^H) / 2 for P = tril(L^H gL): torch's
    # cholesky_backward (so a complex gA keeps the imaginary part of P's diagonal, as torch's).
    L, = _computed(g, result)
    L, gL = (L.mH, g.mH) if upper else (L, g)
    P = matrix.tril(linalg.matmul(L.mH, gL))
    S = 0.5 * (P + matrix.tril(P, -1).mH)
    gA = factor.solve_triangular(L.mH, S, upper=True)  # L^-H S
    return ((A, factor.solve_triangular(L, gA, upper=False, left=False)),)


@rule("cholesky_ex", uses_inputs=False)
def _cholesky_ex(g, result, A, *, upper=False, check_errors=False, out=None):
    return _cholesky(g[0], result[0], A, upper=upper)


@rule("solve_triangular")
def _solve_triangular(g, X, A, B, *, upper, left=True, unitriangular=False, out=None):
    At = shape.transpose(A, -2, -1)
    gB = factor.solve_triangular(At, g, upper=not upper, left=left, unitriangular=unitriangular)
    Xt = shape.transpose(X, -2, -1)
    gA = -(linalg.matmul(gB, Xt) if left else linalg.matmul(Xt, gB))
    k = int(unitriangular)
    return (A, matrix.triu(gA, k) if upper else matrix.tril(gA, -k)), (B, gB)


def _unpacked(LU):
    """(L, U) of lu_factor's packed LU: L (*, m, k) unit lower, U (*, k, n) upper."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    eye = creation.eye(m, k, dtype=LU.dtype, device=LU.device)
    return matrix.tril(LU[..., :, :k], -1) + eye, matrix.triu(LU[..., :k, :])


def _lu_backward(gL, gU, L, U):
    """P^T gA for A = P L U (torch's linalg_lu_backward): square, gA = P L^-T (tril(L^T gL, -1)
    + triu(gU U^T)) U^-T; for m < n (m > n) the extra columns of U (rows of L) enter too."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    gL = _zero(L) if gL is None else gL
    gU = _zero(U) if gU is None else gU
    Lt, Ut = shape.transpose(L, -2, -1), shape.transpose(U, -2, -1)
    if m <= n:
        X = linalg.matmul(Lt, gL) - linalg.matmul(matrix.triu(gU), Ut)
        X = factor.solve_triangular(Ut[..., :k, :], matrix.tril(X, -1), upper=False, left=False)
        X = shape.cat([X + matrix.triu(gU[..., :k]), gU[..., k:]], -1)
        return factor.solve_triangular(Lt, X, upper=True, unitriangular=True)
    X = linalg.matmul(gU, Ut) - linalg.matmul(Lt, matrix.tril(gL, -1))
    X = factor.solve_triangular(Lt[..., :k], matrix.triu(X), upper=True, unitriangular=True)
    X = shape.cat([X + matrix.tril(gL[..., :k, :], -1), gL[..., k:, :]], -2)
    return factor.solve_triangular(Ut, X, upper=False, left=False)


@rule("lu")
def _lu(g, result, A, *, pivot=True, out=None):
    P, L, U = result  # (P is piecewise constant: g[0] is dropped)
    return ((A, linalg.matmul(P, _lu_backward(g[1], g[2], L, U))),)


@rule("lu_factor", "lu_factor_ex")
def _lu_factor(g, result, A, *, pivot=True, check_errors=False, out=None):
    LU, pivots = result[0], result[1]
    k = min(LU.shape[-2:])
    L, U = _unpacked(LU)
    gLU = g[0]  # L's part below the diagonal, U's on and above it
    return ((A, factor._permuted(pivots, _lu_backward(gLU[..., :, :k], gLU[..., :k, :], L, U))),)


@rule("lu_solve")
def _lu_solve(g, X, LU, pivots, B, *, left=True, adjoint=False, out=None):
    gB = factor.lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)
    if not LU.requires_grad:  # (the usual case: spare the products below)
        return ((B, gB),)
    # torch's linalg_lu_solve_LU: gLU from L's and U's parts of the solve's A = P L U
    L, U = _unpacked(LU)
    Lt, Ut = shape.transpose(L, -2, -1), shape.transpose(U, -2, -1)
    Xt, gt = shape.transpose(X, -2, -1), shape.transpose(g, -2, -1)
    if left != adjoint:
        gR = factor.solve_triangular(Ut, -(linalg.matmul(g, Xt) if left
                                           else linalg.matmul(gt, X)), upper=False)
        gL = factor.solve_triangular(Lt, linalg.matmul(gR, Ut), upper=True, unitriangular=True)
        return (LU, matrix.tril(gL, -1) + matrix.triu(gR)), (B, gB)
    P = factor._permutation(pivots, LU.shape[-1], LU.dtype, LU.device)
    Pt = shape.transpose(P, -2, -1)
    gR = -linalg.matmul(linalg.matmul(linalg.matmul(Pt, X if left else Xt), gt if left else g), P)
    gR = factor.solve_triangular(Lt, gR, upper=True, left=False, unitriangular=True)
    gU = factor.solve_triangular(Ut, linalg.matmul(Lt, gR), upper=False, left=False)
    return (LU, matrix.tril(gR, -1) + matrix.triu(gU)), (B, gB)


def _qr_square(gQ, gR, Q, R):
    """gA for A = Q R, m >= n, Q (m x n) with orthonormal columns: with C = Q^H dA R^-1, Q^H dQ
    is the skew-Hermitian part of C's strict lower triangle (and the imaginary part of its
    diagonal) and dR R^-1 the rest, which gives gA = (gQ + Q copyltu(M)) R^-H, M = gR R^H -
    Q^H gQ's upper triangle mirrored, conjugated, with the real part of its diagonal (torch's
    linalg_qr_backward, as its own derivation writes it)."""
    C = _zero(R) if gR is None else linalg.matmul(gR, R.mH)
    if gQ is not None:
        C = C - linalg.matmul(Q.mH, gQ)
    diagonal = matrix.diagonal(C, 0, -2, -1)
    C = matrix.triu(C, 1) + matrix.triu(C, 1).mH + matrix.diag_embed(
        diagonal.real.to(C.dtype) if C.is_complex() else diagonal)
    X = linalg.matmul(Q, C) if gQ is None else gQ + linalg.matmul(Q, C)
    return factor.solve_triangular(R.mH, X, upper=False, left=False)


@rule("linalg_qr", uses_inputs=False)
def _linalg_qr(g, result, A, mode="reduced", *, out=None):
    Q, R = result
    m, n = A.shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    gQ, gR = g
    Q, R = _computed(g, Q, R)
    if m >= n:
        return ((A, _qr_square(gQ, gR, Q, R)),)
    # A = [X | Y], R = [U | V]: X = Q U is square, and Y = Q V feeds Q's gradient through V
    gU = None if gR is None else gR[..., :m]
    gV = None if gR is None else gR[..., m:]
    if gV is not None:
        Y = A[..., m:]
        gYQ = linalg.matmul(complex_ops.conj(Y) if Y.is_complex() else Y, gV.mH)
        gQ = gYQ if gQ is None else gQ + gYQ
    gX = _qr_square(gQ, gU, Q, R[..., :m])
    gY = _zero(A[..., m:]) if gV is None else linalg.matmul(Q, gV)
    return ((A, shape.cat([gX, gY], -1)),)


@rule("eigh", uses_inputs=False)
def _eigh(g, result, A, UPLO="L", *, out=None):
    """gA = V (diag(gw) + skewh(V^H gV) / (w_j - w_i)) V^H (torch's linalg_eigh_backward): a
    Hermitian gradient, infinite where eigenvalues repeat and gV does not vanish there. A
    complex V is defined up to a phase per column: a loss that depends on it is refused, as
    torch refuses it."""
    w, V = result
    gw, gV = g
    V, = _computed(g, V)
    Vh = V.mH
    inner = _zero(V) if gV is None else linalg.matmul(Vh, gV)
    if gV is not None:
        if V.is_complex() and not bool(reduction.all(
                matrix.diagonal(inner, 0, -2, -1).imag.abs() <= 1e-2)):
            raise RuntimeError("linalg_eigh_backward: The eigenvectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified "
                               "loss function depends on this quantity, so it is ill-defined.")
        n = w.shape[-1]
        gaps = shape.unsqueeze(w, -2) - shape.unsqueeze(w, -1) \
            + creation.eye(n, dtype=w.dtype, device=w.device)
        inner = 0.5 * (inner - inner.mH) / gaps
    if gw is not None:
        inner = inner + matrix.diag_embed(gw)
    return ((A, linalg.matmul(linalg.matmul(V, inner), Vh)),)


def _eig_backward(gL, gV, L, V):
    """gA = V^-H (gL on the diagonal, (V^H gV - V^H V Re diag(V^H gV)) / conj(L_j - L_i) off
    it) V^H (torch's linalg_eig_backward); a real A takes the real part (the engine)."""
    Vh = V.mH
    n = L.shape[-1]
    if gV is None:
        inner = _zero(V)
    else:
        inner = linalg.matmul(Vh, gV)
        re_diag = inner.diagonal(0, -2, -1).real.to(V.dtype)
        inner = inner - linalg.matmul(Vh, V * shape.unsqueeze(re_diag, -2))
        gaps = (shape.unsqueeze(L, -2) - shape.unsqueeze(L, -1)).conj() \
            + creation.eye(n, dtype=V.dtype, device=V.device)
        inner = inner / gaps
    if gL is not None:
        eye = creation.eye(n, dtype=V.dtype, device=V.device)
        inner = inner * (1 - eye) + matrix.diag_embed(gL)
    return factor.solve(Vh, linalg.matmul(inner, Vh))


@rule("eig", uses_inputs=False)
def _eig(g, result, A, *, out=None):
    gL, gV = g
    L, V = _computed(g, *result)
    return ((A, _eig_backward(gL, gV, L, V)),)


@rule("eigvals", uses_result=False)
def _eigvals(g, result, A, *, out=None):
    L, V = factor.eig(A)  # (the eigenvectors the forward did not compute)
    if A.is_complex():  # (A came conjugated, and so are its eigenvalues and vectors)
        L, V = complex_ops.conj(L), complex_ops.conj(V)
    return ((A, _eig_backward(g, None, L, V)),)


def _svd_backward(gU, gS, gVh, U, S, Vh):
    """gA for the thin A = U diag(S) Vh (torch's svd_backward): U [(skew(U^H gU) S + S
    skew(V^H gV)) / E + diag(gS) (+ i Im diag(U^H gU) / S where complex)] Vh, E_ij = S_j^2 -
    S_i^2 (1 on the diagonal), skew(X) = X - X^H, plus (I - U U^H) gU S^-1 Vh where A is tall
    or U S^-1 gVh (I - V V^H) where it is wide. Complex singular vectors are defined up to a
    phase: a loss that depends on it is refused, as torch refuses it."""
    if gU is None and gVh is None:
        return linalg.matmul(U * shape.unsqueeze(gS, -2), Vh)
    m, n = U.shape[-2], Vh.shape[-1]
    UhgU = None if gU is None else linalg.matmul(U.mH, gU)
    VhgV = None if gVh is None else linalg.matmul(Vh, gVh.mH)
    UhgU = None if UhgU is None else UhgU - UhgU.mH
    VhgV = None if VhgV is None else VhgV - VhgV.mH
    if U.is_complex():
        im_u = _zero(S) if UhgU is None else matrix.diagonal(UhgU, 0, -2, -1).imag
        im_v = _zero(S) if VhgV is None else matrix.diagonal(VhgV, 0, -2, -1).imag
        if not bool(reduction.all((im_u + im_v).abs() <= 1e-2 + 1e-2 * im_v.abs())):
            raise RuntimeError("svd_backward: The singular vectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this phase term, making it ill-defined.")
    k = S.shape[-1]
    S2 = S * S
    E = shape.unsqueeze(S2, -2) - shape.unsqueeze(S2, -1) \
        + creation.eye(k, dtype=S.dtype, device=S.device)
    if UhgU is not None and VhgV is not None:
        inner = (UhgU * shape.unsqueeze(S, -2) + shape.unsqueeze(S, -1) * VhgV) / E
    elif UhgU is not None:
        inner = UhgU / E * shape.unsqueeze(S, -2)
    else:
        inner = shape.unsqueeze(S, -1) * (VhgV / E)
    if gS is not None:
        inner = inner + matrix.diag_embed(gS)
    if U.is_complex() and UhgU is not None:
        inner = inner + matrix.diag_embed(matrix.diagonal(UhgU, 0, -2, -1) / (2.0 * S))
    if m > n and gU is not None:
        gUSinv = gU / shape.unsqueeze(S, -2)
        gA = linalg.matmul(U, inner) + gUSinv - linalg.matmul(U, linalg.matmul(U.mH, gUSinv))
        return linalg.matmul(gA, Vh)
    if m < n and gVh is not None:
        SinvgVh = gVh / shape.unsqueeze(S, -1)
        gA = linalg.matmul(inner, Vh) + SinvgVh - linalg.matmul(linalg.matmul(SinvgVh, Vh.mH),
                                                                Vh)
        return linalg.matmul(U, gA)
    return linalg.matmul(U, linalg.matmul(inner, Vh))


@rule("linalg_svd", uses_inputs=False)
def _linalg_svd(g, result, A, full_matrices=True, *, driver=None, out=None):
    U, Sv, Vh = result
    gU, gS, gVh = g
    U, Vh = _computed(g, U, Vh)
    k = Sv.shape[-1]
    if full_matrices:  # (the extra columns do not change A: torch narrows them away)
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    return ((A, _svd_backward(gU, gS, gVh, U, Sv, Vh)),)
