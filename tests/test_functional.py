"""nn.functional's composed helpers: pad (every mode, negative sizes crop), one_hot,
normalize, cosine_similarity, pairwise_distance and scaled_dot_product_attention, against
NumPy (np.pad, np.eye, a softmax written out) and torch (skipped where not installed), their
gradients by finite differences, and their errors."""
import math

import numpy as np
import pytest
from conftest import assert_grads_match_torch, at_thread_counts
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
from jitensor.nn import functional as F

NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
            "circular": "wrap"}


@st.composite
def paddings(draw):
    """A (batch, channels, ...) shape with 1-3 padded dims, a mode and non-negative sizes the
    mode allows."""
    mode = draw(st.sampled_from(sorted(NP_MODES)))
    n = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=n + 1, max_size=n + 2)))
    pad = []
    for k in range(n):
        size = shape[-1 - k]
        limit = {"constant": 3, "reflect": size - 1, "replicate": 3, "circular": size}[mode]
        pad += [draw(st.integers(0, limit)), draw(st.integers(0, limit))]
    return shape, mode, pad, draw(st.integers(0, 2 ** 32 - 1))


@given(paddings())
def test_pad_matches_numpy(case):
    shape, mode, pad, seed = case
    x = np.random.default_rng(seed).standard_normal(shape)
    widths = [(0, 0)] * (len(shape) - len(pad) // 2) + \
        [(pad[2 * k], pad[2 * k + 1]) for k in reversed(range(len(pad) // 2))]
    kw = dict(constant_values=1.5) if mode == "constant" else {}
    got = F.pad(jt.tensor(x), pad, mode, 1.5 if mode == "constant" else None)
    want = np.pad(x, widths, NP_MODES[mode], **kw)
    assert got.dtype is jt.float64 and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("mode", sorted(NP_MODES))
@pytest.mark.parametrize("pad", [(1, 2), (-1, 2), (2, -1, 1, 0), (0, -2, 1, 1)])
def test_pad_crops_and_differentiates_as_torch(mode, pad):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((2, 3, 5))
    a, b = jt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    mine, theirs = F.pad(a, pad, mode), torch.nn.functional.pad(b, pad, mode)
    np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
    g = np.random.default_rng(2).standard_normal(tuple(theirs.shape))
    mine.backward(jt.tensor(g))
    theirs.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_pad_keeps_dtype_and_device_and_raises_as_torch():
    x = jt.arange(6, dtype=jt.int32).reshape(1, 2, 3)
    got = F.pad(x, (1, 0), value=7)
    assert got.dtype is jt.int32 and got.tolist() == [[[7, 0, 1, 2], [7, 3, 4, 5]]]
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match="less than or equal to two times the input dim"):
        F.pad(x, (1,) * 8)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), "foo")
    with pytest.raises(RuntimeError, match='"reflect" doesn\'t take in value argument'):
        F.pad(x.double(), (1, 1), "reflect", 2.0)
    with pytest.raises(RuntimeError, match="Padding size should be less than the corr"):
        F.pad(x.double(), (3, 0), "reflect")
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        F.pad(x.double(), (4, 0), "circular")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D"):
        F.pad(jt.zeros(3), (1, 1), "replicate")
    with pytest.raises(RuntimeError, match="leaves a negative size"):
        F.pad(x, (-4, 0))
    with pytest.raises(TypeError, match="argument 'pad' must be a sequence of ints"):
        F.pad(x, (1.5, 1))


def test_one_hot_matches_numpy_and_checks_its_input():
    t = jt.tensor([[0, 3], [2, 1]])
    got = F.one_hot(t)
    assert got.dtype is jt.int64 and got.shape == (2, 2, 4)
    np.testing.assert_array_equal(got.numpy(), np.eye(4, dtype=np.int64)[t.numpy()])
    assert F.one_hot(jt.tensor([1]), 3).tolist() == [[0, 1, 0]]
    assert F.one_hot(jt.zeros(0, dtype=jt.int64), 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type Long"):
        F.one_hot(jt.tensor([1], dtype=jt.int32))
    with pytest.raises(RuntimeError, match="Class values must be non-negative, got -2"):
        F.one_hot(jt.tensor([1, -2]))
    with pytest.raises(RuntimeError, match="smaller than num_classes \\(2\\), got 2"):
        F.one_hot(jt.tensor([1, 2]), 2)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
        F.one_hot(jt.zeros(0, dtype=jt.int64))


def test_normalize_cosine_similarity_and_pairwise_distance_match_numpy():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((1, 4))
    x[0] = 0  # a zero row: the eps clamps keep it finite
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(F.normalize(jt.tensor(x)).numpy(), x / np.maximum(norms, 1e-12),
                               rtol=1e-12)
    out = jt.empty(3, 4, dtype=jt.float64)
    assert F.normalize(jt.tensor(x), p=1, dim=1, out=out) is out
    np.testing.assert_allclose(out.numpy(), x / np.maximum(np.abs(x).sum(1, keepdims=True),
                                                           1e-12), rtol=1e-12)
    cos = F.cosine_similarity(jt.tensor(x), jt.tensor(y), dim=1)

    def unit(v):
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-8)

    np.testing.assert_allclose(cos.numpy(), (unit(x) * unit(y)).sum(1), rtol=1e-12)
    with pytest.raises(RuntimeError, match="expected floating point inputs, got int64"):
        F.cosine_similarity(jt.tensor([1, 2]), jt.tensor([2, 3]), dim=0)
    huge = jt.tensor([[3e200, 4e200]], dtype=jt.float64)  # an infinite norm: 0, as torch
    assert F.cosine_similarity(huge, huge).tolist() == [0.0]
    dist = F.pairwise_distance(jt.tensor(x), jt.tensor(y), keepdim=True)
    np.testing.assert_allclose(dist.numpy(), np.linalg.norm(x - y + 1e-6, axis=1,
                                                            keepdims=True), rtol=1e-12)


def test_vector_gradients_match_finite_differences():
    rng = np.random.default_rng(4)
    a, b = (jt.tensor(rng.standard_normal((3, 4)), requires_grad=True) for _ in range(2))
    assert jt.autograd.gradcheck(lambda p: F.normalize(p, dim=0), (a,))
    assert jt.autograd.gradcheck(lambda p, q: F.cosine_similarity(p, q), (a, b))
    assert jt.autograd.gradcheck(lambda p, q: F.pairwise_distance(p, q, p=3), (a, b))
    assert jt.autograd.gradcheck(lambda p: F.pad(p, (1, 2, 0, 1), "reflect"),
                                 (a.detach().reshape(1, 3, 4).requires_grad_(),))


def attention_reference(q, k, v, bias, scale):
    w = q @ np.swapaxes(k, -1, -2) * scale + bias
    w = np.exp(w - w.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("options", ["plain", "causal", "bool mask", "float mask", "gqa",
                                     "scale"])
def test_scaled_dot_product_attention_matches_numpy_and_torch(options):
    rng = np.random.default_rng(5)
    heads, kv_heads = (4, 2) if options == "gqa" else (3, 3)
    q = rng.standard_normal((2, heads, 4, 8))
    k, v = rng.standard_normal((2, kv_heads, 6, 8)), rng.standard_normal((2, kv_heads, 6, 5))
    bias, kw, scale = np.zeros((4, 6)), {}, 1 / math.sqrt(8)
    if options == "causal":
        kw["is_causal"] = True
        bias = np.where(np.tril(np.ones((4, 6), bool)), 0, -np.inf)
    elif options == "bool mask":
        mask = rng.random((4, 6)) > 0.4
        mask[:, 0] = True
        kw["attn_mask"], bias = mask, np.where(mask, 0, -np.inf)
    elif options == "float mask":
        kw["attn_mask"] = bias = rng.standard_normal((4, 6))
    elif options == "gqa":
        kw["enable_gqa"] = True
    elif options == "scale":
        kw["scale"] = scale = 0.3
    tensors = [jt.tensor(t, requires_grad=True) for t in (q, k, v)]
    mine = F.scaled_dot_product_attention(
        *tensors, **{key: jt.tensor(val) if key == "attn_mask" else val
                     for key, val in kw.items()})
    kr, vr = (np.repeat(t, heads // kv_heads, axis=1) for t in (k, v))
    np.testing.assert_allclose(mine.detach().numpy(), attention_reference(q, kr, vr, bias, scale),
                               rtol=1e-12, atol=1e-12)
    torch = pytest.importorskip("torch")
    theirs_in = [torch.tensor(t, requires_grad=True) for t in (q, k, v)]
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *theirs_in, **{key: torch.tensor(val) if key == "attn_mask" else val
                       for key, val in kw.items()})
    assert_grads_match_torch(torch, rng, mine, theirs, tensors, theirs_in, 1e-10, 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("sizes", [(1, 1, 1, 1), (5, 7, 4, 6), (9, 4, 3, 5), (150, 130, 16, 8)])
def test_fused_attention_matches_torch(sizes, causal, dtype):
    """Without a mask or dropout, attention is one op (kernels/cpu/attention.py, query rows in
    blocks of 64: 150 rows span three, a causal one stopping at its last key); its values and
    gradients are torch's, and so are those of the composed path that a recorded backward
    (create_graph) differentiates."""
    torch = pytest.importorskip("torch")
    length, source, e, ev = sizes
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(dtype)
              for s in ((2, 3, length, e), (2, 3, source, e), (2, 3, source, ev))]
    mine = [jt.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(*mine, is_causal=causal)
    want = torch.nn.functional.scaled_dot_product_attention(*theirs, is_causal=causal)
    assert type(out.grad_fn).__name__ == "FlashAttentionBackward0"
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    assert out.dtype.name == str(want.dtype).removeprefix("torch.") and out.shape == want.shape
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), **tol)
    assert_grads_match_torch(torch, rng, out, want, mine, theirs, **tol)
    if length <= 9 and dtype == np.float64:  # second derivatives, through the composed path
        g = jt.tensor(rng.standard_normal(out.shape), requires_grad=True)
        first = jt.autograd.grad(F.scaled_dot_product_attention(*mine, is_causal=causal), mine,
                                 g, create_graph=True)
        tg = torch.tensor(g.detach().numpy(), requires_grad=True)
        tq, tk, tv = theirs  # (torch's flash attention has no second derivative: its math)
        w = tq @ tk.transpose(-2, -1) / math.sqrt(e)
        if causal:
            w = w.masked_fill(~torch.ones(length, source, dtype=torch.bool).tril(), -math.inf)
        tfirst = torch.autograd.grad(w.softmax(-1) @ tv, theirs, tg, create_graph=True)
        second = jt.autograd.grad(sum((t * t).sum() for t in first), [*mine, g])
        tsecond = torch.autograd.grad(sum((t * t).sum() for t in tfirst), [*theirs, tg])
        for a, b in zip(second, tsecond, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)


@pytest.mark.parametrize("layout", ["split projection", "contiguous", "flipped", "3-D"])
def test_fused_attention_reads_strided_heads_and_lays_out_as_torch(layout):
    """q, k, v viewed from a (B, L, 3 H E) projection are read in place, and the output (and
    the gradients) are laid out as torch's: (B, L, H, E) in memory where the query's heads lie
    closer than its rows. Values, gradients and the output's strides match torch's."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(9).standard_normal((2, 5, 3 * 3 * 4)).astype(np.float32)

    def heads(lib, t):
        if layout == "split projection":
            return [z.view(2, 5, 3, 4).transpose(1, 2) for z in t.split(12, dim=2)]
        if layout == "contiguous":
            return [z.reshape(2, 5, 3, 4).transpose(1, 2).contiguous() for z in t.split(12, 2)]
        if layout == "flipped":  # (a negative stride: copied first)
            return [z.view(2, 5, 3, 4).transpose(1, 2).flip(2) for z in t.split(12, dim=2)]
        return [z.reshape(10, 3, 4) for z in t.split(12, dim=2)]
    results = []
    for lib in (jt, torch):
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.scaled_dot_product_attention(*heads(lib, t), is_causal=True)
        (out * out).sum().backward()
        results.append((out, t.grad))
    (out, grad), (want, want_grad) = results
    assert type(out.grad_fn).__name__ == "FlashAttentionBackward0"
    assert out.stride() == want.stride()
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=1e-4, atol=1e-5)


def test_fused_attention_bits_at_any_thread_count():
    rng = np.random.default_rng(8)
    q, k, v = (jt.tensor(rng.standard_normal((4, 4, 100, 32)).astype(np.float32),
                         requires_grad=True) for _ in range(3))
    g = jt.tensor(rng.standard_normal((4, 4, 100, 32)).astype(np.float32))

    def run():
        for t in (q, k, v):
            t.grad = None
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(g)
        return [out.detach().numpy().copy()] + [t.grad.numpy().copy() for t in (q, k, v)]
    first, *rest = at_thread_counts(run)
    for other in rest:
        for a, b in zip(first, other, strict=True):
            np.testing.assert_array_equal(a, b)


def test_scaled_dot_product_attention_errors_and_dropout():
    q = jt.randn(2, 4, 8)
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=jt.ones(4, 4), is_causal=True)
    with pytest.raises(RuntimeError, match="must divide the number of heads in query"):
        F.scaled_dot_product_attention(jt.randn(1, 4, 2, 8), jt.randn(1, 3, 2, 8),
                                       jt.randn(1, 3, 2, 8), enable_gqa=True)
    jt.manual_seed(0)
    dropped = F.scaled_dot_product_attention(q, q, jt.ones(2, 4, 3), dropout_p=0.5)
    # each output is a sum of kept weights scaled by 2: rows of ones average to 1 over seeds
    assert dropped.shape == (2, 4, 3) and not np.allclose(dropped.numpy(), 1.0)


def test_attention_rows_masked_everywhere_give_zeros_and_heads_repeat_apart():
    """As torch 2.13: a query row that may attend nothing yields 0 (and 0 gradients), not NaN
    (a padding mask makes such rows); with enable_gqa, key's and value's heads repeat each to
    query's."""
    q = jt.ones(1, 2, 3, requires_grad=True)
    mask = jt.tensor([[True, False], [False, False]])
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    out.sum().backward()
    assert out.detach().tolist() == [[[1.0] * 3, [0.0] * 3]]
    assert np.isfinite(q.grad.numpy()).all()
    floats = F.scaled_dot_product_attention(q, q, q, attn_mask=jt.tensor(
        [[0.0, 0.0], [-math.inf, -math.inf]]))
    assert floats.detach().tolist() == [[[1.0] * 3, [0.0] * 3]]
    with pytest.raises(RuntimeError, match="attn_mask dtype to be bool or float, got int64"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=jt.ones(2, 2, dtype=jt.int64))
    rng = np.random.default_rng(6)
    arrays = (rng.standard_normal((1, 4, 3, 8)), rng.standard_normal((1, 2, 5, 8)),
              rng.standard_normal((1, 1, 5, 4)))
    got = F.scaled_dot_product_attention(*map(jt.tensor, arrays), enable_gqa=True)
    k = np.repeat(arrays[1], 2, axis=1)
    v = np.repeat(arrays[2], 4, axis=1)
    want = attention_reference(arrays[0], k, v, 0.0, 1 / math.sqrt(8))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
