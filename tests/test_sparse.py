"""Sparse COO tensors against torch's: structure (indices, values, coalescing), results'
layouts, dtypes and values, gradients of the dense operands, errors; and the products' kernel
at any thread count."""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support:UserWarning")]

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]
VAL = [3.0, 4.0, 5.0, 6.0]


def pair(indices=IDX, values=VAL, size=(2, 3), dtype=None):
    """The same sparse tensor in jitensor and torch (dtype: a name)."""
    size = () if size is None else (size,)
    return (jt.sparse_coo_tensor(indices, values, *size, dtype=dtype and getattr(jt, dtype)),
            torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), *size,
                                    dtype=dtype and getattr(torch, dtype)))


def same(got, want):
    """got is a jitensor tensor with want's layout, dtype, shape and values (and for sparse,
    coalesced flag, indices and values in their order)."""
    assert got.is_sparse == want.is_sparse
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape)
    if want.is_sparse:
        assert got.is_coalesced() == want.is_coalesced()
        np.testing.assert_array_equal(got._indices().numpy(), want._indices().numpy())
        np.testing.assert_allclose(got._values().numpy(), want._values().numpy(), rtol=1e-5)
    else:
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)


# -- creation and structure ------------------------------------------------------------------------
def test_structure_and_repr_match_torch():
    s, ts = pair()
    assert s.layout is jt.sparse_coo and s.is_sparse and isinstance(s, jt.Tensor)
    assert (s.sparse_dim(), s.dense_dim(), s._nnz(), s.numel(), s.ndim) == (2, 0, 4, 6, 2)
    assert not s.is_coalesced() and not s.requires_grad and s.grad is None
    assert repr(s) == repr(ts).replace("torch.", "jitensor.")
    c, tc = s.coalesce(), ts.coalesce()
    same(c, tc)
    assert repr(c.double()) == repr(tc.double()).replace("torch.", "jitensor.")
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.values()
    same(c.indices(), tc.indices())
    same(c.values(), tc.values())
    empty = jt.sparse_coo_tensor(jt.zeros(2, 0, dtype=jt.int64), jt.zeros(0), (2, 3))
    tempty = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.int64), torch.zeros(0), (2, 3))
    assert repr(empty) == repr(tempty).replace("torch.", "jitensor.")
    same(empty.to_dense(), tempty.to_dense())


def test_size_inferred_dtype_and_hybrid_values():
    s, ts = pair(size=None)
    same(s, ts)
    s, ts = pair(dtype="int64")
    same(s, ts)
    hybrid = jt.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (3, 2))
    thybrid = torch.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (3, 2))
    assert (hybrid.sparse_dim(), hybrid.dense_dim()) == (1, 1)
    same(hybrid.to_dense(), thybrid.to_dense())
    same(jt.sum(hybrid, 1), torch.sum(thybrid, 1))


def test_creation_errors():
    with pytest.raises(RuntimeError, match="sparse_dim x nnz"):
        jt.sparse_coo_tensor([0, 1], [1.0, 2.0], (2,))
    with pytest.raises(RuntimeError, match="same nnz"):
        jt.sparse_coo_tensor(IDX, VAL[:3], (2, 3))
    with pytest.raises(RuntimeError, match="len\\(size\\)"):
        jt.sparse_coo_tensor(IDX, VAL, (2, 3, 4))
    with pytest.raises(RuntimeError, match="for dim 0, size is 1 but found index 1"):
        jt.sparse_coo_tensor(IDX, VAL, (1, 3))
    with pytest.raises(RuntimeError, match="negative index"):
        jt.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (2,))
    with pytest.raises(NotImplementedError, match="autograd"):
        jt.sparse_coo_tensor(IDX, VAL, (2, 3), requires_grad=True)
    with pytest.raises(NotImplementedError, match="autograd"):
        jt.sparse_coo_tensor(IDX, jt.tensor(VAL, requires_grad=True), (2, 3))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(-5, 5)),
                max_size=12),
       st.sampled_from(["float32", "float64", "int64", "int32", "float16", "bool"]))
