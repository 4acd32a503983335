"""CPU kernels of the fused recurrences (ops/recurrent.py): the whole time loop of one layer
and direction of nn.RNN/LSTM/GRU in one @njit call, forward and backward, per gate type.

Each step is the hidden product through cblas_?gemm (added straight into the step's gates,
which already hold the input projection), then one pass over the step's rows applying
kernels/scalar/recurrent.py's formulas. Looping in the kernel, not in Python, saves a few
Python calls per step (~400 small ops per step in the composed path). A step's rows are its
batch: `sizes[s]` rows starting at row `offsets[s]` of the (rows, features) buffers, for the
steps in the order they run; a packed batch's steps shrink, and the state rows a step does not
touch keep their values (finished sequences keep their last state, and in the reverse direction
a sequence starts from its initial state when it joins).

Serial, and OpenBLAS on one thread (linalg.gemm_blas says why): the same bits at any thread
count. The weight gradients are products over all steps at once, made by the caller."""
import numpy as np
from numba import njit
from numba.extending import register_jitable

from ..scalar import recurrent as scalar
from . import blas, narrow
from .linalg import _dense

AVAILABLE = blas.AVAILABLE  # without cblas_?gemm the layers keep their composed path
DENSE_STEPS = 4  # steps from which `forward` copies the hidden weights transposed


@register_jitable
def _gemm(trans_b, m, n, k, pa, lda, pb, ldb, accumulate, pc, ldc, like):
    """C (m x n at pc) = [C +] A (m x k at pa) op(B) (B at pb, transposed if trans_b), all
    row-major in like's float type. One row is a matrix-vector product, C^T = op(B)^T A^T:
    ?gemm would pack all of B first (docs/design.md, "nn and optim")."""
    if m == 0:
        return
    if m == 1:
        rows, cols = (n, k) if trans_b else (k, n)
        trans = blas.NO_TRANS if trans_b else blas.TRANS
        beta = 1.0 if accumulate else 0.0
        if like.itemsize == 4:
            blas.sgemv(blas.ROW_MAJOR, trans, rows, cols, 1.0, pb, ldb, pa, 1, beta, pc, 1)
        else:
            blas.dgemv(blas.ROW_MAJOR, trans, rows, cols, 1.0, pb, ldb, pa, 1, beta, pc, 1)
        return
    tb = blas.TRANS if trans_b else blas.NO_TRANS
    if like.itemsize == 4:
        if accumulate:
            blas.sgemm(blas.ROW_MAJOR, blas.NO_TRANS, tb, m, n, k, 1.0, pa, lda, pb, ldb, 1.0,
                       pc, ldc)
        else:
            blas.sgemm(blas.ROW_MAJOR, blas.NO_TRANS, tb, m, n, k, 1.0, pa, lda, pb, ldb, 0.0,
                       pc, ldc)
    elif accumulate:
        blas.dgemm(blas.ROW_MAJOR, blas.NO_TRANS, tb, m, n, k, 1.0, pa, lda, pb, ldb, 1.0, pc,
                   ldc)
    else:
        blas.dgemm(blas.ROW_MAJOR, blas.NO_TRANS, tb, m, n, k, 1.0, pa, lda, pb, ldb, 0.0, pc,
                   ldc)


@register_jitable
def _at(a, row):
    """The address of a's row `row` (a C-contiguous 2-D array)."""
    return a.ctypes.data + row * a.shape[1] * a.itemsize


@register_jitable
def _copy_rows(dst, d0, src, b):
    """dst[d0:d0 + b] = src[:b]."""
    for r in range(b):
        d, s = dst[d0 + r], src[r]
        for j in range(s.size):
            d[j] = s[j]


@register_jitable
def _add_rows(dst, src, s0, b):
    """dst[:b] += src[s0:s0 + b] (nothing when src has no rows: no upstream gradient)."""
    if src.shape[0] == 0:
        return
    for r in range(b):
        d, s = dst[r], src[s0 + r]
        for j in range(d.size):
            d[j] += s[j]


