"""torch.backends.mkl: jitensor does not link Intel's MKL (its BLAS is NumPy's OpenBLAS)."""


def is_available():
    return False
