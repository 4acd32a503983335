"""scatter, scatter_add, index_add, index_copy, index_fill: a NumPy loop over the index is the
value oracle over every CPU dtype (hypothesis draws shapes, dims and indices), torch the oracle
for values, gradients and which calls raise; the same ops run on CUDA in tests/test_cuda.py."""
import numpy as np
import pytest
from conftest import CPU_DTYPES, dtype_id
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt


def _sample(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    return (rng.standard_normal(shape) * 10).astype(dtype) if np.dtype(dtype).kind == "f" \
        else rng.integers(-20, 20, shape).astype(dtype)


def _scatter_reference(x, dim, index, src, add):
    """out[..., index[e], ...] (= or +=) src[e] for every element e of index, in C order."""
    out = x.copy()
    for e in np.ndindex(*index.shape):
        at = list(e)
        at[dim] = index[e]
        if add:
            out[tuple(at)] += src[e]
        else:
            out[tuple(at)] = src[e]
    return out


@st.composite
def _scatter_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    dim = draw(st.integers(-ndim, ndim - 1))
    index_shape = [draw(st.integers(0, n)) if d != dim % ndim else draw(st.integers(0, 5))
                   for d, n in enumerate(shape)]
    src_shape = [n + draw(st.integers(0, 1)) for n in index_shape]
    return shape, dim, index_shape, src_shape, draw(st.integers(0, 2 ** 32 - 1))


@settings(deadline=None, max_examples=40)
@given(_scatter_case(), st.sampled_from([np.float32, np.float64, np.int64, np.int8]))
def test_scatter_add_matches_a_loop(case, dtype):
    shape, dim, index_shape, src_shape, seed = case
    rng = np.random.default_rng(seed)
    x, src = _sample(rng, shape, dtype), _sample(rng, src_shape, dtype)
    index = rng.integers(0, shape[dim], index_shape)  # repeats: added up
    got = jt.scatter_add(jt.tensor(x), dim, jt.tensor(index), jt.tensor(src))
    want = _scatter_reference(x, dim % len(shape), index, src, add=True)
    assert got.dtype.np == dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=dtype_id)
def test_scatter_and_index_ops_in_every_dtype(dtype):
    dtype = dtype.np
    rng = np.random.default_rng(1)
    x, src = _sample(rng, (3, 4), dtype), _sample(rng, (2, 4), dtype)
    index = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])  # no position twice: scatter is defined
    np.testing.assert_array_equal(
        jt.scatter(jt.tensor(x), 0, jt.tensor(index), jt.tensor(src)).numpy(),
        _scatter_reference(x, 0, index, src, add=False))
    value = True if dtype == np.bool_ else 7
    want = x.copy()
    want[:, [1, 3]] = value
    np.testing.assert_array_equal(jt.index_fill(jt.tensor(x), 1, jt.tensor([1, 3]), value).numpy(),
                                  want)
    want = x.copy()
    want[[2, 0]] = src
    np.testing.assert_array_equal(
        jt.index_copy(jt.tensor(x), 0, jt.tensor([2, 0]), jt.tensor(src)).numpy(), want)
    if dtype != np.bool_:
        rows = np.repeat(src[:1], 3, 0)  # position 2 twice: added up
        want = x.copy()
        np.add.at(want, [2, 0, 2], rows)
        got = jt.index_add(jt.tensor(x), 0, jt.tensor([2, 0, 2]), jt.tensor(rows))
        np.testing.assert_array_equal(got.numpy(), want)


