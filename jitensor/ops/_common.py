"""Checks and helpers every op front end shares: devices, dims, broadcasting, `out=`."""
import numpy as np

from .. import dtypes
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import fusion, out_with_grad_error
from ..autograd.versions import bump
from ..creation import allocate
from ..kernels.registry import backend
from ..tensor import Tensor


def same_device(fn, *tensors):
    """The one device of `tensors`, or a RuntimeError naming both devices and the fix."""
    device = tensors[0]._device
    for t in tensors[1:]:
        if t._device != device:
            raise RuntimeError(f"{fn}(): expected all tensors to be on the same device, but found "
                               f"at least two devices, {device} and {t._device}; move one with "
                               f".to({str(device)!r}) or .to({str(t._device)!r})")
    return device


def dense(t):
    """t's buffer, C-contiguous (a copy only where it is not)."""
    return t._data if t._data.flags.c_contiguous else t.contiguous()._data


def dim(d, ndim, fn=None):
    """`d` checked against `ndim` and made non-negative (a 0-d tensor accepts -1 and 0)."""
    n = max(ndim, 1)
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"{fn or 'dim'}(): argument 'dim' must be an int, got {type(d).__name__}")
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return int(d) % n


def dims(ds, ndim, fn=None):
    """A sorted tuple of distinct non-negative dims from None (all), an int, or a sequence."""
    if ds is None:
        return tuple(range(ndim))
    if isinstance(ds, (int, np.integer)) and not isinstance(ds, bool):
        return (dim(ds, ndim, fn),)
    out = tuple(sorted(dim(d, ndim, fn) for d in ds))
    if len(set(out)) != len(out):
        raise RuntimeError(f"{fn or 'dims'}(): dim {tuple(ds)} appears multiple times in the list "
                           f"of dims")
    return out


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes, with torch's message for sizes that do not match."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            n = s[i] if -i <= len(s) else 1
            if n != 1:
                if size != 1 and n != size:
                    raise RuntimeError(
                        f"The size of tensor a ({size}) must match the size of tensor b ({n}) at "
                        f"non-singleton dimension {ndim + i}: shapes {[tuple(x) for x in shapes]} "
                        f"do not broadcast; expand or reshape one of them")
                size = n
        out.append(size)
    return tuple(out)


def check_writeable(fn, t):
    """Refuse to write `t` when NumPy marks its memory read-only: a read-only array's given to
    from_numpy (np.frombuffer's, np.broadcast_to's). torch writes it anyway, which its
    from_numpy warns is undefined behavior; Numba's kernels cannot (a typing error)."""
    data = t._data
    if isinstance(data, np.ndarray) and not data.flags.writeable:
        raise RuntimeError(f"{fn}: cannot write into this tensor: its memory is read-only (it "
                           f"came from a read-only NumPy array); copy it first with .clone()")


def check_out(fn, out, shape, dtype, device, writes=True):
    """`out` must be a writeable tensor of exactly `shape` on `device` that `dtype` results can
    be cast into (torch's rule: no float result into an integer tensor, no int result into
    bool). It may overlap the inputs: see docs/design.md, "Writes that overlap their inputs".
    `writes`: the caller writes out next, so its version counter is bumped (as torch's out=
    does: autograd then sees a saved tensor overwritten through out=)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be a Tensor, got {type(out).__name__}")
    check_writeable(f"{fn}()", out)
    if fusion[0] is not None:  # inside a compiled call the pending fused expressions may read
        from ..fusion import flush  # out: they run first (jitensor/fusion.py)
        flush()
    if out._device != device:
        raise RuntimeError(f"{fn}(): out= is on {out._device} but the result is on {device}; "
                           f"pass an out tensor on {device}")
    if tuple(out._data.shape) != tuple(shape):
        raise RuntimeError(f"{fn}(): out= has shape {tuple(out._data.shape)} but the result has "
                           f"shape {tuple(shape)}; pass an out tensor of that shape")
    if not dtypes.can_cast(dtype, out._dtype):
        raise RuntimeError(f"{fn}(): result type {dtype.name} can't be cast to the desired output "
                           f"type {out._dtype.name} of out=; pass out with dtype {dtype.name}")
    if writes:
        bump(out._data)


def output(fn, out, shape, dtype, device):
    """The tensor to write a result of `shape` and `dtype` into: `out` once checked, or new."""
    if out is None:
        return allocate(shape, dtype, device)
    check_out(fn, out, shape, dtype, device)
    return out


def check_exact_out(fn, out, dtype):
    """Ops whose out= must have exactly the result dtype (torch's rule for amax, argmax, ...)."""
    if out is not None and isinstance(out, Tensor) and out._dtype is not dtype:
        raise RuntimeError(f"{fn}(): expected out tensor to have dtype {dtype.name}, but got "
                           f"{out._dtype.name} instead; pass out with dtype={dtype}")


def check_write_out(fn, out, result, exact=False):
    """write_out's checks of `out` for `result`, without writing."""
    if exact:
        check_exact_out(fn, out, result._dtype)
    shape = result._data.shape
    # (check_out's checks; an empty out of another shape is resized, as torch's)
    check_out(fn, out, out._data.shape if isinstance(out, Tensor) and not out._data.size
              else shape, result._dtype, result._device, writes=False)
    if result.requires_grad or out.requires_grad and is_grad_enabled():
        raise out_with_grad_error(fn)


def write_out(fn, out, result, exact=False):
    """`result`, or (given out=) out holding its values, as torch's out= of composed ops:
    out must have the result's dtype (`exact`) or one it casts into, and its shape, unless it
    is empty (then it is resized; torch also resizes one with elements, a deprecated form that
    would detach a view from its base here). The result is computed first, so a failed check
    leaves out as it was and an out aliasing an input is harmless."""
    if out is None:
        return result
    check_write_out(fn, out, result, exact)
    if out._data.shape != result._data.shape:
        out._data = allocate(result._data.shape, out._dtype, out._device)._data
    backend(out._device).copy(out._data, result._data)
    bump(out._data)
    return out


def shares_memory(a, b):
    return np.may_share_memory(a._data, b._data)


def in_place(op):
    """The in-place method of out-of-place `op`: the result is computed first (every check
    passes before self changes), then copied into self, which must have its shape."""
    def method(self, *args, **kwargs):
        result = op(self, *args, **kwargs)
        if result.shape != self.shape:
            raise RuntimeError(f"{op.__name__}_(): output with shape {list(self.shape)} doesn't "
                               f"match the broadcast shape {list(result.shape)}")
        if not dtypes.can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"{op.__name__}_(): result type {result.dtype} can't be cast to "
                               f"the desired output type {self.dtype}; use the out-of-place "
                               f"{op.__name__}()")
        backend(self._device).copy(self._data, result._data)
        return self
    method.__name__ = method.__qualname__ = op.__name__ + "_"
    return method


def write_pair(fn, out, pair, cls, what="a (values, indices) pair of tensors", name=None):
    """`cls(*pair)`, or with out= the two tensors holding it: both outs are checked (exact
    dtypes, as torch) before either is written. `what`, `name`: the TypeError's wording."""
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"{name or fn}(): argument 'out' must be {what}, not "
                            f"{type(out).__name__}")
        pair = write_each(fn, out, pair)
    return cls(*pair)


def write_each(fn, outs, results):
    """Each of `results` written into its tensor of `outs` (exact dtypes, as torch): every out
    is checked before any is written."""
    for t, r in zip(outs, results, strict=True):
        check_write_out(fn, t, r, exact=True)
    return [write_out(fn, t, r, exact=True) for t, r in zip(outs, results, strict=True)]
