"""CPU reduction kernels."""
