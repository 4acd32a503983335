"""torch.nn.utils.stateless.functional_call (deprecated there for torch.func.functional_call,
which is the same call): run a module with some of its parameters and buffers replaced by
given tensors for the one call, restored after it."""
import contextlib
import warnings

from ...batching import BatchedTensor
from ...tensor import Tensor

__all__ = ["functional_call"]


def _untie(module, values):
    """`values` with each given tensor also set under the names tied to it (one tensor
    registered under several names); several different values for one tied tensor raise."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    groups = {}
    for name, tensor in named.items():
        groups.setdefault(id(tensor), set()).add(name)
    untied = dict(values)
    for name in values:
        tied = groups.get(id(named.get(name)), set())
        if len(tied) < 2:
            continue
        given = tied & set(values)
        if len(given) > 1 and len({id(values[n]) for n in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied)}, "
                             f"which are tied. Consider using tie_weights=False")
        for other in tied:
            untied[other] = values[name]
    return untied


def _swap(module, name, tensor):
    """Put `tensor` (None: nothing) at the dotted `name`; the tensor that was there."""
    prefix, _, attr = name.rpartition(".")
    owner = module.get_submodule(prefix)
    if tensor is not None and not isinstance(tensor, (Tensor, BatchedTensor)):
        raise TypeError(f"{tensor} is not an instance of jitensor.Tensor")
    for store in (owner._parameters, owner._buffers):
        if attr in store:
            old = store[attr]
            if tensor is None:
                del store[attr]
            else:
                store[attr] = tensor  # any tensor, not only a Parameter, for this call
            return old
    old = getattr(owner, attr, None)
    if tensor is None:
        if hasattr(owner, attr):
            delattr(owner, attr)
    else:
        setattr(owner, attr, tensor)
    return old


@contextlib.contextmanager
def _reparametrize_module(module, values, tie_weights=False, strict=False):
    if tie_weights:
        values = _untie(module, values)
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(errors)))
    originals = {}
    try:
        for name, tensor in values.items():
            originals[name] = _swap(module, name, tensor)
        yield
    finally:
        for name, tensor in reversed(originals.items()):
            _swap(module, name, tensor)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    if type(module).__name__ == "DataParallel":
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    `parameters_and_buffers` (dotted names, as named_parameters gives them) replaced by the
    given tensors during the call. tie_weights: a tensor given for one of several names of a
    tied weight is used for all of them. strict: the names must be exactly the module's."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
