"""jt.save / jt.load in torch's checkpoint format: torch.load reads what jt.save writes, and
jt.load reads what torch.save writes, without importing torch.

The format is the zip archive torch.save writes (records stored uncompressed):

    archive/data.pkl                the object, pickled (protocol 2 unless told otherwise)
    archive/.format_version         "1"
    archive/.storage_alignment      "64"
    archive/byteorder               sys.byteorder ("little")
    archive/data/<key>              one storage's bytes, keys "0", "1", ... in order of use
    archive/version                 "3\\n"
    archive/.data/serialization_id  40 digits

Each record's data starts on a 64-byte boundary (an "FB" padding field in its local header, as
torch's writer pads); records, offsets and the directory switch to zip64 where they pass 4 GiB.
In data.pkl a tensor is ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size,
stride, requires_grad, OrderedDict())`` (a Parameter wraps that in
``torch._utils._rebuild_parameter(tensor, requires_grad, OrderedDict())``), where `storage` is
the persistent id ``('storage', torch.FloatStorage, key, location, numel)``: the storage type
names the dtype, `location` the device ("cpu", "cuda:0") and `numel` counts elements. dtypes,
devices and Sizes are written as torch.float32, torch.device(...) and torch.Size(...), NumPy
scalars as the Python numbers they hold (torch's weights-only loader refuses NumPy). Tensors
that view one buffer share one storage, with their own offsets and strides, and load back
sharing it (on the device too), as torch's views do; one tensor saved twice loads as one.
The pickle names these torch globals through stand-in objects whose GLOBAL opcodes the
standard library's Python pickler writes here, so torch is never imported (the C pickler
imports every global it writes; a custom pickle_module must offer a pickle._Pickler).

jt.load is weights-only by default, as torch.load is: the pickle is read by a restricted
unpickler that resolves only allow-listed globals (torch's tensor rebuild functions and storage
types, which map to jitensor's; torch.Size, torch.device, torch dtypes and layouts;
collections.OrderedDict and Counter; set, bytearray, complex and the latin-1 bytes encoding;
jitensor.Size, jitensor.device and jitensor dtypes by name) and what `add_safe_globals` or the
`safe_globals` context manager added. Anything else raises pickle.UnpicklingError naming the
global (an error that is also a RuntimeError, as every other fault); nothing in the file runs.
The opcodes that call or fill objects are checked too: only allowed functions are called, only
OrderedDict, Counter and allow-listed classes have their state set (BUILD), only lists are
appended to and dicts filled, tensors are never made from sizes the file gives (only as views
of its storages, checked to lie inside them), and containers nest at most 1000 deep (hashing a
deeper tuple would overflow the C stack). With
weights_only=False the file is unpickled in full (whole modules and optimizers) -- only for
files you trust: a pickle can run any code.

A damaged file (truncated, random bytes, a record missing, sizes that disagree with the
archive, a pickle that cannot be read or nests too deeply) raises RuntimeError naming the file
and the fault; record sizes are checked against the archive before anything is allocated.

Files of jitensor's previous format (a zip of ``jitensor/data.json`` and ``.npy`` arrays, no
pickle) are recognised by their ``jitensor/data.json`` record and still load; jt.save no longer
writes them. torch's legacy non-zip format (``_use_new_zipfile_serialization=False``) and
TorchScript archives are refused with an error saying so.

Saving to a path is atomic: the archive goes to a temporary file in the same directory, which
is flushed and fsynced, then renamed over the target (and the directory fsynced), so a save
that is interrupted leaves the previous file intact (a process killed mid-save leaves its
temporary file, ``.<name>.<random>.tmp``, behind). File objects are written directly."""
import _compat_pickle
import contextlib
import io
import json
import math
import os
import pickle
import re
import secrets
import stat
import struct
import sys
import warnings
import zipfile
import zlib
from collections import Counter, OrderedDict

import numpy as np

from .creation import empty, from_numpy, tensor
from .device import device as _device_type
from .device import to_device
from .dtypes import ALL as _DTYPES
from .dtypes import BAREBONES, to_dtype
from .dtypes import dtype as _dtype_type
from .kernels.registry import backend
from .nn.parameter import Parameter
from .ops.sparse import sparse_coo_tensor
from .tensor import Size, Tensor, sparse_coo, strided

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals",
           "save"]

_PREFIX = "archive"
_ALIGNMENT = 64
_MAX_DEPTH = 1000  # the standard pickler's recursion limit keeps real files far shallower
_CHUNK = 1 << 24  # storages are read in pieces of this many bytes

