"""The rule of ops/recurrent.py's fused recurrence."""
from ...ops import recurrent
from .. import grad_mode
from ..graph import carrying
from ._common import _wanted, rule


def _reads_output(projected, hx, cx, w_hh, b_hh, w_hr, mode, *args):
    """RNN's backward reads its output (the saved h of every step); the gated modes keep
    buffers of their own."""
    return (0,) if mode.startswith("RNN") else False


@rule("recurrence", uses_result=_reads_output)
def _recurrence(g, result, projected, hx, cx, w_hh, b_hh, w_hr, mode, batch_sizes, reverse,
                saved):
    inputs = (projected, hx, cx, w_hh, b_hh, w_hr)
    if grad_mode._state.enabled or carrying(g, *inputs):
        # create_graph (or forward AD): differentiate the composed steps instead
        return _composed(g, inputs, mode, batch_sizes, reverse)
    return zip(inputs, recurrent.recurrence_grad(g, hx, cx, w_hh, b_hh, w_hr, mode,
                                                 batch_sizes, reverse, saved), strict=True)


def _composed(g, inputs, mode, batch_sizes, reverse):
    """The gradients of the same recurrence run again as composed ops, so that the backward
    is recorded and differentiates again (second derivatives as the composed path's)."""
    from .. import grad as autograd_grad  # (the package imports this one as it loads)
    projected, hx, cx, w_hh, b_hh, w_hr = inputs
    state = (hx,) if cx is None else (hx, cx)
    out, state = recurrent.composed(mode, projected, state, w_hh, b_hh, w_hr, reverse,
                                    batch_sizes)
    pairs = [(o, gi) for o, gi in zip((out, *state), g, strict=False) if gi is not None]
    wanted = [t for t in inputs if _wanted(t)]
    grads = autograd_grad([o for o, _ in pairs], wanted, [gi for _, gi in pairs],
                          create_graph=True, allow_unused=True)
    return list(zip(wanted, grads, strict=True))
