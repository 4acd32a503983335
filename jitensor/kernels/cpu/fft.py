"""CPU FFT kernels: the unnormalized DFT of each row of a C-contiguous 2-D array, complex to
complex (`c2c`), real to half spectrum (`r2c`) and back (`c2r`), for any length.

A plan per (job, length, dtype, direction) is made on the host in float64 and cached: the
length's factorization into radices (2, 3, 5, other small primes, 4) and the table of its roots
of unity. Rows are transformed by Stockham autosort stages, each reading one buffer and writing
the other in order, so no bit-reversal pass is needed. A stage of radix p costs O(p) per
element, so a length with a prime factor above BLUESTEIN_MIN is a convolution with a chirp
(Bluestein), done by FFTs of a 2, 3, 5-smooth length M >= 2n - 1. Real transforms of even length
view the n reals as n/2 complex numbers, transform those and untangle the two half spectra in
one pass: half the work of the complex transform. Odd lengths go through c2c. complex64
computes in float32, as pocketfft and torch do.

All three jobs run one worker (kernels.run_tasks) per dtype, which reads the plan's arrays by
address: one compile per dtype whatever the job, length or thread count (compile time is the
user's time: as a parallel kernel and its plain twin the butterflies compiled once in each,
and the parfor's body twice more). Many rows are tasks of their own, or in blocks of rows
(short rows of a power of two: _block, whose butterflies vectorise); a few long rows run their
steps (stages, Bluestein's and the real jobs' pointwise passes) one after the other, each
step's butterflies split into tasks over the threads. Either way every output element is
computed by the same operations in the same order: the same bits on any number of threads.
Work below PARALLEL_MIN, or on one thread, runs on the calling thread and never starts the
thread pool."""
import functools

import numpy as np
from numba import carray, njit
from numba.extending import register_jitable

from .kernels import Specialised, num_threads, run_tasks, single_thread, worker
from .vector import as_pointer, call

# Points (rows x length) from which a call runs on the thread pool: an FFT computes ~log2(n)
# butterflies a point, far more than the elementwise ops' PARALLEL_MIN assumes (measured on 2
# cores: 16 rows of 1024 ran 1.7x faster on both, 8 rows neither faster nor slower).
PARALLEL_MIN = 1 << 14
# A prime factor above this makes a length go through Bluestein: a stage of radix p costs ~p/2
# complex multiply-adds an element, Bluestein about three FFTs of 2-4x the length. Measured
# (one thread, n = p, 16p, 256p): the stage is faster up to p ~ 100-150.
BLUESTEIN_MIN = 100
# Butterflies of a stage (or elements of a pointwise pass) per task when one row runs in
# parallel: enough to amortise a task's start, few enough to balance the threads.
TASK = 1 << 11
# Many rows of a power of two run BLOCK at a time (_block), at most BLOCK_POINTS points a
# block, so that its planes stay in L2 (measured on one thread: 16 rows of 256 to 1024 points
# ran 1.6-1.9x as fast as a row at a time, 8 rows 1.4x; 32 no faster than 16).
BLOCK, BLOCK_POINTS = 16, 1 << 14
PAD = 32  # reals between _block's planes: their offsets no multiple of 4 KiB apart
TILE = 32  # points of each row _block gathers or scatters at a time
# Rows of fewer points never run their steps in parallel: each step is a call to the pool
# (measured on 2 cores, one row: 2^15 points ran 0.5-1x as fast, 2^16 1.05-1.7x, 2^17 and more
# 1.3-2.2x).
LONG_ROW = 1 << 16


# -- plans (host, float64) ----------------------------------------------------------------------
def _roots(n):
    """exp(-2j*pi*j/n) for j < n, in float64. Each angle is reduced to the first octant by exact
    integer symmetries before its cosine and sine are taken, so that the values are accurate to
    an ulp and w^(n/4) is exactly -1j (the radix-4 butterfly relies on it)."""
    u = 8 * np.arange(n, dtype=np.int64)  # the angle in units of pi / (4n)
    lower = u > 4 * n  # angle > pi: 2 pi - angle (sine negated)
    u = np.where(lower, 8 * n - u, u)
    left = u > 2 * n  # angle > pi/2: pi - angle (cosine negated)
    u = np.where(left, 4 * n - u, u)
    swap = u > n  # angle > pi/4: pi/2 - angle (cosine and sine swapped)
    u = np.where(swap, 2 * n - u, u)
    angle = (np.pi / 4) * (u / n)
    c, s = np.cos(angle), np.sin(angle)
    c, s = np.where(swap, s, c), np.where(swap, c, s)
    roots = np.empty(n, np.complex128)
    roots.real = np.where(left, -c, c)
    roots.imag = -np.where(lower, -s, s)
    return roots


def _radices(n):
    """n's prime factors in the order of the stages: a two, the odd primes, then the fours. The
    early stages have long runs (_pass*), which the specialised passes of 2, 3 and 5 need; the
    fours also run the late stages, along k."""
    fours, odd = [], []
    while n % 4 == 0:
        fours.append(4)
        n //= 4
    two = [2] if n % 2 == 0 else []
    n //= 1 + len(two)
    p = 3
    while p * p <= n:
        while n % p == 0:
            odd.append(p)
            n //= p
        p += 2
    if n > 1:
        odd.append(n)
    return two + odd + fours


def _good_size(n):
    """The smallest 2^a 3^b 5^c >= n."""
    best = 1 << (n - 1).bit_length()
    f5 = 1
    while f5 < best:
        f35 = f5
        while f35 < best:
            f = f35
            while f < n:
                f *= 2
            best = min(best, f)
            f35 *= 3
        f5 *= 5
    return best