# torch's storage type for each jitensor dtype (the barebones unsigned ones have none: torch
# saves their bytes as an UntypedStorage), and those jitensor has no dtype for
_STORAGE_TYPES = {"bool": "BoolStorage", "uint8": "ByteStorage", "int8": "CharStorage",
                  "int16": "ShortStorage", "int32": "IntStorage", "int64": "LongStorage",
                  "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
                  "float32": "FloatStorage", "float64": "DoubleStorage",
                  "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
_FOREIGN_STORAGES = {"QInt8Storage": "qint8",
                     "QUInt8Storage": "quint8", "QInt32Storage": "qint32",
                     "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4"}
# torch dtypes without a jitensor counterpart (loading one names it in the error)
_FOREIGN_DTYPE = re.compile(r"(b?float|complex|c?u?int|qu?int|bits)\d\w*|cfloat|cdouble|chalf")


# -- saving ------------------------------------------------------------------------------------
class _TorchName:
    """A stand-in for the torch global module.name: the pickler writes its GLOBAL opcode."""

    __slots__ = ("module", "name", "line")

    def __init__(self, module, name):
        self.module, self.name = module, name
        self.line = pickle.GLOBAL + f"{module}\n{name}\n".encode("ascii")

    def __call__(self, *args):  # pickle's save_reduce accepts only callables
        raise TypeError(f"{self.module}.{self.name} stands for a torch global; it is not torch")


_NAMES = {}


def _torch(module, name):
    """The one stand-in for module.name (one object, so the pickle memoizes it)."""
    key = (module, name)
    if key not in _NAMES:
        _NAMES[key] = _TorchName(module, name)
    return _NAMES[key]


def _save_torch_name(pickler, obj):
    memo = pickler.memo.get(id(obj))
    if memo is not None:
        pickler.write(pickler.get(memo[0]))
        return
    pickler.write(obj.line)
    pickler.memoize(obj)


def _save_dtype(pickler, obj):
    _save_torch_name(pickler, _torch("torch", obj.name))


def _save_number(pickler, obj):
    pickler.save(obj.item())  # NumPy scalars are stored as the Python numbers they hold


_NUMPY_SCALARS = {np.dtype(c).type for c in "?bhilqBHILQefd"}


class _SavedStorage:
    """One buffer written as archive/data/<key>: `root` is the dense array (NumPy, or a CUDA
    DeviceArray) whose memory it is (None: an empty storage)."""

    __slots__ = ("key", "root", "dtype", "device")

    def __init__(self, key, root, dtype, device):
        self.key, self.root, self.dtype, self.device = key, root, dtype, device

    def persistent_id(self):
        size = 0 if self.root is None else self.root.size
        if self.dtype in BAREBONES:
            return ("storage", _torch("torch.storage", "UntypedStorage"), self.key,
                    str(self.device), size * self.dtype.itemsize)
        return ("storage", _torch("torch", _STORAGE_TYPES[self.dtype.name]), self.key,
                str(self.device), size)

    def host(self):
        """The storage's values in memory order, in host memory (a CPU buffer itself)."""
        if self.root is None:  # an empty tensor's
            return np.empty(0, self.dtype.np)
        flat = backend(self.device).indexing.as_strided(self.root, (self.root.size,), (1,))
        return backend(self.device).to_numpy(flat)


def _address(a):
    return a.__array_interface__["data"][0]


def _dense(a):
    """Whether `a`'s elements fill one block of memory: C order, or a permutation of it (a
    clone of a transposed tensor keeps its layout)."""
    if a.flags.c_contiguous:
        return True
    step = a.itemsize
    for s, n in sorted((s, n) for n, s in zip(a.shape, a.strides, strict=False) if n != 1):
        if s != step:
            return False
        step *= n
    return True


def _shared_root(buf):
    """The farthest array in `buf`'s chain of bases that can be its storage: dense, of its
    dtype, holding every byte it reaches at a whole number of elements from its start. None
    when there is none (then the tensor gets a storage of its own)."""
    size = buf.itemsize
    if any(s < 0 or s % size for s in buf.strides):
        return None
    low = _address(buf)
    high = low + sum((n - 1) * s for n, s in zip(buf.shape, buf.strides, strict=False)) + size
    found, obj = None, buf
    for _ in range(10_000):  # base chains are short; the bound only guards odd objects
        if obj is None:
            break
        if isinstance(obj, np.ndarray) and obj.dtype == buf.dtype and _dense(obj):
            start = _address(obj)
            if start <= low and high <= start + obj.nbytes and (low - start) % size == 0:
                found = obj
        obj = getattr(obj, "base", None)
    return found


class _Storages:
    """The storages of one save, in key order, one per buffer the saved tensors view."""

    def __init__(self):
        self.list, self._by_root = [], {}

    def place(self, t):
        """(storage, storage_offset, strides) that rebuild tensor `t` (strides in elements)."""
        buf = t._data
        root = _shared_root(buf) if buf.size else None
        if root is None:  # an empty tensor, or a layout no storage of its dtype holds
            own = t.detach().contiguous() if buf.size else t
            return self._new(own._data if buf.size else None, t), 0, own.stride()
        storage = self._by_root.get(id(root))
        if storage is None:
            storage = self._by_root[id(root)] = self._new(root, t)
        size = buf.itemsize
        return (storage, (_address(buf) - _address(root)) // size,
                tuple(s // size for s in buf.strides))

    def _new(self, root, t):
        storage = _SavedStorage(str(len(self.list)), root, t._dtype, t._device)
        self.list.append(storage)
        return storage


class _TorchPicklerMixin:
    """What a standard-library Python pickler needs to write torch's data.pkl."""

    def persistent_id(self, obj):
        return obj.persistent_id() if obj.__class__ is _SavedStorage else None

    def reducer_override(self, obj):
        cls = obj.__class__
        if cls is Size:
            return _torch("torch", "Size"), (tuple(obj),)
        if cls is _device_type:
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return _torch("torch", "device"), args
        if obj is strided or obj is sparse_coo:
            return _torch("torch.serialization", "_get_layout"), (f"torch.{obj.name}",)
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        return NotImplemented

    def _reduce_tensor(self, t):
        if t.is_sparse:
            return (_torch("torch._utils", "_rebuild_sparse_tensor"),
                    (sparse_coo, (t._indices(), t._values(), t.shape, t.is_coalesced())))
        if isinstance(t, Parameter):
            return (_torch("torch._utils", "_rebuild_parameter"),
                    (t.detach(), t.requires_grad, OrderedDict()))
        storage, offset, strides = self.storages.place(t)
        args = (storage, offset, tuple(t.shape), strides, t.requires_grad, OrderedDict())
        if t._dtype in BAREBONES:  # an untyped storage and the dtype, as torch writes them
            return _torch("torch._utils", "_rebuild_tensor_v3"), (*args, t._dtype)
        return _torch("torch._utils", "_rebuild_tensor_v2"), args


_PICKLERS = {}


def _pickler_class(pickle_module):
    """A pickler class of `pickle_module` that writes torch's globals. It must offer the
    standard library's Python pickler (pickle._Pickler, or a subclass as dill's Pickler is):
    the C pickler imports every global it writes, and torch is not imported here."""
    base = getattr(pickle_module, "_Pickler", None) or getattr(pickle_module, "Pickler", None)
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        raise TypeError(f"jt.save: pickle_module {getattr(pickle_module, '__name__', '?')!r} "
                        f"has no Python pickler (a subclass of pickle._Pickler); use the "
                        f"standard pickle module")
    if base not in _PICKLERS:
        dispatch = dict(base.dispatch)
        dispatch.update({_TorchName: _save_torch_name, _dtype_type: _save_dtype})
        dispatch.update(dict.fromkeys(_NUMPY_SCALARS, _save_number))
        _PICKLERS[base] = type("TorchPickler", (_TorchPicklerMixin, base),
                               {"dispatch": dispatch})
    return _PICKLERS[base]


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Write `obj` to `f` (a path or a binary file object) as torch.save does: tensors,
    Parameters, containers, numbers and strings (a state_dict) for torch.load(weights_only=True)
    and jt.load, or any picklable object (a whole module) for loading with weights_only=False.
    Saving to a path replaces the file atomically."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("jt.save writes only torch's zip format "
                                  "(_use_new_zipfile_serialization=True)")
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise TypeError(f"expected a path or a binary file object, got {type(f).__name__}")
    pickler_class = _pickler_class(pickle_module)
    data = io.BytesIO()
    pickler = pickler_class(data, protocol=pickle_protocol)
    pickler.storages = _Storages()
    pickler.dump(obj)  # before the file is opened: an object that cannot be pickled writes nothing
    payload, storages = data.getvalue(), pickler.storages.list
    if isinstance(f, (str, os.PathLike)):
        with _atomic_file(f) as out:
            _write_archive(out, payload, storages)
    else:
        _write_archive(f, payload, storages)


def _write_archive(out, payload, storages):
    """torch's records, in torch's order."""
    writer = _ArchiveWriter(out)
    writer.record("data.pkl", payload)
    writer.record(".format_version", b"1")
    writer.record(".storage_alignment", str(_ALIGNMENT).encode())
    writer.record("byteorder", sys.byteorder.encode())
    for storage in storages:
        host = storage.host()
        writer.record(f"data/{storage.key}", host.reshape(-1).view(np.uint8))
    writer.record("version", b"3\n")
    writer.record(".data/serialization_id",
                  f"{secrets.randbits(64):020d}{zlib.crc32(payload):020d}".encode())
    writer.finish()


_ZIP64_LIMIT = 0xFFFFFFFF  # sizes and offsets from here on need zip64 fields
_DOS_DATE = (1 << 5) | 1  # 1980-01-01: the archive's bytes do not depend on when it was saved
_LOCAL = struct.Struct("<IHHHHHIIIHH")
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
_END = struct.Struct("<IHHHHIIH")
_END64 = struct.Struct("<IQHHIIQQQQ")
_LOCATOR64 = struct.Struct("<IIQI")


class _ArchiveWriter:
    """A zip writer laid out as torch's: stored records whose data start on 64-byte
    boundaries, so that torch.load(mmap=True) can map storages in place. Offsets count from
    where writing began, so a file object need not be seekable."""

    def __init__(self, out):
        self._out, self._offset, self._entries = out, 0, []

    def _emit(self, data):
        self._out.write(data)
        self._offset += memoryview(data).nbytes

    def record(self, name, data):
        data = memoryview(data).cast("B")
        name = f"{_PREFIX}/{name}".encode()
        size, crc, offset = data.nbytes, zlib.crc32(data), self._offset
        big = size >= _ZIP64_LIMIT
        zip64 = struct.pack("<HHQQ", 1, 16, size, size) if big else b""
        pad = -(offset + _LOCAL.size + len(name) + len(zip64) + 4) % _ALIGNMENT
        extra = zip64 + struct.pack("<2sH", b"FB", pad) + b"Z" * pad
        version = 45 if big or offset >= _ZIP64_LIMIT else 20
        small = 0xFFFFFFFF if big else size
        self._emit(_LOCAL.pack(0x04034B50, version, 0, 0, 0, _DOS_DATE, crc, small, small,
                               len(name), len(extra)) + name + extra)
        self._emit(data)
        self._entries.append((name, crc, size, offset, version))

    def finish(self):
        start = self._offset
        for name, crc, size, offset, version in self._entries:
            fields = ([size, size] if size >= _ZIP64_LIMIT else []) + \
                ([offset] if offset >= _ZIP64_LIMIT else [])
            extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) \
                if fields else b""
            self._emit(_CENTRAL.pack(0x02014B50, version, version, 0, 0, 0, _DOS_DATE, crc,
                                     _field32(size), _field32(size), len(name), len(extra), 0,
                                     0, 0, 0, _field32(offset)) + name + extra)
        count, length = len(self._entries), self._offset - start
        if count >= min(_ZIP64_LIMIT, 0xFFFF) or start >= _ZIP64_LIMIT \
                or length >= _ZIP64_LIMIT:
            at = self._offset
            self._emit(_END64.pack(0x06064B50, 44, 45, 45, 0, 0, count, count, length, start))
            self._emit(_LOCATOR64.pack(0x07064B50, 0, at, 1))
            count = 0xFFFF
        self._emit(_END.pack(0x06054B50, 0, 0, count, count, _field32(length), _field32(start),
                             0))


def _field32(value):
    return 0xFFFFFFFF if value >= _ZIP64_LIMIT else value


@contextlib.contextmanager
def _atomic_file(path):
    """A new file in `path`'s directory that replaces `path` once it is complete and on disk;
    on an error it is removed and `path` is untouched."""
    target = os.path.realpath(os.fspath(path))  # a symlink keeps pointing at the checkpoint
    directory = os.path.dirname(target)
    fd, temporary = _create_temporary(directory, os.path.basename(target))
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(OSError):  # a replaced file keeps its permissions
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)


