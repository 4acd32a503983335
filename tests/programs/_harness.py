"""One training step of a program's own model, under torch or under jitensor, from the same
weights, written to .npz files for tests/test_programs.py to compare (jitensor's code).

    python _harness.py torch OUTDIR CASE...
    python _harness.py jitensor OUTDIR --weights TORCHDIR CASE...

Each case builds a model with the program's own classes and functions (imported from its folder
under tests/programs), a batch drawn by NumPy from a fixed seed, the program's loss, and the
program's update (its optimizer with its settings, or its hand-written step). Under `jitensor`
the torch module names are aliased first (`jitensor.run.install()`), and the model's weights
are then those torch drew: TORCHDIR/CASE.npz's state_dict, loaded with `load_state_dict`.
Dropout is switched off (p = 0 on every dropout module and MultiheadAttention) and
`randn_like` fixed where a program draws noise, as the two libraries' random streams differ.
OUTDIR/CASE.npz holds (or OUTDIR/CASE.err the traceback of a case that failed):

    state/NAME          the state_dict before the step (torch's weights, for jitensor to load)
    loss                the loss of the batch
    grad/NAME           each parameter's gradient after backward (a parameter without one is
                        listed in `no_grad`)
    after/NAME          each parameter and buffer after the program's update
    loss_after          the loss of the batch after the update, without grad
    extra/NAME          what else the case computes (eval-mode outputs, greedy generations)
"""
import importlib.util
import os
import sys
import traceback

LIB, OUTDIR, *CASES = sys.argv[1:]
WEIGHTS = None
if CASES[:1] == ["--weights"]:
    WEIGHTS, CASES = CASES[1], CASES[2:]
if LIB == "jitensor":
    from jitensor import run

    run.install()
elif LIB != "torch":
    raise SystemExit(f"_harness.py: the library is torch or jitensor, not {LIB!r}")

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_shims"))  # the torchvision stand-in


def program_module(program, relpath, name, argv=()):
    """Import tests/programs/<program>/<relpath> as module `name`, with the program's folder on
    sys.path (for its own imports) and sys.argv = [relpath, *argv] (for module-level argparse)."""
    folder = os.path.join(HERE, program)
    sys.path.insert(0, os.path.dirname(os.path.join(folder, relpath)))
    sys.path.insert(0, folder)
    saved, sys.argv = sys.argv, [relpath, *argv]
    try:
        spec = importlib.util.spec_from_file_location(name, os.path.join(folder, relpath))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.argv = saved
    return module


def no_dropout(model):
    for m in model.modules():
        if "Dropout" in type(m).__name__:
            m.p = 0.0
        if isinstance(m, nn.MultiheadAttention):
            m.dropout = 0.0
    return model


def ints(rng, high, shape):
    return torch.from_numpy(rng.randint(0, high, shape).astype(np.int64))


def floats(rng, shape, dtype=np.float32):
    return torch.from_numpy(rng.standard_normal(shape).astype(dtype))


class Case:
    """model: an nn.Module (its state_dict is the weights); loss(): the batch's loss; step():
    the program's update, after backward (gets `loss` for closures); extra(): {name: tensor}."""

    def __init__(self, model, loss, step=None, extra=None):
        self.model, self.loss, self.step, self.extra = model, loss, step, extra


# --- the cases -----------------------------------------------------------------------------

def nanogpt(bias):
    mod = program_module("nanogpt", "model.py", "nanogpt_model")
    conf = mod.GPTConfig(block_size=16, vocab_size=40, n_layer=2, n_head=2, n_embd=32,
                         dropout=0.0, bias=bias)
    model = mod.GPT(conf)
    rng = np.random.RandomState(0)
    x, y = ints(rng, 40, (4, 16)), ints(rng, 40, (4, 16))
    # train.py's optimizer, with its default weight decay and betas
    opt = model.configure_optimizers(1e-1, 1e-3, (0.9, 0.95), "cpu")

    def step(loss):
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # train.py's grad_clip
        opt.step()
        opt.zero_grad(set_to_none=True)

    def extra():
        model.eval()
        with torch.no_grad():
            logits, _ = model(x[:, :5])  # the inference path: the last position only
            cropped = mod.GPT(conf)
            cropped.load_state_dict(model.state_dict())
            cropped.crop_block_size(8)
            out = {"logits": logits, "cropped": cropped(x[:, :8].contiguous(), y[:, :8].contiguous())[1]}
        return out

    return Case(model, lambda: model(x, y)[1], step, extra)


