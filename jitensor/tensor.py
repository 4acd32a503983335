"""Tensor: a buffer (a NumPy array on the CPU) with its jt dtype and device, and the methods
that describe, convert and fill it. Kernels are reached through `kernels.registry`."""
import numpy as np

from . import _format, dtypes
from .device import CPU, to_device
from .dtypes import to_dtype
from .kernels.registry import backend


class Size(tuple):
    """torch.Size: a tuple of ints that prints as ``jitensor.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return f"{dtypes.SHOWN_AS}.Size([{', '.join(map(str, self))}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(other + tuple(self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


class _Layout:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "jitensor." + self.name


class _MemoryFormat:
    """torch.memory_format: how a tensor's elements are laid out in memory."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "jitensor." + self.name


strided = _Layout("strided")
sparse_coo = _Layout("sparse_coo")  # (ops/sparse.py)
# torch's compressed and block layouts, named so that code can compare with them
sparse_csr, sparse_csc, sparse_bsr, sparse_bsc = map(_Layout, ("sparse_csr", "sparse_csc",
                                                               "sparse_bsr", "sparse_bsc"))
contiguous_format = _MemoryFormat("contiguous_format")
preserve_format = _MemoryFormat("preserve_format")
channels_last = _MemoryFormat("channels_last")  # NCHW tensors stored as NHWC
channels_last_3d = _MemoryFormat("channels_last_3d")  # NCDHW tensors stored as NDHWC
legacy_contiguous_format = contiguous_format  # (torch's is the same object)
# the channels-last formats: the rank they need and the dims' order in memory, outermost first
_CHANNELS_LAST = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def _channels_last_rank(memory_format, ndim):
    """The dims' order in memory of a channels-last format, checking the rank as torch does."""
    rank, order = _CHANNELS_LAST[memory_format]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format.name} format")
    return order


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class _AutogradMeta:
    """What only tensors taking part in autograd carry (as torch keeps it apart too): most
    tensors have none, which keeps creating a tensor to four attribute stores."""

    # output_nr: which output of grad_fn this tensor is (the version counter belongs to the
    # storage: autograd/versions.py); hooks: a leaf's (pre, post-accumulate) hook dicts, or None
    # (a non-leaf's hooks belong to its grad_fn, as torch's); fw_grad: the tangent of forward
    # AD (autograd/forward_ad.py), or None; accumulator: a weak reference to a leaf's
    # AccumulateGrad node, set on first use (autograd/graph.py)
    __slots__ = ("requires_grad", "grad", "grad_fn", "output_nr", "retains_grad", "hooks",
                 "fw_grad", "accumulator", "__weakref__")

    def __init__(self, requires_grad=False, grad=None, grad_fn=None, output_nr=0):
        self.requires_grad, self.grad, self.grad_fn = requires_grad, grad, grad_fn
        self.output_nr, self.retains_grad, self.hooks, self.fw_grad = output_nr, False, None, None


def _graph():
    from .autograd import graph  # (it imports this module)
    return graph


def _wrap(data, dtype, device, requires_grad=False):
    """A Tensor around a backend buffer; the cheap constructor every op ends with."""
    t = _new(Tensor)
    t._data, t._dtype, t._device = data, dtype, device
    t._meta = _AutogradMeta(True) if requires_grad else None
    return t


def check_requires_grad(requires_grad, dtype):
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"Only Tensors of floating point and complex dtype can require "
                           f"gradients, got "
                           f"dtype={dtype}; create it as a float tensor (dtype=jitensor.float32)")


