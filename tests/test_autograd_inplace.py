"""Autograd and in-place ops, as torch: in-place on a leaf that requires grad raises; in-place on
a non-leaf is recorded ("rebase") and its gradients match torch's and finite differences; on a
view it rewrites the base's history, and views taken before are taken again (torch's); a
tensor saved for backward and then modified in place makes backward raise; in-place under
no_grad (an optimizer step) is allowed; out= with an input that requires grad raises."""
import operator

import numpy as np
import pytest
from conftest import grad_checked as _grad
from conftest import leaf as _leaf

import jitensor as jt

MODIFIED = "modified by an inplace operation"
MASK23 = np.array([[True, False, True], [False, True, True]])


def _torch():
    return pytest.importorskip("torch")


X = np.array([[0.35, -1.2, 0.8], [-0.25, 1.45, -0.65]])  # away from 0, +-0.6 and each other


# -- in-place on a leaf that requires grad ------------------------------------------------------
LEAF_OPS = {
    "add_": lambda x, w: x.add_(1.0),
    "add_tensor": lambda x, w: x.add_(w),
    "mul_": lambda x, w: x.mul_(2),
    "iadd": lambda x, w: operator.iadd(x, 1.0),
    "imul": lambda x, w: operator.imul(x, w),
    "setitem": lambda x, w: x.__setitem__(0, 1.0),
    "setitem_slice": lambda x, w: x.__setitem__((slice(None), 1), 5.0),
    "zero_": lambda x, w: x.zero_(),
    "fill_": lambda x, w: x.fill_(1.0),
    "copy_": lambda x, w: x.copy_(w),
    "exp_": lambda x, w: x.exp_(),
    "clamp_": lambda x, w: x.clamp_(0, 1),
    "masked_fill_": lambda x, w: x.masked_fill_(jt.tensor(MASK23), 0.0),
    "neg_": lambda x, w: x.neg_(),
}


@pytest.mark.parametrize("op", LEAF_OPS.values(), ids=LEAF_OPS.keys())
def test_inplace_on_leaf_requiring_grad_raises(op):
    x, w = _leaf(X), jt.tensor(np.ones(3), dtype=jt.float64)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        op(x, w)
    np.testing.assert_array_equal(x.detach().numpy(), X)  # unchanged
    assert x.is_leaf and x.requires_grad
    (x * 2).sum().backward()  # still usable
    np.testing.assert_array_equal(_grad(x), np.full((2, 3), 2.0))


def test_inplace_on_leaf_requiring_grad_raises_like_torch():
    torch = _torch()
    for ns in (jt, torch):
        x = ns.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.add_(1)


# -- in-place on non-leaf tensors: recorded -----------------------------------------------------
def _mul_base(ns, x):
    return x * 1.5


def _pos_base(ns, x):
    return x * x + 0.5


class Case:
    """`op(ns, y, w)` modifies y = base(ns, x) in place; w: the shape of a second leaf (or
    None)."""

    def __init__(self, id, op, w=None, base=_mul_base, bug=None, w_data=None):
        self.id, self.op, self.w, self.base, self.bug = id, op, w, base, bug
        self.w_data = w_data

    def w_array(self):
        if self.w_data is not None:
            return np.asarray(self.w_data, dtype=np.float64)
        if self.w is None:
            return None
        n = int(np.prod(self.w))
        return (0.7 + 0.35 * np.arange(n)).reshape(self.w)  # positive, away from y's values

    def param(self):
        marks = pytest.mark.xfail(strict=True, reason=f"BUG: {self.bug}") if self.bug else ()
        return pytest.param(self, id=self.id, marks=marks)



