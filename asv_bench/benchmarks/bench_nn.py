"""Training: one step (forward, backward, optimizer) of a 784-128-10 MLP, a small CNN, a tiny
GPT, recurrent layers and models from public programs (nanoGPT, VAE, DCGAN, makemore, an LSTM
language model); cross-entropy, the pointwise losses, convolution and batch norm, embedding,
activations, nn.Linear, LayerNorm and RMSNorm, and autograd's bookkeeping on tiny tensors (NumPy
has no autograd: its combinations are skipped)."""
import contextlib

import numpy as np

from .common import DEVICES, SMOKE, Peer, warm

LIBRARIES = ("jitensor", "torch")


class TrainStep:
    params = (LIBRARIES, DEVICES, (1, 64, 512), ("sgd", "adam"))
    param_names = ("library", "device", "batch", "optimizer")

    def setup(self, library, device, batch, optimizer):
        peer = Peer(library, device)
        lib, nn = peer.mod, peer.mod.nn
        lib.manual_seed(0)
        self.sync, self.nn = peer.sync, nn
        self.model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
        make = lib.optim.SGD if optimizer == "sgd" else lib.optim.Adam
        self.opt = make(self.model.parameters(), lr=1e-3)
        self.x = peer.random((batch, 784), "float32")
        self.y = peer.asarray(np.random.default_rng(2).integers(0, 10, batch))
        warm(self)

    def time_step(self, *_):
        self.sync(self.step())

    def step(self):
        self.opt.zero_grad()
        loss = self.nn.functional.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        return loss


class CNNTrainStep:
    """One step of a small CNN (conv-batch_norm-relu twice, pooling, a linear head) with SGD
    on 32 RGB images of 32 x 32 (jitensor.bench.autograd.cnn_step)."""
    params = (LIBRARIES, DEVICES)
    param_names = ("library", "device")

    def setup(self, library, device):
        from jitensor.bench.autograd import cnn_step
        peer = Peer(library, device)
        self.sync, self.step = peer.sync, cnn_step(peer.mod, device=device)
        warm(self)

    def time_step(self, *_):
        self.sync(self.step())


class GPTTrainStep:
    """One step of a tiny GPT (2 layers, 64 wide, 8 sequences of 32 tokens, AdamW, clipping;
    jitensor.bench.compile_report.gpt_step) on the CPU at all threads, alone and with another
    process spinning on one core: a thread pool that waits for its thread on the busy core
    stalls every parallel op."""
    # (CI's smoke run takes the idle machine only: a neighbour would spin a core of its two,
    # which the other half of the run is using; tests/test_bench.py runs busy_neighbour)
    params = (LIBRARIES, ("idle",) if SMOKE else ("idle", "busy neighbour"))
    param_names = ("library", "machine")

    def setup(self, library, machine):
        from jitensor.bench import busy_neighbour
        from jitensor.bench.compile_report import gpt_step
        self.step = gpt_step(Peer(library, "cpu").mod)
        self.neighbour = busy_neighbour() if machine != "idle" else contextlib.nullcontext()
        self.neighbour.__enter__()
        warm(self)

    def teardown(self, *_):
        self.neighbour.__exit__(None, None, None)

    def time_step(self, *_):
        self.step()


class ModelStep:
    """One training step of models from public programs on the CPU: nanoGPT's 6-layer character
    model, the MNIST VAE, a 32x32 DCGAN, makemore's MLP, the word language model's LSTM and
    the GCN's sparse products (jitensor.bench.autograd's *_step)."""
    params = (LIBRARIES, ("gpt6", "vae", "dcgan", "char_mlp", "lstm_lm", "gcn"))
    param_names = ("library", "model")

    def setup(self, library, model):
        from jitensor.bench import autograd
        self.step = getattr(autograd, model + "_step")(Peer(library, "cpu").mod)
        warm(self)

    def time_step(self, *_):
        self.step()


class RNNStep:
    """One forward and backward of a 2-layer recurrent layer over float32 sequences of 35 steps
    and a batch of 20 (word_language_model's defaults at 200 features; then hidden 512):
    jitensor.bench.recurrent.rnn_step."""
    params = (LIBRARIES, DEVICES, ("LSTM", "GRU", "RNN_TANH"), (200, 512))
    param_names = ("library", "device", "mode", "hidden")

    def setup(self, library, device, mode, hidden):
        from jitensor.bench.recurrent import rnn_step
        peer = Peer(library, device)
        self.sync, self.step = peer.sync, rnn_step(peer.mod, mode, hidden, device=device)
        warm(self)

    def time_step(self, *_):
        self.sync(self.step())


class Bookkeeping:
    """x * y on 2x3 tensors with and without inputs that require grad, and a tiny backward."""
    params = (LIBRARIES, DEVICES)
    param_names = ("library", "device")

    def setup(self, library, device):
        peer = Peer(library, device)
        self.sync = peer.sync
        self.x, self.y = peer.random((2, 3), "float32"), peer.random((2, 3), "float32", seed=1)
        self.gx = self.x.clone().requires_grad_()
        self.gy = self.y.clone().requires_grad_()
        warm(self)

    def time_mul(self, *_):
        self.sync(self.x * self.y)

    def time_mul_grad(self, *_):
        self.sync(self.gx * self.gy)

    def time_backward(self, *_):
        self.sync((self.gx * self.gy).sum().backward())


