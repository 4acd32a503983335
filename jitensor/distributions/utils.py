"""Helpers shared by the distributions (torch.distributions.utils): broadcasting parameters,
probabilities <-> logits, lazily computed attributes, tril packing."""
from collections.abc import Callable, Sequence
from functools import update_wrapper
from typing import Any, Final, Generic, TypeVar, overload

import jitensor as jt

from ..nn import functional as F
from ..tensor import Tensor

# torch.types' aliases, for the annotations
Number = int | float | bool
_Number = (int, float, bool)
_size = Sequence[int]


euler_constant: Final[float] = 0.57721566490153286060  # Euler Mascheroni Constant

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


# FIXME: Use (*values: *Ts) -> tuple[Tensor for T in Ts] if Mapping-Type is ever added.
#   See https://github.com/python/typing/issues/1216#issuecomment-2126153831
def broadcast_all(*values: Tensor | Number) -> tuple[Tensor, ...]:
    r"""
    Given a list of values (possibly containing numbers), returns a list where each
    value is broadcasted based on the following rules:

    - `jt.*Tensor` instances are broadcasted as per :ref:`broadcasting-semantics`.
    - Number instances (scalars) are upcast to tensors having
      the same size and type as the first tensor passed to `values`.  If all the
      values are scalars, then they are upcasted to scalar Tensors.

    Args:
        values (list of `Number`, `jt.*Tensor` or objects implementing __torch_function__)

    Raises:
        ValueError: if any of the values is not a `Number` instance,
            a `jt.*Tensor` instance, or an instance implementing __torch_function__
    """
    if not all(isinstance(v, Tensor) or isinstance(v, _Number) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "jt.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        options: dict[str, Any] = dict(dtype=jt.get_default_dtype())
        for value in values:
            if isinstance(value, jt.Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        new_values = [
            v if isinstance(v, Tensor) else jt.tensor(v, **options) for v in values
        ]
        return jt.broadcast_tensors(*new_values)
    return jt.broadcast_tensors(*values)


def _standard_normal(
    shape: Sequence[int],
    dtype=None,
    device=None,
) -> Tensor:
    return jt.empty(shape, dtype=dtype, device=device).normal_()


def _gammainc(a: Tensor, x: Tensor) -> Tensor:
    """The regularised lower incomplete gamma function P(a, x) (torch.special.gammainc, which
    jitensor.special does not have yet), in float64 and cast back: its power series below
    x = a + 1 and Lentz's continued fraction for 1 - P above (Numerical Recipes 6.2), each
    run for enough terms to converge for the shapes and rates distributions meet."""
    a, x = jt.broadcast_tensors(a, x)
    dtype = jt.promote_types(a.dtype, x.dtype)
    a64, x64 = a.to(jt.float64), x.to(jt.float64)
    xs = x64.clamp(min=1e-300)
    prefactor = (a64 * xs.log() - xs - jt.lgamma(a64)).exp()
    term = 1 / a64
    total = term
    for n in range(1, 400):
        term = term * xs / (a64 + n)
        total = total + term
    series = prefactor * total
    tiny = 1e-300
    b = xs + 1 - a64
    c = jt.full_like(b, 1 / tiny)
    d = 1 / b
    h = d
    for i in range(1, 200):
        an = -i * (i - a64)
        b = b + 2
        d = an * d + b
        d = jt.where(d.abs() < tiny, jt.full_like(d, tiny), d)
        c = b + an / c
        c = jt.where(c.abs() < tiny, jt.full_like(c, tiny), c)
        d = 1 / d
        h = h * d * c
    fraction = 1 - prefactor * h
    result = jt.where(x64 < a64 + 1, series, fraction)
    result = jt.where(x64 <= 0, jt.zeros_like(result), result)
    return result.to(dtype)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    r"""
    Sum out ``dim`` many rightmost dimensions of a given tensor.

    Args:
        value (Tensor): A tensor of ``.dim()`` at least ``dim``.
        dim (int): The number of rightmost dims to sum out.
    """
    if dim == 0:
        return value
    required_shape = value.shape[:-dim] + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    r"""
    Converts a tensor of logits into probabilities. Note that for the
    binary case, each value denotes log odds, whereas for the
    multi-dimensional case, the values along the last dimension denote
    the log probabilities (possibly unnormalized) of the events.
    """
    if is_binary:
        return jt.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamps the probabilities to be in the open interval `(0, 1)`.

    The probabilities would be clamped between `eps` and `1 - eps`,
    and `eps` would be the smallest representable positive number for the input data type.

    Args:
        probs (Tensor): A tensor of probabilities.

    Returns:
        Tensor: The clamped probabilities.

    Examples:
        >>> probs = jt.tensor([0.0, 0.5, 1.0])
        >>> clamp_probs(probs)
        tensor([1.1921e-07, 5.0000e-01, 1.0000e+00])

        >>> probs = jt.tensor([0.0, 0.5, 1.0], dtype=jt.float64)
        >>> clamp_probs(probs)
        tensor([2.2204e-16, 5.0000e-01, 1.0000e+00], dtype=jt.float64)

    """
    eps = jt.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    r"""
    Converts a tensor of probabilities into logits. For the binary case,
    this denotes the probability of occurrence of the event indexed by `1`.
    For the multi-dimensional case, the values along the last dimension
    denote the probabilities of occurrence of each of the events.
    """
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return jt.log(ps_clamped) - jt.log1p(-ps_clamped)
    return jt.log(ps_clamped)


T = TypeVar("T", contravariant=True)
R = TypeVar("R", covariant=True)


class lazy_property(Generic[T, R]):
    r"""
    Used as a decorator for lazy loading of class attributes. This uses a
    non-data descriptor that calls the wrapped method to compute the property on
    first call; thereafter replacing the wrapped method into an instance
    attribute.
    """

    def __init__(self, wrapped: Callable[[T], R]) -> None:
        self.wrapped: Callable[[T], R] = wrapped
        update_wrapper(self, wrapped)  # type:ignore[arg-type]

    @overload
    def __get__(
        self, instance: None, obj_type: Any = None
    ) -> "_lazy_property_and_property[T, R]": ...

    @overload
    def __get__(self, instance: T, obj_type: Any = None) -> R: ...

    def __get__(
        self, instance: T | None, obj_type: Any = None
    ) -> "R | _lazy_property_and_property[T, R]":
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with jt.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property[T, R], property):
    """We want lazy properties to look like multiple things.

    * property when Sphinx autodoc looks
    * lazy_property when Distribution validate_args looks
    """

    def __init__(self, wrapped: Callable[[T], R]) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    r"""
    Convert a `D x D` matrix or a batch of matrices into a (batched) vector
    which comprises of lower triangular elements from the matrix in row order.
    """
    n = mat.shape[-1]
    if (diag < -n or diag >= n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = jt.arange(n, device=mat.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    vec = mat[..., tril_mask]
    return vec


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    r"""
    Convert a vector or a batch of vectors into a batched `D x D`
    lower triangular matrix containing elements from the vector in row order.
    """
    # +ve root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (
        -(1 + 2 * diag)
        + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5
    ) / 2
    eps = jt.finfo(vec.dtype).eps
    if (round(n) - n > eps):
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            + "the lower triangular part of a square D x D matrix."
        )
    n = round(n.item()) if isinstance(n, jt.Tensor) else round(n)
    mat = vec.new_zeros(vec.shape[:-1] + jt.Size((n, n)))
    arange = jt.arange(n, device=vec.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat
