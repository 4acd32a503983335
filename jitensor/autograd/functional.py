"""torch.autograd.functional: `vjp`, `jvp`, `jacobian`, `hessian`, `vhp` and `hvp` of a
function of tensors, built on `autograd.grad` as torch builds them (jvp by the double-backward
trick). A Tensor argument gives Tensor results, a tuple gives tuples, as in torch."""
from ..creation import zeros_like
from ..tensor import Tensor
from .grad_mode import enable_grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(x, arg, fn):
    """(tuple of tensors, whether x was one tensor)."""
    one = isinstance(x, Tensor)
    items = (x,) if one else x
    if not isinstance(items, tuple) or not all(isinstance(t, Tensor) for t in items):
        raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of Tensors "
                        f"but the given {arg} is {type(x).__name__}.")
    return items, one


def _prepare(inputs, create_graph):
    """Inputs that record: differentiable views of the caller's tensors with create_graph (so
    gradients reach them), detached copies otherwise."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else
                 t.detach().requires_grad_(True) for t in inputs)


def _finish(tensors, create_graph, one):
    out = tuple(t if create_graph else t.detach() for t in tensors)
    return out[0] if one else out


def _grads(outputs, inputs, grad_outputs, create_graph, strict, fn, what="output"):
    """autograd.grad of `outputs` w.r.t. `inputs`; zeros (or, when strict, an error) for
    inputs the outputs do not depend on."""
    from . import grad
    live = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o.requires_grad]
    if live:
        found = grad([o for o, _ in live], inputs, [g for _, g in live], retain_graph=True,
                     create_graph=create_graph, allow_unused=True)
    else:
        found = (None,) * len(inputs)
    result = []
    for i, (g, t) in enumerate(zip(found, inputs, strict=True)):
        if g is None:
            if strict:
                raise RuntimeError(f"The {what} of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode.")
            g = zeros_like(t)
        result.append(g)
    return tuple(result)


def _call(func, inputs, fn):
    outputs = func(*inputs)
    return _as_tuple(outputs, "outputs of the user-provided function", fn)


def _vector(v, outputs, fn, name="v"):
    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError(f"The vector {name} can only be None if the user-provided "
                               f"function returns a single Tensor with a single element.")
        return (outputs[0].new_ones(outputs[0].shape),)
    vs, _ = _as_tuple(v, name, fn)
    if len(vs) != len(outputs):
        raise RuntimeError(f"{fn}: {name} has {len(vs)} tensors but the function has "
                           f"{len(outputs)} outputs; give one per output")
    for i, (a, b) in enumerate(zip(vs, outputs, strict=True)):
        if a.shape != b.shape:
            raise RuntimeError(f"Mismatch in shape: the given {name} at position {i} has shape "
                               f"{tuple(a.shape)} but the output there has shape "
                               f"{tuple(b.shape)}")
    return vs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with enable_grad():
        inputs, one_in = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        outputs, one_out = _call(func, inputs, "vjp")
        vs = _vector(v, outputs, "vjp")
        result = _grads(outputs, inputs, vs, create_graph, strict, "vjp")
    return _finish(outputs, create_graph, one_out), _finish(result, create_graph, one_in)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product at `inputs`, by differentiating the
    vector-Jacobian product with respect to its vector."""
    with enable_grad():
        inputs, one_in = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            vs = (inputs[0].new_ones(inputs[0].shape),)
        else:
            vs = _vector(v, inputs, "jvp")
        outputs, one_out = _call(func, inputs, "jvp")
        dummies = tuple(o.new_zeros(o.shape).requires_grad_(True) for o in outputs)
        vjps = _grads(outputs, inputs, dummies, True, strict, "jvp")
        result = _grads(vjps, dummies, vs, create_graph, strict, "jvp")
    return _finish(outputs, create_graph, one_out), _finish(result, create_graph, one_out)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func(inputs) / d inputs: for output i and input j, a tensor of shape
    outputs[i].shape + inputs[j].shape (a Tensor, a tuple, or a tuple of tuples, as torch)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         f'Hint: If your function has a non-trivial output, use "reverse-mode"'
                         f'. Got {strategy!r}')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("torch.autograd.functional.jacobian: `strategy=\"forward-"
                                  "mode\"` requires `vectorize=True`.")
    with enable_grad():
        inputs, one_in = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        outputs, one_out = _call(func, inputs, "jacobian")
        blocks = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(flat.numel()):
                picks = tuple(o.new_zeros(o.shape) for o in outputs)
                picks[i].view(-1)[k] = 1
                grads = _grads(outputs, inputs, picks, create_graph, strict, "jacobian",
                               what=f"output {i}")
                for j, g in enumerate(grads):
                    rows[j].append(g)
            block = []
            for j, inp in enumerate(inputs):
                from ..ops.shape import stack
                stacked = stack(rows[j]) if rows[j] else inp.new_zeros((0,) + tuple(inp.shape))
                block.append(stacked.reshape(tuple(out.shape) + tuple(inp.shape)))
            blocks.append(_finish(block, create_graph, one_in))
    return blocks[0] if one_out else tuple(blocks)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function with a single-element output."""
    inputs_tuple, one_in = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args):
        out = func(*args)
        outs, _ = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "containing a single element")
        return _grads(outs, args, (outs[0].new_ones(outs[0].shape),), True, strict, "hessian")

    result = jacobian(gradient, inputs_tuple, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return result[0][0] if one_in else result


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a function with a single-element output."""
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function with a single-element output (H is symmetric, so
    this is v^T H transposed, computed the same way)."""
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(fn, func, inputs, v, create_graph, strict):
    with enable_grad():
        inputs, one_in = _as_tuple(inputs, "inputs", fn)
        inputs = _prepare(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            vs = (inputs[0].new_ones(inputs[0].shape),)
        else:
            vs = _vector(v, inputs, fn)
        outputs, one_out = _call(func, inputs, fn)
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        grads = _grads(outputs, inputs, (outputs[0].new_ones(outputs[0].shape),), True, strict,
                       fn)
        result = _grads(grads, inputs, vs, create_graph, strict, fn, what="jacobian")
    return _finish(outputs, create_graph, one_out), _finish(result, create_graph, one_in)
