"""The Transformer built on nn.MultiheadAttention: encoder and decoder layers and stacks, and
the whole encoder-decoder model, with torch's submodule names (state dicts load from
torch's)."""
import copy
import math

from ...creation import full
from .. import functional as F
from .. import init
from .activation import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]


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