# -- LSTM --------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def lstm_forward(gates, out, h, c, hprev, cprev, cnew, hraw, w_hh_t, w_hr_t, tb, sizes,
                 offsets):
    """gates (rows, 4H): the projected input with its biases, overwritten with the activated
    gates; out (rows, W) the output; h (N, W) and c (N, H) the states, from h0/c0 to h_n/c_n;
    hprev, cprev, cnew the states each row read and wrote (saved for the backward); with a
    projection (w_hr_t (H, W), else no columns) hraw (rows, H) receives o tanh(c') before it.
    The weights come transposed (w_hh_t (W, 4H)), or as they are with `tb`: see `forward`."""
    n_h, width = c.shape[1], h.shape[1]
    proj = w_hr_t.size > 0
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    for s in range(sizes.size):
        b, o0 = sizes[s], offsets[s]
        _copy_rows(hprev, o0, h, b)
        _copy_rows(cprev, o0, c, b)
        _gemm(tb, b, 4 * n_h, width, h.ctypes.data, width, w_hh_t.ctypes.data,
              w_hh_t.shape[1], True, _at(gates, o0), 4 * n_h, gates)
        for r in range(b):
            row = gates[o0 + r]
            gi, gf, gg, go = row[:n_h], row[n_h:2 * n_h], row[2 * n_h:3 * n_h], row[3 * n_h:]
            cr, cn = c[r], cnew[o0 + r]
            if proj:
                hr = hraw[o0 + r]
            else:
                hr = out[o0 + r]
            for j in range(n_h):
                i, f, g, o, cc, hh = scalar.lstm(gi[j], gf[j], gg[j], go[j], cr[j])
                gi[j], gf[j], gg[j], go[j] = i, f, g, o
                cr[j], cn[j], hr[j] = cc, cc, hh
        if proj:
            _gemm(tb, b, width, n_h, _at(hraw, o0), n_h, w_hr_t.ctypes.data, w_hr_t.shape[1],
                  False, _at(out, o0), width, out)
        _copy_rows(h, 0, out[o0:], b)
    blas.set_num_threads(threads)


@njit(cache=True, error_model="numpy")
def lstm_backward(gates, cprev, cnew, dgates, dout, dh, dc, dhr, dhp, w_hh, w_hr, sizes,
                  offsets):
    """The steps in reverse: dgates (rows, 4H) receives the gates' pre-activation gradients;
    dh (N, W) and dc (N, H) go from the gradients of h_n/c_n to those of h0/c0; dout (rows, W)
    is the output's gradient (no rows: none). With a projection, dhr (N, H) is scratch and dhp
    (rows, W) receives the gradient of each projected h (for weight_hr's gradient)."""
    n_h, width = dc.shape[1], dh.shape[1]
    proj = w_hr.shape[0] > 0
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    for s in range(sizes.size - 1, -1, -1):
        b, o0 = sizes[s], offsets[s]
        _add_rows(dh, dout, o0, b)
        if proj:
            _copy_rows(dhp, o0, dh, b)
            _gemm(False, b, n_h, width, dh.ctypes.data, width, w_hr.ctypes.data, n_h, False,
                  dhr.ctypes.data, n_h, dh)
            src = dhr
        else:
            src = dh
        for r in range(b):
            row, drow = gates[o0 + r], dgates[o0 + r]
            gi, gf, gg, go = row[:n_h], row[n_h:2 * n_h], row[2 * n_h:3 * n_h], row[3 * n_h:]
            di, df, dg, do = drow[:n_h], drow[n_h:2 * n_h], drow[2 * n_h:3 * n_h], \
                drow[3 * n_h:]
            cp, cn, dhr_, dcr = cprev[o0 + r], cnew[o0 + r], src[r], dc[r]
            for j in range(n_h):
                di[j], df[j], dg[j], do[j], dcr[j] = scalar.lstm_grad(
                    gi[j], gf[j], gg[j], go[j], cp[j], cn[j], dhr_[j], dcr[j])
        _gemm(False, b, width, 4 * n_h, _at(dgates, o0), 4 * n_h, w_hh.ctypes.data, width,
              False, dh.ctypes.data, width, dh)
    blas.set_num_threads(threads)


