"""What torch scripts touch beyond tensors and ops: jt.cuda's seeding, memory and device queries,
jt.cuda.amp, jt.accelerator, inference mode and the process-wide switches, the default device,
Tensor.is_* and nn.parallel. Each is checked against torch where torch runs it on this machine
(torch here is a CPU build: its CUDA functions behave as on a machine without a GPU), and on
jitensor's CUDA (numba's simulator without a GPU) for the device functions."""
import importlib
import warnings

import numpy as np
import pytest

import jitensor as jt
from jitensor import _settings, creation
from jitensor import cuda as jt_cuda

_devices = importlib.import_module("jitensor.device")  # the module (jt.device is the class)

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(), reason="needs CUDA (or numba's "
                                                                    "simulator)")


@pytest.fixture(autouse=True)
def _restore():
    """The switches, default device and generator these tests change, as they were."""
    saved = ([list(v) for v in (_settings._deterministic, _settings._matmul_precision,
                                _settings._warn_always, _settings._interop)],
             creation._default_device[0], jt.get_rng_state())
    yield
    for target, value in zip((_settings._deterministic, _settings._matmul_precision,
                              _settings._warn_always, _settings._interop), saved[0], strict=False):
        target[:] = value
    creation.set_default_device(saved[1])
    jt.set_rng_state(saved[2])


@pytest.fixture
def no_cuda(monkeypatch):
    """A machine without CUDA, wherever the tests run (numba's simulator included)."""
    monkeypatch.setattr(jt_cuda, "_probe", lambda: (0, "no NVIDIA GPU or driver was found"))
    monkeypatch.setattr(jt_cuda, "_initialized", [False])
    monkeypatch.setattr(_devices, "_cuda", {})
    monkeypatch.setattr(_devices, "_parsed", {k: d for k, d in _devices._parsed.items()
                                              if d.type == "cpu"})


def _outcome(call):
    """("ok", value) or ("raises", exception type)."""
    try:
        return "ok", call()
    except Exception as e:  # noqa: BLE001 (the outcome is what is compared)
        return "raises", type(e)


# -- jt.cuda without a device: as torch's ----------------------------------------------------------
@pytest.mark.torch
def test_cuda_without_a_device_returns_what_torch_does(no_cuda):
    torch = pytest.importorskip("torch")
    assert not torch.cuda.is_available()
    for name, args in [("is_initialized", ()), ("manual_seed", (1,)), ("manual_seed_all", (1,)),
                       ("seed", ()), ("seed_all", ()), ("get_rng_state_all", ()),
                       ("set_rng_state_all", ([],)), ("memory_allocated", ()),
                       ("max_memory_allocated", ()), ("memory_reserved", ()),
                       ("max_memory_reserved", ()), ("memory_stats", ()), ("get_arch_list", ()),
                       ("is_bf16_supported", ()), ("device_count", ()), ("empty_cache", ())]:
        theirs, mine = getattr(torch.cuda, name)(*args), getattr(jt.cuda, name)(*args)
        assert mine == theirs, name
        assert type(mine) is type(theirs), name
    state = torch.zeros(16, dtype=torch.uint8)
    assert torch.cuda.set_rng_state(state) is None
    assert jt.cuda.set_rng_state(jt.zeros(16, dtype=jt.uint8)) is None


def test_cuda_seeding_without_a_device_leaves_cpu_draws_alone(no_cuda):
    jt.manual_seed(5)
    expected = jt.rand(4).tolist()
    jt.manual_seed(5)
    jt.cuda.manual_seed(123)
    jt.cuda.manual_seed_all(7)
    jt.cuda.seed()
    jt.cuda.seed_all()
    jt.cuda.set_rng_state(jt.zeros(16, dtype=jt.uint8))
    assert jt.rand(4).tolist() == expected


@pytest.mark.torch
@pytest.mark.parametrize("name, args", [
    ("initial_seed", ()), ("get_rng_state", ()), ("get_device_properties", (0,)),
    ("get_device_capability", ()), ("mem_get_info", ()), ("ipc_collect", ()),
    ("synchronize", ()), ("current_device", ()), ("get_device_name", ()),
])
def test_cuda_functions_that_need_a_device_raise_without_one(no_cuda, name, args):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception):  # noqa: B017 (a CPU build raises AssertionError)
        getattr(torch.cuda, name)(*args)
    with pytest.raises(RuntimeError, match="^CUDA is not available"):
        getattr(jt.cuda, name)(*args)


