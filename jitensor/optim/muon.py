"""Muon (torch.optim.Muon) for 2-D parameters: momentum (Nesterov's by default), the update
orthogonalised by a quintic Newton-Schulz iteration, decoupled weight decay and a learning rate
scaled for the matrix's shape. torch's single-tensor update, operation for operation.

torch runs the Newton-Schulz iteration in bfloat16, which jitensor has no tensors of: here each
of its results is computed in float32 and rounded to bfloat16 (`_bfloat16`: bit operations on
the float32 words, the same bits as torch's conversion), as torch's kernels compute a bfloat16
product, sum or quotient in float32 and round it once. Parameters of either float dtype take
this bfloat16-precision update, as in torch's. A float32 sum accumulated in another order than
torch's now and then rounds to the other bfloat16 neighbour; the iteration spreads such a
difference, so beyond small matrices (about 64 on a side) the updates differ from torch's by a
unit or two of bfloat16 (2^-8 relative) in many elements, as torch's own CPU and GPU results
do."""
import math

from .. import dtypes
from ..creation import zeros_like
from ..ops.elementwise import isnan, where
from ..ops.linalg import addmm
from ..tensor import Tensor, preserve_format
from .optimizer import Optimizer

# Keller Jordan's constants, torch's defaults
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _bfloat16(x):
    """`x` rounded to bfloat16's 8 significant bits, as float32: the low 16 bits of each float32
    word rounded off to nearest, ties to even (float64 is converted to float32 first, as torch's
    conversion does). NaNs are kept as they are."""
    x = x.to(dtypes.float32)
    bits = x.contiguous().view(dtypes.int32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & -(1 << 16)).view(dtypes.float32)
    return where(isnan(rounded), x, rounded)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """`grad` orthogonalised, nearly: its singular values pushed towards 1 (into about
    [0.5, 1.5]) by `ns_steps` steps of X <- a X + (b A + c A^2) X, A = X X^T, after X is scaled
    to a Frobenius (so spectral) norm of at most 1. A tall matrix is iterated transposed, so
    that A is the smaller Gram matrix. Each result is rounded to bfloat16 as torch's."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho = _bfloat16(grad)
    tall = grad.size(0) > grad.size(1)
    if tall:
        ortho = ortho.T
    scale = _bfloat16(_bfloat16(ortho.norm()).clamp(min=eps))
    ortho = _bfloat16(ortho / scale)
    for _ in range(ns_steps):
        gram = _bfloat16(ortho @ ortho.T)
        gram_update = _bfloat16(addmm(gram, gram, gram, beta=b, alpha=c))
        ortho = _bfloat16(addmm(ortho, gram_update, ortho, beta=a))
    return ortho.T if tall else ortho


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """The learning rate scaled for a matrix of `param_shape` (A, B): by sqrt(max(1, A / B))
    ("original", Keller Jordan's, the default) or 0.2 sqrt(max(A, B)) ("match_rms_adamw",
    Moonshot's: the update's RMS then matches AdamW's)."""
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon, for the 2-D parameters of hidden layers (others, biases and embeddings, belong to a
    standard optimizer such as AdamW)."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                                  "nesterov": nesterov, "ns_coefficients": ns_coefficients,
                                  "eps": eps, "ns_steps": ns_steps,
                                  "adjust_lr_fn": adjust_lr_fn})
        # as torch: checked for the constructor's parameters only, not for groups added later
        # (whose gradients step() refuses)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _step_group(self, group):
        lr, weight_decay, momentum = group["lr"], group["weight_decay"], group["momentum"]
        lr = lr.item() if isinstance(lr, Tensor) else lr
        with_grads = [p for p in group["params"] if p.grad is not None]
        for p in with_grads:
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if "momentum_buffer" not in self.state[p]:
                self.state[p]["momentum_buffer"] = zeros_like(p.grad,
                                                              memory_format=preserve_format)
        for p in with_grads:
            grad = p.grad
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = self.state[p]["momentum_buffer"]
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                 group["ns_steps"], group["eps"])
            adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            p.mul_(1 - lr * weight_decay)
            p.add_(update.to(p.dtype), alpha=-adjusted_lr)
