"""Whether ops record the graph: `no_grad`, `enable_grad`, `set_grad_enabled` and
`inference_mode`, as in torch."""
import functools

_enabled = [True]  # read by every differentiable op: a list, so the check is one index
# inference_mode: whether it is on, and the grad mode no_grad / enable_grad / set_grad_enabled
# ask for inside it. Inside inference mode nothing records, whatever they ask (as in torch,
# where inference mode excludes autograd altogether), so they set this slot instead of
# `_enabled`, which stays False; is_grad_enabled() still reports what they asked for.
_inference = [False]
_inference_grad = [False]


def is_grad_enabled():
    return _enabled[0] or _inference_grad[0]


def _slot():
    """The list no_grad / enable_grad / set_grad_enabled write: recording itself, or, inside
    inference mode, the grad mode it reports (recording stays off there)."""
    return _inference_grad if _inference[0] else _enabled


class set_grad_enabled:
    """Turn recording on or off: at once when called, for a block as a context manager, or for
    a function as a decorator."""

    def __init__(self, mode):
        self.slot = _slot()
        self.prev = self.slot[0]
        self.mode = bool(mode)
        self.slot[0] = self.mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        self.slot[0] = self.prev

    def __call__(self, fn):
        mode = self.mode
        self.slot[0] = self.prev  # decorating changes nothing until the function runs

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
        self.slot = slot = _inference_grad if _inference[0] else _enabled  # _slot(), inlined
        self.prev = slot[0]
        slot[0] = self.mode

    def __exit__(self, *exc):
        self.slot[0] = self.prev

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            slot = _inference_grad if _inference[0] else _enabled  # _slot(), inlined
            prev = slot[0]
            slot[0] = mode
            try:
                return fn(*args, **kwargs)
            finally:
                slot[0] = prev
        return wrapper


class no_grad(_Mode):
    """Ops inside run without recording the graph: results do not require grad."""
    mode = False


class enable_grad(_Mode):
    """Ops inside record the graph even within `no_grad` (but not within `inference_mode`,
    where nothing records, as in torch)."""
    mode = True


def is_inference_mode_enabled():
    return _inference[0]


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
        self._saved.append((_enabled[0], _inference[0], _inference_grad[0]))
        _enabled[0], _inference[0], _inference_grad[0] = not self.mode, self.mode, False

    def __exit__(self, *exc):
        _enabled[0], _inference[0], _inference_grad[0] = self._saved.pop()

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper
