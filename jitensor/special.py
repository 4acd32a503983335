"""torch.special: the special functions, under torch.special's names.

The functions of one or two tensors are rows of the elementwise op table
(kernels/scalar/table.py): one kernel each on both devices, with their derivatives.
The rest are the ops they are at the top level (`expit` is `sigmoid`, `gammaln` is `lgamma`,
...)."""
from .ops.elementwise import (
    bessel_j0,
    bessel_j1,
    digamma,
    entr,
    erf,
    erfc,
    erfcx,
    erfinv,
    exp2,
    expm1,
    i0,
    i0e,
    i1,
    i1e,
    lgamma,
    log1p,
    log_ndtr,
    ndtr,
    ndtri,
    round,
    sigmoid,
    sinc,
    xlog1py,
    xlogy,
    zeta,
)
from .ops.pointwise import logit, mvlgamma, polygamma
from .ops.reduction import log_softmax, logsumexp, softmax

expit = sigmoid
gammaln = lgamma
psi = digamma
multigammaln = mvlgamma

__all__ = ["bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv",
           "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma",
           "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta"]

# torch.special's functions jitensor does not have yet: a clear error, not a missing name
_MISSING = {"airy_ai", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
            "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
            "gammainc", "gammaincc", "hermite_polynomial_h", "hermite_polynomial_he",
            "laguerre_polynomial_l", "legendre_polynomial_p", "modified_bessel_i0",
            "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
            "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
            "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
            "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
            "spherical_bessel_j0"}


def __getattr__(name):
    if name in _MISSING:
        raise AttributeError(f"jitensor.special.{name} is not implemented yet (torch.special "
                             f"has it); its scalar definition would be a row of "
                             f"jitensor/kernels/scalar/table.py")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
