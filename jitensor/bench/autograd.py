"""The autograd report: jitensor against torch on the CPU.

``python -m jitensor.bench.autograd [--quick]``: the bookkeeping autograd adds to an op on 2x3
tensors (the op with inputs that require grad, minus the same op without), a tiny forward and
backward, nn.functional activations of 2^20 elements with and without their backward,
cross-entropy, an embedding lookup, nn.Linear, LayerNorm and RMSNorm with and without their
backward, forward-mode AD, per-sample gradients (vmap), a Jacobian and a Hessian, and training
steps (forward, backward, optimizer): a 784-128-10 MLP at batch 64, a small CNN, a tiny GPT,
nanoGPT's 6-layer character model, a VAE, a DCGAN, makemore's MLP, an LSTM language model,
a graph convolutional network on sparse matrices, and the tiny GPT again with another process
spinning on one core (a busy machine)."""
import contextlib
import sys

from . import busy_neighbour, compare, optional, per_call, print_rows, timeit
from .compile_report import gpt_step


def _tiny(jt, torch):
    """Rows for 2x3 float32 tensors: x * y without and with grad, their difference, and
    (x * y).sum().backward()."""
    def fns(lib):
        x, y = lib.ones(2, 3), lib.ones(2, 3)
        gx, gy = lib.ones(2, 3, requires_grad=True), lib.ones(2, 3, requires_grad=True)

        def step():
            (gx * gy).sum().backward()
        return lambda: x * y, lambda: gx * gy, step

    peers = {"jitensor": fns(jt)}
    if torch is not None:
        peers["torch"] = fns(torch)
    rows = {}
    for peer, (plain, graded, step) in peers.items():
        t0, t1, t2 = (per_call(f, number=5_000) for f in (plain, graded, step))
        for op, t in (("x * y, no grad", t0), ("x * y, grad", t1),
                      ("autograd bookkeeping", t1 - t0), ("(x*y).sum().backward()", t2)):
            rows.setdefault(op, {"op": op, "shape": (2, 3)})[peer] = t
    return list(rows.values())


