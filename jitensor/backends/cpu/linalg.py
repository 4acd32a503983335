"""CPU linalg kernels."""