def test_memory_summary_without_a_device_is_a_table_of_zeros(no_cuda):
    text = jt.cuda.memory_summary()
    assert "memory summary" in text and "Allocated memory" in text
    assert all(line.startswith("|") and line.endswith("|") for line in text.splitlines())


# -- jt.cuda.amp -----------------------------------------------------------------------------------
@pytest.mark.torch
def test_disabled_grad_scaler_is_torchs_pass_through():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.cuda.amp is deprecated there
        theirs = torch.cuda.amp.GradScaler(enabled=False)
    mine = jt.cuda.amp.GradScaler(enabled=False)
    for s in (theirs, mine):
        assert s.is_enabled() is False
        assert s.get_scale() == 1.0
        assert s.state_dict() == {}
        assert s.load_state_dict({}) is None
        assert s.update() is None
    out = jt.ones(2, requires_grad=True)
    assert mine.scale(out) is out
    lin = jt.nn.Linear(2, 1)
    opt = jt.optim.SGD(lin.parameters(), lr=0.5)
    lin(jt.ones(1, 2)).sum().backward()
    before = lin.weight.detach().clone()
    mine.unscale_(opt)
    mine.step(opt)
    assert np.allclose(lin.weight.detach().numpy(), before.numpy() - 0.5)  # d(sum)/dw = 1


@pytest.mark.torch
def test_disabled_autocast_is_a_pass_through():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with torch.cuda.amp.autocast(enabled=False):
            pass
    x = jt.ones(2, dtype=jt.float64)
    with jt.cuda.amp.autocast(enabled=False):
        assert (x * 2).dtype == jt.float64

    @jt.cuda.amp.autocast(enabled=False)
    def f(t):
        return t + 1

    assert f(x).tolist() == [2.0, 2.0]
    assert jt.cuda.amp.custom_fwd(cast_inputs=jt.float32)(f)(x).tolist() == [2.0, 2.0]
    assert jt.cuda.amp.custom_bwd(f) is f


@pytest.mark.torch
def test_enabled_amp_without_a_device_warns_and_disables_as_torch(no_cuda):
    torch = pytest.importorskip("torch")
    for module in (torch.cuda.amp, jt.cuda.amp):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            scaler = module.GradScaler()
            module.autocast()
        assert not scaler.is_enabled()
        assert sum(issubclass(w.category, UserWarning) and "Disabling" in str(w.message)
                   for w in seen) == 2
    assert jt.cuda.amp.amp_definitely_not_available()


@pytest.mark.cuda
@needs_cuda
def test_enabled_amp_with_a_device_scales_and_autocasts():
    scaler = jt.cuda.amp.GradScaler()
    assert scaler.is_enabled()
    assert scaler.scale(jt.ones(2, device="cuda")).tolist() == [2.0**16] * 2
    a = jt.ones(2, 2, device="cuda")
    with jt.cuda.amp.autocast():
        assert (a @ a).dtype is jt.float16 and (a @ a).tolist() == [[2.0] * 2] * 2
        assert jt.nn.functional.softmax(a.half(), 1).dtype is jt.float32  # CUDA's fp32 list
    with pytest.raises(RuntimeError, match="CUDA kernels have no bfloat16"):
        jt.autocast("cuda", dtype=jt.bfloat16)


# -- jt.cuda on a device (the simulator without a GPU) ---------------------------------------------
@pytest.mark.cuda
@needs_cuda
def test_cuda_seeding_makes_cuda_draws_reproducible():
    jt.cuda.manual_seed(3)
    assert jt.cuda.initial_seed() == 3
    a = jt.rand(5, device="cuda").tolist()
    state = jt.cuda.get_rng_state()
    b = jt.randn(3, device="cuda").tolist()
    jt.cuda.manual_seed_all(3)
    assert jt.rand(5, device="cuda").tolist() == a
    jt.cuda.set_rng_state(state)
    assert jt.randn(3, device="cuda").tolist() == b
    assert len(jt.cuda.get_rng_state_all()) == jt.cuda.device_count() == 1
    jt.cuda.set_rng_state_all([state])
    assert jt.randn(3, device="cuda").tolist() == b
    assert state.dtype == jt.uint8 and state.device == jt.device("cpu")
    jt.cuda.seed()
    seeded = jt.cuda.initial_seed()
    assert jt.rand(5, device="cuda").tolist() != a  # a fresh random seed (2**-64 to collide)
    jt.cuda.manual_seed(seeded)
    first = jt.rand(2, device="cuda").tolist()
    jt.cuda.manual_seed(seeded)
    assert jt.rand(2, device="cuda").tolist() == first


