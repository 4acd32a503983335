"""CPU kernels of layer_norm and rms_norm (formulas: kernels/scalar/norm.py) on C-contiguous
(m, n) buffers, a row being the n elements normalised together; and of batch_norm, whose
"row" is a channel of (N, C, S): N runs of S elements, a channel a task.

Each row is worked whole while it sits in L1: one pass that sums its elements minus its first
one, and their squares (scalar.moments says why that loses nothing), then a pass in the data's
own type that writes it. The backward reads a row twice: once for its two sums, once to write its
gradient and add its terms of the weight's and bias's gradients. Those are sums over the rows:
the rows go in at most PARTS runs, each adding FLUSH rows at a time in the data's type (16
float32 terms: a float64 add per element cost 2x) into float64 sums of its own, which are then
added in run order; the runs depend on (m, n) alone, so serial and parallel give the same
bits."""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..scalar import norm as scalar
from ..scalar.libm import select
from ..scalar.reduction import cast_like, is_float64
from .kernels import first_small, prange_only, serial, twins
from .reduction import _REASSOC, SUM_RUN32
from .vector import wide

PARTS = 64  # runs of rows the weight and bias gradients are summed in, at most
PART_MIN = 8192  # elements a run holds at least
FLUSH = 16  # rows a run adds up in the data's type before adding them into its float64 sums


@register_jitable
def _shift(x, centred):
    """The shift of row x (kernels/scalar/norm.py): its first element, or 0 for rms_norm."""
    return select(centred, x[0], cast_like(0.0, x[0]))


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _sums(x, shift):
    """The float64 sums of d = x - shift and of d^2 over the row x (shift in x's type). float32
    rows take float32 runs of SUM_RUN32 (as a float32 sum does, kernels/cpu/reduction.py)
    added up in float64: twice as fast as converting every element, and as accurate."""
    wide()
    s1 = s2 = 0.0
    if not is_float64(shift):
        for c in range(0, x.size, SUM_RUN32):
            seg = x[c:c + SUM_RUN32]
            a1 = a2 = shift - shift
            for i in range(seg.size):
                d = seg[i] - shift
                a1 += d
                a2 += d * d
            s1 += np.float64(a1)
            s2 += np.float64(a2)
        if s2 - s2 == 0.0:
            return s1, s2
        s1 = s2 = 0.0  # a square overflowed float32 (|d| > 1.8e19), or a NaN: in float64
    for i in range(x.size):
        d = np.float64(x[i]) - np.float64(shift)
        s1 += d
        s2 += d * d
    return s1, s2


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _row(x, y, w, b, has_b, centred, eps):
    """y = the row x normalised, times w, plus b; returns the row's (offset, rstd)."""
    wide()
    n = x.size
    # the shift (see _shift) by a branch: LLVM then specialises the loops on it (64 x 512:
    # 8 us, 10 with _shift's select; the backward's loops measured the other way round)
    k = x[0] if centred else cast_like(0.0, x[0])
    s1, s2 = _sums(x, k)
    offset, squares = scalar.moments(s1, s2, n, centred)
    rstd = scalar.rstd(squares, n, eps)
    o, r = cast_like(offset, k), cast_like(rstd, k)
    if has_b:
        for i in range(n):
            y[i] = scalar.normalized(x[i] - k, o, r) * w[i] + b[i]
    else:
        for i in range(n):
            y[i] = scalar.normalized(x[i] - k, o, r) * w[i]
    return offset, rstd


