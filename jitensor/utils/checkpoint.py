"""`checkpoint` and `checkpoint_sequential` (torch.utils.checkpoint): run a function without
keeping its intermediate results, and run it again in backward to get its gradients.

Both `use_reentrant` forms are one mechanism here: an autograd Function whose backward reruns
the function with grad and backpropagates through the rerun. So gradients reach what the
function closes over (a module's parameters) as `.backward()` accumulates them, as torch's
reentrant form; `autograd.grad` through a checkpoint gives the gradients of its inputs only."""
import contextlib
import warnings

from .. import random
from ..autograd import backward, enable_grad
from ..autograd.function import Function
from ..tensor import Tensor


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _rng_state(args):
    """The CPU generator's state, and each CUDA device's that the tensor arguments are on."""
    cuda = sorted({a.device.index or 0 for a in args
                   if isinstance(a, Tensor) and a.device.type == "cuda"})
    if cuda:
        from .. import cuda as jt_cuda
        return random.get_rng_state(), {d: jt_cuda.get_rng_state(d) for d in cuda}
    return random.get_rng_state(), {}


def _set_rng_state(state):
    random.set_rng_state(state[0])
    if state[1]:
        from .. import cuda as jt_cuda
        for d, s in state[1].items():
            jt_cuda.set_rng_state(s, d)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run, preserve_rng_state, *args):
        ctx.run = run
        ctx.rng = _rng_state(args) if preserve_rng_state else None
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_at])
        return run(*args)

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.others)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors, strict=True):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        now = _rng_state(args) if ctx.rng is not None else None
        try:
            if ctx.rng is not None:  # the rerun draws the forward's random numbers
                _set_rng_state(ctx.rng)
            with enable_grad():
                outputs = ctx.run(*args)
        finally:
            if now is not None:
                _set_rng_state(now)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in args)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, whose intermediate results are computed again in
    backward instead of kept; the random number generators' state at the call is restored
    for the rerun unless `preserve_rng_state` is False."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly; use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if context_fn is not noop_context_fn:
        raise NotImplementedError("checkpoint: context_fn is not supported by jitensor")
    run = function if not kwargs else lambda *a: function(*a, **kwargs)
    if not use_reentrant:
        # the function's parameters may require grad where no input does: a tensor that does
        # makes the Function record, so that backward reaches them
        from ..creation import empty
        anchor = empty(0, requires_grad=True)
        return CheckpointFunction.apply(lambda _, *a: run(*a), preserve_rng_state, anchor, *args)
    return CheckpointFunction.apply(run, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` (a Sequential or a list of modules) on `input` in `segments` parts,
    each but the last under checkpoint."""
    from ..nn import Sequential
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly; use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
