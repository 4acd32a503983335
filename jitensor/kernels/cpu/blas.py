"""sgemm/dgemm from the OpenBLAS that NumPy's wheels ship, callable inside @njit kernels.

Numba's own `np.dot` finds BLAS through SciPy, and Numba imports `scipy.linalg` while it sets
up its CPU target whenever SciPy is installed: 0.12-0.17 s of every `import jitensor`. NumPy's
wheels already load an ILP64 OpenBLAS (`scipy_openblas64_`, or `openblas64_` before NumPy 2),
so the kernels call its `cblas_?gemm` directly: the symbol's address is registered with LLVM
under a fixed name at import, and the cached kernels link against that name in every process.

`AVAILABLE` is False where no such library is found (a NumPy built against another BLAS); the
float products then run the package's own tiled kernel."""
import ctypes
import glob
import os

import numpy as np
from llvmlite import binding
from numba import types

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS enum values


def _openblas():
    """The ILP64 OpenBLAS bundled with NumPy, or None."""
    root = os.path.dirname(np.__file__)
    for lib in sorted(glob.glob(os.path.join(root + ".libs", "*openblas64*")) +
                      glob.glob(os.path.join(root, ".dylibs", "*openblas64*"))):
        try:
            return ctypes.CDLL(lib)  # NumPy has loaded it already: this is the same handle
        except OSError:
            continue
    return None


