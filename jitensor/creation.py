"""Creation routines with torch's signatures: allocate through the backend, then fill through a
kernel. `empty` and its relatives only allocate: no kernel runs unless the debug switch
(`set_debug_empty`, env JITENSOR_DEBUG_EMPTY=1) asks for NaN / max-value poison."""
import inspect
import math
import operator
import os

import numpy as np

from . import dtypes
from .autograd.versions import bump, reset
from .device import CPU, to_device
from .dtypes import to_dtype
from .kernels.registry import backend
from .random import default_generator
from .tensor import (
    _CHANNELS_LAST,
    Size,
    Tensor,
    _channels_last_rank,
    _new,
    _wrap,
    check_fill_value,
    check_requires_grad,
    contiguous_format,
    preserve_format,
    sparse_coo,
    strided,
)

_cpu = backend(CPU)
_np_empty, _default = _cpu.empty, dtypes._default  # bound once: the hottest call reads them
_debug_empty = [os.environ.get("JITENSOR_DEBUG_EMPTY", "") not in ("", "0")]
_default_device = [None]  # set_default_device's device (None: never set, or reset)
# Whether a call without options must take the general path: the debug switch is on, or a
# default device other than the CPU is set. The fast paths read this one flag, so the option
# costs them nothing.
_general = [_debug_empty[0]]


def set_debug_empty(enabled):
    """Fill every `empty` tensor with NaN (floats) or the dtype's max (integers, True for bool)
    so that reads of never-written memory show, like torch's fill_uninitialized_memory."""
    _debug_empty[0] = bool(enabled)
    _set_general()


def get_debug_empty():
    return _debug_empty[0]


def _set_general():
    d = _default_device[0]
    _general[0] = _debug_empty[0] or d is not None and d.type != "cpu"


def set_default_device(device):
    """Make the creation routines that take a `device` (tensor, as_tensor, empty, zeros, ones,
    full, arange, linspace, eye, rand, randn, randint; not the *_like ones, which follow their
    input) put tensors on `device` when none is given; None goes back to the CPU. As in torch,
    a CUDA device is checked when a tensor is made there, not here. Unlike torch's, the setting
    is process-wide, not per thread."""
    from .device import device as device_cls
    if device is None or isinstance(device, device_cls):
        parsed = device
    elif isinstance(device, int) and not isinstance(device, bool):
        parsed = device_cls("cuda", device)
    elif isinstance(device, str):
        parsed = device_cls(device)
    else:
        raise TypeError(f"set_default_device(): expected a device, a string or an int, got "
                        f"{type(device).__name__}")
    _default_device[0] = parsed
    _set_general()


def get_default_device():
    """The device tensors are created on when no device is given (a CUDA one with its index)."""
    d = _default_device[0]
    return CPU if d is None else to_device(d)


def _device(device):
    """`device` parsed; None is the default device (the CPU unless set_default_device)."""
    if device is None:
        device = _default_device[0]
        if device is None:
            return CPU
    return to_device(device)


def _poison(dtype):
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    return True if dtype.category == 0 else int(np.iinfo(dtype.np).max)


# -- argument checks --------------------------------------------------------------------------
def _shape(size, fn):
    """A tuple of non-negative ints from varargs, one sequence, or a jt.Size."""
    if len(size) == 1 and size[0].__class__ is tuple:  # empty((2, 3)): checked as fast
        size = size[0]
    for s in size:
        if s.__class__ is not int or s < 0:
            break
    else:
        return size
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
        if isinstance(size, Tensor) or not hasattr(size, "__iter__"):
            raise TypeError(f"{fn}(): argument 'size' must be a tuple of ints, got "
                            f"{type(size).__name__}; write e.g. {fn}(2, 3) or {fn}((2, 3))")
        size = tuple(size)
    for pos, s in enumerate(size):
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{fn}(): argument 'size' must be a tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {pos}: {s!r}")
        if operator.index(s) < 0:
            raise RuntimeError(f"{fn}(): trying to create tensor with negative dimension {s}: "
                               f"{list(size)}; sizes must be >= 0")
    return tuple(map(operator.index, size))