def _c2c_arrays(n, dtype, inverse):
    """(radices, roots, chirp, spectrum) of an n-point transform of complex `dtype`. Direct:
    the radices of n and its roots of unity of the transform's sign, chirp and spectrum empty.
    Bluestein: the radices and forward roots of M, the chirp h[j] = exp(sign i pi j^2 / n) and
    the spectrum of the conjugate chirp, wrapped to M points, divided by M."""
    radices = _radices(n)
    empty = np.empty(0, dtype)
    if max(radices, default=1) <= BLUESTEIN_MIN:
        roots = _roots(n)
        return (np.array(radices, np.int64), (roots.conj() if inverse else roots).astype(dtype),
                empty, empty)
    m = _good_size(2 * n - 1)
    j = np.arange(n, dtype=np.int64)
    chirp = _roots(2 * n)[j * j % (2 * n)]  # exp(-i pi j^2 / n), the angle reduced exactly
    if inverse:
        chirp = chirp.conj()
    wrapped = np.zeros(m, np.complex128)
    wrapped[:n] = chirp.conj()
    wrapped[m - n + 1:] = chirp.conj()[1:][::-1]
    spectrum = np.fft.fft(wrapped) / m
    return (np.array(_radices(m), np.int64), _roots(m).astype(dtype), chirp.astype(dtype),
            spectrum.astype(dtype))