@pytest.mark.cuda
@needs_cuda
def test_device_properties_and_capability():
    props = jt.cuda.get_device_properties()
    assert props is jt.cuda.get_device_properties(0) is jt.cuda.get_device_properties("cuda:0")
    for field in ("name", "major", "minor", "total_memory", "multi_processor_count", "warp_size",
                  "is_integrated", "is_multi_gpu_board", "max_threads_per_multi_processor",
                  "L2_cache_size", "uuid", "shared_memory_per_block", "regs_per_multiprocessor"):
        assert hasattr(props, field), field
    assert isinstance(props.name, str) and props.name == jt.cuda.get_device_name()
    assert props.total_memory > 0 and props.multi_processor_count >= 1 and props.warp_size == 32
    assert jt.cuda.get_device_capability() == (props.major, props.minor)
    assert jt.cuda.get_arch_list() == [f"sm_{props.major}{props.minor}"]
    assert "_CudaDeviceProperties(name=" in repr(props)
    free, total = jt.cuda.mem_get_info()
    assert isinstance(free, int) and isinstance(total, int) and 0 <= free <= total
    assert jt.cuda.is_bf16_supported() is False
    assert jt.cuda.ipc_collect() is None


@pytest.mark.cuda
@needs_cuda
def test_cuda_memory_statistics_under_torchs_names():
    x = jt.zeros(1000, device="cuda")
    assert jt.cuda.is_initialized()
    stats = jt.cuda.memory_stats()
    assert list(stats) == sorted(stats) == ["allocated_bytes.all.current",
                                            "allocated_bytes.all.peak",
                                            "reserved_bytes.all.current",
                                            "reserved_bytes.all.peak"]
    assert stats["allocated_bytes.all.current"] == jt.cuda.memory_allocated() >= 4096
    assert jt.cuda.max_memory_allocated() >= jt.cuda.memory_allocated()
    assert jt.cuda.max_memory_reserved() >= jt.cuda.memory_reserved() >= jt.cuda.memory_allocated()
    peak = jt.cuda.max_memory_reserved()
    del x
    jt.cuda.empty_cache()
    assert jt.cuda.memory_reserved() == jt.cuda.memory_allocated()
    assert jt.cuda.max_memory_reserved() == peak  # the peak outlives the release
    with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
        jt.cuda.reset_max_memory_allocated()
    assert jt.cuda.max_memory_allocated() == jt.cuda.memory_allocated()
    assert jt.cuda.max_memory_reserved() == jt.cuda.memory_reserved()
    text = jt.cuda.memory_summary()
    assert "GPU reserved memory" in text and "device ID 0" in text


# -- jt.accelerator ------------------------------------------------------------------------------
_ACCELERATOR_CALLS = {
    "current_device_index": lambda m: m.current_device_index(),
    "set_device_index": lambda m: m.set_device_index(0),
    "synchronize": lambda m: m.synchronize(),
    "current_stream": lambda m: m.current_stream(),
    "empty_cache": lambda m: m.empty_cache(),
    "memory_stats": lambda m: m.memory_stats(),
    "memory_allocated": lambda m: m.memory_allocated(),
    "max_memory_reserved": lambda m: m.max_memory_reserved(),
    "reset_peak_memory_stats": lambda m: m.reset_peak_memory_stats(),
    "get_memory_info": lambda m: m.get_memory_info(),
    "get_device_capability": lambda m: m.get_device_capability(),
    "device_index": lambda m: m.device_index(0).__enter__(),
}


@pytest.mark.torch
def test_accelerator_without_a_device_as_torchs(no_cuda):
    torch = pytest.importorskip("torch")
    for fn in ("is_available", "current_accelerator", "device_count"):
        assert getattr(jt.accelerator, fn)() == getattr(torch.accelerator, fn)(), fn
    for name, call in _ACCELERATOR_CALLS.items():
        with pytest.raises(RuntimeError) as theirs:
            call(torch.accelerator)
        with pytest.raises(RuntimeError) as mine:
            call(jt.accelerator)
        assert str(mine.value) == str(theirs.value), name
    for m in (torch.accelerator, jt.accelerator):
        with m.device_index(None):  # no switch: works without a device
            pass


