"""CPU kernels of the class losses (formulas: kernels/scalar/loss.py). Scores are seen as
(N, C, S) with the classes in the middle (S: the positions of an (N, C, d1, ...) input); a row
is (n, s), its first score at n * sn + s * ss.

Work goes in tasks of m rows (of one n), copied into a dense scratch block where the
exponentials are taken in one loop over the whole block. The block is row-major (score (k, c)
at e[k * C + c]) for long rows of adjacent classes, whose loops vectorise along a row, and
class-major (e[c * m + k]) otherwise, whose loops vectorise across rows: per row, the loops
over 10 classes did not; from LONG classes on, row-major wins (class-major pays for the
transposing copy). Segmentation maps (S > 1) are class-major as they lie in memory. The
forward saves each row's max and log-sum (see kernels/scalar/loss.py), so the backward takes
one exp per score. Tasks' totals add up in task order, serially or in parallel: a reduced loss
does not depend on the number of threads."""
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..scalar import libm
from ..scalar import loss as scalar
from ..scalar.reduction import cast_like, exp, maximum
from .kernels import Specialised, prange_only, serial
from .reduction import _REASSOC, _flat
from .vector import wide

BLOCK = 4096  # scores per task (in L1), or one long row
LONG = 128  # classes from which rows of adjacent classes are worked row-major
ACROSS = 16  # rows at least in a class-major task: a vector of float32 lanes

# The kernels are compiled per block layout and input: the functions decorated `_per_layout`
# read the globals BY_CLASS (class-major blocks) and LOG_PROBS (the scores are log-probabilities,
# nll_loss), constants in the copies `kernels` makes, so each copy compiles only its own
# branches (kernels.Specialised): a program runs one of the four.
BY_CLASS = LOG_PROBS = None
_per_layout = Specialised(
    globals(), ("BY_CLASS", "LOG_PROBS"),
    lambda by_class, log_probs: ("_by_class" if by_class else "_by_row") +
    ("_log_probs" if log_probs else ""))


def kernels(shape, log_probs):
    """name -> the kernels (and helpers) for scores of (S, C) = shape and log_probs."""
    return _per_layout.build(shape[0] > 1 or shape[1] < LONG, bool(log_probs))


