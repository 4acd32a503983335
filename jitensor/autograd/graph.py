"""The recorded graph and the engine that walks it backwards.

An op that runs with grad enabled and an input that requires grad is recorded as one `Node`:
its derivative rule, the call's own arguments and result, and `edges`, which say where the
gradient of each input tensor goes -- the node (and output number) that made it, or the leaf
itself. A rule is a function `rule(grad, result, *args, **kwargs)` called with the op's own
arguments and returning `(input, gradient)` pairs; the engine sums each gradient back to its
input's shape (broadcasting) and dtype, so rules are written as if nothing broadcast.
"""
import functools
import threading
import weakref

from ..tensor import Tensor, _AutogradMeta, _new, contiguous_format
from . import anomaly_mode, grad_mode
from .versions import counter, storage


class Node:
    """One recorded op. Its class is named after the op (`AddBackward0`) as torch names its
    nodes; `rule`, `uses_inputs` and `uses_result` are class attributes of that class."""

    # result: the outputs as detached aliases (a strong reference to the outputs themselves
    # would make a cycle output -> grad_fn -> output, freed only by the garbage collector);
    # versions: (storage counter, its count when saved) of saved inputs and outputs;
    # retained: output number -> meta of outputs that retain_grad(); taken: of a view sharing
    # its input's memory, (that storage's counter, its count when the view was taken), else None
    # hooks: output number -> {handle id: hook} of its tensor's register_hook, or None
    __slots__ = ("args", "kwargs", "result", "edges", "n_outputs", "versions", "retained",
                 "taken", "hooks", "__weakref__")
    rule = None
    uses_inputs = uses_result = True
    op = None  # the op's name (node_class)
    tangent = None  # how forward AD computes the op's tangents (forward_ad.py; None: not yet known)
    is_view = False  # (view ops: `forward` is the op, to take the view again)

    def name(self):
        return type(torch_named(self)).__name__

    @property
    def next_functions(self):
        """(node, output number) for each tensor input, in order: its grad_fn, a leaf's
        AccumulateGrad, or None where it needs no gradient."""
        found = []
        for a in self.args + tuple(self.kwargs.values()):
            for t in a if a.__class__ is list or a.__class__ is tuple else (a,):
                if isinstance(t, Tensor):
                    edge = self.edges.get(id(t))
                    found.append((None, 0) if edge is None else
                                 (torch_named(edge[0]), edge[1]) if edge.__class__ is tuple
                                 else (accumulator(edge), 0))
        order = node_names.NEXT.get(type(self).op)
        return tuple(found) if order is None else order(self, found)

    def __repr__(self):
        return f"<{type(torch_named(self)).__name__} object at {id(self):#x}>"


class AccumulateGrad:
    """The node that adds a leaf's gradient into its `.grad`, as torch names it in
    `next_functions`: one per leaf (`accumulator`), `variable` being the leaf."""

    __slots__ = ("variable", "__weakref__")
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


def accumulator(leaf):
    """The AccumulateGrad node of a leaf that requires grad: one while it is held anywhere.
    (The leaf's meta refers to it weakly, as torch's tensor does: the node refers to the leaf.)"""
    meta = leaf._meta
    kept = getattr(meta, "accumulator", None)
    node = None if kept is None else kept()
    if node is None:
        node = AccumulateGrad(leaf)
        meta.accumulator = weakref.ref(node)
    return node


def node_class(name, rule, uses_inputs=True, uses_result=True):
    camel = "".join(part.capitalize() for part in name.strip("_").split("_"))
    return type(f"{camel}Backward0", (Node,), {"__slots__": (), "rule": staticmethod(rule),
                                               "uses_inputs": uses_inputs,
                                               "uses_result": uses_result, "op": name})


_renamed = {}  # (node class, torch's name) -> its subclass of that name


