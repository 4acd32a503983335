"""The device value object: torch's repr, equality and string parsing."""

from .cuda import _current

_TYPES = ("cpu", "cuda")


class device:
    """``device("cpu")``, ``device("cuda")``, ``device("cuda:0")``, ``device("cuda", 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): pass an index only with a device type string")
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string like 'cpu' or 'cuda:0', got {type!r}")
        name, sep, idx = type.partition(":")
        if name not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                               f"device string: {type!r}")
        if sep:
            if index is not None:
                raise RuntimeError(f"device(): type {type!r} already names an index; "
                                   f"do not pass index={index!r} as well")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: {type!r}; write e.g. 'cuda:0'")
            index = int(idx)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise RuntimeError(f"Device index must be a non-negative integer, got {index!r}")
        self.type, self.index = name, index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __setattr__(self, name, value):
        if hasattr(self, "index"):
            raise AttributeError("device objects are immutable")
        object.__setattr__(self, name, value)

    # ``with jt.device("cuda"):`` makes it the default device inside the block, as torch's
    # (process-wide here, as set_default_device is)
    def __enter__(self):
        from .creation import _default_device, set_default_device
        _entered.append(_default_device[0])
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        from .creation import set_default_device
        set_default_device(_entered.pop())


_entered = []  # the default devices that the entered device blocks replaced, innermost last


CPU = device("cpu")
_parsed = {"cpu": CPU, None: CPU}
_cuda = {}  # index -> the one device object tensors on it share (ops compare them by identity)
_names = {}  # device string -> its parsed device


def to_device(value):
    """Parse a device, a string or an int (a CUDA ordinal) into a device; None means the CPU.
    A bare "cuda" becomes the current CUDA device, as tensors report it. A CUDA device once
    checked is remembered (availability does not change in a process), so that creating a
    tensor on "cuda" does not ask again."""
    c = value.__class__
    if c is str:
        found = _parsed.get(value) or value == "cuda" and _cuda.get(_current.index)
        if found:
            return found
    elif value is None:
        return CPU
    elif c is device and value.type == "cuda":
        found = _cuda.get(_current.index if value.index is None else value.index)
        if found is not None:
            return found
    return _resolve(value)


def _resolve(value):
    if isinstance(value, device):
        d = value
    elif isinstance(value, int) and not isinstance(value, bool):
        d = device("cuda", value)
    elif isinstance(value, str):
        d = _names.get(value) or _names.setdefault(value, device(value))
    else:
        raise TypeError(f"expected a device (jt.device, 'cpu', 'cuda:0' or an int), got {value!r}")
    if d.type != "cuda":
        return CPU
    from . import cuda
    cuda.init(d.index)
    index = cuda.current_device() if d.index is None else d.index
    found = _cuda.get(index)
    if found is None:
        found = _cuda[index] = device("cuda", index)
    if isinstance(value, str) and d.index is not None:
        _parsed[value] = found
    return found


def get_device_module(device=None):
    """The module of a device type, jt.cuda or jt.cpu, for `device` (a device, a string or
    None: the current accelerator's, else the CPU's)."""
    import importlib

    from . import accelerator
    if device is None:
        current = accelerator.current_accelerator()
        kind = "cpu" if current is None else current.type
    else:
        kind = device.split(":")[0] if isinstance(device, str) else \
            "cuda" if isinstance(device, int) else device.type
    if kind not in ("cpu", "cuda"):
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered "
                           f"as 'torch.{kind}'.")
    return importlib.import_module(f"jitensor.{kind}")
