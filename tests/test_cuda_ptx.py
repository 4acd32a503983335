"""Every CUDA kernel signature the simulator launched in this session (test_cuda.py runs
before this file) compiles to PTX for sm_90: the simulator runs kernels as Python and would
never see a typing error that the GPU compiler hits. The register-tiled kernels must also keep
their per-thread arrays out of local memory."""
import os
import pickle
import subprocess
import sys

import pytest
from conftest import REPO

import jitensor as jt

# Kernels whose per-thread arrays (register tiles, vector lanes) must compile to registers:
# in local memory they would lose most of their speed.
IN_REGISTERS = {"jitensor.kernels.cuda.linalg.matmul_f32",
                "jitensor.kernels.cuda.elementwise.unary_vec4",
                "jitensor.kernels.cuda.elementwise.arith_vec4"}


@pytest.mark.skipif(not jt.cuda.is_available(), reason="numba-cuda is not installed")
def test_every_launched_kernel_compiles_to_ptx(tmp_path):
    from jitensor.kernels.cuda import driver
    if not driver.SIM:
        pytest.skip("on a GPU the tests compile and run every kernel themselves")
    for dtype in (jt.bool, jt.uint8, jt.int16, jt.int64, jt.float16, jt.float64):
        x = jt.ones(3, dtype=dtype, device="cuda")  # the families in more dtypes than the tests
        _ = x.to(jt.float32) == x.sum(0)  # launched for its kernels, not compared
    a = jt.ones(2, 4, device="cuda")
    a @ a.T, a + a, a.exp()  # float32: the register-tiled matmul and the 128-bit kernels
    launched = {f"{module}.{name}" for module, name, _ in driver.SIGNATURES}
    assert IN_REGISTERS <= launched, IN_REGISTERS - launched
    path = tmp_path / "signatures.pkl"
    path.write_bytes(pickle.dumps((sorted(driver.SIGNATURES, key=str), IN_REGISTERS)))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, str(REPO / "tests" / "cuda_ptx.py"), str(path)],
                          capture_output=True, text=True, env=env, timeout=1800)
    if "NVVM" in done.stdout + done.stderr and "cannot be found" in done.stdout + done.stderr:
        pytest.skip("no NVVM here: install numba-cuda[cu13]")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
