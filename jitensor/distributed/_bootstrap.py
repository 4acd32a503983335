"""One rank of a ``python -m jitensor.distributed.run`` job: sets torchrun's per-rank variables
from MPI's (mpich's PMI_RANK and MPI_LOCALRANKID, or Open MPI's), then runs the script (or,
after -m, the module) as __main__ with its arguments."""
import os
import runpy
import sys


def _first(*names):
    for name in names:
        if os.environ.get(name):
            return int(os.environ[name])
    return 0


def main():
    rank = _first("PMI_RANK", "OMPI_COMM_WORLD_RANK")
    local = _first("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK")
    per_node = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(local), GROUP_RANK=str(rank // per_node),
                      ROLE_RANK=str(rank), ROLE_WORLD_SIZE=os.environ.get("WORLD_SIZE", "1"))
    args = sys.argv[1:]
    if args and args[0] == "-m":
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
