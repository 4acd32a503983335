"""softmax, log_softmax and logsumexp along either axis of a matrix. NumPy has none of them:
its rows time the composition users write (max, subtract, exp, sum, divide), whose temporaries
`peakmem_softmax` shows next to the fused kernels."""
import numpy as np

from .common import DEVICES, FLOATS, LIBRARIES, SQUARE, Peer, warm


def _softmax(a, axis):
    e = np.exp(a - a.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _log_softmax(a, axis):
    shifted = a - a.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


def _logsumexp(a, axis):
    m = a.max(axis, keepdims=True)
    return (np.log(np.exp(a - m).sum(axis, keepdims=True)) + m).squeeze(axis)


NUMPY = {"softmax": _softmax, "log_softmax": _log_softmax, "logsumexp": _logsumexp}


class Softmax:
    params = (LIBRARIES, DEVICES, FLOATS, (0, -1))
    param_names = ("library", "device", "dtype", "dim")

    def setup(self, library, device, dtype, dim):
        peer = Peer(library, device)
        self.sync, self.dim = peer.sync, dim
        self.ops = NUMPY if library == "numpy" else {op: getattr(peer.mod, op) for op in NUMPY}
        self.m = peer.random(SQUARE, dtype)
        warm(self)

    def time_softmax(self, *_):
        self.sync(self.ops["softmax"](self.m, self.dim))

    def time_log_softmax(self, *_):
        self.sync(self.ops["log_softmax"](self.m, self.dim))

    def time_logsumexp(self, *_):
        self.sync(self.ops["logsumexp"](self.m, self.dim))


class SoftmaxMemory:
    """Peak resident memory of one float32 softmax over rows. asv's peakmem is the whole
    process's peak, setup included: setup warms the kernels on a small matrix."""
    params = (LIBRARIES,)
    param_names = ("library",)

    def setup(self, library):
        peer = Peer(library, "cpu")
        self.softmax = _softmax if library == "numpy" else peer.mod.softmax
        self.m = peer.random((8, 8), "float32")
        warm(self, "peakmem_")
        self.m = peer.random(SQUARE, "float32")

    def peakmem_softmax(self, *_):
        self.softmax(self.m, -1)
