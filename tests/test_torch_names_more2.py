"""More of torch's names, each against torch: matrix_exp, geqrf/orgqr/ormqr, torch.signal.windows,
gradient, histogramdd, nonzero_static, binomial, segment_reduce, cond/while_loop,
svd_lowrank/pca_lowrank, embedding_renorm_, ctc_loss, conv_tbc, set_default_tensor_type,
init_num_threads and the torch.types/functional/overrides modules."""
import importlib
import threading
import warnings

import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def J(t, **kw):
    return jt.tensor(t.detach().numpy(), **kw)


def close(theirs, mine, tol=1e-6):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol, equal_nan=True)
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


# -- matrix_exp ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 2e-6)])
def test_matrix_exp_matches_torch_at_every_degree(dtype, tol):
    g = torch.Generator().manual_seed(0)
    # one batch whose matrices fall in each degree's norm interval and beyond (scaled)
    scales = [1e-9, 1e-5, 1e-3, 0.02, 0.2, 0.8, 3.0, 20.0]
    A = torch.stack([torch.randn(4, 4, generator=g, dtype=torch.float64) * s for s in scales])
    A = A.to(getattr(torch, dtype))
    theirs, mine = torch.matrix_exp(A), jt.matrix_exp(J(A))
    scale = theirs.abs().amax((-2, -1), keepdim=True)
    np.testing.assert_allclose((mine.numpy() / scale.numpy()), (theirs / scale).numpy(),
                               atol=tol, rtol=0)
    assert mine.dtype is getattr(jt, dtype)
    close(torch.matrix_exp(A[2]), J(A[2]).matrix_exp(), tol * 10)
    close(torch.linalg.matrix_exp(A[:2].reshape(2, 1, 4, 4)),
          jt.linalg.matrix_exp(J(A[:2].reshape(2, 1, 4, 4))), tol * 10)


def test_matrix_exp_small_and_errors():
    x = torch.tensor([[[0.5]], [[-2.0]]], dtype=torch.float64)
    close(torch.matrix_exp(x), jt.matrix_exp(J(x)))
    close(torch.matrix_exp(torch.zeros(0, 3, 3)), jt.matrix_exp(jt.zeros(0, 3, 3)))
    for bad, message in ((jt.ones(3), "dim at least 2"), (jt.ones(2, 3), "squared matrices"),
                         (jt.ones(2, 2, dtype=jt.int64), "floating or complex")):
        with pytest.raises(RuntimeError, match=message):
            jt.matrix_exp(bad)
    with pytest.raises(RuntimeError, match="floating"):
        torch.matrix_exp(torch.ones(2, 2, dtype=torch.int64))


def test_matrix_exp_gradient_matches_torch():
    g = torch.Generator().manual_seed(1)
    A = (torch.randn(2, 3, 3, generator=g, dtype=torch.float64) * 0.7).requires_grad_()
    G = torch.randn(2, 3, 3, generator=g, dtype=torch.float64)
    torch.matrix_exp(A).backward(G)
    jA = J(A, requires_grad=True)
    out = jt.matrix_exp(jA)
    assert out.grad_fn is not None
    out.backward(J(G))
    close(A.grad, jA.grad, 1e-10)
    assert jt.autograd.gradcheck(jt.matrix_exp, (J(A[0].detach(), requires_grad=True),))


# -- geqrf / orgqr / ormqr ----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 5, 3), (12, 10), (3, 4)])
def test_geqrf_orgqr_ormqr_match_torch(shape):
    g = torch.Generator().manual_seed(2)
    X = torch.randn(*shape, generator=g, dtype=torch.float64)
    a, tau = torch.geqrf(X)
    ja, jtau = jt.geqrf(J(X))
    close(a, ja, 1e-12)
    close(tau, jtau, 1e-12)
    assert jt.geqrf(J(X)).a is not None and J(X).geqrf().tau.shape == jtau.shape
    m, n = shape[-2:]
    if m >= n:
        close(torch.orgqr(a, tau), jt.orgqr(ja, jtau), 1e-12)
        close(torch.linalg.householder_product(a, tau), J(a).orgqr(jtau), 1e-12)
    batch = shape[:-2]
    C = torch.randn(*batch, m, 4, generator=g, dtype=torch.float64)
    D = torch.randn(*batch, 4, m, generator=g, dtype=torch.float64)
    for left in (True, False):
        for transpose in (False, True):
            other = C if left else D
            close(torch.ormqr(a, tau, other, left, transpose),
                  jt.ormqr(ja, jtau, J(other), left, transpose), 1e-12)


