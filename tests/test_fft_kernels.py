"""The CPU FFT kernels (jitensor/kernels/cpu/fft.py) against numpy.fft, computed in float64:
c2c both ways, r2c and c2r, for lengths drawn by hypothesis and for the sizes that take each
path (radices 4, 2, 3, 5 and other small primes, Bluestein for large prime factors, the real
transforms' packing for even lengths), and the same bits on one thread and on all."""
import numpy as np
import pytest
from conftest import at_thread_counts
from hypothesis import given, settings
from hypothesis import strategies as st

from jitensor.kernels.cpu import fft

COMPLEX = [np.complex64, np.complex128]
SIZES = ([2 ** k for k in range(17)] + [3 ** k for k in range(2, 10)]
         + [5 ** k for k in range(2, 7)]
         + [7 * 11 * 13, 31, 37, 97, 64 * 97, 101, 2 * 3 * 5 * 7 * 31, 3 * 5 ** 6, 1009,
            2 * 1009, 4 * 1009, 65537])  # (primes above 100: Bluestein)


def _real(dtype):
    return np.float32 if dtype == np.complex64 else np.float64


def _signal(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _close(got, want, n, dtype):
    """got matches the float64 reference `want` to eps * log2(n) * 8 of want's largest
    magnitude (an FFT's error grows with the log of its length)."""
    assert got.dtype == dtype and got.shape == want.shape
    eps = np.finfo(_real(dtype) if np.dtype(dtype).kind == "c" else dtype).eps
    scale = max(np.abs(want).max(), 1.0) if want.size else 1.0
    error = np.abs(got - want).max() if want.size else 0.0
    assert error <= 8 * eps * max(np.log2(n), 1) * scale, (n, error / scale)


def _c2c(x, inverse):
    out = np.empty_like(x)
    before = x.copy()
    fft.c2c(x, out, inverse)
    np.testing.assert_array_equal(x, before)  # only read
    return out


def _c2c_reference(x, inverse):
    x = x.astype(np.complex128)
    return np.fft.ifft(x, axis=1) * x.shape[1] if inverse else np.fft.fft(x, axis=1)


def _r2c(x):
    out = np.empty((x.shape[0], x.shape[1] // 2 + 1), np.result_type(x.dtype, np.complex64))
    fft.r2c(x, out)
    return out


def _c2r(x, n):
    out = np.empty((x.shape[0], n), x.real.dtype)
    before = x.copy()
    fft.c2r(x, out)
    np.testing.assert_array_equal(x, before)
    return out


@settings(max_examples=60)
@given(st.integers(1, 200), st.integers(1, 5), st.sampled_from(COMPLEX), st.booleans(),
       st.integers(0, 2 ** 32 - 1))
def test_c2c_matches_numpy(n, rows, dtype, inverse, seed):
    x = _signal(np.random.default_rng(seed), (rows, n), dtype)
    _close(_c2c(x, inverse), _c2c_reference(x, inverse), n, dtype)


@settings(max_examples=60)
@given(st.integers(1, 200), st.integers(1, 5), st.sampled_from(COMPLEX),
       st.integers(0, 2 ** 32 - 1))
def test_r2c_and_c2r_match_numpy(n, rows, dtype, seed):
    rng = np.random.default_rng(seed)
    x = _signal(rng, (rows, n), _real(dtype))
    _close(_r2c(x), np.fft.rfft(x.astype(np.float64), axis=1), n, dtype)
    spectrum = _signal(rng, (rows, n // 2 + 1), dtype)
    want = np.fft.irfft(spectrum.astype(np.complex128), n, axis=1) * n
    _close(_c2r(spectrum, n), want, n, _real(dtype))


@pytest.mark.parametrize("n", SIZES)
def test_sizes_of_every_path(n):
    rng = np.random.default_rng(n)
    for dtype in COMPLEX:
        rows = 2 if n <= 1 << 12 else 1
        x = _signal(rng, (rows, n), dtype)
        for inverse in (False, True):
            _close(_c2c(x, inverse), _c2c_reference(x, inverse), n, dtype)
        real = x.real.copy()
        _close(_r2c(real), np.fft.rfft(real.astype(np.float64), axis=1), n, dtype)
        half = x[:, :n // 2 + 1].copy()
        want = np.fft.irfft(half.astype(np.complex128), n, axis=1) * n
        _close(_c2r(half, n), want, n, _real(dtype))


def test_c2r_ignores_the_imaginary_parts_of_the_real_bins():
    """x[0] and (n even) x[n // 2] of a real signal's spectrum are real: their imaginary parts
    are ignored, as pocketfft and torch ignore them."""
    rng = np.random.default_rng(0)
    for n in (8, 9, 64, 65):
        x = _signal(rng, (3, n // 2 + 1), np.complex128)
        real = x.copy()
        real[:, 0] = real[:, 0].real
        if n % 2 == 0:
            real[:, -1] = real[:, -1].real
        np.testing.assert_allclose(_c2r(x, n), np.fft.irfft(real, n, axis=1) * n, atol=1e-12)


def test_round_trips_and_linearity():
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 12, 97, 128, 1000):
        x = _signal(rng, (2, n), np.complex128)
        np.testing.assert_allclose(_c2c(_c2c(x, False), True) / n, x, atol=1e-12)
        real = x.real.copy()
        np.testing.assert_allclose(_c2r(_r2c(real), n) / n, real, atol=1e-12)


def test_inputs_that_are_read_only_or_strided():
    rng = np.random.default_rng(2)
    x = _signal(rng, (3, 64), np.complex64)
    x.flags.writeable = False
    _close(_c2c(x, False), _c2c_reference(x, False), 64, np.complex64)
    wide = _signal(rng, (3, 128), np.float64)
    _close(_r2c(wide[:, ::2]), np.fft.rfft(wide[:, ::2], axis=1), 64, np.complex128)
    spectrum = _signal(rng, (6, 33), np.complex128)[::2]
    want = np.fft.irfft(spectrum, 64, axis=1) * 64
    _close(_c2r(spectrum, 64), want, 64, np.float64)


def test_empty_and_mismatched_arguments():
    fft.c2c(np.empty((0, 8), np.complex64), np.empty((0, 8), np.complex64), False)
    fft.r2c(np.empty((0, 8), np.float32), np.empty((0, 5), np.complex64))
    fft.c2r(np.empty((0, 5), np.complex128), np.empty((0, 8), np.float64))
    for call in (lambda: fft.c2c(np.ones((2, 8), np.complex64), np.ones((2, 8)), False),
                 lambda: fft.c2c(np.ones((2, 8), np.complex64), np.ones((2, 4), np.complex64),
                                 True),
                 lambda: fft.r2c(np.ones((2, 8), np.float32), np.ones((2, 5), np.complex128)),
                 lambda: fft.r2c(np.ones((2, 8)), np.ones((2, 4), np.complex128)),
                 lambda: fft.c2r(np.ones((2, 5), np.complex64), np.ones((2, 8))),
                 lambda: fft.c2r(np.ones((2, 4), np.complex64), np.ones((2, 8), np.float32))):
        with pytest.raises(ValueError, match="do not match"):
            call()


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("rows, n", [(64, 1024), (3, 3 ** 9), (1, 1 << 17), (1, 65537),
                                     (1, 2 * 65537), (5 * fft.BLOCK + 7, 256),
                                     (2 * fft.BLOCK + 1, 1024), (9, 4096)],
                         ids=["many rows", "rows", "one long row", "long Bluestein",
                              "long real Bluestein", "blocks", "blocks and one row",
                              "small blocks"])
def test_same_bits_on_any_thread_count(rows, n, dtype):
    """Each output element is computed by the same operations whether the rows run a row per
    task, in blocks fixed by the rows' indices (the last one short), or one long row
    (fft.LONG_ROW points or more) runs each step's tasks on the threads."""
    assert rows > 1 or (n if n % 2 else n // 2) >= fft.LONG_ROW  # (the real jobs' c2c length)
    rng = np.random.default_rng(n)
    x = _signal(rng, (rows, n), dtype)
    real, half = x.real.copy(), x[:, :n // 2 + 1].copy()
    for results in (at_thread_counts(lambda: _c2c(x, False)),
                    at_thread_counts(lambda: _c2c(x, True)),
                    at_thread_counts(lambda: _r2c(real)),
                    at_thread_counts(lambda: _c2r(half, n))):
        for other in results[1:]:
            np.testing.assert_array_equal(other, results[0])
    _close(_c2c(x, False), _c2c_reference(x, False), n, dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", [2, 4, 8, 64, 256, 1024, fft.BLOCK_POINTS // 4,
                               fft.BLOCK_POINTS // 2])  # (the last two: fewer rows a block)
def test_blocks_of_rows_compute_each_row_as_alone(n, dtype):
    """Many rows of a power of two run fft.BLOCK at a time (fewer in the last block): each row
    gets the bits it gets alone, one row never being blocked, and matches numpy."""
    rng = np.random.default_rng(n)
    for rows in (2, 3, fft.BLOCK + 1, 2 * fft.BLOCK + 3):
        x = _signal(rng, (rows, n), dtype)
        real, half = x.real.copy(), x[:, :n // 2 + 1].copy()
        jobs = [(lambda a: _c2c(a, False), x), (lambda a: _c2c(a, True), x), (_r2c, real),
                (lambda a: _c2r(a, n), half)]
        for job, a in jobs:
            together = job(a)
            for j in range(rows):
                np.testing.assert_array_equal(together[j:j + 1], job(a[j:j + 1].copy()))
        _close(_c2c(x, False), _c2c_reference(x, False), n, dtype)
        _close(_r2c(real), np.fft.rfft(real.astype(np.float64), axis=1), n, dtype)
        want = np.fft.irfft(half.astype(np.complex128), n, axis=1) * n
        _close(_c2r(half, n), want, n, _real(dtype))