def test_coalesce_and_to_dense_match_torch(entries, dtype):
    idx = [[e[0] for e in entries], [e[1] for e in entries]]
    val = [e[2] for e in entries]
    s = jt.sparse_coo_tensor(jt.tensor(idx, dtype=jt.int64).reshape(2, -1),
                             jt.tensor(val, dtype=getattr(jt, dtype)), (4, 5))
    ts = torch.sparse_coo_tensor(torch.tensor(idx, dtype=torch.int64).reshape(2, -1),
                                 torch.tensor(val, dtype=getattr(torch, dtype)), (4, 5))
    same(s.coalesce(), ts.coalesce())
    same(s.to_dense(), ts.to_dense())
    same(s.to_dense().to_sparse(), ts.to_dense().to_sparse())
    same(jt.sum(s), torch.sum(ts))
    same(jt.sum(s, 0), torch.sum(ts, 0))


def test_to_sparse_of_dense():
    x = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, 3.0]], np.float32)
    same(jt.tensor(x).to_sparse(), torch.tensor(x).to_sparse())
    same(jt.tensor(x).to_sparse(1), torch.tensor(x).to_sparse(1))
    same(jt.tensor(x).to_sparse_coo(), torch.tensor(x).to_sparse_coo())
    with pytest.raises(NotImplementedError, match="layout"):
        jt.tensor(x).to_sparse(layout=jt.sparse_csr)


def test_conversions_and_pickle():
    s, ts = pair()
    same(s.double(), ts.double())
    same(s.to(jt.int32), ts.to(torch.int32))
    same(s.clone(), ts.clone())
    assert s.to("cpu") is s
    back = pickle.loads(pickle.dumps(s))
    same(back, ts)
    with pytest.raises(TypeError, match="to_dense"):
        s.numpy()


# -- ops -------------------------------------------------------------------------------------------
def test_transpose():
    s, ts = pair()
    same(s.t(), ts.t())
    same(s.coalesce().t(), ts.coalesce().t())
    same(jt.transpose(s, 0, 1), torch.transpose(ts, 0, 1))


def test_add_sub_mul_div():
    s, ts = pair()
    c, tc = s.coalesce(), ts.coalesce()
    d = np.arange(6, dtype=np.float32).reshape(2, 3)
    dj, dt = jt.tensor(d), torch.tensor(d)
    cases = [
        (lambda a, x: x + a, lambda a, x: x + a),
        (lambda a, x: a + a, lambda a, x: a + a),
        (lambda a, x: a.coalesce() + a.coalesce(), lambda a, x: a.coalesce() + a.coalesce()),
        (lambda a, x: a - a, lambda a, x: a - a),
        (lambda a, x: a * 2, lambda a, x: a * 2),
        (lambda a, x: 2 * a, lambda a, x: 2 * a),
        (lambda a, x: a / 2, lambda a, x: a / 2),
        (lambda a, x: -a, lambda a, x: -a),
        (lambda a, x: a * x, lambda a, x: a * x),
        (lambda a, x: x * a, lambda a, x: x * a),
        (lambda a, x: jt.add(x, a, alpha=2), lambda a, x: torch.add(x, a, alpha=2)),
    ]
    for mine, theirs in cases:
        same(mine(s, dj), theirs(ts, dt))
    same(c * c, tc * tc)
    other = jt.sparse_coo_tensor([[1, 0], [2, 0]], [10.0, 1.0], (2, 3))
    tother = torch.sparse_coo_tensor([[1, 0], [2, 0]], [10.0, 1.0], (2, 3))
    product = s * other  # (torch keeps the pattern of one operand, zeros too: compare values)
    assert product.is_sparse
    same(product.to_dense(), (ts * tother).to_dense())
    for op in (lambda a, x: a + x, lambda a, x: a - x, lambda a, x: a.add(x, alpha=2)):
        with pytest.raises(RuntimeError, match="\\(dense, sparse\\) instead"):
            op(s, dj)
        with pytest.raises(RuntimeError, match="\\(dense, sparse\\) instead"):
            op(ts, dt)
    same(dj - s, dt - ts)
    same(jt.sub(dj, s, alpha=3), torch.sub(dt, ts, alpha=3))
    with pytest.raises(RuntimeError, match="same size"):
        s + jt.sparse_coo_tensor([[0], [0]], [1.0], (3, 3))