def test_householder_gradients_and_errors():
    g = torch.Generator().manual_seed(3)
    a, tau = torch.geqrf(torch.randn(5, 3, generator=g, dtype=torch.float64))
    a.requires_grad_()
    tau.requires_grad_()
    G = torch.randn(5, 3, generator=g, dtype=torch.float64)
    torch.orgqr(a, tau).backward(G)
    ja, jtau = J(a, requires_grad=True), J(tau, requires_grad=True)
    jt.orgqr(ja, jtau).backward(J(G))
    close(a.grad, ja.grad, 1e-10)
    close(tau.grad, jtau.grad, 1e-10)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        jt.geqrf(jt.ones(3))
    with pytest.raises(RuntimeError, match="greater than or equal"):
        jt.orgqr(jt.ones(2, 3, dtype=jt.float64), jt.ones(2, dtype=jt.float64))
    with pytest.raises(RuntimeError, match="other.shape"):
        jt.ormqr(jt.ones(4, 2, dtype=jt.float64), jt.ones(2, dtype=jt.float64),
                 jt.ones(3, 3, dtype=jt.float64))


# -- torch.signal.windows -----------------------------------------------------------------------
WINDOWS = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


@pytest.mark.parametrize("name", WINDOWS)
def test_signal_windows_match_torch(name):
    import torch.signal.windows as tw

    import jitensor.signal.windows as jw
    extra = {"general_cosine": {"a": [0.5, 0.3, 0.2]}, "kaiser": {"beta": 5.0},
             "gaussian": {"std": 2.0}, "exponential": {"tau": 3.0},
             "general_hamming": {"alpha": 0.6}}.get(name, {})
    for M in (0, 1, 2, 7, 8):
        for sym in (True, False):
            for dtype in ("float32", "float64"):
                theirs = getattr(tw, name)(M, sym=sym, dtype=getattr(torch, dtype), **extra)
                mine = getattr(jw, name)(M, sym=sym, dtype=getattr(jt, dtype), **extra)
                close(theirs, mine, 1e-6)
    assert getattr(jw, name)(4, **extra).dtype is jt.get_default_dtype()
    assert getattr(jw, name)(4, requires_grad=True, **extra).requires_grad
    with pytest.raises(ValueError, match="non-negative window length"):
        getattr(jw, name)(-1, **extra)
    with pytest.raises(ValueError, match="float32 or float64"):
        getattr(jw, name)(3, dtype=jt.int64, **extra)


def test_signal_window_argument_errors_and_module_aliases():
    from jitensor.run import _TorchAlias
    from jitensor.signal import windows as jw
    with pytest.raises(ValueError, match="Tau must be positive"):
        jw.exponential(3, tau=0)
    with pytest.raises(ValueError, match="Center must be None"):
        jw.exponential(3, center=1.0)
    close(torch.signal.windows.exponential(5, center=1.0, sym=False),
          jw.exponential(5, center=1.0, sym=False))
    with pytest.raises(ValueError, match="Standard deviation"):
        jw.gaussian(3, std=0)
    with pytest.raises(ValueError, match="beta must be non-negative"):
        jw.kaiser(3, beta=-1)
    with pytest.raises(TypeError, match="Coefficients"):
        jw.general_cosine(3, a=None)
    with pytest.raises(ValueError, match="cannot be empty"):
        jw.general_cosine(3, a=[])
    # `import torch.signal.windows` under jitensor.run finds jitensor's module
    spec = importlib.util.spec_from_loader("torch.signal.windows", _TorchAlias())
    assert _TorchAlias().create_module(spec) is jw
    assert jt.signal.windows is jw


