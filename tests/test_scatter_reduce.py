"""scatter_reduce, index_reduce, index_put, put, masked_scatter, the *_scatter ops,
fill_diagonal_, as_strided, unfold, resize_, frexp, renorm and the other tensor-level ops of
issue #30 part 5: torch is the oracle for values, gradients and which calls raise; one CUDA
case (the simulator without a GPU) per family."""
import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _close(got, want, exact=False):
    got = got.detach().cpu().numpy() if isinstance(got, jt.Tensor) else np.asarray(got)
    want = want.detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _raises_as_torch(jt_call, torch_call, gist):
    with pytest.raises(Exception) as want:
        torch_call()
    with pytest.raises(type(want.value), match=gist):
        jt_call()


@st.composite
def _case(draw):
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    dim = draw(st.integers(-ndim, ndim - 1))
    index_shape = [draw(st.integers(1, n)) if d != dim % ndim else draw(st.integers(1, 6))
                   for d, n in enumerate(shape)]
    return shape, dim, index_shape, draw(st.integers(0, 2 ** 32 - 1))


@settings(deadline=None, max_examples=30)
@given(_case(), st.sampled_from(["sum", "prod", "mean", "amax", "amin"]), st.booleans(),
       st.sampled_from([np.float32, np.float64, np.int64]))