@pytest.mark.cuda
@needs_cuda
def test_accelerator_on_cuda():
    acc = jt.accelerator
    assert acc.is_available() and acc.device_count() == 1
    assert acc.current_accelerator() == jt.device("cuda")
    assert acc.current_accelerator(check_available=True) == jt.device("cuda")
    assert acc.current_device_index() == 0
    with pytest.warns(FutureWarning):
        assert acc.current_device_idx() == 0
    acc.set_device_index(0)
    acc.set_device_index("cuda:0")
    acc.set_device_index(-1)  # negative: no change
    with pytest.raises(ValueError, match="specified index"):
        acc.set_device_index("cuda")
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.synchronize("cpu")
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    acc.synchronize()
    stream = acc.current_stream()
    assert isinstance(stream, jt.cuda.Stream) and stream == jt.cuda.current_stream()
    side = jt.cuda.Stream()
    acc.set_stream(side)
    try:
        assert acc.current_stream() == side
    finally:
        acc.set_stream(stream)
    x = jt.ones(10, device="cuda")
    assert acc.memory_allocated() == jt.cuda.memory_allocated() > 0
    assert acc.memory_stats() == jt.cuda.memory_stats()
    assert acc.max_memory_allocated() >= acc.memory_allocated()
    assert acc.max_memory_reserved() >= acc.memory_reserved()
    acc.reset_peak_memory_stats()
    acc.reset_accumulated_memory_stats()
    free, total = acc.get_memory_info()
    assert 0 <= free <= total
    assert {jt.float32, jt.float16, jt.int64} <= acc.get_device_capability()["supported_dtypes"]
    del x
    acc.empty_cache()
    acc.empty_host_cache()


# -- process-wide switches ---------------------------------------------------------------------
@pytest.mark.torch
def test_deterministic_switches_follow_torch():
    torch = pytest.importorskip("torch")
    steps = [("use_deterministic_algorithms", (True,), {}),
             ("use_deterministic_algorithms", (True,), {"warn_only": True}),
             ("use_deterministic_algorithms", (False,), {"warn_only": True}),
             ("set_deterministic_debug_mode", ("warn",), {}),
             ("set_deterministic_debug_mode", (2,), {}),
             ("set_deterministic_debug_mode", ("default",), {}),
             ("set_deterministic_debug_mode", ("bad",), {}),
             ("set_deterministic_debug_mode", (5,), {}),
             ("set_deterministic_debug_mode", (1.0,), {}),
             ("use_deterministic_algorithms", (1,), {}),
             ("use_deterministic_algorithms", (False,), {})]
    saved = (torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        for name, args, kwargs in steps:
            outcomes = []
            for m in (torch, jt):
                call = getattr(m, name)
                outcomes.append((_outcome(lambda call=call, a=args, k=kwargs: call(*a, **k)),
                                 m.are_deterministic_algorithms_enabled(),
                                 m.is_deterministic_algorithms_warn_only_enabled(),
                                 m.get_deterministic_debug_mode()))
            assert outcomes[0] == outcomes[1], (name, args, kwargs)
    finally:
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])


def test_alert_not_deterministic():
    _settings.alert_not_deterministic("index_add_")  # off: nothing
    jt.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match="index_add_ does not have a deterministic"):
        _settings.alert_not_deterministic("index_add_")
    jt.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match="deterministic implementation"):
        _settings.alert_not_deterministic("index_add_")


@pytest.mark.torch
def test_float32_matmul_precision_follows_torch():
    torch = pytest.importorskip("torch")
    saved = torch.get_float32_matmul_precision()
    try:
        for value in ("high", "medium", "foo", "HIGH", "highest"):
            for m in (torch, jt):
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always")
                    m.set_float32_matmul_precision(value)
                assert len(seen) == (value not in ("highest", "high", "medium"))
            assert jt.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    finally:
        torch.set_float32_matmul_precision(saved)


@pytest.mark.torch
def test_warn_always_and_interop_threads_follow_torch():
    torch = pytest.importorskip("torch")
    assert jt.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    jt.set_warn_always(True)
    assert jt.is_warn_always_enabled()
    assert _outcome(lambda: jt.set_warn_always(1)) == _outcome(lambda: torch.set_warn_always(1))
    with pytest.raises(RuntimeError) as theirs:
        torch.set_num_interop_threads(0)
    with pytest.raises(RuntimeError) as mine:
        jt.set_num_interop_threads(0)
    assert str(mine.value) == str(theirs.value)
    assert jt.get_num_interop_threads() == 1
    jt.set_num_interop_threads(3)
    assert jt.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        jt.set_num_interop_threads(2)  # once only, as in torch


