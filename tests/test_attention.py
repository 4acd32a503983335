"""nn.MultiheadAttention: against a NumPy reference written from torch's documentation, and
against torch itself (skipped where not installed) with its parameters loaded, for every
option: batch_first, unbatched input, bool and float attn_mask, key_padding_mask, kdim/vdim,
add_bias_kv, add_zero_attn, no bias, per-head weights; gradients of inputs and parameters;
state_dict keys, repr, init and errors; TransformerEncoderLayer and TransformerEncoder against
torch."""
import warnings

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn


def reference(m, q, k, v, mask=None):
    """(output, head-averaged weights) of (L, N, E) inputs in float64 NumPy; mask additive."""
    p = {key: value.detach().numpy().astype(np.float64) for key, value in m.state_dict().items()}
    e, h = m.embed_dim, m.num_heads
    wq, wk, wv = np.split(p["in_proj_weight"], 3)
    bq, bk, bv = np.split(p["in_proj_bias"], 3)
    length, n, _ = q.shape

    def heads(x):  # (T, N, E) -> (N, H, T, E / H)
        return x.reshape(x.shape[0], n, h, e // h).transpose(1, 2, 0, 3)
    qh, kh, vh = heads(q @ wq.T + bq), heads(k @ wk.T + bk), heads(v @ wv.T + bv)
    scores = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(e // h) + (0 if mask is None else mask)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = (w @ vh).transpose(2, 0, 1, 3).reshape(length, n, e)
    return out @ p["out_proj.weight"].T + p["out_proj.bias"], w.mean(1)


def test_matches_numpy_with_masks():
    rng = np.random.default_rng(0)
    jt.manual_seed(0)
    m = nn.MultiheadAttention(8, 2).double()
    q, k = rng.standard_normal((4, 3, 8)), rng.standard_normal((5, 3, 8))
    v = rng.standard_normal((5, 3, 8))
    causal = np.triu(np.ones((4, 5), bool), 1)
    pad = np.zeros((3, 5), bool)
    pad[0, 3:] = True
    for kw, mask in ((dict(), None), (dict(attn_mask=jt.tensor(causal)),
                                      np.where(causal, -np.inf, 0.0)),
                     (dict(key_padding_mask=jt.tensor(pad)),
                      np.where(pad, -np.inf, 0.0)[:, None, None, :])):
        out, weights = m(jt.tensor(q), jt.tensor(k), jt.tensor(v), **kw)
        want_out, want_w = reference(m, q, k, v, mask)
        assert out.shape == (4, 3, 8) and weights.shape == (3, 4, 5)
        np.testing.assert_allclose(out.detach().numpy(), want_out, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(weights.detach().numpy(), want_w, rtol=1e-10, atol=1e-12)


CASES = [({}, {}), (dict(batch_first=True), dict(need_weights=False)),
         ({}, dict(average_attn_weights=False)), ({}, dict(attn_mask="bool")),
         ({}, dict(attn_mask="float")), ({}, dict(key_padding_mask="bool")),
         ({}, dict(key_padding_mask="bool", attn_mask="bool")),
         (dict(kdim=6, vdim=3), {}), (dict(add_bias_kv=True, add_zero_attn=True),
                                      dict(attn_mask="bool")),
         (dict(bias=False), {}), (dict(unbatched=True), {}),
         ({}, dict(attn_mask="bool", is_causal=True))]


@pytest.mark.parametrize("options, call", CASES)
def test_matches_torch_values_weights_and_gradients(options, call):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    options = dict(options)
    unbatched = options.pop("unbatched", False)
    theirs = torch.nn.MultiheadAttention(8, 2, **options)
    mine = nn.MultiheadAttention(8, 2, **options)
    assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    first = options.get("batch_first", False)

    def data(length, e):
        shape = (length, e) if unbatched else (3, length, e) if first else (length, 3, e)
        return rng.standard_normal(shape).astype(np.float32)
    arrays = (data(4, 8), data(5, options.get("kdim") or 8), data(5, options.get("vdim") or 8))
    masks = {"attn_mask": {"bool": np.triu(np.ones((4, 5), bool), 1),
                           "float": rng.standard_normal((4, 5)).astype(np.float32)},
             "key_padding_mask": {"bool": np.array([[0, 0, 0, 1, 1], [0] * 5, [0, 1, 0, 0, 0]],
                                                   bool)}}
    kw = {key: masks[key][value] if key in masks else value for key, value in call.items()}
    a = [jt.tensor(x, requires_grad=True) for x in arrays]
    b = [torch.tensor(x, requires_grad=True) for x in arrays]
    out, weights = mine(*a, **{k: jt.tensor(v) if isinstance(v, np.ndarray) else v
                               for k, v in kw.items()})
    want, want_weights = theirs(*b, **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v
                                       for k, v in kw.items()})
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    assert (weights is None) == (want_weights is None)
    loss, their_loss = out.sum(), want.sum()
    if weights is not None:
        np.testing.assert_allclose(weights.detach().numpy(), want_weights.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        loss, their_loss = loss + (weights * weights).sum(), \
            their_loss + (want_weights * want_weights).sum()
    loss.backward()
    their_loss.backward()
    for x, y in list(zip(a, b, strict=False)) + list(zip(mine.parameters(), theirs.parameters(),
                                                         strict=False)):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_init_dropout_and_errors():
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    bound = np.sqrt(6 / (8 + 24))  # xavier_uniform_ of the (24, 8) in_proj_weight
    assert m.in_proj_weight.abs().max().item() <= bound
    assert m.in_proj_bias.abs().sum().item() == 0 and m.out_proj.bias.abs().sum().item() == 0
    x = jt.randn(4, 2, 8)
    jt.manual_seed(0)
    train = m(x, x, x)[0]
    m.eval()
    assert not np.allclose(train.detach().numpy(), m(x, x, x)[0].detach().numpy())
    with pytest.raises(AssertionError, match="embed_dim \\(8\\) must be divisible by"):
        nn.MultiheadAttention(8, 3)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is \\(3, 4\\)"):
        m(x, x, x, attn_mask=jt.zeros(3, 4))
    with pytest.raises(AssertionError, match="expecting key_padding_mask shape of \\(2, 4\\)"):
        m(x, x, x, key_padding_mask=jt.zeros(2, 3, dtype=jt.bool))
    with pytest.raises(RuntimeError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=jt.zeros(4, 4, dtype=jt.int64))


@pytest.mark.parametrize("options", [dict(), dict(norm_first=True, activation="gelu",
                                                  batch_first=True), dict(bias=False)])
def test_transformer_encoder_matches_torch(options):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    theirs_layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **options)
    mine_layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **options)
    assert repr(mine_layer) == repr(theirs_layer).replace("torch.", "jitensor.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note on nested tensors
        theirs = torch.nn.TransformerEncoder(theirs_layer, 2, norm=torch.nn.LayerNorm(8))
    mine = nn.TransformerEncoder(mine_layer, 2, norm=nn.LayerNorm(8))
    assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((3, 5, 8) if options.get("batch_first") else (5, 3, 8)) \
        .astype(np.float32)
    pad = np.zeros((3, 5), bool)
    pad[0, 4] = True
    for kw in ({}, dict(mask=np.triu(np.ones((5, 5), bool), 1)),
               dict(src_key_padding_mask=pad)):
        a, b = jt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out = mine(a, **{k: jt.tensor(v) for k, v in kw.items()})
        want = theirs(b, **{k: torch.tensor(v) for k, v in kw.items()})
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
        (out * out).sum().backward()
        (want * want).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-4)
    assert mine.layers[0] is not mine.layers[1]  # deep copies, as torch's
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("separate", [False, True])
def test_multi_head_attention_forward_matches_torch(batched, separate):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    e, heads, length, source, n = 8, 2, 3, 4, 2
    shape = (length, n, e) if batched else (length, e)
    kshape = (source, n, e) if batched else (source, e)
    arrays = {"query": rng.standard_normal(shape), "key": rng.standard_normal(kshape),
              "value": rng.standard_normal(kshape), "in_w": rng.standard_normal((3 * e, e)),
              "in_b": rng.standard_normal(3 * e), "out_w": rng.standard_normal((e, e)),
              "out_b": rng.standard_normal(e), "bias_k": rng.standard_normal((1, 1, e)),
              "bias_v": rng.standard_normal((1, 1, e))}
    mask = rng.standard_normal((length, source))
    padding = rng.random((n, source) if batched else (source,)) < 0.3
    padding[..., 0] = False
    results = []
    for lib in (jt, torch):
        t = {k: lib.tensor(v, requires_grad=True) for k, v in arrays.items()}
        q_w, k_w, v_w = t["in_w"].chunk(3) if separate else (None, None, None)
        out, weights = lib.nn.functional.multi_head_attention_forward(
            t["query"], t["key"], t["value"], e, heads, None if separate else t["in_w"],
            t["in_b"], t["bias_k"], t["bias_v"], True, 0.0, t["out_w"], t["out_b"],
            training=True, key_padding_mask=lib.tensor(padding), attn_mask=lib.tensor(mask),
            use_separate_proj_weight=separate, q_proj_weight=q_w, k_proj_weight=k_w,
            v_proj_weight=v_w, average_attn_weights=False)
        (out.sum() + weights.pow(2).sum()).backward()
        results.append((out, weights, {k: v.grad for k, v in t.items()}))
    (mo, mw, mg), (to, tw, tg) = results
    assert tuple(mo.shape) == tuple(to.shape) and tuple(mw.shape) == tuple(tw.shape)
    np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mw.detach().numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)
    for k in arrays:
        np.testing.assert_allclose(mg[k].numpy(), tg[k].numpy(), rtol=1e-9, atol=1e-11)
