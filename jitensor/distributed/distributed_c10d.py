"""torch.distributed's process groups and collectives on MPI (mpi4py).

Ranks come from MPI: start the processes with mpiexec, or with ``python -m
jitensor.distributed.run``, torchrun's launcher on top of it. CPU tensors travel without a copy:
MPI reads and writes their NumPy arrays (contiguous ones; others go through a contiguous copy).
CUDA tensors are staged through host memory (the mpich wheel's MPI is not CUDA-aware).

Every collective first exchanges a few bytes of metadata through group rank 0 (the op, dtypes,
shapes), so a rank calling another collective, or passing another shape or dtype, gets an error
naming the ranks and what they passed instead of a hang or a silent misread; and a rank that
never arrives (dead, or stuck) is named after the group's timeout. Once every rank has arrived,
the data moves in one MPI call."""
import enum
import os
import pickle
import time
from datetime import timedelta

import numpy as np

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "broadcast", "broadcast_object_list", "destroy_process_group",
    "gather", "gather_object", "get_backend", "get_rank", "get_world_size", "init_process_group",
    "irecv", "is_available", "is_initialized", "is_mpi_available", "isend", "new_group", "recv",
    "reduce", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]

default_pg_timeout = timedelta(minutes=30)  # torch's default for CPU backends
_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def is_available():
    """True where mpi4py (and with it an MPI library) imports."""
    try:
        from mpi4py import MPI  # noqa: F401
    except ImportError:
        return False
    return True


is_mpi_available = is_available


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("jitensor.distributed needs mpi4py and an MPI library: "
                           "pip install 'jitensor[distributed]'") from e
    return MPI


class Backend(str):
    """torch.distributed.Backend: the backend's name. jitensor has one, "mpi"; "gloo" and
    "nccl" are accepted by init_process_group and run on it too (scripts name them by habit)."""

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self):
        return f"<RedOpType.{self.name}>"


class _NonMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    WORLD = None  # the default group, once init_process_group made it
    NON_GROUP_MEMBER = _NonMember()


class ProcessGroup:
    """A group of ranks: an MPI communicator for data, and two duplicates of it for the
    metadata of collectives and of point-to-point messages, so neither can match the other."""

    def __init__(self, comm, ranks, timeout):
        self.comm, self.ranks, self.timeout = comm, list(ranks), timeout
        self.ctl, self.p2p = comm.Dup(), comm.Dup()
        self._global_to_group = {g: i for i, g in enumerate(self.ranks)}

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def name(self):
        return Backend.MPI

    def group_rank(self, global_rank, what="rank"):
        try:
            return self._global_to_group[global_rank]
        except KeyError:
            raise ValueError(f"{what} {global_rank} is not part of the group (its ranks: "
                             f"{self.ranks})") from None

    def free(self):
        for c in (self.ctl, self.p2p, self.comm):
            if c is not None and c != _mpi().COMM_WORLD:
                c.Free()
        self.comm = self.ctl = self.p2p = None


_world = None  # the default ProcessGroup
_groups = []   # every group new_group made, freed by destroy_process_group
_sending = []  # requests of metadata sends, kept (with their buffers) until MPI is done


def _default_group():
    if _world is None:
        raise ValueError(_NOT_INITIALIZED)
    return _world


