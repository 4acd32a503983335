"""`gradcheck`: autograd's gradients against central finite differences, as torch's."""
import numpy as np

from ..tensor import Tensor
from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    pass


def _outputs(func, inputs):
    out = func(*inputs)
    return [out] if isinstance(out, Tensor) else [o for o in out if isinstance(o, Tensor)]


def _host(t):
    return t.detach().cpu().numpy().astype(np.float64).reshape(-1)


def _analytic(out, wrt, grad):
    """The Jacobian of `out` with respect to each of `wrt` by backward, one column per element."""
    analytic = [np.zeros((t.numel(), out.numel())) for t in wrt]
    for j in range(out.numel()):
        onehot = np.zeros(out.numel())
        onehot[j] = 1
        seed = Tensor.new_tensor(out, onehot.reshape(out.shape), dtype=out.dtype)
        grads = grad(out, wrt, seed, retain_graph=True, allow_unused=True) \
            if out.requires_grad else [None] * len(wrt)
        for a, g in zip(analytic, grads, strict=False):
            if g is not None:
                a[:, j] = _host(g)
    return analytic


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """True when the Jacobian that backward computes for `func(*inputs)` matches central
    finite differences for every input that requires grad (use float64 inputs: float32 is too
    coarse for differences of size `eps`). Otherwise raises GradcheckError naming the input and
    the largest difference (or returns False with raise_exception=False)."""
    from . import grad
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    wrt = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor with requires_grad=True")
    outs = [o for o in _outputs(func, inputs) if o.dtype.is_floating_point]
    # every backward first: the differences below write the inputs in place, which the graph's
    # version counters would then refuse
    analytics = [_analytic(out, wrt, grad) for out in outs]
    for k, (out, analytic) in enumerate(zip(outs, analytics, strict=False)):
        n_out = out.numel()
        for i, t in enumerate(wrt):
            numeric = np.zeros((t.numel(), n_out))
            flat = t.detach().view(-1) if t.is_contiguous() else None
            if flat is None:
                raise ValueError(f"gradcheck needs contiguous inputs; input {i} is not")
            for e in range(t.numel()):
                with no_grad():
                    old = flat[e].item()
                    flat[e] = old + eps
                    hi = _host(_outputs(func, inputs)[k])
                    flat[e] = old - eps
                    lo = _host(_outputs(func, inputs)[k])
                    flat[e] = old
                numeric[e] = (hi - lo) / (2 * eps)
            bad = np.abs(analytic[i] - numeric) > atol + rtol * np.abs(numeric)
            if bad.any():
                if not raise_exception:
                    return False
                worst = np.abs(analytic[i] - numeric).max()
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i}: largest "
                    f"difference {worst:.3g}\nnumerical:\n{numeric}\nanalytical:\n{analytic[i]}")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradients themselves: the second derivatives of `func` (backward run
    with `create_graph`, against `grad_outputs`, random in [-1, 1) when not given) checked
    against finite differences of the first."""
    from . import grad
    if check_batched_grad or check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck: check_batched_grad and check_fwd_over_rev "
                                  "need batched and forward-mode autograd, which jitensor "
                                  "does not have")
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outs = [o for o in _outputs(func, inputs) if o.dtype.is_floating_point and o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(Tensor.new_tensor(o, rng.uniform(-1, 1, tuple(o.shape)),
                                               dtype=o.dtype).requires_grad_(True)
                             for o in outs)
    else:
        grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else \
            (grad_outputs,)
    n = len(inputs)

    def first_derivatives(*args):
        ins, seeds = args[:n], args[n:]
        wrt = [t for t in ins if isinstance(t, Tensor) and t.requires_grad]
        with enable_grad():  # (gradcheck evaluates its differences under no_grad)
            outs = [o for o in _outputs(func, ins)
                    if o.dtype.is_floating_point and o.requires_grad]
            found = grad(outs, wrt, list(seeds), create_graph=True, allow_unused=True)
        return tuple(g for g in found if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
