"""empty versus zeros, ones and full, fresh and `*_like`.

`Create` times the call alone, as users write it. `FirstTouch` (CPU) adds one write per 4 KiB
page: np.zeros returns calloc'ed pages that are zeroed only when first written, so the call
alone flatters it; with the touch every routine pays for the memory it hands out. `Resident`
shows the same as peak resident memory: an untouched `empty` or calloc'ed array costs none."""
from .common import DEVICES, DTYPES, LIBRARIES, SIZES, Peer, touch, warm


class Create:
    params = (LIBRARIES, DEVICES, SIZES, DTYPES)
    param_names = ("library", "device", "size", "dtype")

    def setup(self, library, device, size, dtype):
        peer = Peer(library, device)
        self.mod, self.sync, self.kw = peer.mod, peer.sync, peer.kw(dtype)
        self.shape = (size,)
        self.source = self.mod.zeros(self.shape, **self.kw)
        warm(self)

    def time_empty(self, *_):
        self.sync(self.mod.empty(self.shape, **self.kw))

    def time_zeros(self, *_):
        self.sync(self.mod.zeros(self.shape, **self.kw))

    def time_ones(self, *_):
        self.sync(self.mod.ones(self.shape, **self.kw))

    def time_full(self, *_):
        self.sync(self.mod.full(self.shape, 7, **self.kw))

    def time_empty_like(self, *_):
        self.sync(self.mod.empty_like(self.source))

    def time_zeros_like(self, *_):
        self.sync(self.mod.zeros_like(self.source))

    def time_ones_like(self, *_):
        self.sync(self.mod.ones_like(self.source))

    def time_full_like(self, *_):
        self.sync(self.mod.full_like(self.source, 7))


class FirstTouch:
    params = (LIBRARIES, SIZES)
    param_names = ("library", "size")

    def setup(self, library, size):
        peer = Peer(library, "cpu")
        self.mod, self.kw = peer.mod, peer.kw("float32")
        self.shape = (size,)
        self.source = self.mod.zeros(self.shape, **self.kw)
        warm(self)

    def time_empty_touched(self, *_):
        touch(self.mod.empty(self.shape, **self.kw))

    def time_zeros_touched(self, *_):
        touch(self.mod.zeros(self.shape, **self.kw))

    def time_ones_touched(self, *_):
        touch(self.mod.ones(self.shape, **self.kw))

    def time_full_touched(self, *_):
        touch(self.mod.full(self.shape, 7, **self.kw))

    def time_empty_like_touched(self, *_):
        touch(self.mod.empty_like(self.source))

    def time_zeros_like_touched(self, *_):
        touch(self.mod.zeros_like(self.source))


class Resident:
    """asv's peakmem is the whole process's peak, setup included: setup warms the kernels on a
    small array, then the method makes one 40 MB array."""
    params = (LIBRARIES,)
    param_names = ("library",)

    def setup(self, library):
        peer = Peer(library, "cpu")
        self.mod, self.kw = peer.mod, peer.kw("float32")
        self.shape = (1 << 17,)   # past jitensor's parallel-fill threshold
        warm(self, "peakmem_")
        self.shape = (SIZES[-1],)

    def peakmem_empty(self, *_):
        self.mod.empty(self.shape, **self.kw)

    def peakmem_zeros(self, *_):
        self.mod.zeros(self.shape, **self.kw)

    def peakmem_empty_touched(self, *_):
        touch(self.mod.empty(self.shape, **self.kw))

    def peakmem_zeros_touched(self, *_):
        touch(self.mod.zeros(self.shape, **self.kw))