@twins(first_small)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def norm_rows(x, w, b, has_b, centred, eps, y, stats):
    """y = each row of x normalised (x, y: (m, n), n > 0); stats (float64, (2, m)) gets each
    row's offset and rstd (kernels/scalar/norm.py)."""
    if serial(x.size):
        for r in range(x.shape[0]):
            stats[0, r], stats[1, r] = _row(x[r], y[r], w, b, has_b, centred, eps)
    else:
        for r in prange(x.shape[0]):
            stats[0, r], stats[1, r] = _row(x[r], y[r], w, b, has_b, centred, eps)


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _grad_sums(x, g, w, k, o, r):
    """The float64 sums over row x of gw * xhat and of gw (gw = g * w), float32 rows in float32
    runs as in _sums (faster than converting each element first)."""
    wide()
    slope = centre = 0.0
    for c in range(0, x.size, SUM_RUN32):
        xs, gs, ws = x[c:c + SUM_RUN32], g[c:c + SUM_RUN32], w[c:c + SUM_RUN32]
        a1 = a2 = r - r
        for i in range(xs.size):
            gw = gs[i] * ws[i]
            a1 += gw * scalar.normalized(xs[i] - k, o, r)
            a2 += gw
        slope += np.float64(a1)
        centre += np.float64(a2)
    return slope, centre


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _row_grad(x, g, w, offset, rstd, centred, dx, want_x, aw, ab, want_wb):
    """dx = the gradient of one row by x for upstream gradient g (when want_x), and its terms
    of the weight's and bias's gradients added to aw and ab, in x's type (when want_wb)."""
    wide()
    n = x.size
    k = _shift(x, centred)
    o, r = cast_like(offset, k), cast_like(rstd, k)
    if want_x:
        slope, centre = _grad_sums(x, g, w, k, o, r)
        c = cast_like(centre / n if centred else 0.0, r)
        s = cast_like(slope / n, r)
        for i in range(n):
            dx[i] = scalar.input_grad(g[i] * w[i], scalar.normalized(x[i] - k, o, r), r, c, s)
    if want_wb:
        for i in range(n):
            aw[i] += g[i] * scalar.normalized(x[i] - k, o, r)
            ab[i] += g[i]


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _flush(acc, sums):
    """sums (float64) += acc, which is zeroed."""
    wide()
    for j in range(acc.size):
        sums[j] += np.float64(acc[j])
        acc[j] = 0


