"""nn.MultiheadAttention (torch's module, its parameters, masks and returned weights, composed
from ops -- projections, batched products, softmax -- as torch's multi_head_attention_forward
computes them), and the Transformer built on it: encoder and decoder layers and stacks, and
the whole encoder-decoder model, with torch's submodule names (state dicts load from torch's)."""
import copy
import math

from ..creation import empty, full, zeros
from ..dtypes import bool_
from ..ops.shape import cat
from . import functional as F, init
from .containers import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module
from .parameter import Parameter

__all__ = ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer"]


class NonDynamicallyQuantizableLinear(Linear):
    """out_proj's class, named as torch's (its repr and type checks)."""


def _additive(mask, name, dtype):
    """A mask as the float added to the scores: a bool mask's True (not allowed) is -inf."""
    if mask is None:
        return None
    if mask.dtype is bool_:
        return zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)
    if not mask.dtype.is_floating_point:
        raise RuntimeError(f"only bool and floating types of {name} are supported, got "
                           f"{mask.dtype}")
    return mask.to(dtype)


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim / num_heads features: query, key and value
    projected (in_proj_weight, or q/k/v_proj_weight when kdim or vdim differ from embed_dim),
    scaled dot products, softmax (attention dropout in training), out_proj. Inputs are
    (L, N, E), (N, L, E) with batch_first, or unbatched (L, E). A bool attn_mask or
    key_padding_mask marks with True the positions that may NOT be attended (a float mask is
    added)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError(f"embed_dim ({embed_dim}) must be divisible by num_heads "
                                 f"({num_heads})")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first, self.head_dim = batch_first, embed_dim // num_heads
        self.add_zero_attn = add_zero_attn
        options = dict(device=device, dtype=dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **options))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **options))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **options))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **options))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **options))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **options)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **options))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **options))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        """torch's: xavier_uniform_ projections, zero biases, normal bias_k and bias_v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """(attention output of query's shape, the attention weights -- averaged over heads
        unless average_attn_weights=False -- or None without need_weights)."""
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask` "
                               "to create this mask.")
        batched = query.ndim == 3
        if not batched and query.ndim != 2:
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but "
                                 f"received {query.ndim}-D query tensor")
        if batched and self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        if not batched:
            query, key, value = (t.unsqueeze(1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        out, weights = self._attend(query, key, value, key_padding_mask, need_weights,
                                    attn_mask, average_attn_weights)
        if not batched:
            out = out.squeeze(1)
            weights = None if weights is None else weights.squeeze(0)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _attend(self, query, key, value, key_padding_mask, need_weights, attn_mask, average):
        """multi_head_attention_forward on (L, N, E) inputs."""
        length, n, e = query.shape
        heads, head_dim = self.num_heads, self.head_dim
        if e != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {e}")
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
        if self._qkv_same_embed_dim:
            wq, wk, wv = self.in_proj_weight.chunk(3)
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        q, k, v = F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)
        mask = _additive(attn_mask, "attn_mask", q.dtype)
        padding = _additive(key_padding_mask, "key_padding_mask", q.dtype)
        if mask is not None:
            source = key.shape[0]
            want = (length, source) if mask.ndim == 2 else (n * heads, length, source)
            if mask.ndim not in (2, 3) or tuple(mask.shape) != want:
                raise RuntimeError(f"The shape of the {mask.ndim}D attn_mask is "
                                   f"{tuple(mask.shape)}, but should be {want}.")
            mask = mask.unsqueeze(0) if mask.ndim == 2 else mask
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, n, e)])
            v = cat([v, self.bias_v.expand(1, n, e)])
            mask = None if mask is None else F.pad(mask, (0, 1))
            padding = None if padding is None else F.pad(padding, (0, 1))
        q = q.reshape(length, n * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], n * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], n * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            k = cat([k, zeros(n * heads, 1, head_dim, dtype=k.dtype, device=k.device)], 1)
            v = cat([v, zeros(n * heads, 1, head_dim, dtype=v.dtype, device=v.device)], 1)
            mask = None if mask is None else F.pad(mask, (0, 1))
            padding = None if padding is None else F.pad(padding, (0, 1))
        source = k.shape[1]
        if padding is not None:
            if tuple(padding.shape) != (n, source):
                raise AssertionError(f"expecting key_padding_mask shape of {(n, source)}, but "
                                     f"got {tuple(padding.shape)}")
            padding = padding.reshape(n, 1, 1, source).expand(n, heads, 1, source) \
                .reshape(n * heads, 1, source)
            mask = padding if mask is None else mask + padding
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
        scores = scores if mask is None else scores + mask
        # as torch: the weights path's plain softmax (NaN in rows masked everywhere), the
        # attention-only path's safe one (0 there)
        weights = scores.softmax(-1) if need_weights else F.safe_softmax(scores)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout)
        out = (weights @ v).transpose(0, 1).reshape(length * n, e)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).reshape(length, n, e)
        if not need_weights:
            return out, None
        weights = weights.reshape(n, heads, length, source)
        return out, weights.mean(dim=1) if average else weights


def _activation_fn(activation):
    """A layer's activation: "relu" or "gelu" by name, or any callable (a Module becomes a
    child, as in torch)."""
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        return F.relu if activation == "relu" else F.gelu
    return activation


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block (linear1, activation, linear2), each with
    dropout and a residual connection, normalised after (or, with norm_first, before) each:
    torch's layer, with its submodules' names."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        options = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **options)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **options)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **options)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.activation = _activation_fn(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._attention(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._feed_forward(self.norm2(x))
        x = self.norm1(x + self._attention(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._feed_forward(x))

    def _attention(self, x, mask, padding, is_causal):
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _feed_forward(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer applied in turn, then `norm` when given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=bool(is_causal))
        return out if self.norm is None else self.norm(out)


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention from the target to the encoder's output
    (`memory`), and a feed-forward block (linear1, activation, linear2), each with dropout and a
    residual connection, normalised after (or, with norm_first, before) each: torch's layer,
    with its submodules' names and order."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        options = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **options)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **options)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **options)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **options)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation_fn(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """The target's new features, tgt's shape. A causal flag is a hint that its mask is
        the causal one (so the mask must be given, as in torch); the mask given is applied."""
        x = tgt
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                         tgt_is_causal)
            x = x + self._cross_attention(self.norm2(x), memory, memory_mask,
                                          memory_key_padding_mask, memory_is_causal)
            return x + self._feed_forward(self.norm3(x))
        x = self.norm1(x + self._self_attention(x, tgt_mask, tgt_key_padding_mask,
                                                tgt_is_causal))
        x = self.norm2(x + self._cross_attention(x, memory, memory_mask,
                                                 memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._feed_forward(x))

    def _self_attention(self, x, mask, padding, is_causal):
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                           is_causal=bool(is_causal), need_weights=False)[0]
        return self.dropout1(x)

    def _cross_attention(self, x, memory, mask, padding, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=mask, key_padding_mask=padding,
                                is_causal=bool(is_causal), need_weights=False)[0]
        return self.dropout2(x)

    def _feed_forward(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer applied in turn to the target (each attending to the
    same memory), then `norm` when given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        # tgt_is_causal=None asks torch to detect whether tgt_mask is the causal mask; the flag
        # is only a hint for its fused kernels, and the mask itself is applied here either way
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=tgt_is_causal is True, memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need": num_encoder_layers encoder
    layers and num_decoder_layers decoder layers, each stack closed by a LayerNorm (or
    custom_encoder / custom_decoder in their place), every parameter of two or more dims
    drawn by xavier_uniform_ as torch's. Inputs (S, N, E) and (T, N, E), batch first with
    batch_first, or unbatched (S, E) and (T, E)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        options = dict(device=device, dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first, norm_first,
                                            bias, **options)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first, norm_first,
                                            bias, **options)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """The decoder's output for tgt, attending to the encoding of src: tgt's shape."""
        batched = src.dim() == 3
        if batched and src.size(0 if self.batch_first else 1) != \
                tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The (sz, sz) causal mask: -inf above the diagonal (a position may not attend to
        later ones), 0 on and below it; float (the default dtype) unless dtype says."""
        return full((sz, sz), -math.inf, dtype=dtype, device=device).triu(1)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
