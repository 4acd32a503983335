"""FFTs on the CPU: a complex transform of one long row, a batch of short rows, and a real
transform, in complex64/float32 and complex128/float64 (NumPy's fft keeps complex64 as
complex64). jitensor has no CUDA FFT: its CUDA parameter sets skip."""
import numpy as np

from .common import DEVICES, FLOATS, LIBRARIES, Peer, warm

SHAPES = ((1 << 16,), (64, 1024))


class FFT:
    params = (LIBRARIES, DEVICES, FLOATS, SHAPES)
    param_names = ("library", "device", "dtype", "shape")

    def setup(self, library, device, dtype, shape):
        if library == "jitensor" and device == "cuda":
            raise NotImplementedError("jitensor: no CUDA FFT")
        peer = Peer(library, device)
        self.sync, self.fft = peer.sync, peer.mod.fft
        rng = np.random.default_rng(0)
        real = rng.standard_normal(shape, dtype=dtype)
        self.real = peer.asarray(real)
        self.z = peer.asarray(real + 1j * rng.standard_normal(shape, dtype=dtype))
        warm(self)

    def time_fft(self, *_):
        self.sync(self.fft.fft(self.z))

    def time_rfft(self, *_):
        self.sync(self.fft.rfft(self.real))
