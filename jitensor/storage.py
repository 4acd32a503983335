"""torch's storages: `UntypedStorage` (the bytes a tensor's memory is), `TypedStorage` (a view of
them as elements of a dtype, deprecated in torch and so here, with torch's warning) and the
legacy typed classes (`FloatStorage`, ...).

A tensor's storage is the array at the end of its buffer's chain of NumPy bases (the allocation
its memory lies in: `ops/shape._storage`), so storages alias: writing through one changes every
tensor viewing that memory, and every view of one base has one storage (one object while it
lives, as torch's). `nbytes()` is the whole base's size.

Where jitensor differs: a tensor holds its buffer, not its storage, so a storage that tensors
view cannot be given new memory. `resize_` grows or shrinks only a storage no tensor views
(one made by `UntypedStorage(n)`, `clone()`, ...; `set_` to it ends that), and raises torch's
"not resizable" error otherwise; `resizable()` says which."""
import collections.abc
import copy as _copy
import operator
import warnings
import weakref

import numpy as np

from . import dtypes
from .device import device as _as_device
from .kernels.registry import backend

__all__ = ["UntypedStorage", "TypedStorage", "is_storage", "StorageBase", "Storage",
           "BoolStorage", "ByteStorage", "CharStorage", "ShortStorage", "IntStorage",
           "LongStorage", "HalfStorage", "BFloat16Storage", "FloatStorage", "DoubleStorage",
           "ComplexFloatStorage", "ComplexDoubleStorage"]

_LEGACY = {"BoolStorage": dtypes.bool_, "ByteStorage": dtypes.uint8, "CharStorage": dtypes.int8,
           "ShortStorage": dtypes.int16, "IntStorage": dtypes.int32,
           "LongStorage": dtypes.int64, "HalfStorage": dtypes.float16,
           "BFloat16Storage": dtypes.bfloat16, "FloatStorage": dtypes.float32,
           "DoubleStorage": dtypes.float64, "ComplexFloatStorage": dtypes.complex64,
           "ComplexDoubleStorage": dtypes.complex128}
# torch's names for a dtype in set_'s error: its C++ type and its ScalarType
_CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
              "int16": "short int", "int32": "int", "int64": "long int", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
              "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t"}

# the live storage object of each base array, so that one memory has one storage object
_by_root = weakref.WeakValueDictionary()


def _flat_bytes(root, device):
    """A 1-D uint8 view of every byte `root` reaches, from its first address."""
    if root.flags.c_contiguous:
        return root.reshape(-1).view(np.uint8)
    item = root.itemsize
    if not root.size:
        n = 0
    else:  # a dense permuted base (or odd): its extent from its first element
        n = (sum((k - 1) * s for k, s in zip(root.shape, root.strides, strict=True)) + item) // item
    flat = backend(device).indexing.as_strided(root, (n,), (1,))
    return flat.view(np.uint8)


class _Casts:
    """The typed copies .double(), .float(), ... of both storage classes: each is
    `self._cast(dtype)`."""

    __slots__ = ()

    def double(self):
        return self._cast(dtypes.float64)

    def float(self):
        return self._cast(dtypes.float32)

    def half(self):
        return self._cast(dtypes.float16)

    def bfloat16(self):
        return self._cast(dtypes.bfloat16)

    def long(self):
        return self._cast(dtypes.int64)

    def int(self):
        return self._cast(dtypes.int32)

    def short(self):
        return self._cast(dtypes.int16)

    def char(self):
        return self._cast(dtypes.int8)

    def byte(self):
        return self._cast(dtypes.uint8)

    def bool(self):
        return self._cast(dtypes.bool_)


class _StorageBase:
    """What UntypedStorage shares with torch's _StorageBase."""

    __slots__ = ()
    is_sparse = False
    is_sparse_csr = False


