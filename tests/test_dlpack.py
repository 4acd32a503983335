"""DLPack: the ctypes exporter and reader of jitensor/dlpack.py against NumPy's and torch's own
DLPack code (on host memory, where they run everywhere), and CUDA tensors through them (in the
simulator without a GPU; torch's CUDA consumer where a GPU and a CUDA torch are present)."""
import gc
import weakref

import numba
import numpy as np
import pytest

import jitensor as jt
from jitensor import dlpack

try:
    import torch
except ImportError:
    torch = None

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")


class Exported:
    """A producer whose __dlpack__ is jitensor's exporter over a NumPy array's memory."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return dlpack.export(self.a, (dlpack.CPU, 0))

    def __dlpack_device__(self):
        return dlpack.CPU, 0


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64,
                                   np.float16, np.float32, np.float64])
@pytest.mark.parametrize("view", [lambda a: a, lambda a: a.T, lambda a: a[::2, 1:],
                                  lambda a: a[0, 0, ...], lambda a: a[:0]])
def test_numpy_reads_our_capsules_without_a_copy(dtype, view):
    base = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    a = view(base)
    got = np.from_dlpack(Exported(a))
    assert got.dtype == a.dtype and got.shape == a.shape and got.strides == a.strides
    np.testing.assert_array_equal(got, a)
    assert a.size == 0 or got.ctypes.data == a.ctypes.data  # the same memory


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_reads_our_capsules_without_a_copy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4).T
    got = torch.from_dlpack(Exported(a))
    assert got.shape == a.shape and got.stride() == (1, 4) and got.dtype == torch.float32
    got[1, 2] = 100  # writes land in the producer's memory
    assert a[1, 2] == 100


def test_the_owner_lives_until_the_consumer_is_done():
    a = np.ones(3)
    alive = weakref.ref(a)
    got = np.from_dlpack(Exported(a))
    del a
    gc.collect()
    assert alive() is not None  # the consumer holds it
    del got
    gc.collect()
    assert alive() is None  # its deleter ran
    a = np.ones(3)
    alive = weakref.ref(a)
    capsule = Exported(a).__dlpack__()
    del a
    assert alive() is not None
    del capsule  # never consumed: the capsule's destructor releases it
    gc.collect()
    assert alive() is None


def test_reading_numpys_capsules():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::2]
    face, device, owner = dlpack.read(a.__dlpack__())
    assert device == (dlpack.CPU, 0)
    assert face["shape"] == (2, 2) and face["typestr"] == "<i4" and face["strides"] == (12, 8)
    assert face["data"][0] == a.ctypes.data
    t = jt.from_dlpack(np.arange(3.0).__dlpack__())  # a bare capsule, as torch takes one
    assert t.dtype is jt.float64 and t.tolist() == [0.0, 1.0, 2.0]


def test_a_capsule_is_consumed_once():
    capsule = np.arange(3.0).__dlpack__()
    jt.from_dlpack(capsule)
    with pytest.raises(BufferError, match="consumed once"):
        jt.from_dlpack(capsule)


def test_cpu_tensors_pass_the_dlpack_arguments_on():
    with pytest.raises(RuntimeError, match=r"require gradient.*detach\(\)"):
        np.from_dlpack(jt.ones(2, requires_grad=True))
    t = jt.arange(4.0)
    assert np.from_dlpack(t).ctypes.data == t.data_ptr()
    with pytest.raises(BufferError, match="dl_device"):
        t.__dlpack__(dl_device=(2, 0))
    copied = np.from_dlpack(t, copy=True)
    assert copied.ctypes.data != t.data_ptr() and copied.tolist() == t.tolist()


@needs_cuda
@pytest.mark.parametrize("dtype", [jt.bool, jt.int32, jt.int64, jt.float16, jt.float32,
                                   jt.float64])
def test_cuda_tensors_export_their_device_memory(dtype):
    t = jt.tensor([[1, 0, 1], [0, 1, 1]], dtype=dtype, device="cuda").T
    assert t.__dlpack_device__() == (dlpack.CUDA, 0)
    face, device, owner = dlpack.read(t.__dlpack__(stream=1))
    assert device == (dlpack.CUDA, 0) and face["data"][0] == t.data_ptr()
    assert face["shape"] == (3, 2) and np.dtype(face["typestr"]) == dtype.np
    assert face["strides"] == tuple(s * t.element_size() for s in t.stride())


@needs_cuda
def test_cuda_round_trip_shares_memory_and_keeps_it_alive():
    t = jt.arange(6.0, device="cuda")
    base = jt.cuda.memory_allocated()
    back = jt.from_dlpack(t.__dlpack__())
    assert back.device == t.device and back.dtype is t.dtype and back.data_ptr() == t.data_ptr()
    back[0] = 50.0
    assert t[0].item() == 50.0
    del t
    gc.collect()
    assert jt.cuda.memory_allocated() == base  # `back` keeps the block
    assert back.tolist() == [50.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    del back
    gc.collect()
    assert jt.cuda.memory_allocated() < base


@needs_cuda
def test_cuda_producers_without_the_array_interface():
    class Producer:  # as JAX arrays are: __dlpack__ on CUDA and no __cuda_array_interface__
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None, **kwargs):
            assert stream == 1  # jitensor runs on the legacy default stream
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    t = jt.ones(2, 2, device="cuda")
    got = jt.from_dlpack(Producer(t))
    assert got.is_cuda and got.data_ptr() == t.data_ptr() and got.tolist() == [[1, 1], [1, 1]]


@needs_cuda
def test_a_consumer_that_refuses_leaves_nothing_behind():
    """A capsule dropped while the consumer's error unwinds (NumPy, or a torch without CUDA,
    refusing device memory) is released, and the error reaches the caller intact."""
    t = jt.ones(3, device="cuda")
    base = jt.cuda.memory_allocated()
    class CudaCapsule:  # gets NumPy to take the capsule before it sees the device
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, **kwargs):
            return self.x.__dlpack__()

        def __dlpack_device__(self):
            return dlpack.CPU, 0

    consumers = [np.from_dlpack, lambda x: np.from_dlpack(CudaCapsule(x))]
    if torch is not None and not torch.cuda.is_available():
        consumers += [torch.from_dlpack, lambda x: torch.from_dlpack(x.__dlpack__())]
    for consume in consumers:
        with pytest.raises(Exception) as caught:
            consume(t.T[1:])  # a view: its own NumPy array holds the block
        assert not isinstance(caught.value, SystemError), caught.value
    del caught
    gc.collect()
    assert jt.cuda.memory_allocated() == base
    assert t.tolist() == [1.0, 1.0, 1.0]


@needs_cuda
def test_broadcast_cuda_tensors_export_stride_zero():
    t = jt.arange(3.0, device="cuda").expand(2, 3)
    face, device, owner = dlpack.read(t.__dlpack__())
    assert face["strides"] == (0, 4) and face["data"][0] == t.data_ptr()


@needs_cuda
def test_cuda_dlpack_arguments():
    t = jt.arange(3, device="cuda")
    with pytest.raises(BufferError, match=r"dl_device=\(1, 0\).*\.to\(\)"):
        t.__dlpack__(dl_device=(1, 0))
    with pytest.raises(TypeError, match="stream must be an int"):
        t.__dlpack__(stream="default")
    face, _, _ = dlpack.read(t.__dlpack__(copy=True, stream=-1))
    assert face["data"][0] != t.data_ptr()


@pytest.mark.skipif(torch is None or not torch.cuda.is_available() or not jt.cuda.is_available()
                    or numba.config.ENABLE_CUDASIM, reason="needs a GPU and a CUDA build of torch")
def test_torch_cuda_round_trip():
    t = jt.arange(6.0, device="cuda").view(2, 3)
    got = torch.from_dlpack(t)
    assert got.is_cuda and got.data_ptr() == t.data_ptr() and got.stride() == (3, 1)
    back = jt.from_dlpack(got)
    assert back.data_ptr() == t.data_ptr() and back.tolist() == t.tolist()


def test_utils_dlpack_round_trips_through_torch_and_shares_memory():
    from jitensor.utils.dlpack import from_dlpack, to_dlpack
    assert jt.to_dlpack is to_dlpack and jt.utils.dlpack.from_dlpack is jt.from_dlpack
    x = jt.arange(6, dtype=jt.int32).reshape(2, 3)
    back = from_dlpack(to_dlpack(x))
    back[0, 0] = 7
    assert int(x[0, 0]) == 7 and back.dtype == jt.int32 and back.shape == (2, 3)
    if torch is not None:
        t = torch.utils.dlpack.from_dlpack(to_dlpack(x))
        assert t.dtype == torch.int32 and t.tolist() == x.tolist()
        mine = from_dlpack(torch.utils.dlpack.to_dlpack(t))
        assert mine.tolist() == x.tolist()
    with pytest.raises(TypeError, match="argument 'tensor' must be Tensor, not list"):
        to_dlpack([1, 2])
