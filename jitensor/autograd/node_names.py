"""torch's names for the nodes of ops that torch records under another name than the op's, or
under one of several by the call (`x.sum()`: SumBackward0, `x.sum(1)`: SumBackward1): programs
and tutorials print `grad_fn` and walk `next_functions`. PICKS maps an op (its rule's name in
autograd/derivatives) to torch's name, or to a function of the recorded call's arguments giving
it (None: the op's own). graph.torch_named applies them where a node is shown. NEXT orders
next_functions as torch's where its op takes its inputs otherwise."""
import weakref

from ..tensor import Tensor


def _given(*args, dim=None, **kwargs):
    """Whether a reduction's call names dims: torch records its dim overload apart."""
    return (args[0] if args else dim) is not None


def _by_dim(op):
    return lambda input, *args, **kwargs: f"{op}Backward{int(_given(*args, **kwargs))}"


def _extremum(op):
    """max/min: of all elements (overload 1), along a dim (0), or of two tensors (maximum)."""
    def pick(input, dim=None, *args, other=None, **kwargs):
        if isinstance(dim, Tensor) or other is not None:
            return f"{op}imumBackward0"
        return f"{op}Backward{0 if dim is not None else 1}"
    return pick


def _index(key):
    """The op torch applies last for self[key]: advanced indexing after the basic ones;
    full slices are skipped."""
    keys = key if key.__class__ is tuple else (key,)
    if any(isinstance(k, (Tensor, list, bool)) for k in keys):
        return "IndexBackward0"
    for k in reversed(keys):
        if k is None:
            return "UnsqueezeBackward0"
        if isinstance(k, int):
            return "SelectBackward0"
        if k.__class__ is slice and k != slice(None):
            return "SliceBackward0"
    return "AliasBackward0"


def _reshaped(input, *args, **kwargs):
    """reshape and flatten: a view where the input's memory allows, else a copy."""
    return "ViewBackward0" if input.is_contiguous() else "UnsafeViewBackward0"


def _linear(input, weight, bias=None):
    if input.ndim == 2:
        return "AddmmBackward0" if bias is not None else "MmBackward0"
    if bias is not None:
        return "ViewBackward0"
    return "SqueezeBackward4" if input.ndim == 1 else "UnsafeViewBackward0"


def _matmul(a, b):
    kind = {(2, 2): "Mm", (2, 1): "Mv", (1, 1): "Dot", (1, 2): "Squeeze"}.get((a.ndim, b.ndim))
    return {"Squeeze": "SqueezeBackward4", None: "UnsafeViewBackward0"}.get(
        kind, f"{kind}Backward0")


def _reversed(op, torch_op):
    """sub and div of a number by a tensor: torch's rsub, and reciprocal times the number."""
    return lambda a, *args, **kwargs: torch_op if not isinstance(a, Tensor) else f"{op}Backward0"


def _pow(base, exponent):
    return "PowBackward2" if not isinstance(base, Tensor) else \
        "PowBackward1" if isinstance(exponent, Tensor) else "PowBackward0"


def _clamp(input, min=None, max=None):
    return "ClampBackward0" if isinstance(min, Tensor) or isinstance(max, Tensor) else \
        "ClampBackward1"


def _norm(input, p="fro", *args, **kwargs):
    return "LinalgVectorNormBackward0" if p not in ("nuc",) else "NormBackward1"


PICKS = {
    "sum": _by_dim("Sum"), "mean": _by_dim("Mean"), "prod": _by_dim("Prod"),
    "max": _extremum("Max"), "min": _extremum("Min"),
    "squeeze": _by_dim("Squeeze"), "clamp": _clamp, "norm": _norm,
    "getitem": lambda input, key: _index(key),
    "reshape": _reshaped, "flatten": _reshaped, "unflatten": "ViewBackward0",
    "linear": _linear, "matmul": _matmul,
    "sub": _reversed("Sub", "RsubBackward1"), "div": _reversed("Div", "MulBackward0"),
    "pow": _pow,
    "to": "ToCopyBackward0", "contiguous": "CloneBackward0", "chunk": "SplitBackward0",
    "max_pool2d_with_indices": "MaxPool2DWithIndicesBackward0",
    "avg_pool2d": "AvgPool2DBackward0",
    "max_pool3d_with_indices": "MaxPool3DWithIndicesBackward0",
}


class TBackward0:
    """Where torch's graph has a node jitensor's has not: the transpose torch's linear records
    of its weight (addmm(bias, input, weight.t()))."""
    __slots__ = ("next_functions",)

    def __init__(self, edge):
        self.next_functions = (edge,)

    def name(self):
        return "TBackward0"

    def __repr__(self):
        return f"<TBackward0 object at {id(self):#x}>"


_transposes = weakref.WeakKeyDictionary()  # linear's node -> its TBackward0, one while it lives


def _linear_order(node, found):
    """linear of a matrix: torch's addmm(bias, input, weight.t()), or mm(input, weight.t())."""
    if node.args[0].ndim != 2:
        return tuple(found)
    weight = found[1]
    if weight[0] is not None:
        t = _transposes.get(node)
        if t is None:
            t = _transposes[node] = TBackward0(weight)
        weight = t, 0
    return (found[2], found[0], weight) if len(found) == 3 else (found[0], weight)


NEXT = {"linear": _linear_order}
