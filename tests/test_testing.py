"""jitensor.testing against torch.testing: assert_close passes and fails on the same inputs with
the same messages (mismatch counts, greatest differences and their indices, tolerances per
dtype, attribute checks, nested containers), and make_tensor's ranges, layout and errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")


def _outcome(lib, actual, expected, **kwargs):
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except (AssertionError, TypeError, ValueError) as error:
        text = str(error).replace("jitensor.tensor.Tensor", "jitensor.Tensor")
        return type(error).__name__, text.replace("torch", "jitensor")
    return None


def _both(make_actual, make_expected, **kwargs):
    mine = _outcome(jt, make_actual(jt), make_expected(jt), **kwargs)
    theirs = _outcome(torch, make_actual(torch), make_expected(torch), **kwargs)
    assert mine == theirs


CASES = {
    "float32-close": (lambda m: m.tensor([1.0, 2.0, 3.0]),
                      lambda m: m.tensor([1.0, 2.0000001, 3.0])),
    "float32-far": (lambda m: m.tensor([1.0, 2.0, 3.0]), lambda m: m.tensor([1.0, 2.1, 3.0])),
    "float64-far": (lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64),
                    lambda m: m.tensor([[1.0, 2.0], [3.0, 4.5]], dtype=m.float64)),
    "int-equal": (lambda m: m.tensor([[1, 2], [3, 4]]), lambda m: m.tensor([[1, 2], [3, 5]])),
    "dtype": (lambda m: m.tensor([1.0, 2.0]), lambda m: m.tensor([1, 2])),
    "shape": (lambda m: m.tensor([1.0, 2.0, 3.0]), lambda m: m.tensor([1.0, 2.0])),
    "nan": (lambda m: m.tensor([float("nan")]), lambda m: m.tensor([float("nan")])),
    "scalar-tensor": (lambda m: m.tensor(1.0), lambda m: m.tensor(2.0)),
    "bool-scalar": (lambda m: m.tensor(True), lambda m: m.tensor(False)),
    "numbers": (lambda m: 1, lambda m: 2),
    "float-numbers": (lambda m: 1.0, lambda m: 1.1),
    "number-types": (lambda m: 1, lambda m: 1.0),
    "sequence": (lambda m: [m.ones(3)], lambda m: [m.tensor([1.0, 1.0, 2.0])]),
    "sequence-length": (lambda m: [1, 2], lambda m: [1, 2, 3]),
    "mapping": (lambda m: {"a": m.ones(3)}, lambda m: {"a": m.tensor([1.0, 1.0, 2.0])}),
    "mapping-keys": (lambda m: {"a": 1, "b": 2}, lambda m: {"a": 1, "c": 2}),
    "tensor-vs-number": (lambda m: m.ones(1), lambda m: 1.0),
    "requires-grad": (lambda m: m.ones(2, requires_grad=True), lambda m: m.ones(2)),
    "stride": (lambda m: m.ones(2, 2), lambda m: m.ones(2, 2).t().contiguous().t()),
}


@pytest.mark.parametrize("name", CASES)
def test_assert_close_matches_torch(name):
    _both(*CASES[name])


@pytest.mark.parametrize("kwargs", [{"rtol": 1e-3}, {"atol": 0.2, "rtol": 0.0},
                                    {"check_dtype": False}, {"equal_nan": True},
                                    {"check_stride": True}, {"msg": "boom"},
                                    {"msg": lambda m: "X" + m[:10]}])
def test_assert_close_options_match_torch(kwargs):
    for actual, expected in [(lambda m: m.tensor([1.0, float("nan")]),
                              lambda m: m.tensor([1.1, float("nan")], dtype=m.float64)),
                             (lambda m: m.ones(2, 2), lambda m: m.ones(2, 2).t().contiguous().t())]:
        _both(actual, expected, **kwargs)


def test_numpy_arrays_compare_as_torch():
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.5])
    assert _outcome(jt, a, b) == _outcome(torch, a, b) is not None


@given(st.lists(st.floats(-10, 10, width=32), min_size=1, max_size=6),
       st.lists(st.floats(-2**-13, 2**-13, width=32), min_size=6, max_size=6),
       st.sampled_from(["float32", "float64"]))
def test_assert_close_decides_as_torch(values, noise, dtype):
    got = [v + n for v, n in zip(values, noise, strict=False)]
    mine = _outcome(jt, jt.tensor(got, dtype=getattr(jt, dtype)),
                    jt.tensor(values, dtype=getattr(jt, dtype)))
    theirs = _outcome(torch, torch.tensor(got, dtype=getattr(torch, dtype)),
                      torch.tensor(values, dtype=getattr(torch, dtype)))
    assert mine == theirs


def test_assert_allclose_is_deprecated_and_converts_expected():
    with pytest.warns(FutureWarning):
        jt.testing.assert_allclose(jt.tensor([1.0, 2.0]), [1.0, 2.0])
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        jt.testing.assert_allclose(jt.tensor([1.0, 2.0]), [1.0, 3.0])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float32", "float64"])
def test_make_tensor_ranges_and_layout(dtype):
    d = getattr(jt, dtype)
    t = jt.testing.make_tensor(40, 30, dtype=d, device="cpu")
    assert t.shape == (40, 30) and t.dtype is d
    values = t.numpy().astype(np.float64)
    low, high = {"bool": (0, 1), "uint8": (0, 9)}.get(dtype, (-9, 9 if d.is_floating_point
                                                                else 9))
    assert values.min() >= low and values.max() <= high
    assert len(np.unique(values)) > 1
    nc = jt.testing.make_tensor((3, 4), dtype=d, device="cpu", noncontiguous=True)
    assert nc.shape == (3, 4) and not nc.is_contiguous()
    nz = jt.testing.make_tensor(200, dtype=d, device="cpu", exclude_zero=True, low=0 if dtype
                                != "bool" else None, high=2 if dtype != "bool" else None)
    if dtype != "bool":
        assert (nz.numpy() != 0).all()
    bounded = jt.testing.make_tensor(100, dtype=d, device="cpu", low=1, high=3)
    if dtype != "bool":
        assert set(np.unique(bounded.numpy())) <= ({1, 2} if not d.is_floating_point else
                                                   set(np.unique(bounded.numpy())))
        assert bounded.numpy().min() >= 1 and bounded.numpy().max() <= 3


def test_make_tensor_errors_match_torch():
    for kwargs in [{"dtype": "int64", "requires_grad": True},
                   {"dtype": "float32", "low": 5, "high": 2}]:
        errors = []
        for lib in (jt, torch):
            with pytest.raises(ValueError) as error:
                lib.testing.make_tensor(3, device="cpu", **dict(kwargs, dtype=getattr(
                    lib, kwargs["dtype"])))
            errors.append(str(error.value).replace("torch", "jitensor"))
        assert errors[0] == errors[1]
    grad = jt.testing.make_tensor(3, dtype=jt.float64, device="cpu", requires_grad=True)
    assert grad.requires_grad and grad.is_leaf
