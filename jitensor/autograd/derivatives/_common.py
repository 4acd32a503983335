"""What the rule files share: the registry (`rule`, `RULES`) and the helpers rules are built
from."""
import math

from ... import creation
from ...kernels.registry import backend
from ...ops import elementwise, indexing, shape
from ...tensor import Tensor
from .. import grad_mode
from ..graph import carrying, differentiable, node_class

RULES = {}  # op name -> Node class


def rule(*names, uses_inputs=True, uses_result=True):
    """Register the decorated function as the rule of ops `names`. `uses_*`: whether it reads
    the inputs' or the result's values (those are checked for in-place changes); `uses_inputs`
    may instead be a function of the call's arguments giving the input tensors it reads, and
    `uses_result` a tuple of the numbers of the outputs it reads, or a function of the call's
    arguments giving True, False or such a tuple."""
    def register(fn):
        for name in names:
            RULES[name] = node_class(name, fn, uses_inputs, uses_result)
        return fn
    return register


def _zero(t):
    return creation.zeros_like(t)


def _pass(mask, g):
    """g where mask holds, else 0 -- by selection: g * mask would turn an infinite g into NaN
    where mask is False (torch gives 0 there)."""
    return elementwise.where(mask, g, 0.0)


def _dims(dim, ndim):
    """Reduced dims as a sorted tuple of non-negative ints (None or () -> all)."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(d % ndim if ndim else 0 for d in dims))


def _unreduce(g, input, dim, keepdim):
    """`g` of a reduction over `dim` reshaped so that it broadcasts against `input` again."""
    if keepdim or g.ndim == input.ndim or g.ndim == 0:  # (a 0-d g broadcasts as it is)
        return g
    size = list(input.shape)
    for d in _dims(dim, input.ndim):
        size[d] = 1
    return shape.reshape(g, size)  # (one op, not an unsqueeze per dim: backward is Python-bound)


def _count(input, dim):
    return math.prod(input.shape[d] for d in _dims(dim, input.ndim)) if input.ndim else 1


def _accumulate(input, positions, g):
    """A tensor like `input`: zeros plus g[i] added at flat position positions[i] (repeated
    positions add up, as gradients of repeated indices must)."""
    return _accumulated(input.shape, positions, g)


def _accumulation(shape, positions, g):
    out = creation.zeros(math.prod(shape), dtype=g.dtype, device=g.device)
    backend(g.device).indexing.accumulate(out._data, positions.contiguous().reshape(-1)._data,
                                          g.contiguous().reshape(-1)._data)
    return out.reshape(shape)


@rule("accumulate", uses_inputs=False, uses_result=False)
def _accumulate_rule(gg, result, shape, positions, g):
    return ((g, indexing.take(gg, positions)),)


# recorded when g requires grad (create_graph=True): its own derivative is a gather at the same
# positions
_accumulated = differentiable(_accumulation, RULES["accumulate"])


def _recorded(g, input):
    """Whether a rule composes its gradient from ops (the backward is recorded, or forward AD
    needs the gradient's tangent) rather than running its one kernel."""
    return grad_mode._state.enabled and (g.requires_grad or input.requires_grad) or \
        carrying(g, input)


def _wanted(t):
    """Whether input `t` takes a gradient: products skip the ones nobody asked for (the input
    batch of a first layer, say), as the engine would drop them anyway."""
    return isinstance(t, Tensor) and t.requires_grad


def _other_operands(input, other, **kwargs):
    """The operands a product's gradient reads: each one only where the other needs its
    gradient (torch's), so `z = y * 2; y.add_(1)` leaves z's backward valid."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        return ()
    return ((input,) if other.requires_grad else ()) + ((other,) if input.requires_grad else ())
