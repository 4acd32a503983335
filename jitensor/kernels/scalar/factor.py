"""LU and Cholesky factorisations of one dense matrix and the triangular solves that use them,
shared by the CPU kernels (a matrix per task) and the CUDA ones (a matrix per thread).

A matrix is n x n (m x n for `lu`), row-major, at a[o:]; right-hand sides are n x k,
row-major, at b[bo:]. The
conventions are LAPACK's (getrf, potrf, trtrs), which torch returns: after `lu`, the strict
lower triangle holds L's multipliers (L's diagonal is 1) and the upper triangle U, piv[po + i]
is the 1-based row that row i was swapped with at step i, and the result ("info") is 0, or the
1-based index of the first zero pivot (the factorisation still completes: such a U is
singular). Rows are scanned in order, so the inner loops run along rows: unit stride."""
from numba.extending import register_jitable

from . import libm


@register_jitable
def _swap_rows(a, o, width, i, j):
    for c in range(width):
        t = a[o + i * width + c]
        a[o + i * width + c] = a[o + j * width + c]
        a[o + j * width + c] = t


@register_jitable
def _magnitude(x):
    """LAPACK's pivoting measure: |x| of a real, |re| + |im| of a complex (i?amax's cabs1)."""
    return abs(x.real) + abs(x.imag)


@register_jitable
def lu(a, o, m, n, piv, po):
    """a (m x n) = P L U in place by Gaussian elimination with partial pivoting (the largest
    magnitude in the column; the first of equals, as LAPACK's i?amax); min(m, n) pivots."""
    info = 0
    for k in range(min(m, n)):
        p = k
        best = _magnitude(a[o + k * n + k])
        for i in range(k + 1, m):
            v = _magnitude(a[o + i * n + k])
            if v > best:
                best = v
                p = i
        piv[po + k] = p + 1
        if p != k:
            _swap_rows(a, o, n, k, p)
        d = a[o + k * n + k]
        if d == 0:
            if info == 0:
                info = k + 1
            continue
        for i in range(k + 1, m):
            f = a[o + i * n + k] / d
            a[o + i * n + k] = f
            for j in range(k + 1, n):
                a[o + i * n + j] -= f * a[o + k * n + j]
    return info


@register_jitable
def permute(b, bo, n, k, piv, po):
    """B = P^T B: the row swaps of `lu`, in its order."""
    for i in range(n):
        p = piv[po + i] - 1
        if p != i:
            _swap_rows(b, bo, k, i, p)


@register_jitable
def triangular(a, o, n, b, bo, k, upper, unit):
    """B = T^-1 B in place, T the upper or lower triangle of a (its diagonal read as ones
    where `unit`) by substitution; a zero on the diagonal gives inf/nan, as LAPACK's trsm."""
    for step in range(n):
        i = n - 1 - step if upper else step
        lo, hi = (i + 1, n) if upper else (0, i)
        for r in range(lo, hi):
            f = a[o + i * n + r]
            for j in range(k):
                b[bo + i * k + j] -= f * b[bo + r * k + j]
        if not unit:
            d = a[o + i * n + i]
            for j in range(k):
                b[bo + i * k + j] /= d


@register_jitable
def lu_solve(a, o, n, piv, po, b, bo, k):
    """B = A^-1 B from A's `lu` factors."""
    permute(b, bo, n, k, piv, po)
    triangular(a, o, n, b, bo, k, False, True)
    triangular(a, o, n, b, bo, k, True, False)


@register_jitable
def cholesky(a, o, n):
    """a = L (lower, with the upper triangle zeroed) where a's lower triangle is that of a
    positive-definite A = L L^H; else 0 < the order k of the first leading minor that is not
    positive-definite (a NaN counts as not), a partly factored as LAPACK's potrf leaves it
    (its k-th pivot on the diagonal). Real or complex (the diagonal's imaginary parts are not
    read, as potrf's)."""
    info = 0
    for j in range(n):
        s = a[o + j * n + j].real
        for c in range(j):
            x = a[o + j * n + c]
            s -= (x * x.conjugate()).real
        if not s > 0:
            a[o + j * n + j] = s
            info = j + 1
            break
        d = libm.sqrt(s)
        a[o + j * n + j] = d
        for i in range(j + 1, n):
            v = a[o + i * n + j]
            for c in range(j):
                v -= a[o + i * n + c] * a[o + j * n + c].conjugate()
            a[o + i * n + j] = v / d
    for i in range(n):
        for j in range(i + 1, n):
            a[o + i * n + j] = 0
    return info


