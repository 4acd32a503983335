"""Parameters as one flat vector and back (torch.nn.utils.convert_parameters)."""
from ...ops.shape import cat
from ...tensor import Tensor


def _check_same_device(param, device):
    if device is not None and param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return param.device


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one vector (differentiable)."""
    device = None
    vec = []
    for param in parameters:
        device = _check_same_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Point each parameter's data at its slice of `vec` (they share vec's memory after)."""
    if not isinstance(vec, Tensor):
        kind = type(vec)
        name = kind.__qualname__ if kind.__module__ == "builtins" else \
            f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError(f"expected jitensor.Tensor, but got: {name}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_same_device(param, device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