def _create_temporary(directory, name):
    """(fd, path) of a new file; opened with mode 0o666 so that the umask applies, as it does
    to a file open() creates."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        path = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"jt.save: cannot create a temporary file in {directory!r}")


def _fsync_directory(directory):
    """Make the rename durable; some systems cannot open a directory, which is fine there."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- the allow-list --------------------------------------------------------------------------
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")  # as torch: never loadable, even if allowed
_user_globals = []


def add_safe_globals(safe_globals):
    """Allow these globals in weights-only loading: classes or functions (found by their
    ``__module__`` and ``__qualname__``), or ``(object, "module.name")`` pairs."""
    for entry in safe_globals:
        _global_name(entry)  # check it now, not at the next load
        if entry not in _user_globals:
            _user_globals.append(entry)


def get_safe_globals():
    """The globals `add_safe_globals` allowed, in the order given."""
    return list(_user_globals)


def clear_safe_globals():
    _user_globals.clear()


class safe_globals:
    """``with safe_globals([...]):`` allows the globals inside the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)
        self._added = []

    def __enter__(self):
        self._added = [g for g in self.safe_globals if g not in _user_globals]
        add_safe_globals(self._added)
        return self

    def __exit__(self, *exc):
        for entry in self._added:
            if entry in _user_globals:
                _user_globals.remove(entry)


def _global_name(entry):
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError(f"safe globals: expected (object, 'module.name'), got {entry!r}")
        return entry[1]
    module, name = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        raise TypeError(f"safe globals: {entry!r} has no __module__ and __qualname__; pass "
                        f"(object, 'module.name')")
    return f"{module}.{name}"


def _user_allowed():
    return {_global_name(e): e[0] if isinstance(e, tuple) else e for e in _user_globals}


# -- what the pickle's globals load as ---------------------------------------------------------
class _Refused(pickle.UnpicklingError):
    """A global or an operation the unpickler does not allow; jt.load raises it as a
    _RefusedError naming the file."""


class _RefusedError(pickle.UnpicklingError, RuntimeError):
    """What jt.load raises for a refused global or operation: torch's pickle.UnpicklingError,
    and a RuntimeError as for every other fault, so that one `except RuntimeError` catches
    whatever a file can do to jt.load."""


class _Problem(Exception):
    """A fault in the file being loaded; jt.load raises it as a RuntimeError naming the file."""


class _StorageType:
    """What torch.<Type>Storage loads as: the dtype of the storages it names (`foreign`: the
    torch dtype jitensor lacks)."""

    __slots__ = ("name", "dtype", "foreign")

    def __init__(self, name, dtype=None, foreign=None):
        self.name, self.dtype, self.foreign = name, dtype, foreign


def _ints(value, what):
    if not isinstance(value, (tuple, list)) or not all(type(v) is int for v in value):
        raise _Problem(f"a tensor's {what} is {value!r:.200}, not a tuple of ints")
    return tuple(value)


def _size(dims=()):
    return Size(_ints(dims, "Size"))  # ints only: a Size never nests


def _device(kind, index=None):
    if not isinstance(kind, str) or index is not None and type(index) is not int:
        raise _Problem(f"a device is ({kind!r:.100}, {index!r:.100})")
    return _device_type(kind, index)


def _dtype_by_name(name):
    if isinstance(name, str):
        with contextlib.suppress(TypeError):  # TypeError: no dtype of that name
            return to_dtype(name)
    raise _Problem(f"a dtype is named {name!r:.100}")


def _get_layout(name):
    if name not in _LAYOUTS:
        raise _Problem(f"it holds the layout {name!r:.100}; jitensor has torch.strided and "
                       f"torch.sparse_coo")
    return _LAYOUTS[name]


_LAYOUTS = {"torch.strided": strided, "torch.sparse_coo": sparse_coo}


def _rebuild_sparse_tensor(layout, data):
    """A sparse COO tensor, its indices checked as sparse_coo_tensor checks them."""
    if layout is not sparse_coo or not isinstance(data, tuple) or len(data) != 4:
        raise _Problem(f"it builds a sparse tensor of layout {layout!r:.100}; jitensor's are "
                       f"COO")
    indices, values, size, coalesced = data
    if not (isinstance(indices, Tensor) and isinstance(values, Tensor)) or \
            type(coalesced) is not bool:
        raise _Problem("a sparse tensor is built from something other than two tensors")
    return sparse_coo_tensor(indices, values, size, is_coalesced=coalesced)


def _encode(text, encoding="utf-8"):
    """_codecs.encode as protocol 2 pickles bytes: a str to latin-1 bytes, and nothing else."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _Problem(f"bytes are encoded as {encoding!r:.50}")
    return text.encode("latin1")