def _group(group):
    """The ProcessGroup `group` names (None: the default one), or None when this rank is not in
    it (torch's collectives then return at once)."""
    pg = _default_group() if group is None or group is GroupMember.WORLD else group
    if pg is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(pg, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group(), got {type(pg).__name__}")
    if pg.comm is None:
        raise ValueError("the process group was destroyed")
    return pg


def is_initialized():
    return _world is not None


def _env_int(name):
    value = os.environ.get(name)
    return None if value in (None, "") else int(value)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """torch.distributed.init_process_group on MPI. The ranks are MPI's (MPI.COMM_WORLD): start
    the processes with mpiexec or ``python -m jitensor.distributed.run``. `backend` may be
    "mpi", "gloo", "nccl" or torch's "cpu:gloo,cuda:nccl" form: all run on MPI. `init_method`
    ("env://", "tcp://...", "file://...") and `store` are accepted and unused, as MPI finds its
    peers itself. `world_size` and `rank` when given, and the RANK and WORLD_SIZE variables of
    torchrun when set, must agree with MPI's: a process torchrun started alone is an MPI job of
    one, and is refused with a note on how to launch."""
    global _world
    if _world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None:
        for part in str(backend).lower().replace(",", " ").split():
            name = part.split(":")[-1]
            if name not in (Backend.MPI, Backend.GLOO, Backend.NCCL):
                raise ValueError(f"backend {backend!r} is not supported: jitensor.distributed "
                                 f"runs on MPI (use 'mpi'; 'gloo' and 'nccl' map to it)")
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    mpi_rank, mpi_size = comm.Get_rank(), comm.Get_size()
    for what, given, env, actual in (("world_size", world_size, "WORLD_SIZE", mpi_size),
                                     ("rank", rank, "RANK", mpi_rank)):
        if given is not None and given != -1 and given != actual:
            raise ValueError(f"init_process_group({what}={given}) but MPI gives this process "
                             f"{what} {actual}; start the job with mpiexec -n N or python -m "
                             f"jitensor.distributed.run --nproc-per-node N")
        value = _env_int(env)
        if value is not None and value != actual:
            raise ValueError(f"{env}={value} in the environment but MPI gives this process "
                             f"{what} {actual}: it was not started by mpiexec as one job (torchrun "
                             f"starts processes MPI cannot join); launch with python -m "
                             f"jitensor.distributed.run --nproc-per-node N script.py")
    if timeout is None:
        timeout = default_pg_timeout
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    _world = ProcessGroup(comm, range(mpi_size), seconds)
    GroupMember.WORLD = _world
    # torch scripts read these after init (torchrun sets them; plain mpiexec does not)
    os.environ.setdefault("RANK", str(mpi_rank))
    os.environ.setdefault("WORLD_SIZE", str(mpi_size))
    os.environ.setdefault("LOCAL_RANK", os.environ.get("MPI_LOCALRANKID", os.environ.get(
        "OMPI_COMM_WORLD_LOCAL_RANK", str(mpi_rank))))


def destroy_process_group(group=None):
    """Free `group`'s communicators, or every group's (the default too) when `group` is None;
    init_process_group may then run again."""
    global _world
    if group is None or group is GroupMember.WORLD:
        if _world is None:
            raise ValueError(_NOT_INITIALIZED)
        for pg in _groups:
            if pg.comm is not None:
                pg.free()
        _groups.clear()
        _world.free()
        _world = GroupMember.WORLD = None
    elif group is not GroupMember.NON_GROUP_MEMBER:
        group.free()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of the global `ranks` (all of them when None). Every rank must call it, as with
    torch; a rank outside `ranks` gets GroupMember.NON_GROUP_MEMBER."""
    world = _default_group()
    MPI = _mpi()
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is not in the world of {world.size()}")
    me = world.rank()
    comm = world.comm.Split(0 if me in ranks else MPI.UNDEFINED, ranks.index(me)
                            if me in ranks else 0)
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    seconds = world.timeout if timeout is None else (
        timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout))
    pg = ProcessGroup(comm, ranks, seconds)
    _groups.append(pg)
    return pg


def get_rank(group=None):
    """This process's rank in `group` (the default group: its global rank); -1 outside it."""
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    _group(group)
    return Backend.MPI


def get_global_rank(group, group_rank):
    return _group(group).ranks[group_rank]


def get_group_rank(group, global_rank):
    return _group(group).group_rank(global_rank)


def get_process_group_ranks(group):
    return list(_group(group).ranks)


# -- waiting with a deadline ---------------------------------------------------------------------
def _poll(test, deadline):
    """Call `test` until it returns True (True) or `deadline` passes (False). Short sleeps after
    a first burst of spinning: ranks share the cores with each other."""
    spins = 0
    while not test():
        if time.monotonic() > deadline:
            return False
        spins += 1
        if spins > 200:
            time.sleep(min(1e-4, 1e-6 * spins))
    return True


class Work:
    """The handle of an async_op=True call (torch's Work): wait() blocks until the operation
    is done (raising after the group's timeout), is_completed() asks without blocking. The
    output tensors hold the result once either says it is done."""

    def __init__(self, pg, requests, after=None, what="collective", result=()):
        self._pg, self._requests, self._after = pg, requests, after
        self._what, self._result, self._done = what, list(result), False

    def _finish(self):
        if not self._done:
            self._done = True
            if self._after is not None:
                self._after()

    def is_completed(self):
        if not self._done and _mpi().Request.Testall(self._requests):
            self._finish()
        return self._done

    def is_success(self):
        return self.is_completed()

    def wait(self, timeout=None):
        if self._done:
            return True
        MPI = _mpi()
        seconds = self._pg.timeout if timeout is None else (
            timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout))
        if not _poll(lambda: MPI.Request.Testall(self._requests), time.monotonic() + seconds):
            raise RuntimeError(f"{self._what} did not complete within {seconds:g} s (timeout): "
                               f"a rank it needs died or never made the matching call")
        self._finish()
        return True

    def result(self):
        self.wait()
        return self._result


