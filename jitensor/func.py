"""torch.func: the function transforms `grad`, `grad_and_value`, `vjp`, `jvp`, `jacrev`,
`jacfwd`, `hessian`, `linearize` and `vmap`, plus `functional_call` and `stack_module_state`.

torch runs these on functorch's levels (wrapped tensors). jitensor has one autograd tape, so
a transform call instead differentiates fresh leaves it makes for the inputs (a view of an
input that requires grad, so the result stays differentiable for an enclosing transform or the
caller): transforms compose (grad of grad, vmap of grad, jacrev of jacrev), and a result whose
graph reaches nothing but those fresh leaves comes back detached, as torch's does.

Where this differs from torch:
- `vmap` runs the function once on the whole batch by batching rules (batching.py), as
  torch's; where a rule is missing that op runs once per element. What the batched run
  cannot do, it hands to a run of the function per element whose outputs are stacked, so it
  accepts what torch's vmap rejects (`.item()`, data-dependent control flow, an in-place write
  of a mapped value into an unmapped tensor: each element writes in turn) at a Python call per
  element; random draws stay batched with randomness="different" where each element draws
  its own. Random draws are noticed through the default
  generator's state (a draw with an explicit `generator=` is not seen).
- `jvp` (and `linearize`) run in forward mode (autograd/forward_ad.py), which has one level:
  a `jvp` called within another (or within a `dual_level`) differentiates the vector-Jacobian
  product with respect to its vector instead (double backward). `jacfwd` computes the Jacobian
  in reverse mode, which gives the same matrix.
"""
import contextlib
import functools
import weakref
from collections import OrderedDict
from collections.abc import Sequence

from . import autograd, batching
from .autograd import forward_ad
from .autograd.grad_mode import enable_grad, is_grad_enabled
from .batching import BatchedTensor
from .nn.utils.stateless import _functional_call
from .ops.shape import cat, stack
from .random import default_generator
from .tensor import Tensor

_TENSORS = (Tensor, BatchedTensor)

__all__ = ["debug_unwrap", "functional_call", "functionalize", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "replace_all_batch_norm_modules_",
           "stack_module_state", "vjp", "vmap"]


# -- pytrees: tuples, lists, dicts and namedtuples of leaves, as torch.utils._pytree ----------
class _Spec:
    """The structure of a pytree: a leaf (`kind` None) or a container with its children's."""
    __slots__ = ("kind", "keys", "children", "num_leaves")

    def __init__(self, kind=None, keys=None, children=()):
        self.kind, self.keys, self.children = kind, keys, children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def __eq__(self, other):
        return isinstance(other, _Spec) and (self.kind, self.keys, self.children) == \
            (other.kind, other.keys, other.children)

    def __repr__(self):
        if self.kind is None:
            return "*"
        children = ", ".join(map(repr, self.children))
        return f"TreeSpec({self.kind.__name__}, {self.keys}, [{children}])"


_LEAF = _Spec()


def _is_node(x):
    return type(x) in (tuple, list, dict, OrderedDict) or \
        (isinstance(x, tuple) and hasattr(type(x), "_fields"))


