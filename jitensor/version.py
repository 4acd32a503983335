"""torch.version: jitensor's version; it is not a build against CUDA, ROCm or XPU
libraries (its CUDA kernels come from numba-cuda at run time), so those are None."""
__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
cuda = hip = rocm = xpu = None
debug = False
git_version = "unknown"
