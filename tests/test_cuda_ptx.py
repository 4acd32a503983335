"""Every CUDA kernel signature the CUDA tests launch in numba's simulator compiles to PTX for
sm_90: the simulator runs kernels as Python and would never see a typing error that the GPU
compiler hits. The register-tiled kernels must also keep their per-thread arrays out of local
memory.

Self-contained: when this process has run every CUDA test of the suite before this one
(conftest.py orders this test last, and under `-n` keeps the CUDA tests on one worker), their
signatures are taken from it; otherwise a child pytest runs the CUDA tests (`-m cuda`) in the
simulator and hands back the signatures they launched."""
import os
import pickle
import subprocess
import sys

import pytest
from conftest import PTX_TEST, REPO, SIGNATURES_ENV, every_cuda_test_ran_here

import jitensor as jt

pytestmark = [pytest.mark.cuda, pytest.mark.slow, pytest.mark.subprocess]

# Kernels whose per-thread arrays (register tiles, vector lanes) must compile to registers:
# in local memory they would lose most of their speed.
IN_REGISTERS = {"jitensor.kernels.cuda.linalg.matmul_f32",
                "jitensor.kernels.cuda.elementwise.unary_vec4",
                "jitensor.kernels.cuda.elementwise.arith_vec4"}


def _launched_by_the_cuda_tests(session, tmp_path):
    """The (module, kernel, argument types) the suite's CUDA tests launch: this process's, or
    a child pytest's when this process has not run them all."""
    from jitensor.kernels.cuda import driver
    if every_cuda_test_ran_here(session):
        return set(driver.SIGNATURES)
    path = tmp_path / "launched.pkl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # one process
    env.update(NUMBA_ENABLE_CUDASIM="1", **{SIGNATURES_ENV: str(path)})
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "--strict-markers", "-m", "cuda", "--deselect", PTX_TEST, "tests"],
        capture_output=True, text=True, env=env, cwd=str(REPO), timeout=3600, check=False)
    # 1: some CUDA test failed, which this session reports where it runs it (or the child's
    # output says): its signatures up to there still count
    assert done.returncode in (0, 1) and path.exists(), done.stdout[-6000:] + done.stderr[-3000:]
    return set(driver.SIGNATURES) | set(pickle.loads(path.read_bytes()))


@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
def test_every_launched_kernel_compiles_to_ptx(request, tmp_path):
    from jitensor.kernels.cuda import driver
    if not driver.SIM:
        pytest.skip("on a GPU the tests compile and run every kernel themselves")
    signatures = _launched_by_the_cuda_tests(request.session, tmp_path)
    for dtype in (jt.bool, jt.uint8, jt.int16, jt.int64, jt.float16, jt.float64):
        x = jt.ones(3, dtype=dtype, device="cuda")  # the families in more dtypes than the tests
        _ = x.to(jt.float32) == x.sum(0)
    a = jt.ones(2, 4, device="cuda")
    a @ a.T, a + a, a.exp()  # float32: the register-tiled matmul and the 128-bit kernels
    signatures |= driver.SIGNATURES
    launched = {f"{module}.{name}" for module, name, _ in signatures}
    assert IN_REGISTERS <= launched, IN_REGISTERS - launched
    path = tmp_path / "signatures.pkl"
    path.write_bytes(pickle.dumps((sorted(signatures, key=str), IN_REGISTERS)))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, str(REPO / "tests" / "cuda_ptx.py"), str(path)],
                          capture_output=True, text=True, env=env, timeout=1800, check=False)
    if "NVVM" in done.stdout + done.stderr and "cannot be found" in done.stdout + done.stderr:
        pytest.skip("no NVVM here: install numba-cuda[cu13]")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