def test_scatter_reduce_matches_torch(case, reduce, include_self, dtype):
    shape, dim, index_shape, seed = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-4, 5, shape).astype(dtype)  # small integers: duplicates, exact products
    src = rng.integers(-4, 5, index_shape).astype(dtype)
    index = rng.integers(0, shape[dim], index_shape)
    got = jt.tensor(x).scatter_reduce(dim, jt.tensor(index), jt.tensor(src), reduce,
                                      include_self=include_self)
    want = torch.tensor(x).scatter_reduce(dim, torch.tensor(index), torch.tensor(src), reduce,
                                          include_self=include_self)
    _close(got, want, exact=dtype == np.int64 or reduce in ("amax", "amin"))
    inplace = jt.tensor(x)
    inplace.scatter_reduce_(dim, jt.tensor(index), jt.tensor(src), reduce,
                            include_self=include_self)
    _close(inplace, want, exact=dtype == np.int64 or reduce in ("amax", "amin"))


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_match_torch(reduce, include_self):
    x = np.array([[1., 5, 3], [2, 2, 7]])
    src = np.array([[4., 5, 1], [2, 9, 3], [6, 1, 1]])
    index = np.array([[0, 1, 0], [1, 0, 1], [0, 0, 1]])
    weight = np.arange(6.).reshape(2, 3)
    grads = []
    for lib in (jt, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(src, requires_grad=True)
        out = a.scatter_reduce(0, lib.tensor(index), b, reduce, include_self=include_self)
        (out * lib.tensor(weight)).sum().backward()
        grads.append((a.grad, b.grad))
    _close(grads[0][0], grads[1][0])
    _close(grads[0][1], grads[1][1])


def test_scatter_reduce_gradcheck_and_nan():
    a = jt.tensor([[0.3, -1.2], [0.7, 2.0]], dtype=jt.float64, requires_grad=True)
    s = jt.tensor([[1.5, -0.4], [0.1, 0.9]], dtype=jt.float64, requires_grad=True)
    index = jt.tensor([[1, 0], [1, 1]])
    for reduce in ("sum", "mean", "amax"):
        assert jt.autograd.gradcheck(lambda a, s, r=reduce: a.scatter_reduce(0, index, s, r),
                                     (a, s))
    nan = jt.tensor([1.0, float("nan"), 2.0])
    got = jt.zeros(2).scatter_reduce(0, jt.tensor([0, 0, 1]), nan, "amax")
    _close(got, torch.zeros(2).scatter_reduce(0, torch.tensor([0, 0, 1]),
                                              torch.tensor([1.0, float("nan"), 2.0]), "amax"))


def test_scatter_reduce_is_the_same_at_any_thread_count():
    rng = np.random.default_rng(0)
    src = jt.tensor(rng.standard_normal(20000).astype(np.float32))
    index = jt.tensor(rng.integers(0, 7, 20000))
    before = jt.get_num_threads()
    try:
        outs = []
        for n in (1, max(before, 2)):
            jt.set_num_threads(n)
            outs.append([jt.zeros(7).scatter_reduce(0, index, src, r).numpy()
                         for r in ("sum", "prod", "mean", "amax")] +
                        [jt.zeros(7).index_put((index,), src, accumulate=True).numpy()])
    finally:
        jt.set_num_threads(before)
    for a, b in zip(*outs, strict=True):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch(reduce, include_self):
    x = np.arange(12.).reshape(3, 4) - 5
    src = np.array([[1., 2, -3, 4], [5, -6, 7, 8], [0.5, 9, 1, -2]])
    index = np.array([0, 2, 0])
    got_grads = []
    results = []
    for lib in (jt, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(src, requires_grad=True)
        out = a.index_reduce(0, lib.tensor(index), b, reduce, include_self=include_self)
        results.append(out)
        if reduce != "prod":
            out.sum().backward()
            got_grads.append((a.grad, b.grad))
    _close(*results)
    if got_grads:
        _close(got_grads[0][0], got_grads[1][0])
        _close(got_grads[0][1], got_grads[1][1])
    _raises_as_torch(lambda: jt.ones(3).index_reduce(0, jt.tensor([0]), jt.ones(1), "sum"),
                     lambda: torch.ones(3).index_reduce(0, torch.tensor([0]), torch.ones(1),
                                                        "sum"), "prod, mean, amax or amin")


@settings(deadline=None, max_examples=25)
@given(st.integers(1, 5), st.integers(1, 4), st.integers(1, 8), st.booleans(),
       st.integers(0, 2 ** 32 - 1))
def test_index_put_matches_torch(rows, cols, n, accumulate, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols))
    i = rng.integers(-rows, rows, n)  # negative indices and duplicates
    j = rng.integers(0, cols, (1, n))  # broadcast against i
    values = rng.standard_normal(n)  # broadcast to the (1, n) result
    got = jt.tensor(x).index_put((jt.tensor(i), jt.tensor(j)), jt.tensor(values), accumulate)
    want = torch.tensor(x).index_put((torch.tensor(i), torch.tensor(j)), torch.tensor(values),
                                     accumulate)
    if accumulate or len(set(zip(i % rows, j[0], strict=True))) == n:  # (repeats: any write)
        _close(got, want)


def test_index_put_errors_and_gradients():
    x = torch.zeros(3)
    _raises_as_torch(lambda: jt.zeros(3).index_put((jt.tensor([0]),), jt.tensor([1])),
                     lambda: x.index_put((torch.tensor([0]),), torch.tensor([1])),
                     "dtypes match")
    _raises_as_torch(lambda: jt.zeros(3).index_put((jt.tensor([3]),), jt.tensor([1.])),
                     lambda: x.index_put((torch.tensor([3]),), torch.tensor([1.])),
                     "out of bounds")
    grads = []
    for lib in (jt, torch):
        a, v = lib.zeros(3, requires_grad=True), lib.tensor([1., 2, 3], requires_grad=True)
        out = (a * 1).index_put((lib.tensor([0, 0, 2]),), v * 2, accumulate=True)
        (out * lib.tensor([1., 2, 3])).sum().backward()
        b = a * 1
        b.index_put_((lib.tensor([1]),), v[:1])
        (b * lib.tensor([4., 5, 6])).sum().backward()
        grads.append((a.grad, v.grad))
    _close(grads[0][0], grads[1][0])
    _close(grads[0][1], grads[1][1])


def test_put_masked_scatter_and_the_scatter_views_match_torch():
    x = np.arange(12., dtype=np.float32).reshape(3, 4)
    for lib_args in [("put", (lambda L: L.tensor([0, -1, 5]), lambda L: L.tensor([7., 8, 9]))),
                     ("masked_scatter", (lambda L: L.tensor([True, False, True, True]),
                                         lambda L: L.arange(20.).reshape(4, 5)))]:
        name, (first, second) = lib_args
        outs, grads = [], []
        for lib in (jt, torch):
            a = lib.tensor(x, requires_grad=True)
            s = second(lib).requires_grad_()
            out = getattr(a, name)(first(lib), s)
            out.pow(2).sum().backward()
            outs.append(out)
            grads.append((a.grad, s.grad))
        _close(*outs)
        _close(grads[0][0], grads[1][0])
        _close(grads[0][1], grads[1][1])
    accumulated = jt.zeros(4).put_(jt.tensor([1, 1, -1]), jt.tensor([1., 2, 3]), accumulate=True)
    _close(accumulated, torch.zeros(4).put_(torch.tensor([1, 1, -1]), torch.tensor([1., 2, 3]),
                                            accumulate=True))
    _raises_as_torch(lambda: jt.zeros(3).put(jt.tensor([3]), jt.tensor([1.])),
                     lambda: torch.zeros(3).put(torch.tensor([3]), torch.tensor([1.])),
                     "out of range")
    _raises_as_torch(lambda: jt.zeros(3).masked_scatter(jt.tensor([True, True, False]),
                                                        jt.tensor([1.])),
                     lambda: torch.zeros(3).masked_scatter(torch.tensor([True, True, False]),
                                                           torch.tensor([1.])),
                     "source < number of ones")
    cases = [("diagonal_scatter", (3, 4), (3,), {"offset": 1}),
             ("diagonal_scatter", (3, 4), (2,), {"offset": -1}),
             ("select_scatter", (3, 4), (4,), {"dim": 0, "index": -1}),
             ("slice_scatter", (4, 3), (4, 1), {"dim": 1, "start": 1, "end": 3, "step": 2}),
             ("as_strided_scatter", (3, 4), (2, 2), {"size": (2, 2), "stride": (1, 3),
                                                     "storage_offset": 1})]
    for name, shape, src_shape, kwargs in cases:
        outs, grads = [], []
        for lib in (jt, torch):
            a = lib.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
            s = (lib.arange(float(np.prod(src_shape))) + 100).reshape(src_shape).requires_grad_()
            out = getattr(lib, name)(a * 1, s, **kwargs)
            out.pow(2).sum().backward()
            outs.append(out)
            grads.append((a.grad, s.grad))
        _close(*outs)
        if name != "as_strided_scatter":  # (torch 2.13 gives input src's gradient there)
            _close(grads[0][0], grads[1][0])
        _close(grads[0][1], grads[1][1])
    a = jt.arange(12., dtype=jt.float64).reshape(3, 4).requires_grad_()
    src = jt.ones(2, 2, dtype=jt.float64, requires_grad=True)
    assert jt.autograd.gradcheck(lambda a, s: jt.as_strided_scatter(a * 1, s, (2, 2), (1, 3), 1)
                                 ** 2, (a, src))
    _raises_as_torch(lambda: jt.select_scatter(jt.zeros(3, 3), jt.ones(2), 0, 0),
                     lambda: torch.select_scatter(torch.zeros(3, 3), torch.ones(2), 0, 0),
                     "size equal to the slice")


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False),
                                        ((4, 3), True), ((3, 5), True), ((3, 3, 3), False)])
