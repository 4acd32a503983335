"""CUDA kernels of the class losses (formulas: kernels/scalar/loss.py). Scores are seen as
(N, C, S), classes in the middle, a row being (n, s). The forward runs one block of threads per
row, as softmax: the threads fold their strided share of the row into a logsumexp state
(kernels/scalar/reduction.py) and merge the states in shared memory; thread 0 writes the
row's loss and saves its max and log-sum. Reduced losses sum the rows' losses and target
weights with the reduction kernels, and a one-thread kernel divides. The backward is
elementwise: one thread per score, from the saved max and log-sum.

`saved` holds (summed loss, summed target weight, W, each row's max, each row's log-sum) as on
the CPU, except that W, the summed class weights, is only computed when there are weights
(else it is C)."""
import numpy as np
from numba import cuda, float64

from ..scalar import libm
from ..scalar import loss as scalar
from ..scalar import reduction as fold
from . import driver
from .access import load, store
from .memory import pointer, strides
from .reduction import _block_merge, _launch, block_sum, shared_total


@cuda.jit(device=True, inline="always")
def _lse(x, base, sc, n_c, slot):
    """(max, log(sum(exp(x - max)))) of a row (a NaN log-sum when the max is infinite, as in
    torch), in every thread."""
    state = (-np.inf, 0.0, np.int64(0))
    j = cuda.threadIdx.x
    while j < n_c:
        state = fold.merge(fold.LSE, state, fold.lift(fold.LSE, load(x, base + j * sc), j,
                                                      -np.inf))
        j += cuda.blockDim.x
    m, w, _ = _block_merge(fold.LSE, state)
    return shared_total(m, slot), shared_total(libm.log(w) if m - m == 0.0 else m - m, slot)


@cuda.jit(device=True, inline="always")
def _smooth(x, base, sc, n_c, top, log_s, weight, wo, has_weight, slot):
    """The sum over a row of w[c] * -log p[c], label smoothing's term, in every thread."""
    s = 0.0
    j = cuda.threadIdx.x
    while j < n_c:
        w = float64(load(weight, wo + j)) if has_weight else 1.0
        s += w * ((top - float64(load(x, base + j * sc))) + log_s)
        j += cuda.blockDim.x
    return block_sum(s, slot)