class UntypedStorage(_StorageBase, _Casts):
    """A buffer of bytes on a device (torch.UntypedStorage): ``UntypedStorage(nbytes,
    device=...)``, ``UntypedStorage([byte, ...])``, or a tensor's (`Tensor.untyped_storage()`),
    which it aliases."""

    __slots__ = ("_root", "_bytes", "_whole", "_device", "_resizable", "_views",
                 "__weakref__")

    def __init__(self, *args, device=None):
        device = _as_device("cpu" if device is None else device)
        if len(args) > 1:
            raise TypeError(f"UntypedStorage(): expected at most 1 argument, got {len(args)}")
        if not args:
            n, data = 0, None
        elif isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool):
            n, data = operator.index(args[0]), None
            if n < 0:
                raise RuntimeError(f"Trying to create a storage with a negative number of bytes: "
                                   f"{n}")
        elif isinstance(args[0], collections.abc.Sequence):
            data = [operator.index(v) & 0xFF for v in args[0]]
            n = len(data)
        else:
            raise TypeError(f"UntypedStorage(): expected a size or a sequence of bytes, got "
                            f"{type(args[0]).__name__}")
        root = backend(device).empty((n,), np.dtype(np.uint8))
        if data is not None and n:
            host = np.array(data, np.uint8)
            if device.type == "cpu":
                root[...] = host
            else:
                backend(device).copy(root, backend(device).from_numpy(host))
        self._set(root, device, resizable=True)

    def _set(self, root, device, resizable, flat=None):
        self._root, self._device, self._resizable, self._views = root, device, resizable, {}
        self._bytes = _flat_bytes(root, device) if flat is None else flat
        self._whole = flat is None  # (a slice's bytes are part of its base's)
        return self

    @classmethod
    def _of_root(cls, root, device):
        """The storage of base array `root` (one object while it lives)."""
        s = _by_root.get(id(root))
        if s is None or s._root is not root:
            s = object.__new__(cls)._set(root, device, resizable=False)
            _by_root[id(root)] = s
        return s

    @classmethod
    def _of(cls, t):
        from .ops.shape import _storage
        return cls._of_root(_storage(t._data), t._device)

    def _elements(self, dtype):
        """A 1-D array of this storage's whole elements of `dtype` (one per dtype, so that
        tensors set to it share a base, as checkpoints see them); tensors now view it."""
        view = self._views.get(dtype.name)
        if view is None:
            if self._whole and self._root.dtype == dtype.np and self._root.flags.c_contiguous:
                view = self._root.reshape(-1)
            else:
                view = self._bytes[:len(self._bytes) // dtype.itemsize * dtype.itemsize]
                view = view.view(dtype.np)
            self._views[dtype.name] = view
        if self._resizable:  # its memory is a tensor's now
            self._resizable = False
            _by_root[id(self._root)] = self
        return view

    # -- description -------------------------------------------------------------------------
    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_hpu(self):
        return False

    @property
    def filename(self):
        return None

    def nbytes(self):
        return len(self._bytes)

    def size(self):
        return len(self._bytes)

    def __len__(self):
        return len(self._bytes)

    def element_size(self):
        return 1

    def data_ptr(self):
        return backend(self._device).data_ptr(self._bytes) if len(self._bytes) else 0

    def get_device(self):
        return self._device.index if self._device.type == "cuda" else None

    def resizable(self):
        return self._resizable

    def is_shared(self):
        if self._device.type == "cuda":
            return True  # (torch's answer for CUDA memory)
        from .multiprocessing.reductions import is_shared
        return is_shared(self._root)

    def is_pinned(self, device=None):
        return False

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "jitensor.storage.UntypedStorage"
        raise TypeError("UntypedStorage.type(dtype): jitensor has no typed storage conversion "
                        "of this form; use .float(), .long(), ...")

    def untyped(self):
        return self

    def __sizeof__(self):
        return object.__sizeof__(self) + self.nbytes()

    # -- elements ----------------------------------------------------------------------------
    def _host(self):
        return backend(self._device).to_numpy(self._bytes)

    def __getitem__(self, idx):
        n = len(self._bytes)
        if isinstance(idx, slice):
            start, stop, step = idx.indices(n)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of "
                                   f"1 is supported")
            part = object.__new__(UntypedStorage)
            return part._set(self._root, self._device, False,
                             self._bytes[start:max(start, stop)])
        if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)):
            raise TypeError(f"can't index a jitensor.UntypedStorage with {type(idx).__name__}")
        i = int(idx)
        if not -n <= i < n:
            raise IndexError(f"index {i + n if i < 0 else i} out of range for storage of size "
                             f"{n}")
        i %= n
        return int(backend(self._device).to_numpy(self._bytes[i:i + 1])[0])

    def __setitem__(self, idx, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise RuntimeError(f"can only set storage content with a int types, but got "
                               f"{type(value).__name__} instead")
        n = len(self._bytes)
        if isinstance(idx, slice):
            start, stop, step = idx.indices(n)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of "
                                   f"1 is supported")
            part = self._bytes[start:max(start, stop)]
        elif isinstance(idx, (int, np.integer)) and not isinstance(idx, bool):
            i = int(idx)
            if not -n <= i < n:
                raise IndexError(f"index {i} out of range for storage of size {n}")
            part = self._bytes[i % n:i % n + 1]
        else:
            raise TypeError(f"can't index a jitensor.UntypedStorage with {type(idx).__name__}")
        if len(part):
            backend(self._device).fill(part, np.uint8(int(value) & 0xFF))

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._host().tolist()

    def __repr__(self):
        info = f"[jitensor.storage.UntypedStorage(device={self._device}) of size {len(self)}]"
        return " " + "\n ".join(map(str, self.tolist())) + "\n" + info

    __str__ = __repr__

    def fill_(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise RuntimeError(f"fill_ expects int, but got {type(value).__name__}")
        if len(self._bytes):
            backend(self._device).fill(self._bytes, np.uint8(int(value) & 0xFF))
        return self

    def copy_(self, source, non_blocking=None):
        if isinstance(source, TypedStorage):
            source = source._untyped_storage
        if not isinstance(source, UntypedStorage):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be jitensor.Storage, "
                            f"not {type(source).__name__}")
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src "
                               f"was {source.nbytes()} bytes")
        if not len(self._bytes):
            return self
        src = source._bytes
        if source._device != self._device:
            src = backend(self._device).from_numpy(source._host())
        if self._device.type == "cpu":
            np.copyto(self._bytes, src)  # (overlapping bytes are read first)
        else:
            backend(self._device).copy(self._bytes, src)
        return self

    # -- new storages ------------------------------------------------------------------------
    def clone(self):
        return UntypedStorage(self.nbytes(), device=self._device).copy_(self)

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        key = ("jitensor storage", id(self))
        if key not in memo:
            _copy._keep_alive(self, memo)
            memo[key] = self.clone()
        return memo[key]

    def __reduce__(self):
        raise TypeError("jitensor storages do not pickle; save the tensors that view them "
                        "(jitensor.save)")

    def cpu(self):
        if self._device.type != "cpu":
            return UntypedStorage(self.nbytes()).copy_(self)
        return self

    def cuda(self, device=None, non_blocking=False):
        target = _as_device("cuda" if device is None else device)
        if isinstance(device, int):
            target = _as_device(f"cuda:{device}")
        if target.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {target}")
        return self.to(device=target, non_blocking=non_blocking)

    def to(self, *, device, non_blocking=False):
        device = _as_device(device)
        if device == self._device:
            return self
        return UntypedStorage(self.nbytes(), device=device).copy_(self)

    def resize_(self, size):
        size = operator.index(size)
        if not self._resizable:
            raise RuntimeError("Trying to resize storage that is not resizable")
        if size < 0:
            raise RuntimeError(f"Trying to resize storage to a negative number of bytes: {size}")
        old = self._bytes
        root = backend(self._device).empty((size,), np.dtype(np.uint8))
        keep = min(size, len(old))
        if keep:
            if self._device.type == "cpu":
                root[:keep] = old[:keep]
            else:
                backend(self._device).copy(root[:keep], old[:keep])
        self._set(root, self._device, resizable=True)
        return self

    @classmethod
    def from_buffer(cls, buffer, byte_order=None, count=-1, offset=0, *, dtype=None,
                    device=None):
        """A new CPU storage holding a copy of `buffer`'s bytes (from `offset`, `count` elements
        of `dtype`, whose bytes are in `byte_order`: 'little', 'big' or 'native')."""
        if dtype is None:
            raise RuntimeError("argument 'dtype' cannot be None")
        device = _as_device("cpu" if device is None else device)
        if device.type != "cpu":
            raise RuntimeError(f"from_buffer: Not available for device {device.type}")
        if dtype.itemsize > 1 and byte_order is None:
            raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
        raw = np.frombuffer(buffer, np.uint8)
        if offset < 0 or offset > len(raw):
            raise ValueError(f"offset must be non-negative and no greater than buffer length "
                             f"({len(raw)}) , but got {offset}")
        item = dtype.itemsize
        if count < 0:
            if (len(raw) - offset) % item:
                raise ValueError(f"buffer size ({len(raw) - offset}) must be a multiple of "
                                 f"element size ({item})")
            count = (len(raw) - offset) // item
        if offset + count * item > len(raw):
            raise ValueError(f"buffer has only {len(raw) - offset} elements after offset "
                             f"{offset}, but specified a size of {count}")
        data = raw[offset:offset + count * item]
        order = {"little": "<", "big": ">", "native": "=", None: "="}.get(byte_order)
        if order is None:
            raise ValueError(f"Invalid byte_order '{byte_order}' (expected 'big', 'little', "
                             f"or 'native')")
        if item > 1 and order != "=":
            values = data.view(np.dtype(dtype.np).newbyteorder(order)).astype(dtype.np)
            data = values.view(np.uint8)
        out = cls(len(data))
        out._bytes[...] = data
        return out

    # -- typed copies: .float(), .long(), ... (TypedStorage) ---------------------------------
    def _to(self, dtype):
        from .creation import empty
        t = empty(0, dtype=dtypes.uint8, device=self._device).set_(self).to(dtype)
        storage = TypedStorage(wrap_storage=UntypedStorage._of(t), dtype=dtype, _internal=True)
        if storage._data_ptr() == self.data_ptr():
            storage = storage.clone()
        return storage

    _cast = _to