def torch_named(node):
    """`node`, its class switched (once) to a subclass named as torch names the node of this
    call, where torch's name differs from the op's (node_names.py): `x.sum(1)`'s node is
    SumBackward1, `x[0]`'s SelectBackward0. Done where a node is shown, not when it is recorded
    (on the path of every op); a node freed by backward keeps its name."""
    pick = node_names.PICKS.get(type(node).__dict__.get("op"))
    if pick is None or node.args is None:
        return node
    name = pick(*node.args, **node.kwargs) if callable(pick) else pick
    cls = type(node)
    if name is not None and name != cls.__name__:
        sub = _renamed.get((cls, name))
        if sub is None:
            sub = _renamed[cls, name] = type(name, (cls,), {"__slots__": ()})
        node.__class__ = sub
    return node


# -- recording ----------------------------------------------------------------------------------
_grad = grad_mode._state  # the calling thread's grad mode
dual = [False]  # whether a forward AD level is entered (forward_ad.py)


fusion = [None]  # while a compiled call runs: jitensor.fusion.defer


def differentiable(fn, cls):
    """`fn` recording itself as a `cls` node when grad mode is on and an input requires grad,
    and giving its outputs tangents when an input carries one (forward AD)."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if fusion[0] is not None:  # inside jitensor.compile: maybe a lazy tensor instead
            lazy = fusion[0](op, cls, args, kwargs)
            if lazy is not None:
                return lazy
        if dual[0] and forward_ad.carries(args, kwargs):
            return forward_ad.run(op, cls, fn, args, kwargs)
        if _grad.enabled and needs_grad(args, kwargs):
            return record(cls, fn, args, kwargs)
        return fn(*args, **kwargs)
    op.node_class = cls
    return op


class _Composed:
    """What a `composite` node keeps: the function, the call, its result computed from
    detached inputs (with the graph of its ops) and (input, detached input) pairs."""
    __slots__ = ("fn", "args", "kwargs", "out", "pairs")


def composite(name):
    """Decorator: a function composed of recorded ops, recorded as one node named as torch's
    fused op (`composite("mse_loss")`: MseLossBackward0), whose next_functions are the
    function's tensor arguments, as torch shows them. Its ops run on detached inputs and its
    backward is theirs (`run` on that inner graph); under create_graph it composes them again
    from the inputs, so that higher derivatives reach them."""
    # (reads no input itself, but uses_inputs so that backward frees it, as torch its node)
    cls = node_class(name, _composed_rule, uses_inputs=lambda state, *inputs: (),
                     uses_result=False)

    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if not _grad.enabled or dual[0] or not needs_grad(args, kwargs):
                return fn(*args, **kwargs)
            state = _Composed()
            state.fn, state.args, state.kwargs, state.pairs = fn, args, kwargs, []

            def detached(a):
                if _requires(a) and a.__class__ is Tensor:
                    d = a.detach().requires_grad_()
                    state.pairs.append((a, d))
                    return d
                return a
            state.out = fn(*map(detached, args), **{k: detached(v) for k, v in kwargs.items()})
            if state.out.__class__ is not Tensor:  # (a subclass's result: composed, as it is)
                return fn(*args, **kwargs)
            if not state.pairs or state.out.grad_fn is None:  # (what needs grad was not
                return state.out  # detached: its graph is whole; or nothing to differentiate)
            return record(cls, _composed_result, (state, *(a for a, _ in state.pairs)), {})
        return op
    return wrap


def _composed_result(state, *inputs):
    return _alias(state.out)


def _composed_rule(g, result, state, *inputs):
    if grad_mode._state.enabled:  # create_graph: the gradient as a function of the inputs
        from . import grad
        out = state.fn(*state.args, **state.kwargs)
        return list(zip(inputs, grad(out, inputs, g, allow_unused=True, create_graph=True),
                        strict=True))
    found = {id(d): None for _, d in state.pairs}
    run([((state.out._meta.grad_fn, state.out._meta.output_nr), g)], True, capture=found)
    return [(a, found[id(d)]) for a, d in state.pairs]


def _requires(t):
    return isinstance(t, Tensor) and t._meta is not None and t._meta.requires_grad


def needs_grad(args, kwargs):
    """Whether a call with these arguments must be recorded (grad mode is checked by callers)."""
    for a in args:
        if isinstance(a, Tensor):
            if a._meta is not None and a._meta.requires_grad:
                return True
        elif a.__class__ is list or a.__class__ is tuple:
            for b in a:
                if _requires(b):
                    return True
    if kwargs:
        for a in kwargs.values():
            if _requires(a):
                return True
    return False


def carrying(*tensors):
    """Whether one of `tensors` carries a forward AD tangent: a derivative rule then composes
    its gradient from the public ops, as for create_graph, so that the gradient gets its
    tangent (a backward pass within a forward AD level)."""
    return dual[0] and forward_ad.carries(tensors, None)


def _edge(t):
    meta = t._meta
    return t if meta.grad_fn is None else (meta.grad_fn, meta.output_nr)


def capture_key(t):
    """How `run(capture=...)` names a tensor: a leaf by id, any other by (node, output)."""
    return id(t) if t._meta is None or t._meta.grad_fn is None else _edge(t)


def outputs(result):
    return [result] if isinstance(result, Tensor) else \
        [r for r in result if isinstance(r, Tensor)] if isinstance(result, tuple) else []


def _alias(t):
    a = _new(Tensor)
    a._data, a._dtype, a._device, a._meta = t._data, t._dtype, t._device, None
    return a


def _link(t, edges, versions, keep):
    m = t._meta
    if m is not None and m.requires_grad:
        if m.grad_fn is None:
            edges[id(t)] = t
        else:
            if _stale(m.grad_fn):
                retake(t)
            edges[id(t)] = (m.grad_fn, m.output_nr)
    if keep:
        _save(t, versions)


def view_base(t):
    """The tensor whose memory `t` views, as the graph took that view, or None."""
    node = t._meta.grad_fn if t._meta is not None else None
    return node.args[0] if node is not None and type(node).is_view and node.taken is not None \
        else None


def view_of(forward, args, kwargs, nr, base):
    """The view `forward(base, *args, **kwargs)` (output `nr` of a split)."""
    out = forward(base, *args, **kwargs)
    return out[nr] if isinstance(out, (tuple, list)) else out


def _stale(node):
    """Whether `node` (a grad_fn, or None) took a view of memory written in place since."""
    return node is not None and type(node).is_view and node.taken is not None and \
        node.taken[0].count != node.taken[1]


def retake(t):
    """Take the view `t` again from its base's present history: its base was written in place
    since (through another view, or itself), so the history it was taken from is not its
    values' (torch regenerates a view's grad_fn so)."""
    m = t._meta
    node, base = m.grad_fn, m.grad_fn.args[0]
    if _stale(base._meta.grad_fn):
        retake(base)
    take_history(t, view_of(type(node).forward, node.args[1:], node.kwargs, m.output_nr, base))


def take_history(t, made):
    """`t` takes the place in the graph of `made`, a tensor holding its values (none where
    `made` is a constant); a retained gradient is retained at the new place."""
    meta, made = t._autograd(), made._meta
    if made is None:
        meta.requires_grad, meta.grad_fn = False, None
        return
    meta.requires_grad, meta.grad_fn, meta.output_nr = True, made.grad_fn, made.output_nr
    if meta.retains_grad:
        meta.retains_grad = False
        t.retain_grad()


def _save(t, versions):
    if t.__class__ is not Tensor and t.is_sparse:  # (its values': never written in place)
        t = t._vals
    c = counter(t._data)
    versions.append((c, c.count))


def out_with_grad_error(name):
    """The error of an op given out= where autograd would record it (torch's rule)."""
    return RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                        f"differentiation, but one of the arguments requires grad; call it "
                        f"without out= or under jitensor.no_grad()")


