"""torch.backends: the settings torch scripts set before they train, under torch's names.

jitensor's kernels are its own (no cuDNN, MKL-DNN or MPS), so these flags are recorded as torch
records them and honoured where they mean something here:
- `cudnn.deterministic`, `cudnn.benchmark`: jitensor's kernels give the same bits run after run
  and at any thread count, deterministic mode or not; no algorithm search exists to benchmark.
- `cuda.matmul.allow_tf32`, `cudnn.allow_tf32`: jitensor's float32 products are full float32
  on both devices, which TF32 permission allows (it never requires it); `allow_tf32` is
  `torch.get_float32_matmul_precision() != "highest"`, as torch keeps them.
- `opt_einsum`: jitensor's einsum contracts left to right (torch's path without opt_einsum):
  `is_available()` is False and `enabled` has no effect, as in torch without the package.
The kernel code lives in jitensor.kernels."""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
