"""torch.amp.autocast: inside an enabled region, the ops of torch's autocast policy run their
floating-point tensor inputs (float64 aside) in the region's lower-precision dtype (products,
convolutions, attention), in float32 (losses, reductions and decompositions that lose accuracy
in 16 bits), or in the widest dtype among them (cat, stack); every other op runs on its inputs
as they are. The casts are ops autograd records, so gradients reach float32 parameters in
float32, as torch's. The op itself runs with autocast off, as torch excludes its own calls.
CUDA autocast without CUDA warns and disables itself, as torch's does."""
import functools
import sys
import threading
import warnings

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda")

# torch's autocast policy (aten/src/ATen/autocast_mode.cpp) under jitensor's names for the ops:
# the CPU's as torch 2.13 runs it (checked op by op), CUDA's from torch's documentation
_LOWER = ("conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d bmm mm "
          "matmul baddbmm addmm addbmm linear einsum chain_matmul multi_dot vecdot prelu "
          "scaled_dot_product_attention")
_FP32_LOSSES = ("cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss kl_div "
                "binary_cross_entropy_with_logits margin_ranking_loss soft_margin_loss "
                "hinge_embedding_loss poisson_nll_loss cosine_embedding_loss triplet_margin_loss "
                "multi_margin_loss multilabel_margin_loss cdist")
POLICY = {
    "cpu": {
        "lower": _LOWER,
        "fp32": _FP32_LOSSES + " binary_cross_entropy ctc_loss prod avg_pool3d max_pool3d "
                "adaptive_avg_pool3d adaptive_max_pool3d fractional_max_pool2d "
                "fractional_max_pool3d max_unpool2d max_unpool3d trace inverse inv pinverse pinv "
                "cholesky cholesky_solve cholesky_inverse cholesky_ex lu_solve qr svd geqrf "
                "orgqr ormqr triangular_solve solve lstsq eig eigh eigvals eigvalsh svdvals "
                "matrix_rank cond tensorinv tensorsolve householder_product quantile "
                "nanquantile polar",
        "promote": "cat concat concatenate stack index_copy",
    },
    "cuda": {
        "lower": _LOWER + " addmv addr mv lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell",
        "fp32": _FP32_LOSSES + " acos asin cosh erfinv exp expm1 log log10 log2 log1p "
                "reciprocal rsqrt sinh tan pow softplus layer_norm group_norm norm "
                "cosine_similarity dist pdist renorm logsumexp interpolate upsample prod "
                "softmax log_softmax cumprod cumsum vector_norm matrix_norm sum",
        "promote": "addcdiv addcmul atan2 bilinear cross dot grid_sample index_put "
                   "scatter_add tensordot",
    },
}

# The calling thread's autocast state (torch's is per thread): the enabled device types, the
# lower-precision dtype per device type, whether casts of leaf tensors are cached, the cache,
# and how many regions are open (the cache empties when the last one closes).
_local = threading.local()


def _state():
    s = _local.__dict__
    if not s:
        s.update(enabled=frozenset(), dtype={}, cache_enabled=True, cache={}, depth=0)
    return s


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


def _check_dtype(device_type, dtype):
    """torch's refusals: only float16 and bfloat16 are autocast dtypes; jitensor's CUDA
    kernels have no bfloat16 (cuda.is_bf16_supported() is False, so scripts pick float16)."""
    from .. import dtypes
    if dtype not in (dtypes.float16, dtypes.bfloat16):
        raise RuntimeError(f"In {device_type} autocast, but the target dtype is not supported: "
                           f"{dtype}; use jitensor.bfloat16 or jitensor.float16")
    if device_type == "cuda" and dtype is dtypes.bfloat16:
        raise RuntimeError("autocast(device_type='cuda', dtype=jitensor.bfloat16): jitensor's "
                           "CUDA kernels have no bfloat16; use dtype=jitensor.float16")


