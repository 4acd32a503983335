"""Kernels per device. `registry` is the one place that picks them."""
