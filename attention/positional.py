r"""Positional encodings: attention itself is blind to order (permuting the keys and values
together permutes nothing in the output), so each position's vector gets a position signal added.

    SinusoidalPositionalEncoding(d_model, max_len)   fixed:   PE[t, 2i] = sin(t / 10000^{2i/d}),
                                                               PE[t, 2i+1] = cos(t / 10000^{2i/d})
    LearnedPositionalEncoding(max_len, d_model)      learned: one trainable vector per position

Both take x of shape (..., T, d_model) and return x + PE[:T].
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

import minitensor as mt
import minitensor.nn as nn
from minitensor import Tensor

from .functional import check_tensor


def sinusoidal_table(max_len: int, d_model: int) -> NDArray[np.float64]:
    r"""The (max_len, d_model) float64 table PE[t, 2i] = sin(t w_i), PE[t, 2i+1] = cos(t w_i),
    w_i = 10000^{-2i/d_model}: wavelengths from 2 pi to 10000 * 2 pi, so nearby positions differ in
    the fast dims and far ones in the slow dims, and PE[t + k] is a rotation of PE[t] for each pair."""
    t = np.arange(max_len, dtype=np.float64)[:, None]                             # (max_len, 1)
    w = np.exp(-math.log(10000.0) * np.arange(0, d_model, 2) / d_model)          # (ceil(d/2),)
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.sin(t * w)
    pe[:, 1::2] = np.cos(t * w[: d_model // 2])                                   # odd d_model: one cos fewer
    return pe


def _check_input(x, max_len, d_model, op):
    if check_tensor(x, op).ndim < 2 or x.shape[-1] != d_model:
        raise RuntimeError(f"{op}: expected input of shape (..., T, {d_model}), got {tuple(x.shape)}")
    if x.shape[-2] > max_len:
        raise RuntimeError(
            f"{op}: sequence length {x.shape[-2]} exceeds max_len={max_len} (input shape {tuple(x.shape)})")


class SinusoidalPositionalEncoding(nn.Module):
    """x + PE[:T] with the fixed sinusoidal table, kept as a non-persistent buffer `pe`
    (max_len, d_model): it is recomputed at construction, so checkpoints don't carry it."""

    pe: Tensor  # the table, a buffer (not saved in state_dict: it is recomputed)

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0) -> None:
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.register_buffer("pe", mt.tensor(sinusoidal_table(max_len, d_model), dtype=mt.get_default_dtype()),
                             persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        _check_input(x, self.max_len, self.d_model, "SinusoidalPositionalEncoding")
        pe = self.pe[: x.shape[-2]]                          # (T, d_model)
        return self.dropout(x + pe.to(x.dtype))              # (..., T, d_model)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"


class LearnedPositionalEncoding(nn.Module):
    """x + weight[:T] with a trainable `weight` of shape (max_len, d_model), initialised N(0, 0.02^2)
    (GPT-2's choice: small next to unit-scale token embeddings, so order is learned, not imposed)."""

    def __init__(self, max_len: int, d_model: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.max_len, self.d_model = max_len, d_model
        self.weight = nn.Parameter(mt.zeros(max_len, d_model))
        nn.init.normal_(self.weight, 0.0, 0.02)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        _check_input(x, self.max_len, self.d_model, "LearnedPositionalEncoding")
        return self.dropout(x + self.weight[: x.shape[-2]])  # (..., T, d_model)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}"