def record(cls, fn, args, kwargs):
    """Run `fn(*args, **kwargs)` without recording inside it, then record it as a `cls` node.
    (On the path of every op with grad: written for speed.)"""
    if kwargs and kwargs.get("out") is not None:
        raise out_with_grad_error(fn.__name__)
    if _hooks_entered[0] and _saved_hooks.stack:
        raise _saved_hooks_error(cls)
    grad_mode._state.enabled = False
    try:
        result = fn(*args, **kwargs)
    finally:
        grad_mode._state.enabled = True
    outs = [result] if result.__class__ is Tensor else outputs(result)
    uses = cls.uses_inputs
    edges, versions, keep = {}, [], uses is True
    for a in (args + tuple(kwargs.values())) if kwargs else args:
        if isinstance(a, Tensor):
            for o in outs:
                if o is a:
                    return result  # an input itself came back (`contiguous` of a contiguous one)
            _link(a, edges, versions, keep)
        elif a.__class__ is list or a.__class__ is tuple:  # cat, stack
            for t in a:
                if isinstance(t, Tensor):
                    _link(t, edges, versions, keep)
    if uses and not keep:  # a function of the call: the inputs its rule reads
        for t in uses(*args, **kwargs):
            _save(t, versions)
    node = cls()
    node.args, node.kwargs, node.edges, node.n_outputs, node.retained, node.taken = \
        args, kwargs, edges, len(outs), None, None
    node.hooks = None
    if cls.is_view and storage(outs[0]._data) is storage(args[0]._data):
        c = counter(outs[0]._data)
        node.taken = c, c.count
    reads = cls.uses_result  # True, False, the numbers of the outputs read, or a function
    if reads.__class__ is not bool and reads.__class__ is not tuple:  # of the call giving one
        reads = reads(*args, **kwargs)
    node.result = None if not reads else _alias(result) if result.__class__ is Tensor else \
        tuple(_alias(r) if isinstance(r, Tensor) else r for r in result)
    for nr, out in enumerate(outs):
        if out._dtype.category > 1:  # floating or complex
            out._meta = _AutogradMeta(True, None, node, nr)
        if reads is True and not cls.is_view or \
                reads and reads is not True and nr in reads:  # (split's reads only shapes)
            _save(out, versions)
    node.versions = versions
    return result


