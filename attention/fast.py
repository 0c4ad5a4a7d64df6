r"""Attention's speed layer: numpy twins of the fused nodes' backwards, and (re-exported for the
trainer) minitensor's `Replay` of a training step.

Nothing here is part of the math a learner reads. `attention.fused` gives `FusedAttention` and
`FusedAttentionWeights` one backward each, written with Tensor ops (and their formulas in their
docstrings). This module registers a twin of each as the node's `fast_backward`: the same lines
on the raw arrays, which the engine runs instead when nothing records the backward (no
`create_graph`). They save what the Tensor version spends on wrappers and temporaries: they work
in place in arrays the node owns, check for non-finite row sums once instead of selecting the
masked entries every time, put the scale on the smaller operand, and lay out a gradient of a
strided view (MultiHeadAttention's heads) as the view is, so no copy follows.

Where it is plugged in: importing this module registers the twins, for the whole process. Only
what sits above the teaching path imports it: the trainer (`attention.trainer`) and the
benchmarks, which also opt into the fused path explicitly (`fused=True`). Nothing else in
`attention` imports it: without it the fused nodes run their Tensor-op backward, the same gradients
up to rounding (float32 training losses then differ in their last digits).
tests/attention/test_fused.py proves each twin equal to the backward it stands in for.

Measured as `minitensor/fast/__init__.py` measures its pieces (CPU instructions per training
step of the trainer's default model, (I(7 steps) - I(2 steps)) / 5 under callgrind, one BLAS
thread; 2026-11-28):

| piece | replaces | gain |
|---|---|---|
| these twins | the fused nodes' Tensor-op backward | 3.4% (113.32M without, 109.57M with) |

Removed for measuring under 2 %: the per-mask cache of its additive `-inf` array, and the fused
forward that added it and checked its row sums before falling back on the overwriting forward
that `attention.fused` keeps: 0.7% (108.78M with them, 109.57M without; the losses bit for bit
the same).
"""
import math
from typing import Any

import numpy as np

import minitensor as mt
from minitensor.fast import Replay as Replay  # (re-exported: the trainer's replayed step)

from .fused import FusedAttention, FusedAttentionWeights, shared_weights


def weights_backward(ctx: Any, g: mt.Tensor) -> tuple[Any, ...]:
    """`FusedAttentionWeights.backward` on arrays: dS = P * (g - rowsum(g * P)); gQ = c dS K; gK = c dS^T Q."""
    query, key, mask, scale = ctx.inputs
    p = ctx.output.numpy(force=True)
    # g may be the caller's array: not in place
    return (*scores_vjp_numpy(g.numpy(force=True), p, query, key, mask, scale, ctx.needs_input_grad, own=False),
            None, None)


def attention_backward(ctx: Any, g: mt.Tensor) -> tuple[Any, ...]:
    """`FusedAttention.backward` on arrays, with the P its forward saved: dV = P^T dO; dP = dO V^T; then as above."""
    query, key, value, mask, scale, _ = ctx.inputs
    shared_weights(ctx)  # (its check that a shared P was not changed in place)
    (p,) = ctx.saved_tensors
    needs = ctx.needs_input_grad
    d_value = _grad_product(value, p.swapaxes(-1, -2), g.numpy(force=True)) if needs[2] else None  # dV = P^T dO
    d_query = d_key = None
    if needs[0] or needs[1]:
        d_p = g.numpy(force=True) @ value.numpy(force=True).swapaxes(-1, -2)            # dP = dO V^T, our own array
        d_query, d_key = scores_vjp_numpy(d_p, p, query, key, mask, scale, needs, own=True)
    return d_query, d_key, d_value, None, None, None


FusedAttentionWeights.fast_backward = staticmethod(weights_backward)
FusedAttention.fast_backward = staticmethod(attention_backward)


def _row_dot(a, b):
    """rowsum(a * b) without the (..., Tq, Tk) temporary; einsum is several times faster than .sum(-1) on short rows."""
    return np.einsum("...j,...j->...", a, b)[..., None]


def _all_finite(a):
    """Whether every entry of `a` is finite: the sum of its squares is. One BLAS dot costs half a
    ufunc reduction; an overflow (entries beyond ~1e19 in float32) only costs the careful path."""
    return math.isfinite(np.vdot(a, a))


def scores_vjp_numpy(d_p, p, query, key, mask, scale, needs, own):
    """`scores_vjp` line for line on the raw arrays; `own`: d_p is the caller's scratch, so work in it."""
    row_dot = _row_dot(d_p, p)                                                   # rowsum(dP * P)
    if mask.allowed is not None and not _all_finite(row_dot):
        # a NaN or inf in dP (through a masked, non-finite value) makes its row's sum NaN, even where
        # P = 0: drop the masked entries and sum again. A finite sum means a finite row of dP, whose
        # masked entries the product with P = 0 below zeroes exactly, so the check is all it costs.
        d_p, own = np.where(mask.allowed, d_p, 0).astype(p.dtype, copy=False), True
        row_dot = _row_dot(d_p, p)
    if own:
        d_p -= row_dot
        d_s = d_p
    else:
        d_s = d_p - row_dot                                                      # dP - rowsum(dP * P)
    d_s *= p                                                                     # dS
    # c dS: scale whichever is smaller, dS (Tq, Tk) once, or dQ and dK (Tq, d) and (Tk, d)
    scale_s = d_s.shape[-1] <= query.shape[-1]
    if scale_s:
        d_s *= scale
    scale_qk = None if scale_s else scale
    q, k = query.numpy(force=True), key.numpy(force=True)
    d_query = _grad_product(query, d_s, k, scale_qk) if needs[0] else None                      # dQ = c dS K
    d_key = _grad_product(key, d_s.swapaxes(-1, -2), q, scale_qk) if needs[1] else None         # dK = c dS^T Q
    return d_query, d_key


def _grad_product(x, a, b, scale=None):
    """a @ b (times `scale`, if given) as the gradient of tensor x: summed over the batch dims that
    broadcasting x created (the usual case is none), and laid out in memory as x is when x is a
    strided view of its shape (MultiHeadAttention's heads are: (B, T, H, d) seen as (B, H, T, d)).
    Then the gradient flows back through the view's transpose and reshape without a copy."""
    xd = x.numpy(force=True)
    g = a @ b if xd.base is None else _product_like(xd, a, b)  # x owns its memory: the plain product's layout
    if scale is not None:
        g *= scale
    grad = mt.from_numpy(g)  # (the shape test is sum_to_size's own first; made here, it saves the call)
    return grad if g.shape == xd.shape else grad.sum_to_size(xd.shape)


def _product_like(xd, a, b):
    """a @ b in the strided layout of the array xd, when xd is a view with its last axis contiguous
    and its rows apart; else the plain product."""
    strides = xd.strides
    if strides[-1] == xd.itemsize and len(strides) > 2 and strides[-2] != xd.shape[-1] * xd.itemsize:
        out = np.empty_like(xd)  # xd's layout: numpy's default order "K" keeps its strides' order
        try:
            return np.matmul(a, b, out=out)
        except ValueError:  # x had broadcast batch dims: the product is larger, summed down later
            pass
    return a @ b
