"""`detect_anomaly` and `set_detect_anomaly`: backward raises where a node's gradient is NaN,
naming the node, as torch's. (torch also prints the traceback of the forward call that made
the node; jitensor does not keep forward tracebacks.)"""
import functools
import warnings

_enabled = [False]  # read by the engine once per gradient: global, as torch's anomaly mode
_check_nan = [True]


def is_anomaly_enabled():
    return _enabled[0]


def is_anomaly_check_nan_enabled():
    return _check_nan[0]


def check_nan(node, i, grad):
    if _check_nan[0] and grad.dtype.is_floating_point and bool(grad.isnan().any()):
        raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once when called, or for a block as a context
    manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = _enabled[0], _check_nan[0]
        _enabled[0], _check_nan[0] = bool(mode), bool(check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _enabled[0], _check_nan[0] = self.prev


class detect_anomaly:
    """Anomaly detection for a block (a context manager) or a function (a decorator)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = _enabled[0], _check_nan[0]
        _enabled[0], _check_nan[0] = True, self.check_nan

    def __exit__(self, *exc):
        _enabled[0], _check_nan[0] = self.prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def set_anomaly_enabled(enabled, check_nan=True):
    """torch.set_anomaly_enabled: turn anomaly detection on or off (no warning, no restore)."""
    _enabled[0], _check_nan[0] = bool(enabled), bool(check_nan)