def _twists(n, dtype, inverse):
    """The twiddles that untangle (r2c) or tangle (c2r) the half spectra of an even n: -i w^k
    for k <= n/2, w = exp(-2j pi / n), conjugated for c2r."""
    twists = -1j * _roots(n)[:n // 2 + 1]
    return (twists.conj() if inverse else twists).astype(dtype)


# -- butterflies -----------------------------------------------------------------------------
# A stage of radix p after sub-transforms of length L (s = n / L of them, row stored as
# a[k * s + r]) makes sub-transforms of length L p (s1 = s / p): for k < L, r < s1, v < p,
#   b[(k + L v) s1 + r] = sum_q w_p^(q v) (w_n^(q k s1) a[k s + q s1 + r])
# with w_m = exp(-2j pi / m) (conjugated for the inverse), read from the table of n roots.
# Each pass does the butterflies k0 <= k < k1, r0 <= r < r1, along r: contiguous runs of s1,
# with a twiddle per run. Radix 4, which also runs the late stages (_radices), loops along k
# (strided, a twiddle per butterfly) once the runs are shorter than RUN: per-run overhead
# dominated there (measured: along k wins for s1 <= 4, along r from 16). The loops index views
# of the buffers with their range variables: an index computed as i + r gets a negative-index
# check that costs more than the arithmetic and stops LLVM vectorising. Either way each output
# is the same expression of the same values.
RUN = 8


@register_jitable
def _mul(w, z):
    """w * z, spelled out: Numba's complex product checks for infinities on some versions."""
    return complex(w.real * z.real - w.imag * z.imag, w.real * z.imag + w.imag * z.real)


@register_jitable
def _butterfly3(c, s, a0, a1, a2):
    """The 3-point DFT of twiddled inputs; c + i s = w_3."""
    t, d = a1 + a2, a1 - a2
    er, ei = a0.real + c * t.real, a0.imag + c * t.imag  # a0 + cos * (a1 + a2)
    jr, ji = -s * d.imag, s * d.real  # i sin * (a1 - a2)
    return a0 + t, complex(er + jr, ei + ji), complex(er - jr, ei - ji)


@register_jitable
def _butterfly4(rot, a0, a1, a2, a3):
    """The 4-point DFT of twiddled inputs; w_4 = rot i, rot exactly -1 (forward) or 1."""
    t0, t1, t2, d = a0 + a2, a0 - a2, a1 + a3, a1 - a3
    t3 = complex(-rot * d.imag, rot * d.real)  # w_4 (a1 - a3)
    return t0 + t2, t1 + t3, t0 - t2, t1 - t3


@register_jitable
def _butterfly5(c1, n1, c2, n2, a0, a1, a2, a3, a4):
    """The 5-point DFT of twiddled inputs; c1 + i n1 = w_5, c2 + i n2 = w_5^2. Outputs 1, 4
    are e1 +- i o1 and 2, 3 are e2 +- i o2 (w^4 = conj w, w^3 = conj w^2)."""
    u1, d1, u2, d2 = a1 + a4, a1 - a4, a2 + a3, a2 - a3
    e1r = a0.real + c1 * u1.real + c2 * u2.real
    e1i = a0.imag + c1 * u1.imag + c2 * u2.imag
    e2r = a0.real + c2 * u1.real + c1 * u2.real
    e2i = a0.imag + c2 * u1.imag + c1 * u2.imag
    o1r, o1i = n1 * d1.real + n2 * d2.real, n1 * d1.imag + n2 * d2.imag
    o2r, o2i = n2 * d1.real - n1 * d2.real, n2 * d1.imag - n1 * d2.imag
    return (a0 + u1 + u2, complex(e1r - o1i, e1i + o1r), complex(e2r - o2i, e2i + o2r),
            complex(e2r + o2i, e2i - o2r), complex(e1r + o1i, e1i - o1r))


@register_jitable(_nrt=False)
def _pass2(a, b, roots, L, s1, k0, k1, r0, r1):
    """Radix 2: the first stage (_radices), whose runs are long."""
    m = L * s1
    for k in range(k0, k1):
        w, i, o = roots[k * s1], 2 * k * s1, k * s1
        x0, x1 = a[i:i + s1], a[i + s1:i + 2 * s1]
        y0, y1 = b[o:o + s1], b[o + m:o + m + s1]
        for r in range(r0, r1):
            t = _mul(w, x1[r])
            y0[r], y1[r] = x0[r] + t, x0[r] - t


@register_jitable(_nrt=False)
def _pass3(a, b, roots, L, s1, k0, k1, r0, r1):
    """Radix 3: along r on long runs, along k on short ones."""
    m, s = L * s1, 3 * s1
    c, n = roots[m].real, roots[m].imag  # w_3
    if s1 >= RUN:
        for k in range(k0, k1):
            w1, w2, i, o = roots[k * s1], roots[2 * k * s1], k * s, k * s1
            x0, x1, x2 = a[i:i + s1], a[i + s1:i + 2 * s1], a[i + 2 * s1:i + s]
            y0, y1, y2 = b[o:o + s1], b[o + m:o + m + s1], b[o + 2 * m:o + 2 * m + s1]
            for r in range(r0, r1):
                y0[r], y1[r], y2[r] = _butterfly3(c, n, x0[r], _mul(w1, x1[r]),
                                                  _mul(w2, x2[r]))
    else:
        w1, w2 = roots[::s1], roots[::2 * s1]
        for r in range(r0, r1):
            x0, x1, x2 = a[r::s], a[r + s1::s], a[r + 2 * s1::s]
            y0, y1, y2 = b[r::s1], b[r + m::s1], b[r + 2 * m::s1]
            for k in range(k0, k1):
                y0[k], y1[k], y2[k] = _butterfly3(c, n, x0[k], _mul(w1[k], x1[k]),
                                                  _mul(w2[k], x2[k]))


@register_jitable(_nrt=False)
def _pass4(a, b, roots, L, s1, k0, k1, r0, r1):
    """Radix 4: along r on long runs, along k on short ones."""
    m, s = L * s1, 4 * s1
    rot = roots[m].imag  # exactly -1 or 1 (_roots)
    if s1 >= RUN:
        for k in range(k0, k1):
            w1, w2, w3 = roots[k * s1], roots[2 * k * s1], roots[3 * k * s1]
            i, o = k * s, k * s1
            x0, x1 = a[i:i + s1], a[i + s1:i + 2 * s1]
            x2, x3 = a[i + 2 * s1:i + 3 * s1], a[i + 3 * s1:i + s]
            y0, y1 = b[o:o + s1], b[o + m:o + m + s1]
            y2, y3 = b[o + 2 * m:o + 2 * m + s1], b[o + 3 * m:o + 3 * m + s1]
            for r in range(r0, r1):
                y0[r], y1[r], y2[r], y3[r] = _butterfly4(
                    rot, x0[r], _mul(w1, x1[r]), _mul(w2, x2[r]), _mul(w3, x3[r]))
    else:
        w1, w2, w3 = roots[::s1], roots[::2 * s1], roots[::3 * s1]
        for r in range(r0, r1):
            x0, x1, x2, x3 = a[r::s], a[r + s1::s], a[r + 2 * s1::s], a[r + 3 * s1::s]
            y0, y1 = b[r::s1], b[r + m::s1]
            y2, y3 = b[r + 2 * m::s1], b[r + 3 * m::s1]
            for k in range(k0, k1):
                y0[k], y1[k], y2[k], y3[k] = _butterfly4(
                    rot, x0[k], _mul(w1[k], x1[k]), _mul(w2[k], x2[k]), _mul(w3[k], x3[k]))


@register_jitable(_nrt=False)
def _pass5(a, b, roots, L, s1, k0, k1, r0, r1):
    """Radix 5: along r on long runs, along k on short ones."""
    m, s = L * s1, 5 * s1
    c1, n1 = roots[m].real, roots[m].imag  # w_5
    c2, n2 = roots[2 * m].real, roots[2 * m].imag  # w_5^2
    if s1 >= RUN:
        for k in range(k0, k1):
            w1, w2 = roots[k * s1], roots[2 * k * s1]
            w3, w4 = roots[3 * k * s1], roots[4 * k * s1]
            i, o = k * s, k * s1
            x0, x1, x2 = a[i:i + s1], a[i + s1:i + 2 * s1], a[i + 2 * s1:i + 3 * s1]
            x3, x4 = a[i + 3 * s1:i + 4 * s1], a[i + 4 * s1:i + s]
            y0, y1, y2 = b[o:o + s1], b[o + m:o + m + s1], b[o + 2 * m:o + 2 * m + s1]
            y3, y4 = b[o + 3 * m:o + 3 * m + s1], b[o + 4 * m:o + 4 * m + s1]
            for r in range(r0, r1):
                y0[r], y1[r], y2[r], y3[r], y4[r] = _butterfly5(
                    c1, n1, c2, n2, x0[r], _mul(w1, x1[r]), _mul(w2, x2[r]),
                    _mul(w3, x3[r]), _mul(w4, x4[r]))
    else:
        w1, w2, w3, w4 = roots[::s1], roots[::2 * s1], roots[::3 * s1], roots[::4 * s1]
        for r in range(r0, r1):
            x0, x1, x2 = a[r::s], a[r + s1::s], a[r + 2 * s1::s]
            x3, x4 = a[r + 3 * s1::s], a[r + 4 * s1::s]
            y0, y1, y2 = b[r::s1], b[r + m::s1], b[r + 2 * m::s1]
            y3, y4 = b[r + 3 * m::s1], b[r + 4 * m::s1]
            for k in range(k0, k1):
                y0[k], y1[k], y2[k], y3[k], y4[k] = _butterfly5(
                    c1, n1, c2, n2, x0[k], _mul(w1[k], x1[k]), _mul(w2[k], x2[k]),
                    _mul(w3[k], x3[k]), _mul(w4[k], x4[k]))


@register_jitable(_nrt=False)
def _pass_odd(a, b, roots, L, p, s1, k0, k1, r0, r1, spare):
    """Any odd prime p: inputs q and p - q are added and subtracted, so outputs v and p - v
    share their products (about p^2 / 4 complex multiply-adds a butterfly instead of p^2).
    spare: scratch of p + 1 points."""
    m = L * s1
    h = (p - 1) // 2
    u, d = spare[:h + 1], spare[h + 1:2 * h + 2]
    zero = roots[0].imag  # 0 in the real dtype
    for k in range(k0, k1):
        i, o = p * k * s1, k * s1
        for r in range(r0, r1):
            a0 = a[i + r]
            y0 = a0
            for q in range(1, h + 1):
                x1 = _mul(roots[q * k * s1], a[i + q * s1 + r])
                x2 = _mul(roots[(p - q) * k * s1], a[i + (p - q) * s1 + r])
                u[q], d[q] = x1 + x2, x1 - x2
                y0 += u[q]
            b[o + r] = y0
            for v in range(1, h + 1):
                er, ei, jr, ji = a0.real, a0.imag, zero, zero
                j = 0  # q v mod p, stepped without a division
                for q in range(1, h + 1):
                    j += v
                    if j >= p:
                        j -= p
                    c, s = roots[j * m].real, roots[j * m].imag
                    er += c * u[q].real
                    ei += c * u[q].imag
                    jr += s * d[q].real
                    ji += s * d[q].imag
                b[o + v * m + r] = complex(er - ji, ei + jr)
                b[o + (p - v) * m + r] = complex(er + ji, ei - jr)


# -- Bluestein's pointwise passes, on elements i0 <= i < i1 ----------------------------------
@register_jitable(_nrt=False)
def _chirp_in(src, buf, chirp, i0, i1):
    """buf = src * chirp, zero-padded to buf's length."""
    n = src.size
    for i in range(i0, min(i1, n)):
        buf[i] = _mul(chirp[i], src[i])
    for i in range(max(i0, n), i1):
        buf[i] = 0


@register_jitable(_nrt=False)
def _convolve(buf, spectrum, i0, i1):
    """buf = conj(buf * spectrum): the next forward FFT of it is then the conjugate of the
    inverse FFT of the product (spectrum holds the 1/M)."""
    for i in range(i0, i1):
        buf[i] = _mul(spectrum[i], buf[i]).conjugate()


@register_jitable(_nrt=False)
def _chirp_out(buf, dst, chirp, i0, i1):
    for i in range(i0, i1):
        dst[i] = _mul(chirp[i], buf[i].conjugate())


# -- real transforms: the twist between n reals and n/2 complex numbers -------------------------
@register_jitable(_nrt=False)
def _twist(src, dst, twists, scale, m, k0, k1):
    """dst[k] = scale (S + t_k D), dst[m - k] = scale conj(S - t_k D) for the pairs k0 <= k <
    k1 (1 <= k <= m/2), with S, D = src[k] +- conj(src[m - k]). With twists -i w^k and scale
    1/2 it untangles the spectrum of the packed pairs into the real spectrum (r2c); with their
    conjugates and 1 it tangles a half spectrum back (c2r). src may be dst: each pair is read
    before it is written."""
    for k in range(k0, k1):
        a, b = src[k], src[m - k].conjugate()
        s, d = a + b, _mul(twists[k], a - b)
        hi = (s - d).conjugate()
        lo = s + d
        dst[m - k] = complex(scale * hi.real, scale * hi.imag)
        dst[k] = complex(scale * lo.real, scale * lo.imag)  # (the middle pair: this one)


@register_jitable(_nrt=False)
def _untangle(row, twists, scale, m, k0, k1, ends):
    """r2c: row's pairs k0 <= k < k1 untangled in place and, `ends`, its ends (both real; no
    pair touches them)."""
    _twist(row, row, twists, scale, m, k0, k1)
    if ends:
        z, nil = row[0], scale - scale
        row[0] = complex(z.real + z.imag, nil)
        row[m] = complex(z.real - z.imag, nil)


@register_jitable(_nrt=False)
def _tangle(src, dst, twists, scale, m, k0, k1, ends):
    """c2r: dst's pairs k0 <= k < k1 tangled from src and, `ends`, dst[0] (the imaginary parts
    of src[0] and src[m] are ignored)."""
    _twist(src, dst, twists, scale, m, k0, k1)
    if ends:
        a, b = src[0].real, src[m].real
        dst[0] = complex(a + b, a - b)


# -- blocks of short rows, split and interleaved ------------------------------------------------
# Many short rows of a power of two run `block` at a time: the rows' real and imaginary parts in
# planes of their own, the rows interleaved (element t of the block's row j at t B + j). A stage
# is then the row's stage with runs of s1 B reals (r B + j in place of r), which LLVM vectorises
# (complex values it does not), long even in the last stages (s1 = 1). Each output is the same
# expression of the same values as _pass2's and _pass4's (spelled out on the parts): the same
# bits whichever block, or none, a row lands in.
@register_jitable(_nrt=False)
def _block_pass2(ar, ai, br, bi, roots, L, s1, B):
    """_pass2's stage on B rows' planes (a to b), all its butterflies."""
    u, mb = s1 * B, L * s1 * B  # a run's length and the outputs' stride in the planes
    for k in range(L):
        w, i, o = roots[k * s1], 2 * k * u, k * u
        x0r, x0i, x1r, x1i = ar[i:i + u], ai[i:i + u], ar[i + u:i + 2 * u], ai[i + u:i + 2 * u]
        y0r, y0i = br[o:o + u], bi[o:o + u]
        y1r, y1i = br[o + mb:o + mb + u], bi[o + mb:o + mb + u]
        for r in range(u):
            tr, ti = w.real * x1r[r] - w.imag * x1i[r], w.real * x1i[r] + w.imag * x1r[r]
            y0r[r], y0i[r] = x0r[r] + tr, x0i[r] + ti
            y1r[r], y1i[r] = x0r[r] - tr, x0i[r] - ti


@register_jitable(_nrt=False)
def _block_pass4(ar, ai, br, bi, roots, L, s1, B):
    """_pass4's stage on B rows' planes (a to b), all its butterflies."""
    m = L * s1
    u, mb, s = s1 * B, m * B, 4 * s1 * B
    rot = roots[m].imag  # exactly -1 or 1 (_roots)
    for k in range(L):
        w1, w2, w3 = roots[k * s1], roots[2 * k * s1], roots[3 * k * s1]
        i, o = k * s, k * u
        x0r, x1r, x2r, x3r = ar[i:i + u], ar[i + u:i + 2 * u], ar[i + 2 * u:i + 3 * u], \
            ar[i + 3 * u:i + s]
        x0i, x1i, x2i, x3i = ai[i:i + u], ai[i + u:i + 2 * u], ai[i + 2 * u:i + 3 * u], \
            ai[i + 3 * u:i + s]
        y0r, y1r, y2r, y3r = br[o:o + u], br[o + mb:o + mb + u], \
            br[o + 2 * mb:o + 2 * mb + u], br[o + 3 * mb:o + 3 * mb + u]
        y0i, y1i, y2i, y3i = bi[o:o + u], bi[o + mb:o + mb + u], \
            bi[o + 2 * mb:o + 2 * mb + u], bi[o + 3 * mb:o + 3 * mb + u]
        for r in range(u):
            zr, zi = x1r[r], x1i[r]
            a1r, a1i = w1.real * zr - w1.imag * zi, w1.real * zi + w1.imag * zr
            zr, zi = x2r[r], x2i[r]
            a2r, a2i = w2.real * zr - w2.imag * zi, w2.real * zi + w2.imag * zr
            zr, zi = x3r[r], x3i[r]
            a3r, a3i = w3.real * zr - w3.imag * zi, w3.real * zi + w3.imag * zr
            zr, zi = x0r[r], x0i[r]
            t0r, t0i, t1r, t1i = zr + a2r, zi + a2i, zr - a2r, zi - a2i
            t2r, t2i, dr, di = a1r + a3r, a1i + a3i, a1r - a3r, a1i - a3i
            t3r, t3i = -rot * di, rot * dr  # w_4 (a1 - a3)
            y0r[r], y0i[r] = t0r + t2r, t0i + t2i
            y1r[r], y1i[r] = t1r + t3r, t1i + t3i
            y2r[r], y2i[r] = t0r - t2r, t0i - t2i
            y3r[r], y3i[r] = t1r - t3r, t1i - t3i


@register_jitable(_nrt=False)
def _block(src, dst, i, B, planes, radices, roots):
    """dst[i + j, :m] = DFT(src[i + j]) for j < B through `planes`: four planes of B m reals
    (m = roots.size, a power of two) with PAD reals after each."""
    m = roots.size
    size, step = B * m, B * m + PAD
    ar, ai = planes[:size], planes[step:step + size]
    br, bi = planes[2 * step:2 * step + size], planes[3 * step:3 * step + size]
    for t0 in range(0, m, TILE):  # a tile at a time: the strided stores stay in L1
        t1 = min(TILE, m - t0)
        for j in range(B):
            row, re, im = src[i + j, t0:t0 + t1], ar[t0 * B + j::B], ai[t0 * B + j::B]
            for t in range(t1):
                re[t], im[t] = row[t].real, row[t].imag
    L = 1
    for p in radices:  # Stockham stages, from a to b and swapped
        if p == 4:
            _block_pass4(ar, ai, br, bi, roots, L, m // (4 * L), B)
        else:
            _block_pass2(ar, ai, br, bi, roots, L, m // (2 * L), B)
        L *= p
        ar, ai, br, bi = br, bi, ar, ai
    for t0 in range(0, m, TILE):
        t1 = min(TILE, m - t0)
        for j in range(B):
            row, re, im = dst[i + j, t0:t0 + t1], ar[t0 * B + j::B], ai[t0 * B + j::B]
            for t in range(t1):
                row[t] = complex(re[t], im[t])


# -- a row as a sequence of steps, each split into tasks --------------------------------------
# The steps of a direct c2c plan are its Stockham stages; Bluestein's are the chirp product, the
# stages of the forward FFT of M points, the product with the chirp's spectrum, the stages again
# and the chirp product out. r2c adds the untangling after them, c2r the tangling before. A row
# runs its steps' tasks in order on one thread, or (a few long rows) each step's tasks on the
# thread pool: the same tasks either way, so the same bits.
C2C, R2C, C2R = 0, 1, 2
STAGE, CHIRP_IN, CONVOLVE, CHIRP_OUT = 0, 1, 2, 3


@register_jitable(_nrt=False)
def _decode(step, radices, chirp):
    """(what, stage): what step `step` of a c2c row does; STAGE's stage counts from 0 in each
    of Bluestein's two FFTs, whose second is stage + radices.size."""
    count = radices.size
    what, stage = STAGE, step
    if chirp.size:
        if step == 0:
            what = CHIRP_IN
        elif step == count + 1:
            what = CONVOLVE
        elif step == 2 * count + 2:
            what = CHIRP_OUT
        else:
            stage = step - 1 if step <= count else step - 2
    return what, stage


@register_jitable(_nrt=False)
def _steps(radices, chirp):
    """A c2c row's steps."""
    count = max(radices.size, 1)  # (a 1-point plan: one stage that copies)
    return count if chirp.size == 0 else 2 * count + 3


@register_jitable(_nrt=False)
def _grid(roots, radices, stage):
    """Stage `stage` of a plan: (L, p, s1) and its butterflies (k < L, r < s1) as tasks of about
    TASK: kc k's times rc r's (runs of r in the early stages, blocks of k in the late ones), kt
    tasks along k and rt along r."""
    L = 1
    for i in range(stage):
        L *= radices[i]
    p = radices[stage]
    s1 = roots.size // (L * p)
    rc = min(s1, TASK)
    kc = max(1, TASK // rc)
    return L, p, s1, kc, rc, (L + kc - 1) // kc, (s1 + rc - 1) // rc


@register_jitable(_nrt=False)
def _c2c_tasks(step, radices, roots, chirp, n):
    """How many tasks step `step` of an n-point c2c row has."""
    what, stage = _decode(step, radices, chirp)
    count = radices.size
    if what != STAGE:
        return ((n if what == CHIRP_OUT else roots.size) + TASK - 1) // TASK
    if count == 0:
        return 1
    L, p, s1, kc, rc, kt, rt = _grid(roots, radices, stage % count)
    return kt * rt


@register_jitable(_nrt=False)
def _c2c_step(step, t, src, dst, w1, w2, w3, radices, roots, chirp, spectrum, spare):
    """Task t of step `step` of dst = DFT(src) by the plan (_c2c_arrays); w1 (and for Bluestein
    w2, w3) scratch of roots.size points, spare of BLUESTEIN_MIN + 1 (_pass_odd). Direct: the
    stages go from src to dst; Bluestein: w1 = src * chirp, w2 = FFT(w1), w2 = conj(w2 *
    spectrum), w1 = FFT(w2), dst = chirp * conj(w1). An FFT's stages ping-pong between its
    output and a work buffer so that the last one writes the output; its input is only read."""
    what, stage = _decode(step, radices, chirp)
    i0 = t * TASK
    count = radices.size
    if what == CHIRP_IN:
        _chirp_in(src, w1, chirp, i0, min(i0 + TASK, roots.size))
    elif what == CONVOLVE:
        _convolve(w2, spectrum, i0, min(i0 + TASK, roots.size))
    elif what == CHIRP_OUT:
        _chirp_out(w1, dst, chirp, i0, min(i0 + TASK, dst.size))
    elif count == 0:
        dst[0] = src[0]
    else:
        first, last, work = src, dst, w1
        if chirp.size and stage < count:
            first, last, work = w1, w2, w3
        elif chirp.size:
            first, last, work, stage = w2, w1, w3, stage - count
        a = first if stage == 0 else last if (count - stage) % 2 == 0 else work
        b = last if (count - stage) % 2 == 1 else work
        L, p, s1, kc, rc, kt, rt = _grid(roots, radices, stage)
        k0, r0 = t // rt * kc, t % rt * rc
        k1, r1 = min(k0 + kc, L), min(r0 + rc, s1)
        if p == 4:
            _pass4(a, b, roots, L, s1, k0, k1, r0, r1)
        elif p == 2:
            _pass2(a, b, roots, L, s1, k0, k1, r0, r1)
        elif p == 3:
            _pass3(a, b, roots, L, s1, k0, k1, r0, r1)
        elif p == 5:
            _pass5(a, b, roots, L, s1, k0, k1, r0, r1)
        else:
            _pass_odd(a, b, roots, L, p, s1, k0, k1, r0, r1, spare)


@register_jitable(_nrt=False)
def _row_tasks(kind, step, radices, roots, chirp, m):
    """How many tasks step `step` of a row of the job `kind` has (m: its c2c length)."""
    steps = _steps(radices, chirp)
    if kind == R2C and step == steps or kind == C2R and step == 0:
        return (m // 2 + TASK) // TASK  # the pairs (k, m - k), 1 <= k <= m/2, and the ends
    return _c2c_tasks(step - (kind == C2R), radices, roots, chirp, m)


@register_jitable
def _scratch(kind, m, roots, chirp):
    """A row's scratch: c2r's tangled input, and the c2c's buffer, or three for Bluestein."""
    extra = roots.size if chirp.size else 0
    return (np.empty(m if kind == C2R else 0, roots.dtype), np.empty(roots.size, roots.dtype),
            np.empty(extra, roots.dtype), np.empty(extra, roots.dtype))


# -- the worker (kernels.run_tasks), compiled per dtype: DTYPE the complex type, REAL its parts'
DTYPE = REAL = None
_per_dtype = Specialised(globals(), ("DTYPE", "REAL"), lambda dtype, real: "_" + dtype.__name__)
CONTEXT = 28  # the context's length


@register_jitable
def _array(c, i, zero):
    """The 1-D array whose address and size `context` wrote at c[i:i + 2]."""
    return carray(as_pointer(c[i], zero), c[i + 1])


@_per_dtype(worker, cache=True)
def fft_worker(context, first, step):
    """Rows of x transformed into those of out by the c2c plan of m points (_c2c_arrays): C2C,
    out[r] = DFT(x[r]) (m = n); R2C, out[r] (m + 1) = the half spectrum of the 2m reals packed
    in pairs in x[r] (m); C2R, out[r] (m) = the 2m reals, packed in pairs, of the inverse DFT of
    the Hermitian spectrum whose first m + 1 entries are x[r]. With `by_rows` the tasks are the
    blocks of `block` rows (by row index; the last may have fewer), each transformed whole with
    scratch of its own (a block of one row by its steps, of more by _block); else (a few long
    rows) the tasks of step `phase` % steps of row `phase` // steps, with the shared scratch
    w0..w3."""
    # kind, by_rows, phase, x (2-D), out (2-D), radices (int64), roots, chirp, spectrum,
    # twists, w0, w1, w2, w3 (1-D each), block
    c, zero = carray(as_pointer(context, np.int64(0)), CONTEXT), DTYPE(0)
    kind, by_rows, phase = c[0], c[1] != 0, c[2]
    x = carray(as_pointer(c[3], zero), (c[4], c[5]))
    out = carray(as_pointer(c[6], zero), (c[7], c[8]))
    radices = carray(as_pointer(c[9], np.int64(0)), c[10])
    roots, chirp, spectrum = _array(c, 11, zero), _array(c, 13, zero), _array(c, 15, zero)
    twists = _array(c, 17, zero)
    scale = REAL(0.5) if kind == R2C else REAL(1)
    m = x.shape[1] if kind != C2R else out.shape[1]  # the c2c length
    steps = _steps(radices, chirp)
    row_steps = steps + (kind != C2C)  # r2c: the c2c steps, then the untangling; c2r: the
    # tangling, then the c2c steps
    if by_rows:  # rows first, first + step, ...: all their steps, each step's every task
        w0, w1, w2, w3 = _scratch(kind, m, roots, chirp)
        r0, r1, r_step, s0, s1, t0, t_step = first, x.shape[0], step, 0, row_steps, 0, 1
    else:  # tasks first, first + step, ... of one step of one row
        w0, w1, w2, w3 = _array(c, 19, zero), _array(c, 21, zero), _array(c, 23, zero), \
            _array(c, 25, zero)
        r0, s0 = phase // row_steps, phase % row_steps
        r1, r_step, s1, t0, t_step = r0 + 1, 1, s0 + 1, first, step
    pairs = m // 2 + 1  # the real jobs' pairs (k, m - k), 1 <= k <= m/2
    spare = np.empty(BLUESTEIN_MIN + 1, DTYPE)
    block = c[27] if by_rows else 1  # rows a task (_block), the last task's fewer
    planes = np.empty(4 * (block * m + PAD) if block > 1 else 0, REAL)
    for r in range(r0 * block, r1, r_step * block):  # r: a block's first row
        rows = min(block, r1 - r)
        for s in range(s0, s1):
            for t in range(t0, _row_tasks(kind, s, radices, roots, chirp, m), t_step):
                k0, k1 = max(1, t * TASK), min(pairs, t * TASK + TASK)
                if kind == R2C and s == steps:  # out[r] untangled in place
                    for i in range(r, r + rows):
                        _untangle(out[i], twists, scale, m, k0, k1, t == 0)
                elif kind == C2R and s == 0:  # w0 = x[r] tangled; a block's rows into out's
                    for i in range(r, r + rows):
                        _tangle(x[i], w0 if rows == 1 else out[i], twists, scale, m, k0, k1,
                                t == 0)
                elif rows > 1:  # a c2c step of a block: all of them at once
                    if s == (kind == C2R) and t == 0:
                        _block(out if kind == C2R else x, out, r, rows, planes, radices, roots)
                else:  # a c2c step: out[r, :m] = DFT(x[r]), or out[r] = DFT(w0)
                    src, dst, c2c_step = x[r], out[r, :m], s
                    if kind == C2R:
                        src, c2c_step = w0, s - 1
                    _c2c_step(c2c_step, t, src, dst, w1, w2, w3, radices, roots, chirp,
                              spectrum, spare)


# -- plans and launchers -----------------------------------------------------------------------
class _Plan:
    """A job's plan: its arrays (kept alive here, for the context holds their addresses), the
    worker's context with them written in, and how many steps a row takes."""

    def __init__(self, kind, m, dtype, inverse):
        radices, roots, chirp, spectrum = _c2c_arrays(m, dtype, inverse)
        twists = chirp[:0] if kind == C2C else _twists(2 * m, dtype, kind == C2R)
        self.arrays = radices, roots, chirp, spectrum, twists
        self.kind, self.size, self.bluestein = kind, roots.size, chirp.size > 0
        self.blockable = roots.size > 1 and not self.bluestein and set(radices) <= {2, 4}
        count = max(radices.size, 1)
        self.row_steps = (2 * count + 3 if self.bluestein else count) + (kind != C2C)
        self.context = np.zeros(CONTEXT, np.int64)
        self.context[0] = kind
        for i, a in enumerate(self.arrays):
            self.context[9 + 2 * i:11 + 2 * i] = _address(a), a.size
        self.worker = _per_dtype.build(dtype.type, dtype.type(0).real.dtype.type)["fft_worker"]


@functools.lru_cache(maxsize=64)
def _plan(kind, m, dtype, inverse=False):
    """The plan of the job `kind` whose c2c transforms m points of complex `dtype` (cached:
    never written)."""
    return _Plan(kind, m, dtype, inverse)


def _address(a):
    return a.__array_interface__["data"][0]


@njit(cache=True)
def _launch(worker, args, x, out, here):
    """Write x's and out's addresses and shapes into the context `args` (cheaper here than in
    Python) and, `here`, run the worker on this thread."""
    args[3], args[4], args[5] = x.ctypes.data, x.shape[0], x.shape[1]
    args[6], args[7], args[8] = out.ctypes.data, out.shape[0], out.shape[1]
    if here:
        call(worker, (args.ctypes.data, np.int64(0), np.int64(1)))


def _run(plan, x, out):
    """Run the plan's worker on x and out: a task per row, or (fewer rows than threads, long
    ones) each step of each row in turn, its tasks spread over the threads."""
    target = out
    if not (out.flags.c_contiguous and out.flags.aligned and out.flags.writeable):
        target = np.empty(out.shape, out.dtype)  # (the front end's outputs never are)
    rows, m = x.shape[0], (target if plan.kind == C2R else x).shape[1]
    threads = 1 if rows * plan.size < PARALLEL_MIN or single_thread() else num_threads()
    by_rows = rows >= threads or m < LONG_ROW
    block = 1  # (by the rows and the plan, never the threads: blocked sizes are < LONG_ROW)
    if by_rows and plan.blockable and rows > 1:
        block = min(BLOCK_POINTS // plan.size, BLOCK) if plan.size <= BLOCK_POINTS // 2 else 1
    blocks = (rows + block - 1) // block
    workers = min(threads, blocks) if by_rows else threads
    args = plan.context.copy()
    args[1], args[27] = by_rows, block
    address = plan.worker.address
    _launch(address, args, x, target, workers == 1)  # (one worker: the whole job, here)
    if workers > 1 and by_rows:
        run_tasks(address, args, workers)
    elif workers > 1:  # a few long rows: each step on all the threads, one after the other
        extra = plan.size if plan.bluestein else 0
        scratch = (np.empty(m if plan.kind == C2R else 0, x.dtype),
                   np.empty(plan.size, x.dtype), np.empty(extra, x.dtype),
                   np.empty(extra, x.dtype))
        for i, a in enumerate(scratch):
            args[19 + 2 * i], args[20 + 2 * i] = _address(a), a.size
        for phase in range(rows * plan.row_steps):
            args[2] = phase
            run_tasks(address, args, threads)
    if target is not out:
        out[...] = target


def _readable(x):
    """x as the worker may read it and _launch take it: C-contiguous, aligned and writeable
    (each other kind another compile of _launch), copied otherwise."""
    flags = x.flags
    return x if flags.c_contiguous and flags.aligned and flags.writeable else x.copy(order="C")


_REAL = {np.dtype(np.complex64): np.dtype(np.float32),
         np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX = {real: complex_ for complex_, real in _REAL.items()}


def _check(ok, x, out):
    """Refuse arguments the worker would misread: it trusts their dtypes and shapes."""
    if not ok:
        raise ValueError(f"FFT kernel: x {x.dtype} {x.shape} and out {out.dtype} {out.shape} "
                         "do not match")


def c2c(x, out, inverse):
    """out[r, k] = sum_t x[r, t] exp(-+2j pi t k / n) (the sign + with `inverse`; no 1/n
    scaling) for x and out complex64 or complex128 (rows, n) of one dtype, C-contiguous, n >= 1;
    out must not overlap x, which is only read. complex64 computes in float32."""
    _check(x.dtype in _REAL and out.dtype == x.dtype and x.ndim == 2 and out.shape == x.shape,
           x, out)
    if x.size:
        _run(_plan(C2C, x.shape[1], x.dtype, bool(inverse)), _readable(x), out)


def r2c(x, out):
    """out (rows, n // 2 + 1) = the first n // 2 + 1 entries of the forward DFT of each row of
    x (rows, n), float32 -> complex64 or float64 -> complex128, both C-contiguous (they cannot
    overlap: out is larger); x is only read. Even n: the n/2 pairs of reals as complex numbers,
    transformed and untangled; odd n: c2c."""
    complex_dtype = _COMPLEX.get(x.dtype)
    _check(complex_dtype is not None and out.dtype == complex_dtype and x.ndim == 2
           and out.shape == (x.shape[0], x.shape[1] // 2 + 1), x, out)
    rows, n = x.shape
    if not x.size:
        return
    if n % 2:
        full = np.empty((rows, n), complex_dtype)
        c2c(x.astype(complex_dtype), full, False)
        out[...] = full[:, :n // 2 + 1]
        return
    z = np.ascontiguousarray(x).view(complex_dtype)  # the pairs of reals as complex numbers
    _run(_plan(R2C, n // 2, complex_dtype), _readable(z), out)


def c2r(x, out):
    """out (rows, n) = the inverse DFT (unnormalized, sign +) of the Hermitian spectra whose
    first n // 2 + 1 entries are the rows of x (rows, n // 2 + 1), for n = out.shape[1] >= 1;
    the imaginary parts of x[:, 0] and (n even) x[:, n // 2] are ignored, as pocketfft and torch
    do. complex64 -> float32, complex128 -> float64; C-contiguous, not overlapping; x is only
    read. Even n: x tangled into the n/2 pairs of reals as complex numbers and transformed; odd
    n: c2c of the whole spectrum."""
    _check(x.dtype in _REAL and out.dtype == _REAL[x.dtype] and out.ndim == 2
           and x.shape == (out.shape[0], out.shape[1] // 2 + 1), x, out)
    rows, n = out.shape
    if not out.size:
        return
    x = _readable(x)
    if n % 2:
        full = np.empty((rows, n), x.dtype)
        full[:, :n // 2 + 1] = x
        full[:, 0] = x[:, 0].real
        full[:, n // 2 + 1:] = x[:, n // 2:0:-1].conj()
        result = np.empty((rows, n), x.dtype)
        c2c(full, result, True)
        out[...] = result.real
        return
    target = out if out.flags.c_contiguous else np.empty(out.shape, out.dtype)
    _run(_plan(C2R, n // 2, x.dtype, True), x, target.view(x.dtype))  # (pairs of reals)
    if target is not out:
        out[...] = target
