"""Process-wide switches torch keeps at its top level: deterministic algorithms, float32 matmul
precision, warn-always and the inter-op thread count, with torch's signatures, checks and
messages. Each is recorded and reported back; what each changes in jitensor is in its
docstring."""
import warnings

# [mode, warn_only]: lists, so an op checks the switch with one index (as grad mode's)
_deterministic = [False, False]
_matmul_precision = ["highest"]
_warn_always = [False]
_interop = [1, False]  # [threads, whether set_num_interop_threads was called]

_PRECISIONS = ("highest", "high", "medium")
_DEBUG_MODES = ("default", "warn", "error")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms, as torch's: with `mode` True an op without a
    deterministic implementation raises (with `warn_only`, warns) instead of running.

    jitensor records the switch; no op consults it yet. The CUDA kernels that add with
    atomics (the backend's `accumulate` and `take_add`: accumulating index_put_, index_add_,
    scatter_add_ and the backward of indexing) may sum floats in a different order from run to
    run, where torch would raise or pick a deterministic algorithm; `alert_not_deterministic`
    is the check for them to call."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _deterministic[0], _deterministic[1] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic[1]


def set_deterministic_debug_mode(debug_mode):
    """``"default"`` / 0: deterministic algorithms off; ``"warn"`` / 1: on, warn only;
    ``"error"`` / 2: on, raising (torch's three levels)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                               f"{debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _deterministic[0]:
        return 0
    return 1 if _deterministic[1] else 2


def alert_not_deterministic(caller):
    """What an op without a deterministic implementation calls before it runs: raises
    RuntimeError (warns, in warn-only mode) when deterministic algorithms were asked for, with
    torch's message."""
    if _deterministic[0]:
        message = (f"{caller} does not have a deterministic implementation, but you set "
                   f"'jitensor.use_deterministic_algorithms(True)'. You can turn off "
                   f"determinism just for this operation, or you can use the 'warn_only=True' "
                   f"option, if that's acceptable for your application.")
        if _deterministic[1]:
            warnings.warn(message, UserWarning, stacklevel=3)
        else:
            raise RuntimeError(message)


def set_float32_matmul_precision(precision):
    """``"highest"`` (the default), ``"high"`` or ``"medium"``: how precise float32 matrix
    products must be. "high" and "medium" let torch use TF32 or bfloat16 arithmetic; jitensor's
    float32 matmul always computes in full float32, which every level allows, so the setting is
    recorded (and reported by `get_float32_matmul_precision`) and changes no result. Another
    value warns and changes nothing, as in torch."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    return _matmul_precision[0]


def set_warn_always(b):
    """torch's switch for warnings it otherwise gives once per process (TORCH_WARN_ONCE).
    jitensor's own warnings go through Python's `warnings` module, whose filters decide how
    often each shows, so the switch is recorded and reported only."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always[0] = b


def is_warn_always_enabled():
    return _warn_always[0]


def get_num_interop_threads():
    """The threads torch runs independent ops on at once (its inter-op pool). jitensor has no
    such pool: ops run one after another on the calling thread (each op's own kernel uses
    `get_num_threads` threads), so this is 1 unless `set_num_interop_threads` recorded
    another number."""
    return _interop[0]


def set_num_interop_threads(num):
    """Record the inter-op thread count (see `get_num_interop_threads`); as in torch, it may be
    set once, before anything else asks for it to change."""
    if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop[1]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _interop[0], _interop[1] = num, True


def set_flush_denormal(mode):
    """Whether flushing denormal floats to zero could be set to `mode`: jitensor never flushes
    them (its parallel kernels run on Numba's threads, whose floating-point control words one
    call here could not reach), so disabling succeeds and enabling reports False, torch's
    answer on a CPU without the feature."""
    if not isinstance(mode, bool):
        raise TypeError(f"set_flush_denormal(): argument 'mode' must be bool, not "
                        f"{type(mode).__name__}")
    return not mode