def test_in_place_forms_write_into_self_and_leave_it_on_error():
    x = jt.zeros(2, 3)
    view = x[:, 1:]  # a strided target
    assert view.scatter_add_(1, jt.tensor([[0, 0], [1, 0]]), jt.ones(2, 2)) is view
    assert x.tolist() == [[0, 2, 0], [0, 1, 1]]
    x.index_fill_(0, jt.tensor([1]), -1.0).index_add_(1, jt.tensor([0]), jt.ones(2, 1), alpha=2)
    assert x.tolist() == [[2, 2, 0], [1, -1, -1]]
    x.scatter_(1, jt.tensor([[2]]), 5.0).index_copy_(0, jt.tensor([0]), jt.full((1, 3), 3.0))
    assert x.tolist() == [[3, 3, 3], [1, -1, -1]]
    before = x.tolist()
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.scatter_add_(1, jt.tensor([[0, 3]]), jt.ones(1, 2))  # nothing written
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.index_add_(0, jt.tensor([0, 2]), jt.ones(2, 3))
    assert x.tolist() == before


def test_in_place_sources_that_alias_self_are_read_first():
    x = jt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x.index_copy_(0, jt.tensor([1, 0]), x[:2])  # a contiguous view of self as the source
    assert x.tolist() == [[3, 4], [1, 2], [5, 6]]
    x.index_add_(1, jt.tensor([1]), x[:, :1])
    assert x.tolist() == [[3, 7], [1, 3], [5, 11]]


def test_torchs_index_rules():
    assert jt.index_fill(jt.zeros(3), 0, jt.tensor([-1]), 5.0).tolist() == [0, 0, 5]
    for call in (lambda: jt.index_copy(jt.zeros(3), 0, jt.tensor([3]), jt.ones(1)),
                 lambda: jt.index_fill(jt.zeros(3), 0, jt.tensor([-4]), 1.0)):
        with pytest.raises(IndexError, match="out of bounds"):
            call()
    with pytest.raises(RuntimeError, match="out of bounds"):  # index_add: as torch
        jt.index_add(jt.zeros(3), 0, jt.tensor([-1]), jt.ones(1))
    with pytest.raises(RuntimeError, match="out of bounds"):
        jt.scatter(jt.zeros(3), 0, jt.tensor([-1]), 2.0)
    assert jt.scatter(jt.zeros(3), 0, jt.tensor([1], dtype=jt.int32), 2.0).tolist() == [0, 2, 0]
    with pytest.raises(RuntimeError, match="int64"):
        jt.index_fill(jt.zeros(3), 0, jt.tensor([1], dtype=jt.int32), 2.0)
    # an integer self takes alpha as an integer, as torch does
    assert jt.tensor([1, 2]).index_add_(0, jt.tensor([0]), jt.tensor([3]), alpha=2.5).tolist() \
        == [7, 2]


def test_errors_name_the_argument_and_the_fix():
    x = jt.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"int64.*\.long\(\)"):
        x.scatter_add(0, jt.tensor([[0.0]]), jt.ones(1, 1))
    with pytest.raises(RuntimeError, match=r"dtype of self.*\.to\(jitensor\.float32\)"):
        x.scatter_add(0, jt.tensor([[0]]), jt.ones(1, 1, dtype=jt.float64))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.scatter(0, jt.tensor([0]), 1.0)
    with pytest.raises(RuntimeError, match="no larger than src"):
        x.scatter(0, jt.tensor([[0, 1]]), jt.ones(1, 1))
    with pytest.raises(TypeError, match="exactly one"):
        x.scatter(0, jt.tensor([[0]]))
    with pytest.raises(IndexError, match="vector"):
        x.index_fill(0, jt.tensor([[0]]), 1.0)
    with pytest.raises(RuntimeError, match=r"must have shape \[2, 4\]"):
        x.index_copy(0, jt.tensor([0, 1]), jt.ones(3, 4))
    with pytest.raises(RuntimeError, match="0-dimensional"):
        x.index_fill(0, jt.tensor([0]), jt.ones(2))