def _register(lib):
    """Register cblas_sgemm/dgemm/sgemv/dgemv and openblas_{get,set}_num_threads under
    jitensor's names; True when all were found."""
    for name in ("sgemm", "dgemm", "sgemv", "dgemv", "get_num_threads", "set_num_threads"):
        prefix = "cblas_" if "gemm" in name or "gemv" in name else "openblas_"
        for symbol in (f"scipy_{prefix}{name}64_", f"{prefix}{name}64_"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                address = ctypes.cast(fn, ctypes.c_void_p).value
                binding.add_symbol(f"jitensor_{prefix}{name}", address)
                break
        else:
            return False
    return True


# LAPACK's factorisations and decompositions (`_work` forms: the plain LAPACKE ones would first
# scan the input for NaN and refuse it, where torch's LAPACK propagates it, and allocate their
# workspace with malloc on every call) and BLAS's triangular solve
_LAPACK = ("LAPACKE_sgetrf_work", "LAPACKE_dgetrf_work", "LAPACKE_spotrf_work",
           "LAPACKE_dpotrf_work", "cblas_strsm", "cblas_dtrsm",
           "LAPACKE_sgeqrf_work", "LAPACKE_dgeqrf_work", "LAPACKE_sorgqr_work",
           "LAPACKE_dorgqr_work", "LAPACKE_ssyevd_work", "LAPACKE_dsyevd_work",
           "LAPACKE_sgesdd_work", "LAPACKE_dgesdd_work")


# the general eigenproblem (linalg.eig) and the Hermitian one (complex linalg.eigh), apart:
# without them the others still serve
_GEEV = ("LAPACKE_sgeev_work", "LAPACKE_dgeev_work", "LAPACKE_cgeev_work", "LAPACKE_zgeev_work")
_HEEVD = ("LAPACKE_cheevd_work", "LAPACKE_zheevd_work")
_COMPLEX_QR = ("LAPACKE_cgeqrf_work", "LAPACKE_zgeqrf_work", "LAPACKE_cungqr_work",
               "LAPACKE_zungqr_work")
_COMPLEX_SVD = ("LAPACKE_cgesdd_work", "LAPACKE_zgesdd_work")


def _register_lapack(lib, names=_LAPACK):
    """Register LAPACK functions (`names`) under jitensor's names; True when all were found."""
    for name in names:
        fn = getattr(lib, f"scipy_{name}64_", None) or getattr(lib, f"{name}64_", None)
        if fn is None:
            return False
        binding.add_symbol(f"jitensor_{name}", ctypes.cast(fn, ctypes.c_void_p).value)
    return True


_lib = _openblas()
AVAILABLE = _lib is not None and _register(_lib)
LAPACK = _lib is not None and _register_lapack(_lib)
GEEV = LAPACK and _register_lapack(_lib, _GEEV)
HEEVD = LAPACK and _register_lapack(_lib, _HEEVD)
COMPLEX_QR = LAPACK and _register_lapack(_lib, _COMPLEX_QR)
COMPLEX_SVD = LAPACK and _register_lapack(_lib, _COMPLEX_SVD)


def _thread_functions(lib):
    """OpenBLAS's (get, set) thread count functions, callable from Python, or None."""
    for prefix in ("scipy_openblas_", "openblas_"):
        get = getattr(lib, f"{prefix}get_num_threads64_", None)
        if get is not None:
            return get, getattr(lib, f"{prefix}set_num_threads64_")
    return None


_threads = _thread_functions(_lib) if AVAILABLE else None


def on_one_thread(fn, *args):
    """fn(*args) with OpenBLAS on one thread meanwhile: for work whose own tasks call it on
    Numba's threads (linalg.gemm_blas says why)."""
    if _threads is None:
        return fn(*args)
    get, set_ = _threads
    threads = get()
    set_(1)
    try:
        return fn(*args)
    finally:
        set_(threads)


def _gemm_type(real):
    # cblas_?gemm(order, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc): the enums
    # are C ints, the sizes 64-bit (ILP64); pointers pass as integers (`arr.ctypes.data`).
    i32, i64, ptr = types.int32, types.int64, types.uintp
    return types.void(i32, i32, i32, i64, i64, i64, real, ptr, i64, ptr, i64, real, ptr, i64)


sgemm = types.ExternalFunction("jitensor_cblas_sgemm", _gemm_type(types.float32))
dgemm = types.ExternalFunction("jitensor_cblas_dgemm", _gemm_type(types.float64))


def _gemv_type(real):
    # cblas_?gemv(order, trans, m, n, alpha, A, lda, x, incx, beta, y, incy)
    i32, i64, ptr = types.int32, types.int64, types.uintp
    return types.void(i32, i32, i64, i64, real, ptr, i64, ptr, i64, real, ptr, i64)


sgemv = types.ExternalFunction("jitensor_cblas_sgemv", _gemv_type(types.float32))
dgemv = types.ExternalFunction("jitensor_cblas_dgemv", _gemv_type(types.float64))

# OpenBLAS's thread count (a C int): the products run it on one thread, split over Numba's
# threads themselves (linalg.gemm_blas says why)
get_num_threads = types.ExternalFunction("jitensor_openblas_get_num_threads", types.int32())
set_num_threads = types.ExternalFunction("jitensor_openblas_set_num_threads",
                                         types.void(types.int32))


# LAPACKE_?getrf_work(layout, m, n, a, lda, ipiv) -> info; ?potrf_work(layout, uplo, n, a, lda):
# the layout a C int, uplo a C char, sizes and pivots 64-bit (ILP64), arrays as addresses
def _lapack(name, restype, *argtypes):
    return types.ExternalFunction(f"jitensor_{name}", restype(*argtypes))


_i32, _i64, _char, _ptr = types.int32, types.int64, types.int8, types.uintp
sgetrf = _lapack("LAPACKE_sgetrf_work", _i64, _i32, _i64, _i64, _ptr, _i64, _ptr)
dgetrf = _lapack("LAPACKE_dgetrf_work", _i64, _i32, _i64, _i64, _ptr, _i64, _ptr)
spotrf = _lapack("LAPACKE_spotrf_work", _i64, _i32, _char, _i64, _ptr, _i64)
dpotrf = _lapack("LAPACKE_dpotrf_work", _i64, _i32, _char, _i64, _ptr, _i64)
# cblas_?trsm(layout, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb)
strsm = _lapack("cblas_strsm", types.void, _i32, _i32, _i32, _i32, _i32, _i64, _i64,
                types.float32, _ptr, _i64, _ptr, _i64)
dtrsm = _lapack("cblas_dtrsm", types.void, _i32, _i32, _i32, _i32, _i32, _i64, _i64,
                types.float64, _ptr, _i64, _ptr, _i64)
LEFT, UPPER, LOWER, NON_UNIT, UNIT = 141, 121, 122, 131, 132  # CBLAS enum values
COL_MAJOR = 102  # (the decompositions take column-major matrices: LAPACKE's row-major forms
#                  would transpose into a malloc'd copy on every call)

# ?geqrf_work(layout, m, n, a, lda, tau, work, lwork); ?orgqr_work(layout, m, n, k, a, lda, tau,
# work, lwork); ?syevd_work(layout, jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork);
# ?gesdd_work(layout, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork): lwork -1
# asks for the workspace's size, written to work[0] (and iwork[0])
sgeqrf = _lapack("LAPACKE_sgeqrf_work", _i64, _i32, _i64, _i64, _ptr, _i64, _ptr, _ptr, _i64)
dgeqrf = _lapack("LAPACKE_dgeqrf_work", _i64, _i32, _i64, _i64, _ptr, _i64, _ptr, _ptr, _i64)
cgeqrf = _lapack("LAPACKE_cgeqrf_work", _i64, _i32, _i64, _i64, _ptr, _i64, _ptr, _ptr, _i64)
zgeqrf = _lapack("LAPACKE_zgeqrf_work", _i64, _i32, _i64, _i64, _ptr, _i64, _ptr, _ptr, _i64)
cungqr = _lapack("LAPACKE_cungqr_work", _i64, _i32, _i64, _i64, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64)
zungqr = _lapack("LAPACKE_zungqr_work", _i64, _i32, _i64, _i64, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64)
sorgqr = _lapack("LAPACKE_sorgqr_work", _i64, _i32, _i64, _i64, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64)
dorgqr = _lapack("LAPACKE_dorgqr_work", _i64, _i32, _i64, _i64, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64)
ssyevd = _lapack("LAPACKE_ssyevd_work", _i64, _i32, _char, _char, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64, _ptr, _i64)
dsyevd = _lapack("LAPACKE_dsyevd_work", _i64, _i32, _char, _char, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64, _ptr, _i64)
sgesdd = _lapack("LAPACKE_sgesdd_work", _i64, _i32, _char, _i64, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64, _ptr, _i64, _ptr, _i64, _ptr)
dgesdd = _lapack("LAPACKE_dgesdd_work", _i64, _i32, _char, _i64, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64, _ptr, _i64, _ptr, _i64, _ptr)
# (the complex ones take rwork, reals, before iwork)
cgesdd = _lapack("LAPACKE_cgesdd_work", _i64, _i32, _char, _i64, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64, _ptr, _i64, _ptr, _i64, _ptr, _ptr)
zgesdd = _lapack("LAPACKE_zgesdd_work", _i64, _i32, _char, _i64, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64, _ptr, _i64, _ptr, _i64, _ptr, _ptr)
# ?geev_work(layout, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork) for real
# matrices; the complex ones have one array w of eigenvalues and a last argument rwork (2n reals)
sgeev = _lapack("LAPACKE_sgeev_work", _i64, _i32, _char, _char, _i64, _ptr, _i64, _ptr, _ptr,
                _ptr, _i64, _ptr, _i64, _ptr, _i64)
dgeev = _lapack("LAPACKE_dgeev_work", _i64, _i32, _char, _char, _i64, _ptr, _i64, _ptr, _ptr,
                _ptr, _i64, _ptr, _i64, _ptr, _i64)
cgeev = _lapack("LAPACKE_cgeev_work", _i64, _i32, _char, _char, _i64, _ptr, _i64, _ptr, _ptr,
                _i64, _ptr, _i64, _ptr, _i64, _ptr)
zgeev = _lapack("LAPACKE_zgeev_work", _i64, _i32, _char, _char, _i64, _ptr, _i64, _ptr, _ptr,
                _i64, _ptr, _i64, _ptr, _i64, _ptr)
# ?heevd_work(layout, jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork): w
# and rwork real
cheevd = _lapack("LAPACKE_cheevd_work", _i64, _i32, _char, _char, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64, _ptr, _i64, _ptr, _i64)
zheevd = _lapack("LAPACKE_zheevd_work", _i64, _i32, _char, _char, _i64, _ptr, _i64, _ptr, _ptr,
                 _i64, _ptr, _i64, _ptr, _i64)
