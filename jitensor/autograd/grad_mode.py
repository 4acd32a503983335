"""Whether ops record the graph: `no_grad`, `enable_grad`, `set_grad_enabled`, as in torch."""
import functools

_enabled = [True]  # read by every differentiable op: a list, so the check is one index


def is_grad_enabled():
    return _enabled[0]


class set_grad_enabled:
    """Turn recording on or off: at once when called, for a block as a context manager, or for
    a function as a decorator."""

    def __init__(self, mode):
        self.prev = _enabled[0]
        self.mode = bool(mode)
        _enabled[0] = self.mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _enabled[0] = self.prev

    def __call__(self, fn):
        mode = self.mode
        _enabled[0] = self.prev  # decorating changes nothing until the function runs

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
        self.prev = _enabled[0]
        _enabled[0] = self.mode

    def __exit__(self, *exc):
        _enabled[0] = self.prev

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _enabled[0]
            _enabled[0] = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _enabled[0] = prev
        return wrapper


class no_grad(_Mode):
    """Ops inside run without recording the graph: results do not require grad."""
    mode = False


class enable_grad(_Mode):
    """Ops inside record the graph even within `no_grad`."""
    mode = True
