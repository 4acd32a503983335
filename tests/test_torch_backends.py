"""jitensor.backends: torch.backends' flags under torch's names, recorded and linked as torch
links them (the kernels themselves live in jitensor.kernels)."""
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def test_the_flag_modules_torch_scripts_touch_exist():
    for name in ("cudnn", "cuda", "mps", "opt_einsum", "mkldnn", "mkl", "openmp", "cpu"):
        assert hasattr(jt.backends, name) and hasattr(torch.backends, name)
    assert jt.backends.cudnn.enabled is torch.backends.cudnn.enabled is True
    assert jt.backends.cudnn.benchmark is torch.backends.cudnn.benchmark is False
    assert jt.backends.cudnn.deterministic is torch.backends.cudnn.deterministic is False
    assert jt.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert jt.backends.opt_einsum.is_available() is False
    assert jt.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")


def test_cudnn_flags_are_set_for_a_block_and_restored():
    jt.backends.cudnn.benchmark = True
    try:
        with jt.backends.cudnn.flags(enabled=True, deterministic=True):
            assert jt.backends.cudnn.deterministic and not jt.backends.cudnn.benchmark
        assert jt.backends.cudnn.benchmark and not jt.backends.cudnn.deterministic
    finally:
        jt.backends.cudnn.benchmark = False


def test_tf32_mirrors_the_float32_matmul_precision_as_in_torch():
    saved = jt.get_float32_matmul_precision()
    try:
        for value in (True, False):
            jt.backends.cuda.matmul.allow_tf32 = value
            torch.backends.cuda.matmul.allow_tf32 = value
            assert jt.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
        jt.set_float32_matmul_precision("high")
        assert jt.backends.cuda.matmul.allow_tf32
    finally:
        jt.set_float32_matmul_precision(saved)
        torch.set_float32_matmul_precision("highest")


def test_attention_kernel_choices_are_scoped():
    with jt.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        assert not jt.backends.cuda.flash_sdp_enabled() and jt.backends.cuda.math_sdp_enabled()
    assert jt.backends.cuda.flash_sdp_enabled()
    with pytest.raises(RuntimeError, match="no scaled_dot_product_attention kernel"):
        with jt.backends.cuda.sdp_kernel(False, False, False, False):
            pass


def test_the_kernel_package_no_longer_shadows_the_name():
    import jitensor.kernels.registry
    assert not hasattr(jt.backends, "registry") and not hasattr(jt.backends, "scalar")
    assert callable(jitensor.kernels.registry.backend)