# -- TypedStorage ------------------------------------------------------------------------------
_always_warn_typed_storage_removal = False


def _get_always_warn_typed_storage_removal():
    return _always_warn_typed_storage_removal


def _set_always_warn_typed_storage_removal(always_warn):
    global _always_warn_typed_storage_removal
    if not isinstance(always_warn, bool):
        raise AssertionError(f"always_warn must be bool, got {type(always_warn).__name__}")
    _always_warn_typed_storage_removal = always_warn


def _warn_typed_storage_removal(stacklevel=2):
    """torch's deprecation warning for TypedStorage: once a process (every time once
    _set_always_warn_typed_storage_removal(True))."""
    if _always_warn_typed_storage_removal or not _warn_typed_storage_removal.__dict__.get(
            "has_warned", False):
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel + 1)
        _warn_typed_storage_removal.__dict__["has_warned"] = True


def _reset_warn_typed_storage_removal():
    _warn_typed_storage_removal.__dict__["has_warned"] = False


def _isint(x):
    return isinstance(x, (int, np.integer))


def _tensor_of(storage, dtype):
    from .creation import empty
    return empty(0, dtype=dtype, device=storage._untyped_storage.device).set_(storage)


class TypedStorage(_Casts):
    """An UntypedStorage seen as elements of a dtype (torch.TypedStorage, deprecated in torch:
    every use warns, once a process)."""

    is_sparse = False

    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if cls is _LegacyStorage:
            raise RuntimeError("Only child classes of _LegacyStorage can be instantiated")
        if cls is TypedStorage:
            return super().__new__(cls)
        msg = (f"{cls}.__new__ received an invalid combination of arguments. Expected one "
               f"of:\n * no arguments\n * (int size)\n * (Sequence data)\n"
               f" * (*, UntypedStorage wrap_storage)")
        if device is not None:
            raise RuntimeError(msg + "\nKeyword argument 'device' cannot be specified")
        if dtype is not None:
            raise RuntimeError(msg + "\nKeyword argument 'dtype' cannot be specified")
        if wrap_storage is None:
            if len(args) > 1:
                raise RuntimeError(msg + "\nToo many positional arguments")
            if len(args) == 1 and not _isint(args[0]) and \
                    not isinstance(args[0], collections.abc.Sequence):
                raise TypeError(msg + f"\nArgument type not recognized: {type(args[0])}")
            return TypedStorage(*args, dtype=cls.dtype, device="cpu", _internal=True)
        if args:
            raise RuntimeError(msg + "\nNo positional arguments should be given when using "
                                     "'wrap_storage'")
        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError(msg + f"\nArgument 'wrap_storage' must be UntypedStorage, but got "
                                  f"{type(wrap_storage)}")
        if wrap_storage.device.type != "cpu":
            raise RuntimeError(msg + f"\nDevice of 'wrap_storage' must be cpu, but got "
                                     f"{wrap_storage.device.type}")
        return TypedStorage(wrap_storage=wrap_storage, dtype=cls.dtype, _internal=True)

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        msg = ("TypedStorage.__init__ received an invalid combination of arguments. Expected "
               "one of:\n * (*, jitensor.device device, jitensor.dtype dtype)\n"
               " * (int size, *, jitensor.device device, jitensor.dtype dtype)\n"
               " * (Sequence data, *, jitensor.device device, jitensor.dtype dtype)\n"
               " * (*, UntypedStorage wrap_storage, jitensor.dtype dtype)")
        if wrap_storage is not None:
            if args:
                raise RuntimeError(msg + "\nNo positional arguments should be given when using "
                                         "'wrap_storage'")
            if dtype is None:
                raise RuntimeError(msg + "\nArgument 'dtype' must be specified")
            if not isinstance(dtype, dtypes.dtype):
                raise TypeError(msg + f"\nArgument 'dtype' must be jitensor.dtype, not "
                                      f"{type(dtype)}")
            if device is not None:
                raise RuntimeError(msg + "\nArgument 'device' should not be specified when "
                                         "'wrap_storage' is given")
            self.dtype = dtype
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(msg + f"\nArgument 'wrap_storage' must be UntypedStorage, but "
                                      f"got {type(wrap_storage)}")
            self._untyped_storage = wrap_storage
            return
        self.dtype = dtypes.get_default_dtype() if dtype is None else dtype
        device = _as_device("cpu" if device is None else device)
        if not args:
            self._untyped_storage = UntypedStorage(device=device)
        elif len(args) == 1:
            if _isint(args[0]):
                self._untyped_storage = UntypedStorage(int(args[0]) * self._element_size(),
                                                       device=device)
            elif isinstance(args[0], collections.abc.Sequence):
                from .creation import tensor
                t = tensor(args[0], dtype=self.dtype, device=device)
                self._untyped_storage = UntypedStorage._of(t)
            else:
                raise TypeError(msg + f"\nArgument type not recognized: {type(args[0])}")
        else:
            raise RuntimeError(msg + "\nToo many positional arguments")

    @property
    def _dtype(self):
        return self.dtype

    @property
    def filename(self):
        return None

    @property
    def is_cuda(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device.type == "cuda"

    @property
    def is_hpu(self):
        _warn_typed_storage_removal()
        return False

    @property
    def device(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device

    def untyped(self):
        _warn_typed_storage_removal()
        return self._untyped_storage

    def _new_wrapped_storage(self, untyped_storage):
        if type(self) is TypedStorage:
            return TypedStorage(wrap_storage=untyped_storage, dtype=self.dtype, _internal=True)
        return type(self)(wrap_storage=untyped_storage)

    def __len__(self):
        _warn_typed_storage_removal()
        return self._size()

    def _maybe_wrap_index(self, idx):
        if type(idx) is not int:
            raise TypeError(f"can't index a {type(self)} with {type(idx)}")
        if idx >= self._size() or idx < -self._size():
            raise IndexError(f"index {idx} out of range for storage of size {self._size()}")
        return idx % self._size()

    def __setitem__(self, idx, value):
        _warn_typed_storage_removal()
        return self._setitem(idx, value)

    def _setitem(self, idx, value):
        if not isinstance(idx, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if is_storage(value):
            raise RuntimeError(f"cannot set item with value type {type(value)}")
        _tensor_of(self, self.dtype)[idx] = value

    def __getitem__(self, idx):
        _warn_typed_storage_removal()
        return self._getitem(idx)

    def _getitem(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        return _tensor_of(self, self.dtype)[self._maybe_wrap_index(idx)].item()

    def fill_(self, value):
        _warn_typed_storage_removal()
        self._setitem(slice(0, self._size()), value)
        return self

    def copy_(self, source, non_blocking=None):
        _warn_typed_storage_removal()
        if isinstance(source, TypedStorage):
            source = source._untyped_storage
        self._untyped_storage.copy_(source, non_blocking)
        return self

    def nbytes(self):
        _warn_typed_storage_removal()
        return self._nbytes()

    def _nbytes(self):
        return self._untyped_storage.nbytes()

    def type(self, dtype=None, non_blocking=False):
        _warn_typed_storage_removal()
        if dtype is None:
            legacy = self._get_legacy_storage_class()
            if legacy is not None:
                return "jitensor." + legacy.__name__
            return "jitensor.storage." + type(self).__name__
        return self._untyped_storage.type(dtype, non_blocking)

    def cuda(self, device=None, non_blocking=False):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.cuda(device, non_blocking))

    def to(self, *, device, non_blocking=False):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(
            self._untyped_storage.to(device=device, non_blocking=non_blocking))

    def element_size(self):
        _warn_typed_storage_removal()
        return self._element_size()

    def _element_size(self):
        return self.dtype.itemsize

    def get_device(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.get_device()

    def __str__(self):
        _warn_typed_storage_removal()
        info = (f"[jitensor.storage.{type(self).__name__}(dtype={self.dtype}, "
                f"device={self._untyped_storage.device}) of size {self._size()}]")
        return " " + "\n ".join(str(self._getitem(i)) for i in range(self._size())) + \
            "\n" + info

    def __repr__(self):
        _warn_typed_storage_removal()
        return str(self)

    def __iter__(self):
        _warn_typed_storage_removal()
        return iter(self._getitem(i) for i in range(self._size()))

    def __copy__(self):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(_copy.copy(self._untyped_storage))

    def __deepcopy__(self, memo):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(_copy.deepcopy(self._untyped_storage, memo))

    def __sizeof__(self):
        _warn_typed_storage_removal()
        return super().__sizeof__() + self._nbytes()

    def clone(self):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def tolist(self):
        _warn_typed_storage_removal()
        return [self._getitem(i) for i in range(self._size())]

    def cpu(self):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.cpu())

    def is_pinned(self, device=None):
        _warn_typed_storage_removal()
        return False

    def is_shared(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.is_shared()

    def size(self):
        _warn_typed_storage_removal()
        return self._size()

    def _size(self):
        return self._untyped_storage.nbytes() // self._element_size()

    def pickle_storage_type(self):
        _warn_typed_storage_removal()
        return self._pickle_storage_type()

    def _pickle_storage_type(self):
        for name, d in _LEGACY.items():
            if d is self.dtype:
                return name[:-len("Storage")]
        raise KeyError(f"dtype {self.dtype} is not recognized")

    def __reduce__(self):
        raise TypeError("jitensor storages do not pickle; save the tensors that view them "
                        "(jitensor.save)")

    def data_ptr(self):
        _warn_typed_storage_removal()
        return self._data_ptr()

    def _data_ptr(self):
        return self._untyped_storage.data_ptr()

    def resizable(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.resizable()

    def resize_(self, size):
        _warn_typed_storage_removal()
        self._untyped_storage.resize_(size * self._element_size())

    @classmethod
    def from_buffer(cls, *args, **kwargs):
        _warn_typed_storage_removal()
        return cls._from_buffer(*args, **kwargs)

    @classmethod
    def _from_buffer(cls, *args, dtype=None, device=None, **kwargs):
        if cls is TypedStorage:
            dtype = dtypes.get_default_dtype() if dtype is None else dtype
            device = _as_device("cpu" if device is None else device)
            if device.type != "cpu":
                raise RuntimeError(f"TypedStorage.from_buffer: Not available for device "
                                   f"{device.type}")
        else:
            if dtype is not None or len(args) == 5:
                raise RuntimeError("from_buffer: 'dtype' can only be specified in "
                                   "UntypedStorage.from_buffer and TypedStorage.from_buffer")
            if device is not None:
                raise RuntimeError("from_buffer: 'device' can only be specified in "
                                   "UntypedStorage.from_buffer and TypedStorage.from_buffer")
            dtype = cls.dtype
        untyped = UntypedStorage.from_buffer(*args, dtype=dtype, **kwargs)
        return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)

    def _to(self, dtype):
        if not isinstance(dtype, dtypes.dtype):
            raise TypeError(f"Argument 'dtype' must be jitensor.dtype, not {type(dtype)}")
        t = _tensor_of(self, self.dtype).to(dtype)
        storage = TypedStorage(wrap_storage=UntypedStorage._of(t), dtype=dtype, _internal=True)
        if storage._data_ptr() == self._data_ptr():
            storage = storage.clone()
        return storage

    def _cast(self, dtype):
        _warn_typed_storage_removal()
        return self._to(dtype)

    def _get_legacy_storage_class(self):
        if self._untyped_storage.device.type != "cpu":
            return None
        return legacy_class(self.dtype)


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, instance):
        if type(instance) is TypedStorage:
            return instance._untyped_storage.device.type == "cpu" and cls.dtype is instance.dtype
        return False


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    pass


def _legacy(name, dtype):
    return _LegacyStorageMeta(name, (_LegacyStorage,), {
        "dtype": dtype, "__module__": "jitensor",
        "__doc__": f"{dtype} storages on the CPU (legacy, deprecated: a TypedStorage)."})


BoolStorage, ByteStorage, CharStorage, ShortStorage, IntStorage, LongStorage, HalfStorage, \
    BFloat16Storage, FloatStorage, DoubleStorage, ComplexFloatStorage, ComplexDoubleStorage = (
        _legacy(name, d) for name, d in _LEGACY.items())

StorageBase = _StorageBase  # (torch._C.StorageBase: UntypedStorage's base class)
Storage = FloatStorage  # (torch.Storage is its default storage class)


def is_storage(obj):
    """Whether obj is a storage (an UntypedStorage or a TypedStorage)."""
    return type(obj) in (UntypedStorage, TypedStorage) or isinstance(obj, (_StorageBase,
                                                                          TypedStorage))


def legacy_class(dtype):
    """The legacy storage class of `dtype` (Tensor.storage_type()); None for uint16/32/64, as
    in torch."""
    for name, d in _LEGACY.items():
        if d is dtype:
            return globals()[name]
    return None


def set_source(self, source, storage_offset, size, stride):
    """The buffer Tensor.set_(storage, storage_offset, size, stride) gives self."""
    from .ops import shape
    from .tensor import _contiguous_strides
    if isinstance(source, TypedStorage):
        if source.dtype is not self._dtype:
            raise RuntimeError(f"Expected a Storage of type {_CPP_NAMES[self._dtype.name]} or "
                               f"an UntypedStorage, but got type "
                               f"{source.dtype.scalar_name} for argument 1 'storage'")
        source = source._untyped_storage
    if source.device != self._device:
        raise RuntimeError(f"Attempted to set the storage of a tensor on device {self._device} "
                           f"to a storage on device {source.device}")
    item = self._dtype.itemsize
    if size is None:
        size, stride, offset = (source.nbytes() // item,), (1,), 0
    else:
        offset = operator.index(storage_offset)
        size = tuple(size) if isinstance(size, (tuple, list)) else (size,)
        if stride is None:
            stride = _contiguous_strides(size)
        stride = tuple(stride) if isinstance(stride, (tuple, list)) else (stride,)
        if len(size) != len(stride):
            raise RuntimeError(f"unequal size length ({len(size)}) and stride length "
                               f"({len(stride)})")
        if offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {offset}")
        need = shape._extent(shape._ints((size,), "set_", "size"),
                             shape._ints((stride,), "set_", "stride"), offset) * item
        if need > source.nbytes():
            source.resize_(need)  # a storage no tensor views grows, as torch's; others raise
    from .tensor import _wrap
    base = _wrap(source._elements(self._dtype), self._dtype, self._device)
    return shape.strided_view(base, size, stride, offset)._data
