"""Random number generators: a seed and an offset into a counter-based stream.

Element i of a draw is a pure function of (seed, offset + i) (`kernels.scalar.uniform`), so a
parallel kernel, a serial one and a GPU kernel produce the same numbers, and a draw of n values
just advances the offset by n."""
import contextlib
import os
import threading
import warnings

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


_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """torch.random.fork_rng: the CPU generator's state (and that of `devices` of
    `device_type`, every one by default) restored when the block ends, however it ends;
    `enabled=False` forks nothing."""
    global _fork_rng_warned_already
    if device_type == "meta" or not enabled:
        yield
        return
    from . import accelerator, get_device_module
    current = accelerator.current_accelerator()
    device_type = device_type or (current.type if current is not None else "cuda")
    device_mod = get_device_module(device_type)
    if devices is None:
        count = device_mod.device_count()
        if count > 1 and not _fork_rng_warned_already:
            warnings.warn(f"{device_type.upper()} reports that you have {count} available "
                          f"devices, and you have used {_caller} without explicitly specifying "
                          f"which devices are being used; every one is forked. Pass "
                          f"{_devices_kw}= (or set {device_type.upper()}_VISIBLE_DEVICES) to "
                          f"fork only those you use.", stacklevel=3)
            _fork_rng_warned_already = True
        devices = list(range(count))
    else:
        devices = list(devices)  # (a generator would be spent by the first pass)
    cpu_state = get_rng_state()
    device_states = [device_mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states, strict=True):
            device_mod.set_rng_state(state, d)