@driver.jit
def loss_rows(x, xo, sn, sc, ss, n_s, n_c, rows, target, to, weight, wo, has_weight, ignore,
              smoothing, log_probs, parts, pp, saved, so, out, oo, per_row, bad, bo):
    """Each row's loss and target weight into parts[row] and parts[rows + row], its max and
    log-sum into saved[3 + row] and saved[3 + rows + row], and with per_row its loss into out;
    any row whose target is out of range into bad."""
    slot = cuda.shared.array(1, float64)
    r = cuda.blockIdx.x
    while r < rows:
        t = load(target, to + r)
        base = xo + (r // n_s) * sn + (r % n_s) * ss
        top = log_s = 0.0
        if not log_probs and n_c:
            top, log_s = _lse(x, base, sc, n_c, slot)
        loss = w = 0.0
        if t != ignore and (t < 0 or t >= n_c):
            if cuda.threadIdx.x == 0:
                store(bad, bo, r)
        elif t != ignore:
            smooth = 0.0
            if smoothing != 0.0:
                smooth = _smooth(x, base, sc, n_c, top, log_s, weight, wo, has_weight, slot)
            w = float64(load(weight, wo + t)) if has_weight else 1.0
            loss = scalar.row_loss(top, log_s, float64(load(x, base + t * sc)), w, smooth,
                                   smoothing, n_c)
        if cuda.threadIdx.x == 0:
            store(parts, pp + r, loss)
            store(parts, pp + rows + r, w)
            store(saved, so + 3 + r, top)
            store(saved, so + 3 + rows + r, log_s)
            if per_row:
                store(out, oo + r, loss)
        r += cuda.gridDim.x


@driver.jit
def finish(out, oo, saved, so, mean):
    """out = the summed loss, divided by the summed weight for 'mean' (0 / 0: NaN)."""
    if cuda.grid(1) == 0:
        total = load(saved, so)
        store(out, oo, total / load(saved, so + 1) if mean else total)


@driver.jit
def grad_scores(x, xo, sn, sc, ss, n_s, n_c, rows, target, to, weight, wo, has_weight, ignore,
                smoothing, log_probs, g, go, g_stride, scaled, saved, so, o, oo):
    """o (C-contiguous (N, C, S)) = the gradient of the loss by x for upstream gradient g
    (element r * g_stride for row r), divided by the summed target weight when `scaled`."""
    e = cuda.grid(1)
    while e < rows * n_c:
        s = e % n_s
        c = (e // n_s) % n_c
        n = e // (n_s * n_c)
        r = n * n_s + s
        t = load(target, to + r)
        grad = 0.0
        if t != ignore:
            gr = float64(load(g, go + r * g_stride))
            if scaled:
                gr /= load(saved, so + 1)
            w = float64(load(weight, wo + t)) if has_weight else 1.0
            class_total = load(saved, so + 2) if has_weight else float64(n_c)
            a, b, h = scalar.grad_coefficients(gr, w, class_total, smoothing, n_c, log_probs)
            p = 0.0
            if not log_probs:
                p = libm.exp((float64(load(x, xo + n * sn + c * sc + s * ss))
                              - load(saved, so + 3 + r)) - load(saved, so + 3 + rows + r))
            wc = float64(load(weight, wo + c)) if has_weight else 1.0
            grad = scalar.class_grad(a, b, h, p, wc, c == t)
        store(o, oo + e, grad)
        e += cuda.gridsize(1)


def _args(x, target, weight):
    """Kernel arguments for scores x (N, C, S), flat int64 targets and the class weights."""
    _, n_c, n_s = x.shape
    sn, sc, ss = strides(x)
    p, po = pointer(x) if x.size else pointer(target)  # (an empty x is never read)
    return (p, po, sn, sc, ss, n_s, n_c, target.size, *pointer(target),
            *pointer(weight if weight is not None else target), weight is not None)


def class_loss(out, saved, x, target, weight, ignore_index, smoothing, log_probs, reduction):
    """See the CPU backend's class_loss."""
    from . import empty, from_numpy, to_numpy
    from . import reduction as reduce_
    rows = target.size
    parts = empty((2, rows), np.float64)
    flag = from_numpy(np.full(1, -1, np.int64))
    if rows:
        _launch(loss_rows, rows, *_args(x, target, weight), ignore_index, float(smoothing),
                log_probs, *pointer(parts), *pointer(saved), *pointer(out),
                reduction == scalar.NONE, *pointer(flag))
    if int(to_numpy(flag)[0]) >= 0:  # the first bad target, as on the CPU (threads race)
        t = to_numpy(target)
        return int(t[(t != ignore_index) & ((t < 0) | (t >= x.shape[1]))][0])
    if weight is not None:
        reduce_.reduce(fold.SUM, saved[2:3], weight, (0,))
    if reduction != scalar.NONE:
        reduce_.reduce(fold.SUM, saved[:2], parts, (1,))
        driver.launch(finish, 1, 1, *pointer(out), *pointer(saved), reduction == scalar.MEAN)
    return None


def class_loss_grad(out, x, target, weight, ignore_index, smoothing, log_probs, g, reduction,
                    saved):
    """See the CPU backend's class_loss_grad."""
    if out.size:
        driver.launch_1d(grad_scores, out.size, *_args(x, target, weight), ignore_index,
                         float(smoothing), log_probs, *pointer(g),
                         1 if reduction == scalar.NONE else 0, reduction == scalar.MEAN,
                         *pointer(saved), *pointer(out))
