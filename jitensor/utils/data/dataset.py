"""Datasets as torch's: map-style (`Dataset`: __getitem__ and usually __len__) and iterable
(`IterableDataset`: __iter__), and the wrappers that combine or split them."""
import bisect
import itertools
import math
import warnings

from ...ops.sampling import randperm
from ...random import default_generator

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]


class Dataset:
    """A map from keys (usually ints 0..len-1) to samples: subclasses define __getitem__, and
    __len__ for the samplers and DataLoader options that need a size. An optional
    __getitems__(indices) returns a list of samples at once (DataLoader then uses it)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses define __iter__. DataLoader reads it in order (no
    sampler, no shuffle)."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is ``tuple(t[i] for t in tensors)``; every tensor has the same first size."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError(f"Size mismatch between tensors: first sizes "
                                 f"{[t.size(0) for t in tensors]}; every tensor must have as "
                                 f"many rows as the others")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """Map-style datasets one after another: index i falls in the first dataset whose
    cumulative size exceeds it. Negative indices count from the end."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset; chain "
                                     "iterable datasets with ChainDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets read one after another, lazily."""

    def __init__(self, datasets):
        self.datasets = datasets

    def _check(self, d):
        if not isinstance(d, IterableDataset):
            raise AssertionError(f"ChainDataset only supports IterableDataset, got "
                                 f"{type(d).__name__}")

    def __iter__(self):
        for d in self.datasets:
            self._check(d)
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            self._check(d)
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices
        if type(self).__getitem__ is not Subset.__getitem__ \
                and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__; DataLoader "
                f"reads batches through __getitems__, so define it too, e.g. "
                f"def __getitems__(self, indices): return [self[i] for i in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # the wrapped dataset's own batched read, where it has one
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


class StackDataset(Dataset):
    """Datasets of one length side by side: sample i is the tuple of their samples i
    (``StackDataset(a, b)``) or a dict of them (``StackDataset(image=a, label=b)``)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets = args or kwargs
        parts = list(args or kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        # each part's own batched read, where it has one
        named = self.datasets.items() if isinstance(self.datasets, dict) else \
            enumerate(self.datasets)
        columns = {}
        for k, d in named:
            getitems = getattr(d, "__getitems__", None)
            items = getitems(indices) if callable(getitems) else [d[i] for i in indices]
            if len(items) != len(indices):
                raise ValueError(f"Nested dataset's output size mismatch. Expected "
                                 f"{len(indices)}, got {len(items)}")
            columns[k] = items
        if isinstance(self.datasets, dict):
            return [{k: items[j] for k, items in columns.items()} for j in range(len(indices))]
        return [tuple(items[j] for items in columns.values()) for j in range(len(indices))]

    def __len__(self):
        return self._length


def random_split(dataset, lengths, generator=default_generator):
    """Non-overlapping Subsets of `dataset` of the given `lengths`, from one random permutation
    drawn with `generator`. Lengths that are fractions summing to 1 become floor(f * len) each,
    the remainder handed out one by one from the first split on (torch's rule)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1 (got {frac})")
            sizes.append(math.floor(len(dataset) * frac))
        for i in range(len(dataset) - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, n in enumerate(lengths):
            if n == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              f"empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError(f"Sum of input lengths does not equal the length of the input dataset! "
                         f"(lengths {list(lengths)} sum to {sum(lengths)}, the dataset has "
                         f"{len(dataset)} samples)")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[end - n:end])
            for end, n in zip(itertools.accumulate(lengths), lengths, strict=False)]