def test_fill_diagonal_matches_torch(shape, wrap):
    _close(jt.zeros(shape).fill_diagonal_(2.5, wrap=wrap),
           torch.zeros(shape).fill_diagonal_(2.5, wrap=wrap))
    _raises_as_torch(lambda: jt.zeros(3, 4, 5).fill_diagonal_(1),
                     lambda: torch.zeros(3, 4, 5).fill_diagonal_(1), "equal length")


def test_as_strided_views_the_storage_as_torch():
    for lib in (jt, torch):
        x = lib.arange(10.)
        view = x[2:]
        assert view.storage_offset() == 2
        assert lib.as_strided(view, (2, 2), (1, 2)).tolist() == [[2., 4.], [3., 5.]]
        assert view.as_strided((2, 2), (1, 2), 1).tolist() == [[1., 3.], [2., 4.]]
        x.as_strided((3,), (1,), 7)[0] = -1  # a view: writes show in x
        assert x[7].item() == -1
    for size, stride, offset, gist in [((3,), (4,), 0, "out of bounds"),
                                       ((3,), (-1,), 0, "Negative strides"),
                                       ((3,), (1,), -1, "invalid storage offset"),
                                       ((3, 2), (1,), 0, "mismatch in length")]:
        _raises_as_torch(lambda s=size, t=stride, o=offset: jt.arange(8.).as_strided(s, t, o),
                         lambda s=size, t=stride, o=offset: torch.arange(8.).as_strided(s, t, o),
                         gist)


