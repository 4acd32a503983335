"""The recurrence of nn.RNN/LSTM/GRU: one layer and direction over a sequence, after the input
projection of every step (one product, `project`).

`run` picks the path: the fused op `recurrence` (one recorded node; the whole time loop in one
kernel each way: kernels/cpu/recurrent.py, rule in autograd/derivatives/recurrent.py) where
the device has those kernels, else `composed`, the steps written with ops (linear, sigmoid,
tanh, ...: ~10 recorded ops a step), which differentiates on every device and to any order.
The fused rule runs the composed path again when the backward itself is recorded
(create_graph=True), so second derivatives are the composed ones."""
import numpy as np

from .. import dtypes
from ..kernels.registry import backend
from ..tensor import _wrap
from . import elementwise, linalg, shape
from ._common import dense

TENSOR_METHODS = {}

GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# -- one time step of each mode, composed ----------------------------------------------------
# `projected` is the input's product with weight_ih plus bias_ih -- and, for every mode but GRU,
# plus bias_hh as well (the sum is the same, added once for all steps). GRU keeps bias_hh
# inside its hidden product: its candidate gate multiplies (W_hn h + b_hn) by r.
def _elman_step(activation):
    """RNN's step, h' = activation(projected + h W_hh^T), for tanh or relu."""
    def step(projected, state, w_hh, b_hh, w_hr):
        return (getattr(elementwise, activation)(projected + linalg.linear(state[0], w_hh)),)
    return step


def _lstm_step(projected, state, w_hh, b_hh, w_hr):
    """Gates i, f, g, o in torch's order: c' = f c + i g, h' = o tanh(c') (times weight_hr
    with a projection)."""
    h, c = state
    i, f, g, o = (projected + linalg.linear(h, w_hh)).chunk(4, -1)
    c = elementwise.sigmoid(f) * c + elementwise.sigmoid(i) * elementwise.tanh(g)
    h = elementwise.sigmoid(o) * elementwise.tanh(c)
    return (h if w_hr is None else linalg.linear(h, w_hr), c)


def _gru_step(projected, state, w_hh, b_hh, w_hr):
    """Gates r, z, n in torch's order: n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
    h' = (1 - z) n + z h."""
    h = state[0]
    x_r, x_z, x_n = projected.chunk(3, -1)
    h_r, h_z, h_n = linalg.linear(h, w_hh, b_hh).chunk(3, -1)
    r, z = elementwise.sigmoid(x_r + h_r), elementwise.sigmoid(x_z + h_z)
    n = elementwise.tanh(x_n + r * h_n)
    return (n + z * (h - n),)


STEPS = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN_TANH": _elman_step("tanh"),
         "RNN_RELU": _elman_step("relu")}


def project(mode, x, w_ih, b_ih, b_hh):
    """x @ w_ih.T + b_ih (+ b_hh but for GRU), for every step of x at once."""
    out = linalg.linear(x, w_ih, b_ih)
    return out if b_hh is None or mode == "GRU" else out + b_hh