def _keyword_size(fn, size, keyword):
    """The size of a `*size` routine, which torch also takes as ``size=``."""
    if keyword.keys() - {"size"}:
        raise TypeError(f"{fn}() got an unexpected keyword argument "
                        f"'{min(keyword.keys() - {'size'})}'")
    if "size" not in keyword:
        return size
    if size:
        raise TypeError(f"{fn}() got multiple values for argument 'size'")
    return (keyword["size"],)


def _check_layout(layout, memory_format=None, fn="", allow_preserve=False):
    if layout is not None and layout is not strided:
        raise RuntimeError(f"{fn}(): layout={layout!r} is not supported; jitensor tensors are "
                           f"dense (layout=jitensor.strided), or sparse COO ones made by "
                           f"zeros/empty(..., layout=jitensor.sparse_coo) or "
                           f"sparse_coo_tensor")
    ok = (None, contiguous_format, preserve_format) if allow_preserve else (None, contiguous_format)
    if memory_format not in ok and memory_format not in _CHANNELS_LAST:
        raise RuntimeError(f"{fn}(): memory_format={memory_format!r} is not supported; use "
                           f"{' or '.join(map(repr, ok[1:]))}")


def _check_out(fn, out, shape, dtype, device):
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be a Tensor, got {type(out).__name__}")
    problems = []
    if tuple(out.shape) != tuple(shape):
        problems.append(f"shape {tuple(out.shape)} instead of {tuple(shape)}")
    if dtype is not None and out.dtype is not dtype:
        problems.append(f"dtype {out.dtype} instead of {dtype}")
    if device is not None and out.device != device:
        problems.append(f"device {out.device} instead of {device}")
    if problems:
        raise RuntimeError(f"{fn}(): out= has {', '.join(problems)}; pass an out tensor that "
                           f"matches, or drop out= to get a new tensor")


def allocate(shape, dtype, device, requires_grad=False):
    """An uninitialised tensor: the backend's allocator and nothing else."""
    try:
        buf = backend(device).empty(shape, dtype.np)
    except (MemoryError, ValueError) as e:
        nbytes = math.prod(shape) * dtype.itemsize
        raise MemoryError(f"cannot allocate {nbytes} bytes for a tensor of shape {tuple(shape)} "
                          f"and dtype {dtype} on {device} ({e})") from None
    return _wrap(buf, dtype, device, requires_grad)


def _target(fn, size, out, dtype, layout, device, requires_grad, pin_memory,
            memory_format=None, default_dtype=None):
    """Check every argument, then return `out` or a new uninitialised tensor."""
    shape = _shape(size, fn)
    if dtype is not None:
        dtype = to_dtype(dtype)
    elif out is None:
        dtype = default_dtype or dtypes._default[0]
    device = _device(device)
    if layout is not None or memory_format is not None or pin_memory or out is not None:
        _check_layout(layout, memory_format, fn)
        if pin_memory:
            _check_pin(device)
        if out is not None:
            _check_out(fn, out, shape, dtype, device)
            check_requires_grad(requires_grad, out.dtype)
            if fn != "empty":  # the routine writes out: a write bumps its version, as torch's
                bump(out._data)
            return out
    if requires_grad:
        check_requires_grad(requires_grad, dtype)
    if memory_format in _CHANNELS_LAST:
        t = _channels_last(shape, dtype, device, memory_format)
        return t.requires_grad_() if requires_grad else t
    return allocate(shape, dtype, device, requires_grad)


def _channels_last(shape, dtype, device, memory_format):
    """An uninitialised NCHW (NCDHW) tensor stored channels innermost."""
    order = _channels_last_rank(memory_format, len(shape))
    stored = allocate([shape[d] for d in order], dtype, device)
    return stored.permute([order.index(d) for d in range(len(shape))])


def _check_pin(device):
    if device.type != "cpu":
        raise RuntimeError(f"pin_memory=True applies to CPU tensors only, got device={device}")
    from . import cuda
    cuda.init()  # raises "CUDA is not available: ..." without a GPU