NONLEAF = [
    Case("add_scalar", lambda ns, y, w: y.add_(1.0)),
    Case("add_tensor_alpha_bcast", lambda ns, y, w: y.add_(w, alpha=2), (3,)),
    Case("sub_tensor", lambda ns, y, w: y.sub_(w), (2, 3)),
    Case("mul_scalar", lambda ns, y, w: y.mul_(3)),
    Case("mul_tensor_bcast", lambda ns, y, w: y.mul_(w), (3,)),
    Case("div_tensor", lambda ns, y, w: y.div_(w), (2, 1)),
    Case("div_scalar", lambda ns, y, w: y.div_(4.0)),
    Case("pow_scalar", lambda ns, y, w: y.pow_(2)),
    Case("pow_tensor", lambda ns, y, w: y.pow_(w), (3,), base=_pos_base),
    Case("exp_", lambda ns, y, w: y.exp_()),
    Case("sigmoid_", lambda ns, y, w: y.sigmoid_()),
    Case("tanh_", lambda ns, y, w: y.tanh_()),
    Case("neg_", lambda ns, y, w: y.neg_()),
    Case("abs_", lambda ns, y, w: y.abs_()),
    Case("relu_", lambda ns, y, w: y.relu_()),
    Case("sqrt_", lambda ns, y, w: y.sqrt_(), base=_pos_base),
    Case("log_", lambda ns, y, w: y.log_(), base=_pos_base),
    Case("reciprocal_", lambda ns, y, w: y.reciprocal_()),
    Case("clamp_", lambda ns, y, w: y.clamp_(-0.9, 0.9)),
    Case("clamp_min_tensor", lambda ns, y, w: y.clamp_(min=w), (3,), w_data=[-0.2, 0.1, 0.3]),
    Case("masked_fill_scalar", lambda ns, y, w: y.masked_fill_(ns.tensor(MASK23), 0.5)),
    Case("masked_fill_tensor", lambda ns, y, w: y.masked_fill_(ns.tensor(MASK23), w), ()),
    Case("iadd", lambda ns, y, w: operator.iadd(y, w), (3,)),
    Case("isub", lambda ns, y, w: operator.isub(y, w), (2, 3)),
    Case("imul", lambda ns, y, w: operator.imul(y, w), (2, 1)),
    Case("itruediv", lambda ns, y, w: operator.itruediv(y, w), (3,)),
    Case("ipow", lambda ns, y, w: operator.ipow(y, 2)),
    Case("add_self", lambda ns, y, w: y.add_(y)),
    Case("chain_add_mul", lambda ns, y, w: y.add_(1).mul_(3)),
    Case("chain_mixed", lambda ns, y, w: y.mul_(w).sub_(w).exp_(), (3,)),
    Case("setitem_row_tensor", lambda ns, y, w: y.__setitem__(0, w), (3,)),
    Case("setitem_col_scalar", lambda ns, y, w: y.__setitem__((slice(None), 1), 5.0)),
    Case("setitem_ellipsis_tensor", lambda ns, y, w: y.__setitem__((Ellipsis, 0), w), (2,)),
    Case("setitem_adv_tensor_bcast",
         lambda ns, y, w: y.__setitem__(ns.tensor([1, 0]), w), (3,)),
    Case("setitem_mask_scalar", lambda ns, y, w: y.__setitem__(ns.tensor(MASK23), 0.0)),
    Case("setitem_mask_0d", lambda ns, y, w: y.__setitem__(ns.tensor(MASK23), w), ()),
    Case("setitem_then_mul", lambda ns, y, w: (y.__setitem__(0, w), y.mul_(2)), (3,)),
    Case("zero_", lambda ns, y, w: y.zero_()),
    Case("fill_scalar", lambda ns, y, w: y.fill_(2.0)),
    Case("fill_0d_tensor", lambda ns, y, w: y.fill_(w), ()),
    Case("copy_bcast", lambda ns, y, w: y.copy_(w), (3,)),
    Case("copy_same_shape", lambda ns, y, w: y.copy_(w), (2, 3)),
]


def _run_nonleaf(ns, case):
    x = ns.tensor(X, requires_grad=True)
    wa = case.w_array()
    w = None if wa is None else ns.tensor(wa, requires_grad=True)
    y = case.base(ns, x)
    case.op(ns, y, w)
    return x, w, y


