"""Indexing: views from basic slicing (latency only), and the copying kinds — integer arrays,
boolean masks, masked assignment — on a vector and on the rows of a matrix."""
import numpy as np

from .common import DEVICES, LIBRARIES, SIZES, SQUARE, Peer, warm


class Vector:
    params = (LIBRARIES, DEVICES, SIZES)
    param_names = ("library", "device", "size")

    def setup(self, library, device, size):
        peer = Peer(library, device)
        self.sync = peer.sync
        self.x = peer.random(size, "float32")
        rng = np.random.default_rng(1)
        self.idx = peer.asarray(rng.integers(0, size, size // 10))   # a random 10% gather
        self.mask = self.x > 0                                       # about half the elements
        warm(self)

    def time_slice_view(self, *_):
        self.x[1::2]   # a view: no kernel, nothing to synchronize

    def time_gather(self, *_):
        self.sync(self.x[self.idx])

    def time_mask_select(self, *_):
        self.sync(self.x[self.mask])

    def time_mask_assign(self, *_):
        self.x[self.mask] = 0.0
        self.sync(self.x)


class Rows:
    params = (LIBRARIES, DEVICES)
    param_names = ("library", "device")

    def setup(self, library, device):
        peer = Peer(library, device)
        self.sync = peer.sync
        self.m = peer.random(SQUARE, "float32")
        self.rows = peer.asarray(np.random.default_rng(1).integers(0, SQUARE[0], 512))
        warm(self)

    def time_gather_rows(self, *_):
        self.sync(self.m[self.rows])

    def time_slice_view(self, *_):
        self.m[1:, ::2]