def check_fill_value(value, dtype):
    """The Python scalar `value` converted for a `dtype` buffer, or a RuntimeError when it does
    not fit, as torch checks `full` and `fill_` (a float into an int dtype truncates)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill value must be a number or a 0-dimension tensor, got a tensor "
                               f"with {value.ndim} dimensions; use copy_() to fill from a tensor")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"fill value must be a bool, int, float or complex, got "
                        f"{type(value).__name__}")
    if dtype.is_complex:
        return complex(value)
    if isinstance(value, complex):  # (torch's message)
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow; "
                           f"use a complex dtype (jitensor.complex64)")
    if dtype.category == 0:
        return bool(value)
    if dtype.is_floating_point:
        value = float(value)
        if abs(value) != float("inf") and abs(value) > float(np.finfo(dtype.np).max):
            raise RuntimeError(f"value {value!r} cannot be converted to type {dtype.name} without "
                               f"overflow; use a wider dtype (jitensor.float64)")
        return value
    info = np.iinfo(dtype.np)
    # torch's check: the value itself (before truncation) must fit; unsigned types also take
    # negatives down to -max, which wrap as two's complement (uint8: -1 -> 255)
    unsigned = not dtype.is_signed
    low = -int(info.max) if unsigned and not isinstance(value, float) else info.min
    if value != value or not low <= value <= info.max:
        raise RuntimeError(f"value {value!r} cannot be converted to type {dtype.name} without "
                           f"overflow (range {info.min}..{info.max}); use a wider dtype")
    value = int(value)
    value = value + int(info.max) + 1 if value < 0 and unsigned else value
    return value if value < 2**63 else dtype.np.type(value)  # (a uint64 past int64's range)


class Tensor:
    """An n-dimensional array on a device. Create one with `jt.tensor`, `jt.zeros`, ...;
    ``jt.Tensor(2, 3)`` (uninitialised) and ``jt.Tensor([1, 2])`` work as in torch."""

    __slots__ = ("_data", "_dtype", "_device", "_meta", "__weakref__")

    def __new__(cls, *args, **kwargs):
        from . import creation
        if not args:
            return creation.empty(0, **kwargs)
        if all(isinstance(a, int) for a in args) or isinstance(args[0], Size):
            return creation.empty(*args, **kwargs)
        from .storage import is_storage
        if len(args) == 1 and is_storage(args[0]):  # a tensor viewing the storage, as torch's
            return creation.empty(0, **kwargs).set_(args[0])
        return creation.tensor(args[0], dtype=dtypes.get_default_dtype(), **kwargs)

    # -- description ---------------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self._data.shape[self._dim(dim)]

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def layout(self):
        return strided

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    # torch's other device types, layouts and kinds of tensor: a jitensor tensor is a dense,
    # unquantized tensor on the CPU or CUDA, so each is False (as on such a torch one), or a
    # sparse COO one (ops/sparse.py's SparseTensor: its is_sparse is True; the dense paths test
    # `x.__class__ is not Tensor and x.is_sparse`, which costs a plain tensor one comparison)
    def _false(self):
        return False

    (is_xpu, is_mps, is_mtia, is_xla, is_meta, is_ipu, is_maia, is_vulkan, is_quantized,
     is_sparse, is_sparse_csr, is_mkldnn, is_nested) = map(property, [_false] * 13)
    del _false

    def is_inference(self):
        """False: torch marks tensors created in `inference_mode` as inference tensors; jitensor
        does not tag them (see jitensor.inference_mode), so no tensor is one."""
        return False

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def stride(self, dim=None):
        if self._data.size:
            strides = tuple(s // self._dtype.itemsize for s in self._data.strides)
        else:  # NumPy zeroes the strides of empty arrays; torch reports contiguous ones
            strides = _contiguous_strides(self._data.shape)
        return strides if dim is None else strides[self._dim(dim)]

    def is_contiguous(self, memory_format=contiguous_format):
        """Whether the elements are dense in `memory_format`'s order (contiguous_format: C
        order; channels_last(_3d): channels innermost). Dims of size 1 are ignored, as torch
        does."""
        if memory_format in _CHANNELS_LAST:
            rank, order = _CHANNELS_LAST[memory_format]
            if self._data.ndim != rank:
                return False
            expected, shape, strides = 1, self._data.shape, self.stride()
            for d in reversed(order):
                if shape[d] != 1:
                    if strides[d] != expected:
                        return False
                    expected *= shape[d]
            return True
        if not isinstance(memory_format, _MemoryFormat):
            raise TypeError(f"is_contiguous(): argument 'memory_format' must be "
                            f"jitensor.memory_format, not {type(memory_format).__name__}")
        return self._data.flags.c_contiguous

    def _suggest_memory_format(self):
        """channels_last(_3d) for a tensor laid out so (and not also C-contiguous), else
        contiguous_format: the format `to(memory_format=...)` compares with."""
        if not self._data.flags.c_contiguous:
            for memory_format in _CHANNELS_LAST:
                if self.is_contiguous(memory_format):
                    return memory_format
        return contiguous_format

    def is_floating_point(self):
        return self._dtype.is_floating_point

    @property
    def itemsize(self):
        return self._dtype.itemsize

    def element_size(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._data.size * self._dtype.itemsize

    def data_ptr(self):
        return backend(self._device).data_ptr(self._data)

    def record_stream(self, stream):
        """Mark this CUDA tensor's memory as used by work queued on `stream` (a jt.cuda.Stream
        other than the one current when it was allocated): when the tensor is freed, its memory
        is not reused until the work queued on `stream` by then has finished."""
        from .cuda import Stream
        if self._device.type != "cuda":
            raise RuntimeError(f"record_stream() is only for CUDA tensors; this one is on "
                               f"{self._device}")
        if not isinstance(stream, Stream):
            raise TypeError(f"record_stream(): expected a jitensor.cuda.Stream, got "
                            f"{type(stream).__name__}")
        backend(self._device).memory.record_stream(self._data, stream._core)

    def _dim(self, dim):
        """A dim index checked and made non-negative, with torch's IndexError."""
        n = max(self._data.ndim, 1)
        if not isinstance(dim, int) or not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                             f"but got {dim})")
        return dim % n

    # -- autograd (the graph and its engine: jitensor/autograd) --------------------------------
    @property
    def requires_grad(self):
        return self._meta is not None and self._meta.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        check_requires_grad(value, self._dtype)
        if not value and not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        self._autograd().requires_grad = bool(value)

    @property
    def grad(self):
        return None if self._meta is None else self._meta.grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self.shape or value.device != self.device:
                raise RuntimeError(f"assigned grad has data of a different size or device: grad "
                                   f"{tuple(value.shape)} on {value.device}, tensor "
                                   f"{tuple(self.shape)} on {self.device}")
        self._autograd().grad = value

    @property
    def grad_fn(self):
        node = None if self._meta is None else self._meta.grad_fn
        return node if node is None else _graph().torch_named(node)

    def _autograd(self):
        if self._meta is None:
            self._meta = _AutogradMeta()
        return self._meta

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self._meta is None or self._meta.grad_fn is None

    def detach(self):
        return _wrap(self._data, self._dtype, self._device)

    def detach_(self):
        if self._meta is not None:
            self._meta.grad_fn, self._meta.requires_grad = None, False
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's `.grad` (see `jitensor.autograd`)."""
        from . import autograd
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def retain_grad(self):
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if not self.is_leaf:
            meta = self._meta
            meta.retains_grad = True
            node = meta.grad_fn
            if node.retained is None:
                node.retained = {}
            node.retained[meta.output_nr] = meta

    def register_hook(self, hook):
        """Call ``hook(grad)`` with this tensor's gradient each time it is computed; a result
        other than None replaces the gradient. Returns a handle whose remove() undoes this."""
        from collections import OrderedDict

        from .autograd.graph import add_hook
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        meta = self._meta
        if meta.grad_fn is None:
            if meta.hooks is None:
                meta.hooks = (OrderedDict(), OrderedDict())
            return add_hook(meta.hooks[0], hook)
        node = meta.grad_fn
        if node.hooks is None:
            node.hooks = {}
        return add_hook(node.hooks.setdefault(meta.output_nr, OrderedDict()), hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after backward accumulated into this leaf's `.grad`."""
        from collections import OrderedDict

        from .autograd.graph import add_hook
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if not self.is_leaf:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        meta = self._meta
        if meta.hooks is None:
            meta.hooks = (OrderedDict(), OrderedDict())
        return add_hook(meta.hooks[1], hook)

    @property
    def retains_grad(self):
        return self._meta is not None and self._meta.retains_grad

    @property
    def _version(self):
        """How many in-place writes this tensor's memory has had, through it or any alias."""
        from .autograd.versions import version
        return version(self._data)

    @property
    def data(self):
        """detach(): the values without history. (Its in-place writes count on the shared
        version counter, where torch's .data keeps a counter of its own.)"""
        return self.detach()

    @data.setter
    def data(self, value):
        """Swap in `value`'s buffer, dtype and device, keeping this object (and its autograd
        state), as torch's ``param.data = new`` does."""
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data, self._dtype, self._device = value._data, value._dtype, value._device

    # -- conversion to Python and NumPy --------------------------------------------------------
    def numpy(self, *, force=False):
        """The tensor's values as a NumPy array sharing memory (CPU tensors only)."""
        if self._device.type != "cpu":
            if force:
                return self.cpu()._data
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use "
                            f"Tensor.cpu() to copy the tensor to host memory first.")
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return self._data

    def _host(self):
        """A NumPy array of the values, copied from the device if needed."""
        return backend(self._device).to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    @property
    def __cuda_array_interface__(self):
        """The CUDA Array Interface (v3) of a CUDA tensor, so numba kernels, CuPy and torch take
        it without a copy; CPU tensors have none (AttributeError, as in torch)."""
        if self._device.type != "cuda":
            raise AttributeError(f"can't get __cuda_array_interface__ on a {self._device} tensor; "
                                 f"move it with .cuda() first")
        from .kernels.cuda import streams
        d = self._data
        # the stream consumers must follow: a side stream when one is current; none on the
        # legacy default stream, which consumers' default streams already follow (as torch)
        stream = streams.dlpack_handle()
        return {"shape": tuple(d.shape), "typestr": d.dtype.str, "version": 3,
                "strides": None if d.flags.c_contiguous else tuple(d.strides),
                "data": (self.data_ptr(), False), "stream": None if stream == 1 else stream}

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this tensor's memory (np.from_dlpack, torch.from_dlpack,
        cupy.from_dlpack). `stream` is the consumer's CUDA stream: unless it already follows
        the current stream (it is that stream, or -1: "do not synchronize"), it is made to wait
        for the current stream's work. `copy=True` exports a copy; a `dl_device` other than the
        tensor's raises BufferError."""
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError(f"__dlpack__(): dl_device={tuple(dl_device)} but the tensor is on "
                              f"{self._device} {device}; move it with .to() first")
        if self._device.type == "cpu" and self._dtype is not dtypes.bfloat16:
            extra = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                       ("copy", copy)) if v is not None}
            return self._data.__dlpack__(stream=stream, **extra)
        from . import dlpack
        src = self.detach().clone() if copy else self
        if self._device.type == "cpu":  # bfloat16, which NumPy does not export
            return dlpack.export(src._data, device)
        if stream is not None and not isinstance(stream, int):
            raise TypeError(f"__dlpack__(): stream must be an int (a CUDA stream handle) or "
                            f"None, got {type(stream).__name__}")
        from .kernels.cuda import streams
        streams.precede(stream)
        return dlpack.export(backend(self._device).memory.writeable(src._data), device)

    def __dlpack_device__(self):
        return (1, 0) if self._device.type == "cpu" else (2, self._device.index or 0)

    def tolist(self):
        return self._host().tolist()

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to "
                               f"Scalar; index one element first (t[0].item())")
        return self._host().item()

    def _one(self, kind):
        if self._data.size != 1:
            raise RuntimeError(f"{kind} value of Tensor with more than one value is ambiguous"
                               if self._data.size else
                               f"{kind} value of Tensor with no values is ambiguous")
        return self.item()

    def __bool__(self):
        return bool(self._one("Boolean"))

    def __float__(self):
        return float(self._one("Float"))

    def __int__(self):
        return int(self._one("Integer"))

    def __complex__(self):
        return complex(self._one("Complex"))

    def __index__(self):
        if self._dtype.category > 1 or self._data.ndim and self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self):
        return id(self)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __repr__(self):
        tangent = None if self._meta is None else self._meta.fw_grad
        return _format.tensor_repr(self._host(), self._dtype, self._device,
                                   dtypes.get_default_dtype(), self.requires_grad, self.grad_fn,
                                   None if tangent is None else repr(tangent))

    def __reduce__(self):
        return (_rebuild, (self._host().copy(), self._dtype.name, str(self._device),
                           self.requires_grad))

    # -- copies and conversions ----------------------------------------------------------------
    def _empty_like(self, dtype=None, memory_format=preserve_format):
        """An uninitialised buffer on this device; `preserve_format` keeps a dense permuted
        layout."""
        from .creation import allocate
        dtype = self._dtype if dtype is None else dtype
        data = self._data
        if memory_format in _CHANNELS_LAST:
            order = _channels_last_rank(memory_format, data.ndim)
            stored = allocate([data.shape[d] for d in order], dtype, self._device)
            return stored.permute([order.index(d) for d in range(data.ndim)])
        if memory_format is preserve_format and not data.flags.c_contiguous and data.size \
                and all(s for s, n in zip(data.strides, data.shape, strict=False) if n > 1):
            # a dense permuted layout is kept; broadcast (stride-0) inputs get C order
            return _wrap(backend(self._device).empty_like(self._data, dtype.np), dtype,
                         self._device)
        return allocate(self._data.shape, dtype, self._device)

    def clone(self, *, memory_format=preserve_format):
        out = self._empty_like(memory_format=memory_format)
        backend(self._device).copy(out._data, self._data)
        return out

    def contiguous(self, memory_format=contiguous_format):
        if memory_format in _CHANNELS_LAST:
            _channels_last_rank(memory_format, self._data.ndim)
            return self if self.is_contiguous(memory_format) else \
                self.clone(memory_format=memory_format)
        if self._data.flags.c_contiguous:
            return self
        return self.clone(memory_format=contiguous_format)

    def to(self, *args, non_blocking=False, copy=False, memory_format=preserve_format, **kwargs):
        """``to(dtype)``, ``to(device, dtype=None)``, ``to(other)``: self when nothing changes
        and ``copy`` is false, otherwise a new tensor."""
        device, dtype = _parse_to(args, kwargs)
        device = self._device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        if device == self._device and dtype is self._dtype and not copy and (
                memory_format is preserve_format or
                memory_format is self._suggest_memory_format()):
            return self
        if self._dtype.is_complex and not dtype.is_complex:
            import warnings
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=2)
        if device == self._device:
            out = self._empty_like(dtype, memory_format)
            backend(device).copy(out._data, self._data)
        else:
            host = backend(self._device).to_numpy(self._data)
            if dtype is not self._dtype:
                host = _wrap(host, self._dtype, CPU).to(dtype)._data
            out = _wrap(backend(device).from_numpy(host), dtype, device)
            if memory_format in _CHANNELS_LAST and not out.is_contiguous(memory_format):
                out = out.clone(memory_format=memory_format)
        return out

    def cpu(self):
        return self.to(CPU)

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else to_device(device))

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def half(self):
        return self.to(dtypes.float16)

    def bfloat16(self):
        return self.to(dtypes.bfloat16)

    def cfloat(self):
        return self.to(dtypes.complex64)

    def cdouble(self):
        return self.to(dtypes.complex128)

    def int(self):
        return self.to(dtypes.int32)

    def long(self):
        return self.to(dtypes.int64)

    def short(self):
        return self.to(dtypes.int16)

    def char(self):
        return self.to(dtypes.int8)

    def byte(self):
        return self.to(dtypes.uint8)

    def bool(self):
        return self.to(dtypes.bool_)

    def type(self, dtype=None, non_blocking=False):
        """The legacy type's name ('jitensor.FloatTensor') or, given a dtype, a legacy type or
        its name, this tensor converted to it."""
        from . import legacy_types
        if dtype is None:
            return legacy_types.type_name(self)
        legacy = legacy_types.parse(dtype)
        if legacy is None:
            return self.to(to_dtype(dtype))
        return self.to(device=legacy[1] if legacy[1] != self.device.type else self.device,
                       dtype=legacy[0])

    # -- in-place writes -----------------------------------------------------------------------
    def fill_(self, value):
        backend(self._device).fill(self._data, check_fill_value(value, self._dtype))
        return self

    def zero_(self):
        # (not through self.fill_: that is wrapped too, and one write would count twice)
        backend(self._device).fill(self._data, check_fill_value(0, self._dtype))
        return self

    def copy_(self, src, non_blocking=False):
        """Copy `src` (broadcast to self's shape, converted to self's dtype) into self."""
        if not isinstance(src, Tensor):
            from .creation import tensor
            src = tensor(src, device=self._device)
        shape = self._data.shape
        try:
            full = np.broadcast_shapes(src._data.shape, shape)
        except ValueError:
            full = None
        if full != shape:
            raise RuntimeError(f"copy_(): the source of shape {tuple(src.shape)} does not "
                               f"broadcast to the destination's shape {tuple(shape)}")
        if src._device != self._device:
            src = src.to(self._device)
        b = backend(self._device)
        b.copy(self._data, b.broadcast_to(src._data, shape))
        return self

    # -- new_* creation routines: self's dtype and device unless given -------------------------
    # -- torch's odds and ends for real, strided tensors --------------------------------------
    def is_conj(self):
        """False: jitensor conjugates complex tensors by computing (no lazy conjugate bit)."""
        return False

    def is_neg(self):
        """False: jitensor never negates lazily (torch does so only for complex views)."""
        return False

    def resolve_conj(self):
        return self

    def resolve_neg(self):
        return self

    def to_dense(self, dtype=None, *, masked_grad=None):
        """self, a strided tensor being dense already (in `dtype` when one is given)."""
        return self if dtype is None else self.to(dtype)

    def dense_dim(self):
        """The number of dense dims, all of a strided tensor's."""
        return self._data.ndim

    def is_pinned(self, device=None):
        """False: jitensor never allocates page-locked host memory."""
        return False

    def pin_memory(self, device=None):
        """A copy for fast transfers to the accelerator, as torch's: jitensor allocates it as
        ordinary host memory (`is_pinned()` stays False, as for ``pin_memory=True``). Without
        CUDA, torch's error."""
        if self._device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        from . import cuda
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self.clone()

    def share_memory_(self):
        """Move the storage into shared memory, which processes this tensor is sent to map
        too (jitensor.multiprocessing); nothing for CUDA tensors or shared ones. Returns self."""
        from .multiprocessing.reductions import share_memory_
        return share_memory_(self)

    def is_shared(self):
        """Whether the storage is in shared memory (CUDA memory counts, as in torch)."""
        from .multiprocessing.reductions import is_shared
        return self._device.type == "cuda" or is_shared(self._data)

    def is_distributed(self):
        return False

    def module_load(self, other, assign=False):
        """What `Module.load_state_dict` puts in place of self for `other`: other itself
        (detached) with assign=True, else self with other's values copied in."""
        if assign:
            return other.detach()
        return self.copy_(other).detach()

    @property
    def output_nr(self):
        """Which output of its grad_fn this tensor is (0 for leaves and tensors that record
        nothing)."""
        meta = self._meta
        return meta.output_nr if meta is not None and meta.grad_fn is not None else 0

    def const_data_ptr(self):
        return self.data_ptr()

    def dim_order(self, *, ambiguity_check=False):
        """The dims from outermost to innermost in memory (by stride; ties keep dim order)."""
        if ambiguity_check is not False and not isinstance(ambiguity_check, (bool, list)):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                            "formats.")
        strides = self.stride()
        return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))

    def hardshrink(self, lambd=0.5):
        from .nn import functional
        return functional.hardshrink(self, lambd)

    def prelu(self, weight):
        from .nn import functional
        return functional.prelu(self, weight)

    def resize(self, *sizes):
        """A tensor of the given sizes over self's elements (deprecated, as torch's: the number
        of elements must stay the same)."""
        import math
        import warnings
        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
        from .ops.shape import _ints
        size = _ints(sizes, "resize")
        if math.prod(size) != self.numel():
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, size))} ({math.prod(size)} elements "
                f"in total), but the given tensor has a size of "
                f"{'x'.join(map(str, self.shape))} ({self.numel()} elements). autograd's resize "
                f"can only change the shape of a given tensor, while preserving the number of "
                f"elements. ")
        return self.contiguous().view(size)

    def resize_as(self, tensor):
        import warnings
        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return self.resize(tensor.shape)

    def set_(self, source=None, storage_offset=None, size=None, stride=None):
        """Make self a view of `source`'s memory: a tensor's (its sizes and strides, or the given
        ones from storage_offset), a storage's (all its elements, or the given geometry), or
        no memory (set_())."""
        from .ops import shape
        from .storage import TypedStorage, UntypedStorage, set_source
        if isinstance(source, (UntypedStorage, TypedStorage)):
            if self.requires_grad:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
            if (storage_offset is None) != (size is None):
                got = ", ".join([f"jitensor.storage.{type(source).__name__}"] +
                                [f"{n}={type(v).__name__}" for n, v in (
                                    ("storage_offset", storage_offset), ("size", size),
                                    ("stride", stride)) if v is not None])
                raise TypeError(f"set_() received an invalid combination of arguments - got "
                                f"({got}), but expected one of:\n * ()\n"
                                f" * (jitensor.Storage source)\n"
                                f" * (jitensor.Storage source, int storage_offset, tuple of ints "
                                f"size, tuple of ints stride = None)\n * (Tensor source)\n"
                                f" * (Tensor source, int storage_offset, tuple of ints size, "
                                f"tuple of ints stride = None)")
            self._data = set_source(self, source, storage_offset, size, stride)
            return self
        if self.requires_grad:
            raise RuntimeError("set_(): cannot set the storage of a tensor that requires grad "
                               "(a leaf Variable that requires grad is being used in an "
                               "in-place operation)")
        if source is None:
            view = shape.strided_view(self, (0,), (1,))
        else:
            if not isinstance(source, Tensor):
                raise TypeError(f"set_(): expected a Tensor or a storage, got "
                                f"{type(source).__name__}")
            if source._dtype is not self._dtype:
                raise RuntimeError(f"Expected object of scalar type {self._dtype} but got "
                                   f"scalar type {source._dtype} for argument 'source'")
            if source._device != self._device:
                raise RuntimeError(f"Attempted to set the storage of a tensor on device "
                                   f"{self._device} to a storage on device {source._device}")
            view = source if size is None else shape.as_strided(
                source, size, stride if stride is not None else _contiguous_strides(size),
                0 if storage_offset is None else storage_offset)
        self._data = view._data
        return self

    def untyped_storage(self):
        """The storage (jt.UntypedStorage) of self's memory: its whole base buffer, which it
        aliases; every view of one base has the same one."""
        from .storage import UntypedStorage
        return UntypedStorage._of(self)

    def storage(self):
        """self's storage as a TypedStorage of self's dtype (deprecated, as torch's: warns)."""
        from .storage import TypedStorage, UntypedStorage, _warn_typed_storage_removal
        _warn_typed_storage_removal(stacklevel=2)
        return TypedStorage(wrap_storage=UntypedStorage._of(self), dtype=self._dtype,
                            _internal=True)

    def _typed_storage(self):
        from .storage import TypedStorage, UntypedStorage
        return TypedStorage(wrap_storage=UntypedStorage._of(self), dtype=self._dtype,
                            _internal=True)

    def storage_type(self):
        """The legacy storage class of self's dtype (jt.FloatStorage, ...)."""
        from .storage import legacy_class
        return legacy_class(self._dtype)

    def is_set_to(self, tensor):
        """Whether self and tensor view the same memory with the same sizes and strides."""
        from .ops.shape import _storage
        return (self._device == tensor._device and self._dtype is tensor._dtype and
                self._data.shape == tensor._data.shape and self.stride() == tensor.stride() and
                self.data_ptr() == tensor.data_ptr() and
                _storage(self._data) is _storage(tensor._data))

    def apply_(self, callable):
        """Replace each element x of this CPU tensor by callable(x), in place (a Python loop,
        slow, as torch's)."""
        self._python_map("apply_", callable)
        return self

    def map_(self, tensor, callable):
        """self[i] = callable(self[i], tensor[i]) for every element (tensor broadcast to self's
        shape); CPU only."""
        self._python_map("map_", callable, tensor)
        return self

    def map2_(self, x, y, callable):
        """self[i] = callable(self[i], x[i], y[i]) for every element (x and y broadcast to
        self's shape); CPU only."""
        self._python_map("map2_", callable, x, y)
        return self

    def _python_map(self, fn, callable, *others):
        if self._device.type != "cpu":
            raise TypeError(f"{fn} is only implemented on CPU tensors")
        from .autograd.grad_mode import is_grad_enabled
        if self.requires_grad and self.is_leaf and is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        for o in others:
            if not isinstance(o, Tensor):
                raise TypeError(f"{fn}(): expected a Tensor, got {type(o).__name__}")
            if o._device.type != "cpu":
                raise TypeError(f"{fn} is only implemented on CPU tensors")
        try:
            args = [np.broadcast_to(o._data, self._data.shape) for o in others]
        except ValueError:
            raise RuntimeError(f"{fn}(): the other tensors' shapes "
                               f"{[list(o.shape) for o in others]} do not broadcast to self's "
                               f"{list(self.shape)}") from None
        data = self._data
        for index in np.ndindex(data.shape):
            data[index] = callable(data[index].item(), *(a[index].item() for a in args))
        from .autograd import versions
        versions.bump(data)

    def as_subclass(self, cls):
        """A `cls` instance (a Tensor subclass) viewing self's data, attached to its graph."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): cls must be a subclass of Tensor, got {cls!r}")
        view = self.view_as(self)
        out = object.__new__(cls)
        out._data, out._dtype, out._device, out._meta = (view._data, view._dtype, view._device,
                                                         view._meta)
        return out

    def new(self, *args, device=None):
        """The legacy constructor of this tensor's type: ``new(*sizes)`` uninitialised,
        ``new(data)`` the data converted, ``new(tensor)`` that tensor if of this type."""
        from . import legacy_types
        return legacy_types.of(self)(*args, device=self._device if device is None else device)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        from .creation import empty
        return empty(*size, **self._new_kw(dtype, device, requires_grad, kw))

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        from .creation import zeros
        return zeros(*size, **self._new_kw(dtype, device, requires_grad, kw))

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        from .creation import ones
        return ones(*size, **self._new_kw(dtype, device, requires_grad, kw))

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kw):
        from .creation import full
        return full(size, fill_value, **self._new_kw(dtype, device, requires_grad, kw))

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        from .creation import tensor
        return tensor(data, **self._new_kw(dtype, device, requires_grad, {}))

    def _new_kw(self, dtype, device, requires_grad, kw):
        kw.update(dtype=self._dtype if dtype is None else dtype,
                  device=self._device if device is None else device, requires_grad=requires_grad)
        return kw


_new = object.__new__


def _parse_to(args, kwargs):
    """(device or None, dtype or None) from torch's three `to` signatures."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    if len(args) > 2:
        raise TypeError(f"to() takes at most 2 positional arguments, got {len(args)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a._device, a._dtype
        elif isinstance(a, (dtypes.dtype, np.dtype, type)):
            dtype = a
        elif isinstance(a, str) and not a.startswith(("cpu", "cuda")):
            dtype = a
        else:
            device = a
    return (None if device is None else to_device(device),
            None if dtype is None else to_dtype(dtype))


def _rebuild(host, dtype_name, device_name, requires_grad):
    """Unpickle: the values were saved as a NumPy array on the host."""
    from .creation import tensor
    return tensor(host, dtype=dtype_name, device=device_name, requires_grad=requires_grad)
