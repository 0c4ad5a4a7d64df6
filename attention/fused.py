r"""Scaled dot-product attention with its softmax step fused into one node with a hand-derived backward.

The composed path (`attention.functional`) records a node for each of scale, mask, softmax and
the fixes for fully masked rows, and allocates a fresh array for each. Here the whole way from
Q and K to the weights is one node, `FusedAttentionWeights`, that works in place; the output is
then an ordinary matmul with V. For one (batch, head) slice, with scale c = 1/sqrt(d_k):

    S = c Q K^T (+ float mask)      masked entries -> -inf          (Tq, Tk)
    P = softmax_rows(S)             fully masked rows -> 0          (Tq, Tk)    FusedAttentionWeights
    O = P V                                                         (Tq, dv)    Matmul

Backward: the matmul gives dV = P^T dO and dP = dO V^T, and this node turns dP (plus whatever
reaches the returned weights directly: the engine adds it) into

    dS = P * (dP - rowsum(dP * P))  the softmax Jacobian diag(p) - p p^T applied to each row of dP
    dQ = c dS K                     S = c Q K^T  is linear in Q
    dK = c dS^T Q                   ... and in K

Masked entries have P = 0, so dS = 0 there and no gradient reaches a masked key through the
scores. With dropout, O = (P * M / (1 - p)) V for the keep-mask M drawn in the forward: that is
a `where` and a multiply before the matmul, whose own VJPs route dP through M.

Splitting at P costs nothing, as P is what both halves share, and it keeps each node's backward
short: `backward` below is the softmax VJP and two matmuls. It is written with Tensor ops, reading
P from this node's own output (a tensor of the graph), so with `create_graph=True` it is itself
differentiable; when nothing records the backward (the usual case) the same lines run on the
raw arrays.
"""
import math

import numpy as np

import minitensor as mt
from minitensor.autograd import Function
from minitensor.ops._util import finite_max


def _row_sum(s):
    """sum over the last axis; einsum is several times faster than .sum(-1) on short rows."""
    return np.einsum("...j->...", s)[..., None]


def _row_dot(a, b):
    """rowsum(a * b) without the (..., Tq, Tk) temporary."""
    return np.einsum("...j,...j->...", a, b)[..., None]


def _scores(ctx, q, k, mask, scale):
    """S = c Q K^T (+ the float mask), a fresh array. c Q K^T = (c Q) K^T: the smaller of Q (Tq, d)
    and S (Tq, Tk) is scaled, and the backward reuses c Q for dK."""
    if k.shape[-2] > k.shape[-1]:
        ctx.scaled_query = q * scale                                          # (..., Tq, d)
        s = ctx.scaled_query @ k.swapaxes(-1, -2)                         # (..., Tq, Tk)
    else:
        s = q @ k.swapaxes(-1, -2)                                        # (..., Tq, Tk)
        s *= scale
    if mask.bias is not None:
        s += mask.bias.data
    return s


def _all_finite(a):
    """Whether every entry of `a` is finite: its sum is (an overflow only costs the careful path).
    math.isfinite reads the numpy scalar directly, far cheaper than a ufunc call on it."""
    return math.isfinite(np.add.reduce(a, axis=None))


def _softmax_rows_(s):
    """Softmax along the last axis, in place; every row here has at least one finite entry.
    Returns (P, the row sums before normalising: NaN where a row held a NaN)."""
    s -= finite_max(s, -1)
    np.exp(s, out=s)
    row_sum = _row_sum(s)
    s /= row_sum
    return s, row_sum


