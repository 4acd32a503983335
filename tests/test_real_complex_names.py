"""torch's complex-number functions on real tensors (jitensor has no complex dtype), and the
sparse/pinned/distributed queries of a strided tensor: each as torch answers for such a tensor."""
import math

import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")

VALUES = [1.5, -2.0, 0.0, -0.0, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "bool"])
def test_angle_matches_torch(dtype):
    values = [v for v in VALUES if not math.isnan(v) and not math.isinf(v)] \
        if dtype in ("int64", "int16", "bool") else VALUES
    t = torch.tensor(values).to(getattr(torch, dtype))
    x = jt.tensor(t.numpy())
    got, want = jt.angle(x), torch.angle(t)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(x.angle().numpy(), want.numpy())


def test_angle_gradient_is_zero_as_torch():
    t = torch.tensor(VALUES, requires_grad=True)
    x = jt.tensor(VALUES, requires_grad=True)
    (want,) = torch.autograd.grad(torch.angle(t).sum(), t)
    (got,) = jt.autograd.grad(jt.angle(x).sum(), x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_real_conj_are_the_tensor_itself_and_imag_raises():
    x = jt.tensor([1.0, -2.0])
    assert jt.real(x) is x and x.real is x
    assert jt.conj(x) is x and x.conj() is x
    assert jt.conj_physical(x) is x and x.conj_physical() is x and x.conj_physical_() is x
    out = jt.empty(2)
    assert jt.conj_physical(x, out=out) is out and out.tolist() == [1.0, -2.0]
    for imag in (lambda: jt.imag(x), lambda: x.imag):
        with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                               "non-complex dtypes"):
            imag()
    with pytest.raises(TypeError):
        jt.real([1.0])


def test_strided_tensor_queries_as_torch():
    x, t = jt.ones(2, 3), torch.ones(2, 3)
    assert x.dense_dim() == t.dense_dim() == 2
    assert x.is_pinned() is t.is_pinned() is False
    assert x.is_distributed() is t.is_distributed() is False
    assert jt.is_distributed(x) is torch.is_distributed(t) is False
    assert x.to_dense() is x
    assert x.to_dense(jt.float64).dtype is jt.float64


def test_module_load_copies_or_assigns():
    w = jt.zeros(3)
    src = jt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    got = w.module_load(src)
    assert got.tolist() == [1.0, 2.0, 3.0] and w.tolist() == [1.0, 2.0, 3.0]
    assert not got.requires_grad
    got = jt.zeros(3).module_load(src, assign=True)
    assert got.tolist() == [1.0, 2.0, 3.0] and not got.requires_grad
    assert got.data_ptr() == src.data_ptr()
