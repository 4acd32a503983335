"""Kernels per device. `registry` is the one place that picks them."""
from numba.core import caching

from . import kernel_cache, lazy_codegen

# before any kernel is decorated (Numba picks a kernel's cache locator then)
kernel_cache.install(caching)
lazy_codegen.install()
