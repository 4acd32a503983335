"""torch.amp.autocast. jitensor has no autocast policy yet (which ops run in float16 or
bfloat16), so an enabled autocast raises NotImplementedError where torch would compute in
lower precision. A disabled one is torch's pass-through, and CUDA autocast without CUDA
warns and disables itself, as torch's does: training scripts build them that way."""
import functools
import warnings

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda")


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
            raise NotImplementedError(
                f"jitensor.autocast(device_type={device_type!r}, enabled=True): mixed precision "
                f"(running ops in float16 or bfloat16 inside the region) is not supported by "
                f"jitensor yet; pass enabled=False, and everything runs in the tensors' own "
                f"dtypes, as torch does with autocast disabled")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
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