# -- gradient -----------------------------------------------------------------------------------
def test_gradient_matches_torch():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(4, 5, generator=g, dtype=torch.float64)
    coords0 = torch.tensor([0.0, 1.0, 3.0, 4.5], dtype=torch.float64)
    coords1 = torch.tensor([0.0, 0.5, 2.0, 2.5, 4.0], dtype=torch.float64)
    cases = [({}, {}), ({"spacing": 2.0}, {"spacing": 2.0}),
             ({"spacing": [2.0, 0.5]}, {"spacing": [2.0, 0.5]}),
             ({"dim": 1, "edge_order": 2}, {"dim": 1, "edge_order": 2}),
             ({"spacing": (coords0,), "dim": 0}, {"spacing": (J(coords0),), "dim": 0}),
             ({"spacing": (coords0, coords1), "edge_order": 2},
              {"spacing": (J(coords0), J(coords1)), "edge_order": 2})]
    for kw, jkw in cases:
        theirs, mine = torch.gradient(x, **kw), jt.gradient(J(x), **jkw)
        assert isinstance(mine, tuple) and len(mine) == len(theirs)
        for a, b in zip(theirs, mine, strict=True):
            close(a, b, 1e-12)
    xi = torch.tensor([1, 4, 9, 16])
    for kw in ({}, {"spacing": 2}):
        close(torch.gradient(xi, **kw)[0], jt.gradient(J(xi), **kw)[0])
    # differentiable, as torch's
    jx = J(x, requires_grad=True)
    sum(t.sum() for t in jt.gradient(jx, edge_order=2)).backward()
    tx = x.clone().requires_grad_()
    sum(t.sum() for t in torch.gradient(tx, edge_order=2)).backward()
    close(tx.grad, jx.grad, 1e-12)


def test_gradient_errors():
    x = jt.ones(3, 3)
    with pytest.raises(RuntimeError, match="edge_order=1 and edge_order=2"):
        jt.gradient(x, edge_order=3)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        jt.gradient(jt.ones(2), edge_order=2)
    with pytest.raises(RuntimeError, match="same length"):
        jt.gradient(x, spacing=[2.0], dim=[0, 1])
    with pytest.raises(RuntimeError, match="list of length equal to 'self.dim\\(\\) = 2'"):
        jt.gradient(x, spacing=[2.0])


# -- histogramdd, nonzero_static ----------------------------------------------------------------
def test_histogramdd_matches_torch():
    g = torch.Generator().manual_seed(5)
    p = torch.randn(60, 2, generator=g, dtype=torch.float64)
    w = torch.rand(60, generator=g, dtype=torch.float64)
    e0 = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64)
    e1 = torch.tensor([-2.0, 0.0, 0.5, 2.0], dtype=torch.float64)
    cases = [({"bins": 3}, {"bins": 3}),
             ({"bins": [3, 4], "range": [-1.0, 1.0, -2.0, 2.0]},
              {"bins": [3, 4], "range": [-1.0, 1.0, -2.0, 2.0]}),
             ({"bins": [e0, e1]}, {"bins": [J(e0), J(e1)]}),
             ({"bins": 4, "weight": w, "density": True},
              {"bins": 4, "weight": J(w), "density": True})]
    for kw, jkw in cases:
        theirs, mine = torch.histogramdd(p, **kw), jt.histogramdd(J(p), **jkw)
        close(theirs.hist, mine.hist, 1e-12)
        for a, b in zip(theirs.bin_edges, mine.bin_edges, strict=True):
            close(a, b, 1e-12)
    with pytest.raises(RuntimeError, match="range should have 4 elements"):
        jt.histogramdd(J(p), bins=2, range=[0.0, 1.0])
    assert jt.histogram is not None and jt.histc is not None


def test_nonzero_static_matches_torch():
    t = torch.tensor([[0, 1], [2, 0]])
    close(torch.nonzero_static(t, size=4), jt.nonzero_static(J(t), size=4))
    close(torch.nonzero_static(t, size=1, fill_value=7), J(t).nonzero_static(size=1,
                                                                             fill_value=7))
    close(torch.nonzero_static(torch.tensor(3.0), size=2),
          jt.nonzero_static(jt.tensor(3.0), size=2))
    with pytest.raises(RuntimeError, match="non-negative integer"):
        jt.nonzero_static(J(t), size=-1)


