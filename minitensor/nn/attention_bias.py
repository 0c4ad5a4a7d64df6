"""`torch.nn.attention.bias`: causal masks for a query and keys of different lengths.

With L queries and S keys, "causal" can mean two things. Upper left: query i sees keys j <= i, as
`is_causal=True` does. Lower right: the queries are the last L of the S positions (decoding with a
cache of earlier keys), so query i sees keys j <= i + (S - L). Each `CausalBias` is the (L, S) bool
mask of its variant (True = may attend) and goes to `scaled_dot_product_attention` as its `attn_mask`:

    out = F.scaled_dot_product_attention(q, k, v, causal_lower_right(L, S))

PyTorch's CausalBias stands for the mask without making it (its attention kernels take the variant
directly); minitensor's one attention path takes masks, so the mask is made when the bias is.
"""
from __future__ import annotations

import enum
import warnings

import numpy as np

from ..tensor import Tensor

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(enum.IntEnum):
    """Which corner the causal triangle starts from (PyTorch's values)."""
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias(Tensor):
    """The (seq_len_q, seq_len_kv) bool mask of a causal `variant`: a Tensor, usable as attn_mask."""

    __slots__ = ("variant", "seq_len_q", "seq_len_kv")

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"CausalBias: variant must be a CausalVariant, got {variant!r}")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, int(seq_len_q), int(seq_len_kv)
        if variant is CausalVariant.LOWER_RIGHT and self.seq_len_q > self.seq_len_kv:
            # (PyTorch's warning, for its fused GPU kernels: its CPU build, like minitensor, gives the
            # queries that see no key an output of 0)
            warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                          UserWarning, stacklevel=3)
        mask = self._mask(variant)
        super().__init__(mask, dtype=mask.dtype)

    def _mask(self, variant: CausalVariant) -> np.ndarray:
        """The keys query i may see: j <= i (upper left), or j <= i + (S - L) (lower right)."""
        shift = 0 if variant is CausalVariant.UPPER_LEFT else self.seq_len_kv - self.seq_len_q
        return np.tri(self.seq_len_q, self.seq_len_kv, shift, dtype=bool)

    def _upper_left(self, device: object = None) -> Tensor:
        return Tensor._make(self._mask(CausalVariant.UPPER_LEFT))

    def _lower_right(self, device: object = None) -> Tensor:
        return Tensor._make(self._mask(CausalVariant.LOWER_RIGHT))

    def _materialize(self, device: object = None) -> Tensor:
        """The mask as a plain bool Tensor."""
        return Tensor._make(self._mask(self.variant))

    def __repr__(self) -> str:  # (PyTorch prints the mask it stands for)
        return repr(self._materialize())


def causal_upper_left(*size: int) -> CausalBias:
    """The causal mask of `size` = (seq_len_q, seq_len_kv) from the top left: query i sees keys j <= i."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size: int) -> CausalBias:
    """The causal mask of `size` = (seq_len_q, seq_len_kv) from the bottom right: query i sees keys
    j <= i + seq_len_kv - seq_len_q."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, size[0], size[1])