def _bytearray(data=b"", *args):
    if not isinstance(data, (bytes, str)):  # bytearray(n) would allocate n bytes
        raise _Problem(f"a bytearray is made from a {type(data).__name__}")
    return bytearray(data, *args)


def _rebuild_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, _LoadedStorage):
        raise _Problem("a tensor is built from something other than a storage")
    return storage.view(storage.dtype, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    return _requiring_grad(_rebuild_tensor(storage, storage_offset, size, stride),
                           requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if not isinstance(storage, _LoadedStorage) or not isinstance(dtype, _dtype_type):
        raise _Problem("a tensor is built from something other than a storage and a dtype")
    return _requiring_grad(storage.view(dtype, storage_offset, size, stride), requires_grad)


def _requiring_grad(t, requires_grad):
    if type(requires_grad) is not bool:
        raise _Problem(f"a tensor's requires_grad is {requires_grad!r:.100}")
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise _Problem("a Parameter is built from something other than a tensor")
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _drop_state(_rebuild_parameter(data, requires_grad), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch's rebuild of a tensor of another class, or of one with attributes."""
    if func not in _REBUILDERS or new_type not in (Tensor, Parameter) \
            or not isinstance(args, tuple):
        raise _Problem(f"it holds a tensor of type {new_type!r:.100} rebuilt by "
                       f"{func!r:.100}; jitensor loads Tensors and Parameters")
    t = func(*args)
    if new_type is Parameter and type(t) is not Parameter:
        t = Parameter(t, t.requires_grad)
    return _drop_state(t, state)


def _drop_state(t, state):
    """torch tensors can carry attributes; jitensor's have no room for them (and setting
    attributes the file names would let it swap a tensor's buffer)."""
    if isinstance(state, tuple) and len(state) == 2:
        names = [*(state[0] or {}), *(state[1] or {})]
    else:
        names = list(state or {})
    if names:
        warnings.warn(f"jt.load: dropped the attributes {sorted(map(str, names))} that the "
                      f"file sets on a tensor: jitensor tensors carry none", stacklevel=2)
    return t


_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
               _rebuild_parameter_with_state)


def _torch_globals():
    """torch's globals that a checkpoint of tensors uses -> what they load as here."""
    untyped = _StorageType("UntypedStorage", to_dtype("uint8"))  # raw bytes
    table = {
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.Tensor": Tensor, "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": _size, "torch.device": _device,
        "torch.serialization._get_layout": _get_layout,
        "torch.UntypedStorage": untyped, "torch.storage.UntypedStorage": untyped,
    }
    for d in _DTYPES:
        table[f"torch.{d.name}"] = d
    for module in ("torch", "torch.cuda"):  # torch 1.x named CUDA storages torch.cuda.*
        for d in _DTYPES:
            name = _STORAGE_TYPES.get(d.name)
            if name is not None:
                table[f"{module}.{name}"] = _StorageType(name, d)
        for name, foreign in _FOREIGN_STORAGES.items():
            table[f"{module}.{name}"] = _StorageType(name, foreign=foreign)
    return table


_TORCH_GLOBALS = _torch_globals()
_ALLOWED = {
    **_TORCH_GLOBALS,
    "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
    "builtins.set": set, "builtins.bytearray": _bytearray, "builtins.complex": complex,
    "_codecs.encode": _encode,
    "jitensor.tensor.Size": _size, "jitensor.device.device": _device,
    "jitensor.dtypes.to_dtype": _dtype_by_name,
}
# Tensor is allowed only as the class _rebuild_from_type_v2 names: Tensor(*sizes) would
# allocate whatever the file asks for
_NOT_CALLABLE = (Tensor,)
_BUILDABLE = (OrderedDict, Counter)  # may be created empty and filled (BUILD)
_CONTAINERS = (tuple, list, dict, OrderedDict, Counter, set, frozenset)


def _torch_global(module, name):
    """What torch's module.name loads as; None when it is not torch's. A torch global that
    jitensor has no counterpart for raises: the file holds torch objects."""
    if module != "torch" and not module.startswith("torch."):
        return None
    found = _TORCH_GLOBALS.get(f"{module}.{name}")
    if found is not None:
        return found
    if module == "torch" and _FOREIGN_DTYPE.fullmatch(name):
        raise _Problem(f"it holds torch.{name} values; jitensor has no {name} dtype (convert "
                       f"them in torch first, e.g. t.to(torch.float32))")
    raise _Refused(f"it holds the torch object {module}.{name}, which jitensor has no "
                   f"counterpart for; save tensors and containers of them in torch (a "
                   f"module's state_dict(), not the module)")


def _fix_name(module, name):
    """Python 2's names for globals (protocol 2 pickles are written with them) -> Python 3's."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


# -- loading -----------------------------------------------------------------------------------
class _LoadedStorage:
    """A storage of the file: its values (host memory, read once) and the 1-D tensors on the
    target device that the file's tensors view, one per dtype they are viewed as."""

    __slots__ = ("key", "dtype", "host", "location", "_placer", "_placed")

    def __init__(self, key, dtype, host, location, placer):
        self.key, self.dtype, self.host, self.location = key, dtype, host, location
        self._placer, self._placed = placer, {}

    def base(self, dtype):
        """The storage as a 1-D tensor of `dtype` on the target device (placed once)."""
        if dtype not in self._placed:
            host = self.host
            if dtype is not self.dtype:  # _rebuild_tensor_v3 reads raw bytes as its dtype
                if self.dtype is not to_dtype("uint8") or host.nbytes % dtype.itemsize:
                    raise _Problem(f"storage {self.key} holds {self.dtype} values but a "
                                   f"tensor reads it as {dtype}")
                host = host.view(dtype.np)
            self._placed[dtype] = self._placer(host, dtype, self.location, self.key)
        return self._placed[dtype]

    def view(self, dtype, offset, size, stride):
        """A tensor viewing this storage, its layout checked to lie inside it first."""
        from .ops.shape import strided_view
        size, stride = _ints(size, "size"), _ints(stride, "stride")
        if type(offset) is not int or offset < 0 or len(size) != len(stride) \
                or any(n < 0 for n in size) or any(s < 0 for s in stride):
            raise _Problem(f"a tensor of size {size}, stride {stride} and offset "
                           f"{offset!r:.50} in storage {self.key}")
        base = self.base(dtype)
        if math.prod(size) == 0:
            return empty(size, dtype=dtype, device=base.device)
        last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=False))
        if last >= base.numel():
            raise _Problem(f"a tensor of size {size}, stride {stride} and offset {offset} "
                           f"reaches element {last} of storage {self.key}, which holds "
                           f"{base.numel()}")
        return strided_view(base, list(size), list(stride), offset)


