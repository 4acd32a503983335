"""Diagonals and triangles: NumPy's tril/triu/diagonal/diag/trace are the oracles over every
CPU dtype, hypothesis draws shapes and offsets; gradients are in tests/test_autograd.py and
the CUDA runs in tests/test_cuda.py."""
import numpy as np
import pytest
from conftest import CPU_DTYPES, dtype_id
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt


def _sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype is jt.bool:
        return rng.random(shape) < 0.5
    return (rng.standard_normal(shape) * 10).astype(dtype.np)


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_triangles_and_diagonals_in_every_dtype(dtype):
    x = _sample((2, 3, 4), dtype)
    for k in (-2, 0, 1):
        for fn in ("tril", "triu"):
            got = getattr(jt, fn)(jt.tensor(x), k)
            assert got.dtype is dtype
            np.testing.assert_array_equal(got.numpy(), getattr(np, fn)(x, k))
        np.testing.assert_array_equal(jt.tensor(x).diagonal(k, 1, 2).numpy(),
                                      np.diagonal(x, k, 1, 2))
        np.testing.assert_array_equal(jt.diag(jt.tensor(x[0]), k).numpy(), np.diag(x[0], k))
        np.testing.assert_array_equal(jt.diag(jt.tensor(x[0, 0]), k).numpy(),
                                      np.diag(x[0, 0], k))
    if dtype is not jt.bool:
        assert jt.trace(jt.tensor(x[0])).item() == pytest.approx(np.trace(x[0]), rel=1e-6)


@settings(deadline=None, max_examples=40)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=4), st.integers(-5, 5), st.data())
def test_diagonal_is_a_view_like_numpys(shape, offset, data):
    dim1 = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim2 = data.draw(st.integers(-len(shape), len(shape) - 1).filter(
        lambda d: d % len(shape) != dim1 % len(shape)))
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    t = jt.tensor(x)
    view = t.diagonal(offset, dim1, dim2)
    want = np.diagonal(x, offset, dim1, dim2)
    assert tuple(view.shape) == want.shape
    np.testing.assert_array_equal(view.numpy(), want)
    view.fill_(-1)  # writes through to the base, at the diagonal's positions only
    positions = np.diagonal(np.arange(x.size).reshape(shape), offset, dim1, dim2)
    x.reshape(-1)[positions.reshape(-1)] = -1
    np.testing.assert_array_equal(t.numpy(), x)


def test_in_place_triangles_and_errors():
    x = jt.ones(3, 3)
    assert x.tril_(-1) is x and x.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        jt.tril(jt.ones(3))
    with pytest.raises(RuntimeError, match="cannot be identical"):
        jt.ones(2, 2).diagonal(0, 1, -1)
    with pytest.raises(RuntimeError, match="1-D or 2-D"):
        jt.diag(jt.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="expected a matrix"):
        jt.trace(jt.ones(3))


def test_torch_oracle():
    torch = pytest.importorskip("torch")
    x = _sample((3, 5), jt.float32, 3)
    for k in (-4, -1, 0, 2, 6):
        assert jt.tril(jt.tensor(x), k).tolist() == torch.tril(torch.tensor(x), k).tolist()
        assert jt.diag(jt.tensor(x), k).tolist() == torch.diag(torch.tensor(x), k).tolist()
        assert jt.tensor(x).diagonal(k, 1, 0).tolist() == \
            torch.tensor(x).diagonal(k, 1, 0).tolist()