# -- empty / zeros / ones / full --------------------------------------------------------------
def _common(size):
    """A new tensor for the commonest call (sizes as plain ints, every option at its default:
    default dtype, CPU), built without the general argument checks; None for any other call."""
    if _general[0]:
        return None
    d = dtypes._default[0]
    try:
        buf = _cpu.empty(size, d.np)  # NumPy rejects negative and non-integer sizes itself
    except Exception:
        return None  # the general path explains what is wrong
    t = _new(Tensor)
    t._data, t._dtype, t._device, t._meta = buf, d, CPU, None
    return t


def _with_signature(full):
    """Present a fast `*size, **options` front end with the full keyword signature of `full`."""
    def wrap(fast):
        fast.__signature__ = inspect.signature(full)
        fast.__doc__ = full.__doc__
        return fast
    return wrap


def _empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False, memory_format=None, **keyword):
    """An uninitialised tensor: allocation only, no kernel runs (its values are whatever the
    memory held; write every element before reading any)."""
    size = _keyword_size("empty", size, keyword)
    if layout is sparse_coo:
        return _sparse_zeros("empty", size, out, dtype, device, requires_grad)
    t = _target("empty", size, out, dtype, layout, device, requires_grad, pin_memory, memory_format)
    if _debug_empty[0]:
        backend(t._device).fill(t._data, _poison(t._dtype))
    return t


@_with_signature(_empty)
def empty(*size, **options):
    # Keyword defaults cost ~0.2 µs a call, as much as np.empty itself: skip them when unused.
    # (_common spelled out: one Python call less is a tenth of the time.)
    if not (options or _general[0]):
        d = _default[0]
        try:
            buf = _np_empty(size, d.np)
        except Exception:
            return _empty(*size)  # the general path explains what is wrong
        t = _new(Tensor)
        t._data, t._dtype, t._device, t._meta = buf, d, CPU, None
        return t
    if options.keys() <= _DEVICE_DTYPE and not _debug_empty[0]:  # empty(..., device=, dtype=)
        dtype = options.get("dtype")
        return allocate(_shape(size, "empty"), _default[0] if dtype is None else to_dtype(dtype),
                        _device(options.get("device")))
    return _empty(*size, **options)


_DEVICE_DTYPE = {"device", "dtype"}


# The fill value in the Python type each dtype's kernel is compiled for (one signature each).
_ZERO = {d: (False, 0, 0.0, 0j)[d.category] for d in dtypes.ALL}
_ONE = {d: (True, 1, 1.0, 1 + 0j)[d.category] for d in dtypes.ALL}


def _zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False, **keyword):
    """A tensor of zeros: allocation, then the fill kernel."""
    size = _keyword_size("zeros", size, keyword)
    if layout is sparse_coo:
        return _sparse_zeros("zeros", size, out, dtype, device, requires_grad)
    t = _target("zeros", size, out, dtype, layout, device, requires_grad, pin_memory)
    backend(t._device).fill(t._data, _ZERO[t._dtype])
    return t


@_with_signature(_zeros)
def zeros(*size, **options):
    t = None if options else _common(size)
    if t is None:
        return _zeros(*size, **options)
    _cpu.fill(t._data, _ZERO[t._dtype])
    return t


def _ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **keyword):
    """A tensor of ones: allocation, then the fill kernel."""
    size = _keyword_size("ones", size, keyword)
    t = _target("ones", size, out, dtype, layout, device, requires_grad, pin_memory)
    backend(t._device).fill(t._data, _ONE[t._dtype])
    return t


@_with_signature(_ones)
def ones(*size, **options):
    t = None if options else _common(size)
    if t is None:
        return _ones(*size, **options)
    _cpu.fill(t._data, _ONE[t._dtype])
    return t


def _scalar_value(value, fn):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(f"{fn}(): fill_value must be a number or a one-element tensor, "
                               f"got shape {tuple(value.shape)}")
        value = value.item()
    return value.item() if isinstance(value, np.generic) else value


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """A tensor filled with `fill_value`; without `dtype` a bool gives bool, an int int64 and
    a float the default dtype, as in torch."""
    fill_value = _scalar_value(fill_value, "full")
    inferred = (dtypes.result_type(fill_value)
                if isinstance(fill_value, (bool, int, float, complex)) else None)
    t = _target("full", (size,), out, dtype, layout, device, requires_grad, pin_memory,
                default_dtype=inferred)
    backend(t._device).fill(t._data, check_fill_value(fill_value, t._dtype))
    return t