def composed(mode, projected, state, w_hh, b_hh, w_hr, reverse, batch_sizes):
    """(output (rows, width), final state) of the steps written with ops: `projected` (rows,
    gates) holds the steps' rows in time order, batch_sizes[t] of them for step t (a packed
    batch's shrink), `state` is (h0,) or (h0, c0); each step runs on the sequences running then
    (reversed for the backward direction)."""
    step = STEPS[mode]
    pieces = shape.split(projected, list(batch_sizes), 0)
    outputs = [None] * len(pieces)
    if reverse:
        # the shortest sequences start last: each joins with its own initial state
        initial, state = state, tuple(s[:pieces[-1].size(0)] for s in state)
        for t in reversed(range(len(pieces))):
            size, running = pieces[t].size(0), state[0].size(0)
            if size > running:
                state = tuple(shape.cat((s, s0[running:size]))
                              for s, s0 in zip(state, initial, strict=True))
            state = step(pieces[t], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
    else:
        finished = []  # the last states of the sequences that ended, last rows first
        for t, piece in enumerate(pieces):
            size = piece.size(0)
            if size < state[0].size(0):
                finished.append(tuple(s[size:] for s in state))
                state = tuple(s[:size] for s in state)
            state = step(piece, state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        if finished:
            state = tuple(shape.cat(parts) for parts in zip(state, *reversed(finished),
                                                             strict=True))
    return shape.cat(outputs), state


def fused(t):
    """Whether the fused recurrence serves tensor t's device and dtype."""
    kernels = getattr(backend(t._device), "recurrent", None)
    return kernels is not None and kernels.AVAILABLE and \
        t._dtype in (dtypes.float32, dtypes.float64)


def run(mode, projected, state, w_hh, b_hh, w_hr, reverse, batch_sizes=None):
    """(output, final state) of one layer and direction: `projected` (L, N, gates), or a packed
    batch's (rows, gates) with its batch_sizes; `state` (h0,) or (h0, c0), each (N, width)."""
    steps = None
    if batch_sizes is None:
        steps, n = projected.shape[0], projected.shape[1]
        projected, batch_sizes = projected.reshape(steps * n, projected.shape[2]), (n,) * steps
    if fused(projected):
        cx = state[1] if mode == "LSTM" else None
        out, *state = recurrence(projected, state[0], cx, w_hh, b_hh if mode == "GRU" else None,
                                 w_hr, mode, tuple(batch_sizes), reverse, Saved())
    else:
        out, state = composed(mode, projected, state, w_hh, b_hh, w_hr, reverse, batch_sizes)
    return (out if steps is None else out.reshape(steps, n, out.shape[-1])), tuple(state)


# -- the fused op (its rule: autograd/derivatives/recurrent.py) ----------------------------------
class Saved:
    """What a recurrence's forward keeps for its backward: its kernels' buffers (the activated
    gates, the states each step read, ...), by name."""

    __slots__ = ("buffers",)


def _steps(batch_sizes, reverse):
    """(sizes, offsets) of the steps in the order they run: each step's rows, and its first."""
    sizes = np.asarray(batch_sizes, np.int64)
    offsets = np.cumsum(sizes) - sizes
    return (sizes[::-1].copy(), offsets[::-1].copy()) if reverse else (sizes, offsets)


def _none_as(t, rows, cols, like):
    """t's dense buffer, or an array of no rows (or zeros, given `rows`) where t is None."""
    if t is not None:
        return dense(t)
    return np.zeros((rows, cols), like.dtype) if rows else np.empty((0, cols), like.dtype)


def recurrence(projected, hx, cx, w_hh, b_hh, w_hr, mode, batch_sizes, reverse, saved):
    """(output (rows, width), h_n (N, width)[, c_n (N, hidden) for LSTM]): `projected` (rows,
    gates) with every bias but GRU's bias_hh (b_hh, or None), the rows of step t being the
    batch_sizes[t] after those of earlier steps; hx (N, width), cx (LSTM's, else None), w_hr
    (LSTM's projection, or None); `saved` receives what the backward reads."""
    data, device, dtype = dense(projected), projected._device, projected._dtype
    n_h = w_hh.shape[0] // GATES[mode]
    sizes, offsets = _steps(batch_sizes, reverse)
    h = np.array(dense(hx))  # (fresh copies: the kernels write the state in place)
    c = np.array(dense(cx)) if cx is not None else None
    w_hr_data = _none_as(w_hr, 0, n_h, data)
    b_hh_data = dense(b_hh) if b_hh is not None else np.zeros(w_hh.shape[0], data.dtype)
    out, saved.buffers = backend(device).recurrent.forward(
        mode, np.array(data), h, c, dense(w_hh), b_hh_data, w_hr_data, sizes, offsets)
    results = (_wrap(out, dtype, device), _wrap(h, dtype, device))
    return results + ((_wrap(c, dtype, device),) if c is not None else ())


def recurrence_grad(grads, hx, cx, w_hh, b_hh, w_hr, mode, batch_sizes, reverse, saved):
    """The gradients (projected, hx, cx, w_hh, b_hh, w_hr) of a recurrence for its outputs'
    gradients `grads` (each None where none came), in one kernel run over the steps in
    reverse and one product per weight over all steps."""
    buffers, device, dtype = saved.buffers, hx._device, hx._dtype
    g_out, g_h = grads[0], grads[1]
    g_c = grads[2] if len(grads) > 2 else None
    sizes, offsets = _steps(batch_sizes, reverse)
    like = buffers["hprev"]
    width = like.shape[1]
    n_h = w_hh.shape[0] // GATES[mode]
    dout = _none_as(g_out, 0, width, like)
    dh = np.array(dense(g_h)) if g_h is not None else np.zeros(hx._data.shape, like.dtype)
    dc = None
    if cx is not None:
        dc = np.array(dense(g_c)) if g_c is not None else np.zeros(cx._data.shape, like.dtype)
    w_hr_data = _none_as(w_hr, 0, n_h, like)
    d_proj, d_hidden, d_hp = backend(device).recurrent.backward(
        mode, buffers, dout, dh, dc, dense(w_hh), w_hr_data, sizes, offsets)
    wrap = lambda a: _wrap(a, dtype, device)  # noqa: E731
    d_hidden = wrap(d_hidden)
    d_w_hh = linalg.matmul(d_hidden.mT, wrap(buffers["hprev"]))
    d_b_hh = d_hidden.sum(0) if b_hh is not None else None
    d_w_hr = linalg.matmul(wrap(d_hp).mT, wrap(buffers["hraw"])) if d_hp is not None else None
    return wrap(d_proj), wrap(dh), None if dc is None else wrap(dc), d_w_hh, d_b_hh, d_w_hr