# -- default device ----------------------------------------------------------------------------
@pytest.mark.torch
def test_default_device_on_the_cpu_as_torch():
    torch = pytest.importorskip("torch")
    assert str(jt.get_default_device()) == str(torch.get_default_device()) == "cpu"
    jt.set_default_device("cpu")
    assert jt.get_default_device() == jt.device("cpu") and jt.zeros(2, 3).device.type == "cpu"
    jt.set_default_device(None)
    assert jt.get_default_device() == jt.device("cpu")
    with pytest.raises(TypeError):
        jt.set_default_device(1.5)


def test_default_cuda_device_without_a_device_raises_when_used(no_cuda):
    jt.set_default_device("cuda")  # as torch: checked when a tensor is made there
    for call in (jt.get_default_device, lambda: jt.zeros(2), lambda: jt.tensor([1.0])):
        with pytest.raises(RuntimeError, match="^CUDA is not available"):
            call()
    jt.set_default_device(None)
    assert jt.zeros(2).device == jt.device("cpu")


@pytest.mark.cuda
@needs_cuda
def test_default_device_is_honoured_by_the_creation_routines():
    cpu = jt.zeros(3)
    jt.set_default_device("cuda")
    cuda0 = jt.device("cuda:0")
    assert jt.get_default_device() == cuda0
    made = {"empty": jt.empty(2, 3), "zeros": jt.zeros(2, 3), "ones": jt.ones(2),
            "empty-dtype": jt.empty(2, dtype=jt.float64), "full": jt.full((2,), 1.5),
            "tensor": jt.tensor([1, 2]), "as_tensor-np": jt.as_tensor(np.ones(2)),
            "as_tensor-cpu": jt.as_tensor(cpu), "arange": jt.arange(3),
            "linspace": jt.linspace(0, 1, 3), "eye": jt.eye(2), "rand": jt.rand(2),
            "randn": jt.randn(2), "randint": jt.randint(0, 4, (2,)), "Tensor": jt.Tensor(2, 2),
            "Linear": jt.nn.Linear(2, 2).weight}
    for name, t in made.items():
        assert t.device == cuda0, name
    assert jt.zeros_like(cpu).device == jt.device("cpu")  # *_like follow their input
    assert jt.zeros(2, device="cpu").device == jt.device("cpu")
    assert jt.from_numpy(np.ones(2)).device == jt.device("cpu")
    jt.set_default_device(0)
    assert jt.zeros(1).device == cuda0
    jt.set_default_device(None)
    assert jt.zeros(2, 3).device == jt.device("cpu") and jt.empty(2).device == jt.device("cpu")
    assert jt.as_tensor(jt.zeros(2, device="cuda")).device == cuda0  # None keeps the device


# -- inference mode ----------------------------------------------------------------------------
def _mode_trace(m, x):
    """What a script sees of grad and inference mode in nested blocks (torch or jitensor)."""
    seen = [(m.is_grad_enabled(), m.is_inference_mode_enabled())]
    with m.inference_mode():
        seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled(),
                     (x * 2).requires_grad))
        with m.enable_grad():
            seen.append((m.is_grad_enabled(), (x * 2).requires_grad))
        with m.set_grad_enabled(True):
            seen.append((m.is_grad_enabled(), (x * 2).requires_grad))
        with m.inference_mode(False):
            seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled(),
                         (x * 2).requires_grad))
        seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled()))
    with m.no_grad(), m.inference_mode(False):
        seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled()))
    with m.no_grad(), m.inference_mode(mode=True):
        seen.append(m.is_grad_enabled())
    seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled()))

    @m.inference_mode
    def bare():
        return m.is_inference_mode_enabled(), m.is_grad_enabled(), (x * 2).requires_grad

    @m.inference_mode(False)
    def off():
        return m.is_inference_mode_enabled(), m.is_grad_enabled()

    seen.append(bare())
    with m.inference_mode():
        seen.append(off())
    y = x * 3
    y.sum().backward()
    seen.append((y.requires_grad, x.grad.tolist()))
    return seen


@pytest.mark.torch
def test_inference_mode_follows_torch():
    torch = pytest.importorskip("torch")
    theirs = _mode_trace(torch, torch.ones(2, requires_grad=True))
    mine = _mode_trace(jt, jt.ones(2, requires_grad=True))
    assert mine == theirs


def test_inference_mode_records_nothing_and_tags_no_tensor():
    x = jt.ones(2, requires_grad=True)
    ctx = jt.inference_mode()
    with ctx:
        with ctx:  # the same object, re-entered
            y = x * 2
        assert jt.is_inference_mode_enabled()
    assert not jt.is_inference_mode_enabled() and jt.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    assert y.is_inference() is False  # documented: jitensor does not tag inference tensors
    assert ctx.clone().mode is True and jt.inference_mode(False).clone().mode is False
    assert jt.autograd.inference_mode is jt.inference_mode
    with pytest.raises(ValueError), jt.inference_mode():
        raise ValueError  # the mode ends with the exception
    assert not jt.is_inference_mode_enabled() and jt.is_grad_enabled()


