"""torchrun on MPI: ``python -m jitensor.distributed.run --nproc-per-node N script.py args``.

Runs ``mpiexec`` (the mpich wheel's, next to this Python, else the one on PATH) once for the
whole job; each rank starts through jitensor.distributed._bootstrap, which sets torchrun's
variables (RANK, LOCAL_RANK, GROUP_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
MASTER_PORT) from MPI's before running the script. Several machines: ``--nnodes M --hostfile
FILE`` from one of them (MPI starts the ranks on the others over ssh), not one launch per node
as torchrun does."""
import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["main", "mpiexec_path"]


def mpiexec_path():
    """The mpiexec of the MPI mpi4py uses: the wheel's, next to this interpreter, first."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("mpiexec not found: pip install 'jitensor[distributed]' (mpi4py and "
                           "the mpich wheel, which brings mpiexec)")
    return found


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m jitensor.distributed.run",
        description="torchrun's launcher on mpiexec: starts nnodes * nproc-per-node ranks of "
                    "SCRIPT with torchrun's environment variables.")

    def opt(*names, **kw):  # torchrun takes --a-b and --a_b alike
        p.add_argument(*names, *["--" + n[2:].replace("-", "_") for n in names
                                 if "-" in n[2:]], **kw)
    opt("--nproc-per-node", default="1",
        help="ranks per machine: a number, or 'cpu' (one per core)")
    opt("--nnodes", default="1", help="machines (with --hostfile); 'M:N' takes M")
    opt("--node-rank", type=int, default=0,
        help="accepted for torchrun's sake: MPI starts every machine's ranks from node 0")
    opt("--master-addr", default=None, help="exported as MASTER_ADDR (default: the first host)")
    opt("--master-port", type=int, default=29500, help="exported as MASTER_PORT")
    opt("--hostfile", default=None,
        help="mpiexec's host file (one 'host[:slots]' a line) for several machines")
    opt("--standalone", action="store_true", help="one machine (the default here)")
    for name in ("--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--rdzv-conf",
                 "--max-restarts", "--monitor-interval", "--start-method", "--role",
                 "--log-dir", "--redirects", "--tee", "--local-addr"):
        opt(name, default=None, help=argparse.SUPPRESS)  # torchrun's; MPI has no use for them
    opt("--no-python", action="store_true",
        help="run SCRIPT as a program, not with this Python")
    p.add_argument("-m", "--module", action="store_true", help="SCRIPT is a module (python -m)")
    opt("--mpiexec", default=None, help="the mpiexec to run (default: mpich's, next to Python)")
    opt("--mpiexec-args", default="", help="more arguments for mpiexec, as one string")
    opt("--dry-run", action="store_true", help="print the mpiexec command and exit")
    p.add_argument("script", help="the training script (or module, or program)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def _hosts(hostfile):
    hosts = []
    for line in Path(hostfile).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            hosts.append(line.split(":")[0].split()[0])
    return hosts


def command(args):
    """The mpiexec command line and the environment it runs in."""
    nproc = os.cpu_count() if args.nproc_per_node in ("cpu", "auto") else int(
        args.nproc_per_node)
    nnodes = int(str(args.nnodes).split(":")[0])
    if nnodes > 1 and args.hostfile is None:
        raise SystemExit("--nnodes > 1 needs --hostfile: MPI starts the ranks of every machine "
                         "from this one")
    if args.node_rank != 0:
        raise SystemExit("with MPI the job starts once, from one machine: run the launcher "
                         "there only (node rank 0), with --hostfile naming every machine")
    hosts = _hosts(args.hostfile) if args.hostfile else []
    env = dict(os.environ)
    env.update(WORLD_SIZE=str(nproc * nnodes), LOCAL_WORLD_SIZE=str(nproc),
               GROUP_WORLD_SIZE=str(nnodes),
               MASTER_ADDR=args.master_addr or (hosts[0] if hosts else "127.0.0.1"),
               MASTER_PORT=str(args.master_port))
    cmd = [args.mpiexec or mpiexec_path(), "-n", str(nproc * nnodes)]
    if args.hostfile:
        cmd += ["-f", args.hostfile, "-ppn", str(nproc)]
    cmd += args.mpiexec_args.split()
    if args.no_python:
        cmd += [args.script]
    else:
        cmd += [sys.executable, "-m", "jitensor.distributed._bootstrap"]
        cmd += (["-m"] if args.module else []) + [args.script]
    return cmd + args.script_args, env


def main(argv=None):
    args = _parser().parse_args(argv)
    cmd, env = command(args)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
