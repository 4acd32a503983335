"""torch.amp.autocast. jitensor has no autocast policy yet (which ops run in float16 or
bfloat16), so an enabled autocast raises NotImplementedError where torch would compute in
lower precision. A disabled one is torch's pass-through, and CUDA autocast without CUDA
warns and disables itself, as torch's does: training scripts build them that way."""
import functools
import warnings

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda")

# torch's autocast state (torch.get_autocast_dtype, torch.is_autocast_enabled, ...): the lower
# precision dtype per device type, which `autocast` sets for its region, and whether the region
# caches casts of leaf tensors. Enabled is always False: enabling raises, as autocast does.
_dtype = {}
_cache_enabled = [True]


def _device_type(fn, device_type):
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' must be str, not "
                        f"{type(device_type).__name__}")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"{fn}(): jitensor has the device types {', '.join(_DEVICE_TYPES)}; "
                           f"got {device_type!r}")
    return device_type


def _bool(fn, value, position):
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument 'enabled' (position {position}) must be bool, not "
                        f"{type(value).__name__}")
    return value


def _disabled_only(device_type):
    raise NotImplementedError(
        f"jitensor.autocast(device_type={device_type!r}, enabled=True): mixed precision "
        f"(running ops in float16 or bfloat16 inside the region) is not supported by jitensor "
        f"yet; pass enabled=False, and everything runs in the tensors' own dtypes, as torch "
        f"does with autocast disabled")


def get_autocast_dtype(device_type):
    """The dtype autocast would run `device_type`'s ops in: bfloat16 on the CPU and float16
    on CUDA unless set (set_autocast_dtype, or the dtype of an enclosing autocast)."""
    from .. import dtypes
    device_type = _device_type("get_autocast_dtype", device_type)
    default = dtypes.bfloat16 if device_type == "cpu" else dtypes.float16
    return _dtype.get(device_type, default)


def set_autocast_dtype(device_type, dtype):
    from .. import dtypes
    device_type = _device_type("set_autocast_dtype", device_type)
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"jitensor.dtype, not {type(dtype).__name__}")
    _dtype[device_type] = dtype


def is_autocast_enabled(device_type=None):
    """False: jitensor never autocasts (`device_type` None is CUDA, as torch's)."""
    _device_type("is_autocast_enabled", "cuda" if device_type is None else device_type)
    return False


def set_autocast_enabled(device_type, enabled=None):
    """set_autocast_enabled(device_type, enabled), or the older set_autocast_enabled(enabled)
    for CUDA: False is the state jitensor is always in; True raises NotImplementedError, as
    an enabled autocast does."""
    if enabled is None:
        device_type, enabled = "cuda", _bool("set_autocast_enabled", device_type, 1)
    device_type = _device_type("set_autocast_enabled", device_type)
    if _bool("set_autocast_enabled", enabled, 2):
        _disabled_only(device_type)


def is_autocast_cache_enabled():
    return _cache_enabled[0]


def set_autocast_cache_enabled(enabled):
    _cache_enabled[0] = _bool("set_autocast_cache_enabled", enabled, 1)


def clear_autocast_cache():
    """Drop autocast's cached casts: jitensor never autocasts, so the cache is always empty."""


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def is_autocast_available(device_type):
    """False: jitensor cannot autocast on any device yet."""
    return False


class autocast:
    """``with jt.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``, also a
    decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        from .. import cuda
        self.device, self.fast_dtype, self._cache_enabled = device_type, dtype, cache_enabled
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda" and not cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling", stacklevel=2)
            self._enabled = False
        if self._enabled:
            _disabled_only(device_type)

    def __enter__(self):
        """The region's dtype and cache switch (as torch's, though nothing is cast)."""
        self.__dict__.setdefault("_prev", []).append((_dtype.get(self.device),
                                                      _cache_enabled[0]))
        if self.fast_dtype is not None:
            set_autocast_dtype(self.device, self.fast_dtype)
        if self._cache_enabled is not None:
            _cache_enabled[0] = bool(self._cache_enabled)
        return self

    def __exit__(self, *exc):
        prev_dtype, _cache_enabled[0] = self._prev.pop()
        if prev_dtype is None:
            _dtype.pop(self.device, None)
        else:
            _dtype[self.device] = prev_dtype
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """torch.amp.custom_fwd for an autograd Function's forward: it casts the inputs only inside
    an enabled autocast region, which jitensor never has, so `fwd` runs as written."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type):
    """torch.amp.custom_bwd: backward runs under the forward's autocast state, which in
    jitensor is always disabled, so `bwd` runs as written."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