def test_torch_oracle_values_and_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4))
    src = rng.standard_normal((2, 5))
    index = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
    weights = rng.standard_normal((3, 4))
    cases = [
        # (torch's backward refuses a src larger than the index: sliced to the index here)
        lambda ns, a, s: ns.scatter_add(a, 0, ns.tensor(index), s[:, :4]),
        lambda ns, a, s: ns.scatter(a, 0, ns.tensor(index[::-1].copy()), s[:, 1:]),
        lambda ns, a, s: a.scatter(1, ns.tensor([[3], [0], [1]]), 2.5) * s.sum(),
        lambda ns, a, s: ns.index_add(a, 1, ns.tensor([3, 3]), s.t()[:3, :2], alpha=-2),
        lambda ns, a, s: ns.index_copy(a, 0, ns.tensor([2, 0]), s[:, :4]),
        lambda ns, a, s: ns.index_fill(a, 1, ns.tensor([0, 2]), -1.0) * s.sum(),
    ]
    for k, case in enumerate(cases):
        ja, js = jt.tensor(x, requires_grad=True), jt.tensor(src, requires_grad=True)
        ta, ts = torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)
        jo, to = case(jt, ja, js), case(torch, ta, ts)
        np.testing.assert_allclose(jo.detach().numpy(), to.detach().numpy(), rtol=1e-12,
                                   err_msg=str(k))
        (jo * jt.tensor(weights)).sum().backward()
        (to * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(ja.grad.numpy(), ta.grad.numpy(), rtol=1e-12, err_msg=str(k))
        np.testing.assert_allclose(js.grad.numpy(), ts.grad.numpy(), rtol=1e-12, err_msg=str(k))


def test_gradcheck_through_repeated_positions():
    x = jt.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    src = jt.tensor(np.linspace(0.5, 2, 6).reshape(2, 3), requires_grad=True)
    index = jt.tensor([[1, 1, 0], [1, 0, 0]])
    assert jt.autograd.gradcheck(lambda a, s: (a.scatter_add(0, index, s) ** 2), (x, src))
    assert jt.autograd.gradcheck(lambda a, s: a.index_add(1, jt.tensor([2, 2, 0]), s) ** 2,
                                 (x, src))
    wide = jt.tensor(np.linspace(0.5, 2, 8).reshape(2, 4), requires_grad=True)
    assert jt.autograd.gradcheck(lambda a, s: a.scatter_add(0, index, s), (x, wide))
    y = x * 1
    y.scatter_add_(0, index, src)  # in place, with grad: recorded as the out-of-place op
    y.sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2 and src.grad.tolist() == [[1.0] * 3] * 2


def test_scatter_reduce_argument_matches_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (jt, torch):
        index = lib.tensor([[0, 0], [2, 1]])
        got = []
        with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src"):
            got.append(lib.ones(2, 3).scatter(1, index, lib.full((2, 2), 2.0), reduce="add"))
        got.append(lib.ones(2, 3).scatter_(1, index, lib.full((2, 2), 3.0), reduce="multiply"))
        got.append(lib.ones(2, 3, dtype=lib.int64).scatter(1, index, 2, reduce="multiply"))
        got.append(lib.zeros(2, 3).scatter_(1, index, 1.5, reduce="add"))
        with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
            lib.ones(3).scatter(0, lib.tensor([1]), lib.ones(1), reduce="mean")
        results.append([(t.tolist(), str(t.dtype).split(".")[1]) for t in got])
    assert results[0] == results[1]
    x, src = jt.ones(3, requires_grad=True), jt.tensor([2.0, 3.0], requires_grad=True)
    (x.scatter(0, jt.tensor([1, 1]), src, reduce="add") * jt.tensor([1.0, 2.0, 3.0])).sum() \
        .backward()  # (scatter_add's gradient; torch has none for reduce=)
    assert x.grad.tolist() == [1.0, 2.0, 3.0] and src.grad.tolist() == [2.0, 2.0]
    y = jt.ones(3, requires_grad=True).scatter(0, jt.tensor([1]), 2.0, reduce="multiply")
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()
