"""Functions of a matrix: torch.matrix_exp (torch.linalg.matrix_exp).

The exponential is torch's algorithm (Bader, Blanes and Casas 2019, "Computing the matrix
exponential with an optimized Taylor polynomial approximation"): each matrix of the batch takes
the cheapest Taylor approximant of degree 1, 2, 4, 8, 12 or 18 whose bound on its 1-norm holds
(torch's bounds for float32 and float64), and a matrix beyond the last bound is scaled by 2^-s
into it, takes degree 18 and is squared s times. The degree 8, 12 and 18 approximants are
evaluated with torch's optimised products (3, 4 and 5 matrix products), so results equal
torch's to rounding. The op is recorded with its own rule (autograd/derivatives/
matrix_function.py): the gradient is the top right block of exp([[A^T, G], [0, A^T]]), as
torch computes it."""
import math

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..creation import eye, tensor, zeros
from ..tensor import Tensor
from .linalg import matmul
from .shape import cat

__all__ = ["matrix_exp"]

# the 1-norm bounds of the degrees 1, 2, 4, 8, 12 and 18 (torch's thetas)
_THETAS = {
    dtypes.float32: (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                     5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00),
    dtypes.float64: (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                     4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00),
}

_SQRT_177 = 0.1330413469565007072504e+2
_X3 = 2.0 / 3.0
_T8 = dict(x1=_X3 * ((1.0 + _SQRT_177) / 88.0), x2=_X3 * ((1.0 + _SQRT_177) / 352.0),
           x4=(-271.0 + 29.0 * _SQRT_177) / (315.0 * _X3),
           x5=(-11.0 + 11.0 * _SQRT_177) / (1260.0 * _X3),
           x6=(-99.0 + 11.0 * _SQRT_177) / (5040.0 * _X3),
           x7=(89.0 - _SQRT_177) / (5040.0 * _X3), y2=(857.0 - 58.0 * _SQRT_177) / 630.0)

# rows: the coefficients of B_i over (I, A, A^2, A^3) (degree 12) and (I, A, A^2, A^3, A^6)
# (degree 18), from the paper
_B12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
         0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
         0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
         -0.00675951846863086359))
_B18 = ((0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03,
         -8.92138498045729985177e-04, 0.0),
        (0.0, 3.97849749499645077844e-01, 1.36783778460411720168e+00,
         4.98289622525382669416e-01, -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02,
         -1.40086798182036094347e-05))


def _combine(coefficients, powers):
    """sum_j c_j P_j, the coefficients rounded to the matrices' dtype first (as torch's
    coefficient tensors are)."""
    dtype = powers[0].dtype
    out = None
    for c, p in zip(coefficients, powers, strict=True):
        if c == 0.0:
            continue
        c = float(tensor(c, dtype=dtype).item())
        term = p * c
        out = term if out is None else out + term
    return out if out is not None else powers[0] * 0.0


def _powers(A, count):
    """[I, A, A^2, A^3, A^6][:count]."""
    n = A.shape[-1]
    out = [eye(n, dtype=A.dtype, device=A.device).expand(A.shape), A]
    if count > 2:
        out.append(matmul(A, A))
    if count > 3:
        out.append(matmul(out[1], out[2]))
    if count > 4:
        out.append(matmul(out[3], out[3]))
    return out


def _t1(A):
    eye_, a = _powers(A, 2)
    return eye_ + a


def _t2(A):
    eye_, a, a2 = _powers(A, 3)
    return eye_ + a + a2 / 2.0


def _t4(A):
    p = _powers(A, 3)
    return p[0] + p[1] + matmul(p[2], _combine((1 / 2.0, 1 / 6.0, 1 / 24.0), p))


def _t8(A):
    c = _T8
    p = _powers(A, 3)
    a4 = matmul(p[2], _combine((c["x1"], c["x2"]), p[1:3]))
    a8 = matmul(_combine((_X3, 1.0), (p[2], a4)),
                _combine((c["x4"], c["x5"], c["x6"], c["x7"]), p + [a4]))
    return _combine((1.0, 1.0, c["y2"], 1.0), p + [a8])


def _t12(A):
    p = _powers(A, 4)
    b = [_combine(row, p) for row in _B12]
    b2 = b[2] + matmul(b[3], b[3])
    return b[0] + matmul(b[1] + b2, b2)


def _t18(A):
    p = _powers(A, 5)
    b = [_combine(row, p) for row in _B18]
    b3 = b[3] + matmul(b[0], b[4])
    return b[1] + matmul(b[2] + b3, b3)


def _scaled_t18(A, norm, theta):
    """Degree 18 of A / 2^s, squared s times, s = max(0, ceil(log2(norm / theta))) per matrix."""
    s = [max(0, math.ceil(math.log2(v / theta))) if 0 < v < math.inf else 0
         for v in norm.tolist()]
    scale = tensor([2.0 ** -k for k in s], dtype=A.dtype, device=A.device)
    E = _t18(A * scale.reshape(-1, 1, 1))
    out = []
    for i, k in enumerate(s):
        e = E[i]
        for _ in range(k):
            e = matmul(e, e)
        out.append(e)
    return cat([e.unsqueeze(0) for e in out], 0)


def _type_name(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dtype.name, dtype.name)


def matrix_exp(input):
    """torch.matrix_exp: e^A of each square matrix of a batch (*, n, n), float32 or float64."""
    if not isinstance(input, Tensor):
        raise TypeError(f"matrix_exp(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    where = f"matrix_exp({_type_name(input.dtype)}{{{list(input.shape)}}}): expected self tensor "
    if input.ndim < 2 or not input.dtype.is_floating_point:
        raise RuntimeError(where + "of floating or complex types with dim at least 2")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(where + "of squared matrices")
    if input.dtype not in _THETAS:
        raise RuntimeError(f"\"matrix_exp\" not implemented for '{_type_name(input.dtype)}'")
    with no_grad():
        A = input.detach()
        if A.shape[-1] == 1:
            return A.exp()
        n = A.shape[-1]
        flat = A.reshape(-1, n, n)
        if flat.shape[0] == 0:
            return zeros(A.shape, dtype=A.dtype, device=A.device)
        thetas = _THETAS[A.dtype]
        norm = flat.abs().sum(-2).amax(-1).to(dtypes.float64)
        values = norm.tolist()
        out = zeros(flat.shape, dtype=A.dtype, device=A.device)
        lower = -1.0
        for fn, upper in zip((_t1, _t2, _t4, _t8, _t12), thetas[:5], strict=True):
            idx = [i for i, v in enumerate(values) if lower < v <= upper]
            if idx:
                at = tensor(idx, dtype=dtypes.int64, device=A.device)
                out[at] = fn(flat[at])
            lower = upper
        # (beyond the degree-12 bound, or NaN: scaled and squared, as torch's)
        idx = [i for i, v in enumerate(values) if not v <= thetas[4]]
        if idx:
            at = tensor(idx, dtype=dtypes.int64, device=A.device)
            out[at] = _scaled_t18(flat[at], norm[at], thetas[5])
        return out.reshape(A.shape)


TENSOR_METHODS = {"matrix_exp": matrix_exp}
