r"""PyTorch's nn.Transformer family, built from MultiheadAttention, Linear, LayerNorm and Dropout.

    TransformerEncoderLayer   self-attention block, then feed-forward block
    TransformerEncoder        num_layers deep copies of an encoder layer, then an optional norm
    TransformerDecoderLayer   self-attention block, cross-attention block (to the encoder's
                              output, the "memory"), then feed-forward block
    TransformerDecoder        num_layers deep copies of a decoder layer, then an optional norm
    Transformer               an encoder and a decoder, each ending in a LayerNorm

The blocks (dropout after each, p = dropout):
    self-attention    sa(x)    = dropout1(MultiHead(x, x, x))
    cross-attention   mha(x,m) = dropout2(MultiHead(x, m, m))
    feed-forward      ff(x)    = dropout(activation(x W1^T + b1)) W2^T + b2, then its own dropout
each added back to its input in one of two ways:
    post-norm (default, as in "Attention Is All You Need")   x = norm(x + block(x))
    pre-norm (norm_first=True)                               x = x + block(norm(x))

Shapes are PyTorch's: (S, N, E) sequence first, (N, S, E) with batch_first=True, or one
unbatched sequence (S, E). Masks follow MultiheadAttention: bool True = may NOT attend, a float
mask is added to the scores; Transformer.generate_square_subsequent_mask(S) is the causal one.
"""
from __future__ import annotations

import copy
import math
from typing import Any, Callable, Union

from ..autograd.grad_mode import is_grad_enabled
from ..factories import full
from ..ops.indexing import triu
from ..tensor import Tensor, check_device
from ..types import DeviceLike, DTypeLike
from . import functional as F, init
from .layers import GELU, Dropout, LayerNorm, Linear, ModuleList, ReLU
from .module import Module
from .multihead import MultiheadAttention, _canonical_mask

Activation = Union[str, Callable[[Tensor], Tensor]]
"""A feed-forward activation: 'relu', 'gelu', or a function or module of a Tensor."""


def _activation_fn(activation):
    """The feed-forward's nonlinearity: "relu", "gelu" or any callable (a function or a Module)."""
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    if not callable(activation):
        raise TypeError(f"activation should be 'relu', 'gelu' or a callable, got {type(activation).__name__}")
    return activation


def _relu_or_gelu(activation):
    """PyTorch's flag: 1 for ReLU, 2 for GELU, 0 for anything else (its fast kernels know only those two)."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


def _check_tensor(t, name, where):
    if not isinstance(t, Tensor):
        raise TypeError(f"{where}: {name} must be a Tensor, got {type(t).__name__}")


def _seq_len(x, layer):
    """The sequence length of x as `layer` reads it: (S, E), (S, N, E), or (N, S, E) when batch_first."""
    return x.shape[0] if x.ndim == 2 else x.shape[1 if layer.self_attn.batch_first else 0]


def _is_causal(mask, is_causal, size):
    """is_causal as given; when None, whether `mask` equals the causal mask of `size` (as PyTorch guesses)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    causal = Transformer.generate_square_subsequent_mask(size, dtype=mask.dtype)
    return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())


class TransformerEncoderLayer(Module):
    r"""One encoder layer: self-attention, then feed-forward, each with its residual and LayerNorm.

        post-norm:  x = norm1(x + sa(x));        x = norm2(x + ff(x))
        pre-norm:   x = x + sa(norm1(x));        x = x + ff(norm2(x))

    forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False): src (S, N, E),
    (N, S, E) with batch_first=True, or (S, E); src_mask (S, S) or (N*nhead, S, S);
    src_key_padding_mask (N, S) or (S,), True at padding. Returns src's shape.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Activation = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__()
        kw: dict[str, Any] = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        activation = _activation_fn(activation)
        self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation  # a Module (nn.GELU()) becomes a child, as in PyTorch; a function does not

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        _check_tensor(src, "src", "TransformerEncoderLayer")
        where = "TransformerEncoderLayer"
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", src_mask, "src_mask",
                                               src.dtype, where)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, where)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        """sa(x) = dropout1(MultiHead(x, x, x)): every position looks at every (visible) position."""
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        """ff(x) = dropout2(linear2(dropout(activation(linear1(x))))): the same two layers at every position."""
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    r"""num_layers copies of `encoder_layer` applied in turn, then `norm` if given.

    Each copy is a deep copy (its own parameters, all starting from encoder_layer's values), as in
    PyTorch. forward(src, mask=None, src_key_padding_mask=None, is_causal=None): when is_causal is
    None, a `mask` equal to the causal mask counts as is_causal=True.

    enable_nested_tensor: PyTorch's switch for its packed inference path. In eval mode with no
    gradient to record, a batch-first encoder (even number of heads, relu/gelu, post-norm) given a
    src_key_padding_mask whose padding is at the end of each sequence skips the padded positions,
    so its output there is 0 (before `norm`). minitensor computes them and then gives them 0
    under the same conditions, so the numbers are PyTorch's.
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor and _packs_padding(encoder_layer)
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        _check_tensor(src, "src", "TransformerEncoder")
        where = "TransformerEncoder"
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", mask, "mask", src.dtype,
                                               where)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, where)
        is_causal = _is_causal(mask, is_causal, _seq_len(src, self.layers[0]))
        zero_padding = self._zeroes_padding(src, mask, src_key_padding_mask)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal)
        if zero_padding:
            padded = (src_key_padding_mask != 0).unsqueeze(-1)          # (N, S, 1)
            output = output.masked_fill(padded, 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _zeroes_padding(self, src, mask, key_padding_mask):
        """Whether PyTorch takes its packed path here (see the class docstring), which outputs 0 at padding."""
        first = self.layers[0]
        if not (getattr(self, "use_nested_tensor", False) and not first.training and src.ndim == 3
                and key_padding_mask is not None and mask is None):
            return False
        keep = (key_padding_mask == 0).numpy(force=True)                   # (N, S) True at a real token
        if self.mask_check and (keep[:, 1:] > keep[:, :-1]).any():  # padding before a real token: not packable
            return False
        attn = first.self_attn
        tensors = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                   first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias,
                   first.linear1.weight, first.linear1.bias, first.linear2.weight, first.linear2.bias)
        return not (is_grad_enabled() and any(t.requires_grad for t in tensors))


