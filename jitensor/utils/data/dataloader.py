"""DataLoader as torch's: a dataset read through a sampler (or its own iterator), in batches
of `batch_size` collated by `collate_fn`.

With ``num_workers > 0`` worker processes load the batches (jitensor/utils/data/_worker.py):
each gets its tasks on its own queue, round robin, with at most prefetch_factor * num_workers
outstanding, and the batches come back in the order num_workers=0 gives. Workers start with
the multiprocessing context's default method (fork on Linux, as torch: jitensor.threads makes
a fork wait for Numba's compiler and loader locks), are seeded from a base seed drawn from
`generator` as torch seeds them, and stop at the end of each pass unless
``persistent_workers``. An exception in a worker is raised again in the main process with
the worker's traceback. Batches cross processes pickled. An IterableDataset is iterated by
every worker: shard it with get_worker_info(), as in torch.
jitensor cannot pin existing host memory: ``pin_memory=True`` warns and batches stay ordinary
CPU tensors."""
import itertools
import math
import multiprocessing
import queue
import warnings

from ...creation import empty
from ...dtypes import int64
from . import _worker
from ._worker import ExceptionWrapper, StreamEnd, get_worker_info
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

_WORKER_POLL = 5.0  # seconds between checks that the workers are alive while waiting


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
        if isinstance(multiprocessing_context, str):
            methods = multiprocessing.get_all_start_methods()
            if multiprocessing_context not in methods:
                raise ValueError(f"multiprocessing_context option should specify a valid start "
                                 f"method in {methods!r}, but got "
                                 f"multiprocessing_context={multiprocessing_context!r}")
            multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError(f"multiprocessing_context can only be used with multi-process "
                             f"loading (num_workers > 0), but got num_workers={num_workers}")
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
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if not self.persistent_workers:
            return _MultiProcessingDataLoaderIter(self)
        if getattr(self, "_workers_iter", None) is None:
            self._workers_iter = _MultiProcessingDataLoaderIter(self)
        else:
            self._workers_iter._reset()
        return self._workers_iter

    def __len__(self):
        if self._iterable:
            length = len(self.dataset)  # TypeError when the dataset has no __len__
            if self.batch_size is not None:
                return length // self.batch_size if self.drop_last \
                    else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter:
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


class _MultiProcessingDataLoaderIter:
    """One pass (or, with persistent_workers, every pass) over a DataLoader whose batches are
    loaded by worker processes (see the module docstring)."""

    def __init__(self, loader):
        self._loader = loader
        self._iterable = loader._iterable
        context = loader.multiprocessing_context or multiprocessing.get_context()
        n = loader.num_workers
        self._result_queue = context.Queue()
        self._done = context.Event()
        self._index_queues, self._workers = [], []
        self._base_seed = empty((), dtype=int64).random_(generator=loader.generator).item()
        for worker_id in range(n):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            worker = context.Process(target=_worker.worker_loop, daemon=True, args=(
                loader.dataset, self._iterable, loader._auto_collation, loader.collate_fn,
                loader.drop_last, index_queue, self._result_queue, self._done,
                self._base_seed, loader.worker_init_fn, worker_id, n))
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._shutdown = False
        self._epoch = -1
        self._reset()

    def _reset(self):
        """Start a pass: a new sampler iterator; the workers (kept with persistent_workers)
        restart their dataset iterators, and results of an unfinished pass are dropped. (No
        new base seed: torch draws it once per set of workers, so with persistent_workers
        the later passes' shuffles differ from num_workers=0's, as in torch.)"""
        self._epoch += 1
        self._indices = iter(self._loader._index_sampler)
        self._active = [True] * len(self._workers)
        self._cycle = itertools.cycle(range(len(self._workers)))
        self._send_index = self._rcvd_index = 0
        self._pending = {}  # task index -> worker id, for tasks not yet delivered
        self._results = {}  # task index -> result that arrived before its turn
        self._sampler_done = False
        for _ in range(self._loader.prefetch_factor * len(self._workers)):
            self._dispatch()

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _dispatch(self):
        """Send the next task to the next active worker, round robin."""
        if self._sampler_done or not any(self._active):
            return
        try:
            indices = next(self._indices)
        except StopIteration:
            self._sampler_done = True
            return
        worker = next(w for w in self._cycle if self._active[w])
        self._index_queues[worker].put((self._epoch, self._send_index, indices))
        self._pending[self._send_index] = worker
        self._send_index += 1

    def __next__(self):
        # every task gets one answer, in any order: a batch, an exception, or the end of an
        # iterable dataset's stream in that worker; they are delivered in task order
        while True:
            if self._rcvd_index not in self._pending:
                if not self._loader.persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if self._rcvd_index not in self._results:
                epoch, index, result = self._get()
                if epoch == self._epoch:  # (else left over from an unfinished pass)
                    if isinstance(result, StreamEnd):
                        self._active[result.worker_id] = False
                    self._results[index] = result
                continue
            result = self._results.pop(self._rcvd_index)
            del self._pending[self._rcvd_index]
            self._rcvd_index += 1
            self._dispatch()
            if isinstance(result, StreamEnd):
                continue
            if isinstance(result, ExceptionWrapper):
                self._shutdown_workers()
                result.reraise()
            return result

    def _get(self):
        """The next result from any worker, with the timeout and a check that they live."""
        timeout = self._loader.timeout
        waited = 0.0
        while True:
            wait = min(_WORKER_POLL, timeout - waited) if timeout > 0 else _WORKER_POLL
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                waited += wait
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) "
                                       f"{', '.join(map(str, dead))}) exited unexpectedly") \
                        from None
                if timeout > 0 and waited >= timeout:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds") \
                        from None

    def _shutdown_workers(self):
        """Stop the workers: a None task each, then join them (terminating stragglers)."""
        if self._shutdown:
            return
        self._shutdown = True
        self._done.set()
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=_WORKER_POLL)
            if w.is_alive():
                w.terminate()
        for q in (*self._index_queues, self._result_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        self._shutdown_workers()
