"""CUDA streams: which one kernels, copies and allocations go on.

Every launch, copy and memset goes on the calling thread's *current* stream
(driver.current_stream(): per thread, as torch's). Each
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
    return driver.current_stream()


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
    """Make `core` this thread's current stream: its launches and copies go on it, its blocks
    come from the stream's pool."""
    driver.set_current_stream(core)
    memory.use_pool(handle(core))


def handle(core):
    return int(core.handle)


def dlpack_handle():
    """The current stream as DLPack and the CUDA Array Interface name it: 1 for the legacy
    default stream (0 is reserved there), else its handle."""
    return handle(current()) or 1


def ordered(value):
    """Whether work on stream `value` (as DLPack and the CUDA Array Interface name streams: 1
    the legacy default stream, 2 the per-thread one, -1 "do not synchronize", else a handle)
    is already in order with the current stream's."""
    ours = dlpack_handle()
    # the legacy stream and the per-thread default one wait for each other (both are blocking)
    return value in (-1, ours) or ours == 1 and value == 2


def follow(producer):
    """Make the work the current stream queues next wait for what stream `producer` (see
    `ordered`; None: nothing to wait for) has queued."""
    if producer is not None and not ordered(producer):
        current().wait(driver.foreign_stream(producer))


def precede(consumer):
    """Make the work stream `consumer` (see `ordered`; None: the legacy stream, as DLPack
    says) queues next wait for what the current stream has queued."""
    consumer = 1 if consumer is None else consumer
    if not ordered(consumer):
        driver.foreign_stream(consumer).wait(current())