@pytest.mark.parametrize("case", [c.param() for c in NONLEAF])
def test_inplace_on_non_leaf_matches_torch(case):
    torch = _torch()
    jx, jw, jy = _run_nonleaf(jt, case)
    tx, tw, ty = _run_nonleaf(torch, case)
    assert jy.requires_grad and not jy.is_leaf
    np.testing.assert_allclose(jy.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    g = np.random.default_rng(3).uniform(-1, 1, X.shape)
    (jy * jt.tensor(g)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    for j, t in ((jx, tx), (jw, tw)):
        if t is None:
            continue
        assert (j.grad is None) == (t.grad is None), (j.grad, t.grad)
        if t.grad is not None:
            np.testing.assert_allclose(_grad(j), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", [c.param() for c in NONLEAF])
def test_inplace_on_non_leaf_gradcheck(case):
    wa = case.w_array()
    inputs = [jt.tensor(X, requires_grad=True)]
    if wa is not None:
        inputs.append(jt.tensor(wa, requires_grad=True))

    def f(x, w=None):
        y = case.base(jt, x)
        case.op(jt, y, w)
        return y
    assert jt.autograd.gradcheck(f, inputs)


def test_inplace_add_mul_on_non_leaf_explicit():
    x = _leaf([1.0, -2.0, 3.0])
    y = x * 2
    y.add_(1)
    y.mul_(3)
    assert y.grad_fn is not None and not y.is_leaf
    np.testing.assert_array_equal(y.detach().numpy(), [9.0, -9.0, 21.0])
    y.sum().backward()
    np.testing.assert_array_equal(_grad(x), [6.0, 6.0, 6.0])


def test_inplace_bumps_version():
    x = _leaf([1.0, 2.0])
    y = x * 2
    v = y._version
    y.add_(1)
    y[0] = 3.0
    assert y._version == v + 2


# out= writes bump the version counter once, as torch's: autograd sees a saved tensor
# overwritten through out=, and `_version` counts as torch's does
OUT_WRITES = {
    "add": lambda m, o: m.add(m.ones(3), 1, out=o),
    "exp": lambda m, o: m.exp(m.ones(3), out=o),
    "where": lambda m, o: m.where(m.ones(3) > 0, m.ones(3), m.zeros(3), out=o),
    "sum": lambda m, o: m.sum(m.ones(2, 3), 0, out=o),
    "cumsum": lambda m, o: m.cumsum(m.ones(3), 0, out=o),
    "cat": lambda m, o: m.cat([m.ones(1), m.ones(2)], out=o),
    "matmul": lambda m, o: m.matmul(m.ones(3, 2), m.ones(2), out=o),
    "index_select": lambda m, o: m.index_select(m.ones(5), 0, m.tensor([0, 1, 2]), out=o),
    "stack_into_a_view": lambda m, o: m.stack([m.ones(3)], out=o.view(1, 3)),
    "zeros": lambda m, o: m.zeros(3, out=o),
    "arange": lambda m, o: m.arange(3.0, out=o),
    "empty": lambda m, o: m.empty(3, out=o),  # writes nothing: no bump
    "kthvalue_pair": lambda m, o: m.kthvalue(m.ones(3, 2), 1, 1,
                                             out=(o, m.empty(3, dtype=m.int64))),
}


@pytest.mark.parametrize("name", OUT_WRITES)
def test_out_writes_bump_the_version_as_torch(name):
    torch = _torch()
    versions = []
    for m in (torch, jt):
        out = m.empty(3)
        OUT_WRITES[name](m, out)
        versions.append(out._version)
    assert versions[1] == versions[0], versions


def test_a_saved_tensor_overwritten_through_out_makes_backward_raise():
    a, b = _leaf([1.0, 2.0, 3.0]), jt.tensor([4.0, 5.0, 6.0])
    y = a * b  # saves b
    jt.add(b, 1, out=b)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()
    c = jt.ones(3)
    with pytest.raises(RuntimeError, match="shape"):  # a failed check writes and bumps nothing
        jt.add(jt.ones(2), 1, out=c)
    assert c._version == 0


def test_setitem_explicit():
    x, w = _leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), _leaf([7.0, 8.0, 9.0])
    y = x * 2
    y[0] = w
    np.testing.assert_array_equal(y.detach().numpy(), [[7, 8, 9], [8, 10, 12]])
    y.sum().backward()
    np.testing.assert_array_equal(_grad(x), [[0, 0, 0], [2, 2, 2]])
    np.testing.assert_array_equal(_grad(w), [1, 1, 1])


def test_zero_fill_copy_explicit():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 2
    y.zero_()
    (y + x).sum().backward()  # torch: y's old history gets a zero gradient
    np.testing.assert_array_equal(_grad(x), [1.0, 1.0, 1.0])
    x.grad = None
    w = _leaf([5.0, 6.0, 7.0])
    y = x * 2
    y.copy_(w)
    y.sum().backward()  # torch: x.grad zeros, w.grad ones
    np.testing.assert_array_equal(_grad(x), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(_grad(w), [1.0, 1.0, 1.0])


# a plain tensor (no grad) modified in place with a value that requires grad joins the graph
PLAIN = [
    Case("plain_add_", lambda ns, a, w: a.add_(w), (3,)),
    Case("plain_mul_", lambda ns, a, w: a.mul_(w), (2, 3)),
    Case("plain_setitem", lambda ns, a, w: a.__setitem__(1, w * 2), (3,)),
    Case("plain_setitem_mask", lambda ns, a, w: a.__setitem__(ns.tensor(MASK23), w), ()),
    Case("plain_masked_fill_", lambda ns, a, w: a.masked_fill_(ns.tensor(MASK23), w), ()),
    Case("plain_copy_", lambda ns, a, w: a.copy_(w * 3), (3,)),
    Case("plain_iadd", lambda ns, a, w: operator.iadd(a, w), (2, 1)),
]


@pytest.mark.parametrize("case", [c.param() for c in PLAIN])
def test_inplace_on_plain_tensor_with_grad_value(case):
    results = []
    try:
        import torch
        namespaces = (jt, torch)
    except ImportError:
        namespaces = (jt,)
    for ns in namespaces:
        a = ns.tensor(X)
        w = ns.tensor(case.w_array(), requires_grad=True)
        case.op(ns, a, w)
        assert a.requires_grad and not a.is_leaf and a.grad_fn is not None
        (a * ns.tensor(X)).sum().backward()
        assert w.grad is not None, f"{ns.__name__}: no gradient reached the value"
        results.append((a.detach().numpy().copy(), w.grad.numpy().copy(), w.grad.dtype))
    if len(results) == 2:
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
    # and by finite differences
    assert jt.autograd.gradcheck(
        lambda w: (lambda a: (case.op(jt, a, w), a)[1])(jt.tensor(X)),
        [jt.tensor(case.w_array(), requires_grad=True)])


# -- a saved tensor modified in place -----------------------------------------------------------
def _sigmoid_mul_(x):
    y = x.sigmoid()
    y.mul_(2)
    return y


def _exp_add_(x):
    y = x.exp()
    y.add_(1)
    return y


def _square_then_modify(x):
    y = x * 2
    z = y * y
    y.add_(1)
    return z


def _sin_then_modify(x):
    y = x * 2
    z = y.sin()
    y.mul_(2)
    return z


def _pow_then_setitem(x):
    y = x + 1
    z = y ** 3
    y[0] = 0.0
    return z


def _leaf_modified_under_no_grad(x):
    z = x * x
    with jt.no_grad():
        x.add_(1)
    return z


def _softmax_then_modify(x):
    y = x.softmax(0)
    y.mul_(2)
    return y


@pytest.mark.parametrize("fn", [_sigmoid_mul_, _exp_add_, _square_then_modify,
                                _sin_then_modify, _pow_then_setitem,
                                _leaf_modified_under_no_grad, _softmax_then_modify])
def test_modified_saved_tensor_raises(fn):
    x = _leaf([0.5, -1.0, 2.0])
    out = fn(x)
    with pytest.raises(RuntimeError, match=MODIFIED):
        out.sum().backward()


def test_modified_saved_tensor_raises_like_torch():
    torch = _torch()
    for ns in (jt, torch):
        x = ns.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x.sigmoid()
        y.mul_(2)
        with pytest.raises(RuntimeError, match=MODIFIED):
            y.sum().backward()


def test_modified_saved_plain_tensor_raises():
    x = _leaf([1.0, 2.0, 3.0])
    w = jt.tensor([1.0, 1.0, 1.0], dtype=jt.float64)
    z = x * w
    w.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        z.sum().backward()


def _via_detach(y):
    y.detach().mul_(2)


def _via_view_under_no_grad(y):
    with jt.no_grad():
        y[0:2].mul_(2)


def _via_reshape_under_no_grad(y):
    with jt.no_grad():
        y.view(-1, 1)[1:].zero_()


@pytest.mark.parametrize("modify", [_via_detach, _via_view_under_no_grad,
                                    _via_reshape_under_no_grad])
def test_saved_tensor_modified_through_alias_raises(modify):
    """Views and detach() share their base's version counter (torch's)."""
    x = _leaf([0.5, -1.0, 2.0])
    y = x.sigmoid()  # saves its result
    modify(y)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()
    w = jt.tensor([1.0, 2.0, 3.0], dtype=jt.float64)
    z = x * w[None, :]  # saves a view of w; modified through w itself
    w.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        z.sum().backward()


def test_aliases_share_the_version_counter():
    x = jt.zeros(2, 3)
    views = [x, x[0], x.t(), x.view(-1), x.detach(), x.data, x.reshape(3, 2)]
    x[1].add_(1)
    x.detach().mul_(2)
    assert [v._version for v in views] == [2] * len(views)
    assert x.clone()._version == 0 and x.contiguous()._version == 2


def test_unsaved_tensor_may_be_modified():
    x = _leaf([0.5, -1.0, 2.0])
    y = x + 1          # add saves nothing
    y.exp_()
    y.sum().backward()
    np.testing.assert_allclose(_grad(x), np.exp([1.5, 0.0, 3.0]))
    x.grad = None
    y = x * 2
    v = y.exp()        # exp saves its result, not y
    y.add_(1)
    v.sum().backward()
    np.testing.assert_allclose(_grad(x), 2 * np.exp([1.0, -2.0, 4.0]))
    x.grad = None
    y = x * 2
    s = y.sum()        # sum saves nothing
    y.mul_(5)
    s.backward()
    np.testing.assert_array_equal(_grad(x), [2.0, 2.0, 2.0])


def test_operand_not_needed_for_grad_may_be_modified():
    x = _leaf([0.5, -1.0, 2.0])
    y = x * 2
    z = y * 3          # torch saves only the other operand (the 3) for y's gradient
    y.add_(1)
    z.sum().backward()
    np.testing.assert_array_equal(_grad(x), [6.0, 6.0, 6.0])
    x.grad = None
    y, w = x * 2, jt.tensor([1.0, 2.0, 4.0], dtype=jt.float64)
    q, r = y * w, y / w  # y's gradients read w only
    y.add_(1)
    (q + r).sum().backward()
    np.testing.assert_array_equal(_grad(x), 2 * (np.array([1.0, 2.0, 4.0]) + [1.0, 0.5, 0.25]))
    for op in (operator.mul, operator.truediv):
        w = jt.tensor([1.0, 2.0, 4.0], dtype=jt.float64)
        z = op(x * 2, w)
        w.add_(1)  # ... which must not change
        with pytest.raises(RuntimeError, match=MODIFIED):
            z.sum().backward()


# -- views and in-place -------------------------------------------------------------------------
def _unbind_row(lib, y, i):
    """Row i of y as a view: by unbind in jitensor (torch refuses in-place on its pieces)."""
    return y.unbind(0)[i] if lib is jt else y[i]


# programs (lib, x, w) -> loss: in-place ops on views of non-leaf tensors rewrite the base's
# history (torch's CopySlices), and views taken before then are taken again from it
VIEW_PROGRAMS = {
    "slice_mul_": lambda lib, x, w: _then(x * 2, lambda y: y[0:1].mul_(3), lambda y: y.sum()),
    "augmented_column": lambda lib, x, w: _then(x * 1, lambda y: y[:, 0].__imul__(w),
                                               lambda y: (y * y).sum()),
    "python_augmented": lambda lib, x, w: _augmented(x * 1, w),
    "transpose_row_add_": lambda lib, x, w: _then(x + 0, lambda y: y.t()[1].add_(w),
                                                 lambda y: (y * y).sum()),
    "diagonal_zero_": lambda lib, x, w: _then(x + 0, lambda y: y[:, :2].diagonal().zero_(),
                                             lambda y: (y * x).sum()),
    "flat_fill_": lambda lib, x, w: _then(x + 0, lambda y: y.view(-1)[4].fill_(5.0),
                                         lambda y: (y * x).sum()),
    "copy_into_view": lambda lib, x, w: _then(x.exp() * 1, lambda y: y[1, 1:].copy_(w * x[0, 0]),
                                             lambda y: (y ** 2).sum()),
    "setitem_on_view": lambda lib, x, w: _then(x * 3, lambda y: y[1:].__setitem__((0, 0), w[0]),
                                              lambda y: (y * x).sum()),
    "narrow_permute": lambda lib, x, w: _then(x * 2, lambda y: y.unsqueeze(0).permute(2, 0, 1)
                                             .narrow(0, 1, 2).mul_(x[:, :1].t()),
                                             lambda y: (y * y).sum()),
    "row_of_split": lambda lib, x, w: _then(x * 2, lambda y: _unbind_row(lib, y, 1)[1:].mul_(w[0]),
                                           lambda y: (y ** 2).sum()),
    "stale_sibling_view": lambda lib, x, w: _stale(x * 2, w),
}


def _then(y, write, loss):
    write(y)
    return loss(y)


def _augmented(y, w):
    y[:, 1] *= w  # y.__setitem__(k, y.__getitem__(k).__imul__(w))
    y[0] += w[1]
    return (y * y).sum()


def _stale(y, w):
    v = y[0]
    before = (v * 3).sum()  # used before the write: the old history is its history
    y[:, 1:].mul_(w[:, None])
    return before + (v * v).sum() + y.sum()  # used after: taken again from y's new history


@pytest.mark.parametrize("name", list(VIEW_PROGRAMS))
def test_inplace_on_views_matches_torch(name):
    torch = _torch()
    results = []
    for lib in (jt, torch):
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor([0.7, -1.3], dtype=x.dtype, requires_grad=True)
        loss = VIEW_PROGRAMS[name](lib, x, w)
        loss.backward()
        results.append([loss.detach().numpy()] + [t.grad.numpy() if t.grad is not None else None
                                                   for t in (x, w)])
    for got, want in zip(*results, strict=False):
        assert (got is None) == (want is None)
        if got is not None:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_view_of_base_modified_in_place():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 2
    v = y[0:2]
    y.mul_(3)
    np.testing.assert_array_equal(v.detach().numpy(), [6.0, 12.0])
    v.sum().backward()  # torch: [6, 6, 0]
    np.testing.assert_array_equal(_grad(x), [6.0, 6.0, 0.0])


def test_inplace_on_views_that_cannot_be_written_raises():
    x = _leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
        x[0:2].mul_(2)
    with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
        x.view(3, 1).t()[0].zero_()
    y = x[:1] * 2
    with pytest.raises(RuntimeError, match="single memory location"):
        y.expand(3).mul_(2)
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0, 3.0])  # nothing written
    np.testing.assert_array_equal(y.detach().numpy(), [2.0])


# -- in-place under no_grad (an optimizer step) -------------------------------------------------
def test_inplace_on_leaf_under_no_grad_is_allowed():
    x = _leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    g = x.grad
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0, 6.0])
    with jt.no_grad():
        x.sub_(0.5 * x.grad)
        x -= 0.25 * x.grad
        x[0] = 10.0
        x.mul_(2)
    np.testing.assert_array_equal(x.detach().numpy(), [20.0, -2.0, -3.0])
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])  # .grad stays
    x.grad.zero_()  # .grad itself does not require grad
    (x * 3).sum().backward()
    np.testing.assert_array_equal(_grad(x), [3.0, 3.0, 3.0])
    with jt.no_grad():
        x.zero_()
        x.fill_(1.5)
        x.copy_(jt.tensor([1.0, 2.0, 3.0], dtype=jt.float64))
    assert x.is_leaf and x.requires_grad
    x.grad = None
    (x * x).sum().backward()
    np.testing.assert_array_equal(_grad(x), [2.0, 4.0, 6.0])