# -- the metadata check --------------------------------------------------------------------------
def _same(sigs, ranks):
    """None when every rank's signature is rank 0's, else the first difference, in words."""
    first = sigs[0]
    for r, sig in enumerate(sigs):
        if sig != first:
            if sig["op"] != first["op"]:
                return (f"rank {ranks[r]} called {sig['op']} while rank {ranks[0]} called "
                        f"{first['op']}: every rank must make the same collective calls in the "
                        f"same order")
            key = next(k for k in first if sig.get(k) != first[k])
            return (f"{first['op']}: rank {ranks[r]} passed {key}={sig[key]} but rank "
                    f"{ranks[0]} passed {key}={first[key]}; every rank must pass the same")
    return None


def _check(pg, sig, compare=_same):
    """Exchange `sig` (a small dict: the op, dtypes, shapes) through group rank 0, which checks
    them all with `compare` and answers every rank; raise on a mismatch, or when a rank does
    not arrive within the group's timeout (rank 0 names it)."""
    n, me, comm = pg.size(), pg.rank(), pg.ctl
    if n == 1:
        return
    _sending[:] = [r for r in _sending if not r.Test()]
    op = sig["op"]
    if me == 0:
        deadline = time.monotonic() + pg.timeout
        requests = {r: comm.irecv(source=r, tag=1) for r in range(1, n)}
        sigs = [sig] + [None] * (n - 1)

        def arrived():
            for r in list(requests):
                done, value = requests[r].test()
                if done:
                    sigs[r] = value
                    del requests[r]
            return not requests
        if not _poll(arrived, deadline):
            missing = [pg.ranks[r] for r in requests]
            error = (f"{op}: rank(s) {missing} did not reach it within {pg.timeout:g} s "
                     f"(timeout): they died, are stuck, or called something else; the group "
                     f"cannot be used after this")
            for r in requests:
                requests[r].Cancel()
            verdict = error
        else:
            verdict = compare(sigs, pg.ranks)
        for r in range(1, n):
            if sigs[r] is not None:
                _sending.append(comm.isend(verdict, dest=r, tag=2))
    else:
        _sending.append(comm.isend(sig, dest=0, tag=1))
        request = comm.irecv(source=0, tag=2)
        answer = []

        def answered():
            done, value = request.test()
            if done:
                answer.append(value)
            return done
        # rank 0 answers within its own timeout: a little longer here lets it name the rank
        if not _poll(answered, time.monotonic() + pg.timeout * 1.1 + 5):
            raise RuntimeError(f"{op}: group rank 0 (global rank {pg.ranks[0]}) did not answer "
                               f"within {pg.timeout:g} s (timeout): it died or is stuck")
        verdict = answer[0]
    if verdict is not None:
        raise RuntimeError(verdict)