# -- GRU ---------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def gru_forward(gates, hg, out, h, hprev, w_hh_t, b_hh, tb, sizes, offsets):
    """gates (rows, 3H): the projected input with bias_ih, overwritten with r, z, n; hg (rows,
    3H) receives the hidden parts h W_hh^T + b_hh (the backward reads hn's); out (rows, H);
    h (N, H) from h0 to h_n; hprev the state each row read. w_hh_t (H, 3H): W_hh^T."""
    n_h = h.shape[1]
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    for s in range(sizes.size):
        b, o0 = sizes[s], offsets[s]
        _copy_rows(hprev, o0, h, b)
        _gemm(tb, b, 3 * n_h, n_h, h.ctypes.data, n_h, w_hh_t.ctypes.data, w_hh_t.shape[1],
              False, _at(hg, o0), 3 * n_h, hg)
        for r in range(b):
            row, hrow = gates[o0 + r], hg[o0 + r]
            xr, xz, xn = row[:n_h], row[n_h:2 * n_h], row[2 * n_h:]
            hr, hz, hn = hrow[:n_h], hrow[n_h:2 * n_h], hrow[2 * n_h:]
            br, bz, bn = b_hh[:n_h], b_hh[n_h:2 * n_h], b_hh[2 * n_h:]
            hp, o = h[r], out[o0 + r]
            for j in range(n_h):
                hn[j] += bn[j]
                xr[j], xz[j], xn[j], o[j] = scalar.gru(xr[j], xz[j], xn[j], hr[j] + br[j],
                                                       hz[j] + bz[j], hn[j], hp[j])
        _copy_rows(h, 0, out[o0:], b)
    blas.set_num_threads(threads)


@njit(cache=True, error_model="numpy")
def gru_backward(gates, hg, hprev, dgates, dgh, dout, dh, w_hh, sizes, offsets):
    """The steps in reverse: dgates (rows, 3H) receives the input parts' gradients (those of
    the projection), dgh (rows, 3H) the hidden parts' (for weight_hh's and bias_hh's); dh
    (N, H) goes from h_n's gradient to h0's; dout (rows, H) the output's gradient (no rows:
    none)."""
    n_h = dh.shape[1]
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    for s in range(sizes.size - 1, -1, -1):
        b, o0 = sizes[s], offsets[s]
        _add_rows(dh, dout, o0, b)
        for r in range(b):
            row, hn, drow, dhrow = gates[o0 + r], hg[o0 + r, 2 * n_h:], dgates[o0 + r], \
                dgh[o0 + r]
            gr, gz, gn = row[:n_h], row[n_h:2 * n_h], row[2 * n_h:]
            hp, d = hprev[o0 + r], dh[r]
            for j in range(n_h):
                dr, dz, dn, dhn, dhh = scalar.gru_grad(gr[j], gz[j], gn[j], hn[j], hp[j], d[j])
                drow[j] = dhrow[j] = dr
                drow[n_h + j] = dhrow[n_h + j] = dz
                drow[2 * n_h + j], dhrow[2 * n_h + j], d[j] = dn, dhn, dhh
        _gemm(False, b, n_h, 3 * n_h, _at(dgh, o0), 3 * n_h, w_hh.ctypes.data, n_h, True,
              dh.ctypes.data, n_h, dh)
    blas.set_num_threads(threads)


# -- RNN (tanh or relu) ----------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def elman_forward(gates, out, h, hprev, w_hh_t, relu, tb, sizes, offsets):
    """gates (rows, H): the projected input with both biases (kept as the pre-activations);
    out (rows, H); h (N, H) from h0 to h_n; hprev the state each row read. w_hh_t: W_hh^T."""
    n_h = h.shape[1]
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    for s in range(sizes.size):
        b, o0 = sizes[s], offsets[s]
        _copy_rows(hprev, o0, h, b)
        _gemm(tb, b, n_h, n_h, h.ctypes.data, n_h, w_hh_t.ctypes.data, w_hh_t.shape[1], True,
              _at(gates, o0), n_h, gates)
        for r in range(b):
            x, o = gates[o0 + r], out[o0 + r]
            for j in range(n_h):
                o[j] = scalar.elman(x[j], relu)
        _copy_rows(h, 0, out[o0:], b)
    blas.set_num_threads(threads)