def test_optimizer_like_loop_converges():
    x = _leaf([3.0, -2.0])
    target = np.array([1.0, 0.5])
    for _ in range(60):
        loss = ((x - jt.tensor(target)) ** 2).sum()
        x.grad = None
        loss.backward()
        with jt.no_grad():
            x -= 0.1 * x.grad
    np.testing.assert_allclose(x.detach().numpy(), target, atol=1e-4)


def test_inplace_on_detached_leaf_is_allowed():
    x = _leaf([1.0, 2.0])
    x.detach().add_(1)  # the detached tensor does not require grad
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 3.0])


# -- out= ---------------------------------------------------------------------------------------
def _out(*shape):
    return jt.empty(*shape, dtype=jt.float64)


OUT_OPS = {
    "add": lambda x: jt.add(x, 1.0, out=_out(2)),
    "mul": lambda x: jt.mul(x, x, out=_out(2)),
    "exp": lambda x: jt.exp(x, out=_out(2)),
    "clamp": lambda x: jt.clamp(x, 0.0, 1.0, out=_out(2)),
    "where": lambda x: jt.where(x > 0, x, 0.0, out=_out(2)),
    "matmul": lambda x: jt.matmul(x.reshape(2, 1), x.reshape(1, 2), out=_out(2, 2)),
    "cat": lambda x: jt.cat([x, x], out=_out(4)),
    "sum": lambda x: jt.sum(x.reshape(1, 2), 0, out=_out(2)),
}


@pytest.mark.parametrize("op", OUT_OPS.values(), ids=OUT_OPS.keys())
def test_out_with_input_requiring_grad_raises(op):
    x = _leaf([0.5, 2.0])
    with pytest.raises(RuntimeError, match="out="):
        op(x)
    with jt.no_grad():
        r = op(x)  # fine without grad
    assert not r.requires_grad
    assert not op(x.detach()).requires_grad  # fine when nothing requires grad


def test_out_under_no_grad_gives_values():
    x = _leaf([0.5, 2.0])
    o = jt.empty(2, dtype=jt.float64)
    with jt.no_grad():
        r = jt.add(x, 1.0, out=o)
    assert r is o and not o.requires_grad
    np.testing.assert_array_equal(o.numpy(), [1.5, 3.0])


def test_out_raises_like_torch():
    torch = _torch()
    for ns in (jt, torch):
        x = ns.tensor([0.5, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="out=.* don't support automatic differentiation"):
            ns.add(x, 1.0, out=ns.empty(2))