# -- Tensor.is_* -----------------------------------------------------------------------------------
_KINDS = ["is_xpu", "is_mps", "is_mtia", "is_xla", "is_meta", "is_ipu", "is_maia", "is_vulkan",
          "is_quantized", "is_sparse", "is_sparse_csr", "is_mkldnn", "is_nested", "is_cpu",
          "is_cuda"]


@pytest.mark.torch
def test_tensor_kind_properties_as_torch():
    torch = pytest.importorskip("torch")
    theirs, mine = torch.zeros(2), jt.zeros(2)
    for name in _KINDS:
        assert getattr(mine, name) is getattr(theirs, name), name
        assert isinstance(getattr(jt.Tensor, name), property), name
        with pytest.raises(AttributeError):
            setattr(mine, name, True)
    assert mine.is_inference() is theirs.is_inference() is False


@pytest.mark.cuda
@needs_cuda
def test_tensor_kind_properties_on_cuda():
    t = jt.zeros(2, device="cuda")
    assert t.is_cuda and not t.is_cpu
    assert not any(getattr(t, name) for name in _KINDS[:-2])
    assert t.cpu().is_cpu and t.cpu().cuda().is_cuda


# -- nn.parallel ---------------------------------------------------------------------------------
def _pair(torch):
    """A small torch model and the same one in jitensor."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    mine = jt.nn.Sequential(jt.nn.Linear(3, 4), jt.nn.Tanh(), jt.nn.Linear(4, 2))
    mine.load_state_dict({k: jt.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    return theirs, mine


@pytest.mark.torch
def test_data_parallel_without_a_device_runs_the_module_as_torch(no_cuda):
    torch = pytest.importorskip("torch")
    theirs, mine = _pair(torch)
    tdp, jdp = torch.nn.DataParallel(theirs), jt.nn.DataParallel(mine, device_ids=[0, 1])
    assert jdp.module is mine and jdp.device_ids == tdp.device_ids == []
    assert jt.nn.parallel.DataParallel is jt.nn.DataParallel
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    tx, jx = torch.tensor(x, requires_grad=True), jt.tensor(x, requires_grad=True)
    tout, jout = tdp(tx), jdp(jx)
    assert np.allclose(jout.detach().numpy(), tout.detach().numpy(), atol=1e-6)
    tout.pow(2).sum().backward()
    jout.pow(2).sum().backward()
    assert np.allclose(jx.grad.numpy(), tx.grad.numpy(), atol=1e-5)
    for (name, p), q in zip(mine.named_parameters(), theirs.parameters(), strict=False):
        assert np.allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-5), name
    assert list(jdp.state_dict()) == list(tdp.state_dict())  # "module." prefixes
    with pytest.raises(RuntimeError) as their_error:
        torch.nn.parallel.data_parallel(theirs, tx)
    with pytest.raises(RuntimeError) as my_error:
        jt.nn.parallel.data_parallel(mine, jx)
    assert str(my_error.value) == str(their_error.value)


@pytest.mark.torch
def test_distributed_data_parallel_needs_a_process_group_as_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as theirs:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError) as mine:
        jt.nn.parallel.DistributedDataParallel(jt.nn.Linear(2, 2))
    assert str(mine.value) == str(theirs.value)
    with pytest.raises(TypeError, match="ProcessGroup"):
        jt.nn.parallel.DistributedDataParallel(jt.nn.Linear(2, 2), process_group=object())


@pytest.mark.cuda
@needs_cuda
def test_data_parallel_on_one_gpu_moves_module_and_inputs():
    lin = jt.nn.Linear(3, 2)
    weight = lin.weight.detach().clone()
    dp = jt.nn.DataParallel(lin)
    assert dp.device_ids == [0] and dp.output_device == 0 and dp.dim == 0
    assert lin.weight.device == jt.device("cuda:0")
    x = jt.ones(4, 3, requires_grad=True)  # on the CPU: copied to the GPU
    out = dp(x)
    assert out.device == jt.device("cuda:0")
    expected = np.ones((4, 3), np.float32) @ weight.numpy().T + lin.bias.detach().cpu().numpy()
    assert np.allclose(out.detach().cpu().numpy(), expected, atol=1e-6)
    out.sum().backward()
    assert x.grad.device == jt.device("cpu")
    assert np.allclose(x.grad.numpy(), np.tile(weight.numpy().sum(0), (4, 1)), atol=1e-6)
    assert np.allclose(lin.weight.grad.cpu().numpy(), 4.0)
    out2 = jt.nn.parallel.data_parallel(lin, jt.ones(1, 3), device_ids=[0])
    assert out2.device == jt.device("cuda:0")


@pytest.mark.cuda
@needs_cuda
def test_data_parallel_scatters_nested_inputs_and_checks_placement():
    from jitensor.nn.parallel.data_parallel import _to
    cuda0 = jt.device("cuda:0")
    moved = _to((jt.ones(1), [jt.ones(1), 2], {"k": jt.ones(1)}, "s"), cuda0)
    assert moved[0].device == moved[1][0].device == moved[2]["k"].device == cuda0
    assert moved[1][1] == 2 and moved[3] == "s" and isinstance(moved[1], list)
    dp = jt.nn.DataParallel(jt.nn.Linear(2, 2))
    dp.module.cpu()
    with pytest.raises(RuntimeError, match="module must have its parameters and buffers on "
                                           "device cuda:0"):
        dp(jt.ones(1, 2))


@pytest.mark.cuda
@needs_cuda
def test_data_parallel_over_several_gpus_is_not_supported(monkeypatch):
    monkeypatch.setattr(jt_cuda, "_probe", lambda: (2, ""))  # a machine with two GPUs
    with pytest.raises(NotImplementedError, match=r"device_ids=\[0, 1\].*cuda:0 only"):
        jt.nn.DataParallel(jt.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="data_parallel over several GPUs"):
        jt.nn.parallel.data_parallel(jt.nn.Linear(2, 2), jt.ones(1, 2), device_ids=[0, 1])
    with pytest.raises(RuntimeError, match="CUDA_VISIBLE_DEVICES=1"):
        jt.nn.DataParallel(jt.nn.Linear(2, 2), device_ids=[1])


# -- nn.utils.parametrize --------------------------------------------------------------------------
def _parametrizations(nn):
    """torch's tutorial parametrizations, written once for torch.nn and jitensor.nn."""

    class Symmetric(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(0, 1)

        def right_inverse(self, a):
            return a.triu()

    class Scale(nn.Module):  # no right_inverse: the identity when registering
        def forward(self, x):
            return x * 2

    class Split(nn.Module):  # two originals
        def forward(self, a, b):
            return a + b

        def right_inverse(self, x):
            return x * 0.25, x * 0.75

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]

    return Symmetric, Scale, Split, Shrink


