"""jt.device and jt.cuda on a machine without CUDA: parsing, repr/str/eq/hash as torch prints
them, and the RuntimeError every creation routine raises for a CUDA device."""
import pickle
import sys

import numpy as np
import pytest

import jitensor as jt
from jitensor import cuda as jt_cuda

_devices = sys.modules["jitensor.device"]


def forget_cuda_devices(monkeypatch):
    """Start without the CUDA devices earlier tests (the simulator's) resolved: to_device
    remembers them for the rest of the process."""
    monkeypatch.setattr(_devices, "_cuda", {})
    monkeypatch.setattr(_devices, "_parsed", {k: d for k, d in _devices._parsed.items()
                                              if d.type == "cpu"})


@pytest.fixture
def no_cuda(monkeypatch):
    """A machine without CUDA, wherever the tests run (numba's simulator included)."""
    monkeypatch.setattr(jt_cuda, "_probe", lambda: (0, "no NVIDIA GPU or driver was found"))
    forget_cuda_devices(monkeypatch)


needs_no_cuda = pytest.mark.usefixtures("no_cuda")


@pytest.mark.parametrize("args, type_, index, text, rep", [
    (("cpu",), "cpu", None, "cpu", "device(type='cpu')"),
    (("cpu:0",), "cpu", 0, "cpu:0", "device(type='cpu', index=0)"),
    (("cuda",), "cuda", None, "cuda", "device(type='cuda')"),
    (("cuda:0",), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
    (("cuda:3",), "cuda", 3, "cuda:3", "device(type='cuda', index=3)"),
    (("cuda", 0), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
    (("cuda", 1), "cuda", 1, "cuda:1", "device(type='cuda', index=1)"),
])
def test_device_construction(args, type_, index, text, rep):
    d = jt.device(*args)
    assert d.type == type_
    assert d.index == index
    assert str(d) == text
    assert repr(d) == rep
    assert jt.device(d) == d  # copy-construct
    assert jt.device(str(d)) == d  # str round-trips
    assert pickle.loads(pickle.dumps(d)) == d


def test_device_equality_and_hash():
    assert jt.device("cuda") != jt.device("cuda:0")  # as torch: no index != index 0
    assert jt.device("cuda:0") == jt.device("cuda", 0)
    assert hash(jt.device("cuda:0")) == hash(jt.device("cuda", 0))
    assert jt.device("cpu") == jt.device("cpu")
    assert jt.device("cpu") != jt.device("cuda")
    assert jt.device("cuda:0") != jt.device("cuda:1")
    assert len({jt.device("cpu"), jt.device("cpu"), jt.device("cuda"), jt.device("cuda:0")}) == 3
    assert jt.device("cpu") != 0 and jt.device("cpu") != None  # noqa: E711


def test_device_equals_a_valid_string():
    assert jt.device("cpu") == "cpu"
    assert jt.device("cuda:1") == "cuda:1"
    assert jt.device("cuda:1") != "cuda:0"


def test_device_compared_with_an_arbitrary_string_is_false():
    assert (jt.device("cpu") == "not a device") is False
    assert jt.device("cpu") in ["gpu", "cpu"]


@pytest.mark.parametrize("bad", ["gpu", "CPU", "cuda:x", "cuda:-1", "", "cuda:", " cpu", "cuda0",
                                 "cuda:0:0", "cpu:", "cuda:1.0", "mps"])
def test_bad_device_strings_raise_runtime_error(bad):
    with pytest.raises(RuntimeError):
        jt.device(bad)
    with pytest.raises(RuntimeError):
        jt.zeros(2, device=bad)


def test_bad_device_arguments():
    with pytest.raises(RuntimeError):
        jt.device("cuda", -1)
    with pytest.raises(RuntimeError):
        jt.device("cuda:0", 0)  # the index twice
    with pytest.raises(TypeError):
        jt.device(0)
    with pytest.raises(TypeError):
        jt.zeros(2, device=1.5)
    with pytest.raises(TypeError):
        jt.device(jt.device("cpu"), 0)


def test_device_is_immutable():
    d = jt.device("cuda:0")
    with pytest.raises(AttributeError):
        d.index = 1
    with pytest.raises(AttributeError):
        d.type = "cpu"
    assert d == jt.device("cuda", 0)


def test_tensor_device_attributes():
    t = jt.zeros(2)
    assert t.device == jt.device("cpu")
    assert t.device.type == "cpu" and t.device.index is None
    assert t.is_cpu and not t.is_cuda
    assert jt.zeros(2, device="cpu").device == jt.device("cpu")
    assert jt.zeros(2, device=jt.device("cpu")).device == jt.device("cpu")
    assert jt.zeros(2, device=None).device == jt.device("cpu")


# -- jt.cuda without a GPU ------------------------------------------------------------------------
def test_cuda_is_available_returns_a_bool():
    result = jt.cuda.is_available()
    assert isinstance(result, bool)
    assert isinstance(jt.cuda.device_count(), int)
    assert jt.cuda.device_count() == (jt.cuda.device_count() if result else 0)


@needs_no_cuda
def test_cuda_not_available_here():
    assert jt.cuda.is_available() is False
    assert jt.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="^CUDA is not available"):
        jt.cuda.init()
    with pytest.raises(RuntimeError, match="^CUDA is not available"):
        jt.cuda.current_device()
    with pytest.raises(RuntimeError, match="^CUDA is not available"):
        jt.cuda.set_device(0)


class _Boom:
    """A stand-in numba.cuda whose every query raises."""

    def is_available(self):
        raise OSError("driver exploded")


@pytest.mark.parametrize("fake", [None, _Boom()], ids=["import-fails", "query-raises"])
def test_cuda_is_available_never_raises(monkeypatch, fake):
    import numba
    jt_cuda._probe.cache_clear()
    forget_cuda_devices(monkeypatch)
    try:
        monkeypatch.setitem(sys.modules, "numba.cuda", fake)
        if fake is None:
            monkeypatch.delattr(numba, "cuda", raising=False)
        else:
            monkeypatch.setattr(numba, "cuda", fake, raising=False)
        assert jt.cuda.is_available() is False
        assert jt.cuda.device_count() == 0
        with pytest.raises(RuntimeError, match="^CUDA is not available"):
            jt.zeros(1, device="cuda")
    finally:
        jt_cuda._probe.cache_clear()
        monkeypatch.undo()
        jt_cuda._probe.cache_clear()


def test_no_driver_answers_without_numba_cuda(monkeypatch):
    """Without a loadable libcuda (Linux), is_available() answers False before importing
    numba.cuda; the simulator and NUMBA_CUDA_DRIVER skip that check."""
    def fail(name):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(jt_cuda.ctypes, "CDLL", fail)
    monkeypatch.setattr(jt_cuda.sys, "platform", "linux")
    monkeypatch.delenv("NUMBA_CUDA_DRIVER", raising=False)
    monkeypatch.setitem(sys.modules, "numba.cuda", None)  # an import would raise ImportError
    jt_cuda._probe.cache_clear()
    forget_cuda_devices(monkeypatch)
    try:
        monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
        assert jt.cuda.is_available() is False
        with pytest.raises(RuntimeError, match=r"no NVIDIA driver was found \(libcuda"):
            jt.zeros(1, device="cuda")
        for name, value in (("NUMBA_ENABLE_CUDASIM", "1"), ("NUMBA_CUDA_DRIVER", "/x/libcuda.so")):
            with monkeypatch.context() as m:
                m.setenv(name, value)
                assert jt_cuda._driver_loads()
    finally:
        jt_cuda._probe.cache_clear()
        monkeypatch.undo()
        jt_cuda._probe.cache_clear()


_X = np.zeros((2, 3), np.float32)

CUDA_CALLS = {
    "empty": lambda d: jt.empty(2, 3, device=d),
    "zeros": lambda d: jt.zeros(2, 3, device=d),
    "ones": lambda d: jt.ones((2, 3), device=d),
    "full": lambda d: jt.full((2, 3), 1.5, device=d),
    "empty_like": lambda d: jt.empty_like(jt.zeros(2), device=d),
    "zeros_like": lambda d: jt.zeros_like(jt.zeros(2), device=d),
    "ones_like": lambda d: jt.ones_like(jt.zeros(2), device=d),
    "full_like": lambda d: jt.full_like(jt.zeros(2), 3, device=d),
    "rand_like": lambda d: jt.rand_like(jt.zeros(2), device=d),
    "randn_like": lambda d: jt.randn_like(jt.zeros(2), device=d),
    "tensor": lambda d: jt.tensor([1, 2], device=d),
    "tensor-np": lambda d: jt.tensor(_X, device=d),
    "as_tensor": lambda d: jt.as_tensor(_X, device=d),
    "arange": lambda d: jt.arange(5, device=d),
    "linspace": lambda d: jt.linspace(0, 1, 5, device=d),
    "eye": lambda d: jt.eye(3, device=d),
    "rand": lambda d: jt.rand(2, device=d),
    "randn": lambda d: jt.randn(2, device=d),
    "randint": lambda d: jt.randint(0, 5, (2,), device=d),
    "Tensor.to": lambda d: jt.zeros(2).to(d),
    "Tensor.to-kw": lambda d: jt.zeros(2).to(device=d, dtype=jt.float64),
    "new_zeros": lambda d: jt.zeros(2).new_zeros(3, device=d),
    "new_empty": lambda d: jt.zeros(2).new_empty(3, device=d),
    "new_tensor": lambda d: jt.zeros(2).new_tensor([1.0], device=d),
    "Generator": lambda d: jt.Generator(d),
}


@needs_no_cuda
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:1", ("cuda", 0), 0],
                         ids=["cuda", "cuda:0", "cuda:1", "device-obj", "int"])