# -- binomial -----------------------------------------------------------------------------------
def test_binomial_statistics_and_reproducibility():
    counts = jt.tensor([5.0, 40.0, 1000.0, 20.0, 0.0, 7.0, 9.0])
    probs = jt.tensor([0.3, 0.5, 0.1, 0.9, 0.4, 0.0, 1.0])
    c, p = counts.expand(20000, 7).contiguous(), probs.expand(20000, 7).contiguous()
    jt.manual_seed(0)
    s = jt.binomial(c, p)
    assert s.dtype is jt.float32 and s.shape == (20000, 7)
    mean, var = counts * probs, counts * probs * (1 - probs)
    np.testing.assert_allclose(s.mean(0).numpy(), mean.numpy(), atol=0.05 * 4 + 1e-6,
                               rtol=0.01)
    np.testing.assert_allclose(s.var(0).numpy(), var.numpy(), rtol=0.05, atol=1e-6)
    assert ((s >= 0) & (s <= c) & (s == s.floor())).all()
    jt.manual_seed(0)
    assert (jt.binomial(c, p) == s).all()
    gen = jt.Generator().manual_seed(3)
    a = jt.binomial(c[:10], p[:10], generator=gen)
    assert (a == jt.binomial(c[:10], p[:10], generator=jt.Generator().manual_seed(3))).all()
    # torch's dtype rules
    with pytest.raises(ValueError, match="floating-point dtypes for count"):
        jt.binomial(jt.tensor([3]), jt.tensor([0.5]))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        jt.binomial(jt.tensor([3.0]), jt.tensor([0.5], dtype=jt.float64))
    with pytest.raises(ValueError, match="floating-point dtypes for count"):
        torch.binomial(torch.tensor([3]), torch.tensor([0.5]))


# -- segment_reduce -----------------------------------------------------------------------------
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce_matches_torch(reduce):
    d = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=torch.float64)
    lengths = torch.tensor([2, 0, 3])
    close(torch.segment_reduce(d, reduce, lengths=lengths),
          jt.segment_reduce(J(d), reduce, lengths=J(lengths)))
    close(torch.segment_reduce(d, reduce, lengths=lengths, initial=10.0),
          jt.segment_reduce(J(d), reduce, lengths=J(lengths), initial=10.0))
    offsets = torch.tensor([0, 2, 2, 5])
    close(torch.segment_reduce(d, reduce, offsets=offsets),
          jt.segment_reduce(J(d), reduce, offsets=J(offsets)))
    d2 = torch.arange(10.0, dtype=torch.float64).reshape(5, 2) - 3
    close(torch.segment_reduce(d2, reduce, lengths=lengths),
          jt.segment_reduce(J(d2), reduce, lengths=J(lengths)))
    rows = lengths.expand(2, 3).contiguous()
    close(torch.segment_reduce(d2.T.contiguous(), reduce, lengths=rows, axis=1),
          jt.segment_reduce(J(d2.T.contiguous()), reduce, lengths=J(rows), axis=1))
    if reduce in ("sum", "mean", "max"):  # the gradient (no empty segment: torch's is 0 there)
        L = torch.tensor([2, 3])
        x = torch.tensor([1.0, 3.0, 2.0, 5.0, 4.0], dtype=torch.float64, requires_grad=True)
        torch.segment_reduce(x, reduce, lengths=L).backward(torch.tensor([1.0, 2.0],
                                                                         dtype=torch.float64))
        jx = J(x, requires_grad=True)
        jt.segment_reduce(jx, reduce, lengths=J(L)).backward(jt.tensor([1.0, 2.0],
                                                                       dtype=jt.float64))
        close(x.grad, jx.grad)


def test_segment_reduce_errors():
    d = jt.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="sum to data.size"):
        jt.segment_reduce(d, "sum", lengths=jt.tensor([1, 1]))
    with pytest.raises(RuntimeError, match="reduce argument must be"):
        jt.segment_reduce(d, "avg", lengths=jt.tensor([3]))
    with pytest.raises(RuntimeError, match="Either lengths or offsets"):
        jt.segment_reduce(d, "sum")
    with pytest.raises(RuntimeError, match="negative value"):
        jt.segment_reduce(d, "sum", lengths=jt.tensor([4, -1]))
    with pytest.raises(NotImplementedError, match="Long"):
        jt.segment_reduce(jt.tensor([1, 2]), "sum", lengths=jt.tensor([2]))
    # unsafe skips the checks
    assert jt.segment_reduce(d, "sum", lengths=jt.tensor([1, 2]), unsafe=True).tolist() == \
        [1.0, 5.0]