def _flatten(x, leaves):
    kind = type(x)
    if kind is dict or kind is OrderedDict:
        keys = list(x)
        return _Spec(kind, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if _is_node(x):
        return _Spec(kind, None, tuple(_flatten(c, leaves) for c in x))
    leaves.append(x)
    return _LEAF


def tree_flatten(tree):
    leaves = []
    return leaves, _flatten(tree, leaves)


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s.kind is None:
            return next(it)
        children = [build(c) for c in s.children]
        if s.keys is not None:
            return s.kind(zip(s.keys, children, strict=True))
        return s.kind(*children) if hasattr(s.kind, "_fields") else s.kind(children)
    return build(spec)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def _broadcast_to_and_flatten(prefix, spec):
    """The leaves of `prefix` (in_dims, out_dims), each repeated over the subtree of `spec` it
    stands for; None where `prefix` is not a prefix of `spec`."""
    if not _is_node(prefix):
        return [prefix] * spec.num_leaves
    if type(prefix) is not spec.kind:
        return None
    if spec.keys is not None:
        if set(prefix) != set(spec.keys):
            return None
        items = [prefix[k] for k in spec.keys]
    elif len(prefix) != len(spec.children):
        return None
    else:
        items = list(prefix)
    flat = []
    for item, child in zip(items, spec.children, strict=True):
        sub = _broadcast_to_and_flatten(item, child)
        if sub is None:
            return None
        flat += sub
    return flat


# -- argnums, as torch checks them ------------------------------------------------------------
def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _argnums(argnums, num_args):
    """`argnums` checked and made non-negative."""
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wrapped = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def _slice_argnums(args, argnums, as_tuple=True):
    argnums = _argnums(argnums, len(args))
    if isinstance(argnums, int):
        return (args[argnums],) if as_tuple else args[argnums]
    return tuple(args[i] for i in argnums)


# -- differentiating on fresh leaves ----------------------------------------------------------
def _detached(t):
    """t.detach(), keeping a forward AD tangent (within jvp, a transform inside still passes
    tangents on, as torch's levels do)."""
    d = t.detach()
    tangent = forward_ad.tangent_of(t)
    if tangent is not None:
        forward_ad._set_tangent(d, tangent)
    return d



class _Leaves:
    """The fresh leaves of one transform call."""

    def __init__(self, keep):
        # keep: whether results may stay differentiable for the caller (grad mode was on; a
        # transform ignores an enclosing no_grad inside the function, not outside it)
        self.keep, self.own = keep, set()

    def make(self, x):
        if isinstance(x, BatchedTensor):  # (within vmap's batched run)
            v = x.value
            leaf = v.view_as(v) if self.keep and v.requires_grad else \
                _detached(v).requires_grad_(True)
            self.own.add(id(leaf))
            return BatchedTensor(leaf, x.level)
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        here = batching.current()
        if here is not None:
            # within vmap's batched run, a tensor every element shares: each element
            # differentiates a copy of its own (per-sample gradients)
            level, size = here
            leaf = _detached(x).unsqueeze(0).expand(size, *x.shape).requires_grad_(True)
            self.own.add(id(leaf))
            return BatchedTensor(leaf, level)
        if self.keep and x.requires_grad:
            return x.view_as(x)  # differentiable in the caller's graph, and its own node here
        leaf = _detached(x).requires_grad_(True)
        self.own.add(id(leaf))
        return leaf

    def outside(self, tensors):
        """Whether the graph of any of `tensors` reaches a tensor requiring grad that this
        call did not make: the caller's, or an enclosing transform's."""
        seen, nodes = set(), []
        for t in tensors:
            t = t.value if isinstance(t, BatchedTensor) else t
            if isinstance(t, Tensor) and t.requires_grad:
                fn = t._meta.grad_fn
                if fn is None:
                    if id(t) not in self.own:
                        return True
                else:
                    nodes.append(fn)
        while nodes:
            node = nodes.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            for e in node.edges.values():
                if isinstance(e, tuple):
                    nodes.append(e[0])
                elif id(e) not in self.own:
                    return True
        return False

    def release(self, tree):
        """`tree` as the caller sees it: tensors detached unless their graph leads outside."""
        def one(t):
            if isinstance(t, BatchedTensor):
                return BatchedTensor(one(t.value), t.level)
            if isinstance(t, Tensor) and t.requires_grad and \
                    not (self.keep and self.outside((t,))):
                return _detached(t)
            return t
        return tree_map(one, tree)

    def grads(self, outputs, inputs, cotangents=None, create_graph=None, retain_graph=None,
              outputs_outside=None):
        """autograd.grad of `outputs` (those that require grad) w.r.t. `inputs`, zeros for
        inputs they do not reach. create_graph=None builds the gradients' graph only where
        something outside this call can differentiate them (else `release` would detach
        them: the same results, without the cost)."""
        cotangents = [None] * len(outputs) if cotangents is None else list(cotangents)
        live = [(o, c) for o, c in zip(outputs, cotangents, strict=True) if o.requires_grad]
        if not live:
            return tuple(x.new_zeros(x.shape) for x in inputs)
        outs = [o for o, _ in live]
        if outputs_outside is None:
            outputs_outside = self.outside(outs)
        create = create_graph
        if create is None:
            create = self.keep and (outputs_outside or any(
                isinstance(c, _TENSORS) and c.requires_grad for _, c in live))
        cots = None if cotangents[0] is None else [c for _, c in live]
        found = autograd.grad(outs, inputs, cots, retain_graph=retain_graph,
                              create_graph=create, allow_unused=True)
        return tuple(x.new_zeros(x.shape) if g is None else g
                     for g, x in zip(found, inputs, strict=True))


def _check_aux(output, api):
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return output


def _tensor_outputs(flat, api):
    if not flat or (len(flat) == 1 and flat[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           f"(got output = {flat})")
    for o in flat:
        if not isinstance(o, _TENSORS):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")


def _differentiable_args(args, argnums, leaves):
    """(args with the differentiated ones replaced by fresh leaves, those leaves' pytree)."""
    if argnums is None:
        diff = tree_map(leaves.make, args)
        return diff, diff
    argnums = _argnums(argnums, len(args))
    positions = (argnums,) if isinstance(argnums, int) else argnums
    args = list(args)
    for i in positions:
        args[i] = tree_map(leaves.make, args[i])
    diff = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    return tuple(args), diff


# -- grad, vjp, jvp ----------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (the gradient of `func`'s scalar output with respect to the
    arguments `argnums`, that output); with `has_aux`, `func` returns (output, aux) and the
    second item is (output, aux)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        api = "grad_and_value(f)(*args)"
        leaves = _Leaves(is_grad_enabled())
        with enable_grad():
            args, diff = _differentiable_args(args, argnums, leaves)
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                output, aux = _check_aux(output, api)
            if not isinstance(output, _TENSORS):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use "
                                   f"the vjp or jacrev APIs instead?")
            flat_diff, spec = tree_flatten(diff)
            grads = leaves.grads([output], flat_diff)
        grads = leaves.release(tree_unflatten(list(grads), spec))
        output = leaves.release(output)
        if has_aux:
            return grads, (output, leaves.release(aux))
        return grads, output
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of `func`'s scalar output with respect to the
    arguments `argnums` (an int: that argument's pytree; a tuple: a tuple of them); with
    `has_aux`, `func` returns (output, aux) and this returns (gradient, aux)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def _vjp(func, primals, argnums, has_aux):
    api = "vjp(f, *primals)"
    leaves = _Leaves(is_grad_enabled())
    with enable_grad():
        args, diff = _differentiable_args(primals, argnums, leaves)
        output = func(*args)
        aux = None
        if has_aux:
            output, aux = _check_aux(output, api)
        flat_out, out_spec = tree_flatten(output)
        _tensor_outputs(flat_out, api)
        for o in flat_out:
            if not (o.is_floating_point() or o.is_complex()):
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")
        flat_diff, diff_spec = tree_flatten(diff)
    outputs_outside = leaves.outside(flat_out)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{ct_spec}, primal output: {out_spec}")
        grads = leaves.grads(flat_out, flat_diff, flat_ct, None if create_graph else False,
                             retain_graph, outputs_outside)
        return leaves.release(tree_unflatten(list(grads), diff_spec))

    if has_aux:
        return leaves.release(output), vjp_fn, leaves.release(aux)
    return leaves.release(output), vjp_fn


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives, for each primal, the
    vector-Jacobian product with `cotangents` (a pytree like func's output)."""
    return _vjp(func, primals, None, has_aux)


_JVP = "jvp(f, primals, tangents)"
_JVP_STRICT = ("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
               "inputs. This is not allowed with strict=True.")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with `tangents`[, aux]): `tangents` has the
    structure of `primals`. In forward mode, or by double backward within another forward-mode
    call (see the module's docstring)."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to "
                           f"call f(*primals).")
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {primals_spec} "
                           f"and tangents with structure {tangents_spec}")
    for flat, name in ((flat_primals, "primals"), (flat_tangents, "tangents")):
        if not flat:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for t in flat:
            if not isinstance(t, _TENSORS):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got "
                                   f"{type(t)}")
    for p, t in zip(flat_primals, flat_tangents, strict=True):
        forward_ad.check_size(p, t)
    if not forward_ad.active[0]:
        return _forward_jvp(func, flat_primals, flat_tangents, primals_spec, strict, has_aux)
    leaves = _Leaves(is_grad_enabled())
    with enable_grad():
        flat_diff = [leaves.make(p) for p in flat_primals]
        output = func(*tree_unflatten(flat_diff, primals_spec))
        aux = None
        if has_aux:
            output, aux = _check_aux(output, _JVP)
        flat_out, out_spec = tree_flatten(output)
        _tensor_outputs(flat_out, _JVP)
        live = [o for o in flat_out if o.requires_grad]
        if strict and len(live) < len(flat_out):
            raise RuntimeError(_JVP_STRICT)
        # J v = d(J^T u)/du . v, for a dummy u per output
        dummies = [leaves.make(o.new_zeros(o.shape)) for o in live]
        vjps = leaves.grads(live, flat_diff, dummies, create_graph=True, retain_graph=True)
        pairs = [(g, t) for g, t in zip(vjps, flat_tangents, strict=True) if g.requires_grad]
        found = leaves.grads([g for g, _ in pairs], dummies, [t for _, t in pairs],
                             outputs_outside=leaves.outside(flat_out))
        by_output = dict(zip(map(id, live), found, strict=True))
        flat_jvp = [by_output[id(o)] if id(o) in by_output else o.new_zeros(o.shape)
                    for o in flat_out]
    out = leaves.release(output)
    tangents_out = leaves.release(tree_unflatten(flat_jvp, out_spec))
    if has_aux:
        return out, tangents_out, leaves.release(aux)
    return out, tangents_out