class Activation:
    """nn.functional's pointwise activations on 2^20 float32 elements: forward, and forward
    plus backward of the sum."""
    params = (LIBRARIES, DEVICES, ("gelu", "silu", "softplus", "leaky_relu", "elu"))
    param_names = ("library", "device", "activation")

    def setup(self, library, device, activation):
        peer = Peer(library, device)
        self.sync, self.fn = peer.sync, getattr(peer.mod.nn.functional, activation)
        self.x = peer.random((1 << 20,), "float32")
        self.gx = self.x.clone().requires_grad_()
        warm(self)

    def time_forward(self, *_):
        self.sync(self.fn(self.x))

    def time_backward(self, *_):
        self.sync(self.fn(self.gx).sum().backward())


class CrossEntropy:
    """F.cross_entropy of float32 scores against class indices: a classifier's batch, many
    classes, and a segmentation map (classes strided by the pixels); forward, and forward plus
    backward."""
    params = (LIBRARIES, DEVICES, ("64x10", "256x1000", "8x21x64x64"))
    param_names = ("library", "device", "shape")

    def setup(self, library, device, shape):
        peer = Peer(library, device)
        self.sync, self.F = peer.sync, peer.mod.nn.functional
        dims = tuple(map(int, shape.split("x")))
        self.x = peer.random(dims, "float32")
        self.gx = self.x.clone().requires_grad_()
        self.y = peer.asarray(np.random.default_rng(1).integers(0, dims[1], dims[:1] + dims[2:]))
        warm(self)

    def time_forward(self, *_):
        self.sync(self.F.cross_entropy(self.x, self.y))

    def time_backward(self, *_):
        self.sync(self.F.cross_entropy(self.gx, self.y).backward())


class PointwiseLoss:
    """The fused pointwise losses (mean-reduced) of 8192x128 float32 predictions; forward, and
    forward plus backward into the input."""
    params = (LIBRARIES, DEVICES, ("smooth_l1_loss", "binary_cross_entropy",
                                   "binary_cross_entropy_with_logits"))
    param_names = ("library", "device", "loss")

    def setup(self, library, device, loss):
        peer = Peer(library, device)
        self.sync, self.fn = peer.sync, getattr(peer.mod.nn.functional, loss)
        self.x = peer.random((8192, 128), "float32")
        if loss == "binary_cross_entropy":
            self.x = self.x.sigmoid()
        self.gx = self.x.clone().requires_grad_()
        self.y = peer.asarray(np.random.default_rng(1).random((8192, 128), np.float32))
        warm(self)

    def time_forward(self, *_):
        self.sync(self.fn(self.x, self.y))

    def time_backward(self, *_):
        self.sync(self.fn(self.gx, self.y).backward())


class _Layer:
    """Times a module on float32 input: forward under no_grad, and forward plus the backward of
    its output's sum (`setup` calls `_ready`)."""

    def _ready(self, peer, layer, shape):
        self.sync, self.lib, self.layer = peer.sync, peer.mod, layer
        self.x = peer.random(shape, "float32")
        self.gx = self.x.clone().requires_grad_()
        warm(self)

    def time_forward(self, *_):
        with self.lib.no_grad():
            self.sync(self.layer(self.x))

    def time_backward(self, *_):
        self.sync(self.layer(self.gx).sum().backward())


class Conv(_Layer):
    """nn.Conv2d (3x3, padding 1) and nn.BatchNorm2d on 32 float32 images of 16 channels,
    32 x 32; forward, and forward plus backward."""
    params = (LIBRARIES, DEVICES, ("Conv2d", "BatchNorm2d"))
    param_names = ("library", "device", "module")

    def setup(self, library, device, module):
        peer = Peer(library, device)
        nn = peer.mod.nn
        layer = nn.Conv2d(16, 32, 3, padding=1) if module == "Conv2d" else nn.BatchNorm2d(16)
        self._ready(peer, layer.to(device), (32, 16, 32, 32))


class Embedding:
    """F.embedding of 32 sequences of 16 tokens in a 10000x64 float32 table; forward, and
    forward plus backward (a table-sized gradient, written once)."""
    params = (LIBRARIES, DEVICES)
    param_names = ("library", "device")

    def setup(self, library, device):
        peer = Peer(library, device)
        self.sync, self.F = peer.sync, peer.mod.nn.functional
        self.w = peer.random((10000, 64), "float32")
        self.gw = self.w.clone().requires_grad_()
        self.idx = peer.asarray(np.random.default_rng(1).integers(0, 10000, (32, 16)))
        warm(self)

    def time_forward(self, *_):
        self.sync(self.F.embedding(self.idx, self.w))

    def time_backward(self, *_):
        self.sync(self.F.embedding(self.idx, self.gw).sum().backward())


class Linear(_Layer):
    """nn.Linear on float32 rows: 128 -> 128 on 64 rows, and a small GPT's qkv projection (8 x
    32 tokens, 64 -> 192); forward, and forward plus backward into the input, weight and bias."""
    params = (LIBRARIES, DEVICES, ("64x128-128", "256x64-192"))
    param_names = ("library", "device", "shape")

    def setup(self, library, device, shape):
        peer = Peer(library, device)
        rows, sizes = shape.split("x")
        n_in, n_out = map(int, sizes.split("-"))
        self._ready(peer, peer.mod.nn.Linear(n_in, n_out).to(device), (int(rows), n_in))


class Norm(_Layer):
    """nn.LayerNorm and nn.RMSNorm over the last dim of float32 activations: a small batch and
    16 sequences of 512 tokens of 768 features; forward, and forward plus backward into the
    input, weight and bias."""
    params = (LIBRARIES, DEVICES, ("LayerNorm", "RMSNorm"), ("64x512", "8192x768"))
    param_names = ("library", "device", "module", "shape")

    def setup(self, library, device, module, shape):
        peer = Peer(library, device)
        dims = tuple(map(int, shape.split("x")))
        self._ready(peer, getattr(peer.mod.nn, module)(dims[-1]).to(device), dims)
