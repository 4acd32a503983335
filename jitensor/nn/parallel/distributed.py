"""torch.nn.parallel.DistributedDataParallel on jitensor.distributed (MPI).

At construction the module's parameters and buffers are broadcast from rank 0. The parameters
are split into buckets (reverse registration order, as gradients tend to become ready;
`bucket_cap_mb` each); each parameter's post-accumulate-grad hook copies its gradient into its
bucket, and a bucket whose gradients are all there starts its all-reduce (MPI, nonblocking; in
bucket order, so every rank issues the same calls). The last hook waits for them all and writes
the averages back into ``.grad``. jitensor's autograd accumulates leaf gradients once the whole
graph has run, so the all-reduces overlap the remaining accumulation and each other, not the
backward computation itself."""
import contextlib

import numpy as np

from ...autograd import is_grad_enabled, no_grad
from ...autograd.graph import AccumulateGrad
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")


def _tensors(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)


def _reached(output):
    """The ids of the leaves `output`'s autograd graph reaches."""
    leaves, seen, stack = set(), set(), []
    for t in _tensors(output):
        if t.grad_fn is None:
            leaves.add(id(t))
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if node in seen:  # (the nodes themselves: next_functions may make stand-ins, whose
            continue      # ids a later one could reuse once they are freed)
        seen.add(node)
        for nxt, _ in node.next_functions:
            if isinstance(nxt, AccumulateGrad):
                leaves.add(id(nxt.variable))
            elif nxt is not None:
                stack.append(nxt)
    return leaves


def _broadcast(pg, tensors):
    """Rank 0's values into every rank's `tensors`, one broadcast per dtype."""
    from ...distributed.distributed_c10d import _array, _write_back
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for group in by_dtype.values():
        flat = np.concatenate([_array(t).reshape(-1) for t in group])
        pg.comm.Bcast(flat, 0)
        start = 0
        with no_grad():
            for t in group:
                _write_back(t, flat[start:start + t.numel()])
                start += t.numel()


def wrap(a, like):
    """A tensor of `like`'s dtype and device holding `a` (`a` itself on the CPU)."""
    from ...creation import from_numpy
    from ...tensor import _wrap
    if like.device.type == "cpu":
        return _wrap(a, like.dtype, like.device)
    return from_numpy(a).to(like.device)


class _Bucket:
    def __init__(self, params):
        self.params = params
        self.offsets = np.cumsum([0] + [p.numel() for p in params]).tolist()
        self.buffer = np.zeros(self.offsets[-1], params[0].dtype.np)
        self.ready, self.request = 0, None

    def view(self, i):
        p = self.params[i]
        return self.buffer[self.offsets[i]:self.offsets[i + 1]].reshape(tuple(p.shape))


