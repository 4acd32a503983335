"""torch._dynamo's names scripts touch (`config`, `reset`, `OptimizedModule`, ...): see
jitensor.compiler — jitensor runs compiled code eagerly, so its settings change nothing."""
import types

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
