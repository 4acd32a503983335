"""jitensor.nn: modules, parameters, layers, losses (torch.nn's API), `functional`, `init` and
`utils`. The module classes live in `modules/`, in the files torch.nn.modules has them in;
`functional` imports none of them (they import it)."""
from . import attention, common_types, functional, init, modules, utils
from .modules import *  # noqa: F403 (modules.__all__: every module class)
from .parallel import DataParallel  # noqa: F401 (torch.nn.DataParallel; binds nn.parallel)
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "UninitializedBuffer", "UninitializedParameter", "attention",
           "common_types", "functional", "init", "utils", *modules.__all__]