def makemore(kind):
    mod = program_module("makemore", "makemore.py", "makemore")
    conf = mod.ModelConfig(block_size=9, vocab_size=12, n_layer=2, n_embd=16, n_embd2=16,
                           n_head=2)
    model = {"transformer": lambda: mod.Transformer(conf), "bigram": lambda: mod.Bigram(conf),
             "mlp": lambda: mod.MLP(conf), "rnn": lambda: mod.RNN(conf, cell_type="rnn"),
             "gru": lambda: mod.RNN(conf, cell_type="gru"), "bow": lambda: mod.BoW(conf)}[kind]()
    rng = np.random.RandomState(0)
    x, y = ints(rng, 12, (6, 9)), ints(rng, 12, (6, 9))
    y[:, 6:] = -1  # makemore masks the positions after a word's end with -1
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01, betas=(0.9, 0.99),
                            eps=1e-8)
    return Case(model, lambda: model(x, y)[1], lambda loss: opt.step(),
                lambda: {"logits": model(x)[0]})


def mingpt():
    sys.path.insert(0, os.path.join(HERE, "mingpt"))
    from mingpt.model import GPT
    from mingpt.trainer import Trainer
    conf = GPT.get_default_config()
    conf.model_type = "gpt-nano"
    conf.vocab_size, conf.block_size = 10, 6
    conf.embd_pdrop = conf.resid_pdrop = conf.attn_pdrop = 0.0
    model = GPT(conf)
    rng = np.random.RandomState(0)
    x, y = ints(rng, 10, (8, 6)), ints(rng, 10, (8, 6))
    y[:, :3] = -1  # adder.py masks the operand positions with -1
    tconf = Trainer.get_default_config()
    tconf.learning_rate = 5e-4  # adder.py's
    opt = model.configure_optimizers(tconf)

    def step(loss):  # Trainer.run's
        torch.nn.utils.clip_grad_norm_(model.parameters(), tconf.grad_norm_clip)
        opt.step()

    def extra():
        model.eval()
        with torch.no_grad():
            return {"greedy": model.generate(x[:, :3], 3, do_sample=False)}

    return Case(model, lambda: model(x, y)[1], step, extra)


def mnist(program, lr):
    mod = program_module(program, "main.py", program + "_main")
    model = mod.Net()
    rng = np.random.RandomState(0)
    x, t = torch.from_numpy(rng.rand(6, 1, 28, 28).astype(np.float32)), ints(rng, 10, (6,))
    opt = torch.optim.Adadelta(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)

    def step(loss):
        opt.step()
        sched.step()
        loss = F.nll_loss(model(x), t)  # a second step, at the rate StepLR scheduled
        opt.zero_grad()
        loss.backward()
        opt.step()

    def extra():
        model.eval()
        with torch.no_grad():
            out = model(x)
            return {"eval": out, "pred": out.argmax(dim=1, keepdim=True)}

    return Case(model, lambda: F.nll_loss(model(x), t), step, extra)


def vae():
    mod = program_module("vae", "main.py", "vae_main", ["--batch-size", "6", "--epochs", "1"])
    model = mod.VAE()
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.rand(6, 1, 28, 28).astype(np.float32))
    eps = floats(rng, (6, 20))
    torch.randn_like = lambda std, **kw: eps.clone()  # reparameterize's noise, fixed
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss():
        recon, mu, logvar = model(x)
        return mod.loss_function(recon, x, mu, logvar)

    return Case(model, loss, lambda loss: opt.step(),
                lambda: {"decoded": model.decode(eps), "encoded": model.encode(x.view(-1, 784))[1]})