@register_jitable
def qr(a, o, m, n, tau, to):
    """a (m x n) = its Householder QR in place, as LAPACK's geqrf: R on and above the diagonal,
    reflector j's vector below it (its leading 1 implied), its scale in tau[to + j]; H_j = I -
    tau v v^T maps column j onto beta e_j with beta = -sign(a_jj) |x| (dlarfg's choice, which
    fixes R's signs as torch's), and tau = 0 (H_j = I) where x is 0 below the diagonal."""
    for j in range(min(m, n)):
        d = o + j * n + j
        alpha = a[d]
        s = alpha * 0
        for i in range(j + 1, m):
            s += a[o + i * n + j] * a[o + i * n + j]
        if s == 0:
            tau[to + j] = s
            continue
        beta = -libm.copysign(libm.sqrt(alpha * alpha + s), alpha)
        t = (beta - alpha) / beta
        tau[to + j] = t
        scale = 1 / (alpha - beta)
        for i in range(j + 1, m):
            a[o + i * n + j] *= scale
        a[d] = beta
        for c in range(j + 1, n):
            _reflect(a, o, n, j, m, c, t, a, o, n)


@register_jitable
def _reflect(v, vo, vn, j, m, c, t, x, xo, xn):
    """Column c of x (rows j.. of an m-row matrix, row length xn) = H x's column c, H = I -
    t v v^T with v = (1, column j of v below row j) (row length vn)."""
    s = x[xo + j * xn + c]
    for i in range(j + 1, m):
        s += v[vo + i * vn + j] * x[xo + i * xn + c]
    s *= t
    x[xo + j * xn + c] -= s
    for i in range(j + 1, m):
        x[xo + i * xn + c] -= s * v[vo + i * vn + j]


@register_jitable
def qr_q(a, o, m, n, tau, to, q, qo, k):
    """q (m x k, k = min(m, n) or m) = the first k columns of H_0 H_1 ... of `qr`'s reflectors,
    as LAPACK's orgqr: applied in reverse to the identity's columns."""
    for i in range(m):
        for c in range(k):
            q[qo + i * k + c] = 1 if i == c else 0
    for step in range(min(m, n)):
        j = min(m, n) - 1 - step
        t = tau[to + j]
        if t != 0:
            for c in range(j, k):  # (the columns before j are still the identity's: e_c, c < j)
                _reflect(a, o, n, j, m, c, t, q, qo, k)


@register_jitable
def _rotate(x, o, stride, step, count, p, q, c, s):
    """(x_p, x_q) = (c x_p - s x_q, s x_p + c x_q) for the vectors x_p, x_q of `count`
    elements at x[o + p * stride + i * step] (rows: stride n, step 1; columns: the converse)."""
    for i in range(count):
        u = x[o + p * stride + i * step]
        w = x[o + q * stride + i * step]
        x[o + p * stride + i * step] = c * u - s * w
        x[o + q * stride + i * step] = s * u + c * w


@register_jitable
def _rotation(alpha, beta, gamma):
    """(c, s) of the Jacobi rotation that zeroes gamma, the off-diagonal of the symmetric 2 x 2
    [[alpha, gamma], [gamma, beta]]: the smaller angle (|t| <= 1), for convergence."""
    zeta = (beta - alpha) / (2 * gamma)
    if abs(zeta) > 1e18:  # (zeta^2 would overflow; t ~ 1 / (2 zeta) there)
        t = 0.5 / zeta
    else:
        t = libm.copysign(1.0, zeta) / (abs(zeta) + libm.sqrt(1 + zeta * zeta))
    c = 1 / libm.sqrt(1 + t * t)
    return c, t * c