def _placer(map_location):
    """place(host array, dtype, saved location, key) -> the tensor on the device that
    `map_location` picks: None (where it was saved), a device or string, a dict from saved
    locations to devices, or a callable (cpu_tensor, saved_location) -> tensor or None."""
    def place(host, dtype, location, key):
        m = map_location
        if callable(m) and not isinstance(m, (str, _device_type)):
            out = m(_on_cpu(host, dtype, key), location)
            if out is None:
                return _on_device(host, dtype, location, key)
            if not isinstance(out, Tensor) or out.dtype is not dtype or out.numel() != host.size:
                raise _Problem(f"map_location returned a {type(out).__name__} for storage "
                               f"{key}; expected a tensor of {host.size} {dtype} elements")
            return out.reshape(host.shape)
        target = location if m is None else m.get(location, location) if isinstance(m, dict) \
            else m
        return _on_device(host, dtype, target, key)
    return place


def _on_cpu(host, dtype, key):
    return from_numpy(host)


def _on_device(host, dtype, target, key):
    target = to_device(target)
    if target.type == "cpu":
        return _on_cpu(host, dtype, key)
    return tensor(host, dtype=dtype, device=target)


class _Archive:
    """A zip archive being loaded, with every record's sizes checked against the file before
    anything is read or allocated."""

    def __init__(self, raw):
        self.raw = raw
        self.size = raw.seek(0, os.SEEK_END)
        raw.seek(0)
        try:
            self.zip = zipfile.ZipFile(raw)
            infos = self.zip.infolist()
        except Exception as e:  # noqa: BLE001 (zipfile raises many types on damaged input)
            raise _Problem(self._not_an_archive(e)) from None
        names = [i.filename for i in infos]
        if len(set(names)) != len(names):
            raise _Problem("it holds two records of one name; it is damaged")
        self.infos = dict(zip(names, infos, strict=False))

    def _not_an_archive(self, error):
        self.raw.seek(0)
        head = self.raw.read(16)
        if head.startswith(b"\x80") and b"\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19" in head:
            return ("it is in torch's legacy format (torch.save with "
                    "_use_new_zipfile_serialization=False), which jitensor does not read: "
                    "re-save it with torch.save's default")
        if head.startswith(b"PK"):
            return f"it is a damaged or truncated zip archive ({error})"
        return "it is not a checkpoint: neither torch.save's zip archive nor jitensor's format"

    def info(self, name):
        info = self.infos.get(name)
        if info is None:
            raise _Problem(f"it lacks the record {name}; it is damaged or truncated")
        if info.flag_bits & 1 or info.compress_type not in (zipfile.ZIP_STORED,
                                                              zipfile.ZIP_DEFLATED):
            raise _Problem(f"record {name} is encrypted or compressed with method "
                           f"{info.compress_type}; torch.save stores records uncompressed")
        stored = info.compress_type == zipfile.ZIP_STORED
        if info.header_offset + _LOCAL.size + info.compress_size > self.size or \
                (info.file_size != info.compress_size if stored
                 else info.file_size > 1032 * info.compress_size + 64):  # deflate's limit
            raise _Problem(f"record {name} declares {info.file_size} bytes, which the file's "
                           f"{self.size} bytes cannot hold; it is damaged or truncated")
        return info

    def read(self, name):
        info = self.info(name)
        return self._reading(name, lambda: self.zip.read(info))

    def read_into(self, name, out):
        """Fill the array `out` from the record: a stored record straight from the file (one
        read, then its CRC checked), a compressed one in pieces."""
        info = self.info(name)
        view = memoryview(out.reshape(-1).view(np.uint8))
        if info.file_size != view.nbytes:
            raise _Problem(f"record {name} holds {info.file_size} bytes where its storage "
                           f"needs {view.nbytes}; it is damaged")

        def fill():
            if info.compress_type == zipfile.ZIP_STORED:
                self.raw.seek(self.data_offset(name))
                _read_fully(self.raw, view)
                if zlib.crc32(view) != info.CRC:
                    raise zipfile.BadZipFile(f"Bad CRC-32 for file {name!r}")
            else:
                with self.zip.open(info) as src:
                    _read_fully(src, view)
                    src.read(1)  # reaching the end checks the CRC
        self._reading(name, fill)

    def data_offset(self, name):
        """Where a stored record's bytes start in the file (to map them)."""
        info = self.info(name)
        self.raw.seek(info.header_offset)
        header = self.raw.read(_LOCAL.size)
        if len(header) != _LOCAL.size or header[:4] != b"PK\x03\x04" \
                or info.compress_type != zipfile.ZIP_STORED:
            raise _Problem(f"record {name} has no readable stored data to map; it is damaged")
        fields = _LOCAL.unpack(header)
        start = info.header_offset + _LOCAL.size + fields[9] + fields[10]
        if start + info.file_size > self.size:
            raise _Problem(f"record {name} runs past the end of the file; it is truncated")
        return start

    def _reading(self, name, read):
        try:
            return read()
        except _Problem:
            raise
        except Exception as e:  # noqa: BLE001 (CRC errors, EOF, zlib errors: all damage)
            raise _Problem(f"record {name} cannot be read ({type(e).__name__}: {e})") from None