# -- *_like -----------------------------------------------------------------------------------
def _sparse_zeros(fn, size, out, dtype, device, requires_grad):
    """zeros/empty(..., layout=sparse_coo): a sparse COO tensor without entries."""
    if out is not None:
        raise RuntimeError(f"{fn}(): out= is not supported with layout=jitensor.sparse_coo")
    from .ops.sparse import sparse_coo_tensor
    return sparse_coo_tensor(_shape(size, fn), dtype=dtype, device=device,
                             requires_grad=requires_grad)


def _like(fn, input, dtype, layout, device, requires_grad, memory_format):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got {type(input).__name__}")
    if input.is_sparse or layout is sparse_coo:
        if fn not in ("empty_like", "zeros_like"):
            raise NotImplementedError(f"{fn}() of a sparse COO tensor is not implemented (it "
                                      f"would have no zeros); zeros_like and empty_like are")
        return _sparse_zeros(fn, input.shape, None, dtype or input.dtype, device or input.device,
                             requires_grad)
    _check_layout(layout, memory_format, fn, allow_preserve=True)
    dtype = input.dtype if dtype is None else to_dtype(dtype)
    device = input.device if device is None else to_device(device)
    check_requires_grad(requires_grad, dtype)
    if device == input.device and memory_format in (None, preserve_format):
        t = input._empty_like(dtype)
    elif memory_format in _CHANNELS_LAST:
        t = _channels_last(input._data.shape, dtype, device, memory_format)
    else:
        t = allocate(input._data.shape, dtype, device)
    if requires_grad:
        t.requires_grad = True
    return t


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=preserve_format):
    t = _like("empty_like", input, dtype, layout, device, requires_grad, memory_format)
    if _debug_empty[0] and not t.is_sparse:
        backend(t._device).fill(t._data, _poison(t._dtype))
    return t


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=preserve_format):
    fill_value = _scalar_value(fill_value, "full_like")
    t = _like("full_like", input, dtype, layout, device, requires_grad, memory_format)
    backend(t._device).fill(t._data, check_fill_value(fill_value, t._dtype))
    return t


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=preserve_format):
    if getattr(input, "is_sparse", False) or layout is sparse_coo:
        return _like("zeros_like", input, dtype, layout, device, requires_grad, memory_format)
    return full_like(input, 0, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad, memory_format=memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=preserve_format):
    return full_like(input, 1, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad, memory_format=memory_format)


# -- from data --------------------------------------------------------------------------------
def _host_array(data):
    """(NumPy array, inferred jt dtype) for tensor(): torch's inference from Python data."""
    if isinstance(data, Tensor):
        return data._host(), data.dtype
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        return arr, _numpy_dtype(arr.dtype, "tensor")
    try:
        arr = np.array(data)  # a copy: buffers (array.array, torch tensors) are not shared
    except (ValueError, OverflowError) as e:
        raise ValueError(f"tensor(): could not build a tensor from the data: {e}; nested lists "
                         f"must be rectangular and hold only bools, ints and floats") from None
    kind = arr.dtype.kind
    if kind == "b":
        return arr, dtypes.bool_
    if kind in "iu":
        return arr, dtypes.int64
    if kind == "f":
        return arr, dtypes.get_default_dtype()
    if kind == "c":
        return arr, dtypes.get_default_dtype().to_complex()
    raise TypeError(f"tensor(): could not infer a dtype from {type(data).__name__} data "
                    f"(NumPy made {arr.dtype}); pass nested lists of bools, ints, floats or "
                    f"complex numbers")


