"""(being written)"""

__all__ = []

TENSOR_METHODS = {}
