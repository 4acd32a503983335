"""torch.testing: `assert_close` (torch's pairs, tolerances and messages), `make_tensor`, and
the deprecated `assert_allclose`. Values are compared on the host, in NumPy."""
import collections.abc
import math
import warnings

import numpy as np

from . import dtypes
from .tensor import Tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# torch's default (rtol, atol) per dtype; other dtypes compare exactly
_TOLERANCES = {dtypes.float16: (1e-3, 1e-5), dtypes.bfloat16: (1.6e-2, 1e-5),
               dtypes.float32: (1.3e-6, 1e-5), dtypes.float64: (1e-7, 1e-7)}


class _Mismatch(AssertionError):
    pass


def _check_pair(rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")


def _tolerances(*dts, rtol, atol):
    if rtol is not None:
        return rtol, atol
    found = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dts]
    return max(r for r, _ in found), max(a for _, a in found)


def _number(value):
    return isinstance(value, (bool, int, float, complex, np.number, np.bool_))


def _dtype_of(array):
    return dtypes._BY_NP.get(array.dtype)


def _values(x):
    """(array, dtype, device, stride) of a tensor or NumPy array."""
    if isinstance(x, Tensor):
        size = x.dtype.itemsize
        return x.detach().cpu().numpy(), x.dtype, x.device, tuple(s // size for s in
                                                                   x._data.strides)
    return x, _dtype_of(x), "cpu", tuple(s // x.itemsize for s in x.strides)


def _compare_tensors(actual, expected, *, rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride):
    a, adt, adev, astride = _values(actual)
    e, edt, edev, estride = _values(expected)
    checks = [("shape", tuple(actual.shape), tuple(expected.shape))]
    if check_device:
        checks.append(("device", adev, edev))
    if check_dtype:
        checks.append(("dtype", adt if adt is not None else a.dtype,
                       edt if edt is not None else e.dtype))
    if check_stride:
        checks.append(("stride()", astride, estride))
    for name, x, y in checks:
        if x != y:
            if name == "shape" and isinstance(actual, Tensor):
                x, y = actual.shape, expected.shape
            raise _Mismatch(f"The values for attribute '{name}' do not match: {x} != {y}.")
    rtol, atol = _tolerances(adt, edt, rtol=rtol, atol=atol)
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV" or \
            e.dtype.itemsize == 2 and e.dtype.kind in "fV":  # float16, bfloat16: as doubles
        a, e = a.astype(np.float64), e.astype(np.float64)
    elif a.dtype != e.dtype:
        common = np.result_type(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    exact = rtol == 0 and atol == 0
    is_bool = a.dtype.kind == "b"
    if is_bool:
        a, e = a.astype(np.uint8), e.astype(np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == e if exact and a.dtype.kind in "biu" else \
            np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    kind = "equal" if exact else "close"
    if a.ndim == 0:
        got, exp = (bool(a), bool(e)) if is_bool else (a.item(), e.item())
        raise _Mismatch(_scalar_message(got, exp, rtol, atol))
    # torch's make_tensor_mismatch_msg: the greatest differences among the mismatches only
    if a.dtype.kind in "iub":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_diff = np.abs(a - e).reshape(-1)
        abs_diff[close.reshape(-1)] = 0
        if a.dtype.kind == "i":  # torch divides integers into its default float dtype
            rel_diff = abs_diff.astype(np.float32) / np.abs(e).reshape(-1).astype(np.float32)
        else:
            rel_diff = abs_diff / np.abs(e).reshape(-1)
        rel_diff[close.reshape(-1)] = 0
    mismatched, total = int((~close).sum()), close.size
    lines = [f"Tensor-likes are not {kind}!", "",
             f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"]
    for label, diff, tol in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        nan = np.isnan(diff) if diff.dtype.kind == "f" else np.zeros(diff.shape, bool)
        at = int(np.argmax(nan)) if nan.any() else int(np.argmax(diff))  # torch.max: NaN wins
        index = tuple(int(i) for i in np.unravel_index(at, close.shape))
        lines.append(f"Greatest {label} difference: {diff[at].item()} at index {index}" +
                     ("" if exact else f" (up to {tol} allowed)"))
    raise _Mismatch("\n".join(lines))


def _scalar_message(actual, expected, rtol, atol):
    """torch's make_scalar_mismatch_msg."""
    exact = rtol == 0 and atol == 0
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return "\n".join([
        f"Scalars are not {'equal' if exact else 'close'}!", "",
        f"Expected {expected} but got {actual}.",
        f"Absolute difference: {abs_diff}" + ("" if exact else f" (up to {atol} allowed)"),
        f"Relative difference: {rel_diff}" + ("" if exact else f" (up to {rtol} allowed)")])


def _compare_numbers(actual, expected, *, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    kinds = {type(actual), type(expected)}
    floating = bool(kinds & {float, complex})
    rtol, atol = _tolerances(dtypes.float64 if floating else dtypes.int64,
                             rtol=rtol, atol=atol)
    if actual == expected or equal_nan and floating and math.isnan(abs(actual)) and \
            math.isnan(abs(expected)):
        return
    if floating and abs(actual - expected) <= atol + rtol * abs(expected):
        return
    raise _Mismatch(_scalar_message(actual, expected, rtol, atol))


def _compare(actual, expected, path, options):
    try:
        tensor_like = (Tensor, np.ndarray)
        if isinstance(actual, tensor_like) and isinstance(expected, tensor_like):
            _compare_tensors(actual, expected, **options)
        elif _number(actual) and _number(expected):
            numbers = {k: options[k] for k in ("rtol", "atol", "equal_nan", "check_dtype")}
            _compare_numbers(actual, expected, **numbers)
        elif actual is None and expected is None:
            pass
        elif isinstance(actual, collections.abc.Mapping) and \
                isinstance(expected, collections.abc.Mapping):
            if set(actual) != set(expected):
                raise _Mismatch(
                    f"The keys of the mappings do not match:\n"
                    f"Missing keys in the actual mapping: {sorted(set(expected) - set(actual))}\n"
                    f"Additional keys in the actual mapping: "
                    f"{sorted(set(actual) - set(expected))}")
            for key in expected:
                _compare(actual[key], expected[key], path + [key], options)
        elif isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str) and \
                isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str):
            if len(actual) != len(expected):
                raise _Mismatch(f"The length of the sequences mismatch: {len(actual)} != "
                                f"{len(expected)}")
            for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
                _compare(a, e, path + [i], options)
        else:
            raise TypeError(f"No comparison pair was able to handle inputs of type "
                            f"{type(actual)} and {type(expected)}.")
    except _Mismatch as error:
        if path and "The failure occurred for item" not in str(error):
            where = "".join(f"[{p!r}]" for p in path)
            raise _Mismatch(f"{error}\n\nThe failure occurred for item {where}") from None
        raise


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless `actual` and `expected` (tensors, NumPy arrays, numbers, or
    sequences and mappings of them) are close: ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise, with torch's default tolerances for the dtypes (exact for
    integers and bools), after checking shape, device, dtype and (optionally) strides."""
    _check_pair(rtol, atol)  # before anything else, as torch
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_device": check_device,
               "check_dtype": check_dtype, "check_stride": check_stride}
    try:
        _compare(actual, expected, [], options)
    except _Mismatch as error:
        text = str(error)
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise AssertionError(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated in torch in favour of assert_close: `expected` is converted to `actual`'s
    dtype and device first."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead.", FutureWarning, stacklevel=2)
    from .creation import as_tensor
    if not isinstance(actual, Tensor):
        actual = as_tensor(actual)
    if not isinstance(expected, Tensor):
        expected = as_tensor(expected, dtype=actual.dtype, device=actual.device)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of `shape` filled with values drawn uniformly from [low, high) (floats from
    [-9, 9], integers from [-9, 10) or [0, 10) unsigned, bools 0/1), from jitensor's
    generator."""
    from .creation import rand, randint
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    dtype = dtypes.to_dtype(dtype)
    if requires_grad and not dtype.is_floating_point:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if dtype is dtypes.bool_:
        low, high = 0, 2
    elif dtype.is_floating_point:
        low = -9.0 if low is None else low
        high = 9.0 if high is None else high
    else:
        info = np.iinfo(dtype.np)
        low = (0 if dtype is dtypes.uint8 else -9) if low is None else max(math.ceil(low),
                                                                            int(info.min))
        high = 10 if high is None else min(math.ceil(high), int(info.max) + 1)
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low >= high and not (dtype.is_floating_point and low == high):
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    drawn_shape = tuple(shape[:-1]) + (shape[-1] * 2,) if noncontiguous and shape and \
        shape[-1] > 0 else tuple(shape)
    if dtype.is_floating_point:
        result = rand(drawn_shape, dtype=dtype, device=device) * (high - low) + low
    else:
        result = randint(low, high, drawn_shape, device=device).to(dtype)
    if drawn_shape != tuple(shape):
        result = result[..., ::2]
    if exclude_zero:
        replacement = 1 if not dtype.is_floating_point else float(np.finfo(dtype.np).tiny)
        result = result.masked_fill(result == 0, replacement)
    return result.requires_grad_(requires_grad)