def dcgan(outdir):
    import runpy
    argv = ["--dataset", "fake", "--dry-run", "--workers", "0", "--batchSize", "4", "--nz", "8",
            "--ngf", "4", "--ndf", "4", "--manualSeed", "1", "--outf", os.path.join(outdir, "dcgan")]
    saved, sys.argv = sys.argv, ["main.py", *argv]
    try:  # (main.py trains one dry-run step at import: it has no __main__ guard)
        ns = runpy.run_path(os.path.join(HERE, "dcgan", "main.py"), run_name="dcgan_main")
    finally:
        sys.argv = saved
    netG, netD = ns["Generator"](1), ns["Discriminator"](1)
    netG.apply(ns["weights_init"])
    netD.apply(ns["weights_init"])
    model = nn.ModuleDict({"G": netG, "D": netD})
    criterion = nn.BCELoss()
    rng = np.random.RandomState(0)
    real = torch.from_numpy(rng.rand(4, 3, 64, 64).astype(np.float32) * 2 - 1)
    noise = floats(rng, (4, 8, 1, 1))
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def loss():
        ones, zeros = torch.full((4,), 1.0), torch.full((4,), 0.0)
        fake = netG(noise)
        err_d = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        return err_d + criterion(netD(fake), ones)

    def step(loss):
        optD.step()
        optG.step()

    def extra():
        model.eval()
        with torch.no_grad():
            return {"fake": netG(noise), "score": netD(real)}

    return Case(model, loss, step, extra)


def word_language_model(kind):
    mod = program_module("word_language_model", "model.py", "wlm_model")
    ntokens = 30
    if kind == "Transformer":
        model = mod.TransformerModel(ntokens, 16, 2, 16, 2, 0.0)
    else:  # (LSTM with tied weights: emsize == nhid)
        model = mod.RNNModel(kind, ntokens, 16, 16, 2, 0.0, kind == "LSTM")
    no_dropout(model)
    rng = np.random.RandomState(0)
    data, targets = ints(rng, ntokens, (8, 4)), ints(rng, ntokens, (8, 4)).view(-1)
    criterion = nn.NLLLoss()

    def forward():
        if kind == "Transformer":
            return model(data).view(-1, ntokens), None
        return model(data, model.init_hidden(4))

    def step(loss):  # main.py's update: clip, then p -= lr * grad (lr 20)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-20)

    def extra():
        model.eval()
        with torch.no_grad():  # (torch's TransformerEncoder takes its fast path here)
            out, hidden = forward()
            if kind == "Transformer":
                return {"eval": out, "unmasked": model(data, has_mask=False)}
            hidden = hidden if isinstance(hidden, tuple) else (hidden,)
            return {"eval": out, **{f"hidden{i}": h for i, h in enumerate(hidden)}}

    return Case(model, lambda: criterion(forward()[0], targets), step, extra)


def mnist_forward_forward():
    import argparse
    mod = program_module("mnist_forward_forward", "main.py", "mnist_ff_main")
    # the globals main.py's __main__ block sets, at its defaults but for 3 epochs
    mod.args = argparse.Namespace(lr=0.03, threshold=2.0, epochs=3, log_interval=1)
    mod.device = torch.device("cpu")
    net = mod.Net([784, 40, 40])
    rng = np.random.RandomState(0)
    x, y = torch.from_numpy(rng.rand(16, 784).astype(np.float32)), ints(rng, 10, (16,))
    y_neg = (y + 1 + ints(rng, 9, (16,))) % 10  # (get_y_neg draws with torch.randint)
    x_pos, x_neg = mod.overlay_y_on_x(x, y), mod.overlay_y_on_x(x, y_neg)

    def step(loss):
        net.train(x_pos, x_neg)  # each layer's own Adam steps, layer after layer

    return Case(nn.ModuleList(net.layers), None, step,
                lambda: {"x_pos": x_pos, "x_neg": x_neg, "predict": net.predict(x)})


def time_sequence_prediction():
    mod = program_module("time_sequence_prediction", "train.py", "tsp_train")
    seq = mod.Sequence()
    seq.double()
    x = np.arange(12)[None, :] + np.random.RandomState(2).randint(-80, 80, 4)[:, None]
    data = torch.from_numpy(np.sin(x / 20.0))
    inp, target = data[1:, :-1], data[1:, 1:]
    criterion = nn.MSELoss()
    opt = torch.optim.LBFGS(seq.parameters(), lr=0.8)

    def step(loss):
        def closure():
            opt.zero_grad()
            loss = criterion(seq(inp), target)
            loss.backward()
            return loss
        opt.step(closure)

    def extra():
        with torch.no_grad():
            return {"future": seq(data[:1, :-1], future=10)}

    return Case(seq, lambda: criterion(seq(inp), target), step, extra)


