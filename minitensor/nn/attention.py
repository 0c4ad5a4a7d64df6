r"""Scaled dot-product attention composed from minitensor's ops, written once.

    attend(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

Three callers share it, each turning its own mask conventions into the two forms it takes (a bool
`mask`, True where a query may attend, and a float `bias` added to the scores):
`nn.functional.scaled_dot_product_attention` (PyTorch's attn_mask, is_causal, enable_gqa),
`nn.MultiheadAttention` (True = may NOT attend, two masks, add_bias_kv) and the `attention`
package's composed path (int and float masks, never NaN). Every step is an op with its own VJP,
so `autograd.explain` and `viz.to_dot` show them all, each named as the math names it
(`autograd.step`: `scores = q k^T`, `scale 1/sqrt(d_k)` with its value, `mask` drawn as a grid,
`softmax`, `weights @ v`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd.steps import mask_grid, step
from ..ops.indexing import where
from ..ops.softmax import softmax
from ..tensor import Tensor
from .functional import dropout


def attend(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | np.ndarray | None = None,
           bias: Tensor | None = None, scale: float | None = None, dropout_p: float = 0.0,
           dropped_weights: bool = False) -> tuple[Tensor, Tensor]:
    r"""softmax(Q K^T / sqrt(d_k) + bias, hidden where not mask) V: returns (output, weights).

    query (..., Tq, d_k), key (..., Tk, d_k), value (..., Tk, d_v); mask (bool, True = may attend)
    and bias (float, added) broadcast to the scores (..., Tq, Tk). scale: 1 / sqrt(d_k) unless given.
    A query that `mask` lets see no key gets weights 0 and output 0; a bias of -inf is only added
    (a row of only -inf gives NaN, as softmax does). The weights returned are those before dropout
    (with dropped_weights=True, after it: PyTorch's nn.MultiheadAttention returns those).

    forward: S = c Q K^T + bias,  P = softmax_rows(S),  out = P V   (c = scale; a node per step)
    VJP:     gV = P^T g;  gP = g V^T;  gS = P * (gP - rowsum(gP * P));  gQ = c gS K;  gK = c gS^T Q
    """
    # 1. how well each query matches each key
    with step("scores = q k^T"):
        scores = query @ key.mT                                                  # (..., Tq, Tk)
    # 2. q . k sums d_k products, so it spreads like sqrt(d_k): dividing by that keeps the softmax
    #    out of saturation (a near one-hot, whose gradient vanishes). A Python float keeps float32.
    d_k = query.shape[-1]
    c = 1.0 / math.sqrt(d_k) if scale is None else scale
    with step("scale 1/sqrt(d_k)" if d_k and c == 1.0 / math.sqrt(d_k) else "scale", f"x {c:.4g}"):
        scores = scores * c                                                      # (..., Tq, Tk)
    # 3. mask: a bias is added; a hidden score becomes -inf by `where` (never a multiply: 0 * inf is
    #    NaN), so its weight is exactly 0 and it passes back exactly 0 gradient. A query that sees no
    #    key gets 0 logits instead (a finite softmax, zeroed in step 4): no 0/0.
    if bias is not None:
        with step("mask", mask_grid(bias, additive=True)):
            scores = scores + bias                                               # (..., Tq, Tk)
    mask, sees = _mask_and_sees(mask)  # mask as a bool Tensor; sees: (..., Tq, 1), None if every query sees a key
    if mask is not None:
        fill = -math.inf if sees is None else Tensor._make(np.where(sees, -np.inf, 0.0).astype(scores.dtype))
        with step("mask", mask_grid(mask)):
            scores = where(mask, scores, fill)                                   # (..., Tq, Tk)
    # 4. each row of scores becomes weights that sum to 1
    with step("softmax"):
        weights = softmax(scores, dim=-1)                                        # (..., Tq, Tk)
        if sees is not None:
            weights = where(sees, weights, 0.0)                                  # (..., Tq, Tk)  sees nothing: 0
    # 5. dropout (inverted: the kept weights are divided by 1 - p)
    if dropout_p > 0.0:
        with step(f"dropout p={dropout_p:g}"):
            kept = dropout(weights, dropout_p)                                   # (..., Tq, Tk)
    else:
        kept = weights
    # 6. each output is the average of the values under its query's weights
    with step("weights @ v"):
        out = kept @ value                                                       # (..., Tq, d_v)
    return out, (kept if dropped_weights else weights)                           # (..., Tq, d_v), (..., Tq, Tk)


def _mask_and_sees(mask: Tensor | np.ndarray | None) -> tuple[Tensor | None, Any]:
    """(mask as a Tensor, a (..., Tq, 1) bool array True where a query may attend to some key, or None
    when every query may); (None, None) without a mask."""
    if mask is None:
        return None, None
    allowed = mask.numpy(force=True) if isinstance(mask, Tensor) else np.asarray(mask)
    sees = allowed.reshape((1,) * (2 - allowed.ndim) + allowed.shape).any(axis=-1, keepdims=True)
    return (mask if isinstance(mask, Tensor) else Tensor._make(allowed)), (None if sees.all() else sees)


# PyTorch's torch.nn.attention also names the choice of attention kernel; minitensor has one (sdpa_backends.py)
from .sdpa_backends import WARN_FOR_UNFUSED_KERNELS, SDPBackend, sdpa_kernel  # noqa: E402,F401