def test_unary_ops_keep_or_refuse():
    s, ts = pair()
    for name in ("abs", "sqrt", "sin", "neg", "floor", "square", "tanh", "sign", "expm1"):
        same(getattr(s, name)(), getattr(ts, name)())
    same(s.pow(2), ts.pow(2))
    for name in ("exp", "cos"):
        with pytest.raises(NotImplementedError, match="sparse"):
            getattr(s, name)()
    with pytest.raises(NotImplementedError, match="to_dense"):
        s.view(-1)
    with pytest.raises(NotImplementedError, match="to_dense"):
        jt.relu(s)


def test_zero_keeping_list_names_elementwise_ops():
    from jitensor.ops import elementwise, sparse
    assert all(hasattr(elementwise, n) for n in sparse._LINEAR | sparse._ZERO_KEEPING)


def test_sums():
    s, ts = pair()
    same(jt.sum(s), torch.sum(ts))
    same(s.sum(1), ts.sum(1))
    same(jt.sparse.sum(s, 0), torch.sparse.sum(ts, 0))
    same(jt.sparse.sum(s, (0, 1)), torch.sparse.sum(ts, (0, 1)))
    si, tsi = pair(dtype="int32")
    same(jt.sum(si, 1), torch.sum(tsi, 1))


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax(dim, log):
    s, ts = pair()
    fn = "log_softmax" if log else "softmax"
    same(getattr(jt.sparse, fn)(s, dim), getattr(torch.sparse, fn)(ts, dim))


def test_products_match_torch():
    s, ts = pair()
    rng = np.random.default_rng(0)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    a = rng.standard_normal((5, 2)).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)
    same(jt.mm(s, jt.tensor(b)), torch.mm(ts, torch.tensor(b)))
    same(s @ jt.tensor(b), ts @ torch.tensor(b))
    same(jt.spmm(s, jt.tensor(b)), torch.spmm(ts, torch.tensor(b)))
    same(jt.sparse.mm(s, jt.tensor(b)), torch.sparse.mm(ts, torch.tensor(b)))
    same(jt.tensor(a) @ s, torch.tensor(a) @ ts)
    same(s @ jt.tensor(v), ts @ torch.tensor(v))
    same(jt.matmul(jt.tensor(v[:2]), s), torch.matmul(torch.tensor(v[:2]), ts))
    same(jt.mm(s, s.t()), torch.mm(ts, ts.t()))
    c = rng.standard_normal((2, 4)).astype(np.float32)
    same(jt.addmm(jt.tensor(c), s, jt.tensor(b), beta=0.5, alpha=2),
         torch.addmm(torch.tensor(c), ts, torch.tensor(b), beta=0.5, alpha=2))
    same(jt.nn.functional.linear(s, jt.tensor(b.T)),
         torch.nn.functional.linear(ts, torch.tensor(b.T)))
    same(jt.sparse.addmm(jt.tensor(c), s, jt.tensor(b)),
         torch.sparse.addmm(torch.tensor(c), ts, torch.tensor(b)))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        jt.mm(s, jt.tensor(a))
    with pytest.raises(RuntimeError, match="same dtype"):
        jt.mm(s, jt.tensor(b).double())


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 5), st.integers(0, 30),
       st.sampled_from(["float32", "float64", "int64"]), st.integers(0, 2**31))
def test_products_of_random_matrices_match_torch(m, k, n, nnz, dtype, seed):
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, m, nnz), rng.integers(0, k, nnz)])
    val = rng.integers(-4, 5, nnz).astype(dtype)  # (small integers: sums are exact)
    b = rng.integers(-4, 5, (k, n)).astype(dtype)
    a = rng.integers(-4, 5, (n, m)).astype(dtype)
    s = jt.sparse_coo_tensor(idx, val, (m, k))
    ts = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(val), (m, k))
    same(s @ jt.tensor(b), ts @ torch.tensor(b))
    same(jt.tensor(a) @ s, torch.tensor(a) @ ts)
    same(s.t() @ jt.tensor(a.T.copy()), ts.t() @ torch.tensor(a.T.copy()))
    same((s.t() @ s.to_dense()), (ts.t() @ ts.to_dense()))