@register_jitable
def _identity(v, vo, n):
    """v (n x n, from vo) = the identity: where the rotations start."""
    for i in range(n):
        for j in range(n):
            v[vo + i * n + j] = 1 if i == j else 0


@register_jitable
def eigh(a, o, n, v, vo, w, wo, eps):
    """w (n) = the eigenvalues of the symmetric a (n x n, both triangles read; destroyed),
    ascending, and v (n x n) = their unit eigenvectors as columns, by cyclic Jacobi rotations:
    each zeroes one off-diagonal pair; sweeps stop when every off-diagonal is below eps times
    the geometric mean of its diagonal pair (or eps^2 of A's norm), which leaves the
    eigenvalues as accurate as LAPACK's. Signs of the eigenvectors are Jacobi's own."""
    norm = a[o] * 0
    for i in range(n * n):
        norm += a[o + i] * a[o + i]
    floor = eps * eps * libm.sqrt(norm)
    _identity(v, vo, n)
    for _sweep in range(100):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                g = a[o + p * n + q]
                app, aqq = a[o + p * n + p], a[o + q * n + q]
                if abs(g) <= floor or abs(g) <= eps * libm.sqrt(abs(app * aqq)):
                    continue
                rotated = True
                c, s = _rotation(app, aqq, g)
                _rotate(a, o, 1, n, n, p, q, c, s)  # columns p, q
                _rotate(a, o, n, 1, n, p, q, c, s)  # rows p, q
                _rotate(v, vo, 1, n, n, p, q, c, s)
                a[o + p * n + q] = 0
                a[o + q * n + p] = 0
        if not rotated:
            break
    for i in range(n):
        w[wo + i] = a[o + i * n + i]
    for i in range(n):  # selection sort: n swaps of v's columns at most
        k = i
        for j in range(i + 1, n):
            if w[wo + j] < w[wo + k]:
                k = j
        if k != i:
            w[wo + i], w[wo + k] = w[wo + k], w[wo + i]
            for r in range(n):
                v[vo + r * n + i], v[vo + r * n + k] = v[vo + r * n + k], v[vo + r * n + i]


@register_jitable
def svd(a, o, m, n, v, vo, s, so, eps):
    """s (n) = the singular values of a (m x n, m >= n), descending; a = its left singular
    vectors as columns (zero where a singular value is 0), v (n x n) = the right ones, by
    one-sided Jacobi (Hestenes): rotations of column pairs until all are orthogonal to eps,
    which keeps small singular values accurate where A^T A's eigenvalues would lose them."""
    _identity(v, vo, n)
    for _sweep in range(100):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                alpha, beta, gamma = a[o] * 0, a[o] * 0, a[o] * 0
                for i in range(m):
                    x, y = a[o + i * n + p], a[o + i * n + q]
                    alpha += x * x
                    beta += y * y
                    gamma += x * y
                if abs(gamma) <= eps * libm.sqrt(alpha * beta) or gamma == 0:
                    continue
                rotated = True
                c, t = _rotation(alpha, beta, gamma)
                _rotate(a, o, 1, n, m, p, q, c, t)
                _rotate(v, vo, 1, n, n, p, q, c, t)
        if not rotated:
            break
    for j in range(n):
        norm = a[o] * 0
        for i in range(m):
            norm += a[o + i * n + j] * a[o + i * n + j]
        norm = libm.sqrt(norm)
        s[so + j] = norm
        if norm != 0:
            for i in range(m):
                a[o + i * n + j] /= norm
    for i in range(n):  # selection sort, descending, moving the vectors along
        k = i
        for j in range(i + 1, n):
            if s[so + j] > s[so + k]:
                k = j
        if k != i:
            s[so + i], s[so + k] = s[so + k], s[so + i]
            for r in range(m):
                a[o + r * n + i], a[o + r * n + k] = a[o + r * n + k], a[o + r * n + i]
            for r in range(n):
                v[vo + r * n + i], v[vo + r * n + k] = v[vo + r * n + k], v[vo + r * n + i]
