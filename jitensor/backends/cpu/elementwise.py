"""CPU elementwise kernels."""