def test_gradients_reach_dense_operands():
    s, ts = pair()
    rng = np.random.default_rng(1)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    a = rng.standard_normal((5, 2)).astype(np.float32)
    d = rng.standard_normal((2, 3)).astype(np.float32)
    jb, ja, jd = (jt.tensor(x, requires_grad=True) for x in (b, a, d))
    tb, ta, tdd = (torch.tensor(x, requires_grad=True) for x in (b, a, d))
    loss = (jt.mm(s, jb) ** 2).sum() + (ja @ s).sum() + ((jd + s) ** 2).sum() + \
        jt.spmm(s, jb).sum() + (jt.sparse.mm(s, jb) ** 3).sum() + (s @ jb).mean()
    tloss = (torch.mm(ts, tb) ** 2).sum() + (ta @ ts).sum() + ((tdd + ts) ** 2).sum() + \
        torch.spmm(ts, tb).sum() + (torch.sparse.mm(ts, tb) ** 3).sum() + (ts @ tb).mean()
    loss.backward()
    tloss.backward()
    for x, y in zip((jb, ja, jd), (tb, ta, tdd), strict=True):
        same(x.grad, y.grad)
    with pytest.raises(NotImplementedError, match="gradient"):
        s * jd


def test_dense_only_ops_raise_not_implemented():
    s, _ = pair()
    for op in (lambda: s.view(6), lambda: s[0], lambda: jt.cat([s, s]), lambda: s.mean()):
        with pytest.raises(NotImplementedError, match="to_dense"):
            op()


