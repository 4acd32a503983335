"""jitensor.distributed: torch.distributed's API on MPI (mpi4py), installed with the
``distributed`` extra (``pip install 'jitensor[distributed]'``: mpi4py and the mpich wheel).

Start a job with ``python -m jitensor.distributed.run --nproc-per-node N script.py`` (torchrun's
flags and variables, on mpiexec) or with ``mpiexec -n N python script.py``; in the script,
``init_process_group()`` takes the ranks from MPI. See distributed_c10d.py for what each call
does and how tensors travel."""
from .distributed_c10d import *  # noqa: F403
from .distributed_c10d import __all__  # noqa: F401