def _numpy_dtype(np_dtype, fn):
    if not np_dtype.isnative:
        raise TypeError(f"{fn}(): the array is not in native byte order ({np_dtype}); "
                        f"convert it with arr.astype(arr.dtype.newbyteorder('='))")
    try:
        return to_dtype(np_dtype)
    except TypeError:
        raise TypeError(f"{fn}(): can't convert np.ndarray of type {np_dtype}. The only supported "
                        f"types are: {', '.join(d.name for d in dtypes.ALL)}") from None


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested lists, scalars, NumPy arrays, tensors)."""
    dtype = None if dtype is None else to_dtype(dtype)
    if dtype is dtypes.uint64 and not isinstance(data, (np.ndarray, np.generic, Tensor)):
        try:  # (NumPy makes Python ints past int64's range float64s, 53 bits)
            data = np.array(data, np.uint64)
        except OverflowError as e:
            raise RuntimeError(f"tensor(): {e}; uint64 takes integers 0 to 2**64 - 1") from None
    host, inferred = _host_array(data)
    dtype = inferred if dtype is None else dtype
    device = _device(device)
    check_requires_grad(requires_grad, dtype)
    if pin_memory:
        _check_pin(device)
    # Python scalars are checked, as torch does: NaN, inf and floats out of range into an integer
    # dtype raise (NumPy arrays and tensors convert as a C cast does, as in torch)
    checked = host.dtype.kind in "iub" or host.dtype.kind == "f" and dtype.category == 1
    if checked and not isinstance(data, (np.ndarray, Tensor)) and host.size:
        for bound in (host.min(), host.max()):  # (min and max are NaN when any element is)
            check_fill_value(bound.item(), dtype)
    fresh = not isinstance(data, (np.ndarray, np.generic, Tensor))
    if fresh and host.dtype == dtype.np and device.type == "cpu":
        buf = host  # np.asarray already made a private copy in the right dtype
    elif dtype in dtypes.NARROW:  # rounded to float32 first, then to nearest even, as torch's
        narrow = host.astype(np.float32).astype(dtype.np)
        buf = narrow if device.type == "cpu" else backend(device).from_numpy(narrow)
    else:
        cpu = allocate(host.shape, dtype, CPU)
        backend(CPU).copy(cpu._data, host)
        buf = cpu._data if device.type == "cpu" else backend(device).from_numpy(cpu._data)
    return _wrap(buf, dtype, device, bool(requires_grad))


def as_tensor(data, dtype=None, device=None):
    """`data` as a tensor, sharing memory when it already is one (or a NumPy array) of the
    requested dtype and device."""
    dtype = None if dtype is None else to_dtype(dtype)
    if device is None:  # once set_default_device was called, torch passes its device here
        device = _default_device[0]
    device = None if device is None else to_device(device)
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray) and (device is None or device.type == "cpu") \
            and (dtype is None or dtype.np == data.dtype):
        try:
            return from_numpy(data)
        except ValueError:  # negative strides: fall through to a copy
            pass
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """A CPU tensor sharing memory with `ndarray`: writes through either show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray, got {type(ndarray).__name__}")
    dtype = _numpy_dtype(ndarray.dtype, "from_numpy")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("from_numpy(): at least one stride in the given numpy array is negative; "
                         "pass arr.copy() instead (jitensor tensors do not have negative strides)")
    return _wrap(ndarray, dtype, CPU)


def from_dlpack(ext):
    """A tensor sharing memory with `ext`: an object with __dlpack__ (NumPy, torch, CuPy, JAX
    arrays, on the CPU or CUDA) or __cuda_array_interface__ (numba device arrays), or a DLPack
    capsule."""
    if isinstance(ext, Tensor):
        return ext
    face = getattr(ext, "__cuda_array_interface__", None)
    if face is not None:
        from .kernels.cuda import streams
        t = _from_cuda(face, ext)
        # the producer's stream: v3 names it (None: no wait needed); before v3 (torch) the
        # producer works on the legacy default stream
        streams.follow(face.get("stream") if face.get("version", 0) >= 3 else 1)
        return t
    if type(ext).__name__ == "PyCapsule":
        capsule = ext
    elif not hasattr(ext, "__dlpack__"):
        raise TypeError(f"from_dlpack(): expected an object with __dlpack__ or "
                        f"__cuda_array_interface__, or a DLPack capsule, got {type(ext).__name__}")
    elif getattr(ext, "__dlpack_device__", lambda: (1, 0))()[0] == 1:
        try:
            return from_numpy(np.from_dlpack(ext))
        except (BufferError, RuntimeError):  # NumPy reads no bfloat16: the capsule, here
            capsule = ext.__dlpack__()
    else:  # a CUDA producer: it orders its work before what our current stream queues next
        from .kernels.cuda import streams
        capsule = ext.__dlpack__(stream=streams.dlpack_handle())
    from . import dlpack
    face, (kind, index), owner = dlpack.read(capsule)
    if kind == dlpack.CUDA:
        return _from_cuda(face, owner, index)
    if kind != dlpack.CPU:
        raise BufferError(f"from_dlpack(): DLPack device type {kind} is not supported (CPU and "
                          f"CUDA are); copy the data to the host first")
    return from_numpy(np.asarray(_HostMemory(face, owner)).view(face["dtype"]))


