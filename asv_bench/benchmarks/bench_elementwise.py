"""Elementwise ops: contiguous operands at three sizes, then broadcast and strided operands."""
from .common import DEVICES, FLOATS, LIBRARIES, SIZES, SQUARE, Peer, warm


class Contiguous:
    params = (LIBRARIES, DEVICES, SIZES, FLOATS)
    param_names = ("library", "device", "size", "dtype")

    def setup(self, library, device, size, dtype):
        peer = Peer(library, device)
        self.mod, self.sync = peer.mod, peer.sync
        self.x, self.y = peer.random(size, dtype, seed=0), peer.random(size, dtype, seed=1)
        self.out = peer.mod.empty_like(self.x)
        warm(self)

    def time_add(self, *_):
        self.sync(self.x + self.y)

    def time_add_out(self, *_):
        self.sync(self.mod.add(self.x, self.y, out=self.out))

    def time_mul_scalar(self, *_):
        self.sync(self.x * 2.5)

    def time_exp(self, *_):
        self.sync(self.mod.exp(self.x))

    def time_sin(self, *_):
        self.sync(self.mod.sin(self.x))


class Layouts:
    """A float32 matrix plus a broadcast row, a broadcast column and its own transpose."""
    params = (LIBRARIES, DEVICES)
    param_names = ("library", "device")

    def setup(self, library, device):
        peer = Peer(library, device)
        self.sync = peer.sync
        self.m = peer.random(SQUARE, "float32")
        self.row = peer.random(SQUARE[1:], "float32", seed=1)
        self.col = peer.random((SQUARE[0], 1), "float32", seed=2)
        warm(self)

    def time_add_row(self, *_):
        self.sync(self.m + self.row)

    def time_add_column(self, *_):
        self.sync(self.m + self.col)

    def time_add_transposed(self, *_):
        self.sync(self.m + self.m.T)
