"""jitensor.nn.utils: torch.nn.utils's gradient clipping, parameter/vector conversion, `rnn`
padding and `parametrize`, composed from jitensor ops so they run on any device."""
from . import parametrize, rnn
from .clip_grad import (
                        clip_grad_norm,
                        clip_grad_norm_,
                        clip_grad_value_,
                        clip_grads_with_norm_,
                        get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "parametrize", "rnn", "vector_to_parameters"]