# -- cond / while_loop --------------------------------------------------------------------------
def test_cond_eager_semantics_and_errors():
    x = jt.tensor([0.5, 1.0])
    close(torch.cond(torch.tensor(False), torch.sin, torch.cos, (torch.tensor([0.5, 1.0]),)),
          jt.cond(jt.tensor(False), jt.sin, jt.cos, (x,)))
    assert (jt.cond(True, lambda a: a + 1, lambda a: a - 1, [x]) == x + 1).all()
    y = x.clone().requires_grad_()
    jt.cond(jt.tensor(1), lambda a: (a * a).sum(), lambda a: a.sum(), (y,)).backward()
    assert y.grad.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="single-element tensor"):
        jt.cond(jt.tensor([True, False]), jt.sin, jt.cos, (x,))
    with pytest.raises(RuntimeError, match="Expected pred to be bool or tensor"):
        jt.cond("a", jt.sin, jt.cos, (x,))
    with pytest.raises(RuntimeError, match="tensor leaves"):
        jt.cond(True, jt.sin, jt.cos, x)
    with pytest.raises(RuntimeError, match="callable"):
        jt.cond(True, 1, jt.cos, (x,))
    with pytest.raises(RuntimeError, match="aliasing"):
        jt.cond(jt.tensor(True), lambda a: a, lambda a: a.clone(), (x,))


def test_while_loop_eager_semantics_and_errors():
    i, a = jt.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 2),
                         (jt.tensor(0), jt.ones(2)))
    ti, ta = torch.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 2),
                              (torch.tensor(0), torch.ones(2)))
    close(ti, i)
    close(ta, a)
    with pytest.raises(RuntimeError, match="same number of outputs"):
        jt.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1,), (jt.tensor(0), jt.ones(2)))
    with pytest.raises(RuntimeError, match="same metadata"):
        jt.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a.double()),
                      (jt.tensor(0), jt.ones(2)))
    with pytest.raises(RuntimeError, match="infinite loop"):
        jt.while_loop(lambda i, a: True, lambda i, a: (i + 1, a), (jt.tensor(0), jt.ones(2)))
    with pytest.raises(RuntimeError, match="aliasing"):
        jt.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a), (jt.tensor(0), jt.ones(2)))


# -- low-rank -----------------------------------------------------------------------------------
def test_svd_lowrank_and_pca_lowrank():
    g = torch.Generator().manual_seed(6)
    A = torch.randn(20, 3, generator=g, dtype=torch.float64) @ \
        torch.randn(3, 12, generator=g, dtype=torch.float64)
    jt.manual_seed(0)
    for X in (A, A.T.contiguous()):
        U, S, V = jt.svd_lowrank(J(X), q=5)
        assert U.shape == (X.shape[0], 5) and S.shape == (5,) and V.shape == (X.shape[1], 5)
        np.testing.assert_allclose(((U * S) @ V.T).numpy(), X.numpy(), atol=1e-10)
        np.testing.assert_allclose(S[:3].numpy(), torch.linalg.svdvals(X)[:3].numpy(),
                                   rtol=1e-10)
        np.testing.assert_allclose((U.T @ U).numpy(), np.eye(5), atol=1e-10)
    U, S, V = jt.pca_lowrank(J(A))
    centred = A - A.mean(0, keepdim=True)
    np.testing.assert_allclose(S[:3].numpy(), torch.linalg.svdvals(centred)[:3].numpy(),
                               rtol=1e-10)
    assert S.shape == (6,)
    with pytest.raises(ValueError, match="must be non-negative integer"):
        jt.pca_lowrank(J(A), q=13)
    assert jt.functional.svd_lowrank is jt.svd_lowrank