# -- the engine ---------------------------------------------------------------------------------
def sum_to(g, shape):
    """`g` summed over the dims that broadcasting added to or stretched in `shape`."""
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g.reshape(shape) if g.shape != shape else g


def _fit(g, t):
    if g._data.shape != t._data.shape:
        g = sum_to(g, t.shape)
    if g._dtype is not t._dtype or g._device is not t._device and g._device != t._device:
        if g._dtype.is_complex and not t._dtype.is_complex:
            g = g.real  # a real input's gradient is the real part (torch's convention)
        g = g.to(t._device, t._dtype)
    return g


def call_rule(node, g, result):
    """node's rule on g. A complex gradient through a rule that reads its operands runs the
    rule on the conjugated operands: torch's gradient is g * conj(f'(z)), and conj(f'(z)) is
    f'(conj(z)) for the ops' real-coefficient formulas (mul, div, exp, tanh, ...; the ops that
    are not holomorphic, abs and the parts' views, have rules that read no complex operand)."""
    args, kwargs = node.args, node.kwargs
    if not (node.uses_inputs or node.uses_result) or not _is_complex(g):
        return node.rule(g, result, *args, **kwargs)
    from ..ops.complex_ops import conj
    originals = {}

    def conjugated(a):
        if isinstance(a, Tensor) and a._dtype.is_complex:
            c = conj(a)
            if a.requires_grad and not c.requires_grad:  # (rules ask which operands need one)
                c.requires_grad_()
            originals[id(c)] = a
            return c
        return a.conjugate() if a.__class__ is complex else a
    result = conjugated(result) if not isinstance(result, tuple) else \
        tuple(map(conjugated, result))
    pairs = node.rule(g, result, *map(conjugated, args),
                      **{k: conjugated(v) for k, v in kwargs.items()})
    return [(originals.get(id(t), t), gi) for t, gi in pairs]


def _is_complex(g):
    return any(x is not None and x._dtype.is_complex for x in g) if isinstance(g, tuple) else \
        g._dtype.is_complex


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")


def _relinked(node):
    """The node's outputs as tensors whose grad_fn is the node again, for rules that use the
    result while the backward pass itself is recorded (create_graph=True)."""
    def link(a, nr):
        tangent = None if a._meta is None else a._meta.fw_grad  # (forward AD's)
        a = _alias(a)
        if a._dtype.category > 1:
            a._meta = _AutogradMeta(True, None, node, nr)
            a._meta.fw_grad = tangent
        return a
    if isinstance(node.result, Tensor):
        return link(node.result, 0)
    outs = iter(range(node.n_outputs))
    return tuple(link(r, next(outs)) if isinstance(r, Tensor) else r for r in node.result)


