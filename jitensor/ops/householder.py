"""Householder QR in LAPACK's compact form: torch.geqrf (A's reflectors below the diagonal, R
on and above it, and their scales tau), torch.orgqr / torch.linalg.householder_product (the
product H_1 ... H_k of those reflectors, its first n columns) and torch.ormqr (that product,
or its transpose, times another matrix, from either side).

geqrf is the QR kernel of ops/factor.py (LAPACK's geqrf choices, so the same values as torch's;
not differentiable, as torch's). orgqr and ormqr apply one reflector H_j = I - tau_j v_j v_j^T
at a time with public ops, so they run on every device and differentiate through them."""
import math

from .. import dtypes
from ..creation import allocate, eye, ones, zeros
from ..kernels.registry import backend
from ..tensor import Tensor
from ._common import same_device, write_out, write_pair
from .factor import _own
from .reduction import _return_type, return_types

__all__ = ["geqrf", "orgqr", "ormqr"]

return_types.geqrf = _return_type("geqrf", ("a", "tau"))


def _tensor(fn, t, name, position):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(t).__name__}")


def _floating(fn, t):
    if t.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(t.dtype)}")


def _type_name(dtype):
    return {"float16": "Half", "bfloat16": "BFloat16", "int64": "Long", "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}.get(
                dtype.name, dtype.name)


def geqrf(input, *, out=None):
    """torch.geqrf: ``(a, tau)``, LAPACK's geqrf of each matrix of input (*, m, n)."""
    fn = "torch.geqrf"
    _tensor("geqrf", input, "input", 1)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    _floating(fn, input)
    m, n = input.shape[-2:]
    k, batch = min(m, n), tuple(input.shape[:-2])
    F, a = _own(input.detach(), tuple(input.shape))
    tau = allocate(batch + (k,), input._dtype, input._device)
    if F.numel():
        Q = allocate(batch + (m, 0), input._dtype, input._device)
        backend(input._device).factor.qr(a, tau._data.reshape(math.prod(batch), k),
                                         Q._data.reshape(math.prod(batch), m, 0))
    elif tau.numel():
        tau.zero_()
    return write_pair("geqrf", out, (F, tau), return_types.geqrf, "tuple of Tensors")


def _reflector(A, j):
    """v_j of compact factors A (*, m, n) as a column (*, m, 1): 0 above row j, 1 at j, A's
    column j below."""
    m = A.shape[-2]
    col = A[..., :, j:j + 1]
    rows = zeros((m, 1), dtype=dtypes.bool_, device=A.device)
    rows[j + 1:] = True
    v = col * rows.to(A.dtype)
    one = zeros((m, 1), dtype=A.dtype, device=A.device)
    one[j] = 1.0
    return v + one


def _check_tau(fn, A, tau):
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{fn}: input.dim() - tau.dim() must be equal to 1 but got "
                           f"{A.ndim - tau.ndim}")
    _like_input(fn, "tau", A, tau, tau.shape[:-1])


def _like_input(fn, name, input, t, batch):
    """torch's checks that operand `name` (t, whose batch dims are `batch`) has input's batch
    dims, dtype and device."""
    if tuple(batch) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of {name} to be equal to "
                           f"input.shape[:-2], but got {list(batch)}")
    if t.dtype is not input.dtype:
        raise RuntimeError(f"{fn}: {name} dtype {_type_name(t.dtype)} does not match input "
                           f"dtype {_type_name(input.dtype)}")
    same_device(fn, input, t)


def _apply(C, A, tau, order, left):
    """C with the reflectors of (A, tau) applied in `order`: from the left, H C = C - tau v
    (v^T C); from the right, C H = C - tau (C v) v^T."""
    for j in order:
        v = _reflector(A, j)
        t = tau[..., j:j + 1].unsqueeze(-1)
        if left:
            C = C - (v * t) @ (v.transpose(-2, -1) @ C)
        else:
            C = C - ((C @ v) * t) @ v.transpose(-2, -1)
    return C


def orgqr(input, tau):
    """torch.orgqr (torch.linalg.householder_product): the first n columns of H_1 ... H_k for
    the reflectors of input (*, m, n), m >= n, and tau (*, k), k <= n."""
    fn = "torch.linalg.householder_product"
    _tensor("orgqr", input, "input", 1)
    _tensor("orgqr", tau, "tau", 2)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if n < tau.shape[-1] if tau.ndim else False:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    _check_tau(fn, input, tau)
    _floating(fn, input)
    k = tau.shape[-1]
    Q = eye(m, n, dtype=input.dtype, device=input.device).expand(input.shape)
    if k == 0 or not input.numel():
        return Q.clone()
    return _apply(Q, input, tau, range(k - 1, -1, -1), True)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """torch.ormqr: Q other, Q^T other (left) or other Q, other Q^T, Q = H_1 ... H_k the full
    (mn x mn) product of the reflectors of input (*, mn, k) and tau (*, min(mn, k))."""
    fn = "torch.ormqr"
    for position, (name, t) in enumerate((("input", input), ("tau", tau), ("other", other)), 1):
        _tensor("ormqr", t, name, position)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError(f"{fn}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{fn}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim and tau.shape[-1] > input.shape[-1]:
        raise RuntimeError(f"{fn}: tau.shape[-1] must be less than or equal to "
                           f"input.shape[-1]")
    _check_tau(fn, input, tau)
    if other.ndim != input.ndim:
        raise RuntimeError(f"{fn}: input.dim() must be equal to other.dim()")
    _like_input(fn, "other", input, other, other.shape[:-2])
    _floating(fn, input)
    k = tau.shape[-1]
    forward = range(k)
    backward = range(k - 1, -1, -1)
    # Q C = H_1 (... (H_k C)); Q^T C = H_k ... H_1 C; C Q = ((C H_1) ...) H_k; C Q^T the reverse
    order = (backward if not transpose else forward) if left else \
        (forward if not transpose else backward)
    result = other * ones((), dtype=other.dtype, device=other.device)
    if k and other.numel():
        result = _apply(other, input, tau, order, left)
    return write_out("ormqr", out, result)


TENSOR_METHODS = {"geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr}