# -- tasks -----------------------------------------------------------------------------------------
@_per_layout()
def _per_task(n_c):
    """Rows per task, for scores of n_c classes."""
    return max(ACROSS if BY_CLASS else 1, BLOCK // max(n_c, 1))


@register_jitable
def _tasks(rows, run, per_task):
    """How many tasks: runs of `run` rows (an n's S positions, or all rows when S = 1) in
    pieces of per_task, so that no task spans two n."""
    return 0 if rows == 0 else rows // run * -(-run // per_task)


@register_jitable
def _rows(task, run, per_task):
    """Rows lo..hi-1 of a task."""
    per_run = -(-run // per_task)
    i, j = task // per_run, task % per_run
    lo = i * run + j * per_task
    return lo, min((i + 1) * run, lo + per_task)


@_per_layout()
def _scratch(x, shape, like):
    """A task's scratch: its block of scores, and three numbers per row of like's dtype (the
    forward's float64 max, smoothing term and log-sum; the backward's coefficients in x's
    type)."""
    per_task = _per_task(shape[1])
    return np.empty(per_task * shape[1], x.dtype), np.empty(3 * per_task, like.dtype)


# -- moving blocks ---------------------------------------------------------------------------------
@_per_layout(_nrt=False)
def _load(x, shape, strides, lo, hi, e):
    """The scores of rows lo..hi-1 (of one n) into block e."""
    n_s, n_c = shape
    sn, sc, ss = strides
    m = hi - lo
    if n_s > 1:  # (class-major) positions lie along memory: runs of m scores
        n, s0 = lo // n_s, lo % n_s
        for c in range(n_c):
            b = n * sn + c * sc + s0 * ss
            run = e[c * m:(c + 1) * m]
            if ss == 1:
                seg = x[b:b + m]
                for k in range(m):
                    run[k] = seg[k]
            else:
                for k in range(m):
                    run[k] = x[b + k * ss]
        return
    for k in range(m):
        b = (lo + k) * sn
        if BY_CLASS:
            for c in range(n_c):
                e[c * m + k] = x[b + c * sc]
        elif sc == 1:
            seg, row = x[b:b + n_c], e[k * n_c:(k + 1) * n_c]
            for c in range(n_c):
                row[c] = seg[c]
        else:
            for c in range(n_c):
                e[k * n_c + c] = x[b + c * sc]


@register_jitable(_nrt=False)
def _store(out, shape, lo, hi, e):
    """A class-major block of gradients into out, C-contiguous (N, C, S)."""
    n_s, n_c = shape
    m = hi - lo
    n, s0 = lo // n_s, lo % n_s
    for c in range(n_c):
        run = e[c * m:(c + 1) * m]
        if n_s == 1:
            for k in range(m):
                out[(lo + k) * n_c + c] = run[k]
        else:
            o = (n * n_c + c) * n_s + s0
            seg = out[o:o + m]
            for k in range(m):
                seg[k] = run[k]


# -- forward ---------------------------------------------------------------------------------------
@register_jitable(fastmath=_REASSOC, _nrt=False)
def _exp(e, n):
    wide()
    for i in range(n):
        e[i] = exp(e[i])


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _lse_by_row(e, m, n_c, lse, weight, has_weight, class_total, smooth):
    """For the m rows of row-major block e: lse[k] = row k's max, lse[2m + k] = log(sum(exp(
    row - max))) (e is left holding the exponentials); with `smooth`, lse[m + k] = sum_c w[c]
    * -log p[c], label smoothing's term, from the shifted scores (all its terms >= 0: no
    cancellation)."""
    wide()
    for k in range(m):
        row = e[k * n_c:(k + 1) * n_c]
        top = row[0]
        for c in range(1, n_c):
            top = maximum(top, row[c])
        for c in range(n_c):
            row[c] -= top
        lse[k], lse[m + k] = top, 0.0
        if smooth:
            for c in range(n_c):
                lse[m + k] -= (np.float64(weight[c]) if has_weight else 1.0) * row[c]
    _exp(e, m * n_c)
    for k in range(m):
        row = e[k * n_c:(k + 1) * n_c]
        s = 0.0
        for c in range(n_c):
            s += row[c]
        lse[2 * m + k] = libm.log(s)  # (NaN for an infinite max: inf - inf above, as torch)
        lse[m + k] += class_total * lse[2 * m + k]


@register_jitable(fastmath=_REASSOC, _nrt=False)
def _lse_by_class(e, m, n_c, lse, weight, has_weight, class_total, smooth):
    """_lse_by_row of a class-major block: every loop runs across the rows (lse[2m:3m] holds
    the sums until their logs)."""
    wide()
    like = e[0]
    top, terms, sums = lse[:m], lse[m:2 * m], lse[2 * m:3 * m]
    for k in range(m):
        top[k], terms[k], sums[k] = e[k], 0.0, 0.0
    for c in range(1, n_c):
        run = e[c * m:(c + 1) * m]
        for k in range(m):
            top[k] = maximum(top[k], np.float64(run[k]))
    for c in range(n_c):
        run = e[c * m:(c + 1) * m]
        for k in range(m):
            run[k] -= cast_like(top[k], like)
        if smooth:
            w = np.float64(weight[c]) if has_weight else 1.0
            for k in range(m):
                terms[k] -= w * run[k]
    _exp(e, m * n_c)
    for c in range(n_c):
        run = e[c * m:(c + 1) * m]
        for k in range(m):
            sums[k] += run[k]
    for k in range(m):  # (a loop of its own: it vectorises)
        sums[k] = libm.log(sums[k])
        terms[k] += class_total * sums[k]


@_per_layout(_nrt=False)
def _task(x, shape, strides, target, weight, has_weight, class_total, ignore, smoothing, out,
          per_row, saved, lo, hi, e, lse):
    """Rows lo..hi-1: (their summed loss, their summed target weight, the first row whose
    target is out of range or -1); each row's max and log-sum into saved[3 + row] and
    saved[3 + rows + row], and with per_row its loss into out[row]."""
    n_s, n_c = shape
    sn, sc, ss = strides
    m = hi - lo
    if not LOG_PROBS and n_c:
        _load(x, shape, strides, lo, hi, e)
        if BY_CLASS:
            _lse_by_class(e, m, n_c, lse, weight, has_weight, class_total, smoothing != 0.0)
        else:
            _lse_by_row(e, m, n_c, lse, weight, has_weight, class_total, smoothing != 0.0)
    rows = target.size
    total = weights = 0.0
    for k in range(m):
        r = lo + k
        top, log_s = (0.0, 0.0) if LOG_PROBS else (lse[k], lse[2 * m + k])
        saved[3 + r], saved[3 + rows + r] = top, log_s
        t = target[r]
        if t == ignore:
            if per_row:
                out[r] = 0
            continue
        if t < 0 or t >= n_c:
            return total, weights, r
        b = r * sn if n_s == 1 else (r // n_s) * sn + (r % n_s) * ss
        w = np.float64(weight[t]) if has_weight else 1.0
        smooth = lse[m + k] if smoothing != 0.0 else 0.0
        loss = scalar.row_loss(top, log_s, np.float64(x[b + t * sc]), w, smooth, smoothing, n_c)
        if per_row:
            out[r] = loss
        total += loss
        weights += w
    return total, weights, -1


@register_jitable(_nrt=False)
def _class_total(weight, has_weight, n_c):
    """W, the summed class weights."""
    if not has_weight:
        return np.float64(n_c)
    s = 0.0
    for c in range(n_c):
        s += weight[c]
    return s


@register_jitable(_nrt=False)
def _finish(out, reduction, saved, total, weights, class_total):
    saved[0], saved[1], saved[2] = total, weights, class_total
    if reduction == scalar.MEAN:
        out[0] = total / weights  # 0 / 0 = NaN when every target is ignored, as in torch
    elif reduction == scalar.SUM:
        out[0] = total


@_per_layout(njit, cache=True, error_model="numpy")
def loss_kernel(x, shape, strides, target, weight, has_weight, ignore, smoothing, out, reduction,
                saved):
    """The loss of every row, reduced into out[0] unless per row (reduction NONE); saved gets
    (summed loss, summed target weight, W, each row's max, each row's log-sum). Returns the
    first row with a target out of range, or -1."""
    rows, n_c = target.size, shape[1]
    run = rows if shape[0] == 1 else shape[0]
    per_task = _per_task(n_c)
    e, lse = _scratch(x, shape, saved)
    class_total = _class_total(weight, has_weight, n_c)
    total = weights = 0.0
    for task in range(_tasks(rows, run, per_task)):
        lo, hi = _rows(task, run, per_task)
        t, w, bad = _task(x, shape, strides, target, weight, has_weight, class_total, ignore,
                          smoothing, out, reduction == scalar.NONE, saved, lo, hi, e, lse)
        if bad >= 0:
            return bad
        total += t
        weights += w
    _finish(out, reduction, saved, total, weights, class_total)
    return -1


@_per_layout(njit, cache=True, parallel=prange_only(), error_model="numpy")
def loss_kernel_parallel(x, shape, strides, target, weight, has_weight, ignore, smoothing, out,
                         reduction, saved):
    rows, n_c = target.size, shape[1]
    run = rows if shape[0] == 1 else shape[0]
    per_task = _per_task(n_c)
    tasks = _tasks(rows, run, per_task)
    class_total = _class_total(weight, has_weight, n_c)
    parts = np.empty((tasks, 2))
    bad = np.empty(tasks, np.int64)
    for task in prange(tasks):
        e, lse = _scratch(x, shape, saved)
        lo, hi = _rows(task, run, per_task)
        parts[task, 0], parts[task, 1], bad[task] = _task(
            x, shape, strides, target, weight, has_weight, class_total, ignore, smoothing, out,
            reduction == scalar.NONE, saved, lo, hi, e, lse)
    total = weights = 0.0
    for task in range(tasks):  # in order, as the serial kernel
        if bad[task] >= 0:
            return bad[task]
        total += parts[task, 0]
        weights += parts[task, 1]
    _finish(out, reduction, saved, total, weights, class_total)
    return -1


# -- backward --------------------------------------------------------------------------------------
@_per_layout(fastmath=_REASSOC, _nrt=False)
def _softmax(e, m, n_c, saved, lo, rows, shifts):
    """Block e of rows lo..lo+m-1 becomes their softmax, exp((x - max) - log_s), the forward's
    max and log-sum read from saved (the max is a score: x - max is exact); shifts: scratch
    for 2m of them in x's type."""
    wide()
    like = e[0]
    if BY_CLASS:
        tops, logs = shifts[:m], shifts[m:2 * m]
        for k in range(m):
            tops[k] = cast_like(saved[3 + lo + k], like)
            logs[k] = cast_like(saved[3 + rows + lo + k], like)
        for c in range(n_c):
            run = e[c * m:(c + 1) * m]
            for k in range(m):
                run[k] = (run[k] - tops[k]) - logs[k]
    else:
        for k in range(m):
            row = e[k * n_c:(k + 1) * n_c]
            top = cast_like(saved[3 + lo + k], like)
            log_s = cast_like(saved[3 + rows + lo + k], like)
            for c in range(n_c):
                row[c] = (row[c] - top) - log_s
    _exp(e, m * n_c)


@_per_layout(fastmath=_REASSOC, _nrt=False)
def _grad_by_row(p, y, n_c, a, b, h, t, weight, has_weight):
    """y[c] = the gradient at class c of one row (scalar.class_grad), p its softmax."""
    wide()
    zero, one = cast_like(0.0, a), cast_like(1.0, a)
    for c in range(n_c):
        w = cast_like(weight[c], a) if has_weight else one
        y[c] = scalar.class_grad(a, b, h, zero if LOG_PROBS else p[c], w, c == t)


@_per_layout(fastmath=_REASSOC, _nrt=False)
def _grad_by_class(e, m, n_c, a, b, h, targets, ignore, weight, has_weight):
    """The gradient into class-major block e (which holds the softmax), across the rows;
    rows whose target is ignored get 0."""
    wide()
    zero, one = cast_like(0.0, a[0]), cast_like(1.0, a[0])
    for c in range(n_c):
        run = e[c * m:(c + 1) * m]
        w = cast_like(weight[c], zero) if has_weight else one
        for k in range(m):
            t = targets[k]
            grad = scalar.class_grad(a[k], b[k], h[k], zero if LOG_PROBS else run[k], w, c == t)
            run[k] = zero if t == ignore else grad


@_per_layout(_nrt=False)
def _grad_task(x, shape, strides, target, weight, has_weight, ignore, smoothing, g, g_stride,
               scale, saved, out, lo, hi, e, coefficients):
    """Rows lo..hi-1 of the gradient into out, C-contiguous (N, C, S)."""
    n_c = shape[1]
    m = hi - lo
    if not LOG_PROBS and n_c:
        _load(x, shape, strides, lo, hi, e)
        _softmax(e, m, n_c, saved, lo, target.size, coefficients)
    a, b, h = coefficients[:m], coefficients[m:2 * m], coefficients[2 * m:3 * m]
    for k in range(m):
        r = lo + k
        t = target[r]
        w = np.float64(weight[t]) if has_weight and t != ignore else 1.0
        a[k], b[k], h[k] = scalar.grad_coefficients(np.float64(g[r * g_stride]) * scale, w,
                                                    saved[2], smoothing, n_c, LOG_PROBS)
    if BY_CLASS:
        _grad_by_class(e, m, n_c, a, b, h, target[lo:hi], ignore, weight, has_weight)
        _store(out, shape, lo, hi, e)
        return
    for k in range(m):
        r = lo + k
        y = out[r * n_c:(r + 1) * n_c]
        if target[r] == ignore:
            for c in range(n_c):
                y[c] = 0
        else:
            _grad_by_row(e[k * n_c:(k + 1) * n_c], y, n_c, a[k], b[k], h[k], target[r], weight,
                         has_weight)


@_per_layout(njit, cache=True, error_model="numpy")
def grad_kernel(x, shape, strides, target, weight, has_weight, ignore, smoothing, g, reduction,
                saved, out):
    """out = the gradient of the loss by x for upstream gradient g (one element, or one per
    row for reduction NONE); out C-contiguous (N, C, S), saved: the forward's."""
    rows = target.size
    run = rows if shape[0] == 1 else shape[0]
    per_task = _per_task(shape[1])
    e, coefficients = _scratch(x, shape, x)
    scale = 1.0 / saved[1] if reduction == scalar.MEAN else 1.0
    for task in range(_tasks(rows, run, per_task)):
        lo, hi = _rows(task, run, per_task)
        _grad_task(x, shape, strides, target, weight, has_weight, ignore, smoothing, g,
                   1 if reduction == scalar.NONE else 0, scale, saved, out, lo, hi, e,
                   coefficients)


@_per_layout(njit, cache=True, parallel=prange_only(), error_model="numpy")
def grad_kernel_parallel(x, shape, strides, target, weight, has_weight, ignore, smoothing, g,
                         reduction, saved, out):
    rows = target.size
    run = rows if shape[0] == 1 else shape[0]
    per_task = _per_task(shape[1])
    scale = 1.0 / saved[1] if reduction == scalar.MEAN else 1.0
    for task in prange(_tasks(rows, run, per_task)):
        e, coefficients = _scratch(x, shape, x)
        lo, hi = _rows(task, run, per_task)
        _grad_task(x, shape, strides, target, weight, has_weight, ignore, smoothing, g,
                   1 if reduction == scalar.NONE else 0, scale, saved, out, lo, hi, e,
                   coefficients)


# -- launchers -------------------------------------------------------------------------------------
def _args(x, target, weight):
    """Kernel arguments for scores x (N, C, S), flat int64 targets and the class weights."""
    flat, strides = _flat(x)
    has_weight = weight is not None
    return (flat, (x.shape[2], x.shape[1]), tuple(strides), target,
            weight if has_weight else np.empty(0, x.dtype), has_weight)


def class_loss(out, saved, x, target, weight, ignore_index, smoothing, log_probs, reduction):
    """The loss of scores x (N, C, S) against targets (N * S,), int64, C-contiguous: per row
    into out (N * S,) for reduction NONE, else reduced into the one-element out. saved (float64,
    3 + 2 N S) gets what the backward reads: the summed loss and target weight, the summed class
    weights W, each row's max and log-sum. Returns None, or a target that is out of range."""
    kernel = kernels((x.shape[2], x.shape[1]), log_probs)[
        "loss_kernel" if serial(x.size) else "loss_kernel_parallel"]
    bad = kernel(*_args(x, target, weight), ignore_index, smoothing, out.reshape(-1), reduction,
                 saved)
    return None if bad < 0 else int(target[bad])


def class_loss_grad(out, x, target, weight, ignore_index, smoothing, log_probs, g, reduction,
                    saved):
    """out (C-contiguous, x's shape) = the gradient of class_loss's loss by x, for upstream
    gradient g (one element or, for NONE, one per target, C-contiguous)."""
    kernel = kernels((x.shape[2], x.shape[1]), log_probs)[
        "grad_kernel" if serial(x.size) else "grad_kernel_parallel"]
    kernel(*_args(x, target, weight), ignore_index, smoothing, g.reshape(-1), reduction, saved,
           out.reshape(-1))