class _HostMemory:
    """Host memory from a DLPack capsule, as NumPy reads it; holds the capsule's owner."""

    def __init__(self, face, owner):
        self.__array_interface__, self.owner = face, owner


def _from_cuda(face, owner, index=0):
    device = to_device(f"cuda:{index}")
    dtype = _numpy_dtype(np.dtype(face["typestr"]), "from_dlpack")
    return _wrap(backend(device).memory.foreign(face, owner), dtype, device)


# -- ranges -----------------------------------------------------------------------------------
def _number(x, fn, name):
    if isinstance(x, Tensor):
        x = x.item()
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{fn}(): argument '{name}' must be a number, got {type(x).__name__}")
    return x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values start, start + step, ... below `end`; int64 unless an argument is a float."""
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v, "arange", n) for v, n in ((start, "start"), (end, "end"),
                                                             (step, "step")))
    if dtype is not None and to_dtype(dtype) is dtypes.int64 and all(
            map(math.isfinite, (start, end, step))):
        start, end, step = int(start), int(end), int(step)  # torch counts int64 ranges in int64
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if not all(map(math.isfinite, (start, end, step))):
        raise RuntimeError(f"arange(): unsupported range {start} -> {end} (step {step}); "
                           f"bounds must be finite")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange(): upper bound and lower bound inconsistent with step sign: "
                           f"start={start}, end={end}, step={step}")
    floats = any(isinstance(v, float) for v in (start, end, step))
    inferred = dtypes.get_default_dtype() if floats else dtypes.int64
    n = -((start - end) // step) if isinstance(start + end + step, int) \
        else math.ceil((end - start) / step)
    t = _target("arange", (n,), out, dtype, layout, device, requires_grad, False,
                default_dtype=inferred)
    if t.dtype is dtypes.bool_:  # (dtype= or out=)
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')  # as torch
    # like torch, a narrower integer output takes start and step truncated (its length comes from
    # the exact bounds above)
    kind = float if t.dtype.is_floating_point else int
    backend(t._device).arange(t._data, kind(start), kind(step))
    return t


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`steps` values evenly spaced from `start` to `end` inclusive."""
    start, end = float(_number(start, "linspace", "start")), float(_number(end, "linspace", "end"))
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be a non-negative int, got {steps!r}")
    t = _target("linspace", (steps,), out, dtype, layout, device, requires_grad, False)
    if steps == 1:
        backend(t._device).fill(t._data, check_fill_value(start, t._dtype))
    elif steps:
        if t.dtype.is_floating_point:  # computed in the output's type, as torch does
            start, end = t.dtype.np.type(start), t.dtype.np.type(end)
        else:  # torch truncates the bounds to the integer dtype, then steps in double
            start, end = float(int(start)), float(int(end))
        backend(t._device).linspace(t._data, start, end)
    return t


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """An n x m matrix with ones on the diagonal."""
    m = n if m is None else m
    t = _target("eye", (n, m), out, dtype, layout, device, requires_grad, False)
    if t.numel():
        backend(t._device).eye(t._data)
    return t


# -- random -----------------------------------------------------------------------------------
def _random(fn, size, generator, out, dtype, layout, device, requires_grad, pin_memory):
    t = _target(fn, size, out, dtype, layout, device, requires_grad, pin_memory)
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError(f"{fn}(): dtype must be floating point or complex, got {t.dtype}")
    return t, (generator or default_generator)