# -- nn natives ---------------------------------------------------------------------------------
def test_embedding_renorm_ctc_loss_conv_tbc_match_torch():
    g = torch.Generator().manual_seed(7)
    W = torch.randn(6, 3, generator=g) * 3
    index = torch.tensor([0, 2, 2, 5])
    mine = J(W)
    assert jt.embedding_renorm_(mine, J(index), 1.0, 2.0) is mine
    torch.embedding_renorm_(W, index, 1.0, 2.0)
    close(W, mine, 1e-5)

    log_probs = torch.randn(6, 2, 4, generator=g).log_softmax(2)
    targets = torch.tensor([[1, 2], [3, 1]])
    for reduction in (0, 1, 2):
        close(torch.ctc_loss(log_probs, targets, [6, 5], [2, 1], 0, reduction),
              jt.ctc_loss(J(log_probs), J(targets), [6, 5], [2, 1], 0, reduction), 1e-5)

    x = torch.randn(7, 2, 3, generator=g, requires_grad=True)
    w = torch.randn(3, 3, 4, generator=g, requires_grad=True)
    b = torch.randn(4, generator=g, requires_grad=True)
    jx, jw, jb = (J(t, requires_grad=True) for t in (x, w, b))
    theirs, mine = torch.conv_tbc(x, w, b, 1), jt.conv_tbc(jx, jw, jb, 1)
    close(theirs, mine, 1e-5)
    theirs.sum().backward()
    mine.sum().backward()
    for t, m in ((x, jx), (w, jw), (b, jb)):
        close(t.grad, m.grad, 1e-5)
    with pytest.raises(RuntimeError, match="Input must have 3 dims"):
        jt.conv_tbc(jt.ones(2, 3), jw, jb)


# -- settings -----------------------------------------------------------------------------------
def test_set_default_tensor_type_and_init_num_threads():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            jt.set_default_tensor_type(jt.DoubleTensor)
        assert jt.get_default_dtype() is jt.float64 and jt.ones(1).dtype is jt.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jt.set_default_tensor_type("torch.FloatTensor")
            assert jt.get_default_dtype() is jt.float32
            with pytest.raises(TypeError, match="floating-point"):
                jt.set_default_tensor_type(jt.LongTensor)
    finally:
        jt.set_default_dtype(jt.float32)
    before = jt.get_num_threads()
    try:
        jt.set_num_threads(1)
        seen = []

        def worker():
            jt.init_num_threads()
            seen.append(jt.get_num_threads())
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert seen == [1]
    finally:
        jt.set_num_threads(before)


# -- torch.types / torch.functional / torch.overrides -------------------------------------------
def test_types_functional_overrides_modules():
    import torch.overrides as to

    assert jt.types.Number == int | float | bool
    assert set(jt.types.__all__) == {"Device", "FileLike", "Number", "Storage"}
    for name in jt.functional.__all__:
        assert getattr(jt.functional, name) is getattr(jt, name)
    assert set(jt.functional.__all__) <= set(importlib.import_module("torch.functional")
                                             .__all__)

    class TensorLike:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("handled", func.__name__, types)

    def fn(a):
        if jt.nn.functional.has_torch_function_unary(a):
            return jt.nn.functional.handle_torch_function(fn, (a,), a)
        return a + 1

    def tfn(a):
        if to.has_torch_function_unary(a):
            return to.handle_torch_function(tfn, (a,), a)
        return a + 1

    assert fn(TensorLike())[:2] == ("handled", "fn")
    assert tfn(TensorLike())[:2] == ("handled", "tfn")
    assert fn(jt.ones(1)).tolist() == [2.0]
    assert not jt.overrides.has_torch_function((jt.ones(1), 3))
    assert jt.overrides.has_torch_function_variadic(jt.ones(1), TensorLike())
    assert jt.overrides.is_tensor_like(jt.ones(1)) and jt.overrides.is_tensor_like(TensorLike())
    assert not jt.overrides.is_tensor_like(3)
    assert jt.overrides.resolve_name(jt.add) == to.resolve_name(torch.add) == "torch.add"

    class Refuses:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(TypeError, match="no implementation found"):
        fn(Refuses())

    @jt.overrides.wrap_torch_function(lambda a: (a,))
    def wrapped(a):
        return a * 2

    assert wrapped(TensorLike())[0] == "handled" and wrapped(jt.ones(1)).tolist() == [2.0]
    assert jt.autograd.has_torch_function is jt.overrides.has_torch_function
