"""The pointwise part of one time step of nn.RNN/LSTM/GRU, forward and backward, per element
of the hidden state: the gate nonlinearities and the state update, in torch's gate order.

Both devices' recurrent kernels call these, with the gates' pre-activations (the input
projection plus the hidden product) already summed. The forward formulas are the composed
path's (nn/modules/rnn.py), so the two paths compute the same thing; each backward takes
what the forward saved: the activated gates and the states."""
from . import libm
from .elementwise import relu as _relu
from .elementwise import sigmoid
from .reduction import cast_like


@libm.inline_on_cpu
def lstm(i, f, g, o, c):
    """(i, f, g, o activated, c', h') from the pre-activations of gates i, f, g, o and the
    cell state c: c' = f c + i g, h' = o tanh(c')."""
    ia, fa, ga, oa = sigmoid(i), sigmoid(f), libm.tanh(g), sigmoid(o)
    cn = fa * c + ia * ga
    return ia, fa, ga, oa, cn, oa * libm.tanh(cn)


@libm.inline_on_cpu
def lstm_grad(i, f, g, o, c_prev, c, dh, dc):
    """(d pre-activations of i, f, g, o, d c_prev) from the activated gates, the cell state
    before and after the step, and the gradients of h' (dh) and of c' (dc, from later steps)."""
    one = cast_like(1, i)
    tc = libm.tanh(c)
    dct = dc + dh * o * (one - tc * tc)
    return dct * g * i * (one - i), dct * c_prev * f * (one - f), dct * i * (one - g * g), \
        dh * tc * o * (one - o), dct * f


@libm.inline_on_cpu
def gru(xr, xz, xn, hr, hz, hn, h):
    """(r, z, n, h') from the input's and the hidden state's parts of gates r, z, n (each with
    its bias) and the state h: n = tanh(xn + r hn), h' = (1 - z) n + z h, as n + z (h - n)."""
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = libm.tanh(xn + r * hn)
    return r, z, n, n + z * (h - n)


@libm.inline_on_cpu
def gru_grad(r, z, n, hn, h, dh):
    """(d pre-activation of r, of z, of n's input part, d hn, d h through the update alone)
    from the gates, the hidden part of n (with its bias), the state h before the step and the
    gradient dh of h'. r's and z's pre-activations take the same gradient in both parts."""
    one = cast_like(1, r)
    dn = dh * (one - z) * (one - n * n)
    return dn * hn * r * (one - r), dh * (h - n) * z * (one - z), dn, dn * r, dh * z


@libm.inline_on_cpu
def elman(x, relu):
    """RNN's h' = tanh(x) or relu(x) of the summed pre-activation x."""
    return libm.select(relu, _relu(x), libm.tanh(x))


@libm.inline_on_cpu
def elman_grad(h, dh, relu):
    """The pre-activation's gradient from h' and its gradient dh (relu's: dh where h' > 0)."""
    one = cast_like(1, h)
    return libm.select(relu, libm.select(h > 0, dh, cast_like(0, dh)), dh * (one - h * h))
