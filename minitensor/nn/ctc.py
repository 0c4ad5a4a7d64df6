r"""Connectionist temporal classification loss (Graves et al., 2006): `ctc_loss` and `CTCLoss`.

The network emits, at each of T steps, log-probabilities over C classes, one of them the `blank`. A target
l = (l_1, ..., l_S) is read off a path of T symbols by merging repeats and removing blanks; the loss is
-log of the total probability of all paths that read as l. With the extended target
l' = (blank, l_1, blank, l_2, ..., l_S, blank) of length 2S + 1, the forward variable

    alpha_t(s) = log P(the first t + 1 steps read as l'_1..l'_s, ending in l'_s)

obeys, in log space (lse = log-sum-exp, y_t(k) the log-probability of class k at step t):

    alpha_0(0) = y_0(blank),   alpha_0(1) = y_0(l_1),   alpha_0(s) = -inf for s >= 2
    alpha_t(s) = lse(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) [only if l'_s != blank and l'_s != l'_{s-2}])
                 + y_t(l'_s)
    loss = -lse(alpha_{T-1}(2S), alpha_{T-1}(2S - 1))

Every step is minitensor ops (gather, cat, where, logsumexp), so the gradient is autograd's, exactly that of
this formula. -inf is stood in for by a large negative number, whose exp is exactly 0: a true -inf would give
0 * inf = NaN in the backward of a logsumexp of -infs. A target that no path of the given length can read
gets an infinite loss (0, and no gradient, with zero_infinity=True), as PyTorch.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..ops._util import tensor_input
from ..ops.indexing import where
from ..ops.shape import cat, stack
from ..tensor import Tensor
from .layers import _tensor
from .loss import _Loss

_NEG = -1e30  # stands for log 0


def _lse(*terms: Tensor) -> Tensor:
    return stack(terms).logsumexp(0)


def _lengths(values, n, what):
    arr = np.asarray(values._array if isinstance(values, Tensor) else values, dtype=np.int64).reshape(-1)
    if arr.size != n:
        raise RuntimeError(f"ctc_loss: expected {n} {what} (one per batch entry), got {arr.size}")
    return arr


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of log_probs (T, N, C) (or unbatched (T, C)) for targets (N, S) padded, or 1-D concatenated.

    reduction='mean' divides each loss by its target length, then averages over the batch (as PyTorch).

    forward: loss = -log sum over the alignments a of the target (blanks and repeats inserted) of
             prod_t p_t(a_t), by the forward recursion in log space over the extended target
    VJP:     through the ops of that recursion (logsumexp and gathers): the gradient of log_probs is
             exp(log_probs) minus the posterior occupancy of each class at each step
    """
    op = "ctc_loss"
    lp = tensor_input(log_probs, op, "log_probs")
    tgt = np.asarray(tensor_input(targets, op, "targets")._array, dtype=np.int64)
    unbatched = lp.ndim == 2
    if unbatched:
        lp = lp.unsqueeze(1)
        tgt = tgt.reshape(1, -1)
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got shape {tuple(log_probs.shape)}")
    steps, batch, classes = lp.shape
    in_len = _lengths(input_lengths, batch, "input_lengths")
    tg_len = _lengths(target_lengths, batch, "target_lengths")
    if not 0 <= blank < classes:
        raise RuntimeError(f"ctc_loss: blank must be in label range [0, {classes}), got {blank}")
    if np.any(in_len > steps) or np.any(in_len < 0):
        raise RuntimeError(f"ctc_loss: input_lengths must be in [0, {steps}], got {in_len.tolist()}")
    # each sample's target as a row of a (N, S_max) array
    if tgt.ndim == 1:
        starts = np.concatenate([[0], np.cumsum(tg_len)[:-1]])
        rows = [tgt[s:s + n] for s, n in zip(starts, tg_len)]
    else:
        rows = [tgt[b, :n] for b, n in enumerate(tg_len)]
    s_max = int(tg_len.max()) if batch else 0
    ext_len = 2 * s_max + 1
    ext = np.full((batch, ext_len), blank, dtype=np.int64)  # l', blank-padded
    skip = np.zeros((batch, ext_len), dtype=bool)  # where the s-2 transition is allowed
    for b, row in enumerate(rows):
        ext[b, 1:2 * len(row):2] = row
        for s in range(3, 2 * len(row), 2):
            skip[b, s] = ext[b, s] != ext[b, s - 2]
    emit = lp.gather(2, Tensor._make(np.broadcast_to(ext, (steps, batch, ext_len)).copy()))  # y_t(l'_s): (T, N, 2S+1)
    dtype = lp._array.dtype
    neg = Tensor._make(np.full((batch, 1), _NEG, dtype=dtype))
    neg2 = Tensor._make(np.full((batch, 2), _NEG, dtype=dtype))
    start = np.full((batch, ext_len), _NEG, dtype=dtype)
    start[:, :2] = 0
    alpha = emit[0] + Tensor._make(start)  # alpha_0: only s = 0 and s = 1 are reachable
    skip_t, running = Tensor._make(skip), None
    for t in range(1, steps):
        from_prev = cat([neg, alpha[:, :-1]], 1)
        from_skip = where(skip_t, cat([neg2, alpha[:, :-2]], 1), _NEG)
        new = _lse(alpha, from_prev, from_skip) + emit[t]
        running = Tensor._make((t < in_len)[:, None])
        alpha = where(running, new, alpha)  # a sequence that has ended keeps its last alpha
    last = Tensor._make((2 * tg_len)[:, None])
    end = _lse(alpha.gather(1, last).squeeze(1), alpha.gather(1, (last - 1).clamp(min=0)).squeeze(1))
    end = where(Tensor._make(tg_len == 0), alpha.gather(1, last).squeeze(1), end)  # empty target: all blanks
    loss = -end
    impossible = Tensor._make((loss._array > -_NEG / 2) | (in_len == 0) & (tg_len > 0))
    if zero_infinity:
        loss = where(impossible, 0.0, loss)
    else:
        loss = where(impossible, float("inf"), loss)
    if unbatched:
        loss = loss.squeeze(0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return (loss / Tensor._make(np.maximum(tg_len, 1).astype(dtype)).reshape(loss.shape)).mean()
    raise ValueError(f"ctc_loss: {reduction!r} is not a valid value for reduction (use 'none', 'mean' or 'sum')")


class CTCLoss(_Loss):
    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor) -> Tensor:
        return ctc_loss(_tensor(self, log_probs, "log_probs"), targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)


FUNCTIONS: list[str] = ["ctc_loss"]
MODULES: list[str] = ["CTCLoss"]
__all__ = MODULES