def get_autocast_dtype(device_type):
    """The dtype autocast runs `device_type`'s lower-precision ops in: bfloat16 on the CPU and
    float16 on CUDA unless set (set_autocast_dtype, or the dtype of an enclosing autocast)."""
    from .. import dtypes
    device_type = _device_type("get_autocast_dtype", device_type)
    default = dtypes.bfloat16 if device_type == "cpu" else dtypes.float16
    return _state()["dtype"].get(device_type, default)


def set_autocast_dtype(device_type, dtype):
    from .. import dtypes
    device_type = _device_type("set_autocast_dtype", device_type)
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"jitensor.dtype, not {type(dtype).__name__}")
    _state()["dtype"][device_type] = dtype


def is_autocast_enabled(device_type=None):
    """Whether ops on `device_type` (None: CUDA, as torch's) autocast in this thread now."""
    return _device_type("is_autocast_enabled", "cuda" if device_type is None else device_type) \
        in _state()["enabled"]


def set_autocast_enabled(device_type, enabled=None):
    """set_autocast_enabled(device_type, enabled), or the older set_autocast_enabled(enabled)
    for CUDA."""
    if enabled is None:
        device_type, enabled = "cuda", _bool("set_autocast_enabled", device_type, 1)
    device_type = _device_type("set_autocast_enabled", device_type)
    state = _state()
    if _bool("set_autocast_enabled", enabled, 2):
        _check_dtype(device_type, get_autocast_dtype(device_type))
        _install()
        state["enabled"] = state["enabled"] | {device_type}
    else:
        state["enabled"] = state["enabled"] - {device_type}


def is_autocast_cache_enabled():
    return _state()["cache_enabled"]


def set_autocast_cache_enabled(enabled):
    _state()["cache_enabled"] = _bool("set_autocast_cache_enabled", enabled, 1)


def clear_autocast_cache():
    """Drop the casts of leaf tensors cached in this thread's autocast regions."""
    _state()["cache"].clear()


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
    """Whether autocast can run on `device_type`: on both of jitensor's device types."""
    return device_type in _DEVICE_TYPES