class FusedAttentionWeights(Function):
    r"""P = softmax(c Q K^T + bias) over the keys, masked entries 0, fully masked rows all 0

    Arguments: query (..., Tq, d), key (..., Tk, d) as Tensors of one dtype; then the constants
    `mask` (a `PreparedMask`) and the scale c.
    VJP: dS = P * (dP - rowsum(dP * P))  (with dP := 0 where masked);  dQ = c dS K;  dK = c dS^T Q"""

    @staticmethod
    def forward(ctx, query, key, mask, scale):
        s = _scores(ctx, query.data, key.data, mask, scale)                  # (..., Tq, Tk)
        if mask.allowed is None:
            return _softmax_rows_(s)[0]                                      # (..., Tq, Tk)
        if not mask.empty_rows:
            # -inf added where masked: those keys get exactly 0 weight. A NaN score (a NaN key)
            # stays NaN, even where masked, and makes its row's sum NaN: then the slow way below.
            s += mask.additive(s.dtype)
            p, row_sum = _softmax_rows_(s)
            if _all_finite(row_sum):
                return p
            s = _scores(ctx, query.data, key.data, mask, scale)
        # -inf by overwriting, so a NaN there is gone too; a fully masked row gets 0 logits
        # instead (a finite softmax, zeroed below): no 0/0.
        fill = np.where(mask.row_any, -np.inf, 0.0) if mask.empty_rows else -np.inf
        np.copyto(s, fill, where=mask.masked, casting="unsafe")
        p = _softmax_rows_(s)[0]                                             # (..., Tq, Tk)
        if mask.empty_rows:
            np.copyto(p, 0, where=~mask.row_any)
        return p

    @staticmethod
    def backward(ctx, g):
        query, key, mask, scale = ctx.inputs
        if not mt.is_grad_enabled():
            return _backward_numpy(ctx, g.data)      # no create_graph: the same lines on raw arrays
        p = ctx.output                               # (..., Tq, Tk)  the weights, from the graph
        d_p = g
        if mask.allowed is not None:
            # P is 0 there already; selecting also drops a NaN that a masked value put in dP
            d_p = mt.where(mask.allowed, d_p, 0.0)
        d_s = p * (d_p - (d_p * p).sum(dim=-1, keepdim=True))                # softmax VJP per row
        d_query = ((d_s @ key) * scale).sum_to_size(query.shape) if ctx.needs_input_grad[0] else None   # dQ = c dS K
        d_key = ((d_s.mT @ query) * scale).sum_to_size(key.shape) if ctx.needs_input_grad[1] else None  # dK = c dS^T Q
        return d_query, d_key, None, None


def _backward_numpy(ctx, d_p):
    """`backward` line for line on the raw arrays: used whenever the backward pass is not recorded."""
    query, key, mask, scale = ctx.inputs
    p = ctx.output.data
    row_dot = _row_dot(d_p, p)                                                   # rowsum(dP * P)
    if mask.allowed is not None and not _all_finite(row_dot):
        # a NaN or inf in dP (through a masked, non-finite value) makes its row's sum NaN, even where
        # P = 0: drop the masked entries and sum again. A finite sum means a finite row of dP, whose
        # masked entries the product with P = 0 below zeroes exactly, so the check is all it costs.
        d_p = np.where(mask.masked, 0, d_p).astype(p.dtype, copy=False)
        row_dot = _row_dot(d_p, p)
    d_s = d_p - row_dot                                                          # dP - rowsum(dP * P)
    d_s *= p                                                                     # dS
    scaled_query = ctx.__dict__.get("scaled_query")  # c Q, kept by forward when Tk > d
    if scaled_query is None:
        d_s *= scale  # c dS (Tq, Tk) is no bigger than dQ (Tq, d) here: scale it once, for both
    d_query = d_key = None
    if ctx.needs_input_grad[0]:
        d_query = d_s @ key.data                                                 # dQ = c dS K
        if scaled_query is not None:
            d_query *= scale
        d_query = mt.from_numpy(d_query).sum_to_size(query.data.shape)  # broadcast batch dims summed away
    if ctx.needs_input_grad[1]:
        if scaled_query is not None:
            d_key = d_s.swapaxes(-1, -2) @ scaled_query                      # dK = dS^T (c Q)
        else:
            d_key = d_s.swapaxes(-1, -2) @ query.data                        # dK = (c dS)^T Q
        d_key = mt.from_numpy(d_key).sum_to_size(key.data.shape)
    return d_query, d_key, None, None
