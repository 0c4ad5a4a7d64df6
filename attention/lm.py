"""A small decoder-only language model for the toy tasks and for characters (GPT-2's layout at toy size).

    tokens (B, T) -> token embedding + learned position embedding      (B, T, d_model)
                  -> n_layer pre-LayerNorm TransformerBlocks, causal    (B, T, d_model)
                  -> final LayerNorm -> linear head                     (B, T, vocab)

The MLP uses GELU's tanh form, as GPT-2 does. Initialisation as GPT-2: every Linear and Embedding
weight ~ N(0, 0.02), biases 0, and the two projections that write into the residual stream
(attention's w_o and the MLP's output layer) with std 0.02 / sqrt(2 n_layer), because 2 n_layer
of them add up along the residual path.

Unlike the layers it is built from, the model asks for the fused attention (`fused=True`, one node
per layer with a hand-derived backward): it exists to be trained, and the fused path is the
faster one. `DecoderLM(..., fused=False)` records every step of attention instead, for
`minitensor.autograd.explain`; the parameters, and so the checkpoints, are the same either way.

`generate` writes text: it feeds the model its own samples, one token at a time (nanoGPT's loop).
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

import minitensor as mt
import minitensor.nn as nn
from minitensor import Tensor

from .functional import check_tensor
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
        if check_tensor(idx, "DecoderLM", "idx").ndim != 2:
            raise ValueError(f"DecoderLM: expected token ids of shape (B, T), got shape {tuple(idx.shape)} "
                             "(a single sequence of shape (T,) is idx.unsqueeze(0))")
        B, T = idx.shape
        if T > self.block_size:
            raise ValueError(f"DecoderLM: sequence length {T} exceeds block_size {self.block_size}")
        pos = mt.arange(T)                                     # (T,)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))   # (B, T, d_model)
        for block in self.blocks:
            x = block(x)                                       # (B, T, d_model)
        return self.head(self.ln_f(x))                         # (B, T, vocab)

    def generate(self, idx: Tensor, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 generator: mt.Generator | None = None) -> Tensor:
        r"""Extend the token ids `idx` (B, T) by `max_new_tokens` tokens, each drawn from the model.

        One new token per row at each step, t = T, T+1, ...:

            context = idx[:, -block_size:]                         (B, <= block_size)
            z       = model(context)[:, -1, :]                     (B, vocab)  the last position's logits
            p       = next_token_probs(z, temperature, top_k)      (B, vocab)  softmax(z / temperature)
            next    ~ Categorical(p)      (multinomial)            (B, 1)
            idx     = cat(idx, next)                               (B, T + 1)

        A temperature below 1 sharpens p toward the most likely token, above 1 flattens it;
        temperature=0 is its limit, greedy decoding: next = argmax(z), nothing drawn. top_k = k keeps
        only the k most likely tokens (ties with the k-th kept too; a k beyond the vocabulary keeps
        all). Draws come from `generator` (a minitensor.Generator) if given, else from the global
        generator that `manual_seed` seeds. Runs without recording a graph and in eval mode (no
        dropout); the model's mode is restored afterwards. Returns a new (B, T + max_new_tokens)
        int64 tensor that starts with `idx`.
        """
        idx = self._check_generate_args(idx, max_new_tokens, temperature, top_k)
        was_training = self.training
        self.eval()
        try:
            with mt.no_grad():
                for _ in range(max_new_tokens):
                    context = idx[:, -self.block_size:]                  # (B, <= block_size)
                    logits = self(context)[:, -1, :]                     # (B, vocab)
                    if temperature == 0:
                        next_id = logits.argmax(dim=-1, keepdim=True)    # (B, 1)
                    else:
                        probs = next_token_probs(logits, temperature, top_k)                # (B, vocab)
                        next_id = mt.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
                    idx = mt.cat([idx, next_id], dim=1)                  # (B, T + 1)
        finally:
            self.train(was_training)
        return idx

    def _check_generate_args(self, idx: Tensor, max_new_tokens: int, temperature: float,
                             top_k: int | None) -> Tensor:
        """idx as int64 ids (B, T >= 1), or the error a bad argument deserves (nothing is changed)."""
        if not isinstance(idx, mt.Tensor):
            raise TypeError(f"DecoderLM.generate: idx must be a Tensor of token ids of shape (B, T), "
                            f"got {type(idx).__name__}")
        if idx.dtype.kind not in "iu":  # what the token embedding accepts
            raise RuntimeError(f"DecoderLM.generate: idx must hold integer token ids (int64), got {idx.dtype}")
        if idx.ndim != 2 or idx.shape[1] == 0:
            raise ValueError(f"DecoderLM.generate: idx must have shape (B, T) with T >= 1 (a prompt of at least "
                             f"one token per row), got shape {tuple(idx.shape)}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, numbers.Integral) or max_new_tokens < 0:
            raise ValueError(f"DecoderLM.generate: max_new_tokens must be an integer >= 0, got {max_new_tokens!r}")
        if (isinstance(temperature, bool) or not isinstance(temperature, numbers.Real)
                or not math.isfinite(temperature) or temperature < 0):
            raise ValueError(f"DecoderLM.generate: temperature must be a finite number >= 0 (0 is greedy), "
                             f"got {temperature!r}")
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or top_k < 1):
            raise ValueError(f"DecoderLM.generate: top_k must be None or an integer >= 1, got {top_k!r}")
        return idx.long().clone()  # the result never shares memory with the caller's idx

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


def next_token_probs(logits: Tensor, temperature: float = 1.0, top_k: int | None = None) -> Tensor:
    r"""The distribution `generate` draws the next token from, given the last position's logits z (B, vocab).

        z'  = z / temperature                                 temperature > 0
        z'_v = -inf  where z'_v < (k-th largest of z')        only with top_k = k (ties with it stay)
        p   = softmax(z')                                     p_v = exp(z'_v) / \sum_u exp(z'_u)
    """
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]   # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return mt.softmax(logits, dim=-1)


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
