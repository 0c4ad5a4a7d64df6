"""A small decoder-only language model for the toy tasks (GPT-2's layout at toy size).

    tokens (B, T) -> token embedding + learned position embedding      (B, T, d_model)
                  -> n_layer pre-LayerNorm TransformerBlocks, causal    (B, T, d_model)
                  -> final LayerNorm -> linear head                     (B, T, vocab)

The MLP uses GELU's tanh form, as GPT-2 does. Initialisation as GPT-2: every Linear and Embedding weight ~ N(0, 0.02), biases 0, and the two
projections that write into the residual stream (attention's w_o and the MLP's output layer) with
std 0.02 / sqrt(2 n_layer), because 2 n_layer of them add up along the residual path.

Unlike the layers it is built from, the model asks for the fused attention (`fused=True`, one node
per layer with a hand-derived backward): it exists to be trained, and the fused path is the
faster one. `DecoderLM(..., fused=False)` records every step of attention instead, for
`minitensor.autograd.explain`; the parameters, and so the checkpoints, are the same either way.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

import minitensor as mt
import minitensor.nn as nn
from minitensor import Tensor

from .transformer import TransformerBlock


class DecoderLM(nn.Module):
    def __init__(self, vocab_size: int, block_size: int, n_layer: int = 3, n_head: int = 3, d_model: int = 48,
                 dropout: float = 0.0, fused: bool = True) -> None:
        super().__init__()
        self.vocab_size, self.block_size = vocab_size, block_size
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(block_size, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            [TransformerBlock(d_model, n_head, dropout=dropout, causal=True, activation=nn.GELU(approximate="tanh"),
                              fused=fused)
             for _ in range(n_layer)]
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self._init_gpt2(n_layer)

    def _init_gpt2(self, n_layer):
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        for block in self.blocks:
            for proj in (block.attn.w_o, block.mlp.fc2):  # the two writers into the residual stream
                nn.init.normal_(proj.weight, 0.0, 0.02 / math.sqrt(2 * n_layer))

    def forward(self, idx: Tensor) -> Tensor:
        """Logits (B, T, vocab) for int64 token ids `idx` (B, T), T <= block_size."""
        if not isinstance(idx, mt.Tensor) or idx.ndim != 2:
            what = f"shape {tuple(idx.shape)}" if isinstance(idx, mt.Tensor) else type(idx).__name__
            raise ValueError(f"DecoderLM: expected token ids of shape (B, T), got {what} "
                             "(a single sequence of shape (T,) is idx.unsqueeze(0))")
        B, T = idx.shape
        if T > self.block_size:
            raise ValueError(f"DecoderLM: sequence length {T} exceeds block_size {self.block_size}")
        pos = mt.arange(T)                                     # (T,)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))   # (B, T, d_model)
        for block in self.blocks:
            x = block(x)                                       # (B, T, d_model)
        return self.head(self.ln_f(x))                         # (B, T, vocab)

    def attention_maps(self, idx: Any) -> list[NDArray[Any]]:
        """The attention weights of every head of every layer for `idx`: a list of (H, T, T) arrays."""
        with mt.no_grad():
            self(mt.from_numpy(np.asarray(idx)))
        return [b.attn.last_weights.numpy(force=True)[0].copy()  # type: ignore[union-attr, operator]  # (TransformerBlocks)
                for b in self.blocks]

    def param_groups(self, weight_decay: float) -> list[dict[str, Any]]:
        """AdamW groups: decay the weights of Linear layers only; biases, LayerNorm and embeddings are exempt."""
        decay = {id(m.weight) for m in self.modules() if isinstance(m, nn.Linear)}
        params = list(self.parameters())
        return [
            {"params": [p for p in params if id(p) in decay], "weight_decay": weight_decay},
            {"params": [p for p in params if id(p) not in decay], "weight_decay": 0.0},
        ]


def greedy_answers(model: nn.Module, task: Any, prompts: NDArray[Any], batch: int = 500) -> NDArray[Any]:
    """Decode each prompt's answer one token at a time, always taking the most likely token."""
    out = []
    with mt.no_grad():
        for i in range(0, len(prompts), batch):
            seq = prompts[i:i + batch]
            for _ in range(task.answer_len):
                logits = model(mt.from_numpy(seq)).numpy(force=True)[:, -1, :]
                seq = np.concatenate([seq, logits.argmax(-1)[:, None]], axis=1)
            out.append(seq[:, task.prompt_len:])
    return np.concatenate(out) if out else np.zeros((0, task.answer_len), np.int64)
