"""jitensor.nn.parallel: torch.nn.parallel's `DataParallel` and `data_parallel`, which on one
device run the module itself, as torch's do (jitensor runs on cuda:0 only, so several devices
are refused), and `DistributedDataParallel`, on jitensor.distributed (MPI)."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