def _read_fully(src, view):
    done = 0
    while done < view.nbytes:
        n = src.readinto(view[done:done + _CHUNK])
        if not n:
            raise EOFError("the record ends early")
        done += n


class _StorageReader:
    """persistent_load for the file's pickle: each storage read once, then shared by every
    tensor that views it."""

    def __init__(self, archive, prefix, place, byteorder, mapped):
        self.archive, self.prefix, self.place = archive, prefix, place
        self.swap = byteorder != sys.byteorder
        self.mapped = mapped  # the file as a NumPy memmap (jt.load(mmap=True)), or None
        self.loaded = {}

    def __call__(self, pid):
        if type(pid) is not tuple or len(pid) != 5 or pid[0] not in ("storage", b"storage"):
            raise _Problem(f"a persistent id {pid!r:.100} is not a storage")
        _, kind, key, location, numel = pid
        if not isinstance(kind, _StorageType) or not isinstance(key, str) \
                or not isinstance(location, str) or type(numel) is not int or numel < 0:
            raise _Problem(f"the storage {pid!r:.200} is malformed")
        if kind.foreign is not None:
            raise _Problem(f"storage {key} holds torch.{kind.foreign} values; jitensor has no "
                           f"{kind.foreign} dtype (convert them in torch first, e.g. "
                           f"t.to(torch.float32))")
        found = self.loaded.get(key)
        if found is None:
            found = self.loaded[key] = _LoadedStorage(
                key, kind.dtype, self._host(key, kind.dtype, numel), location, self.place)
        elif found.dtype is not kind.dtype or found.host.size != numel:
            raise _Problem(f"storage {key} is named twice with different types or sizes")
        return found

    def _host(self, key, dtype, numel):
        """The storage's values: read (after its size is checked against the record), or
        mapped from the file."""
        name = f"{self.prefix}/data/{key}"
        nbytes = numel * dtype.itemsize
        if self.archive.info(name).file_size != nbytes:
            raise _Problem(f"record {name} holds {self.archive.infos[name].file_size} bytes "
                           f"where its storage of {numel} {dtype.name} elements needs "
                           f"{nbytes}")
        if self.mapped is not None:
            start = self.archive.data_offset(name)
            host = self.mapped[start:start + nbytes]
            host = host.view(dtype.np) if start % dtype.itemsize == 0 else \
                np.frombuffer(host.tobytes(), dtype.np)  # misaligned: a copy
        else:
            host = np.empty(numel, dtype.np)
            self.archive.read_into(name, host)
        return host.byteswap() if self.swap and dtype.itemsize > 1 else host


