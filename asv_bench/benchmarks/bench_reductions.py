"""Reductions: whole-array at three sizes and dtypes, and along each axis of a matrix."""
from .common import DEVICES, DTYPES, FLOATS, LIBRARIES, SIZES, SQUARE, Peer, warm


class Whole:
    params = (LIBRARIES, DEVICES, SIZES, DTYPES)
    param_names = ("library", "device", "size", "dtype")

    def setup(self, library, device, size, dtype):
        peer = Peer(library, device)
        self.mod, self.sync = peer.mod, peer.sync
        self.x = peer.random(size, dtype)
        warm(self)

    def time_sum(self, *_):
        self.sync(self.mod.sum(self.x))

    def time_amax(self, *_):
        self.sync(self.mod.amax(self.x))

    def time_argmax(self, *_):
        self.sync(self.mod.argmax(self.x))


class Axis:
    params = (LIBRARIES, DEVICES, FLOATS, (0, 1))
    param_names = ("library", "device", "dtype", "axis")

    def setup(self, library, device, dtype, axis):
        peer = Peer(library, device)
        self.mod, self.sync, self.axis = peer.mod, peer.sync, axis
        self.m = peer.random(SQUARE, dtype)
        warm(self)

    def time_sum(self, *_):
        self.sync(self.mod.sum(self.m, self.axis))

    def time_mean(self, *_):
        self.sync(self.mod.mean(self.m, self.axis))

    def time_amax(self, *_):
        self.sync(self.mod.amax(self.m, self.axis))

    def time_argmax(self, *_):
        self.sync(self.mod.argmax(self.m, self.axis))


class ShortRows:
    """Many short rows reduced along the last dim (x.sum(-1) of activations, per-sample losses):
    per-row overhead, not bandwidth."""
    params = (LIBRARIES, DEVICES, FLOATS, (8, 64))
    param_names = ("library", "device", "dtype", "row")

    def setup(self, library, device, dtype, row):
        peer = Peer(library, device)
        self.mod, self.sync = peer.mod, peer.sync
        self.m = peer.random(((1 << 18) // row, row), dtype)
        warm(self)

    def time_sum(self, *_):
        self.sync(self.mod.sum(self.m, -1))

    def time_amax(self, *_):
        self.sync(self.mod.amax(self.m, -1))

    def time_argmax(self, *_):
        self.sync(self.mod.argmax(self.m, -1))