@njit(cache=True, error_model="numpy")
def elman_backward(out, dgates, dout, dh, w_hh, relu, sizes, offsets):
    """The steps in reverse: dgates (rows, H) receives the pre-activations' gradients; dh (N,
    H) goes from h_n's gradient to h0's; dout (rows, H) the output's gradient (no rows:
    none)."""
    n_h = dh.shape[1]
    threads = blas.get_num_threads()
    blas.set_num_threads(1)
    for s in range(sizes.size - 1, -1, -1):
        b, o0 = sizes[s], offsets[s]
        _add_rows(dh, dout, o0, b)
        for r in range(b):
            o, d, dg = out[o0 + r], dh[r], dgates[o0 + r]
            for j in range(n_h):
                dg[j] = scalar.elman_grad(o[j], d[j], relu)
        _gemm(False, b, n_h, n_h, _at(dgates, o0), n_h, w_hh.ctypes.data, n_h, False,
              dh.ctypes.data, n_h, dh)
    blas.set_num_threads(threads)


# -- launchers ---------------------------------------------------------------------------------
@narrow.in_float32
def forward(mode, gates, h, c, w_hh, b_hh, w_hr, sizes, offsets):
    """Run `mode`'s recurrence (ops/recurrent.py names the arguments; gates, h and c are the
    caller's fresh buffers, written in place): (out, saved), saved being the buffers the
    backward reads."""
    rows, dtype = gates.shape[0], gates.dtype
    width = h.shape[1]
    out, hprev = np.empty((rows, width), dtype), np.empty((rows, width), dtype)
    # each step's product reads the weights transposed: a dense copy, where the steps are
    # many (OpenBLAS packs a stored B^T anew at every step, slowly for so few rows: 35 steps
    # of 20x200 @ 200x800 3.5 -> 1.9 ms), or as stored, with BLAS's transpose flag (tb), where
    # they are few (a sampling loop's single steps: the copy of 1024x4096 weights took 8 of a
    # step's 11 ms)
    tb = sizes.size < DENSE_STEPS
    w_hh = _dense(w_hh if tb else w_hh.T)
    if mode == "LSTM":
        n_h = c.shape[1]
        cprev, cnew = np.empty((rows, n_h), dtype), np.empty((rows, n_h), dtype)
        hraw = np.empty((rows if w_hr.shape[0] else 0, n_h), dtype)
        lstm_forward(gates, out, h, c, hprev, cprev, cnew, hraw, w_hh,
                     _dense(w_hr if tb else w_hr.T), tb, sizes, offsets)
        return out, dict(gates=gates, hprev=hprev, cprev=cprev, cnew=cnew, hraw=hraw)
    if mode == "GRU":
        hg = np.empty_like(gates)
        gru_forward(gates, hg, out, h, hprev, w_hh, b_hh, tb, sizes, offsets)
        return out, dict(gates=gates, hg=hg, hprev=hprev)
    elman_forward(gates, out, h, hprev, w_hh, mode == "RNN_RELU", tb, sizes, offsets)
    return out, dict(out=out, hprev=hprev)


@narrow.in_float32
def backward(mode, saved, dout, dh, dc, w_hh, w_hr, sizes, offsets):
    """The reverse loop: dh and dc (fresh, from h_n's and c_n's gradients) become h0's and
    c0's. Returns (the projection's gradient, the hidden parts' gradient (rows, gates) --
    weight_hh's is its product with saved["hprev"] --, each projected h's gradient (LSTM with
    a projection), else None)."""
    dgates = np.empty_like(saved["gates"] if "gates" in saved else saved["out"])
    if mode == "LSTM":
        proj = w_hr.shape[0] > 0
        n_h = dc.shape[1]
        dhp = np.empty((dgates.shape[0] if proj else 0, dh.shape[1]), dh.dtype)
        dhr = np.empty((dh.shape[0] if proj else 0, n_h), dh.dtype)
        lstm_backward(saved["gates"], saved["cprev"], saved["cnew"], dgates, dout, dh, dc, dhr,
                      dhp, w_hh, w_hr, sizes, offsets)
        return dgates, dgates, dhp if proj else None
    if mode == "GRU":
        dgh = np.empty_like(dgates)
        gru_backward(saved["gates"], saved["hg"], saved["hprev"], dgates, dgh, dout, dh, w_hh,
                     sizes, offsets)
        return dgates, dgh, None
    elman_backward(saved["out"], dgates, dout, dh, w_hh, mode == "RNN_RELU", sizes, offsets)
    return dgates, dgates, None
