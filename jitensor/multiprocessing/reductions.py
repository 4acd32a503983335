"""CPU tensors in shared memory, and how tensors cross processes (torch.multiprocessing's
reductions).

`Tensor.share_memory_()` moves a tensor's storage into a `SharedBuffer`: memory mapped from a
file that has no name (a memfd on Linux, an unlinked temporary file elsewhere), whose open
descriptor other processes receive and map. A tensor pickled by multiprocessing (a Queue,
`Process` arguments under spawn or forkserver) travels as that descriptor and its geometry:
the receiver maps the same memory, so a write on either side is seen by the other (Hogwild
training, `model.share_memory()`). As in torch, sending a tensor that is not shared yet moves
it into shared memory first. This is torch's `file_descriptor` strategy, whatever
`set_sharing_strategy` picked: no names are left in /dev/shm, and the memory is freed when the
last process lets go of it. Plain `pickle` (`jt.save`, `copy.deepcopy`) still copies.

Where jitensor differs: a tensor holds its buffer, not its storage (storage.py), so
`share_memory_()` can move a storage only while the tensor it is called on is its only view;
otherwise it raises, rather than leave the other views writing to the old memory. A tensor
sent in that state travels as a shared copy, and so does one this process received (it keeps
no descriptors of what it receives: SharedBuffer). CUDA tensors travel as copies (torch's CUDA
IPC has no counterpart here)."""
import ctypes
import mmap
import os
import sys
import tempfile
from multiprocessing.context import get_spawning_popen
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

__all__ = ["SharedBuffer", "init_reductions", "is_shared", "share_memory_"]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_FAILED = ctypes.c_void_p(-1).value


class SharedBuffer(ctypes.c_char * (1 << 46)):
    """Memory mapped from an unnamed file, unmapped when NumPy lets go of it: a ctypes array
    at the mapping (of a nominal length above any mapping's, as kernels/cpu/memory.py's
    leases) that a storage's array takes as its buffer. libc's mmap, not Python's, which keeps
    a descriptor of its own open for every mapping. The process that made the memory keeps
    the file open (`fd`) to hand it to other processes; one that received it closes the file
    at once (`fd` None): a loop keeping every batch of a DataLoader's workers would otherwise
    hold a descriptor per tensor (torch's "Too many open files")."""

    __slots__ = ("address", "nbytes", "fd")

    @classmethod
    def new(cls, nbytes):
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create("jitensor", os.MFD_CLOEXEC)
        else:
            fd, path = tempfile.mkstemp(prefix="jitensor-")
            os.unlink(path)
        try:
            os.ftruncate(fd, max(nbytes, 1))  # (a mapping cannot be empty)
        except BaseException:
            os.close(fd)
            raise
        return cls.attach(fd, max(nbytes, 1), keep=True)

    @classmethod
    def attach(cls, fd, nbytes, keep=False):
        """Map `nbytes` of open file `fd`, which the buffer then owns (`keep`) or closes."""
        address = _libc.mmap(None, nbytes, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED,
                             fd, 0)
        if address in (None, _FAILED):
            error = ctypes.get_errno()
            os.close(fd)
            raise OSError(error, f"mmap of {nbytes} shared bytes: {os.strerror(error)}")
        buf = cls.from_address(address)
        buf.address, buf.nbytes, buf.fd = address, nbytes, fd if keep else None
        if not keep:
            os.close(fd)  # (the mapping stays)
        return buf

    def __del__(self):
        _libc.munmap(self.address, self.nbytes)
        if self.fd is not None:
            os.close(self.fd)


def _storage(data):
    from ..ops.shape import _storage
    return _storage(data)


def is_shared(data):
    """Whether CPU array `data` lies in a SharedBuffer."""
    return isinstance(_storage(data).base, SharedBuffer)


def _in(buf, nbytes, shape, dtype, strides, offset):
    """An array at byte `offset` of SharedBuffer `buf`, whose first `nbytes` bytes are its
    storage (a uint8 array, on every side)."""
    root = np.ndarray((nbytes,), np.uint8, buffer=buf)
    return np.ndarray(shape, dtype, buffer=root, offset=offset, strides=strides)


def _shared_copy(data):
    """`data` with its whole storage copied into a new SharedBuffer."""
    from ..device import device
    from ..storage import _flat_bytes
    root = _storage(data)
    buf = SharedBuffer.new(root.nbytes)
    np.ndarray((root.nbytes,), np.uint8, buffer=buf)[:] = _flat_bytes(root, device("cpu"))
    return _in(buf, root.nbytes, data.shape, data.dtype, data.strides,
               data.ctypes.data - root.ctypes.data)


def share_memory_(t):
    """Move CPU tensor `t`'s storage into shared memory (nothing if it is there already);
    returns t. Refused while other arrays view the storage: they would keep the old memory."""
    if t._device.type != "cpu" or is_shared(t._data):
        return t
    root = _storage(t._data)
    # references to root: t's buffer (root itself or a view of it), `root` and the call's
    # argument; any more are other views, other tensors or storages holding it
    others = sys.getrefcount(root) - 3
    del root
    if others > 0:
        raise RuntimeError(
            f"share_memory_: {others} other tensor(s) or view(s) share this tensor's storage, "
            f"and jitensor can move a storage into shared memory only while one tensor views "
            f"it (the others would keep the old memory). Call share_memory_() before taking "
            f"views or detached copies of the tensor, or share a clone: t.clone().share_memory_()")
    t._data = _shared_copy(t._data)
    return t


# -- pickling through multiprocessing ----------------------------------------------------------
def _rebuild_shared(cls, fd, nbytes, geometry, dtype_name, requires_grad):
    from ..device import device
    from ..dtypes import to_dtype
    from ..tensor import _wrap
    dtype, (shape, strides, offset) = to_dtype(dtype_name), geometry
    # (the dtype's own NumPy object: kernels tell the narrow ones apart by identity)
    data = _in(SharedBuffer.attach(fd.detach(), max(nbytes, 1)), nbytes, shape, dtype.np,
               strides, offset)
    t = _wrap(data, dtype, device("cpu"))
    if cls is not type(t):  # a Parameter: its own requires_grad flag
        return cls(t, requires_grad)
    return t.requires_grad_() if requires_grad else t


def _reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")
    if t._device.type != "cpu":
        return t.__reduce__()
    copy = None  # (no reference to t's buffer is held here: share_memory_ counts them)
    if not is_shared(t._data):
        try:
            share_memory_(t)
        except RuntimeError:  # other views keep the storage: send a shared copy
            copy = _shared_copy(t._data)
    elif _storage(t._data).base.fd is None:  # received here: pass on a shared copy
        copy = _shared_copy(t._data)
    data = t._data if copy is None else copy
    root = _storage(data)
    popen = get_spawning_popen()
    if copy is not None and popen is not None:
        # a Process argument's descriptor is passed when the process starts, not duplicated
        # now: the copy must outlive this call
        popen.__dict__.setdefault("jitensor_buffers", []).append(root.base)
    geometry = (data.shape, data.strides, data.ctypes.data - root.ctypes.data)
    return (_rebuild_shared, (type(t), DupFd(root.base.fd), root.nbytes, geometry,
                              t._dtype.name, t.requires_grad))


def init_reductions():
    """Make multiprocessing's pickler send CPU tensors and parameters through shared memory."""
    from ..nn.parameter import Parameter
    from ..tensor import Tensor
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, _reduce_tensor)
