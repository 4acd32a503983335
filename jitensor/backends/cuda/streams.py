"""CUDA streams: which one kernels, copies and allocations go on.

Every launch, copy and memset goes on the *current* stream (driver._state["stream"]). Each
stream has its own pool of freed blocks (memory.py), so a block freed by work on one stream is
reused only by work queued after it on that same stream: stream order alone keeps the block's
old readers ahead of its new writers. A tensor used on a stream other than the one it was
allocated on must be marked with Tensor.record_stream, as in torch.

As torch does, Stream() takes one of a fixed set of streams per priority in turn rather than
creating a new one: streams and their pools then live as long as the process, and a loop that
makes a Stream per step does not make thousands of them."""
from . import driver, memory

PER_PRIORITY = 32  # streams per priority class (torch's pool holds 32 as well)
_pooled = {}  # high priority? -> (its streams, how many were handed out)


def current():
    return driver.init()["stream"]


def default():
    return driver.init()["default"]


def pooled(priority):
    """The next of the pooled streams of `priority` (< 0: high, as torch counts)."""
    high = priority < 0
    made, handed = _pooled.get(high) or ([], 0)
    if len(made) < PER_PRIORITY:
        made.append(driver.new_stream(-1 if high else 0))
    core = made[handed % PER_PRIORITY]
    _pooled[high] = (made, handed + 1)
    return core


def use(core):
    """Make `core` the current stream: launches and copies go on it, blocks come from its pool."""
    driver.init()["stream"] = core
    memory.use_pool(handle(core))


def handle(core):
    return int(core.handle)


def dlpack_handle():
    """The current stream as DLPack and the CUDA Array Interface name it: 1 for the legacy
    default stream (0 is reserved there), else its handle."""
    return handle(current()) or 1


def orders(consumer):
    """Whether work the DLPack consumer queues on stream `consumer` (a DLPack stream value)
    already follows ours, so exporting needs no synchronization."""
    if consumer is None or consumer == -1:  # None: the legacy stream; -1: "do not synchronize"
        consumer = 1 if consumer is None else -1
    ours = dlpack_handle()
    # the per-thread default stream (2) waits for the legacy one (1), as a blocking stream does
    return consumer in (-1, ours) or ours == 1 and consumer == 2