class _WeightsOnlyUnpickler(pickle._Unpickler):
    """The standard library's Python unpickler with torch's weights-only rules: globals only
    from the allow-list, and the opcodes that call, build or fill objects checked (the C
    unpickler cannot be checked opcode by opcode)."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, persistent_load, encoding="utf-8"):
        super().__init__(file, encoding=encoding)
        self.persistent_load = persistent_load
        user = _user_allowed()
        self.allowed = {**_ALLOWED, **user}
        self.callable_ids = {id(v) for v in self.allowed.values() if v not in _NOT_CALLABLE}
        # classes whose objects the pickle may create empty and then fill (BUILD)
        self.buildable_ids = {id(c) for c in _BUILDABLE} | \
            {id(v) for v in user.values() if isinstance(v, type)}
        self.depths = {}  # id -> (nesting depth, container) of the containers built

    def find_class(self, module, name):
        module, name = _fix_name(module, name)
        full = f"{module}.{name}"
        if module.split(".")[0] in _BLOCKED_MODULES:
            raise _Refused(f"Weights only load failed: GLOBAL {full} is from module {module}, "
                           f"which is blocked")
        if full in self.allowed:
            return self.allowed[full]
        found = _torch_global(module, name)
        if found is not None:
            return found
        raise _Refused(
            f"Weights only load failed. Unsupported global: GLOBAL {full} was not an allowed "
            f"global by default. Please use `jitensor.serialization.add_safe_globals([{name}])`"
            f" or the `jitensor.serialization.safe_globals([{name}])` context manager to "
            f"allowlist this global if you trust this class/function, or load with "
            f"weights_only=False if you trust the whole file (its pickle can then run "
            f"arbitrary code).")

    def load_global(self):
        module, name = self.readline(), self.readline()
        if not module.endswith(b"\n") or not name.endswith(b"\n"):  # not a name cut short
            raise _Problem("its data.pkl ends inside a GLOBAL opcode; it is truncated")
        self.append(self.find_class(module[:-1].decode(), name[:-1].decode()))

    def load_reduce(self):
        args, func = self.stack.pop(), self.stack[-1]
        if id(func) not in self.callable_ids or type(args) is not tuple:
            raise _Refused(f"Weights only load failed: the pickle calls {func!r:.100}, which "
                           f"is not an allowed function")
        self.stack[-1] = result = func(*args)
        if type(result) in _CONTAINERS:  # OrderedDict(pairs), set(items), ...
            self._deepen(result, args)

    def load_newobj(self):
        args, cls = self.stack.pop(), self.stack.pop()
        if cls is Parameter and type(args) is tuple:  # as torch: Parameter(data, grad)
            self.append(_rebuild_parameter(*args))
        elif id(cls) in self.buildable_ids and type(args) is tuple:
            self.append(cls.__new__(cls, *args))
        else:
            raise _Refused(f"Weights only load failed: the pickle creates a {cls!r:.100}, "
                           f"which is not an allowed class")

    def load_build(self):
        state, inst = self.stack.pop(), self.stack[-1]
        if id(type(inst)) not in self.buildable_ids:
            raise _Refused(f"Weights only load failed: the pickle sets the state of a "
                           f"{type(inst).__name__}; only OrderedDict, Counter and allowlisted "
                           f"classes may have theirs set")
        if type(inst) in _BUILDABLE:  # torch's state_dict OrderedDicts carry _metadata
            if not isinstance(state, dict) or not all(type(k) is str for k in state):
                raise _Problem(f"the state of an {type(inst).__name__} is {state!r:.100}")
            inst.__dict__.update(state)
            return
        if hasattr(inst, "__setstate__"):  # an allowlisted class: as pickle builds it
            inst.__setstate__(state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            inst.__dict__.update(state)
        for k, v in (slots or {}).items():
            setattr(inst, k, v)

    def _refuse_unless(self, ok, opcode):
        if not ok:
            raise _Refused(f"Weights only load failed: the pickle applies {opcode} to a "
                           f"{type(self.stack[-1]).__name__}")

    def _deepen(self, container, items):
        """Note that `container` holds `items`; refuse nesting deeper than _MAX_DEPTH. Tuples
        are counted exactly (hashing one recurses in C without a limit: a deep one used as a
        dict key would crash the interpreter); other containers as the pickle fills them."""
        depth = 1 + max((self.depths[id(x)][0] for x in items if id(x) in self.depths),
                        default=0)
        if depth > self.depths.get(id(container), (0,))[0]:
            if depth > _MAX_DEPTH:
                raise _Problem(f"its pickle nests containers more than {_MAX_DEPTH} deep; it "
                               f"is damaged or hostile")
            self.depths[id(container)] = depth, container  # alive, so that ids stay unique

    def load_append(self):
        value = self.stack.pop()
        self._refuse_unless(type(self.stack[-1]) is list, "APPEND")
        self.stack[-1].append(value)
        self._deepen(self.stack[-1], (value,))

    def load_appends(self):
        items = self.pop_mark()
        self._refuse_unless(type(self.stack[-1]) is list, "APPENDS")
        self.stack[-1].extend(items)
        self._deepen(self.stack[-1], items)

    def load_setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._refuse_unless(type(self.stack[-1]) in (dict, OrderedDict, Counter), "SETITEM")
        self.stack[-1][key] = value
        self._deepen(self.stack[-1], (key, value))

    def load_setitems(self):
        items = self.pop_mark()
        self._refuse_unless(type(self.stack[-1]) in (dict, OrderedDict, Counter), "SETITEMS")
        target = self.stack[-1]
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]
        self._deepen(target, items)

    def load_additems(self):
        items = self.pop_mark()
        self._refuse_unless(type(self.stack[-1]) is set, "ADDITEMS")
        self.stack[-1].update(items)
        self._deepen(self.stack[-1], items)

    def _refuse_opcode(opcode):
        def refuse(self):
            raise _Refused(f"Weights only load failed: the pickle uses the {opcode} opcode, "
                           f"which creates arbitrary objects")
        return refuse

    def _tracking_depth(load_container):
        """An opcode that builds a container from items, which also notes its depth."""
        def load(self):
            load_container(self)
            made = self.stack[-1]
            self._deepen(made, [*made.keys(), *made.values()] if type(made) is dict else made)
        return load

    dispatch[pickle.GLOBAL[0]] = load_global
    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.BUILD[0]] = load_build
    dispatch[pickle.APPEND[0]] = load_append
    dispatch[pickle.APPENDS[0]] = load_appends
    dispatch[pickle.SETITEM[0]] = load_setitem
    dispatch[pickle.SETITEMS[0]] = load_setitems
    dispatch[pickle.ADDITEMS[0]] = load_additems
    for _op, _name in ((pickle.NEWOBJ_EX, "NEWOBJ_EX"), (pickle.INST, "INST"),
                       (pickle.OBJ, "OBJ")):
        dispatch[_op[0]] = _refuse_opcode(_name)
    for _op in (pickle.TUPLE, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3, pickle.LIST,
                pickle.DICT, pickle.FROZENSET):
        dispatch[_op[0]] = _tracking_depth(dispatch[_op[0]])
    del _op, _name, _refuse_opcode, _tracking_depth


def _full_unpickler(pickle_module):
    """An unpickler of anything (weights_only=False), with torch's tensor globals mapped to
    jitensor's."""
    base = (pickle_module or pickle).Unpickler

    class FullUnpickler(base):
        def find_class(self, module, name):
            found = _torch_global(*_fix_name(module, name))
            return super().find_class(module, name) if found is None else found

    return FullUnpickler