def _forward_jvp(func, flat_primals, flat_tangents, primals_spec, strict, has_aux):
    """jvp in forward mode (autograd/forward_ad.py): func runs once on dual inputs."""
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents,
                                                                strict=True)]
        output = func(*tree_unflatten(duals, primals_spec))
        aux = None
        if has_aux:
            output, aux = _check_aux(output, _JVP)
        flat_out, out_spec = tree_flatten(output)
        _tensor_outputs(flat_out, _JVP)
        pairs = [forward_ad.unpack_dual(o) for o in flat_out]
    if strict and any(t is None for _, t in pairs):
        raise RuntimeError(_JVP_STRICT)
    out = tree_unflatten([p for p, _ in pairs], out_spec)
    tangents = tree_unflatten([o.new_zeros(o.shape) if t is None else t
                               for o, (_, t) in zip(flat_out, pairs, strict=True)], out_spec)
    return (out, tangents, aux) if has_aux else (out, tangents)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at
    `primals`. torch traces the linearized function once; this runs `jvp` at each call."""
    output = func(*primals)
    flat_primals, primals_spec = tree_flatten(primals)

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec} to have the same argspec "
                               f"as the primals {primals_spec}")
        for i, (p, t) in enumerate(zip(flat_primals, flat_tangents, strict=True)):
            for what in ("shape", "device", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(f"tangent:{i} with {what} {getattr(t, what)} in "
                                       f"flattened pytree doesn't match the {what} "
                                       f"{getattr(p, what)} of the corresponding primal.")
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


# -- Jacobians ---------------------------------------------------------------------------------
def _error_if_complex(api, tree, is_input):
    for i, t in enumerate(tree_flatten(tree)[0]):
        if isinstance(t, Tensor) and t.is_complex():
            raise RuntimeError(f"{api}: Expected all {'inputs' if is_input else 'outputs'} to "
                               f"be real but received complex tensor at flattened input idx: "
                               f"{i}")


def _jacobian(api, func, argnums, has_aux, args, chunk_size=None):
    """The Jacobian of `func` at `args` with respect to `argnums`, in reverse mode: one
    vector-Jacobian product per output element (vmap over the standard basis, as torch),
    `chunk_size` rows at a time."""
    _error_if_complex(api, args, True)
    before = _rng()
    out = _vjp(func, args, argnums, has_aux)
    output, vjp_fn = out[:2]
    if _rng() == before:
        # the rows in one batched pass: vmap runs func again on the inputs expanded once per
        # row, and one backward pass takes every row's cotangent (a random func keeps its one
        # draw: one backward pass per row)
        def vjp_fn(cotangents):
            return _vjp(func, args, argnums, has_aux)[1](cotangents)
    flat_out, out_spec = tree_flatten(output)
    _error_if_complex(api, flat_out, False)
    flat_primals, primals_spec = tree_flatten(_slice_argnums(args, argnums))
    numels = [o.numel() for o in flat_out]
    total = sum(numels)
    if total:
        basis, start = [], 0
        for o, n in zip(flat_out, numels, strict=True):
            b = o.new_zeros(total, n)
            b.diagonal(-start).fill_(1)
            basis.append(b.reshape((total,) + tuple(o.shape)))
            start += n
        rows = tree_flatten(vmap(vjp_fn, chunk_size=chunk_size)(
            tree_unflatten(basis, out_spec)))[0]
    else:
        rows = [p.new_zeros((0,) + tuple(p.shape)) for p in flat_primals]
    per_output = []
    for i, o in enumerate(flat_out):
        lo = sum(numels[:i])
        per_output.append(tree_unflatten(
            [r[lo:lo + numels[i]].reshape(tuple(o.shape) + tuple(p.shape))
             for r, p in zip(rows, flat_primals, strict=True)], primals_spec))
    if isinstance(argnums, int):
        per_output = [j[0] for j in per_output]
    result = tree_unflatten(per_output, out_spec)
    return (result, out[2]) if has_aux else result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of `func` with respect to the arguments `argnums`:
    for each output, per differentiated argument, a tensor of shape output.shape +
    argument.shape. The rows are computed `chunk_size` at a time (all at once by default:
    memory for that many copies of func's intermediates)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        return _jacobian("jacrev", func, argnums, has_aux, args, chunk_size)
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """`jacrev`'s Jacobian (computed in reverse mode, which gives the same matrix), with
    torch's jacfwd's checks: `randomness="error"` refuses a function that draws random
    numbers, as torch's vmap over the basis does."""
    @functools.wraps(func)
    def wrapper(*args):
        _check_randomness(randomness)
        before = _rng()
        result = _jacobian("jacfwd", func, argnums, has_aux, args)
        if randomness == "error" and _rng() != before:
            raise RuntimeError(_RANDOM_ERROR)
        return result
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of `func`'s scalar output: jacfwd(jacrev(func, argnums), argnums)."""
    return jacfwd(jacrev(func, argnums), argnums)


