"""Scalar definitions shared by the CPU (@njit) and CUDA (@cuda.jit) kernels, one module per op
family. Each function is `register_jitable`, so kernels of either target call the same code and
an op is defined once."""
