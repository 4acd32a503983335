"""jitensor: a PyTorch-style tensor library whose every kernel is compiled by Numba
(@njit on the CPU, @cuda.jit on NVIDIA GPUs, chosen by the tensor's device)."""
import gc
import importlib
import importlib.util
import math

# Numba and the kernels make a few hundred thousand objects that live as long as the process.
# The cyclic collector walking them while they are imported, on every later full collection and
# again at exit is a quarter of a second of a short script: none of it while importing, and
# frozen afterwards (out of the collector's walks; refcounts still free them).
_collecting = gc.isenabled()
gc.disable()
try:
    from . import (  # noqa: F401 (ops attaches the Tensor methods)
        accelerator,  # torch.accelerator: CUDA, when it can be used
        amp,
        autograd,
        cuda,
        ops,
    )
finally:
    if _collecting:
        gc.enable()
gc.freeze()
from . import storage as _storage_module
from ._format import set_printoptions
from ._settings import (
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_num_interop_threads,
    set_warn_always,
    use_deterministic_algorithms,
)
from ._utils_internal import get_file_path, prepare_multiprocessing_environment
from .accelerator import AcceleratorError, FatalError
from .amp import GradScaler, autocast
from .amp.autocast_mode import (
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .creation import (
    arange,
    as_tensor,
    asarray,
    empty,
    empty_like,
    empty_permuted,
    eye,
    from_dlpack,
    from_file,
    from_numpy,
    frombuffer,
    full,
    full_like,
    get_debug_empty,
    get_default_device,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    set_debug_empty,
    set_default_device,
    tensor,
    zeros,
    zeros_like,
)
from .creation import range_inclusive as range
from .cuda import OutOfMemoryError
from .device import device, get_device_module
from .dtypes import (
    bfloat16,
    can_cast,
    complex64,
    complex128,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .dtypes import bool_ as bool
from .legacy_types import CPU_TYPES as _CPU_TYPES
from .legacy_types import typename
from .ops import complex_ops as _complex_ops
from .ops import einsum as _einsum
from .ops import elementwise as _elementwise
from .ops import factor as _factor
from .ops import factor_legacy as _factor_legacy
from .ops import householder as _householder
from .ops import indexing as _indexing
from .ops import linalg as _linalg
from .ops import lowrank as _lowrank
from .ops import matrix as _matrix
from .ops import matrix_function as _matrix_function
from .ops import native as _native
from .ops import native_extra as _native_extra
from .ops import nn_functional as _nn_functional
from .ops import pointwise as _pointwise
from .ops import reduction as _reduction
from .ops import sampling as _sampling
from .ops import scatter as _scatter
from .ops import shape as _shape
from .ops import sort as _sort
from .ops import statistics as _statistics
from .ops.complex_ops import *  # noqa: F401,F403
from .ops.einsum import *  # noqa: F401,F403
from .ops.elementwise import *  # noqa: F401,F403
from .ops.factor import *  # noqa: F401,F403
from .ops.factor_legacy import *  # noqa: F401,F403
from .ops.householder import *  # noqa: F401,F403
from .ops.indexing import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.lowrank import *  # noqa: F401,F403
from .ops.matrix import *  # noqa: F401,F403
from .ops.matrix_function import *  # noqa: F401,F403
from .ops.native import *  # noqa: F401,F403
from .ops.native_extra import *  # noqa: F401,F403
from .ops.nn_functional import *  # noqa: F401,F403
from .ops.pointwise import *  # noqa: F401,F403
from .ops.reduction import *  # noqa: F401,F403
from .ops.sampling import *  # noqa: F401,F403
from .ops.scatter import *  # noqa: F401,F403
from .ops.shape import *  # noqa: F401,F403
from .ops.sort import *  # noqa: F401,F403
from .ops.sparse import sparse_coo_tensor, spmm
from .ops.statistics import *  # noqa: F401,F403
from .random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
    thread_safe_generator,
)
from .storage import *  # noqa: F401,F403
from .streams import Event, Stream
from .tensor import (
    Size,
    Tensor,
    channels_last,
    channels_last_3d,
    contiguous_format,
    legacy_contiguous_format,
    preserve_format,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from .tensor import _Layout as layout
from .tensor import _MemoryFormat as memory_format
from .threads import get_num_threads, init_num_threads, set_num_threads
from .torch_version import TorchVersion as _TorchVersion
from .torch_version import internal_version as _internal_version

float = float32
double = float64
cfloat = complex64
cdouble = complex128
half = float16
long = int64
int = int32
short = int16
globals().update(_CPU_TYPES)  # FloatTensor, LongTensor, ... (torch's legacy types)
pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None
detach = Tensor.detach
is_conj, is_neg, resolve_conj, resolve_neg = (Tensor.is_conj, Tensor.is_neg, Tensor.resolve_conj,
                                              Tensor.resolve_neg)
is_inference, is_distributed = Tensor.is_inference, Tensor.is_distributed
has_lapack, has_mkl, has_spectral = True, False, True  # OpenBLAS/LAPACK; no MKL; jitensor.fft
has_openmp = importlib.util.find_spec("numba.np.ufunc.omppool") is not None

__version__ = _TorchVersion(_internal_version)

__all__ = [
    "Generator", "Size", "Tensor", "arange", "autograd", "enable_grad", "is_grad_enabled",
    "no_grad", "set_grad_enabled", "as_tensor", "bool", "can_cast", "contiguous_format", "cuda",
    "cfloat", "cdouble", "complex64", "complex128", "default_generator", "device", "double",
    "dtype", "empty", "empty_like", "eye", "float",
    "float16", "float32", "float64", "from_dlpack", "from_numpy", "full", "full_like",
    "get_debug_empty", "get_default_dtype", "get_num_threads", "get_rng_state", "half",
    "initial_seed", "int", "int8", "int16", "int32", "int64", "linspace", "long", "manual_seed",
    "ones", "ones_like", "preserve_format", "promote_types", "rand", "rand_like", "randint",
    "randn", "randn_like", "result_type", "seed", "set_debug_empty", "set_default_dtype",
    "set_num_threads", "set_printoptions", "set_rng_state", "short", "strided", "tensor", "uint8",
    "uint16", "uint32", "uint64", "zeros", "zeros_like",
]
for _m in (_complex_ops, _einsum, _elementwise, _factor, _factor_legacy, _indexing, _linalg,
           _matrix, _native, _nn_functional, _pointwise, _reduction, _sampling, _scatter, _shape,
           _sort, _statistics, _householder, _matrix_function, _lowrank, _native_extra):
    __all__ += _m.__all__
__all__ += _storage_module.__all__

# F405: not star-imported but loaded on first use by __getattr__ below
__all__ += ["backends", "compile", "compiler", "func", "jit", "linalg", "load",  # noqa: F405
            "multiprocessing", "nn", "onnx", "optim", "save", "special", "testing", "utils",
            "version", "distributions", "vmap", "distributed", "functional", "overrides",
            "signal", "types", "init_num_threads", "cpu", "futures", "fork", "wait", "hub",
            "sparse"]
__all__ += ["accelerator", "are_deterministic_algorithms_enabled", "get_default_device",
            "get_deterministic_debug_mode", "get_float32_matmul_precision",
            "get_num_interop_threads", "inference_mode",
            "is_deterministic_algorithms_warn_only_enabled", "is_inference_mode_enabled",
            "is_warn_always_enabled", "set_default_device", "set_deterministic_debug_mode",
            "set_float32_matmul_precision", "set_num_interop_threads", "set_warn_always",
            "use_deterministic_algorithms"]
__all__ += ["AcceleratorError", "Event", "FatalError", "GradScaler", "Stream", "get_file_path",
            "prepare_multiprocessing_environment", "thread_safe_generator"]
__all__ += ["sparse_bsc", "sparse_bsr", "sparse_coo", "sparse_coo_tensor", "sparse_csc",
            "sparse_csr", "spmm"]
__all__ += ["to_dlpack", "torch_version", "windows"]  # noqa: F405 (loaded by __getattr__)
__all__ += ["asarray", "empty_permuted", "from_file", "frombuffer", "get_device_module", "is_conj",
            "is_distributed", "is_inference", "is_neg", "range", "resolve_conj", "resolve_neg",
            "set_flush_denormal"]
__all__ += ["OutOfMemoryError", "channels_last", "channels_last_3d", "clear_autocast_cache",
            "get_autocast_cpu_dtype", "get_autocast_dtype", "get_autocast_gpu_dtype",
            "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_autocast_cache_enabled",
            "is_autocast_cpu_enabled", "is_autocast_enabled", "layout",
            "legacy_contiguous_format", "memory_format", "set_anomaly_enabled",
            "set_autocast_cache_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
            "set_autocast_dtype", "set_autocast_enabled", "set_autocast_gpu_dtype"]
__all__ += ["amp", "autocast", "bfloat16", "detach", "e", "finfo", "has_lapack", "has_mkl",
            "has_openmp", "has_spectral", "iinfo", "inf", "nan", "newaxis", "pi", "typename",
            *_CPU_TYPES]


def __getattr__(name):
    """backends, compiler, cpu, distributed, fft, func, functional, futures, hub, jit, linalg,
    multiprocessing, nn, onnx, optim, overrides, profiler, serialization, signal, sparse, special,
    testing, torch_version, types, utils, version, windows (torch.signal.windows), compile,
    save, load, fork, wait, stft, istft, to_dlpack and vmap (torch.vmap is
    torch.func.vmap) are imported on first use, which keeps `import jitensor` light (they build
    on everything above)."""
    if name in ("backends", "compiler", "cpu", "distributed", "distributions", "fft", "func",
                "functional", "futures", "hub", "jit", "linalg", "multiprocessing", "nn", "onnx",
                "optim", "overrides", "profiler", "serialization", "signal", "sparse", "special",
                "testing", "torch_version", "types", "utils", "version"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "windows":
        return importlib.import_module(f"{__name__}.signal.windows")
    if name == "to_dlpack":
        return importlib.import_module(f"{__name__}.utils.dlpack").to_dlpack
    if name in ("save", "load"):
        return getattr(importlib.import_module(f"{__name__}.serialization"), name)
    if name == "compile":
        return importlib.import_module(f"{__name__}.compiler").compile
    if name == "vmap":
        return importlib.import_module(f"{__name__}.func").vmap
    if name in ("fork", "wait"):
        return getattr(importlib.import_module(f"{__name__}.futures"), name)
    if name in ("stft", "istft"):
        return getattr(importlib.import_module(f"{__name__}.fft"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from .custom import elementwise, reduction  # noqa: E402 (user ops build on the ops above)

__all__ += ["elementwise", "reduction"]