# -- vmap ----------------------------------------------------------------------------------------
_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                 "use the 'same' or 'different' randomness flags on vmap or perform the "
                 "randomness operation out of vmap")


def _rng():
    # every random op of jitensor draws from this one generator (all devices): a draw moves it
    return default_generator._seed, default_generator._offset


def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def _name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _batched_inputs(func, in_dims, args):
    """(batch size, in_dims per leaf of args, the leaves, their spec), checked as torch."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         f"to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast_to_and_flatten(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         f"compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
    for i, (arg, dim) in enumerate(zip(flat_args, flat_dims, strict=True)):
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool)):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but in_dim must be either "
                             f"an integer dimension or None.")
        if dim is not None and not isinstance(arg, Tensor):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        if dim is not None and not -arg.dim() <= dim < arg.dim():
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a "
                             f"Tensor of dimensionality {arg.dim()} so expected in_dim to "
                             f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if dim is not None and dim < 0:
            flat_dims[i] = dim % arg.dim()
    sizes = [a.shape[d] for a, d in zip(flat_args, flat_dims, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _check_out_dims(func, out_dims):
    for d in tree_flatten(out_dims)[0]:
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must "
                             f"be an int, None or a python collection of ints representing "
                             f"where in the outputs the vmapped dimension should appear.")


def _same_everywhere(values):
    first = values[0]
    return all(v is first or (v.shape == first.shape and v.dtype == first.dtype and
                              bool((v == first).all())) for v in values[1:])


def _flat_out_dims(func, out_dims, output, spec):
    """`out_dims` for each leaf of `output` (whose pytree spec is `spec`), checked as torch."""
    if isinstance(output, _TENSORS):
        flat_dims = [out_dims] if isinstance(out_dims, int) or out_dims is None else \
            list(out_dims) if isinstance(out_dims, tuple) and len(out_dims) == 1 else None
    else:
        flat_dims = _broadcast_to_and_flatten(out_dims, spec)
    if flat_dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                         f"is not compatible with the structure of `outputs`. out_dims has "
                         f"structure {tree_flatten(out_dims)[1]} but outputs has structure "
                         f"{spec}.")
    return flat_dims


def _stack_outputs(func, out_dims, results):
    """The per-element outputs `results` as torch's vmap returns them."""
    name = _name(func)
    flat0, spec = tree_flatten(results[0])
    columns = [[] for _ in flat0]
    for r in results:
        flat, s = tree_flatten(r)
        if s != spec:
            raise RuntimeError(f"vmap({name}): the function returned outputs of different "
                               f"structures for different batch elements ({spec} and {s}); "
                               f"vmap needs one structure")
        for column, x in zip(columns, flat, strict=True):
            column.append(x)
    flat_dims = _flat_out_dims(func, out_dims, results[0], spec)
    flat = []
    for column, dim in zip(columns, flat_dims, strict=True):
        if dim is None:
            # torch returns an output that does not depend on the mapped inputs as it is; the
            # loop sees that as the same value from every element
            if isinstance(column[0], Tensor) and not _same_everywhere(column):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 f"when out_dim is None")
            flat.append(column[0])
        elif not isinstance(column[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(column[0])}. Did you mean to set out_dims= to None for "
                             f"output?")
        else:
            flat.append(stack(column, dim))
    return tree_unflatten(flat, spec)


