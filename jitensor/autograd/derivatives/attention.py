"""The rule of ops/attention.py's fused attention."""
from ...ops import attention
from .. import grad_mode
from ..graph import carrying
from ._common import _wanted, rule


@rule("flash_attention")
def _flash_attention(g, result, query, key, value, scale, is_causal, lse):
    inputs = (query, key, value)
    if grad_mode._state.enabled or carrying(g, *inputs):
        # create_graph (or forward AD): differentiate the composed formulas instead
        from .. import grad as autograd_grad  # (the package imports this one as it loads)
        wanted = [t for t in inputs if _wanted(t)]
        grads = autograd_grad(attention.composed(query, key, value, scale, is_causal), wanted,
                              g, create_graph=True, allow_unused=True)
        return list(zip(wanted, grads, strict=True))
    return zip(inputs, attention.flash_attention_grad(g, result, query, key, value, scale,
                                                      is_causal, lse), strict=True)
