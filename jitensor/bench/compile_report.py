"""Where a workload's first run spends its time in Numba: every kernel compiled or loaded from
the disk cache, with its time, dispatcher and signature.

``python -m jitensor --compile-report [WORKLOAD]`` runs one workload in this process (run it in
a fresh one: kernels already loaded are not seen again) and prints the totals and the top
kernels and signatures. Programmatic use::

    with Recorder() as rec:
        step()
    print(rec.report())

Compiles are Numba's `numba:compile` events (broadcast only on a cache miss); a compile that
calls another dispatcher not compiled yet nests that one's event in its own, so each record
keeps its self time (its time less its nested compiles'). Cache loads broadcast no event:
`Recorder` times Numba's Cache.load_overload while it is active."""
import collections
import contextlib
import time

from numba.core import caching, event

WORKLOADS = ("gpt", "mlp", "cnn", "gcn")


class Recorder(event.Listener):
    """Records compiles and cache loads while active (a context manager). `records`: dicts
    with kind ("compile" or "load"), name (the dispatcher's module.qualname), signature,
    seconds (inclusive) and self (less nested compiles)."""

    def __init__(self):
        self.records = []
        self._stack = []  # open compiles: [start, nested seconds, record]
        self.wall = self.cpu = 0.0

    def on_start(self, event):
        self._stack.append([time.perf_counter(), time.thread_time(), 0.0, 0.0,
                            _describe(event.data)])

    def on_end(self, event):
        start, cpu_start, nested, nested_cpu, record = self._stack.pop()
        seconds = time.perf_counter() - start
        cpu = time.thread_time() - cpu_start
        if self._stack:
            self._stack[-1][2] += seconds
            self._stack[-1][3] += cpu
        # cpu: this thread's CPU time, which other processes on the cores do not inflate
        record.update(kind="compile", seconds=seconds, self=seconds - nested, cpu=cpu,
                      self_cpu=cpu - nested_cpu, depth=len(self._stack),
                      failed=event.is_failed)
        self.records.append(record)

    def _timed_load(self, load):
        def load_overload(cache, sig, target_context):
            t0, cpu0 = time.perf_counter(), time.thread_time()
            result = load(cache, sig, target_context)
            seconds, cpu = time.perf_counter() - t0, time.thread_time() - cpu0
            if self._stack:  # a load inside a compile is part of that compile's time
                self._stack[-1][2] += seconds
                self._stack[-1][3] += cpu
            func = cache._py_func
            self.records.append({"kind": "load" if result is not None else "miss",
                                 "name": f"{func.__module__}.{func.__qualname__}",
                                 "signature": str(sig), "seconds": seconds, "self": seconds,
                                 "cpu": cpu, "self_cpu": cpu, "depth": len(self._stack)})
            return result
        return load_overload

    def __enter__(self):
        self._exit = contextlib.ExitStack()
        self._exit.enter_context(event.install_listener("numba:compile", self))
        load = caching.Cache.load_overload
        caching.Cache.load_overload = self._timed_load(load)
        self._exit.callback(setattr, caching.Cache, "load_overload", load)
        self._t0, self._cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self._t0
        self.cpu = time.process_time() - self._cpu0
        self._exit.close()

    def report(self, top=25):
        return report(self.records, self.wall, self.cpu, top)


def _describe(data):
    dispatcher = data["dispatcher"]
    func = dispatcher.py_func
    args = ", ".join(str(a) for a in data["args"])
    return {"name": f"{func.__module__}.{func.__qualname__}", "signature": f"({args})"}


def summarize(records):
    """({kind: [count, self CPU seconds]}, {dispatcher: [signatures, CPU seconds]}) where a
    dispatcher's seconds are those of its outermost compiles, nested ones included (what
    compiling it cost), and kind is "compile", "load" or "miss" (a load that found nothing)."""
    totals = collections.defaultdict(lambda: [0, 0.0])
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for r in records:
        totals[r["kind"]][0] += 1
        totals[r["kind"]][1] += r["self_cpu"]
        if r["kind"] == "compile" and r["depth"] == 0:
            by_name[r["name"]][0] += 1
            by_name[r["name"]][1] += r["cpu"]
    return dict(totals), dict(by_name)


def report(records, wall, cpu, top=25):
    totals, by_name = summarize(records)
    lines = [f"wall {wall:.2f} s, CPU {cpu:.2f} s (this process); " + "; ".join(
        f"{kind} {n} x, {s:.2f} s CPU" for kind, (n, s) in sorted(totals.items()))]
    lines.append("\n== kernels by compile time: CPU seconds with nested compiles, signatures")
    for name, (n, s) in sorted(by_name.items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"{s:8.2f} {n:4d}  {_shorten(name)}")
    lines.append("\n== signatures by compile time: CPU seconds without nested compiles")
    compiles = sorted((r for r in records if r["kind"] == "compile"),
                      key=lambda r: -r["self_cpu"])
    for r in compiles[:top]:
        lines.append(f"{r['self_cpu']:8.2f}  {_shorten(r['name'])} {r['signature'][:150]}")
    loads = [r for r in records if r["kind"] == "load"]
    if loads:
        lines.append("\n== slowest cache loads (CPU seconds)")
        for r in sorted(loads, key=lambda r: -r["cpu"])[:10]:
            lines.append(f"{r['cpu']:8.3f}  {_shorten(r['name'])} {r['signature'][:150]}")
    return "\n".join(lines)


def _shorten(name):
    return name.removeprefix("jitensor.kernels.")


# -- workloads: one training step each, built for jitensor or torch (`lib`) --------------------
def gpt_model(lib, n_layer=2, n_embd=64, n_head=4, block=32, vocab=65):
    """A small GPT in nanoGPT's layout (tied embeddings, pre-LayerNorm blocks, causal
    scaled_dot_product_attention, GELU MLP): forward(idx) gives the logits."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
            self.c_fc, self.mlp_proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
            q, k, v = (z.view(b, t, n_head, c // n_head).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.blocks = nn.ModuleList(Block() for _ in range(n_layer))
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(lib.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.lm_head(self.ln_f(x))
    return GPT()


def gpt_step(lib, n_layer=2, n_embd=64, n_head=4, block=32, vocab=65, batch=8):
    """One training step of `gpt_model` (AdamW with weight decay on the matrices only,
    gradient clipping at 1)."""
    lib.manual_seed(0)
    nn, F = lib.nn, lib.nn.functional
    model = gpt_model(lib, n_layer, n_embd, n_head, block, vocab)
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = lib.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.95))
    x = lib.randint(0, vocab, (batch, block))
    y = lib.randint(0, vocab, (batch, block))

    def step():
        loss = F.cross_entropy(model(x).view(-1, vocab), y.view(-1), ignore_index=-1)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss
    return step


def workload(name, lib):
    """A step function of workload `name` (WORKLOADS) for lib."""
    from . import autograd
    return {"gpt": gpt_step, "mlp": autograd._mlp, "cnn": autograd.cnn_step,
            "gcn": autograd.gcn_step}[name](lib)


def main(name="gpt"):
    """Build workload `name` and run its first step under a Recorder, print the report, then
    time a second step."""
    import jitensor as jt
    with Recorder() as rec:
        t0 = time.perf_counter()
        step = workload(name, jt)
        built = time.perf_counter() - t0
        step()
    t0 = time.perf_counter()
    step()
    second = time.perf_counter() - t0
    print(f"{name}: build {built:.2f} s, first step {rec.wall - built:.2f} s, second step "
          f"{second * 1e3:.1f} ms (wall)")
    print(rec.report())
