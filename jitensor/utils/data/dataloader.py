"""DataLoader as torch's: a dataset read through a sampler (or its own iterator), in batches
of `batch_size` collated by `collate_fn`.

Loading always runs in the calling process. ``num_workers > 0`` is accepted and gives exactly
the batches, in the order, that ``num_workers=0`` gives (which is also what torch's worker
processes deliver for a map-style dataset with ``in_order=True``); no worker process starts,
so ``worker_init_fn`` is not called, ``get_worker_info()`` stays None, and ``timeout``,
``prefetch_factor``, ``persistent_workers`` and ``multiprocessing_context`` are checked as
torch checks them but change nothing. (An IterableDataset read by torch's n workers without
sharding by get_worker_info() yields every sample n times; here it yields each once.)
jitensor cannot pin existing host memory: ``pin_memory=True`` warns and batches stay ordinary
CPU tensors."""
import math
import warnings

from ...creation import empty
from ...dtypes import int64
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]


def get_worker_info():
    """Information about the worker process running the code: always None, since jitensor's
    DataLoader loads in the calling process (torch returns None there too)."""
    return None


class _InfiniteConstantSampler:
    """The index 'sampler' of an IterableDataset: None, forever (the dataset's own iterator
    supplies the samples)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over `dataset` in batches.

    batch_size: samples per batch (None: no batching, each sample passes through `collate_fn`,
    default `default_convert`, alone). shuffle: a new random order each epoch (RandomSampler
    drawing from `generator`, or from the default generator when None). sampler: the indices to
    read (exclusive with shuffle); batch_sampler: lists of indices (exclusive with batch_size,
    shuffle, sampler and drop_last). drop_last: drop a last, shorter batch. collate_fn: how a
    list of samples becomes a batch (default `default_collate`). See the module docstring for
    num_workers and pin_memory."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing. let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if pin_memory:
            warnings.warn("DataLoader: 'pin_memory' argument is set as true, but jitensor "
                          "cannot pin host memory; batches are ordinary CPU tensors",
                          stacklevel=2)
        self.num_workers, self.prefetch_factor = num_workers, prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context, self.in_order = multiprocessing_context, in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.persistent_workers = persistent_workers
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._initialized = True

    def __setattr__(self, attr, value):
        if getattr(self, "_initialized", False) and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        return _LoaderIter(self)

    def __len__(self):
        if self._iterable:
            length = len(self.dataset)  # TypeError when the dataset has no __len__
            if self.batch_size is not None:
                return length // self.batch_size if self.drop_last \
                    else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _LoaderIter:
    """One pass over a DataLoader, in the calling process."""

    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._collate = loader.collate_fn
        self._auto = loader._auto_collation
        self._indices = iter(loader._index_sampler)
        # torch draws its workers' base seed here, once per pass: the generator (or the default
        # one) advances by one draw each epoch as in torch, though no worker uses the value
        self._base_seed = empty((), dtype=int64).random_(generator=loader.generator).item()
        self._stream = iter(self._dataset) if loader._iterable else None
        self._ended = False

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        index = next(self._indices)  # StopIteration ends the pass
        if self._stream is None:
            return self._collate(self._fetch_map(index))
        return self._collate(self._fetch_stream(index))

    def _fetch_map(self, index):
        if not self._auto:
            return self._dataset[index]
        getitems = getattr(self._dataset, "__getitems__", None)
        if getitems:
            return getitems(index)
        return [self._dataset[i] for i in index]

    def _fetch_stream(self, index):
        if self._ended:
            raise StopIteration
        if not self._auto:
            return next(self._stream)
        data = []
        for _ in index:
            try:
                data.append(next(self._stream))
            except StopIteration:
                self._ended = True
                break
        if not data or self._loader.drop_last and len(data) < len(index):
            raise StopIteration
        return data