def _sig(op, *tensors, **extra):
    sig = {"op": op}
    for i, t in enumerate(tensors):
        sig[f"dtype{i or ''}"] = t.dtype.name
        sig[f"shape{i or ''}"] = tuple(t.shape)
    sig.update(extra)
    return sig


# -- tensors as MPI buffers ----------------------------------------------------------------------
def _array(t):
    """A contiguous NumPy array of `t`'s values: its own buffer where it can be (a contiguous
    CPU tensor), else a copy (from the device for a CUDA tensor)."""
    from ..tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a jitensor Tensor, got {type(t).__name__}")
    if t.device.type == "cpu":
        return np.ascontiguousarray(t._data)
    return np.ascontiguousarray(t._host())


def _write_back(t, a):
    """Store `a` into `t` unless `a` is `t`'s own buffer already."""
    if t.device.type == "cpu":
        if a is not t._data:
            t._data[...] = a.reshape(t._data.shape)
        return
    from ..autograd import no_grad
    from ..creation import from_numpy
    with no_grad():
        t.copy_(from_numpy(a.reshape(tuple(t.shape))))


def _mpi_op(op, dtype):
    """The MPI reduction for ReduceOp `op` on `dtype` (bool: logical, as torch treats it)."""
    MPI = _mpi()
    if not isinstance(op, ReduceOp):
        raise ValueError(f"op must be a ReduceOp, got {op!r}")
    if dtype.name == "bool":
        return {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR,
                ReduceOp.MIN: MPI.LAND, ReduceOp.PRODUCT: MPI.LAND, ReduceOp.BAND: MPI.LAND,
                ReduceOp.BXOR: MPI.LXOR}.get(op) or _bad_op(op, dtype)
    if op is ReduceOp.AVG and not dtype.is_floating_point:
        _bad_op(op, dtype)
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.is_floating_point:
        _bad_op(op, dtype)
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def _bad_op(op, dtype):
    raise ValueError(f"ReduceOp.{op.name} is not supported on {dtype.name} tensors")


def _average(a, op, n):
    if op is ReduceOp.AVG:
        np.divide(a, n, out=a, casting="unsafe")


def _run(pg, name, args, after, async_op, what, result=()):
    """MPI's blocking `name` (then `after`), or its nonblocking form in a Work when async_op."""
    comm = pg.comm
    if async_op:
        request = getattr(comm, "I" + name.lower())(*args)
        return Work(pg, [request], after, what, result)
    getattr(comm, name)(*args)
    if after is not None:
        after()
    return None


def _then(*steps):
    def after():
        for step in steps:
            step()
    return after


