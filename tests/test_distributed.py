"""jitensor.distributed and DistributedDataParallel: 2- and 3-rank MPI jobs on this machine
(tests/distributed_worker.py, which checks against NumPy references and the single-process
gradients), under a hard timeout; and the errors a process gives on its own."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

import jitensor as jt  # noqa: E402
import jitensor.distributed as dist  # noqa: E402
from jitensor.distributed.run import mpiexec_path  # noqa: E402

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

WORKER = Path(__file__).with_name("distributed_worker.py")
REPO = WORKER.parent.parent


def launch(args, timeout=240):
    """Run `args` in a session of its own, killed whole (mpiexec and its ranks) on timeout."""
    # one thread a rank: the ranks share the machine's cores
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=REPO, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{args} hung past {timeout} s:\n{out}")
    return proc.returncode, out


def job(case, n):
    rc, out = launch([mpiexec_path(), "-n", str(n), sys.executable, str(WORKER), case])
    assert rc == 0, out  # mpiexec's status: non-zero when any rank failed


@pytest.mark.parametrize("n", [2, 3])
def test_collectives(n):
    job("collectives", n)


@pytest.mark.parametrize("n", [2, 3])
def test_errors_and_timeout(n):
    job("errors", n)


@pytest.mark.parametrize("n", [2, 3])
def test_ddp_gradients(n):
    job("ddp", n)


def test_launcher(tmp_path):
    script = tmp_path / "show.py"
    script.write_text(
        "import os, sys\nimport jitensor.distributed as dist\ndist.init_process_group('gloo')\n"
        "assert dist.get_rank() == int(os.environ['RANK'])\n"
        "line = ' '.join([*(os.environ[k] for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', "
        "'MASTER_PORT')), *sys.argv[1:]])\n"
        "open(os.path.join(os.path.dirname(__file__), f'rank{dist.get_rank()}'), 'w')"
        ".write(line)\n")
    rc, out = launch([sys.executable, "-m", "jitensor.distributed.run", "--nproc_per_node", "2",
                      "--master-port", "1234", str(script), "x", "--flag"])
    assert rc == 0, out
    # (the ranks' output interleaves: each writes a file of its own)
    lines = [(tmp_path / f"rank{r}").read_text() for r in range(2)]
    assert lines == [f"{r} {r} 2 1234 x --flag" for r in range(2)], out


def test_before_init():
    assert dist.is_available()
    assert not dist.is_initialized()
    message = "Default process group has not been initialized"
    for call in (lambda: dist.all_reduce(jt.ones(2)), lambda: dist.get_rank(),
                 lambda: dist.barrier(), lambda: dist.send(jt.ones(2), dst=1)):
        with pytest.raises(ValueError, match=message):
            call()
    from jitensor.nn.parallel import DistributedDataParallel
    with pytest.raises(ValueError, match=message):
        DistributedDataParallel(jt.nn.Linear(2, 2))


def test_refusals():
    with pytest.raises(ValueError, match="runs on MPI"):
        dist.init_process_group("ucc")
    # a process torchrun (or a shell) started alone is an MPI job of one: refused, with a note
    code = ("import jitensor.distributed as d\ntry:\n    d.init_process_group()\n"
            "except ValueError as e:\n    print(e)\n")
    env = dict(os.environ, RANK="1", WORLD_SIZE="2")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120).stdout
    assert "WORLD_SIZE=2" in out and "jitensor.distributed.run" in out, out
