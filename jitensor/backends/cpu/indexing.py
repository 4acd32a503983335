"""CPU indexing kernels."""
