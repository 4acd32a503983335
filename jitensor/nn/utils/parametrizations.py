"""torch.nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations
(nn.utils.parametrize) rather than forward pre-hooks. (orthogonal is not here: its maps need
matrix_exp and householder_product, which jitensor lacks.)"""
from ...autograd.grad_mode import no_grad
from ...ops.linalg import mv, vdot
from ...tensor import Tensor
from .. import functional as F
from ..modules.conv import _ConvTransposeNd
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    """weight = g * v / ||v||, the originals (original0, original1) being g and v."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Parametrize ``module.<name>`` as g * v / ||v|| (the norm over every dim but `dim`; the
    whole tensor's when dim is None), g and v kept as ``parametrizations.<name>.original0``
    and ``original1``. A state dict of the hook form (``<name>_g``, ``<name>_v``) loads."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
               error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(compat)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma estimated by power iteration on the buffers _u and _v (15
    iterations at registration, n_power_iterations per training-mode evaluation)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(mv(weight_mat.mH, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        sigma = vdot(self._u.clone(), mv(weight_mat, self._v.clone()))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Parametrize ``module.<name>`` as itself over its spectral norm (dim: the output dim,
    1 for transposed convolutions, 0 otherwise). Returns `module`."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