# the functions whose batched run could not go on: vmap runs them per element from the start
_per_element_only = weakref.WeakKeyDictionary()


def _batched_run(func, out_dims, size, flat_dims, flat_args, spec, kwargs, randomness):
    """func run once on the whole batch (batching.py), its outputs as vmap returns them; None
    where the batched run cannot go on (the caller then runs func per element). Random
    draws are allowed with randomness="different" where each element draws its own (a batched
    op's, or a draw made once per element); any other draw hands func to the per-element run,
    whose checks decide."""
    try:
        if _per_element_only.get(func):
            return None
    except TypeError:  # (not weakly referenceable)
        pass
    batching.install()
    state = default_generator.get_state()
    level = batching.enter(size, randomness == "different")
    try:
        leaves = [a if d is None else BatchedTensor(a.movedim(d, 0) if d else a, level)
                  for a, d in zip(flat_args, flat_dims, strict=True)]
        (before, dispatched), seed = batching.draws(), _rng()[0]
        output = batching.form_of(func)(*tree_unflatten(leaves, spec), **kwargs)
        after, now = batching.draws()
        if (after - before != now - dispatched or randomness != "different" and after != before
                or _rng()[0] != seed):
            raise batching.Unbatchable("a random draw")  # (the per-element run's to judge)
    except Exception:  # (Unbatchable, or an op that refused a BatchedTensor)
        default_generator.set_state(state)
        with contextlib.suppress(TypeError):
            _per_element_only[func] = True
        return None
    finally:
        batching.leave()
    return _batched_outputs(func, out_dims, output, level, size)