@pytest.mark.torch
def test_parametrize_follows_torch():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.parametrize as tp

    import jitensor.nn.utils.parametrize as jp
    w = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)
    x = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    results = []
    for m, nn, P in ((torch, torch.nn, tp), (jt, jt.nn, jp)):
        Symmetric, Scale, Split, Shrink = _parametrizations(nn)
        lin = nn.Linear(3, 3)
        with m.no_grad():
            lin.weight.copy_(m.tensor(w))
            lin.bias.copy_(m.tensor([0.5, -1.0, 2.0]))
        P.register_parametrization(lin, "weight", Symmetric())
        seen = [type(lin).__name__, P.type_before_parametrizations(lin).__name__,
                P.is_parametrized(lin), P.is_parametrized(lin, "weight"),
                P.is_parametrized(lin, "bias"), sorted(lin.state_dict()),
                [n for n, _ in lin.named_parameters()]]
        seen.append(lin.weight.detach().numpy().round(5).tolist())
        original = lin.parametrizations.weight.original
        lin.weight = m.tensor(w * 4)  # through right_inverse: original = triu(w * 4)
        seen.append(original.detach().numpy().round(5).tolist())
        P.register_parametrization(lin, "weight", Scale())
        seen.append(lin.weight.detach().numpy().round(5).tolist())
        seen.append(_outcome(lambda lin=lin, m=m: setattr(lin, "weight", m.zeros(3, 3))))
        out = lin(m.tensor(x))
        out.pow(2).sum().backward()
        seen.append(original.grad.numpy().round(3).tolist())
        with P.cached():
            seen.append(lin.weight is lin.weight)
        seen.append(lin.weight is lin.weight)
        seen.append(_outcome(lambda lin=lin, P=P, S=Shrink: P.register_parametrization(
            lin, "bias", S())))
        seen.append(_outcome(lambda lin=lin, P=P, S=Scale: P.register_parametrization(
            lin, "nothing", S())))
        kept = original
        P.remove_parametrizations(lin, "weight")  # leaves the parametrized value
        seen += [type(lin).__name__, hasattr(lin, "parametrizations"),
                 lin.weight is kept, lin.weight.detach().numpy().round(5).tolist(),
                 sorted(lin.state_dict())]
        P.register_parametrization(lin, "bias", Split())
        seen.append(sorted(n for n, _ in lin.named_parameters()))
        seen.append(lin.bias.detach().numpy().round(5).tolist())
        seen.append(_outcome(lambda lin=lin, P=P: P.remove_parametrizations(
            lin, "bias", leave_parametrized=False)))
        P.remove_parametrizations(lin, "bias")
        seen.append((type(lin).__name__, lin.bias.requires_grad))
        lin2 = nn.Linear(2, 2)
        P.register_parametrization(lin2, "weight", Scale())
        P.remove_parametrizations(lin2, "weight", leave_parametrized=False)
        seen.append(type(lin2).__name__)
        results.append(seen)
    theirs, mine = results
    for i, (a, b) in enumerate(zip(theirs, mine, strict=False)):
        if isinstance(a, tuple) and a[0] == "raises":
            assert b[0] == "raises" and b[1] is a[1], (i, a, b)
        else:
            assert a == b, (i, a, b)


