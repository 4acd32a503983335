"""jt.cuda.amp: torch.cuda.amp's names. jitensor does not support mixed precision yet (no
autocast to float16, no gradient scaling), so an enabled `autocast` or `GradScaler` raises
NotImplementedError where CUDA is available. Disabled ones work as torch's pass-throughs, and
without CUDA an enabled one warns and disables itself, as torch's does; training scripts build
them that way on the CPU."""
import functools
import warnings

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd"]

_UNSUPPORTED = ("mixed precision (autocast to float16, gradient scaling) is not supported by "
                "jitensor yet; pass enabled=False (everything then runs in the tensors' own "
                "dtypes, as torch does with it disabled)")


def amp_definitely_not_available():
    """True when CUDA cannot be used, so CUDA autocast and gradient scaling are off."""
    from .. import cuda
    return not cuda.is_available()


def _enabled(enabled, what, message):
    """Whether a CUDA amp object asked to be `enabled` is: False, with torch's warning, without
    CUDA; NotImplementedError when it would have to be."""
    if not enabled:
        return False
    if amp_definitely_not_available():
        warnings.warn(message, UserWarning, stacklevel=3)
        return False
    raise NotImplementedError(f"jitensor.cuda.amp.{what}(enabled=True): {_UNSUPPORTED}")


class autocast:
    """torch.cuda.amp.autocast: a context manager and decorator. Disabled (``enabled=False``, or
    no CUDA), ops inside run in their inputs' dtypes, as outside; enabled, NotImplementedError
    (mixed precision is not supported yet)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        from .. import float16
        self.device = "cuda"
        self.fast_dtype = float16 if dtype is None else dtype
        self._cache_enabled = cache_enabled
        self._enabled = _enabled(enabled, "autocast",
                                 "CUDA is not available. Disabling autocast.")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self._enabled, self.fast_dtype, self._cache_enabled):
                return fn(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd for an autograd Function's forward: it casts the inputs only
    inside an enabled autocast region, which jitensor never has, so `fwd` runs as written."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    """torch.cuda.amp.custom_bwd: runs backward under the forward's autocast state, which in
    jitensor is always disabled, so `bwd` runs as written."""
    return bwd


class GradScaler:
    """torch.cuda.amp.GradScaler. Disabled (``enabled=False``, or no CUDA), it is torch's
    pass-through: `scale` returns the outputs, `step` calls ``optimizer.step()``, `unscale_`
    and `update` do nothing, `get_scale` is 1.0 and `state_dict` empty. Enabled with CUDA,
    NotImplementedError (gradient scaling is not supported yet)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = "cuda"
        self._enabled = _enabled(enabled, "GradScaler", "jitensor.cuda.amp.GradScaler is "
                                 "enabled, but CUDA is not available.  Disabling.")
        self._init_scale, self._growth_factor = init_scale, growth_factor
        self._backoff_factor, self._growth_interval = backoff_factor, growth_interval

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        return None

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        return None

    def get_scale(self):
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        return None
