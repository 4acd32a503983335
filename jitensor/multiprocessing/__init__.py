"""torch.multiprocessing: Python's multiprocessing (every name of it), torch's sharing-strategy
switches, and `spawn` / `start_processes` to run a function in N processes. Importing it makes
multiprocessing send CPU tensors through shared memory, as torch does (reductions.py)."""
import multiprocessing
from multiprocessing import *  # noqa: F403

from .reductions import init_reductions
from .spawn import (
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "get_all_sharing_strategies", "get_sharing_strategy",
           "set_sharing_strategy", "spawn", "start_processes", *multiprocessing.__all__]

_STRATEGIES = ("file_descriptor", "file_system")
_strategy = ["file_descriptor"]


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def get_sharing_strategy():
    return _strategy[0]


def set_sharing_strategy(new_strategy):
    """Recorded as torch does; jitensor shares tensors by file descriptor whatever the strategy
    (reductions.py)."""
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"Invalid sharing strategy {new_strategy!r}: expected one of "
                             f"{sorted(_STRATEGIES)}")
    _strategy[0] = new_strategy


init_reductions()
