"""jitensor.distributed and DistributedDataParallel: 2- and 3-rank MPI jobs on this machine
(tests/distributed_worker.py, which checks against NumPy references and the single-process
gradients), under a hard timeout; and the errors a process gives on its own."""
import glob
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jitensor as jt  # noqa: E402
import jitensor.distributed as dist  # noqa: E402
from jitensor.distributed.run import mpiexec_path  # noqa: E402

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

WORKER = Path(__file__).with_name("distributed_worker.py")
GPT_WORKER = Path(__file__).with_name("distributed_gpt_worker.py")
REPO = WORKER.parent.parent


def launch(args, timeout=240, **env_vars):
    """Run `args` in a session of its own, killed whole (mpiexec and its ranks) on timeout."""
    # one thread a rank: the ranks share the machine's cores
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", **env_vars)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=REPO, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{args} hung past {timeout} s:\n{out}")
    return proc.returncode, out


def job(case, n, **env_vars):
    rc, out = launch([mpiexec_path(), "-n", str(n), sys.executable, str(WORKER), case],
                     **env_vars)
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


@pytest.mark.cuda
def test_cuda_collectives():
    # CUDA tensors are staged through host memory: all_reduce, broadcast and DDP give the NumPy
    # references and stay on the device (Numba's simulator where there is no GPU)
    env = {} if glob.glob("/dev/nvidia[0-9]*") else {"NUMBA_ENABLE_CUDASIM": "1"}
    job("cuda", 2, **env)


def test_ddp_gpt_matches_one_process(tmp_path):
    """A tiny nanoGPT trained for a few Adam steps with DDP on 2 ranks, each on half of every
    global batch, gives the losses and final weights of one process on the whole batches."""
    # the reference first: it compiles (or loads) the kernels the ranks then load from disk
    rc, out = launch([sys.executable, str(GPT_WORKER), "single", str(tmp_path)])
    assert rc == 0, out
    rc, out = launch([mpiexec_path(), "-n", "2", sys.executable, str(GPT_WORKER), "ddp",
                      str(tmp_path)])
    assert rc == 0, out
    ref, ranks = np.load(tmp_path / "single0.npz"), [np.load(tmp_path / f"ddp{r}.npz")
                                                      for r in range(2)]
    assert ref.files == ranks[0].files and len(ref.files) > 20
    np.testing.assert_allclose(ranks[0]["losses"], ref["losses"], rtol=1e-5)
    for name in ref.files:
        # Adam's steps are lr (1e-3) in size: atol 1e-5 is 1% of one, for the parameters near
        # zero whose gradient is rounding noise (the attention's key biases)
        np.testing.assert_allclose(ranks[0][name], ref[name], rtol=1e-5, atol=1e-5,
                                   err_msg=name)
        np.testing.assert_array_equal(ranks[1][name], ranks[0][name], err_msg=name)


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