def add_hook(hooks, hook):
    """Register `hook` in the dict `hooks`; the handle that removes it."""
    from ..utils.hooks import RemovableHandle
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _call_hooks(hooks, grads):
    """Pass each output's gradient through its tensor's hooks, in registration order (a hook's
    non-None result replaces it)."""
    for nr, fns in hooks.items():
        for hook in tuple(fns.values()):
            new = hook(grads[nr])
            if new is not None:
                grads[nr] = new
    return grads


def _check_versions(node):
    for c, version in node.versions:
        if c.count != version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: it is at version {c.count}; expected version "
                f"{version} instead (used by {node.name()}). Clone it before modifying it "
                f"in place, or modify a copy")


# while a profiler is active: (node, grad, result) -> what node.rule returns, recorded
profile_node = None


def run(roots, retain_graph, capture=None):
    """Send each root's gradient back through the graph. `roots`: (edge, gradient) pairs. With
    `capture` (`capture_key(t)` -> None for each wanted t, for autograd.grad) the gradients
    reaching those tensors are stored there and no `.grad` changes; otherwise leaves accumulate
    into `.grad`. (Python-bound on small tensors: written for speed.)"""
    if fusion[0] is not None:  # backward inside a compiled call: each fused node's backward
        from ..fusion import suspended  # is fused already; the engine runs eagerly
        with suspended():
            return run(roots, retain_graph, capture)
    starts = {e[0] for e, _ in roots if e.__class__ is tuple}
    deps, stack = {}, list(starts)
    while stack:  # how many edges lead into each node: it runs once all have sent
        for e in stack.pop().edges.values():
            if e.__class__ is tuple:
                n = e[0]
                if n in deps:
                    deps[n] += 1
                else:
                    deps[n] = 1
                    if n not in starts:
                        stack.append(n)
    buffers, leaves, handed = {}, {}, {}

    def send(edge, g):
        if edge.__class__ is tuple:
            node, nr = edge
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * node.n_outputs
            buf[nr] = g if buf[nr] is None else buf[nr] + g
        else:
            old = leaves.get(id(edge))
            leaves[id(edge)] = (edge, g if old is None else old[1] + g)

    def keep(g):
        """`g` stored where users see it (.grad): a C-contiguous copy when another place holds
        it too or when it is a strided view (an optimizer then reads it as it is)."""
        if id(g) in handed or not g.is_contiguous():
            g = g.clone(memory_format=contiguous_format)
        handed[id(g)] = g  # held, so that no other tensor of this run reuses its id
        return g

    for edge, g in roots:
        handed[id(g)] = g  # the caller's gradient: never stored as it is
        send(edge, g)
    create_graph = grad_mode._state.enabled
    hook = profile_node  # (a profiler's, while one is active: jitensor/profiler)
    ready = [n for n in starts if n not in deps]
    needed = None if capture is None else _needed(starts, capture)
    while ready:
        node = ready.pop()
        grads = buffers.pop(node, None)
        if node.args is None:
            raise RuntimeError(_FREED)
        if grads is None:
            grads = [None] * node.n_outputs
        elif node.hooks is not None:
            _call_hooks(node.hooks, grads)
        if capture is not None:
            for nr, g in enumerate(grads):
                if (node, nr) in capture:
                    capture[node, nr] = g
        if node.retained is not None:  # (as torch's, under autograd.grad too)
            for nr, meta in node.retained.items():
                g = grads[nr]
                if g is not None and meta.grad_fn is node:
                    meta.grad = keep(g) if meta.grad is None else meta.grad + g
        g = grads[0] if node.n_outputs == 1 else tuple(grads)
        if g is not None and (node.n_outputs == 1 or any(x is not None for x in grads)) and \
                (needed is None or node in needed):
            if node.versions:
                _check_versions(node)
            result = node.result
            if create_graph and result is not None:  # outputs link back to the node
                result = _relinked(node)
            edges = node.edges
            pairs = call_rule(node, g, result) if hook is None else hook(node, g, result)
            for i, (t, gi) in enumerate(pairs):
                if gi is not None:
                    if anomaly_mode._enabled[0]:
                        anomaly_mode.check_nan(node, i, gi)
                    edge = edges.get(id(t))
                    if edge is not None:
                        send(edge, _fit(gi, t))
        for e in node.edges.values():
            if e.__class__ is tuple:
                n = e[0]
                deps[n] -= 1
                if not deps[n]:
                    ready.append(n)
        if not retain_graph and (node.uses_inputs or node.uses_result):
            node.args = node.kwargs = node.result = None  # what torch frees: saved tensors
    for leaf, g in leaves.values():
        meta = leaf._meta
        if meta.hooks is not None and meta.hooks[0]:
            g = _call_hooks({0: meta.hooks[0]}, [g])[0]
        if capture is not None:
            if id(leaf) in capture:
                capture[id(leaf)] = g
        else:
            if meta.grad is None:
                meta.grad = keep(g)
            elif create_graph:  # the sum is part of the new graph
                meta.grad = meta.grad + g
            else:  # in place, as torch accumulates: references to .grad stay current
                meta.grad.add_(g)
            if meta.hooks is not None:
                for hook in tuple(meta.hooks[1].values()):
                    hook(leaf)


