"""Collation as torch's: `default_collate` turns a list of samples into a batch (tensors
stacked on a new first dim, numbers and NumPy arrays made tensors, containers recursed), and
`default_convert` makes the NumPy arrays in one sample tensors (the loader's default without
batching). `collate(batch, collate_fn_map=...)` is the extensible form both build on: a map
from element type to the function that collates a list of such elements."""
import collections.abc
import copy
import re

import numpy as np

from ...creation import as_tensor, tensor
from ...dtypes import float64
from ...ops.shape import stack
from ...tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtypes of bytes, str, unicode or objects: not convertible to tensors
_NP_STR_OBJ = re.compile(r"[SaUO]")

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _is_numpy(x):
    kind = type(x)
    return kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_", "bytes_")


def default_convert(data):
    """`data` with each NumPy array (and NumPy scalar) inside it made a tensor; mappings,
    namedtuples and sequences are rebuilt around the converted items (a tuple becomes a list,
    as torch's); anything else is returned as it is."""
    kind = type(data)
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if kind.__name__ == "ndarray" and _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        items = {key: default_convert(data[key]) for key in data}
        return _rebuild_mapping(data, items)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like, items):
    """A mapping of `like`'s type holding `items` (a plain dict where the type cannot be
    rebuilt), keeping the other state of a mutable mapping (e.g. an OrderedDict's)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(items)
            return clone
        return type(like)(items)
    except TypeError:
        return items


def _rebuild_sequence(like, items):
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:
        return items


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples by the type of the first: an exact entry of `collate_fn_map`,
    else the first entry the element is an instance of, else the containers (mappings by key,
    namedtuples and sequences position by position, each list of parts collated again)."""
    elem = batch[0]
    kind = type(elem)
    if collate_fn_map is not None:
        if kind in collate_fn_map:
            return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        items = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                 for key in elem}
        return _rebuild_mapping(elem, items)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return kind(*(collate(parts, collate_fn_map=collate_fn_map)
                      for parts in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # each position's parts stay the tuple zip makes: strings at a position batch as a
        # tuple of strings, as torch's
        parts = [collate(p, collate_fn_map=collate_fn_map) for p in zip(*batch, strict=False)]
        if isinstance(elem, tuple):
            return parts  # a list, as torch's (backward compatibility)
        return _rebuild_sequence(elem, parts)
    raise TypeError(_ERR.format(kind))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if _NP_STR_OBJ.search(batch[0].dtype.str) is not None:
        raise TypeError(_ERR.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(list(batch), dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(list(batch))  # int64; a batch of bools gives a bool tensor


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


# insertion order matters: NumPy's float64 is a float and its bool_ no int, so the NumPy
# scalars come before the Python numbers
default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """A batch from a list of samples, by the type of the first sample:
    tensors -> stacked on a new dim 0; NumPy arrays -> tensors, stacked; NumPy scalars -> one
    tensor of their dtype; floats -> float64 tensor; ints -> int64 tensor (bools -> bool);
    str/bytes -> the batch unchanged (inside a sequence, a tuple of
    each position's strings); mappings -> the same keys, each collated; namedtuples ->
    the same type, field by field; other sequences -> position by position (tuples give a list).
    Anything else raises TypeError."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