def graph(program, outdir):
    """The program's module and its load_cora's (features, labels, adjacency) of the graph the
    requests stand-in serves, unpacked into outdir."""
    import tarfile

    import requests
    mod = program_module(program, "main.py", program + "_main")
    with requests.get(requests.CORA, stream=True) as got:
        tarfile.open(fileobj=got.raw, mode="r:gz").extractall(outdir, filter="data")
    return mod, mod.load_cora(os.path.join(outdir, "cora"))


def gcn(outdir):
    mod, (features, labels, adj) = graph("gcn", outdir)  # sparse features and adjacency
    model = mod.GCN(features.shape[1], 16, int(labels.max()) + 1, True, 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)  # main.py's
    train = torch.arange(300, len(labels))
    return Case(model, lambda: nn.NLLLoss()(model(features, adj)[train], labels[train]),
                lambda loss: opt.step(), lambda: {"output": model(features, adj)})


def gat(outdir):
    mod, (features, labels, adj) = graph("gat", outdir)
    model = mod.GAT(features.shape[1], 8, 2, int(labels.max()) + 1, concat=True, dropout=0.0)
    opt = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)  # main.py's
    train = torch.arange(300, len(labels))
    return Case(model, lambda: nn.NLLLoss()(model(features, adj)[train], labels[train]),
                lambda loss: opt.step(), lambda: {"output": model(features, adj)})


def cases(outdir):
    out = {"nanogpt": lambda: nanogpt(False), "nanogpt_bias": lambda: nanogpt(True),
           "mingpt": mingpt, "mnist": lambda: mnist("mnist", 1.0),
           "mnist_rnn": lambda: mnist("mnist_rnn", 0.1), "vae": vae,
           "mnist_forward_forward": mnist_forward_forward,
           "dcgan": lambda: dcgan(outdir), "time_sequence_prediction": time_sequence_prediction,
           "gcn": lambda: gcn(outdir), "gat": lambda: gat(outdir)}
    for kind in ("transformer", "bigram", "mlp", "rnn", "gru", "bow"):
        out["makemore_" + kind] = lambda kind=kind: makemore(kind)
    for kind in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU", "Transformer"):
        out["word_language_model_" + kind] = lambda kind=kind: word_language_model(kind)
    return out


# --- the step --------------------------------------------------------------------------------

def numpy(t):
    return np.array(t.detach().cpu().numpy(), copy=True)  # (not a view of a tensor that moves)


def one(name):
    torch.manual_seed(0)
    case = cases(OUTDIR)[name]()
    model = case.model
    no_dropout(model)  # (a new module is in training mode already)
    rec = {}
    if WEIGHTS is not None:
        saved = np.load(os.path.join(WEIGHTS, name + ".npz"))
        model.load_state_dict({k[len("state/"):]: torch.from_numpy(saved[k])
                               for k in saved.files if k.startswith("state/")})
    for key, value in model.state_dict().items():
        rec["state/" + key] = numpy(value)
    loss = None
    if case.loss is not None:
        loss = case.loss()
        loss.backward()
        rec["loss"] = numpy(loss)
        missing = []
        for key, p in model.named_parameters():
            if p.grad is None:
                missing.append(key)
            else:
                rec["grad/" + key] = numpy(p.grad)
        rec["no_grad"] = np.array(sorted(missing), dtype=str)
    if case.step is not None:
        case.step(loss)
        for key, value in [*model.named_parameters(), *model.named_buffers()]:
            rec["after/" + key] = numpy(value)
        if case.loss is not None:
            with torch.no_grad():
                rec["loss_after"] = numpy(case.loss())
    if case.extra is not None:
        for key, value in case.extra().items():
            rec["extra/" + key] = numpy(value)
    np.savez(os.path.join(OUTDIR, name + ".npz"), **rec)
    print(f"{name} under {LIB}: {len(rec)} arrays")


def main():
    os.makedirs(OUTDIR, exist_ok=True)
    randn_like = torch.randn_like
    for name in CASES:
        try:
            one(name)
        except BaseException:  # noqa: BLE001 (SystemExit too: a program may exit)
            with open(os.path.join(OUTDIR, name + ".err"), "w") as f:
                f.write(traceback.format_exc())
            print(f"{name} under {LIB}: failed", file=sys.stderr)
        finally:
            torch.randn_like = randn_like  # (the vae case fixes it)


if __name__ == "__main__":
    main()