@pytest.mark.parametrize("size,stride,offset", [((2, 2), (1, 2), 1), ((3, 2), (1, 1), None),
                                                ((2, 3), (3, 1), 0)])
def test_as_strided_and_unfold_gradients_match_torch(size, stride, offset):
    grads = []
    for lib in (jt, torch):
        a = lib.arange(1., 9.).requires_grad_()
        out = (a * 1)[1:].as_strided(size, stride, offset)  # overlapping windows add up
        u = (a * 1).reshape(2, 4).unfold(1, 2, 1)
        (out.pow(2).sum() + (u * lib.arange(12.).reshape(2, 3, 2)).sum()).backward()
        grads.append(a.grad)
    _close(*grads)
    a = jt.arange(1., 7., dtype=jt.float64, requires_grad=True)
    assert jt.autograd.gradcheck(lambda a: a.as_strided((2, 2), (1, 2), 1) ** 2, (a,))
    assert jt.autograd.gradcheck(lambda a: a.unfold(0, 3, 2) ** 2, (a,))


def test_unfold_matches_torch():
    for shape, args in [((10,), (0, 3, 2)), ((3, 5), (1, 2, 1)), ((3, 5), (-2, 3, 3)),
                        ((), (0, 1, 1)), ((4,), (0, 0, 1))]:
        want = torch.arange(float(np.prod(shape))).reshape(shape).unfold(*args)
        got = jt.arange(float(np.prod(shape))).reshape(shape).unfold(*args)
        _close(got, want)
        assert got.stride() == want.stride()
    for args, gist in [((0, 11, 1), "maximum size"), ((0, 3, 0), "step is 0")]:
        _raises_as_torch(lambda a=args: jt.arange(10.).unfold(*a),
                         lambda a=args: torch.arange(10.).unfold(*a), gist)


def test_resize_and_the_in_place_view_ops_match_torch():
    for lib in (jt, torch):
        x = lib.arange(6.)
        x.resize_(2, 2)
        assert x.tolist() == [[0., 1.], [2., 3.]] and x.stride() == (2, 1)
        x.resize_as_(lib.empty(3))
        assert x.tolist() == [0., 1., 2.]
        y = lib.arange(3.)
        y.resize_(5)
        assert y.shape == (5,) and y[:3].tolist() == [0., 1., 2.]
        z = lib.arange(6.).reshape(2, 3)
        z.unsqueeze_(0).transpose_(1, 2).squeeze_(0).t_().swapdims_(0, 1).swapaxes_(0, 1)
        assert z.shape == (2, 3) and z.stride() == (3, 1)
    with pytest.raises(RuntimeError, match="requires? grad"):
        jt.ones(2, requires_grad=True).resize_(4)
    with pytest.raises(RuntimeError, match="clone"):
        jt.arange(6.)[1:].resize_(10)
    grads = []
    for lib in (jt, torch):
        a = lib.arange(6., requires_grad=True)
        b = a * 1
        b.as_strided_((2, 2), (1, 2), 1)
        b.t_().unsqueeze_(0).transpose_(0, 2)
        (b * lib.arange(4.).reshape(2, 2, 1)).sum().backward()
        grads.append(a.grad)
    _close(*grads)
    with pytest.raises(RuntimeError, match="leaf"):
        jt.ones(3, requires_grad=True).unsqueeze_(0)


