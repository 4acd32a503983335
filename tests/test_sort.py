"""sort, argsort, topk: NumPy's stable argsort is the oracle over every CPU dtype and random
shapes (NaN sorts above every number, as torch sorts), torch the oracle for both directions
and topk; gradients are in tests/test_autograd.py, the CUDA runs in tests/test_cuda.py."""
import numpy as np
import pytest
from conftest import CPU_DTYPES, dtype_id
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt


def _numpy_sort(x, dim, descending):
    """(values, indices) by NumPy's stable sort: ascending puts NaN last; descending sorts the
    reversed keys (so ties keep their order) and puts NaN first."""
    x = np.moveaxis(x, dim, -1)
    if descending:
        flipped = x[..., ::-1]
        idx = np.argsort(flipped, axis=-1, kind="stable")[..., ::-1]
        idx = x.shape[-1] - 1 - idx
    else:
        idx = np.argsort(x, axis=-1, kind="stable")
    values = np.take_along_axis(x, idx, axis=-1)
    return np.moveaxis(values, -1, dim), np.moveaxis(idx, -1, dim)


@settings(deadline=None, max_examples=60)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=3), st.data(), st.booleans(),
       st.sampled_from([np.float32, np.float64, np.int64, np.uint8]))
def test_sort_matches_numpys_stable_sort(shape, data, descending, dtype):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    x = rng.integers(0, 4, shape).astype(dtype)  # few distinct values: many ties
    if np.dtype(dtype).kind == "f" and x.size:
        x.flat[rng.integers(0, x.size)] = np.nan
    values, indices = jt.sort(jt.tensor(x), dim, descending)
    want_values, want_indices = _numpy_sort(x, dim, descending)
    assert values.dtype.np == dtype and indices.dtype is jt.int64
    np.testing.assert_array_equal(values.numpy(), want_values)
    np.testing.assert_array_equal(indices.numpy(), want_indices)
    np.testing.assert_array_equal(jt.argsort(jt.tensor(x), dim, descending).numpy(),
                                  want_indices)


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_every_dtype_and_topk(dtype):
    x = np.array([[3, 0, 2, 2], [1, 1, 0, 3]]).astype(dtype.np)
    values, indices = jt.tensor(x).sort(dim=1)
    np.testing.assert_array_equal(indices.numpy(), np.argsort(x, axis=1, kind="stable"))
    top = jt.tensor(x).topk(2, dim=1)
    assert top.values.dtype is dtype and top.indices.shape == (2, 2)
    largest = -np.sort(-x.astype(np.float64), 1)
    np.testing.assert_array_equal(top.values.numpy(), largest[:, :2].astype(dtype.np))
    low = jt.topk(jt.tensor(x), 1, dim=0, largest=False)
    np.testing.assert_array_equal(low.values.numpy(), x.min(0, keepdims=True))


def test_edge_cases_and_errors():
    v, i = jt.sort(jt.tensor(2.5))
    assert v.item() == 2.5 and i.item() == 0 and i.dtype is jt.int64
    assert jt.sort(jt.zeros(0, 3), dim=0).values.shape == (0, 3)
    assert jt.topk(jt.arange(5), 0).values.shape == (0,)
    with pytest.raises(RuntimeError, match="k out of range"):
        jt.topk(jt.arange(3), 4)
    with pytest.raises(IndexError):
        jt.sort(jt.ones(2, 2), dim=2)


def test_torch_oracle():
    torch = pytest.importorskip("torch")
    x = np.array([[np.nan, 1.0, -0.0, 0.0, 1.0, -np.inf], [2.0, np.nan, np.nan, -1.0, 2.0, 0.5]],
                 np.float32)
    for dim in (0, 1):
        for descending in (False, True):
            got = jt.sort(jt.tensor(x), dim, descending)
            want = torch.sort(torch.tensor(x), dim=dim, descending=descending, stable=True)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    got, want = jt.topk(jt.tensor(x), 3), torch.topk(torch.tensor(x), 3)
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


@pytest.mark.parametrize("n", [1, 7, 100])
def test_topk_selection_is_the_head_of_the_stable_sort(n):
    """Small k select as they read each row (k <= 64), larger k take the whole sort: either
    way the first k of the stable sort, ties and NaN included."""
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, (3, n)).astype(np.float32)
    x.flat[0] = np.nan
    for k in sorted({0, 1, n // 2, min(n, 64), n}):
        for largest in (True, False):
            got = jt.topk(jt.tensor(x), k, largest=largest)
            ref = jt.sort(jt.tensor(x), descending=largest)
            np.testing.assert_array_equal(got.values.numpy(), ref.values.numpy()[:, :k])
            np.testing.assert_array_equal(got.indices.numpy(), ref.indices.numpy()[:, :k])