def _needed(starts, capture):
    """The nodes from which a path leads to a captured tensor: autograd.grad runs only those,
    as torch's (no work, and no hook of a tensor, beyond what it was asked for)."""
    found, seen = set(), set(starts)
    for start in starts:
        stack = [(start, iter(start.edges.values()))]
        while stack:
            node, todo = stack[-1]
            for e in todo:
                if e.__class__ is not tuple:
                    if id(e) in capture:
                        found.add(node)
                    continue
                if e in capture or e[0] in found:
                    found.add(node)
                if e[0] not in seen:
                    seen.add(e[0])
                    stack.append((e[0], iter(e[0].edges.values())))
                    break
            else:
                stack.pop()
                if stack and node in found:
                    found.add(stack[-1][0])
    return found


# -- saved tensor hooks ---------------------------------------------------------------------------
class _SavedHooks(threading.local):
    stack = ()  # the (pack, unpack) pairs of the saved_tensors_hooks blocks this thread entered


_saved_hooks = _SavedHooks()  # per thread, as torch's
_hooks_entered = [0]  # blocks entered in any thread: the cheap check on every op's path
_hooks_lock = threading.Lock()


def saved_tensor_hooks():
    """The innermost active (pack, unpack) pair of this thread, or None."""
    return _saved_hooks.stack[-1] if _hooks_entered[0] and _saved_hooks.stack else None


class saved_tensors_hooks:
    """Within the block, what an autograd.Function saves for backward (save_for_backward) is
    kept as ``pack_hook(tensor)`` and read back in backward as ``unpack_hook(packed)``.
    jitensor's built-in ops keep their inputs and results themselves: recording one inside the
    block raises. The hooks apply to the thread that entered the block, as in torch."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _saved_hooks.stack += ((self.pack_hook, self.unpack_hook),)
        with _hooks_lock:
            _hooks_entered[0] += 1
        return self

    def __exit__(self, *exc):
        _saved_hooks.stack = _saved_hooks.stack[:-1]
        with _hooks_lock:
            _hooks_entered[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """saved_tensors_hooks that keep saved tensors in CPU memory and bring them back to their
    device in backward (`pin_memory` is accepted: jitensor has no pinned memory)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: (t.device, t.cpu()), lambda p: p[1].to(p[0]))


def _saved_hooks_error(cls):
    return RuntimeError(f"saved_tensors_hooks: jitensor applies pack/unpack hooks only to what an "
                        f"autograd.Function saves, but the built-in op of {cls.__name__} was "
                        f"recorded inside the block; run it outside, or under no_grad()")


from . import forward_ad, node_names  # noqa: E402 (forward_ad imports this module's names)
