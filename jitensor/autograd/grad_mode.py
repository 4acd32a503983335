"""Whether ops record the graph: `no_grad`, `enable_grad`, `set_grad_enabled` and
`inference_mode`, as in torch. The mode is per thread, as torch's: one thread's no_grad (in an
optimizer step, say) leaves other threads recording, and a new thread starts with grad on."""
import functools
import threading


class _State(threading.local):
    """The calling thread's grad mode. A thread sees the class attributes until it sets its
    own, so each thread starts with the defaults, whatever mode the thread that started it is
    in (as in torch)."""

    enabled = True  # whether ops record: read by every differentiable op
    # inference_mode: whether it is on, and the grad mode no_grad / enable_grad /
    # set_grad_enabled ask for inside it. Inside inference mode nothing records, whatever they
    # ask (as in torch, where inference mode excludes autograd altogether), so they set
    # `inference_grad` instead of `enabled`, which stays False; is_grad_enabled() still reports
    # what they asked for.
    inference = False
    inference_grad = False


_state = _State()


def is_grad_enabled():
    return _state.enabled or _state.inference_grad


def _slot():
    """The attribute of `_state` no_grad / enable_grad / set_grad_enabled write: recording
    itself, or, inside inference mode, the grad mode it reports (recording stays off there)."""
    return "inference_grad" if _state.inference else "enabled"


class set_grad_enabled:
    """Turn recording on or off: at once when called, for a block as a context manager, or for
    a function as a decorator."""

    def __init__(self, mode):
        self.slot = _slot()
        self.prev = getattr(_state, self.slot)
        self.mode = bool(mode)
        setattr(_state, self.slot, self.mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        setattr(_state, self.slot, self.prev)

    def __call__(self, fn):
        mode = self.mode
        setattr(_state, self.slot, self.prev)  # decorating changes nothing until the function runs

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class _Mode:
    """A context manager and decorator, usable with or without parentheses as a decorator."""

    mode = True

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        return self(fn) if callable(fn) else self

    def __enter__(self):
        self.slot = slot = _slot()
        self.prev = getattr(_state, slot)
        setattr(_state, slot, self.mode)

    def __exit__(self, *exc):
        setattr(_state, self.slot, self.prev)

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            slot = _slot()
            prev = getattr(_state, slot)
            setattr(_state, slot, mode)
            try:
                return fn(*args, **kwargs)
            finally:
                setattr(_state, slot, prev)
        return wrapper


class no_grad(_Mode):
    """Ops inside run without recording the graph: results do not require grad."""
    mode = False


class enable_grad(_Mode):
    """Ops inside record the graph even within `no_grad` (but not within `inference_mode`,
    where nothing records, as in torch)."""
    mode = True


def is_inference_mode_enabled():
    return _state.inference


class inference_mode:
    """``with jt.inference_mode():`` (or ``@jt.inference_mode`` / ``@jt.inference_mode()``):
    ops inside record no graph, as under `no_grad`, and nothing turns recording back on inside
    (`enable_grad` there changes only what `is_grad_enabled` reports, as in torch).
    ``inference_mode(False)`` turns inference mode off and grad mode on inside it, as torch's.

    What differs from torch: torch marks the tensors created inside as inference tensors
    (``is_inference()`` True; setting requires_grad on them later, or saving them for backward,
    raises). jitensor does not tag tensors, so they are ordinary tensors without history, as
    under `no_grad`: `Tensor.is_inference()` is False for every tensor, and using one in
    autograd later works instead of raising."""

    def __new__(cls, mode=True):
        if mode is None or isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # @inference_mode without parentheses: `mode` is the function

    def __init__(self, mode=True):
        self.mode = bool(mode)
        self._saved = []  # a stack: the same object may be entered again inside itself

    def __enter__(self):
        s = _state
        self._saved.append((s.enabled, s.inference, s.inference_grad))
        s.enabled, s.inference, s.inference_grad = not self.mode, self.mode, False

    def __exit__(self, *exc):
        _state.enabled, _state.inference, _state.inference_grad = self._saved.pop()

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper


# torch.autograd.set_multithreading_enabled: whether torch's engine may run a backward's CPU and
# device work on its own worker threads. jitensor's engine runs every backward in the calling
# thread, which is what torch does with it disabled (and, for CPU work, with it enabled too); the
# switch is kept so that code reading it back sees what it set.
_multithreading = [True]


def is_multithreading_enabled():
    return _multithreading[0]


class set_multithreading_enabled:
    """Set whether backward may use worker threads: at once when called, or for a block as a
    context manager (jitensor's backward runs in the calling thread either way)."""

    def __init__(self, mode):
        self.prev, _multithreading[0] = _multithreading[0], bool(mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _multithreading[0] = self.prev

    def clone(self):
        return self.__class__(_multithreading[0])


def is_view_replay_enabled():
    """False: autograd does not replay views (torch's default); jitensor never does."""
    return False
