"""The elementwise op table (kernels/scalar/table.py) is the one declaration of each op: both
devices serve exactly its op codes, with the same formulas, and the front end exposes exactly
its public rows."""
import ast
import inspect

import numpy as np
import pytest

import jitensor as jt
from jitensor.kernels.registry import backend
from jitensor.kernels.scalar import table
from jitensor.ops import elementwise

# operands that put every formula in its domain somewhere (and out of it elsewhere: NaN is
# compared as NaN)
FLOATS = np.array([0.25, 0.5, 1.5, 3.0, -0.75, 2.0], np.float64)
INTEGERS = np.array([7, -3, 2, 9, 1, -8], np.int64)
BOOL_RESULT = {"predicate", "compare"}
OWN_SIGNATURE = {"add", "sub", "div"}  # public rows whose functions are written out


def _cases():
    for family in table.KERNELS:
        rows = table.FAMILIES.get(family) or table.FAMILIES[family.removesuffix("_grad")]
        for code, formula, *_ in table.switch_cases(family):
            integer = family == "bitwise" or code >= len(rows)  # (integer variants come last)
            yield pytest.param(family, code, integer, id=f"{family}-{code}-{formula}")


def _operands(integer, device):
    base = INTEGERS if integer else FLOATS
    second = np.array([2, 3, 1, 2, 5, 3], np.int64) if integer else base[::-1].copy()
    arrays = [base, second, base * 0 + 1 if integer else np.abs(base) + 0.5]
    return [jt.tensor(a, device=device)._data for a in arrays]


@pytest.mark.cuda
@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
@pytest.mark.parametrize("family, code, integer", list(_cases()))
def test_both_devices_serve_every_code_alike(family, code, integer):
    """Each op code of each family, launched on the CPU and on CUDA (the simulator without a
    GPU) with the same operands, gives the same values: a code one device lacked would leave its
    output unwritten."""
    results = []
    for device in ("cpu", "cuda"):
        a, b, c = _operands(integer, device)
        dtype = jt.bool if family in BOOL_RESULT else jt.int64 if integer else jt.float64
        out = jt.full((6,), 99, dtype=dtype, device=device) if dtype is not jt.bool else \
            jt.zeros(6, dtype=jt.bool, device=device)
        scalar = 1 if integer else 0.5
        if family in ("unary", "activation"):  # operand 1 an array, then scalar parameters
            backend(out.device).elementwise.launch(family, code, out._data, a, scalar, scalar,
                                                   scalar)
        else:
            backend(out.device).elementwise.launch(family, code, out._data, a, b, c, scalar)
        results.append(out.cpu().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12, atol=0, equal_nan=True)


def test_front_end_functions_are_the_public_rows():
    """ops/elementwise.py binds a function for every public row and for nothing else of the
    table (add, sub and div have signatures of their own), each with its row's docstring."""
    tree = ast.parse(inspect.getsource(elementwise))
    bound = {node.targets[0].id for node in tree.body if isinstance(node, ast.Assign) and
             isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") in
             ("_unary_fn", "_binary_fn")}
    public = {row.name for row in table.OPS if row.public and row.family in elementwise._FAMILIES}
    assert bound == public - OWN_SIGNATURE
    for name in public:
        fn = getattr(jt.special, name) if table.BY_NAME[name].special_only else getattr(jt, name)
        assert fn.__doc__ and (name in OWN_SIGNATURE or
                               fn.__doc__ == table.BY_NAME[name].doc), name
        assert hasattr(jt.Tensor, name) != table.BY_NAME[name].special_only, name
        for alias in table.BY_NAME[name].aliases:
            assert getattr(jt, alias) is getattr(jt, name)


def test_codes_are_positions_in_their_family():
    for rows in table.FAMILIES.values():
        assert [op.code for op in rows] == list(range(len(rows)))
        ints = sorted(op.int_code for op in rows if op.int is not None)
        assert ints == list(range(len(rows), len(rows) + len(ints)))
    assert table.codes("compare", "eq", "lt") == (0, 2)
    with pytest.raises(KeyError, match="compare"):
        table.codes("compare", "add")


def test_derivative_expressions_read_only_their_arguments():
    """A row's `grad` names g, input, other and result, and public ops only."""
    ops = set(vars(jt)) | set(vars(jt.special))
    for op in table.OPS:
        for expression in op.grad if isinstance(op.grad, tuple) else (op.grad,):
            if expression is None:
                continue
            names = {n.id for n in ast.walk(ast.parse(expression)) if isinstance(n, ast.Name)}
            unknown = names - {"g", "input", "other", "result", "math"} - ops
            assert not unknown, (op.name, unknown)
