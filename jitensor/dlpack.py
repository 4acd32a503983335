"""DLPack for memory NumPy cannot export (CUDA tensors) and capsules NumPy cannot read (CUDA
producers without __cuda_array_interface__), with ctypes and the structs of dlpack.h (v0.8
ABI, the legacy unversioned "dltensor" capsule every consumer takes).

Exporting, NumPy builds the capsule from the tensor's metadata-only NumPy view (shape,
strides, dtype, and NumPy's native deleter, which keeps the view -- and so the device memory --
alive until the consumer is done, and is safe to run while an exception unwinds), and only the
device field is then set. Reading, the consumer renames the capsule "used_dltensor" and calls
the producer's deleter when the tensor that wraps the memory is collected."""
import ctypes

import numpy as np

from .dtypes import bfloat16

CPU, CUDA = 1, 2  # DLDeviceType
_KINDS = {0: "i", 1: "u", 2: "f", 6: "b"}  # DLDataTypeCode -> NumPy dtype kind
_BFLOAT = 4  # DLDataTypeCode of bfloat16, which NumPy neither exports nor reads
_NAME, _USED, _VERSIONED = b"dltensor", b"used_dltensor", b"dltensor_versioned"


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
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = (ctypes.py_object, ctypes.c_char_p)
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = (ctypes.py_object, ctypes.c_char_p)


def export(array, device):
    """A "dltensor" capsule for the NumPy view `array` of memory on `device` ((DLDeviceType,
    ordinal)); `array` stays alive until the consumer is done with the memory."""
    bfloat = array.dtype.name == "bfloat16"
    capsule = np.ndarray.__dlpack__(array.view(np.uint16) if bfloat else array)
    managed = DLManagedTensor.from_address(_api.PyCapsule_GetPointer(capsule, _NAME))
    managed.dl_tensor.device = DLDevice(*device)
    if bfloat:
        managed.dl_tensor.dtype = DLDataType(_BFLOAT, 16, 1)
    return capsule


class _Imported:
    """Owns a consumed capsule's DLManagedTensor: calls its deleter when collected."""

    def __init__(self, managed):
        self.managed, self.address = managed, ctypes.addressof(managed)

    def __del__(self):
        try:
            if self.managed.deleter:
                self.managed.deleter(self.address)
        except Exception:  # interpreter shutdown: modules are gone, the process frees all
            pass


def read(capsule):
    """Consume a "dltensor" capsule: (__cuda_array_interface__-style dict, device pair, owner),
    where the owner releases the producer's memory when it is collected. bfloat16 memory is
    described as uint16 (the interface's typestr cannot name it), with its dtype under
    "dtype"."""
    if _api.PyCapsule_IsValid(capsule, _VERSIONED):
        raise BufferError("from_dlpack(): DLPack 1.0 ('dltensor_versioned') capsules are not "
                          "supported yet; pass the producer itself, which is asked for a "
                          "legacy capsule")
    if not _api.PyCapsule_IsValid(capsule, _NAME):
        raise BufferError("from_dlpack(): expected an unused 'dltensor' capsule (a capsule can "
                          "be consumed once; call __dlpack__() again for a new one)")
    address = _api.PyCapsule_GetPointer(capsule, _NAME)
    managed = DLManagedTensor.from_address(address)
    t = managed.dl_tensor
    bfloat = (t.dtype.code, t.dtype.bits) == (_BFLOAT, 16)
    if t.dtype.lanes != 1 or t.dtype.code not in _KINDS and not bfloat:
        raise BufferError(f"from_dlpack(): unsupported DLPack dtype (code {t.dtype.code}, "
                          f"{t.dtype.bits} bits, {t.dtype.lanes} lanes)")
    dtype = np.dtype(np.uint16 if bfloat else f"{_KINDS[t.dtype.code]}{t.dtype.bits // 8}")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] * dtype.itemsize
                                                for i in range(t.ndim))
    _api.PyCapsule_SetName(capsule, _USED)  # ours now: the capsule's destructor leaves it alone
    face = {"shape": shape, "typestr": dtype.str, "strides": strides, "version": 3,
            "data": ((t.data or 0) + t.byte_offset, False),
            "dtype": bfloat16.np if bfloat else dtype}
    return face, (t.device.device_type, t.device.device_id), _Imported(managed)
