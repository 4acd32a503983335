"""jt.compile's fusion: elementwise chains written with built-in ops (the tanh GELU, bias +
GELU + residual, RMSNorm, an Adam update), eager and compiled, forward and forward + backward,
next to torch's eager mode on the same code (torch.compile needs a C++ toolchain: not
measured)."""
from jitensor.bench.compile import adam, bias_gelu_residual, gelu, rms_norm

from .common import DEVICES, LIBRARIES, Peer, warm

ROWS, WIDTH = 2048, 384


class Fusion:
    params = (tuple(lib for lib in LIBRARIES if lib != "numpy"), DEVICES, ("eager", "compiled"))
    param_names = ("library", "device", "mode")

    def setup(self, library, device, mode):
        peer = Peer(library, device)
        if mode == "compiled" and library != "jitensor":
            raise NotImplementedError("torch.compile needs a C++ toolchain")
        compile = peer.mod.compile if mode == "compiled" else (lambda fn: fn)
        self.sync = peer.sync
        self.gelu, self.residual, self.adam, self.rms_norm = (
            compile(make(peer.mod)) for make in (gelu, bias_gelu_residual, adam, rms_norm))
        self.h, self.r = (peer.random((ROWS, WIDTH), "float32", s) for s in (0, 1))
        self.b = peer.random((WIDTH,), "float32", 2)
        self.hg, self.bg = (t.clone().requires_grad_() for t in (self.h, self.b))
        self.p, self.g, self.m = (peer.random((ROWS * WIDTH,), "float32", s) for s in (3, 4, 5))
        self.v = self.m.abs()
        warm(self)

    def time_gelu(self, *_):
        self.sync(self.gelu(self.h))

    def time_gelu_backward(self, *_):
        self.gelu(self.hg).sum().backward()
        self.sync(self.hg.grad)

    def time_bias_gelu_residual(self, *_):
        self.sync(self.residual(self.h, self.b, self.r))

    def time_bias_gelu_residual_backward(self, *_):
        self.residual(self.hg, self.bg, self.r).sum().backward()
        self.sync(self.bg.grad)

    def time_rms_norm(self, *_):
        self.sync(self.rms_norm(self.h, self.b))

    def time_rms_norm_backward(self, *_):
        self.rms_norm(self.hg, self.bg).sum().backward()
        self.sync(self.bg.grad)

    def time_adam_update(self, *_):
        self.sync(self.adam(self.p, self.g, self.m, self.v)[0])
