"""The recurrent-layer report: jitensor against torch on the CPU.

``python -m jitensor.bench.recurrent [--quick] [--sizes 200,512,1024]``: one forward and
backward step of a 2-layer LSTM, GRU and tanh RNN over float32 sequences of 35 steps and a
batch of 20 (word_language_model's defaults: 200 features in and hidden), and at hidden sizes
512 and 1024 (input as wide as the hidden state); and one step of one token without grad (a
sampling loop's); both libraries in one process."""
import sys

from . import compare, optional, print_rows

SEQ, BATCH, LAYERS = 35, 20, 2
MODES = ("LSTM", "GRU", "RNN_TANH")


def rnn_step(lib, mode="LSTM", hidden=200, seq=SEQ, batch=BATCH, layers=LAYERS, device="cpu"):
    """A function running one forward and backward of a `layers`-layer `mode` recurrent layer
    of lib (jitensor or torch) on a fixed float32 input; asv_bench's RNNStep times it too."""
    import numpy as np
    lib.manual_seed(0)
    cls = {"LSTM": lib.nn.LSTM, "GRU": lib.nn.GRU, "RNN_TANH": lib.nn.RNN}[mode]
    model = cls(hidden, hidden, layers).to(device)
    x = lib.tensor(np.random.default_rng(0).standard_normal((seq, batch, hidden))
                   .astype(np.float32), device=device, requires_grad=True)

    def step():
        model.zero_grad()
        out, _ = model(x)
        out.sum().backward()
        return out
    return step


def sample_step(lib, mode="LSTM", hidden=1024, layers=LAYERS):
    """One step of a `layers`-layer `mode` layer on one token, without grad, carrying the state
    over: a language model's sampling loop."""
    import numpy as np
    lib.manual_seed(0)
    cls = {"LSTM": lib.nn.LSTM, "GRU": lib.nn.GRU, "RNN_TANH": lib.nn.RNN}[mode]
    model = cls(hidden, hidden, layers)
    x = lib.tensor(np.random.default_rng(0).standard_normal((1, 1, hidden)).astype(np.float32))
    state = [None]

    def step():
        with lib.no_grad():
            out, state[0] = model(x, state[0])
        return out
    return step


def measure(quick=False, sizes=(200, 512, 1024)):
    """Rows {op, shape, and seconds per peer} measured in this run."""
    import jitensor as jt
    torch = optional("torch")
    libs = {"jitensor": jt} if torch is None else {"jitensor": jt, "torch": torch}
    rows = []
    for hidden in sizes[:1] if quick else sizes:
        for mode in MODES:
            fns = {peer: rnn_step(lib, mode, hidden) for peer, lib in libs.items()}
            rows.append({"op": f"nn.{mode} fwd+bwd", "shape": f"{SEQ}x{BATCH}x{hidden} "
                         f"{LAYERS} layers", **compare(fns, budget=0.2 if quick else 1.0)})
        for mode in MODES:
            fns = {peer: sample_step(lib, mode, hidden) for peer, lib in libs.items()}
            rows.append({"op": f"nn.{mode} sample", "shape": f"1x1x{hidden} no grad, "
                         f"{LAYERS} layers", **compare(fns, budget=0.2 if quick else 1.0)})
    return rows


if __name__ == "__main__":
    sizes = (200, 512, 1024)
    for arg in sys.argv[1:]:
        if arg.startswith("--sizes="):
            sizes = tuple(int(s) for s in arg.split("=")[1].split(","))
    print_rows("recurrent layers, float32 (CPU)", measure("--quick" in sys.argv, sizes))