@contextlib.contextmanager
def _open_for_load(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            yield file
    elif hasattr(f, "read"):
        seekable = getattr(f, "seekable", None)
        yield f if seekable is not None and seekable() else io.BytesIO(f.read())
    else:
        raise TypeError(f"expected a path or a binary file object, got {type(f).__name__}")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read a checkpoint written by jt.save or torch.save (or by jitensor's previous format).

    weights_only (the default, True): only tensors, containers, numbers, strings and
    allow-listed globals load (see add_safe_globals); anything else raises
    pickle.UnpicklingError (a RuntimeError too) without running. weights_only=False loads any
    pickled object (a whole module): only for files you trust.
    map_location: where tensors go -- None (the device each was saved from), a device or
    string ("cpu", "cuda"), a dict from saved locations to devices, or a callable
    (cpu_tensor, saved_location) -> tensor or None (None: the saved device).
    mmap: map the file's storages instead of reading them (a path only); CPU tensors then view
    the file's pages, copy-on-write.
    A damaged or hostile file raises RuntimeError naming it and the fault."""
    weights_only = _weights_only(weights_only)
    if weights_only and pickle_module is not None:
        raise RuntimeError("jt.load: cannot load weights safely with an explicit "
                           "pickle_module; pass weights_only=False to use it")
    if weights_only and set(pickle_load_args) - {"encoding"}:
        raise TypeError(f"jt.load: unexpected arguments {sorted(pickle_load_args)} "
                        f"(weights-only loading takes only encoding)")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("jt.load: f must be a file path in order to use the mmap argument")
    name = _name(f)
    try:
        with _open_for_load(f) as raw:
            archive = _Archive(raw)
            if _LEGACY_DATA in archive.infos:
                return _load_legacy(archive, map_location)
            payload, storages = _open_checkpoint(archive, f if mmap else None, map_location)
            return _unpickle(payload, storages, weights_only, pickle_module, pickle_load_args)
    except _Problem as e:
        raise RuntimeError(f"jt.load: cannot load {name}: {e}") from e.__cause__
    except _Refused as e:
        raise _RefusedError(f"jt.load: cannot load {name}: {e}") from None
    except RecursionError:  # a structure nested past the interpreter's recursion limit
        raise RuntimeError(f"jt.load: cannot load {name}: it nests too deeply; it is damaged "
                           f"or hostile") from None
    except RuntimeError as e:  # jitensor's own (a device that is not available): name the file
        raise RuntimeError(f"jt.load: cannot load {name}: {e}") from e


def _open_checkpoint(archive, mmap_path, map_location):
    """(data.pkl's bytes, the persistent_load that reads the storages) of torch's layout."""
    if not archive.infos:
        raise _Problem("it is an empty zip archive, not a checkpoint")
    prefix = next(iter(archive.infos)).partition("/")[0]  # as torch: the first record's
    if f"{prefix}/constants.pkl" in archive.infos:
        raise _Problem("it is a TorchScript archive (torch.jit.save); jitensor reads "
                       "torch.save checkpoints")
    payload = archive.read(f"{prefix}/data.pkl")
    byteorder = sys.byteorder  # as torch: a file without the record is in the machine's
    if f"{prefix}/byteorder" in archive.infos:
        byteorder = archive.read(f"{prefix}/byteorder").decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise _Problem(f"it declares the byte order {byteorder!r:.50}; it is damaged")
    mapped = None if mmap_path is None else np.memmap(mmap_path, mode="c")
    return payload, _StorageReader(archive, prefix, _placer(map_location), byteorder, mapped)


_TRUE = ("1", "y", "yes", "true")


def _weights_only(weights_only):
    """load's weights_only: True unless the caller says otherwise, and torch's environment
    overrides (TORCH_FORCE_WEIGHTS_ONLY_LOAD always; TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD where the
    caller did not pass it), with torch's messages."""
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_no and weights_only is None:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the "
                      "`weights_only` argument was not explicitly passed to `torch.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return True if weights_only is None else weights_only


def _unpickle(payload, storages, weights_only, pickle_module, pickle_load_args):
    if weights_only:
        unpickler = _WeightsOnlyUnpickler(io.BytesIO(payload), storages, **pickle_load_args)
    else:
        pickle_load_args.setdefault("encoding", "utf-8")
        unpickler = _full_unpickler(pickle_module)(io.BytesIO(payload), **pickle_load_args)
        unpickler.persistent_load = storages
    try:
        return unpickler.load()
    except (_Problem, _Refused, RecursionError):
        raise
    except RuntimeError:  # jitensor's own (e.g. CUDA is not available): already clear
        raise
    except Exception as e:  # noqa: BLE001 (whatever a damaged pickle makes the unpickler raise)
        raise _Problem(f"its data.pkl cannot be unpickled ({type(e).__name__}: "
                       f"{str(e)[:300]}); it is damaged") from e


def _name(f):
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"


# -- jitensor's previous format ----------------------------------------------------------------
_LEGACY_DATA = "jitensor/data.json"


def _load_legacy(archive, map_location):
    """A file of jitensor's previous format: jitensor/data.json describes the object, each
    tensor is jitensor/tensors/<n>.npy (read with allow_pickle=False)."""
    try:
        header = json.loads(archive.read(_LEGACY_DATA))
    except ValueError as e:
        raise _Problem(f"it has no readable {_LEGACY_DATA} ({e})") from None
    if not isinstance(header, dict) or header.get("format") != "jitensor":
        raise _Problem(f"its {_LEGACY_DATA} does not describe a jitensor object")
    if header.get("version") != 1:
        raise _Problem(f"it has format version {header.get('version')!r:.50}; this jitensor "
                       f"reads version 1")
    return _LegacyDecoder(archive, map_location).decode(header.get("root"))


class _LegacyDecoder:
    def __init__(self, archive, map_location):
        self.archive, self.place = archive, _placer(map_location)
        self.loaded = {}  # tensor number -> tensor, so a tensor saved once loads once

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, dict) and len(node) == 1:
            (tag, body), = node.items()
            if tag in ("list", "tuple") and isinstance(body, list):
                items = [self.decode(x) for x in body]
                return items if tag == "list" else tuple(items)
            if tag in ("dict", "OrderedDict") and isinstance(body, list):
                pairs = ((self.decode(k), self.decode(v)) for k, v in body)
                return dict(pairs) if tag == "dict" else OrderedDict(pairs)
            if tag == "size" and isinstance(body, list):
                return _size(body)
            if tag == "dtype":
                return _dtype_by_name(body)
            if tag == "device":
                return _device(body)
        if isinstance(node, dict) and isinstance(node.get("tensor"), int) \
                and isinstance(node.get("dtype"), str) and isinstance(node.get("device"), str):
            return self.tensor(node)
        raise _Problem(f"its structure holds an entry it cannot read: {str(node)[:200]}; it "
                       f"is damaged or was not written by jt.save")

    def tensor(self, node):
        n = node["tensor"]
        if n not in self.loaded:
            name = f"jitensor/tensors/{n}.npy"
            dtype = _dtype_by_name(node["dtype"])
            host = _read_npy(self.archive.read(name), name)
            if host.dtype != dtype.np:
                raise _Problem(f"{name} holds {host.dtype} values but the structure says "
                               f"{dtype}; it is damaged")
            t = self.place(host, dtype, node["device"], name)
            if node.get("parameter"):
                t = Parameter(t, bool(node.get("requires_grad")))
            elif node.get("requires_grad"):
                t.requires_grad_(True)
            self.loaded[n] = t
        return self.loaded[n]


def _read_npy(data, name):
    """The array of a .npy record, its header's size checked against the record before
    NumPy allocates it."""
    f = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(f)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
            else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f)
        needed = math.prod(shape) * dtype.itemsize
        if needed > len(data) - f.tell():
            raise _Problem(f"{name} holds {len(data) - f.tell()} bytes of data where its "
                           f"shape {shape!r:.100} of {dtype} needs {needed}; it is damaged")
        f.seek(0)
        return np.lib.format.read_array(f, allow_pickle=False)
    except _Problem:
        raise
    except Exception as e:  # noqa: BLE001 (a damaged header raises ValueError, tokenize's
        # TokenError, SyntaxError...; an array of objects, ValueError)
        raise _Problem(f"{name} cannot be read as an array ({type(e).__name__}: "
                       f"{str(e)[:200]})") from None
