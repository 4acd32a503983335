"""(being written)"""

__all__ = []
FUNCTIONS = []  # re-exported by nn.functional
