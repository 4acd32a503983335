"""Random number generators: a seed and an offset into a counter-based stream.

Element i of a draw is a pure function of (seed, offset + i) (`kernels.scalar.uniform`), so a
parallel kernel, a serial one and a GPU kernel produce the same numbers, and a draw of n values
just advances the offset by n."""
import os
import threading

import numpy as np

_DEFAULT_SEED = 67280421310721  # torch's default_generator seed


class Generator:
    """torch.Generator: ``manual_seed``, ``seed``, ``initial_seed``, ``get_state``/``set_state``."""

    # (seed, offset) change together, and two threads drawing at once must not take the same
    # counters: every read and write of them holds this (one lock for all generators, so that
    # a generator stays copyable and picklable)
    _lock = threading.Lock()

    def __init__(self, device="cpu"):
        from .device import to_device
        self.device = to_device(device)
        self._seed, self._offset = _DEFAULT_SEED, 0

    def manual_seed(self, seed):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed(): seed must be an int, got {type(seed).__name__}")
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise RuntimeError(f"manual_seed(): seed must be within [-2**63, 2**64), got {seed}")
        with self._lock:
            self._seed, self._offset = seed % (1 << 64), 0
        return self

    def seed(self):
        self.manual_seed(int.from_bytes(os.urandom(8), "little"))
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from .creation import tensor
        with self._lock:
            state = [self._seed, self._offset]
        return tensor(np.array(state, np.uint64).view(np.uint8))

    def set_state(self, state):
        seed, offset = np.asarray(state, np.uint8).view(np.uint64).tolist()
        with self._lock:
            self._seed, self._offset = seed, offset
        return self

    def take(self, n):
        """(seed as uint64, first counter) for a draw of `n` counters; advances the stream."""
        with self._lock:
            seed, offset = self._seed, self._offset
            self._offset = offset + n
        return np.uint64(seed), offset


default_generator = Generator()


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def thread_safe_generator():
    """The generator of a DataLoader thread worker, else None (torch's). jitensor's DataLoader
    workers are processes, each seeded on its own, so this is None: random ops draw from the
    default generator."""
    return None