# -- collectives ---------------------------------------------------------------------------------
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` over the group, in place on every rank."""
    pg = _group(group)
    if pg is None:
        return None
    mop = _mpi_op(op, tensor.dtype)
    _check(pg, _sig("all_reduce", tensor, reduce_op=op.name))
    a = _array(tensor)
    return _run(pg, "Allreduce", (_mpi().IN_PLACE, a, mop),
                _then(lambda: _average(a, op, pg.size()), lambda: _write_back(tensor, a)),
                async_op, "all_reduce", [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank `src`'s `tensor` into every rank's, in place (`src` is a global rank;
    `group_src` a rank of `group`)."""
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "src")
    _check(pg, _sig("broadcast", tensor, src=root))
    a = _array(tensor)
    return _run(pg, "Bcast", (a, root), lambda: _write_back(tensor, a), async_op, "broadcast",
                [tensor])


def _root(pg, rank, group_rank, what):
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"Can not specify both {what} and group_{what}")
        return group_rank
    return pg.group_rank(0 if rank is None else rank, what)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` over the group into rank `dst`'s; other ranks' tensors are unchanged."""
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "dst")
    mop = _mpi_op(op, tensor.dtype)
    _check(pg, _sig("reduce", tensor, dst=root, reduce_op=op.name))
    a = _array(tensor)
    if pg.rank() == root:
        after = _then(lambda: _average(a, op, pg.size()), lambda: _write_back(tensor, a))
        args = (_mpi().IN_PLACE, a, mop, root)
    else:
        after, args = None, (a, None, mop, root)
    return _run(pg, "Reduce", args, after, async_op, "reduce", [tensor])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's `input_tensor` concatenated along dim 0 (or stacked) into
    `output_tensor`, which holds world_size times as many elements."""
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    _check_dtypes("all_gather_into_tensor", output_tensor, input_tensor)
    if output_tensor.numel() != n * input_tensor.numel():
        raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to "
                         f"world_size times input tensor size ({output_tensor.numel()} != "
                         f"{n} * {input_tensor.numel()})")
    _check(pg, _sig("all_gather_into_tensor", input_tensor))
    out = _array(output_tensor)
    return _run(pg, "Allgather", (_array(input_tensor), out),
                lambda: _write_back(output_tensor, out), async_op, "all_gather_into_tensor",
                [output_tensor])


def _check_dtypes(what, *tensors):
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise TypeError(f"{what}: tensors must all have one dtype, got "
                        f"{sorted(d.name for d in dtypes)}")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Rank i's `tensor` into every rank's ``tensor_list[i]``."""
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    _check_list("all_gather", tensor_list, tensor, n)
    _check(pg, _sig("all_gather", tensor))
    out = np.empty((n, tensor.numel()), tensor.dtype.np)

    def after():
        for t, row in zip(tensor_list, out, strict=True):
            _write_back(t, row)
    return _run(pg, "Allgather", (_array(tensor), out), after, async_op, "all_gather",
                tensor_list)


def _check_list(what, tensors, like, n):
    if len(tensors) != n:
        raise ValueError(f"{what}: the tensor list has {len(tensors)} tensors, the group "
                         f"{n} ranks")
    for t in tensors:
        if t.shape != like.shape or t.dtype != like.dtype:
            raise ValueError(f"{what}: every tensor of the list must have the shape and dtype "
                             f"of the rank's tensor ({like.dtype.name} {list(like.shape)}), got "
                             f"{t.dtype.name} {list(t.shape)}")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `input` (world_size chunks along dim 0) over the group; rank i gets the reduced
    chunk i in `output`."""
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    _check_dtypes("reduce_scatter_tensor", output, input)
    if input.numel() != n * output.numel():
        raise ValueError(f"reduce_scatter_tensor: input tensor must be the same size as output "
                         f"size times world size ({input.numel()} != {n} * {output.numel()})")
    mop = _mpi_op(op, output.dtype)
    _check(pg, _sig("reduce_scatter_tensor", input, reduce_op=op.name))
    out = _array(output)
    return _run(pg, "Reduce_scatter_block", (_array(input), out, mop),
                _then(lambda: _average(out, op, n), lambda: _write_back(output, out)), async_op,
                "reduce_scatter_tensor", [output])


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's `tensor` into rank `dst`'s `gather_list` (None on the other ranks)."""
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "dst")
    n = pg.size()
    mine = pg.rank() == root
    if mine:
        if gather_list is None:
            raise ValueError("gather: the destination rank needs a gather_list")
        _check_list("gather", gather_list, tensor, n)
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    _check(pg, _sig("gather", tensor, dst=root))
    out = np.empty((n, tensor.numel()), tensor.dtype.np) if mine else None

    def after():
        for t, row in zip(gather_list, out, strict=True):
            _write_back(t, row)
    return _run(pg, "Gather", (_array(tensor), out, root), after if mine else None, async_op,
                "gather", gather_list or [])


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank `src`'s ``scatter_list[i]`` into rank i's `tensor`."""
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "src")
    n = pg.size()
    mine = pg.rank() == root
    if mine:
        if scatter_list is None:
            raise ValueError("scatter: the source rank needs a scatter_list")
        _check_list("scatter", scatter_list, tensor, n)
        send = np.stack([_array(t).reshape(-1) for t in scatter_list])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    else:
        send = None
    _check(pg, _sig("scatter", tensor, src=root))
    out = _array(tensor)
    return _run(pg, "Scatter", (send, out, root), lambda: _write_back(tensor, out), async_op,
                "scatter", [tensor])