def test_small_tensor_ops_match_torch():
    for lib in (jt, torch):
        m = lib.arange(6.).reshape(2, 3)
        assert m.H.shape == (3, 2) and m.mH.shape == (3, 2) and m.adjoint().shape == (3, 2)
        assert [list(p.shape) for p in m.split_with_sizes([1, 2], 1)] == [[2, 1], [2, 2]]
        assert [list(p.shape) for p in m.unsafe_split(2, 1)] == [[2, 2], [2, 1]]
        assert [list(p.shape) for p in lib.unsafe_chunk(m, 2, 1)] == [[2, 2], [2, 1]]
        assert [list(p.shape) for p in lib.unsafe_split_with_sizes(m, [1, 1])] == [[1, 3]] * 2
        assert m.narrow_copy(1, 1, 2).is_contiguous()
        assert m.sum_to_size(1, 3).tolist() == [[3., 5., 7.]]
        assert m.new_empty_strided((2, 3), (1, 2)).stride() == (1, 2)
        assert 4 in m and 9 not in m and lib.tensor([9., 9., 5.]) in m
        assert [t.item() for t in reversed(lib.arange(3))] == [2, 1, 0]
        ints = lib.tensor([1, 2, 3], dtype=lib.int32)
        ints.cumsum_(0)
        assert ints.tolist() == [1, 3, 6] and ints.dtype == lib.int32
        assert lib.clamp_min_(lib.tensor([-1., 2.]), 0).tolist() == [0., 2.]
        assert lib.tensor([-1., 2.]).clamp_max_(0).tolist() == [-1., 0.]
    for fn, gist in [(lambda L: L.arange(3.).H, "only supported on matrices"),
                     (lambda L: L.arange(3.).mH, "matrices or batches"),
                     (lambda L: L.ones(2, 3).sum_to_size(3, 3), "not expandable"),
                     (lambda L: "a" in L.ones(2), "only supports Tensor or scalar"),
                     (lambda L: L.ones(3).renorm(2, 0, 1.0), "at least 2 dimensions"),
                     (lambda L: L.ones(3, 2).renorm(0, 0, 1.0), "non-positive-norm")]:
        _raises_as_torch(lambda f=fn: f(jt), lambda f=fn: f(torch), gist)


def test_frexp_and_renorm_match_torch():
    for dtype in (np.float32, np.float64):
        x = np.array([0., -0., 1., 3., np.inf, -np.inf, np.nan, 1e-40, -5., 0.75, 3e38,
                      np.finfo(dtype).tiny / 4, np.finfo(dtype).max], dtype)
        got, want = jt.frexp(jt.tensor(x)), torch.frexp(torch.tensor(x))
        _close(got.mantissa, want.mantissa, exact=True)
        _close(got.exponent, want.exponent, exact=True)
    _raises_as_torch(lambda: jt.frexp(jt.tensor([1])), lambda: torch.frexp(torch.tensor([1])),
                     "floating-point")
    grads = []
    for lib in (jt, torch):
        a = lib.tensor([[3., -4.], [0.1, 0.2], [1., 1.]], requires_grad=True)
        m, _ = lib.frexp(a * 1)
        r = (a * 1).renorm(2, 0, 1.0)
        b = a * 1
        b.renorm_(1, 1, 2.0)
        (m.sum() + (r * lib.arange(6.).reshape(3, 2)).sum() + b.pow(2).sum()).backward()
        grads.append((r, a.grad))
    _close(grads[0][0], grads[1][0])
    _close(grads[0][1], grads[1][1])


