r"""Attention masks: which keys each query may look at.

One convention everywhere in `attention`: a **bool mask is True where attention is allowed**
(PyTorch's `scaled_dot_product_attention` reading, and the `mask == 0 -> masked` reading of the
classic tutorials). An integer 0/1 mask reads the same way (nonzero = allowed). A float mask is
*added* to the scores (an ALiBi-style bias); its `-inf` entries count as masked.

A mask broadcasts against the scores `(..., Tq, Tk)`. The usual shapes:

    (Tq, Tk)          the same pattern for every sequence and head, e.g. `causal_mask(T)`
    (B, 1, 1, Tk)     padding: key j of sequence b is real or not, for every head and query
    (B, H, Tq, Tk)    anything at all

The masks are constants (they never need a gradient), so they are built with numpy.
`prepare_mask` reads any of them (and `is_causal`) as the two forms both attention paths take: a
bool `allowed` and a float `bias` (minitensor's `nn.attention.attend` takes them as they are).
The package's promise that a query with no key to see gets 0, and that nothing a mask leaves out
ever makes a NaN, is kept by `hide_unseen` and `zero_blind_rows` around either path.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

import minitensor as mt
from minitensor import Tensor


def causal_mask(T: int, T_k: int | None = None) -> Tensor:
    r"""Bool `(T, T_k)` mask, True on and below the diagonal: query i may attend to keys j <= i.

    With `T_k` given the triangle is anchored at the top-left corner, as PyTorch's `is_causal`.
    """
    T_k = T if T_k is None else T_k
    if T < 0 or T_k < 0:
        raise ValueError(f"causal_mask: sizes must be >= 0, got T={T}, T_k={T_k}")
    return mt.from_numpy(np.tril(np.ones((T, T_k), dtype=bool)))


def padding_mask(lengths: Sequence[int] | Tensor, T: int) -> Tensor:
    r"""Bool `(B, 1, 1, T)` mask, True at the first `lengths[b]` positions of sequence b.

    The two singleton dims broadcast over heads and queries: a padded key is hidden from every
    query of every head. (A query at a padded position still attends to the real keys; its output
    is usually ignored by the loss.)
    """
    lens = np.asarray(lengths.numpy(force=True) if isinstance(lengths, mt.Tensor) else lengths)
    if lens.ndim != 1 or lens.dtype.kind not in "iu":
        raise ValueError(
            f"padding_mask: lengths must be a 1-D sequence of ints, got shape {lens.shape} dtype {lens.dtype}")
    if lens.size and (lens.min() < 0 or lens.max() > T):
        raise ValueError(f"padding_mask: every length must be in [0, {T}], got {lens.tolist()}")
    keep = np.arange(T)[None, :] < lens[:, None]  # (B, T)
    return mt.from_numpy(keep[:, None, None, :])


class PreparedMask:
    r"""A user's mask (and `is_causal`) in the form both attention paths use.

    - `allowed`: bool ndarray broadcastable to the scores, True where a query may attend; None
      when everything is allowed.
    - `bias`: the additive part of a float mask (0 where masked), a Tensor, or None.
    - `row_any`: `(..., Tq, 1)` True for query rows that may attend to at least one key;
      `col_any`: `(..., Tk, 1)` True for keys that at least one query may attend to. Each is None
      when that holds for every row (column): nothing to fix then.
    """

    __slots__ = ("allowed", "bias", "row_any", "col_any")

    def __init__(self, allowed, bias):
        if allowed is not None and allowed.ndim < 2:  # a (Tk,) or 0-d mask: the same for every query
            allowed = allowed.reshape((1,) * (2 - allowed.ndim) + allowed.shape)
        self.allowed, self.bias, self.row_any, self.col_any = allowed, bias, None, None
        if allowed is not None:
            rows = allowed.any(axis=-1, keepdims=True)
            cols = np.swapaxes(allowed.any(axis=-2, keepdims=True), -1, -2)
            self.row_any = None if rows.all() else rows
            self.col_any = None if cols.all() else cols


def prepare_mask(mask, is_causal, scores_shape, dtype, op="scaled_dot_product_attention"):
    """Check `mask` against the scores' shape and split it into what is allowed and what is added."""
    if mask is None and is_causal:
        return PreparedMask(causal_mask(*scores_shape[-2:]).numpy(force=True), None)
    allowed = bias = None
    if mask is not None:
        if isinstance(mask, mt.Tensor):
            m = mask.numpy(force=True)
        else:
            m = np.asarray(mask)
        if m.dtype.kind not in "biuf":
            raise TypeError(f"{op}: a mask must be bool, integer or float, got dtype {m.dtype}")
        try:
            fits = np.broadcast_shapes(m.shape, scores_shape) == tuple(scores_shape)
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(
                f"{op}: mask of shape {tuple(m.shape)} cannot be broadcast to the attention scores of "
                f"shape {tuple(scores_shape)} (..., Tq, Tk); use (Tq, Tk), (B, 1, 1, Tk) or (B, H, Tq, Tk)"
            )
        if m.dtype.kind == "f":
            allowed = ~np.isneginf(m)
            if isinstance(mask, mt.Tensor) and mask.requires_grad:
                # a learnable bias keeps its graph; masked entries contribute 0 (selected, not multiplied)
                bias = mt.where(allowed, mask, 0.0)
                bias = bias if bias.dtype == dtype else bias.to(dtype)
            else:
                bias = mt.from_numpy(np.where(allowed, m, 0).astype(dtype))
            if allowed.all():
                allowed = None
        else:
            allowed = m.astype(bool, copy=False)  # int 0/1: nonzero = allowed
    if is_causal:
        tri = causal_mask(*scores_shape[-2:]).numpy(force=True)
        allowed = tri if allowed is None else allowed & tri
    return PreparedMask(allowed, bias)


# ---- the package's promise: a query or key the mask leaves out never makes a NaN ----------------

def hide_unseen(query: Tensor, key: Tensor, value: Tensor, m: PreparedMask) -> tuple[Tensor, Tensor, Tensor]:
    """Query, key and value with 0 in place of a query that may see no key and of a key that no
    query may see (padding): such a row can hold anything, even NaN, and in a matmul a weight of 0
    times NaN is still NaN. `where` passes exactly 0 gradient back to what it replaced."""
    if m.row_any is not None:
        query = mt.where(m.row_any, query, 0.0)
    if m.col_any is not None:
        key, value = mt.where(m.col_any, key, 0.0), mt.where(m.col_any, value, 0.0)
    return query, key, value


def zero_blind_rows(output: Tensor, m: PreparedMask) -> Tensor:
    """The output of a query that may see no key is 0, even if a value it does not see holds NaN."""
    return output if m.row_any is None else mt.where(m.row_any, output, 0.0)         # (..., Tq, dv)
