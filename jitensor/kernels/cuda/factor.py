"""CUDA kernels of the factorisations (formulas: kernels/scalar/factor.py) over stacks of
matrices, `a` (t, n, n) and `b` (t, n, k) C-contiguous, in place: a matrix per thread. That
suits batches of small matrices; one large matrix runs on one thread (a blocked, many-thread
factorisation, as cuSOLVER's, is what large ones would need)."""
import numpy as np
from numba import cuda

from ..scalar import factor as S
from . import driver
from .access import store
from .memory import pointer


@driver.jit
def _lu(a, ao, piv, po, info, io, t, m, n, k):
    s = cuda.grid(1)
    while s < t:
        store(info, io + s, S.lu(a, ao + s * m * n, m, n, piv, po + s * k))
        s += cuda.gridsize(1)


@driver.jit
def _lu_solve(a, ao, piv, po, b, bo, t, n, k):
    m = cuda.grid(1)
    while m < t:
        S.lu_solve(a, ao + m * n * n, n, piv, po + m * n, b, bo + m * n * k, k)
        m += cuda.gridsize(1)


@driver.jit
def _triangular(a, ao, b, bo, t, n, k, upper, unit):
    m = cuda.grid(1)
    while m < t:
        S.triangular(a, ao + m * n * n, n, b, bo + m * n * k, k, upper, unit)
        m += cuda.gridsize(1)


@driver.jit
def _cholesky(a, ao, info, io, t, n):
    m = cuda.grid(1)
    while m < t:
        store(info, io + m, S.cholesky(a, ao + m * n * n, n))
        m += cuda.gridsize(1)


@driver.jit
def _qr(a, ao, tau, to, q, qo, t, m, n, r, k):
    s = cuda.grid(1)
    while s < t:
        S.qr(a, ao + s * m * n, m, n, tau, to + s * r)
        S.qr_q(a, ao + s * m * n, m, n, tau, to + s * r, q, qo + s * m * k, k)
        s += cuda.gridsize(1)


@driver.jit
def _eigh(a, ao, v, vo, w, wo, t, n, eps):
    s = cuda.grid(1)
    while s < t:
        S.eigh(a, ao + s * n * n, n, v, vo + s * n * n, w, wo + s * n, eps)
        s += cuda.gridsize(1)


@driver.jit
def _svd(a, ao, v, vo, s, so, t, m, n, eps):
    k = cuda.grid(1)
    while k < t:
        S.svd(a, ao + k * m * n, m, n, v, vo + k * n * n, s, so + k * n, eps)
        k += cuda.gridsize(1)


def lu(a, piv, info):
    t, m, n = a.shape
    driver.launch_1d(_lu, t, *pointer(a), *pointer(piv), *pointer(info), t, m, n, piv.shape[1])


def lu_solve(a, piv, b):
    t, n, k = b.shape
    driver.launch_1d(_lu_solve, t, *pointer(a), *pointer(piv), *pointer(b), t, n, k)


def triangular(a, b, upper, unit):
    t, n, k = b.shape
    driver.launch_1d(_triangular, t, *pointer(a), *pointer(b), t, n, k, bool(upper),
                     bool(unit))


def cholesky(a, info):
    t, n = a.shape[0], a.shape[1]
    driver.launch_1d(_cholesky, t, *pointer(a), *pointer(info), t, n)


def qr(a, tau, q):
    t, m, n = a.shape
    driver.launch_1d(_qr, t, *pointer(a), *pointer(tau), *pointer(q), t, m, n, tau.shape[1],
                     q.shape[2])


def eigh(a, v, w):
    t, n = w.shape
    driver.launch_1d(_eigh, t, *pointer(a), *pointer(v), *pointer(w), t, n,
                     float(np.finfo(a.dtype).eps))


def svd(a, v, s):
    t, m, n = a.shape
    driver.launch_1d(_svd, t, *pointer(a), *pointer(v), *pointer(s), t, m, n,
                     float(np.finfo(a.dtype).eps))