def classifier_step(lib, model, opt, x, y):
    """One step of `opt` on `model`'s cross-entropy for the batch (x, y); returns the loss."""
    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _mlp(lib, batch=64, sizes=(784, 128, 10)):
    """One training step of a 2-layer MLP with Adam and cross-entropy, for jt or torch."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(), nn.Linear(sizes[1], sizes[2]))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.randn(batch, sizes[0])
    y = lib.randint(0, sizes[2], (batch,))
    return classifier_step(lib, model, opt, x, y)


def cnn_step(lib, batch=32, device="cpu"):
    """One training step of a small CNN (two conv-batch_norm-relu blocks, max pooling between,
    global average pooling, a linear head) with SGD and momentum on 32x32 RGB images; returns
    the loss (asv_bench's TrainStep times it too)."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(32, 10)).to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(batch, 3, 32, 32, device=device)
    y = lib.randint(0, 10, (batch,), device=device)
    return classifier_step(lib, model, opt, x, y)


def vae_step(lib, batch=128):
    """One training step of pytorch/examples' MNIST VAE (784-400-20 encoder, 20-400-784 decoder,
    summed binary cross-entropy plus the KL term) with Adam."""
    lib.manual_seed(0)
    nn, F = lib.nn, lib.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc21, self.fc22 = nn.Linear(784, 400), nn.Linear(400, 20), \
                nn.Linear(400, 20)
            self.fc3, self.fc4 = nn.Linear(20, 400), nn.Linear(400, 784)

        def forward(self, x):
            h = F.relu(self.fc1(x))
            mu, logvar = self.fc21(h), self.fc22(h)
            z = mu + lib.randn_like(mu) * lib.exp(0.5 * logvar)
            return lib.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar
    model = VAE()
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.rand(batch, 784)

    def step():
        opt.zero_grad()
        recon, mu, logvar = model(x)
        loss = F.binary_cross_entropy(recon, x, reduction="sum") \
            - 0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss.backward()
        opt.step()
        return loss
    return step


def dcgan_step(lib, batch=16, nz=100, width=32):
    """One step of pytorch/examples' DCGAN at 32x32 images: the discriminator on real and on
    generated images, then the generator (transposed convolutions, batch norm, ReLU and leaky
    ReLU in place, BCE, Adam)."""
    lib.manual_seed(0)
    nn = lib.nn

    def up(i, o, *geometry):
        return [nn.ConvTranspose2d(i, o, 4, *geometry, bias=False), nn.BatchNorm2d(o),
                nn.ReLU(True)]

    def down(i, o):
        return [nn.Conv2d(i, o, 4, 2, 1, bias=False), nn.BatchNorm2d(o), nn.LeakyReLU(0.2, True)]
    w = width
    g = nn.Sequential(*up(nz, w * 4, 1, 0), *up(w * 4, w * 2, 2, 1), *up(w * 2, w, 2, 1),
                      nn.ConvTranspose2d(w, 3, 4, 2, 1, bias=False), nn.Tanh())
    d = nn.Sequential(nn.Conv2d(3, w, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
                      *down(w, w * 2), *down(w * 2, w * 4),
                      nn.Conv2d(w * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    opt_g, opt_d = (lib.optim.Adam(m.parameters(), lr=2e-4, betas=(0.5, 0.999)) for m in (g, d))
    real, noise = lib.rand(batch, 3, 32, 32) * 2 - 1, lib.randn(batch, nz, 1, 1)
    ones, zeros, criterion = lib.ones(batch), lib.zeros(batch), nn.BCELoss()

    def step():
        d.zero_grad()
        criterion(d(real).view(-1), ones).backward()
        fake = g(noise)
        criterion(d(fake.detach()).view(-1), zeros).backward()
        opt_d.step()
        g.zero_grad()
        loss = criterion(d(fake).view(-1), ones)
        loss.backward()
        opt_g.step()
        return loss
    return step


def char_mlp_step(lib, batch=32, block=16, vocab=27, n_embd=64, hidden=64):
    """One training step of makemore's MLP (the embeddings of `block` characters, concatenated,
    a tanh layer, the next character's logits) with AdamW, at makemore's default sizes."""
    lib.manual_seed(0)
    nn = lib.nn
    wte = nn.Embedding(vocab + 1, n_embd)
    mlp = nn.Sequential(nn.Linear(block * n_embd, hidden), nn.Tanh(), nn.Linear(hidden, vocab))
    params = list(wte.parameters()) + list(mlp.parameters())
    opt = lib.optim.AdamW(params, lr=5e-4, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    x, y = lib.randint(0, vocab, (batch, block)), lib.randint(0, vocab, (batch,))

    def step():
        loss = nn.functional.cross_entropy(mlp(wte(x).view(batch, -1)), y, ignore_index=-1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    return step


def lstm_lm_step(lib, vocab=10_000, size=200, layers=2, bptt=35, batch=20, clip=0.25, lr=20.0):
    """One training step of pytorch/examples' word language model (an embedding, a 2-layer
    LSTM, a linear decoder over the vocabulary) at its default sizes and a 10,000-word
    vocabulary, with its own update: clipping, then p -= lr * grad for each parameter."""
    lib.manual_seed(0)
    nn = lib.nn
    encoder, rnn = nn.Embedding(vocab, size), nn.LSTM(size, size, layers)
    decoder = nn.Linear(size, vocab)
    params = [p for m in (encoder, rnn, decoder) for p in m.parameters()]
    x, y = lib.randint(0, vocab, (bptt, batch)), lib.randint(0, vocab, (bptt, batch))
    hidden = (lib.zeros(layers, batch, size), lib.zeros(layers, batch, size))

    def step():
        for p in params:
            p.grad = None
        output, _ = rnn(encoder(x), hidden)
        loss = nn.functional.cross_entropy(decoder(output).view(-1, vocab), y.view(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(params, clip)
        for p in params:
            p.data.add_(p.grad, alpha=-lr)
        return loss
    return step


def gcn_step(lib, nodes=2708, words=1433, links=10556, hidden=16, classes=7):
    """One training step of pytorch/examples' GCN (two graph convolutions: sparse features @
    W, then the normalised sparse adjacency @ that) with Adam, on a random graph of Cora's
    sizes: 1.3% of the word features set, `links` links plus self-loops."""
    import numpy as np
    rng = np.random.default_rng(0)
    f_idx = np.stack([rng.integers(0, nodes, 49216), rng.integers(0, words, 49216)])
    ends = rng.integers(0, nodes, (2, links))
    a_idx = np.concatenate([ends, ends[::-1], np.tile(np.arange(nodes), (2, 1))], 1)
    degree = np.bincount(a_idx[0], minlength=nodes).astype(np.float32)
    norm = 1 / np.sqrt(degree[a_idx[0]] * degree[a_idx[1]])  # D^-1/2 A D^-1/2
    features = lib.sparse_coo_tensor(f_idx, np.ones(f_idx.shape[1], np.float32),
                                      (nodes, words)).coalesce()
    adj = lib.sparse_coo_tensor(a_idx, norm, (nodes, nodes)).coalesce()
    y = lib.tensor(rng.integers(0, classes, nodes))
    lib.manual_seed(0)
    weights = [lib.nn.Parameter(lib.randn(i, o) * 0.1) for i, o in ((words, hidden),
                                                                      (hidden, classes))]
    opt = lib.optim.Adam(weights, lr=0.01, weight_decay=5e-4)

    def step():
        opt.zero_grad()
        x = lib.relu(lib.spmm(adj, lib.mm(features, weights[0])))
        out = lib.nn.functional.log_softmax(lib.spmm(adj, lib.mm(x, weights[1])), 1)
        loss = lib.nn.functional.nll_loss(out, y)
        loss.backward()
        opt.step()
        return loss
    return step


def gpt6_step(lib):
    """One training step of nanoGPT's character-level configuration (6 layers, 384 wide, 6
    heads, 256 tokens of context) on 2 sequences."""
    return gpt_step(lib, n_layer=6, n_embd=384, n_head=6, block=256, batch=2)


def _libs(jt, torch):
    return {"jitensor": jt, "torch": torch} if torch is not None else {"jitensor": jt}


def _with_backward(op, shape, libs, make, quick):
    """Rows for `op` alone and with its backward: make(lib) -> (forward, forward + backward)."""
    forward, both = {}, {}
    for peer, lib in libs.items():
        forward[peer], both[peer] = make(lib)
    budget = 0.05 if quick else 0.2
    return [{"op": op, "shape": shape, **compare(forward, budget=budget)},
            {"op": op + " + bwd", "shape": shape, **compare(both, budget=budget)}]


def _activations(jt, torch, quick, n=1 << 20):
    """Rows for nn.functional activations of n float32 elements: forward alone, and forward
    plus backward of its sum (one fused kernel each way)."""
    import numpy as np
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    libs = _libs(jt, torch)
    rows = []
    for name, kwargs in (("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}),
                         ("softplus", {}), ("leaky_relu", {}), ("elu", {})):
        def make(lib, name=name, kwargs=kwargs):
            fn, plain = getattr(lib.nn.functional, name), lib.tensor(x)
            grad = lib.tensor(x, requires_grad=True)
            return lambda: fn(plain, **kwargs), lambda: fn(grad, **kwargs).sum().backward()
        rows += _with_backward("F." + name + (" tanh" if kwargs else ""), (n,), libs, make,
                               quick)
    return rows


def _cross_entropy(jt, torch, quick):
    """Rows for F.cross_entropy of float32 scores against class indices (a classifier's batch,
    many classes, a segmentation map): forward alone, and forward plus backward."""
    import numpy as np
    rng = np.random.default_rng(0)
    rows = []
    for shape in ((64, 10), (256, 1000), (8, 21, 64, 64)):
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.integers(0, shape[1], shape[:1] + shape[2:])

        def make(lib, x=x, y=y):
            fn, target, plain = lib.nn.functional.cross_entropy, lib.tensor(y), lib.tensor(x)
            grad = lib.tensor(x, requires_grad=True)
            return lambda: fn(plain, target), lambda: fn(grad, target).backward()
        rows += _with_backward("F.cross_entropy", shape, _libs(jt, torch), make, quick)
    return rows


def _pointwise_losses(jt, torch, quick, shape=(8192, 128)):
    """Rows for the fused pointwise losses (mean-reduced) of float32 predictions: forward
    alone, and forward plus backward into the input."""
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.random(shape).astype(np.float32)
    p = 1 / (1 + np.exp(-x))
    rows = []
    for name, inputs in (("smooth_l1_loss", x), ("binary_cross_entropy", p),
                         ("binary_cross_entropy_with_logits", x)):
        def make(lib, name=name, inputs=inputs):
            fn, plain, target = getattr(lib.nn.functional, name), lib.tensor(inputs), \
                lib.tensor(y)
            grad = lib.tensor(inputs, requires_grad=True)
            return lambda: fn(plain, target), lambda: fn(grad, target).backward()
        rows += _with_backward("F." + name, shape, _libs(jt, torch), make, quick)
    return rows


def _module_rows(op, shape, x, build, libs, quick):
    """Rows for the module build(lib) on the array x: forward under no_grad, and forward plus
    the backward of its sum."""
    def make(lib):
        module = build(lib)
        plain, grad = lib.tensor(x), lib.tensor(x, requires_grad=True)

        def forward():
            with lib.no_grad():
                return module(plain)
        return forward, lambda: module(grad).sum().backward()
    return _with_backward(op, shape, libs, make, quick)


def _linear(jt, torch, quick):
    """Rows for nn.Linear on float32 rows, forward and forward plus backward: 128 -> 128 on 64
    rows, and the small GPT's qkv projection (its 8 x 32 tokens, 64 -> 192)."""
    import numpy as np
    rng = np.random.default_rng(0)
    rows = []
    for n, i, o in ((64, 128, 128), (256, 64, 192)):
        x = rng.standard_normal((n, i)).astype(np.float32)
        rows += _module_rows("nn.Linear", f"{n}x{i} -> {o}", x,
                             lambda lib, i=i, o=o: lib.nn.Linear(i, o), _libs(jt, torch), quick)
    return rows


def _conv(jt, torch, quick):
    """Rows for nn.Conv2d (3x3, padding 1) and nn.BatchNorm2d on a small CNN's batch of 32
    float32 images of 16 channels, 32 x 32: forward, and forward plus backward."""
    import numpy as np
    shape = (32, 16, 32, 32)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return _module_rows("nn.Conv2d", shape, x, lambda lib: lib.nn.Conv2d(16, 32, 3, padding=1),
                        _libs(jt, torch), quick) + \
        _module_rows("nn.BatchNorm2d", shape, x, lambda lib: lib.nn.BatchNorm2d(16),
                     _libs(jt, torch), quick)


def _embedding(jt, torch, quick):
    """Rows for an embedding lookup and its backward (a batch of 32 sequences of 16 tokens in a
    table of 10000 x 64): the gradient is the table's size, written once."""
    import numpy as np
    rng = np.random.default_rng(0)
    table, tokens = rng.standard_normal((10000, 64)).astype(np.float32), \
        rng.integers(0, 10000, (32, 16))

    def make(lib):
        fn, idx = lib.nn.functional.embedding, lib.tensor(tokens)
        plain, weight = lib.tensor(table), lib.tensor(table, requires_grad=True)
        return lambda: fn(idx, plain), lambda: fn(idx, weight).sum().backward()
    return _with_backward("F.embedding", "10000x64 [32x16]", _libs(jt, torch), make, quick)


def _attention(jt, torch, quick):
    """Rows for causal F.scaled_dot_product_attention on float32 heads, forward and forward plus
    backward into q, k and v: the small GPT's (8 x 4 heads of 32 x 16) and a 6-layer GPT's (8 x 6
    heads of 256 x 64)."""
    import numpy as np
    rng = np.random.default_rng(0)
    rows = []
    for shape in ((8, 4, 32, 16), (8, 6, 256, 64)):
        arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]

        def make(lib, arrays=arrays):
            fn = lib.nn.functional.scaled_dot_product_attention
            plain = [lib.tensor(a) for a in arrays]
            grad = [lib.tensor(a, requires_grad=True) for a in arrays]
            return (lambda: fn(*plain, is_causal=True),
                    lambda: fn(*grad, is_causal=True).sum().backward())
        rows += _with_backward("F.scaled_dot_product_attention", "x".join(map(str, shape)),
                               _libs(jt, torch), make, quick)
    return rows


def _norms(jt, torch, quick):
    """Rows for nn.LayerNorm and nn.RMSNorm over the last dim of float32 activations (a small
    batch of 64 x 512, and 16 sequences of 512 tokens of 768), forward alone and forward plus
    the backward of its sum into the input, weight and bias."""
    import numpy as np
    rng = np.random.default_rng(0)
    rows = []
    for shape in ((64, 512), (8192, 768)):
        x = rng.standard_normal(shape).astype(np.float32)
        for name in ("LayerNorm", "RMSNorm"):
            rows += _module_rows(f"nn.{name}", shape, x,
                                 lambda lib, name=name, shape=shape:
                                 getattr(lib.nn, name)(shape[-1]),
                                 _libs(jt, torch), quick)
    return rows


def _transforms(jt, torch, quick):
    """Rows for the function transforms: a 128-256-10 MLP (GELU, log_softmax) on 64 float32
    rows run with a tangent through `forward_ad` (the Jacobian-vector product along the
    input), the same through `func.jvp`, and per-sample gradients of a 784-128-10 MLP's loss
    over 64 examples, vmap(grad)."""
    import numpy as np
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((256, 128)) * 0.1, rng.standard_normal((10, 256)) * 0.1
    x, t = rng.standard_normal((64, 128)), rng.standard_normal((64, 128))
    duals, jvps = {}, {}
    for name, lib in _libs(jt, torch).items():
        fw, F = lib.autograd.forward_ad, lib.nn.functional
        a, b, xs, ts = (lib.tensor(v.astype(np.float32)) for v in (w1, w2, x, t))

        def f(v, F=F, a=a, b=b):
            return F.log_softmax(F.linear(F.gelu(F.linear(v, a)), b), -1)

        def dual(fw=fw, f=f, xs=xs, ts=ts):
            with fw.dual_level():
                return fw.unpack_dual(f(fw.make_dual(xs, ts))).tangent
        duals[name] = dual
        jvps[name] = lambda lib=lib, f=f, xs=xs, ts=ts: lib.func.jvp(f, (xs,), (ts,))
    budget = 0.05 if quick else 0.5
    return [{"op": "forward AD: MLP with a tangent", "shape": "64x128-256-10",
             **compare(duals, budget=budget)},
            {"op": "func.jvp: MLP", "shape": "64x128-256-10", **compare(jvps, budget=budget)},
            {"op": "vmap(grad): per-sample gradients", "shape": "64x784-128-10",
             **compare({name: _per_sample(lib) for name, lib in _libs(jt, torch).items()},
                       budget=budget)},
            *_jacobians(jt, torch, budget)]


def _jacobians(jt, torch, budget):
    """Rows for jacrev of tanh(W v) (64x32) and the Hessian of sum(tanh(W v)) + sum(v^3)."""
    import numpy as np
    rng = np.random.default_rng(0)
    w, v = rng.standard_normal((64, 32)) * 0.1, rng.standard_normal(32)
    jac, hess = {}, {}
    for name, lib in _libs(jt, torch).items():
        W, x = lib.tensor(w), lib.tensor(v)
        jac[name] = lambda lib=lib, W=W, x=x: lib.func.jacrev(lambda u: (W @ u).tanh())(x)
        hess[name] = lambda lib=lib, W=W, x=x: lib.func.hessian(
            lambda u: (W @ u).tanh().sum() + (u ** 3).sum())(x)
    return [{"op": "func.jacrev: tanh(W v)", "shape": "64x32 float64",
             **compare(jac, budget=budget)},
            {"op": "func.hessian: sum tanh(W v) + v^3", "shape": "64x32 float64",
             **compare(hess, budget=budget)}]


def _per_sample(lib):
    """torch's per-sample-gradients tutorial: vmap(grad) of a functional_call loss."""
    import numpy as np
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(784, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10))
    params = {k: v.detach() for k, v in model.named_parameters()}
    data = lib.tensor(rng.standard_normal((64, 784)).astype(np.float32))
    targets = lib.tensor(rng.integers(0, 10, 64))

    def loss(params, x, t):
        out = lib.func.functional_call(model, params, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))
    grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: grads(params, data, targets)


def measure(quick=False):
    """Rows {op, shape, and seconds per peer} measured in this run."""
    import jitensor as jt
    torch = optional("torch")
    rows = _tiny(jt, torch) + _activations(jt, torch, quick) + _cross_entropy(jt, torch, quick) \
        + _pointwise_losses(jt, torch, quick) + _embedding(jt, torch, quick) \
        + _linear(jt, torch, quick) + _norms(jt, torch, quick) + _attention(jt, torch, quick) \
        + _conv(jt, torch, quick) + _transforms(jt, torch, quick)
    steps = (("MLP train step (Adam)", "64x784-128-10", _mlp, False),
             ("CNN train step (SGD)", "32x3x32x32, 2 conv", cnn_step, False),
             ("GPT train step (AdamW)", "2x64, 8x32 tokens", gpt_step, False),
             ("GPT train step (AdamW)", "6x384, 2x256 tokens", gpt6_step, False),
             ("VAE train step (Adam)", "128x784-400-20", vae_step, False),
             ("DCGAN step (Adam)", "16x3x32x32, width 32", dcgan_step, False),
             ("char MLP step (AdamW)", "32x16 chars, 64-64", char_mlp_step, False),
             ("LSTM LM step (SGD)", "35x20, 2x200, 10k words", lstm_lm_step, False),
             ("GCN step (Adam), sparse", "Cora's sizes: 2708 nodes", gcn_step, False),
             # all threads with another process spinning on one core (robustness under load)
             ("GPT step, busy machine", "2x64, 8x32 tokens", gpt_step, True))
    for op, shape, step, busy in steps:
        row = {"op": op, "shape": shape}
        for name, lib in (("jitensor", jt), ("torch", torch)):
            if lib is not None:
                run = step(lib)
                with busy_neighbour() if busy else contextlib.nullcontext():
                    row[name] = timeit(run, budget=0.5 if quick else 2.0)
        rows.append(row)
    return rows


if __name__ == "__main__":
    print_rows("autograd (CPU)", measure("--quick" in sys.argv))