def _draw(t, draw):
    """Fill t by `draw(buffer)`; a complex t's real and imaginary parts are drawn as the pairs of
    a float buffer (each part apart, as torch's)."""
    if not t._dtype.is_complex:
        draw(t._data)
        return
    parts = np.empty(t._data.shape + (2,), t._dtype.to_real().np)
    draw(parts)
    _cpu.copy(t._data, parts.view(t._dtype.np)[..., 0])


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, **keyword):
    """Uniform samples from [0, 1) (of a complex dtype: each part)."""
    size = _keyword_size("rand", size, keyword)
    t, g = _random("rand", size, generator, out, dtype, layout, device, requires_grad, pin_memory)
    _draw(t, lambda buf: backend(t._device).uniform(buf, *g.take(buf.size), 0.0, 1.0))
    return t


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, **keyword):
    """Standard normal samples (of a complex dtype: each part of variance 1/2, as torch's)."""
    size = _keyword_size("randn", size, keyword)
    t, g = _random("randn", size, generator, out, dtype, layout, device, requires_grad, pin_memory)
    std = math.sqrt(0.5) if t._dtype.is_complex else 1.0
    _draw(t, lambda buf: backend(t._device).normal(buf, *g.take(2 * buf.size), 0.0, std))
    return t


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    """Integers drawn uniformly from [low, high); ``randint(high, size)`` or
    ``randint(low, high, size)``."""
    if size is None and isinstance(high, (tuple, list, Size)):
        low, high, size = 0, low, high  # randint(high, size)
    elif high is None:
        low, high = 0, low  # randint(high, size=...)
    if size is None:
        raise TypeError("randint(): missing argument 'size'; write randint(high, (n,)) or "
                        "randint(low, high, (n,))")
    low, high = (_number(v, "randint", n) for v, n in ((low, "low"), (high, "high")))
    if not low < high:
        raise RuntimeError(f"randint(): expects 'low' to be less than 'high', but got "
                           f"low={low} >= high={high}")
    t = _target("randint", (size,), out, dtype, layout, device, requires_grad, pin_memory,
                default_dtype=dtypes.int64)
    if not t.dtype.is_floating_point:
        info = np.iinfo(t.dtype.np) if t.dtype is not dtypes.bool_ else None
        lo, hi = (0, 1) if info is None else (info.min, info.max)
        if not (lo <= low and high - 1 <= hi):
            raise RuntimeError(f"randint(): [{low}, {high}) is out of bounds for dtype "
                               f"{t.dtype} ({lo}..{hi}); pick a wider dtype")
    g = generator or default_generator
    backend(t._device).randint(t._data, *g.take(t.numel()), int(low), int(high))
    return t


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=preserve_format):
    t = _like("rand_like", input, dtype, layout, device, requires_grad, memory_format)
    rand(t.shape, out=t)
    reset(t._data)
    return t


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=preserve_format):
    t = _like("randn_like", input, dtype, layout, device, requires_grad, memory_format)
    randn(t.shape, out=t)
    reset(t._data)
    return t


