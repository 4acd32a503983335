"""The one place that picks a kernel for a device: device type -> backend module.

A backend module exposes the same launchers (`empty`, `fill`, `copy`, `arange`, ...) for its
device; op front ends call ``backend(t.device)`` and never branch on the device themselves.
The CUDA backend is imported on first use only, so `import jitensor` never touches a driver."""
import importlib

_MODULES = {"cpu": "jitensor.kernels.cpu", "cuda": "jitensor.kernels.cuda"}
_loaded = {"cpu": importlib.import_module(_MODULES["cpu"])}  # the default device: loaded eagerly


def backend(device):
    """The backend module for a `jt.device`."""
    found = _loaded.get(device.type)
    if found is None:
        found = _loaded[device.type] = importlib.import_module(_MODULES[device.type])
    return found
