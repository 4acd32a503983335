"""torch.func's functional_call (jitensor has no vmap or functional transforms)."""
from collections.abc import Sequence

from .nn.utils.stateless import _functional_call

__all__ = ["functional_call"]


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