# -- torch.range, asarray, frombuffer, empty_permuted -----------------------------------------
def range_inclusive(start, end, step=1, *, out=None, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """start, start + step, ... up to `end` included; the default float dtype whatever the
    arguments' types. Deprecated, as torch's (with its warning): use arange."""
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    start, end, step = (_number(v, "range", n) for v, n in ((start, "start"), (end, "end"),
                                                            (step, "step")))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(map(math.isfinite, (start, end, step))):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    t = _target("range", (n,), out, dtype, layout, device, requires_grad, False,
                default_dtype=dtypes.get_default_dtype())
    kind = float if t.dtype.is_floating_point else int
    backend(t._device).arange(t._data, kind(start), kind(step))
    return t


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor over the memory of an object with the buffer protocol (bytes,
    bytearray, array.array, memoryview, ...): `count` elements of `dtype` (all: -1) from byte
    `offset`. Writes through the tensor change the buffer, as torch's; a read-only buffer
    (bytes) is copied, where torch warns that writes would change it."""
    dtype = to_dtype(dtype)
    view = memoryview(buffer)
    length, item = view.nbytes, dtype.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % item:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({item})")
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    raw = np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view,
                        np.uint8, count * item, offset)
    data = raw.view(np.bool_ if dtype is dtypes.bool_ else dtype.np)
    if view.readonly:  # (bytes: the tensor could not be written; torch's would write through)
        data = data.copy()
    t = _wrap(data, dtype, CPU)
    if requires_grad:
        check_requires_grad(requires_grad, dtype)
        t.requires_grad_()
    return t


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """A 1-D CPU tensor of `size` elements of `dtype` (the default dtype) mapped from the file
    `filename`: with shared=True writes go to the file, which is created or grown to fit;
    otherwise the mapping is private (copy on write) and the file must hold the elements."""
    dtype = dtypes.get_default_dtype() if dtype is None else to_dtype(dtype)
    if device is not None and to_device(device).type != "cpu":
        raise RuntimeError(f"from_file(): only CPU tensors can be mapped from a file, not "
                           f"device={device!r}; map it, then move it with .to({device!r})")
    nbytes = size * dtype.itemsize
    if shared:
        with open(filename, "ab"):  # created if missing
            pass
        if os.path.getsize(filename) < nbytes:
            os.truncate(filename, nbytes)
    elif not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file "
                           "or directory (2)")
    elif os.path.getsize(filename) < nbytes:
        raise RuntimeError(f"file <{filename}> size <{os.path.getsize(filename)}> is smaller "
                           f"than the required mapping size <{nbytes}>")
    element = np.bool_ if dtype is dtypes.bool_ else dtype.np
    data = np.memmap(filename, element, "r+" if shared else "c", shape=(size,)) \
        .view(np.ndarray) if size else np.empty(0, element)  # (kernels take plain ndarrays)
    t = _wrap(data, dtype, CPU)
    if requires_grad:
        check_requires_grad(requires_grad, dtype)
        t.requires_grad_()
    return t


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """`obj` as a tensor, sharing its memory where it can (a tensor of the same dtype and
    device, a NumPy array, an object with the buffer protocol); copy=True always copies,
    copy=False raises ValueError where a copy is needed, as torch's."""
    dtype = None if dtype is None else to_dtype(dtype)
    device = None if device is None else to_device(device)
    if isinstance(obj, Tensor):
        result = obj
        if dtype is not None and dtype is not obj.dtype or \
                device is not None and device != obj.device:
            if copy is False:
                raise ValueError(f"can't alias tensor with dtype {obj.dtype} into dtype "
                                 f"{dtype or obj.dtype} on {device or obj.device}.")
            result = obj.to(device or obj.device, dtype or obj.dtype)
        elif copy:
            result = obj.clone()
    elif isinstance(obj, (np.ndarray, np.generic)):
        array = np.asarray(obj)
        if array.ndim == 0 or copy or any(s < 0 for s in array.strides):
            if copy is False:
                raise ValueError("can't alias a NumPy scalar or negatively strided array into "
                                 "a tensor.")
            result = tensor(array, dtype=dtype, device=device)
        else:
            result = from_numpy(array)
            if dtype is not None and dtype is not result.dtype or \
                    device is not None and device != result.device:
                if copy is False:
                    raise ValueError(f"can't alias NumPy array with dtype {result.dtype} into "
                                     f"dtype {dtype or result.dtype} on "
                                     f"{device or result.device}.")
                result = result.to(device or result.device, dtype or result.dtype)
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        result = frombuffer(obj, dtype=dtype or dtypes.get_default_dtype())
        if copy:
            result = result.clone()
        if device is not None:
            result = result.to(device)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        result = tensor(obj, dtype=dtype, device=device)
    if requires_grad and not result.requires_grad:
        if result is obj:
            result = obj.detach()
        result.requires_grad_()
    return result


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of `size` whose dims are laid out in memory in the order
    `physical_layout` (outermost first): empty_permuted((N, C, H, W), (0, 2, 3, 1)) is
    channels-last."""
    shape, order = _shape(size, "empty_permuted"), tuple(map(operator.index, physical_layout))
    if len(shape) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(shape)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    if sorted(order) != list(range(len(order))):
        raise RuntimeError("Duplicate dim not allowed" if len(set(order)) != len(order) else
                           f"physical_layout {list(order)} is not a permutation of the dims")
    stored = _target("empty_permuted", [shape[d] for d in order], None, dtype, layout, device,
                     False, pin_memory)
    t = stored.permute([order.index(d) for d in range(len(order))])
    return t.requires_grad_() if requires_grad else t



range_inclusive.__name__ = range_inclusive.__qualname__ = "range"