def _packs_padding(layer):
    """Whether PyTorch's encoder may pack away padding for layers like `layer` (its init conditions)."""
    return (isinstance(layer, TransformerEncoderLayer) and not layer.norm_first and layer.self_attn.batch_first
            and layer.self_attn._qkv_same_embed_dim and layer.self_attn.in_proj_bias is not None
            and layer.activation_relu_or_gelu and layer.norm1.eps == layer.norm2.eps
            and layer.self_attn.num_heads % 2 == 0)


class TransformerDecoderLayer(Module):
    r"""One decoder layer: self-attention on the target, cross-attention to `memory`, feed-forward.

        post-norm:  x = norm1(x + sa(x));   x = norm2(x + mha(x, memory));   x = norm3(x + ff(x))
        pre-norm:   x = x + sa(norm1(x));   x = x + mha(norm2(x), memory);   x = x + ff(norm3(x))

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False): tgt (T, N, E),
    memory (S, N, E) (batch first with batch_first=True, or unbatched (T, E), (S, E));
    tgt_mask (T, T), memory_mask (T, S). Returns tgt's shape.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Activation = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__()
        kw: dict[str, Any] = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                                 **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation_fn(activation)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        """sa(x) = dropout1(MultiHead(x, x, x)): each target position looks at the (allowed) target positions."""
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        """mha(x, m) = dropout2(MultiHead(x, m, m)): queries from the target, keys and values from the memory."""
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        """ff(x) = dropout3(linear2(dropout(activation(linear1(x)))))."""
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    r"""num_layers deep copies of `decoder_layer` applied in turn (each also reading `memory`), then
    `norm` if given. When tgt_is_causal is None, a tgt_mask equal to the causal mask counts as causal."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        _check_tensor(tgt, "tgt", "TransformerDecoder")
        tgt_is_causal = _is_causal(tgt_mask, tgt_is_causal, _seq_len(tgt, self.layers[0]))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    r"""The encoder-decoder of "Attention Is All You Need": memory = encoder(src), out = decoder(tgt, memory).

    Defaults are PyTorch's (d_model=512, nhead=8, 6 + 6 layers, dim_feedforward=2048, dropout=0.1,
    relu, post-norm, sequence first). Each stack ends in a LayerNorm (`encoder.norm`,
    `decoder.norm`). Every parameter with more than one dim is then re-drawn Xavier-uniform, as
    PyTorch does; biases and norms keep their layers' init. custom_encoder / custom_decoder
    replace the stacks.

    forward(src, tgt, src_mask, tgt_mask, memory_mask, src_key_padding_mask, tgt_key_padding_mask,
    memory_key_padding_mask, src_is_causal, tgt_is_causal, memory_is_causal) returns tgt's shape.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: Activation = F.relu,
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        kw: dict[str, Any] = dict(device=device, dtype=dtype)
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **kw), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **kw), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        _check_tensor(src, "src", "Transformer")
        _check_tensor(tgt, "tgt", "Transformer")
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError(f"Transformer: the batch number of src and tgt must be equal, got src of shape "
                               f"{tuple(src.shape)} and tgt of shape {tuple(tgt.shape)} "
                               f"(batch_first={self.batch_first})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"Transformer: the feature number of src and tgt must be equal to d_model="
                               f"{self.d_model}, got src of shape {tuple(src.shape)} and tgt of shape "
                               f"{tuple(tgt.shape)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: DeviceLike | None = None,
                                        dtype: DTypeLike | None = None) -> Tensor:
        """The causal mask (sz, sz): 0 on and below the diagonal (key j <= query i may be seen), -inf above.

        Of the default float dtype unless `dtype` is given (with dtype=bool: True above the diagonal).
        """
        check_device(device, "generate_square_subsequent_mask")
        return triu(full((sz, sz), -math.inf, dtype=dtype), diagonal=1)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
