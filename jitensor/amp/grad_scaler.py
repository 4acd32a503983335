"""torch.amp.GradScaler: scale the loss up so that small gradients survive a low-precision
backward, then unscale the gradients before the step, skip steps whose gradients overflowed
and adapt the scale. It works on gradients of any floating dtype, float32 included."""
import collections.abc
import enum
import warnings

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """torch.amp.GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True). Disabled (or for "cuda" without
    CUDA, with torch's warning), `scale` returns its input and `step` calls
    ``optimizer.step()``."""

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        from .. import cuda
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale, self._growth_factor = init_scale, growth_factor
        self._backoff_factor, self._growth_interval = backoff_factor, growth_interval
        self._init_growth_tracker = 0
        # the scale (0-d float32) and the count of steps since the last overflow (0-d int32),
        # made on the device of the first output scaled
        self._scale = self._growth_tracker = None
        self._per_optimizer_states = collections.defaultdict(_fresh_state)

    def _check_initialized(self, fn):
        if self._scale is None:
            raise AssertionError(f"Attempted {fn} but _scale is None.  This may indicate your "
                                 f"script did not use scaler.scale(loss or outputs) earlier in "
                                 f"the iteration.")

    def scale(self, outputs):
        """`outputs` (a tensor, or nested lists/tuples/iterables of tensors) times the scale."""
        from ..tensor import Tensor
        if not self._enabled:
            return outputs

        def apply(value):
            if isinstance(value, Tensor):
                if self._scale is None:
                    from ..creation import full
                    self._scale = full((), self._init_scale, dtype="float32",
                                       device=value.device)
                    self._growth_tracker = full((), self._init_growth_tracker, dtype="int32",
                                                device=value.device)
                return value * self._scale.to(value.device)
            if isinstance(value, collections.abc.Iterable) and not isinstance(value, str):
                mapped = map(apply, value)
                return type(value)(mapped) if isinstance(value, (list, tuple)) else mapped
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads(self, optimizer, inv_scale, allow_fp16):
        """Multiply every gradient by `inv_scale` in place; {device: 1.0 if any gradient there is
        inf or NaN, else 0.0} (0-d float32 tensors)."""
        from .. import float16, no_grad
        from ..creation import zeros
        found = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    device = grad.device
                    if device not in found:
                        found[device] = zeros((), dtype="float32", device=device)
                    grad.mul_(inv_scale.to(device))
                    if not grad.isfinite().all():
                        found[device].fill_(1.0)
        return found

    def unscale_(self, optimizer):
        """Divide `optimizer`'s gradients by the scale (once per iteration), noting overflow."""
        if not self._enabled:
            return
        self._check_initialized("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless `unscale_` already did), then ``optimizer.step(*args, **kwargs)``
        unless a gradient was inf or NaN; returns what the step returned (None if skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_initialized("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """Back the scale off after an overflow, grow it after `growth_interval` clean steps
        (torch's _amp_update_scale_), or set it to `new_scale`."""
        from ..tensor import Tensor
        if not self._enabled:
            return
        self._check_initialized("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                if not isinstance(new_scale, Tensor) or new_scale.device.type != \
                        self._scale.device.type or new_scale.numel() != 1 or \
                        new_scale.requires_grad:
                    raise AssertionError("new_scale should be a float or a 1-element "
                                         "torch.cuda.FloatTensor or torch.FloatTensor with "
                                         "requires_grad=False.")
                self._scale.copy_(new_scale.reshape(()))
        else:
            found = [f.item() for state in self._per_optimizer_states.values()
                     for f in state["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale, tracker = self._scale.item(), int(self._growth_tracker.item())
            if sum(found):
                self._scale.fill_(scale * self._backoff_factor)
                self._growth_tracker.fill_(0)
            elif tracker + 1 == self._growth_interval:
                grown = scale * self._growth_factor
                if abs(grown) != float("inf"):  # torch keeps the scale if growing overflows
                    self._scale.fill_(grown)
                self._growth_tracker.fill_(0)
            else:
                self._growth_tracker.fill_(tracker + 1)
        self._per_optimizer_states = collections.defaultdict(_fresh_state)

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else \
            int(self._growth_tracker.item())

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
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if self._per_optimizer_states:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = state["_growth_tracker"] = None
        state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._per_optimizer_states = collections.defaultdict(_fresh_state)
