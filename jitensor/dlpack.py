"""DLPack capsules for memory NumPy cannot export (CUDA tensors), and reading capsules NumPy
cannot read (CUDA producers without __cuda_array_interface__), with ctypes: the structs are
those of dlpack.h (v0.8 ABI, the legacy unversioned "dltensor" capsule every consumer takes).

Lifetime: an exported capsule owns a DLManagedTensor whose manager context keeps the tensor's
memory alive. The consumer renames the capsule "used_dltensor" and calls the deleter when it is
done; a capsule nobody consumed calls it when it is garbage collected."""
import ctypes

import numpy as np

CPU, CUDA = 1, 2  # DLDeviceType
_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}  # NumPy dtype kind -> DLDataTypeCode
_KINDS = {code: kind for kind, code in _CODES.items()}
_NAME, _USED = b"dltensor", b"used_dltensor"


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _Deleter)]

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = (ctypes.c_void_p, ctypes.c_char_p)
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = (ctypes.c_void_p, ctypes.c_char_p)
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = (ctypes.py_object, ctypes.c_char_p)

_exported = {}  # DLManagedTensor address -> (struct, shape, strides, owner): alive until deleted


@_Deleter
def _delete(managed):
    _exported.pop(managed, None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # called as the capsule dies (a raw pointer: the object must not be revived). Unconsumed
    # capsules still hold their tensor; consumed ones were renamed and are the consumer's.
    if _api.PyCapsule_IsValid(capsule, _NAME):
        _delete(_api.PyCapsule_GetPointer(capsule, _NAME))


def export(address, shape, strides, dtype, device, owner):
    """A "dltensor" capsule for `shape` elements of `dtype` at `address` with element
    `strides` on `device` ((DLDeviceType, ordinal)); `owner` is kept alive until the consumer
    is done with the memory."""
    dtype = np.dtype(dtype)
    ndim = len(shape)
    shape_c = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_c = (ctypes.c_int64 * max(ndim, 1))(*strides)
    managed = DLManagedTensor()
    managed.dl_tensor = DLTensor(address, DLDevice(*device), ndim,
                                 DLDataType(_CODES[dtype.kind], dtype.itemsize * 8, 1),
                                 shape_c, strides_c, 0)
    managed.deleter = _delete
    key = ctypes.addressof(managed)
    _exported[key] = (managed, shape_c, strides_c, owner)
    return _api.PyCapsule_New(key, _NAME, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


class _Imported:
    """Owns a consumed capsule's DLManagedTensor: calls its deleter when collected."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        if self.managed.deleter:
            self.managed.deleter(ctypes.addressof(self.managed))


def read(capsule):
    """Consume a "dltensor" capsule: (__cuda_array_interface__-style dict, device pair, owner),
    where the owner releases the producer's memory when it is collected."""
    if not _api.PyCapsule_IsValid(ctypes.c_void_p(id(capsule)), _NAME):
        raise BufferError("from_dlpack(): expected an unused 'dltensor' capsule (a capsule can "
                          "be consumed once; call __dlpack__() again for a new one)")
    address = _api.PyCapsule_GetPointer(ctypes.c_void_p(id(capsule)), _NAME)
    managed = DLManagedTensor.from_address(address)
    t = managed.dl_tensor
    if t.dtype.lanes != 1 or t.dtype.code not in _KINDS:
        raise BufferError(f"from_dlpack(): unsupported DLPack dtype (code {t.dtype.code}, "
                          f"{t.dtype.bits} bits, {t.dtype.lanes} lanes)")
    dtype = np.dtype(f"{_KINDS[t.dtype.code]}{t.dtype.bits // 8}")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] * dtype.itemsize
                                                for i in range(t.ndim))
    _api.PyCapsule_SetName(capsule, _USED)  # ours now: the capsule's destructor leaves it alone
    face = {"shape": shape, "typestr": dtype.str, "strides": strides, "version": 3,
            "data": ((t.data or 0) + t.byte_offset, False)}
    return face, (t.device.device_type, t.device.device_id), _Imported(managed)
