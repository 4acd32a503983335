"""linalg ops (front ends)."""
__all__ = []
TENSOR_METHODS = {}
