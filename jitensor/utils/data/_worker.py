"""The worker processes of a DataLoader with num_workers > 0, as torch's
(torch.utils.data._utils.worker): each reads tasks (a batch's indices) from its own queue,
fetches and collates the batch, and puts it, or the exception it raised with its traceback,
on the shared result queue. Tensors cross processes pickled."""
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

_worker_info = None  # this process's WorkerInfo; None in the main process


@dataclass(frozen=True)
class WorkerInfo:
    """What get_worker_info() returns in a worker: its id, the number of workers, its seed
    (base_seed + id) and its copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """This worker's WorkerInfo, or None in the main process (where loading with
    num_workers=0 runs)."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, with its traceback as text, re-raised in the main
    process as its type with the worker's traceback in the message (as torch's)."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:  # KeyError shows its message's repr
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # a type that takes other arguments
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    def __repr__(self):
        return self


class StreamEnd:
    """A worker's report that its iterable dataset's iterator is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def _generate_state(base_seed, worker_id):
    """The NumPy seed of a worker, derived from (base_seed, worker_id) as torch derives it
    (numpy's SeedSequence hashing)."""
    mask = 0xFFFFFFFF
    init_a, mult_a, init_b, mult_b = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    mix_l, mix_r, shift = 0xCA01F9DD, 0x4973F715, 16
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    const_a = [init_a]

    def hash_(value):
        value = (value ^ const_a[0]) & mask
        const_a[0] = (const_a[0] * mult_a) & mask
        value = (value * const_a[0]) & mask
        return (value ^ (value >> shift)) & mask

    def mix(x, y):
        result = (((mix_l * x) & mask) - ((mix_r * y) & mask)) & mask
        return (result ^ (result >> shift)) & mask

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    const_b, state = init_b, []
    for value in pool:
        value = (value ^ const_b) & mask
        const_b = (const_b * mult_b) & mask
        value = (value * const_b) & mask
        state.append((value ^ (value >> shift)) & mask)
    return state


def worker_loop(dataset, iterable, auto_collation, collate_fn, drop_last, index_queue,
                result_queue, done_event, base_seed, init_fn, worker_id, num_workers):
    """One worker: seed Python, NumPy and jitensor as torch does, run `init_fn`, then serve
    tasks (epoch, index, indices) until a None task. An iterable dataset's iterator is made
    anew at each epoch."""
    global _worker_info
    from ... import random as jt_random  # (jitensor is imported: the dataset's tensors)
    seed = base_seed + worker_id
    random.seed(seed)
    jt_random.manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    where = f"in DataLoader worker process {worker_id}"
    init_error = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        init_error = ExceptionWrapper(sys.exc_info(), where)
    stream, stream_epoch, ended = None, None, False
    while not done_event.is_set():
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            continue
        if task is None:
            break
        epoch, index, indices = task
        if init_error is not None:
            result_queue.put((epoch, index, init_error))
            init_error = None  # reported once: the main process stops there
            continue
        try:
            if not iterable:
                if auto_collation:
                    getitems = getattr(dataset, "__getitems__", None)
                    data = getitems(indices) if getitems else [dataset[i] for i in indices]
                else:
                    data = dataset[indices]
            else:
                if epoch != stream_epoch:
                    stream, stream_epoch, ended = iter(dataset), epoch, False
                data = _next_from_stream(stream, indices, auto_collation, drop_last) \
                    if not ended else None
                if data is None:
                    ended = True
                    result_queue.put((epoch, index, StreamEnd(worker_id)))
                    continue
            result = collate_fn(data)
        except Exception:
            result = ExceptionWrapper(sys.exc_info(), where)
        result_queue.put((epoch, index, result))
    result_queue.cancel_join_thread()  # exit at once even when nobody reads the last results


def _next_from_stream(stream, indices, auto_collation, drop_last):
    """The next sample (or batch of len(indices) samples) of the stream; None at its end."""
    if not auto_collation:
        try:
            return next(stream)
        except StopIteration:
            return None
    data = []
    for _ in indices:
        try:
            data.append(next(stream))
        except StopIteration:
            break
    if not data or drop_last and len(data) < len(indices):
        return None
    return data
