"""torch.backends.cuda: the matmul precision flags and the scaled-dot-product-attention kernel
choices, recorded (jitensor's attention is torch's math path on both devices)."""
import contextlib
import importlib.util

from .. import _settings


class _Matmul:
    """torch.backends.cuda.matmul: `allow_tf32` mirrors the float32 matmul precision, as in
    torch; the reduced-precision reductions are recorded (jitensor's half-precision products
    accumulate in float32 either way)."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return _settings.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        _settings.set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built():
    """Whether jitensor's CUDA backend is installed (numba-cuda; a GPU or not)."""
    return importlib.util.find_spec("numba_cuda") is not None


def flash_sdp_enabled():
    return _sdp["flash"]


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def math_sdp_enabled():
    return _sdp["math"]


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Choose attention kernels for the block (jitensor runs the math path whatever is
    chosen; refusing every kernel raises, as torch does when none is left)."""
    if not (enable_flash or enable_math or enable_mem_efficient or enable_cudnn):
        raise RuntimeError("sdp_kernel: no scaled_dot_product_attention kernel is enabled")
    saved = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)


def preferred_linalg_library(backend=None):
    """The linear-algebra library jitensor's CUDA decompositions use: its own kernels."""
    return "default"
