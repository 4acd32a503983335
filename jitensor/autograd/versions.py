"""Version counters of storages, as torch's: every in-place op bumps the counter of the memory it
writes, and a tensor shares that counter with its views and detach()ed aliases, so backward can
tell that a tensor it saved was overwritten through any of them. A storage is the array that owns
the memory (the `base` chain leads every view back to it, on the CPU and for CUDA's DeviceArray
alike). Counters are made on first need -- most storages are never saved nor written
in place -- and go with their storage."""
from weakref import ref

import numpy as np

_COUNTERS = {}  # id(storage) -> its Counter


class Counter(ref):
    """A weak reference to a storage that carries its `count` and drops its entry with it."""

    __slots__ = ("key", "count")


def _drop(counter, counters=_COUNTERS):
    # (the dict bound here: at interpreter exit the module's globals may be None already when
    # the last storages go, and the callback printed "Exception ignored in _drop")
    counters.pop(counter.key, None)


def storage(data):
    """The array that owns the memory `data` views: the last array on its chain of bases (which
    may pass through other objects, e.g. the array-interface holder of a strided view)."""
    base = data.base
    while base is not None:
        if isinstance(base, np.ndarray):
            data = base
        base = getattr(base, "base", None)
    return data


def counter(data):
    """The Counter of the in-place writes to `data`'s storage."""
    owner = storage(data)
    key = id(owner)
    c = _COUNTERS.get(key)
    if c is None:
        c = _COUNTERS[key] = Counter(owner, _drop)
        c.key, c.count = key, 0
    return c


def bump(data):
    counter(data).count += 1


def reset(data):
    """Count no writes so far: for a tensor just made, that no one else can have read (a
    `*_like` routine fills its result through out=, yet hands out version 0, as torch's)."""
    c = _COUNTERS.get(id(storage(data)))
    if c is not None:
        c.count = 0


def version(data):
    c = _COUNTERS.get(id(storage(data)))
    return 0 if c is None else c.count