@pytest.mark.parametrize("call", list(CUDA_CALLS), ids=str)
def test_cuda_device_in_creation_raises(call, device):
    if isinstance(device, tuple):
        device = jt.device(*device)
    with pytest.raises(RuntimeError) as info:
        CUDA_CALLS[call](device)
    assert str(info.value).startswith("CUDA is not available"), str(info.value)


@needs_no_cuda
def test_tensor_cuda_method_raises():
    with pytest.raises(RuntimeError, match="^CUDA is not available"):
        jt.zeros(2).cuda()
    with pytest.raises(RuntimeError, match="^CUDA is not available"):
        jt.zeros(2).cuda(0)


@needs_no_cuda
@pytest.mark.parametrize("call", [
    lambda: jt.empty(2, pin_memory=True),
    lambda: jt.zeros(2, pin_memory=True),
    lambda: jt.ones(2, pin_memory=True),
    lambda: jt.full((2,), 1.0, pin_memory=True),
    lambda: jt.rand(2, pin_memory=True),
    lambda: jt.tensor([1.0], pin_memory=True),
], ids=["empty", "zeros", "ones", "full", "rand", "tensor"])
def test_pin_memory_needs_cuda(call):
    with pytest.raises(RuntimeError):
        call()


@needs_no_cuda
def test_tensor_pin_memory_needs_an_accelerator_as_torch():
    with pytest.raises(RuntimeError, match="^Cannot access accelerator device when none is"):
        jt.ones(2).pin_memory()


