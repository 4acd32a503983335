"""torch._dynamo's names scripts touch (`config`, `reset`, `OptimizedModule`, `explain`, ...):
see jitensor.compiler. jitensor captures no graphs, so config's settings change nothing."""
import time
import types

from . import fusion
from .compiler import (  # noqa: F401
    OptimizedModule,
    allow_in_graph,
    assume_constant_result,
    disable,
    is_compiling,
    list_backends,
    reset,
)

# torch._dynamo.config's common settings, with torch's defaults; scripts set them freely
config = types.SimpleNamespace(suppress_errors=False, cache_size_limit=8,
                               recompile_limit=8, verbose=False, capture_scalar_outputs=False,
                               optimize_ddp=True, automatic_dynamic_shapes=True)


class ExplainOutput:
    """What one compiled call did, in torch's fields: each fused expression that ran is a
    "graph" (`ops_per_graph`: its ops); jitensor never breaks a graph (what does not fuse runs
    eagerly in between), so `graph_break_count` is 0 and `break_reasons` empty. Also:
    `kernels_generated` (new this call) and `compile_seconds` (generating and compiling them)."""

    def __init__(self, ops_per_graph, kernels, seconds, wall):
        self.ops_per_graph = ops_per_graph
        self.graphs, self.graph_count = [list(ops) for ops in ops_per_graph], len(ops_per_graph)
        self.graph_break_count, self.break_reasons, self.out_guards = 0, [], []
        self.op_count = sum(len(ops) for ops in ops_per_graph)
        self.kernels_generated, self.compile_seconds = kernels, seconds
        self.compile_times = f"jitensor fusion: {seconds:.3f} s compiling, {wall:.3f} s the call"

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", f"Kernels generated: {self.kernels_generated}",
                 f"Compile Time: {self.compile_times}", "Ops per Graph:"]
        lines += [f"  Ops {i + 1}: {', '.join(ops)}" for i, ops in enumerate(self.ops_per_graph)]
        return "\n".join(lines)


def explain(f, *extra_args, **extra_kwargs):
    """torch._dynamo.explain: `explain(f)(*args, **kwargs)` runs `f` compiled once and returns
    an ExplainOutput of its fused expressions (set JITENSOR_COMPILE_DUMP=1 to print each new
    kernel's source)."""
    def inner(*args, **kwargs):
        before, log = dict(fusion.stats), []
        outer, fusion.runs[0] = fusion.runs[0], log
        start = time.perf_counter()
        try:
            with fusion.region():
                f(*args, **kwargs)
        finally:
            fusion.runs[0] = outer
        return ExplainOutput(log, fusion.stats["kernels"] - before["kernels"],
                             fusion.stats["compile seconds"] - before["compile seconds"],
                             time.perf_counter() - start)
    if extra_args or extra_kwargs:  # torch's older form, explain(f, *args)
        return inner(*extra_args, **extra_kwargs)
    return inner