class autocast:
    """``with jt.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``, also a
    decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        from .. import cuda, dtypes
        self.device, self._cache_enabled = device_type, cache_enabled
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda" and not cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling", stacklevel=2)
            self._enabled = False
        if self._enabled and self.fast_dtype not in (dtypes.float16, dtypes.bfloat16):
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not "
                          f"supported. Disabling autocast.\n{device_type.upper()} Autocast only "
                          f"supports dtypes of jitensor.bfloat16, jitensor.float16 currently.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            _check_dtype(device_type, self.fast_dtype)
            _install()

    def __enter__(self):
        state = self.__dict__.setdefault("_prev", [])
        s = _state()
        state.append((s["enabled"], s["dtype"].get(self.device), s["cache_enabled"]))
        s["dtype"][self.device] = self.fast_dtype
        s["enabled"] = s["enabled"] | {self.device} if self._enabled else \
            s["enabled"] - {self.device}
        if self._cache_enabled is not None:
            s["cache_enabled"] = bool(self._cache_enabled)
        s["depth"] += 1
        return self

    def __exit__(self, *exc):
        s = _state()
        s["enabled"], dtype, s["cache_enabled"] = self._prev.pop()
        if dtype is None:
            s["dtype"].pop(self.device, None)
        else:
            s["dtype"][self.device] = dtype
        s["depth"] -= 1
        if not s["depth"]:  # the outermost region closed: its casts go (torch's)
            s["cache"].clear()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


# -- the policy's casts ----------------------------------------------------------------------
def _eligible(t, device_type):
    from ..tensor import Tensor
    return isinstance(t, Tensor) and t._device.type == device_type and \
        t._dtype.is_floating_point and t._dtype.name != "float64"


def _cast(t, dtype, s):
    """t in `dtype`; a leaf that requires grad (a parameter) is cast once per region."""
    if t._dtype is dtype:
        return t
    if not (s["cache_enabled"] and t.is_leaf and t.requires_grad):
        return t.to(dtype)
    key = id(t), dtype
    held = s["cache"].get(key)
    if held is None or held[0] is not t:
        held = s["cache"][key] = (t, t.to(dtype))
    return held[1]


def _tensors(args):
    for a in args:
        if a.__class__ in (list, tuple):
            yield from a
        else:
            yield a


_CATEGORY = {device: {name: category for category, names in policy.items()
                     for name in names.split()} for device, policy in POLICY.items()}


def _policy_op(fn, name):
    @functools.wraps(fn)
    def op(*args, **kwargs):
        s = _local.__dict__
        if not s or not s["enabled"]:
            return fn(*args, **kwargs)
        return _run_cast(fn, name, s, args, kwargs)
    return op


def _run_cast(fn, name, s, args, kwargs):
    from .. import dtypes
    found = [t for t in _tensors((*args, *kwargs.values()))
             if any(_eligible(t, d) for d in s["enabled"])]
    category = found and _CATEGORY[found[0]._device.type].get(name)
    if not category:
        return fn(*args, **kwargs)
    device = found[0]._device.type
    if category == "lower":
        target = s["dtype"].get(device, get_autocast_dtype(device))
    elif category == "fp32":
        target = dtypes.float32
    else:
        target = functools.reduce(dtypes.promote_types, (t._dtype for t in found))

    def convert(a):
        if a.__class__ in (list, tuple):
            return a.__class__(convert(b) for b in a)
        return _cast(a, target, s) if _eligible(a, device) else a

    args, kwargs = [convert(a) for a in args], {k: convert(v) for k, v in kwargs.items()}
    enabled, s["enabled"] = s["enabled"], frozenset()  # the op's own calls do not autocast
    try:
        return fn(*args, **kwargs)
    finally:
        s["enabled"] = enabled


_installed = []
_install_lock = threading.Lock()


def _install():
    """Bind the policy's ops, wherever jitensor binds them (its namespaces, Tensor's methods),
    to their autocasting form; run when a region is first enabled, so a program that never
    autocasts calls its ops directly. Outside a region the form calls the op at once."""
    with _install_lock:
        if not _installed:
            _bind_policy()
            _installed.append(True)


def _bind_policy():
    import jitensor
    import jitensor.nn.functional  # noqa: F401 (imported on first use otherwise)

    from ..tensor import Tensor
    names = {name for policy in _CATEGORY.values() for name in policy}
    spaces = [jitensor, jitensor.linalg, jitensor.nn.functional, jitensor.special, Tensor]
    forms = {}
    for space in spaces:
        for name in names:
            fn = vars(space).get(name)
            if callable(fn) and id(fn) not in forms:
                forms[id(fn)] = _policy_op(fn, name)
    modules = [m for n, m in list(sys.modules.items())
               if n == "jitensor" or n.startswith("jitensor.")]
    for space in [*modules, Tensor]:
        for key, value in list(vars(space).items()):
            form = forms.get(id(value))
            if form is not None:
                setattr(space, key, form)


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """torch.amp.custom_fwd for an autograd Function's forward: with `cast_inputs`, inside an
    enabled region the forward's floating-point tensors are cast to it and it runs with
    autocast off; otherwise it runs as the region would run it."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    if cast_inputs is None:
        return fwd

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        s = _state()
        if device_type not in s["enabled"]:
            return fwd(*args, **kwargs)

        def convert(a):
            return a.to(cast_inputs) if _eligible(a, device_type) else a
        enabled, s["enabled"] = s["enabled"], s["enabled"] - {device_type}
        try:
            return fwd(*[convert(a) for a in args], **{k: convert(v) for k, v in kwargs.items()})
        finally:
            s["enabled"] = enabled
    return forward


def custom_bwd(bwd=None, *, device_type):
    """torch.amp.custom_bwd: backward runs as written (jitensor's backward runs outside any
    autocast region)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
