"""The CUDA backend: the same launchers as kernels/cpu, on DeviceArrays (memory.py) with
@cuda.jit kernels launched directly (driver.py). Imported on first CUDA use only."""
import numpy as np

from ..cpu.strided import as_4d
from . import driver, kernels, memory
from .memory import pointer, strides

empty = memory.empty


def views(out, *arrays):
    """Kernel arguments for `out` and same-shape arrays: (dense, [(n, n1, n2, n3, args per
    array)...]) where each array contributes (pointer, offset, s0, s1, s2, s3). Dense operands
    (all C-contiguous) are walked flat in one launch; any other layout as 4-D views."""
    if out.flags.c_contiguous and all(a.flags.c_contiguous for a in arrays):
        n = out.size
        return True, [(n, 1, 1, n, [x for a in (out, *arrays)
                                    for x in (*pointer(a), 0, 0, 0, 1)])]
    slabs = []
    for group in as_4d(out, *arrays):
        n0, n1, n2, n3 = group[0].shape
        slabs.append((n0 * n1 * n2 * n3, n1, n2, n3,
                      [x for v in group for x in (*pointer(v), *strides(v))]))
    return False, slabs


def fill(out, value):
    if not out.size:
        return
    if out.flags.c_contiguous:  # where a 4-byte word repeats the value's bytes
        word = np.array(value, out.dtype).reshape(1).view(f"u{min(out.itemsize, 4)}")
        if (word == word[0]).all():  # 8-byte values: when both halves match (zero)
            p, off = pointer(out)
            start = p.address + off * out.itemsize
            if start % 16 == 0 and out.nbytes % 16 == 0:
                # 128-bit stores: the driver's memset filled 1 GiB at 3.66 TB/s on the H200,
                # torch's fill kernel at 4.2
                word = np.full(4 // word.itemsize, word[0]).view(np.float32)[0]
                driver.launch_1d(kernels.fill_vec4, out.nbytes // 16,
                                 driver.make_pointer(p.address, np.dtype(np.float32), p.storage),
                                 (start - p.address) // 16, out.nbytes // 16, word)
            else:
                driver.memset(start, word[0], out.nbytes // word.itemsize, p.storage)
            return
    dense, slabs = views(out)
    for n, n1, n2, n3, args in slabs:
        driver.launch_1d(kernels.fill, n, *args, n, n1, n2, n3, dense, out.dtype.type(value))


def join(out, pieces, dim, new_dim=False):
    """False: cat copies piece by piece on the device (the CPU joins small ones in one call)."""
    return False


def copy(out, src):
    """out[...] = src with C casting; `src` has out's shape (broadcast views are fine) and may
    overlap `out` (then it is read from a snapshot first)."""
    if not out.size:
        return
    if np.may_share_memory(out, src):
        snapshot = empty(src.shape, src.dtype)
        copy(snapshot, src)
        src = snapshot
    dense, slabs = views(out, src)
    for n, n1, n2, n3, args in slabs:
        driver.launch_1d(kernels.copy, n, *args, n, n1, n2, n3, dense)


def _generate(kernel, out, *args):
    """Run a flat generator kernel into `out`, through a contiguous buffer if `out` has gaps."""
    target = out if out.flags.c_contiguous else empty(out.shape, out.dtype)
    if target.size:
        driver.launch_1d(kernel, target.size, *pointer(target), *args)
    if target is not out:
        copy(out, target)


def arange(out, start, step):
    _generate(kernels.arange, out, out.size, start, step)


def linspace(out, start, end):
    _generate(kernels.linspace, out, out.size, start, end)


def eye(out):
    _generate(kernels.eye, out, *out.shape)


def uniform(out, seed, offset, low, high):
    _generate(kernels.uniform, out, out.size, seed, offset, out.dtype.type(low),
              out.dtype.type(high), 24 if out.itemsize == 4 else 53)


def normal(out, seed, offset, mean, std):
    _generate(kernels.normal, out, out.size, seed, offset, mean, std)


def randint(out, seed, offset, low, high):
    _generate(kernels.randint, out, out.size, seed, offset, low, float(high - low))


def to_numpy(buf):
    """A new NumPy array with the values of the DeviceArray `buf`."""
    dense = buf if buf.flags.c_contiguous else empty(buf.shape, buf.dtype)
    if dense is not buf:
        copy(dense, buf)
    host = np.empty(buf.shape, buf.dtype)
    if host.nbytes:
        p, off = pointer(dense)
        driver.to_host(host, p.address + off * buf.itemsize, host.nbytes, p.storage)
    return host


def from_numpy(array):
    """A new DeviceArray with the values of the NumPy array `array`."""
    host = np.asarray(array)
    if not host.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        host = host.copy(order="C")
    out = empty(host.shape, host.dtype)
    if host.nbytes:
        p, off = pointer(out)
        driver.to_device(p.address + off * out.itemsize, host, host.nbytes, p.storage)
    return out


def empty_like(buf, np_dtype):
    """Uninitialised, keeping a dense permuted layout (torch's preserve_format)."""
    order = np.argsort([-abs(s) for s in buf.strides], kind="stable")
    dense = empty([buf.shape[d] for d in order], np_dtype)
    return dense.transpose(np.argsort(order))


def broadcast_to(buf, shape):
    """A stride-0 view of `buf` with `shape` (kernels only read it)."""
    lead = len(shape) - buf.ndim
    strides_ = [0] * lead + [0 if n == 1 and m != 1 else s
                             for n, m, s in zip(buf.shape, shape[lead:], buf.strides, strict=False)]
    return np.lib.stride_tricks.as_strided(buf, shape, strides_, subok=True)


def item(buf):
    """The element of a one-element buffer, as a NumPy scalar of its dtype."""
    return to_numpy(buf).reshape(-1)[0]


def one_element(buf, shape):
    """What an elementwise kernel reads for an operand of one element broadcast to `shape`:
    the buffer itself, broadcast. (Reading the element into a number, as the CPU does, would
    wait for the GPU: a host sync on every op with a 0-d operand.)"""
    return buf if buf.shape == tuple(shape) else broadcast_to(buf, shape)


def data_ptr(buf):
    return memory.address(buf)


from . import (  # noqa: E402,F401,E501
    conv,
    custom,
    elementwise,
    factor,
    indexing,
    linalg,
    loss,
    norm,
    optim,
    pool,
    reduction,
    sort,
    sparse,
)
