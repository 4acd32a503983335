"""DataParallel and data_parallel as torch's on the devices jitensor has: without CUDA torch's
DataParallel calls the module directly, and on one GPU it moves the module there, copies the
inputs there and calls the module (its scatter of a batch into one chunk is that copy), with
no gather. Both work the same here. torch would replicate the module over several GPUs and
split the batch between them; jitensor runs on cuda:0 only, so device_ids naming several
devices raise NotImplementedError."""
import itertools

from ... import cuda
from ...device import device as _device
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _device_index(device):
    """torch._utils._get_device_index(device, optional=True): an int, or a CUDA device (a
    jt.device or a string) as its index; an unindexed one is the current device."""
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        return cuda.current_device() if device.index is None else device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but "
                     f"got:{device}")


def _one_device(device_ids, what):
    """The jt.device of the one GPU `device_ids` names (checked: jitensor uses cuda:0 only)."""
    if len(set(device_ids)) > 1:
        raise NotImplementedError(
            f"{what} over several GPUs (device_ids={device_ids}) is not supported: jitensor runs "
            f"on cuda:0 only, so it cannot replicate the module across devices; pass "
            f"device_ids=[0] (the module then runs as it is) or call the module directly")
    cuda.init(device_ids[0])  # cuda:1, ...: the error saying how to use that GPU
    return _device("cuda", device_ids[0])


def _check_placement(module, src):
    for t in itertools.chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} "
                               f"(device_ids[0]) but found one of them on device: {t.device}")


def _to(obj, device):
    """`obj` with every tensor in it (through tuples, named tuples, lists and dicts) copied to
    `device`: torch's scatter for one device (tensors already there are kept, not copied)."""
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a named tuple
        return type(obj)(*(_to(v, device) for v in obj))
    if isinstance(obj, tuple):
        return tuple(_to(v, device) for v in obj)
    if isinstance(obj, list):
        return [_to(v, device) for v in obj]
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, device)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    """torch.nn.DataParallel: ``DataParallel(module, device_ids=None, output_device=None,
    dim=0)``. Without CUDA, calling it calls `module`; with CUDA (one device: jitensor's
    cuda:0) it moves `module` to that device at construction and, on each call, copies the
    tensors among the inputs there and calls `module`, returning its output unchanged (on that
    device, as torch does with one device). Gradients flow back through the copies. Several
    devices: NotImplementedError."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not cuda.is_available():  # torch: no device type, so the module runs as it is
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(x) for x in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = _one_device(self.device_ids, "DataParallel")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_placement(self.module, self.src_device_obj)
        return self.module(*_to(inputs, self.src_device_obj),
                           **_to(kwargs, self.src_device_obj))


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """torch.nn.parallel.data_parallel: ``module(*inputs, **module_kwargs)`` on the GPU
    `device_ids` names (jitensor's one, cuda:0), with the tensors among the inputs copied
    there; the module must be there already. Without CUDA it raises, as torch's does."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_device_index(x) for x in device_ids]
    _device_index(output_device)
    src = _one_device(device_ids, "data_parallel")
    _check_placement(module, src)
    return module(*_to(inputs, src), **_to(module_kwargs or {}, src))