def _batched_outputs(func, out_dims, output, level, size):
    """The batched run's `output` as vmap returns it: the batch dim of each at `out_dims`."""
    name = _name(func)
    flat, spec = tree_flatten(output)
    flat_dims = _flat_out_dims(func, out_dims, output, spec)
    out = []
    for x, dim in zip(flat, flat_dims, strict=True):
        batched = isinstance(x, BatchedTensor) and x.level == level
        if dim is None:
            if batched:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 f"when out_dim is None")
            out.append(x)
        elif not isinstance(x, _TENSORS):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(x)}. Did you mean to set out_dims= to None for output?")
        else:
            v = x.value if batched else x.unsqueeze(0).expand(size, *x.shape)
            out.append(v.movedim(0, dim) if dim else v)
    return tree_unflatten(out, spec)


def _chunked(run, func, out_dims, chunk_size, size, flat_dims, flat_args, spec, kwargs):
    """`run` (the vmapped func) on `chunk_size` elements at a time, its outputs concatenated
    along their out_dims (an unmapped output: the first chunk's)."""
    parts = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        leaves = [a if d is None else a.narrow(d, start, n)
                  for a, d in zip(flat_args, flat_dims, strict=True)]
        parts.append(run(*tree_unflatten(leaves, spec), **kwargs))
    flat0, out_spec = tree_flatten(parts[0])
    dims = _flat_out_dims(func, out_dims, parts[0], out_spec)
    columns = zip(*(tree_flatten(p)[0] for p in parts), strict=True)
    return tree_unflatten([column[0] if d is None else cat(column, d)
                           for column, d in zip(columns, dims, strict=True)], out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``vmap(func)`` maps `func` over dimension `in_dims` of its inputs (an int, or a pytree
    like the positional arguments with an int or None per input) and puts the mapped
    dimension at `out_dims` of its outputs. `func` runs once on the whole batch, each op by its
    batching rule (batching.py); where that cannot go on (a Python value read from a mapped
    tensor, a random draw the batch cannot see, an op that refuses a batched tensor) it runs
    once per batch element instead and the outputs are stacked. `randomness`: "error" raises if
    `func` draws random numbers, "different" draws for each element (a batched op draws for the
    whole batch at once), "same" draws once (per element, the generator rewound before each).
    `chunk_size`: at most that many elements at once (the batch is split and the outputs
    concatenated: memory for fewer copies of func's intermediates)."""
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(func, out_dims)
        size, flat_dims, flat_args, spec = _batched_inputs(func, in_dims, args)
        if size == 0:
            raise NotImplementedError("jitensor.func.vmap: a mapped dimension of size 0 (vmap "
                                      "runs the function per element, so it has no output to "
                                      "take shapes from)")
        if chunk_size is not None and size > chunk_size:
            return _chunked(wrapped, func, out_dims, chunk_size, size, flat_dims, flat_args,
                            spec, kwargs)
        if randomness != "same":
            result = _batched_run(func, out_dims, size, flat_dims, flat_args, spec, kwargs,
                                  randomness)
            if result is not None:
                return result
        slices = [None if d is None else a.unbind(d)
                  for a, d in zip(flat_args, flat_dims, strict=True)]
        start = default_generator.get_state() if randomness == "same" else None
        results = []
        for b in range(size):
            if start is not None:
                default_generator.set_state(start)
            before = _rng()
            leaves = [a if s is None else s[b] for a, s in zip(flat_args, slices, strict=True)]
            results.append(func(*tree_unflatten(leaves, spec), **kwargs))
            if randomness == "error" and _rng() != before:
                raise RuntimeError(_RANDOM_ERROR)
        return _stack_outputs(func, out_dims, results)
    return wrapped


# -- modules -------------------------------------------------------------------------------------
def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with its parameters and buffers replaced, for this call, by
    the tensors of `parameter_and_buffer_dicts` (a dict of dotted names, or a sequence of such
    dicts, no name in two of them); see nn.utils.stateless.functional_call."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, values, args, kwargs, tie_weights=tie_weights,
                            strict=strict)


def stack_module_state(models):
    """(params, buffers): dicts of each name's tensors of `models` stacked along a new first
    dimension (parameters as fresh leaves), for vmap over an ensemble with functional_call."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        tables = [dict(named(m)) for m in models]
        result = {}
        for k in tables[0]:
            tensors = [t[k] for t in tables]
            wants = [t.requires_grad for t in tensors]
            if any(wants) and not all(wants):
                raise RuntimeError(f"Expected {k} from each model to have the same "
                                   f".requires_grad")
            s = stack(tensors)
            result[k] = s.detach().requires_grad_() if all(wants) else s
        return result
    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())


# -- functorch's helpers -------------------------------------------------------------------------
_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func, *, remove="mutations"):
    """`func` itself: functionalizing rewrites a traced program's in-place ops out of place
    with the same results (inputs mutated at the end), and jitensor runs `func` eagerly."""
    if remove not in _REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n     remove='mutations': all inplace and "
            f"out= operators will be removed from the program, and replaced with their "
            f"out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            f"above, all aliasing operators {{view}} will be replaced with their non-aliasing "
            f"counterparts, {{view}}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)
    return functionalized


def debug_unwrap(tensor, *, recurse=True):
    """The tensor inside vmap's BatchedTensor (all of its levels with `recurse`); a plain
    tensor as it is."""
    while isinstance(tensor, batching.BatchedTensor):
        tensor = tensor.value
        if not recurse:
            break
    return tensor


def replace_all_batch_norm_modules_(root):
    """Make every batch norm module of `root` stop tracking running statistics (running mean
    and variance None), as vmap over a batch norm needs; returns root."""
    from .nn.modules.batchnorm import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