@register_jitable
def _parts(m, n):
    return max(1, min(PARTS, m, m * n // PART_MIN))


@register_jitable(_nrt=False)
def _grad_run(x, g, w, centred, stats, dx, want_x, sums, acc, want_wb, lo, hi):
    """Rows lo..hi-1: their dx, and their share of the weight and bias gradients into sums
    ((2, n) float64), added up FLUSH rows at a time in acc ((2, n) in x's type)."""
    for r in range(lo, hi):
        _row_grad(x[r], g[r], w, stats[0, r], stats[1, r], centred, dx[r], want_x, acc[0],
                  acc[1], want_wb)
        if want_wb and ((r - lo) % FLUSH == FLUSH - 1 or r == hi - 1):
            _flush(acc.reshape(-1), sums.reshape(-1))


@twins(first_small)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def norm_rows_grad(x, g, w, centred, stats, dx, want_x, dw, db, want_wb):
    """The gradients of norm_rows' y by x (into dx, when want_x), by w and b (into dw, db of
    n elements, when want_wb), for upstream gradient g; stats: the forward's."""
    m, n = x.shape
    parts = _parts(m, n)
    shape = (parts, 2, n if want_wb else 0)
    sums, acc = np.zeros(shape), np.zeros(shape, x.dtype)
    if serial(x.size):
        for q in range(parts):
            _grad_run(x, g, w, centred, stats, dx, want_x, sums[q], acc[q], want_wb,
                      q * m // parts, (q + 1) * m // parts)
    else:
        for q in prange(parts):
            _grad_run(x, g, w, centred, stats, dx, want_x, sums[q], acc[q], want_wb,
                      q * m // parts, (q + 1) * m // parts)
    if want_wb:
        total = sums[0]
        for q in range(1, parts):  # in run order
            total += sums[q]
        for j in range(n):
            dw[j], db[j] = total[0, j], total[1, j]


# -- batch_norm: the same formulas over each channel of (N, C, S): N runs of S elements ----------
@register_jitable(fastmath=_REASSOC, _nrt=False)
def _channel(x, y, c, w, b, eps, stats):
    """y[:, c] = channel c of x normalised, times w[c], plus b[c]; stats[:, c] gets its
    offset, rstd, mean and biased variance."""
    wide()
    k = x[0, c, 0]
    s1 = s2 = 0.0
    for n in range(x.shape[0]):
        a1, a2 = _sums(x[n, c], k)
        s1 += a1
        s2 += a2
    count = x.shape[0] * x.shape[2]
    offset, squares = scalar.moments(s1, s2, count, True)
    rstd = scalar.rstd(squares, count, eps)
    stats[0, c], stats[1, c], stats[2, c], stats[3, c] = offset, rstd, np.float64(k) + offset, \
        squares / count
    o, r = cast_like(offset, k), cast_like(rstd, k)
    scale, shift = w[c], b[c]
    for n in range(x.shape[0]):
        xs, ys = x[n, c], y[n, c]
        for i in range(xs.size):
            ys[i] = scalar.normalized(xs[i] - k, o, r) * scale + shift


@twins(first_small)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def batch_norm_channels(x, w, b, eps, y, stats):
    """y = each channel of x (N, C, S; N * S > 0) normalised, times w, plus b; stats (float64,
    (4, C)): each channel's offset, rstd, mean and biased variance. A channel a task: its sums
    run in one order whatever the threads."""
    if serial(x.size):
        for c in range(x.shape[1]):
            _channel(x, y, c, w, b, eps, stats)
    else:
        for c in prange(x.shape[1]):
            _channel(x, y, c, w, b, eps, stats)


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _channel_grad(x, g, c, w, stats, dx, want_x, dw, db):
    """dx[:, c] (when want_x), dw[c] and db[c]: the gradients of channel c for upstream g."""
    wide()
    k = x[0, c, 0]
    o, r = cast_like(stats[0, c], k), cast_like(stats[1, c], k)
    slope = centre = 0.0  # the sums of g * xhat and g, in float32 runs for float32 (_sums)
    for n in range(x.shape[0]):
        xr, gr = x[n, c], g[n, c]
        for q in range(0, xr.size, SUM_RUN32):
            xs, gs = xr[q:q + SUM_RUN32], gr[q:q + SUM_RUN32]
            a1 = a2 = r - r
            for i in range(xs.size):
                a1 += gs[i] * scalar.normalized(xs[i] - k, o, r)
                a2 += gs[i]
            slope += np.float64(a1)
            centre += np.float64(a2)
    dw[c], db[c] = slope, centre
    if want_x:
        count = x.shape[0] * x.shape[2]
        scale = w[c]
        mean_g = cast_like(centre / count, r) * scale
        mean_gx = cast_like(slope / count, r) * scale
        for n in range(x.shape[0]):
            xs, gs, ds = x[n, c], g[n, c], dx[n, c]
            for i in range(xs.size):
                ds[i] = scalar.input_grad(gs[i] * scale, scalar.normalized(xs[i] - k, o, r), r,
                                          mean_g, mean_gx)


@twins(first_small)
@njit(cache=True, parallel=prange_only(), error_model="numpy")
def batch_norm_channels_grad(x, g, w, stats, dx, want_x, dw, db):
    """The gradients of batch_norm_channels' y for upstream gradient g: by x into dx (when
    want_x), by w and b into dw and db (C elements each)."""
    if serial(x.size):
        for c in range(x.shape[1]):
            _channel_grad(x, g, c, w, stats, dx, want_x, dw, db)
    else:
        for c in prange(x.shape[1]):
            _channel_grad(x, g, c, w, stats, dx, want_x, dw, db)


# -- launchers -------------------------------------------------------------------------------------
def _weight(weight, x):
    """The weight buffer, ones where there is none (the kernels always multiply)."""
    return weight if weight is not None else np.ones(x.shape[1], x.dtype)


def norm(y, stats, x, weight, bias, eps, centred):
    """y = layer_norm (centred) or rms_norm of the rows of x, times weight, plus bias; x, y:
    C-contiguous (m, n); weight, bias: (n,) or None; stats: float64 (2, m), each row's offset
    and rstd (kernels/scalar/norm.py), for the backward."""
    if y.size:
        w = _weight(weight, x)
        norm_rows(x, w, w if bias is None else bias, bias is not None, centred, float(eps), y,
                  stats)


def norm_grad(dx, dw, db, x, weight, g, stats, centred):
    """The gradients of norm's y for upstream gradient g (C-contiguous, x's shape): by x into
    dx, by the weight and bias into dw and db (n elements each). None where not wanted: dx,
    or dw and db together."""
    if not x.shape[1]:
        return
    want_wb = dw is not None
    if not want_wb:
        dw = db = np.empty(0, x.dtype)
    norm_rows_grad(x, g, _weight(weight, x), centred, stats, x if dx is None else dx,
                   dx is not None, dw, db, want_wb)


def batch_norm(y, stats, x, weight, bias, eps):
    """y = batch_norm of x (C-contiguous (N, C, S)) by its own statistics, times weight, plus
    bias ((C,) or None); stats: float64 (4, C), each channel's offset, rstd (for the backward),
    mean and biased variance (for the running statistics)."""
    if y.size:
        c = x.shape[1]
        batch_norm_channels(x, _weight(weight, x), np.zeros(c, x.dtype) if bias is None
                            else bias, float(eps), y, stats)


def batch_norm_grad(dx, dw, db, x, weight, g, stats):
    """The gradients of batch_norm's y for upstream gradient g (x's shape): by x into dx (or
    None), by the weight and bias into dw and db ((C,) each, always)."""
    if x.size:
        batch_norm_channels_grad(x, g, _weight(weight, x), stats,
                                 x if dx is None else dx, dx is not None, dw, db)