def test_deepcopy_as_torch():
    for lib in (jt, torch):
        leaf = lib.arange(4.).requires_grad_()
        leaf.grad = lib.ones(4)
        clone = copy.deepcopy(leaf)
        assert clone.requires_grad and clone.is_leaf and clone.grad.tolist() == [1.] * 4
        assert clone.data_ptr() != leaf.data_ptr()
        base = lib.arange(4.)
        a, b = copy.deepcopy([base, base[1:]])  # views of one storage stay views of one
        a[1] = 7
        assert b.tolist() == [7., 2., 3.] and base[1].item() == 1
        assert b.storage_offset() == 1
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(jt.ones(2, requires_grad=True) * 2)
    param = copy.deepcopy(jt.nn.Parameter(jt.ones(2)))
    assert isinstance(param, jt.nn.Parameter) and param.requires_grad


@pytest.mark.cuda
@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
def test_on_cuda():
    def cuda(a, dtype=None):
        return jt.tensor(a, dtype=dtype, device="cuda")
    x = np.array([[1., 5, 3], [2, 2, 7]], np.float32)
    src = np.array([[4., 5, 1], [2, 9, 3]], np.float32)
    index = np.array([[0, 1, 0], [1, 0, 1]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        got = cuda(x).scatter_reduce(0, cuda(index), cuda(src), reduce, include_self=False)
        want = torch.tensor(x).scatter_reduce(0, torch.tensor(index), torch.tensor(src), reduce,
                                              include_self=False)
        assert got.device.type == "cuda"
        _close(got, want)
    _close(cuda(x).index_reduce(0, cuda([1, 1]), cuda(src), "amax"),
           torch.tensor(x).index_reduce(0, torch.tensor([1, 1]), torch.tensor(src), "amax"))
    _close(cuda(x).index_put((cuda([0, 0]), cuda([1, 1])), cuda([1., 2.]), accumulate=True),
           torch.tensor(x).index_put((torch.tensor([0, 0]), torch.tensor([1, 1])),
                                     torch.tensor([1., 2.]), accumulate=True))
    _close(cuda(x).put(cuda([0, -1]), cuda([8., 9.])),
           torch.tensor(x).put(torch.tensor([0, -1]), torch.tensor([8., 9.])))
    _close(cuda(x).masked_scatter(cuda([True, False, True]), cuda(src)),
           torch.tensor(x).masked_scatter(torch.tensor([True, False, True]), torch.tensor(src)))
    _close(jt.diagonal_scatter(cuda(x), cuda([0., 0.])),
           torch.diagonal_scatter(torch.tensor(x), torch.zeros(2)))
    _close(jt.zeros(4, 3, device="cuda").fill_diagonal_(1, wrap=True),
           torch.zeros(4, 3).fill_diagonal_(1, wrap=True))
    t = jt.arange(10., device="cuda")
    assert t[2:].storage_offset() == 2
    _close(t[2:].as_strided((2, 2), (1, 2)), torch.arange(10.)[2:].as_strided((2, 2), (1, 2)))
    _close(t.unfold(0, 3, 2), torch.arange(10.).unfold(0, 3, 2))
    a = jt.arange(1., 7., device="cuda", requires_grad=True)
    (a.as_strided((2, 2), (1, 2), 1).pow(2).sum() + a.unfold(0, 2, 1).sum()).backward()
    ta = torch.arange(1., 7., requires_grad=True)
    (ta.as_strided((2, 2), (1, 2), 1).pow(2).sum() + ta.unfold(0, 2, 1).sum()).backward()
    _close(a.grad, ta.grad)
    f = jt.frexp(cuda([3., 1e-40, 0.]))
    tf = torch.frexp(torch.tensor([3., 1e-40, 0.]))
    _close(f.mantissa, tf.mantissa, exact=True)
    _close(f.exponent, tf.exponent, exact=True)
    _close(cuda([[3., 4.], [0.1, 0.2]]).renorm(2, 0, 1.0),
           torch.tensor([[3., 4.], [0.1, 0.2]]).renorm(2, 0, 1.0))
    r = jt.arange(3., device="cuda")
    r.resize_(2)
    assert r.tolist() == [0., 1.]
    c = copy.deepcopy(cuda([1., 2.]))
    assert c.device.type == "cuda" and c.tolist() == [1., 2.]