@pytest.mark.skipif(not jt.cuda.is_available(), reason="needs CUDA (or its simulator)")
def test_tensor_pin_memory_copies_cpu_tensors_only():
    x = jt.arange(3.)
    pinned = x.pin_memory()
    assert pinned.tolist() == [0, 1, 2] and pinned.device == x.device
    assert pinned.data_ptr() != x.data_ptr() and not pinned.is_pinned()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        jt.ones(2, device="cuda").pin_memory()


def test_constructing_cuda_device_objects_does_not_need_cuda():
    # only using one raises: the value object alone is fine
    d = jt.device("cuda:7")
    assert d.index == 7 and str(d) == "cuda:7"


def test_device_as_a_context_manager():
    """``with device:`` makes it the default device inside the block, nested ones too."""
    assert jt.get_default_device() == jt.device("cpu")
    with jt.device("cpu") as d:
        assert d == jt.device("cpu") and jt.zeros(2).device == d
        jt.set_default_device("cpu")
    assert jt.get_default_device() == jt.device("cpu")
    if jt.cuda.is_available():
        with jt.device("cuda"):
            assert jt.zeros(1).device.type == "cuda" and jt.nn.Linear(1, 1).weight.is_cuda
            with jt.device("cpu"):
                assert jt.zeros(1).device.type == "cpu"
            assert jt.ones(1).device.type == "cuda"
        assert jt.zeros(1).device.type == "cpu"
