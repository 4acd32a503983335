"""torch's legacy tensor types: `FloatTensor`, `LongTensor`, ... (CPU),
`jitensor.cuda.FloatTensor`, ... (CUDA) and `jitensor.sparse.FloatTensor`, ... (sparse COO on
the CPU). Each is a constructor of its dtype, device and layout and an isinstance check
(`isinstance(x, jt.FloatTensor)` is True for a dense float32 CPU tensor), and `Tensor.type()`
names a tensor's type with them."""
from . import dtypes
from .tensor import Size, Tensor

_NAMES = {"FloatTensor": dtypes.float32, "DoubleTensor": dtypes.float64,
          "HalfTensor": dtypes.float16, "BFloat16Tensor": dtypes.bfloat16,
          "LongTensor": dtypes.int64, "IntTensor": dtypes.int32,
          "ShortTensor": dtypes.int16, "CharTensor": dtypes.int8, "ByteTensor": dtypes.uint8,
          "BoolTensor": dtypes.bool_}
_BY_DTYPE = {d: name for name, d in _NAMES.items()}


class tensortype(type):
    """The class of the legacy types (torch.tensortype)."""

    sparse = False

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and \
            obj.device.type == cls.device_type and obj.is_sparse == cls.sparse

    def __call__(cls, *args, device=None):
        from .creation import empty, tensor
        if cls.sparse:
            return _sparse(cls, args, device)

        if device is not None and _device_type(device) != cls.device_type:
            raise RuntimeError(f"{cls.__module__}.{cls.__name__}: expected a {cls.device_type} "
                               f"device, got {device!r}")
        where = cls.device_type if device is None else device
        if not args:
            return empty(0, dtype=cls.dtype, device=where)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or \
                len(args) == 1 and isinstance(args[0], Size):
            return empty(*args, dtype=cls.dtype, device=where)
        if len(args) > 1:
            raise TypeError(f"{cls.__name__}(): expected sizes (ints) or one sequence of data, "
                            f"got {len(args)} arguments")
        data = args[0]
        from .storage import is_storage
        if is_storage(data):  # a tensor viewing the storage
            return empty(0, dtype=cls.dtype, device=where).set_(data)
        if isinstance(data, Tensor):  # torch aliases a tensor of the right type, refuses others
            if not isinstance(data, cls):
                raise TypeError(f"{cls.__name__}(): expected a {cls.dtype} tensor on "
                                f"{cls.device_type}, got {data.dtype} on {data.device}")
            return data.detach()
        return tensor(data, dtype=cls.dtype, device=where)


def _sparse(cls, args, device):
    """torch.sparse.FloatTensor(indices, values[, size]) or (*sizes): deprecated in torch,
    with its warning."""
    import warnings

    from .ops.sparse import sparse_coo_tensor
    sizes = not args or all(isinstance(a, int) for a in args) or isinstance(args[0], Size)
    form = "shape" if sizes else "indices, values" + ", shape" * (len(args) > 2)
    warnings.warn(f"torch.sparse.SparseTensor({form}, *, device=) is deprecated.  Please use "
                  f"torch.sparse_coo_tensor({form}, dtype=, device=).", UserWarning,
                  stacklevel=3)
    if sizes:
        return sparse_coo_tensor(Size(args[0] if args and isinstance(args[0], Size) else args),
                                 dtype=cls.dtype, device=device)
    return sparse_coo_tensor(*args, dtype=cls.dtype, device=device)


def _device_type(device):
    from .device import device as as_device
    return as_device(device).type


def _make(name, dtype, device_type, module, sparse=False):
    kind = "sparse COO tensors" if sparse else "tensors"
    return tensortype(name, (), {"dtype": dtype, "device_type": device_type, "sparse": sparse,
                                 "is_cuda": device_type == "cuda", "__module__": module,
                                 "__doc__": f"{dtype} {kind} on {device_type} (legacy type)."})


CPU_TYPES = {name: _make(name, d, "cpu", "jitensor") for name, d in _NAMES.items()}
CUDA_TYPES = {name: _make(name, d, "cuda", "jitensor.cuda") for name, d in _NAMES.items()}
SPARSE_TYPES = {name: _make(name, d, "cpu", "jitensor.sparse", sparse=True)
                for name, d in _NAMES.items() if name != "BoolTensor"}


def of(t):
    """The legacy type of tensor `t` (its dtype and device type)."""
    return (CUDA_TYPES if t.device.type == "cuda" else CPU_TYPES)[_BY_DTYPE[t.dtype]]


def type_name(t):
    """'jitensor.FloatTensor', 'jitensor.cuda.LongTensor', 'jitensor.sparse.FloatTensor',
    ...: `Tensor.type()`."""
    prefix = dtypes.SHOWN_AS + (".cuda." if t.device.type == "cuda" else ".")
    return prefix + "sparse." * t.is_sparse + _BY_DTYPE[t.dtype]


def parse(value):
    """A legacy type, or its name ('torch.FloatTensor', 'jitensor.cuda.LongTensor'), as
    (dtype, device type); None for anything else (a dtype, say)."""
    if isinstance(value, tensortype):
        return value.dtype, value.device_type
    if isinstance(value, str):
        for prefix in ("torch.", "jitensor."):
            if value.startswith(prefix):
                rest = value[len(prefix):]
                device_type = "cuda" if rest.startswith("cuda.") else "cpu"
                found = _NAMES.get(rest[len("cuda."):] if device_type == "cuda" else rest)
                if found is not None:
                    return found, device_type
    return None


def typename(obj):
    """torch.typename: a tensor's legacy type name, else the object's qualified class name."""
    if isinstance(obj, Tensor):
        return type_name(obj)
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