def test_parametrized_module_copies_but_does_not_pickle():
    import copy
    import pickle

    import jitensor.nn.utils.parametrize as jp
    Symmetric = _parametrizations(jt.nn)[0]
    lin = jt.nn.Linear(3, 3)
    jp.register_parametrization(lin, "weight", Symmetric())
    twin = copy.deepcopy(lin)
    assert type(twin) is type(lin)
    assert np.allclose(twin.weight.detach().numpy(), lin.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(lin)
    fresh = jt.nn.Linear(3, 3)
    jp.register_parametrization(fresh, "weight", Symmetric())
    fresh.load_state_dict(lin.state_dict())
    assert np.allclose(fresh.weight.detach().numpy(), lin.weight.detach().numpy())


def test_helper_modules_that_layers_and_schedulers_import_as_torchs():
    pytest.importorskip("torch")
    from torch.nn.modules import utils as theirs

    from jitensor.nn.modules import utils as mine
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for value in (3, (1, 2), [4, 5, 6]):
            assert getattr(mine, name)(value) == getattr(theirs, name)(value)
    assert mine._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    assert mine._list_with_default([None, 4], [1, 2, 7, 9]) == \
        theirs._list_with_default([None, 4], [1, 2, 7, 9])
    sd_mine, sd_theirs = ({"module.a": 1, "module.b.c": 2, "x": 3} for _ in range(2))
    mine.consume_prefix_in_state_dict_if_present(sd_mine, "module.")
    theirs.consume_prefix_in_state_dict_if_present(sd_theirs, "module.")
    assert sd_mine == sd_theirs
    from jitensor.nn import common_types
    assert common_types._size_2_t == int | tuple[int, int]
    from jitensor.utils.data._utils.collate import default_collate
    assert default_collate is jt.utils.data.default_collate
    assert issubclass(jt.optim.lr_scheduler._LRScheduler, jt.optim.lr_scheduler.LRScheduler)


@pytest.mark.parametrize("backends", ["MATH", "FLASH_ATTENTION", ["EFFICIENT_ATTENTION",
                                                                    "CUDNN_ATTENTION"]])
def test_sdpa_kernel_records_the_choice_as_torch(backends):
    torch = pytest.importorskip("torch")

    def flags(lib):
        b = lib.backends.cuda
        return (b.math_sdp_enabled(), b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled(),
                b.cudnn_sdp_enabled())

    for lib in (jt, torch):
        attention = importlib.import_module(f"{lib.__name__}.nn.attention")
        chosen = [getattr(attention.SDPBackend, b) for b in backends] \
            if isinstance(backends, list) else getattr(attention.SDPBackend, backends)
        with attention.sdpa_kernel(chosen) as entered:
            inside = flags(lib), entered
        assert flags(lib) == (True,) * 4
        if lib is jt:
            mine = inside
    assert mine == inside
    attention = importlib.import_module("jitensor.nn.attention")
    q = jt.randn(1, 2, 4, 8)
    with attention.sdpa_kernel(attention.SDPBackend.MATH):  # jitensor's one kernel runs
        assert jt.allclose(jt.nn.functional.scaled_dot_product_attention(q, q, q),
                           jt.nn.functional.scaled_dot_product_attention(q, q, q))
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with attention.sdpa_kernel("math"):
            pass
