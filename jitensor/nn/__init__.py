"""jitensor.nn: modules, parameters, layers, losses (torch.nn's API), `functional`, `init` and
`utils`.
Each module file lists what it exports in __all__."""
from . import functional  # first: its end imports the files that define functional forms
from . import activations, attention, containers, distance, dropout, init, layers, loss, \
    normalization, padding, recurrent, sampling
from .activations import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .containers import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import Module
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .parameter import Parameter
from .recurrent import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from . import utils  # last: clipping and padding build on the rest

__all__ = ["Module", "Parameter", "functional", "init", "utils"]
for _m in (activations, attention, containers, distance, dropout, layers, loss, normalization,
           padding, recurrent, sampling):
    __all__ += _m.__all__