def _pairs(sigs, ranks):
    """all_to_all's check: one dtype, and what rank i sends rank j is what j expects from i."""
    for r, sig in enumerate(sigs):
        if sig["op"] != sigs[0]["op"] or sig["dtype"] != sigs[0]["dtype"]:
            return _same([{k: s[k] for k in ("op", "dtype")} for s in sigs], ranks)
        for j, count in enumerate(sig["send"]):
            if count != sigs[j]["recv"][r]:
                return (f"{sig['op']}: rank {ranks[r]} sends {count} elements to rank "
                        f"{ranks[j]}, which expects {sigs[j]['recv'][r]} from it")
    return None


def _all_to_all(pg, what, send, send_counts, recv, recv_counts, dtype, after, async_op, result):
    _check(pg, {"op": what, "dtype": dtype.name, "send": send_counts, "recv": recv_counts},
           _pairs)
    offsets = lambda counts: np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()  # noqa: E731
    args = ([send, (send_counts, offsets(send_counts))],
            [recv, (recv_counts, offsets(recv_counts))])
    return _run(pg, "Alltoallv", args, after, async_op, what, result)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """``input_tensor_list[j]`` of rank i into rank j's ``output_tensor_list[i]`` (sizes may
    differ between pairs)."""
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    for name, lst in (("output", output_tensor_list), ("input", input_tensor_list)):
        if len(lst) != n:
            raise ValueError(f"all_to_all: the {name} list has {len(lst)} tensors, the group "
                             f"{n} ranks")
    _check_dtypes("all_to_all", *output_tensor_list, *input_tensor_list)
    dtype = input_tensor_list[0].dtype
    send = np.concatenate([_array(t).reshape(-1) for t in input_tensor_list])
    recv_counts = [t.numel() for t in output_tensor_list]
    recv = np.empty(sum(recv_counts), dtype.np)

    def after():
        start = 0
        for t, count in zip(output_tensor_list, recv_counts, strict=True):
            _write_back(t, recv[start:start + count])
            start += count
    return _all_to_all(pg, "all_to_all", send, [t.numel() for t in input_tensor_list], recv,
                       recv_counts, dtype, after, async_op, output_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """all_to_all on the dim-0 splits of `input` and `output` (equal splits by default)."""
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    _check_dtypes("all_to_all_single", output, input)

    def counts(t, splits):
        row = t.numel() // t.shape[0] if t.ndim and t.shape[0] else 1
        if splits is None:
            if t.shape[0] % n:
                raise ValueError(f"all_to_all_single: dim 0 ({t.shape[0]}) does not split "
                                 f"evenly into {n} ranks; pass split sizes")
            return [t.numel() // n] * n
        if len(splits) != n or sum(splits) != t.shape[0]:
            raise ValueError(f"all_to_all_single: split sizes {list(splits)} must be {n} "
                             f"numbers summing to dim 0 ({t.shape[0]})")
        return [int(s) * row for s in splits]
    out = _array(output)
    return _all_to_all(pg, "all_to_all_single", _array(input),
                       counts(input, input_split_sizes), out,
                       counts(output, output_split_sizes), input.dtype,
                       lambda: _write_back(output, out), async_op, [output])


def barrier(group=None, async_op=False, device_ids=None):
    pg = _group(group)
    if pg is None:
        return None
    _check(pg, {"op": "barrier"})
    return _run(pg, "Barrier", (), None, async_op, "barrier")


# -- point to point ------------------------------------------------------------------------------
class _Recv(Work):
    """irecv's Work: the metadata message first (so a receive from any source takes its data
    from the same sender), then the data, checked against the tensor."""

    def __init__(self, pg, tensor, src, tag):
        MPI = _mpi()
        self._tensor, self._tag = tensor, tag
        self._meta = bytearray(1024)
        self._array = _array(tensor)
        self._meta_req = pg.p2p.Irecv(self._meta, MPI.ANY_SOURCE if src is None else src, tag)
        self._status, self._data_req, self.source = MPI.Status(), None, None
        peer = "any rank" if src is None else f"group rank {src}"
        super().__init__(pg, [], self._after_data, f"recv from {peer} (tag {tag})")

    def _step(self):
        if self._data_req is None:
            if not self._meta_req.Test(self._status):
                return False
            self.source = self._status.Get_source()
            dtype, shape = pickle.loads(bytes(self._meta))
            t = self._tensor
            if dtype != t.dtype.name or int(np.prod(shape)) != t.numel():
                # take the message all the same, so the pair's later messages still match
                self._array = np.empty(int(np.prod(shape)), np.dtype(dtype))
                self._mismatch = (f"recv: group rank {self.source} sent {dtype} {list(shape)} "
                                  f"but the receiving tensor is {t.dtype.name} {list(t.shape)}")
            self._data_req = self._pg.comm.Irecv(self._array, self.source, self._tag)
        return self._data_req.Test()

    def _after_data(self):
        if getattr(self, "_mismatch", None):
            raise RuntimeError(self._mismatch)
        _write_back(self._tensor, self._array)

    def is_completed(self):
        if not self._done and self._step():
            self._finish()
        return self._done

    def wait(self, timeout=None):
        if self._done:
            return True
        seconds = self._pg.timeout if timeout is None else (
            timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout))
        if not _poll(self._step, time.monotonic() + seconds):
            raise RuntimeError(f"{self._what} did not complete within {seconds:g} s (timeout): "
                               f"the sender died or never sent")
        self._finish()
        return True

    def source_rank(self):
        return self.source


def _peer(pg, rank, group_rank, what):
    if group_rank is not None:
        return group_rank
    if rank is None:
        raise ValueError(f"{what} is required")
    return pg.group_rank(rank, what)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` without waiting: a Work."""
    pg = _group(group)
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "dst")
    meta = pickle.dumps((tensor.dtype.name, tuple(tensor.shape)))
    a = _array(tensor)  # kept alive by the Work until MPI has sent it
    requests = [pg.p2p.Isend(meta, peer, tag), pg.comm.Isend(a, peer, tag)]
    work = Work(pg, requests, None, f"send to group rank {peer} (tag {tag})")
    work._keep = (meta, a)
    return work


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (any rank when None) without waiting: a Work."""
    pg = _group(group)
    if pg is None:
        return None
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "src")
    return _Recv(pg, tensor, peer, tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor`; returns the sender's global rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._pg.ranks[work.source]


# -- Python objects (pickled) ----------------------------------------------------------------------
def all_gather_object(object_list, obj, group=None):
    pg = _group(group)
    if pg is None:
        return
    _check(pg, {"op": "all_gather_object"})
    object_list[:] = pg.comm.allgather(obj)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, src, group_src, "src")
    _check(pg, {"op": "broadcast_object_list", "src": root, "n": len(object_list)})
    object_list[:] = pg.comm.bcast(list(object_list) if pg.rank() == root else None, root)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, dst, group_dst, "dst")
    _check(pg, {"op": "gather_object", "dst": root})
    gathered = pg.comm.gather(obj, root)
    if pg.rank() == root:
        object_gather_list[:] = gathered


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, src, group_src, "src")
    _check(pg, {"op": "scatter_object_list", "src": root})
    mine = pg.comm.scatter(list(scatter_object_input_list) if pg.rank() == root else None, root)
    scatter_object_output_list[0] = mine
