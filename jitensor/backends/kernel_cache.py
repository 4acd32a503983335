"""What keys the disk cache of jitensor's kernels: their own source file, and every source
file of jitensor/backends.

Numba keys a cached kernel on a hash of the file that defines it, and nothing else. A kernel
of jitensor's calls scalar definitions and helpers of other files (backends/scalar/ for
most), so an edit there -- or an upgrade that changed only those files -- would load the old
machine code: measured, a fix to `logsigmoid` in backends/scalar/elementwise.py left the
cached activation kernel of backends/cpu/elementwise.py 12x slow, and it could as well be
wrong. So `stamp` wraps Numba's locators (the CPU's, and numba-cuda's when the CUDA backend
loads): a kernel file of jitensor/backends gets the hash of all those sources added to its
stamp. Any edit recompiles every kernel once; nothing stale ever loads."""
import functools
import hashlib
import os

ROOT = os.path.dirname(os.path.realpath(__file__))  # jitensor/backends


@functools.lru_cache(maxsize=None)
def sources_hash():
    """One hash of every .py file under jitensor/backends (read once a process, when the
    first kernel is looked up on disk: about a millisecond)."""
    h = hashlib.sha256()
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            h.update(os.path.relpath(path, ROOT).encode())
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def _stamped(cls):
    class Stamped(cls):
        def get_source_stamp(self):
            stamp = super().get_source_stamp()
            inside = os.path.realpath(getattr(self, "_py_file", "")).startswith(ROOT + os.sep)
            return (stamp, sources_hash()) if inside else stamp
    Stamped.__name__ = Stamped.__qualname__ = "Stamped" + cls.__name__
    return Stamped


def stamp(cache_impl):
    """Make the locators of a Numba cache implementation class (numba.core.caching.CacheImpl
    or numba-cuda's CacheImpl) add sources_hash() to the stamp of jitensor's kernel files;
    in place, so subclasses sharing the list follow. Idempotent."""
    classes = cache_impl._locator_classes
    classes[:] = [cls if cls.__name__.startswith("Stamped") else _stamped(cls)
                  for cls in classes]