def test_kernels_same_bits_at_any_thread_count():
    rng = np.random.default_rng(2)
    m, k, n, nnz = 700, 500, 40, 20000  # parallel above the kernels' serial threshold
    idx = np.stack([rng.integers(0, m, nnz), rng.integers(0, k, nnz)])
    s = jt.sparse_coo_tensor(idx, rng.standard_normal(nnz).astype(np.float32), (m, k))
    d = jt.tensor(rng.standard_normal((k, n)).astype(np.float32))
    # ~10 entries at each position, with 16 values each: duplicates summed in parallel
    crowded = jt.sparse_coo_tensor(idx % 45, rng.standard_normal((nnz, 16)).astype(np.float32))
    before = jt.get_num_threads()
    try:
        jt.set_num_threads(1)
        one = jt.mm(s, d).numpy(), crowded.coalesce()._values().numpy()
        jt.set_num_threads(max(before, 2))
        many = jt.mm(s, d).numpy(), crowded.coalesce()._values().numpy()
    finally:
        jt.set_num_threads(before)
    for a, b in zip(one, many, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(one[0], s.to_dense().numpy() @ d.numpy(), rtol=1e-4, atol=1e-4)
    theirs = torch.sparse_coo_tensor(torch.tensor(idx % 45),
                                     torch.tensor(crowded._values().numpy()))
    np.testing.assert_allclose(one[1], theirs.coalesce().values().numpy(), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.cuda
@pytest.mark.slow
@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
def test_cuda_matches_cpu():
    s, _ = pair()
    b = jt.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    g = s.to("cuda")
    assert g.device.type == "cuda" and g._values().device.type == "cuda"
    a = jt.tensor(np.arange(10, dtype=np.float32).reshape(5, 2))
    for mine, want in ((jt.mm(g, b.cuda()), jt.mm(s, b)), (g.coalesce(), s.coalesce()),
                       (a.cuda() @ g, a @ s), (g.coalesce().t() @ a.t().cuda(), s.t() @ a.t()),
                       (jt.ones(2, 3, device="cuda") + g, jt.ones(2, 3) + s),
                       (jt.sum(g, 1), jt.sum(s, 1)), (jt.sparse.softmax(g, 1),
                                                      jt.sparse.softmax(s, 1)),
                       (g.to_dense().to_sparse(), s.to_dense().to_sparse())):
        assert mine.device.type == "cuda"
        back = mine.cpu()
        assert back.is_sparse == want.is_sparse
        np.testing.assert_allclose((back.to_dense() if back.is_sparse else back).numpy(),
                                   (want.to_dense() if want.is_sparse else want).numpy(),
                                   rtol=1e-6)


def test_save_and_load_in_torchs_format(tmp_path):
    s, ts = pair()
    jt.save({"adj": s, "c": s.coalesce()}, tmp_path / "mine.pt")
    theirs = torch.load(tmp_path / "mine.pt", weights_only=True)
    assert theirs["adj"].layout is torch.sparse_coo
    same(s, theirs["adj"])
    same(s.coalesce(), theirs["c"])
    torch.save({"adj": ts, "c": ts.coalesce()}, tmp_path / "theirs.pt")
    back = jt.load(tmp_path / "theirs.pt")
    same(back["adj"], ts)
    same(back["c"], ts.coalesce())


def test_dense_side_of_the_sparse_methods():
    d, td = jt.ones(2, 3), torch.ones(2, 3)
    for name in ("coalesce", "is_coalesced", "indices", "values"):
        with pytest.raises(RuntimeError) as mine:
            getattr(d, name)()
        with pytest.raises(RuntimeError) as theirs:
            getattr(td, name)()
        assert str(mine.value) == str(theirs.value)
    assert d.sparse_dim() == td.sparse_dim() == 0
    s, ts = pair()
    same(jt.arange(6.0).reshape(2, 3).sparse_mask(s),
         torch.arange(6.0).reshape(2, 3).sparse_mask(ts))
    mine, theirs = jt.ones(2, 3), torch.ones(2, 3)
    mine += s
    theirs += ts
    same(mine, theirs)
    same(jt.ones(2, 3).mul_(s), torch.ones(2, 3).mul_(ts))


def test_empty_sparse_tensors_and_in_place_ops():
    for mine, theirs in ((jt.zeros(2, 3, layout=jt.sparse_coo),
                          torch.zeros(2, 3, layout=torch.sparse_coo)),
                         (jt.empty(2, 3, layout=jt.sparse_coo),
                          torch.empty(2, 3, layout=torch.sparse_coo)),
                         (jt.sparse_coo_tensor((2, 3)), torch.sparse_coo_tensor((2, 3))),
                         (jt.zeros_like(pair()[0]), torch.zeros_like(pair()[1]))):
        assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")
    for op in (lambda a, b: a.mul_(2), lambda a, b: a.div_(4), lambda a, b: a.zero_(),
               lambda a, b: a.add_(a.coalesce()), lambda a, b: a.sub_(a)):
        (s, ts), _ = pair(), None
        assert op(s, None) is s
        op(ts, None)
        same(s.to_dense(), ts.to_dense())
    with pytest.raises(NotImplementedError, match="sparse"):
        jt.ones_like(pair()[0])


def test_products_follow_in_place_edits_of_indices_and_values():
    """What products keep of a matrix's structure (its sorted transpose, its row starts) is
    made again once its indices change, and never holds values."""
    s = jt.sparse_coo_tensor([[0, 1, 2, 2], [1, 0, 2, 0]], [1.0, 2.0, 3.0, 4.0], (3, 3))
    s = s.coalesce()
    d = jt.tensor(np.arange(9, dtype=np.float32).reshape(3, 3))
    for _ in range(2):
        for got, want in ((s @ d, s.to_dense() @ d), (s.t() @ d, s.to_dense().t() @ d),
                          (d @ s, d @ s.to_dense())):
            np.testing.assert_allclose(got.numpy(), want.numpy())
        s._values().mul_(2)
        s._indices()[1].copy_(jt.tensor([2, 1, 0, 1]))  # (still sorted, no position twice)


def test_legacy_sparse_types():
    with pytest.warns(UserWarning, match="deprecated"):
        s = jt.sparse.FloatTensor(jt.tensor(IDX), jt.tensor(VAL), jt.Size([2, 3]))
    with pytest.warns(UserWarning, match="deprecated"):
        ts = torch.sparse.FloatTensor(torch.tensor(IDX), torch.tensor(VAL), torch.Size([2, 3]))
    same(s, ts)
    assert isinstance(s, jt.sparse.FloatTensor) and not isinstance(s, jt.FloatTensor)
    assert not isinstance(jt.ones(2), jt.sparse.FloatTensor)
    assert s.type() == ts.type().replace("torch.", "jitensor.")
    with pytest.warns(UserWarning, match="deprecated"):
        inferred = jt.sparse.DoubleTensor(jt.tensor(IDX), jt.tensor(VAL))
    assert inferred.dtype is jt.float64 and inferred.shape == (2, 3)
    assert all(type(n) is int for n in inferred.shape)
    with pytest.warns(UserWarning, match="deprecated"):
        assert jt.sparse.LongTensor(2, 3).shape == (2, 3)