class _Reducer:
    """The buckets, and which of this iteration's gradients have arrived."""

    def __init__(self, pg, params, cap_bytes, find_unused, as_view):
        self.pg, self.find_unused, self.as_view = pg, find_unused, as_view
        self.buckets, size = [], None
        for p in reversed(params):
            b = self.buckets[-1] if self.buckets else None
            if b is None or p.dtype != b[0].dtype or p.device != b[0].device or (
                    size + p.numel() * p.element_size() > cap_bytes):
                self.buckets.append([])
                size = 0
            self.buckets[-1].append(p)
            size += p.numel() * p.element_size()
        self.buckets = [_Bucket(ps) for ps in self.buckets]
        self.where = {id(p): (b, i) for b in self.buckets for i, p in enumerate(b.params)}
        self.armed, self.launched, self.marked, self.used = False, 0, set(), set()

    def arm(self, used):
        """A forward with gradient sync ran: expect every parameter's gradient (or, with
        find_unused_parameters, those of `used`; the others are marked ready now)."""
        if self.armed and self.marked:
            raise RuntimeError(_UNFINISHED)
        self.armed, self.launched, self.marked = True, 0, set()
        for b in self.buckets:
            b.ready, b.request = 0, None
        self.used = used
        if used is not None:
            for b in self.buckets:
                for p in b.params:
                    if id(p) not in used:
                        self.ready(p, unused=True)

    def ready(self, p, unused=False):
        if not self.armed or id(p) in self.marked:
            return
        from ...distributed.distributed_c10d import _array
        self.marked.add(id(p))
        b, i = self.where[id(p)]
        view = b.buffer[b.offsets[i]:b.offsets[i + 1]]
        g = p.grad
        if g is None or unused:  # an unused parameter adds nothing, whatever .grad holds
            view[:] = 0
        elif not (g.device.type == "cpu" and g._data.base is b.buffer):  # else it is the view
            view[:] = _array(g).reshape(-1)
        b.ready += 1
        from mpi4py import MPI
        while self.launched < len(self.buckets):  # launch in order, as every rank does
            nxt = self.buckets[self.launched]
            if nxt.ready < len(nxt.params):
                return
            nxt.request = self.pg.comm.Iallreduce(MPI.IN_PLACE, nxt.buffer, MPI.SUM)
            self.launched += 1
        self.finish()

    def finish(self):
        import time

        from ...distributed.distributed_c10d import _poll, _write_back
        requests = [b.request for b in self.buckets]
        from mpi4py import MPI
        if not _poll(lambda: MPI.Request.Testall(requests), time.monotonic() + self.pg.timeout):
            raise RuntimeError(f"DistributedDataParallel: the gradient all-reduce did not complete "
                               f"within {self.pg.timeout:g} s: a rank died, or did not compute a "
                               f"gradient for every parameter ({_UNFINISHED})")
        self.armed, self.marked = False, set()
        n = self.pg.size()
        globally_used = None
        if self.used is not None:  # which parameters some rank used: others keep grad None
            flags = np.array([id(p) in self.used for b in self.buckets for p in b.params])
            self.pg.comm.Allreduce(MPI.IN_PLACE, flags, MPI.LOR)
            globally_used = iter(flags.tolist())
        with no_grad():
            for b in self.buckets:
                b.buffer /= n
                for i, p in enumerate(b.params):
                    if globally_used is not None and not next(globally_used):
                        continue
                    view = b.view(i)
                    if self.as_view and p.device.type == "cpu":
                        if p.grad is None or p.grad._data.base is not b.buffer:
                            p.grad = wrap(view, p)
                    elif p.grad is None:
                        p.grad = wrap(view.copy(), p)
                    else:
                        _write_back(p.grad, view)


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel: the module's parameters and buffers are rank
    0's after construction, and after each backward every parameter's ``.grad`` is the average
    of the ranks' gradients. `no_sync()` skips the averaging (gradients accumulate locally until
    a backward outside it), `find_unused_parameters=True` lets a forward leave parameters out,
    `gradient_as_bucket_view=True` makes the gradients views into the all-reduce buckets (on
    the CPU), `broadcast_buffers` (the default) copies rank 0's buffers at each forward."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        if (delay_all_reduce_named_params is None) != (param_to_hook_all_reduce is None):
            raise ValueError("delay_all_reduce_named_params and param_to_hook_all_reduce need "
                             "to be set at the same time.")
        if process_group and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        from ...distributed.distributed_c10d import _check, _group
        pg = _group(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not in the process group")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.process_group = pg
        self.device_ids = device_ids
        self.broadcast_buffers = broadcast_buffers is None or bool(broadcast_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.dim = dim
        # the same parameters everywhere, or a clear error (torch checks this too)
        _check(pg, {"op": "DistributedDataParallel", "params": [
            (p.dtype.name, tuple(p.shape)) for p in module.parameters()]})
        if init_sync:
            _broadcast(pg, list(module.parameters()) + list(module.buffers()))
        cap = 25 if bucket_cap_mb is None else bucket_cap_mb
        self._reducer = _Reducer(pg, params, cap * 2**20, find_unused_parameters,
                                 gradient_as_bucket_view)
        self._hooks = [p.register_post_accumulate_grad_hook(self._reducer.ready)
                       for p in params]

    def forward(self, *inputs, **kwargs):
        buffers = list(self.module.buffers())
        if self.broadcast_buffers and buffers:
            _broadcast(self.process_group, buffers)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self._reducer.arm(_reached(output) if self.find_unused_parameters else None)
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients locally, without averaging them; the
        first backward after it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
