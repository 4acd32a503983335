"""jt.save / jt.load: tensors and nested containers of them in a format that cannot run code.

A file is a zip archive holding ``jitensor/data.json`` (the object's structure: Python scalars
and strings as JSON values, containers and tensors as tagged JSON objects) and one
``jitensor/tensors/<n>.npy`` per tensor (NumPy's array format, written and read with
allow_pickle=False). Loading never unpickles, so a file from an untrusted source can only fail to
load. A tensor reached twice (tied weights) is stored once and loads as one tensor."""
import contextlib
import json
import os
import zipfile
from collections import OrderedDict

import numpy as np

from .creation import from_numpy, tensor
from .device import device as _device_type
from .dtypes import dtype as _dtype_type, float16, to_dtype
from .nn.parameter import Parameter
from .tensor import Size, Tensor

__all__ = ["load", "save"]

_FORMAT, _VERSION = "jitensor", 1
_DATA = "jitensor/data.json"


def _tensor_path(n):
    return f"jitensor/tensors/{n}.npy"


def save(obj, f):
    """Write `obj` to `f` (a path or a binary file object): tensors (with dtype, device and
    requires_grad), dicts (with keys of any of these kinds), lists, tuples, None, bools, ints,
    floats, strings, dtypes, devices and Sizes, nested freely."""
    tensors = []  # the distinct tensors, in the order their files are numbered
    ids = {}
    root = _encode(obj, tensors, ids)
    with _open(f, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED) as z:
        z.writestr(_DATA, json.dumps({"format": _FORMAT, "version": _VERSION, "root": root}))
        for n, t in enumerate(tensors):
            with z.open(_tensor_path(n), "w", force_zip64=True) as out:
                np.lib.format.write_array(out, t._host(), allow_pickle=False)


def _encode(obj, tensors, ids):
    """The JSON structure for `obj`; tensors are appended to `tensors` (each once)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
        return obj.item()  # NumPy scalars are stored as the Python numbers they hold
    if isinstance(obj, Tensor):
        if id(obj) not in ids:
            ids[id(obj)] = len(tensors)
            tensors.append(obj)
        return {"tensor": ids[id(obj)], "dtype": obj.dtype.name, "device": str(obj.device),
                "requires_grad": obj.requires_grad, "parameter": type(obj) is Parameter}
    if isinstance(obj, Size):
        return {"size": list(obj)}
    if isinstance(obj, _dtype_type):
        return {"dtype": obj.name}
    if isinstance(obj, _device_type):
        return {"device": str(obj)}
    if type(obj) in (list, tuple):
        return {type(obj).__name__: [_encode(x, tensors, ids) for x in obj]}
    if type(obj) in (dict, OrderedDict):
        return {type(obj).__name__: [[_encode(k, tensors, ids), _encode(v, tensors, ids)]
                                     for k, v in obj.items()]}
    raise TypeError(f"jt.save: cannot save an object of type {type(obj).__module__}."
                    f"{type(obj).__qualname__}; jitensor files hold tensors, dicts, lists, "
                    f"tuples, None, bools, ints, floats and strings (save a model or an "
                    f"optimizer as its state_dict())")


def load(f, map_location=None):
    """Read what `save` wrote. Each tensor goes back to the device it was saved from unless
    `map_location` says otherwise: a device (or "cpu"), a dict from saved device strings to
    devices, or a callable (cpu_tensor, saved_device_string) -> tensor or None (None: the
    saved device)."""
    with _open(f, "rb") as raw:
        try:
            z = zipfile.ZipFile(raw)
        except zipfile.BadZipFile:
            raise _not_ours(f, "it is not a zip archive") from None
        with z:
            try:
                header = json.loads(z.read(_DATA))
            except (KeyError, ValueError) as e:
                raise _not_ours(f, f"no readable {_DATA} ({e})") from None
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                raise _not_ours(f, f"{_DATA} does not describe a jitensor object")
            if header.get("version") != _VERSION:
                raise RuntimeError(f"jt.load: {_name(f)} has format version "
                                   f"{header.get('version')!r}; this jitensor reads version "
                                   f"{_VERSION}")
            return _Decoder(z, map_location).decode(header.get("root"))


class _Decoder:
    def __init__(self, zipped, map_location):
        self.zip, self.map_location = zipped, map_location
        self.loaded = {}  # tensor number -> tensor, so a tensor saved once loads once

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, dict) and len(node) == 1:
            (tag, body), = node.items()
            if tag in ("list", "tuple") and isinstance(body, list):
                items = [self.decode(x) for x in body]
                return items if tag == "list" else tuple(items)
            if tag in ("dict", "OrderedDict") and isinstance(body, list):
                pairs = ((self.decode(k), self.decode(v)) for k, v in body)
                return dict(pairs) if tag == "dict" else OrderedDict(pairs)
            if tag == "size" and isinstance(body, list):
                return Size(int(x) for x in body)
            if tag == "dtype":
                return to_dtype(body)
            if tag == "device":
                return _device_type(body)
        if isinstance(node, dict) and isinstance(node.get("tensor"), int) \
                and isinstance(node.get("dtype"), str) and isinstance(node.get("device"), str):
            return self.tensor(node)
        raise RuntimeError(f"jt.load: the file's structure holds an entry it cannot read: "
                           f"{str(node)[:200]}; the file is damaged or was not written by jt.save")

    def tensor(self, node):
        n = node["tensor"]
        if n not in self.loaded:
            dtype = to_dtype(node["dtype"])
            try:
                with self.zip.open(_tensor_path(n)) as f:
                    host = np.lib.format.read_array(f, allow_pickle=False)
            except KeyError:
                raise RuntimeError(f"jt.load: the file lacks {_tensor_path(n)}; it is "
                                   f"damaged") from None
            if host.dtype != dtype.np:
                raise RuntimeError(f"jt.load: {_tensor_path(n)} holds {host.dtype} values but "
                                   f"the structure says {dtype}; the file is damaged")
            t = self.place(host, dtype, node["device"])
            if node.get("parameter"):
                t = Parameter(t, bool(node.get("requires_grad")))
            elif node.get("requires_grad"):
                t.requires_grad_(True)
            self.loaded[n] = t
        return self.loaded[n]

    def place(self, host, dtype, location):
        """The tensor on the device map_location picks for saved device `location`."""
        m = self.map_location
        if callable(m) and not isinstance(m, (str, _device_type)):
            cpu = from_numpy(host)  # float16 raises here: it has no CPU form to pass
            out = m(cpu, location)
            return cpu.to(location) if out is None else out
        target = location if m is None else m.get(location, location) if isinstance(m, dict) \
            else m
        if dtype is float16:  # CUDA only: no CPU tensor to move there
            return tensor(host, dtype=dtype, device=target)
        return from_numpy(host).to(target)


def _not_ours(f, why):
    return RuntimeError(f"jt.load: {_name(f)} is not a jitensor file ({why}). jitensor never "
                        f"unpickles: files written by torch.save or pickle cannot be loaded")


def _name(f):
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"


@contextlib.contextmanager
def _open(f, mode):
    """A binary file for a path (opened and closed here) or the file object itself."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as file:
            yield file
    elif hasattr(f, "write" if "w" in mode else "read"):
        yield f
    else:
        raise TypeError(f"expected a path or a binary file object, got {type(f).__name__}")
