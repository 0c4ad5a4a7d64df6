r"""Scaled dot-product attention as one autograd node with a hand-derived backward.

The composed path (`attention.functional`) records about six nodes per call (matmul, scale,
where, softmax, where, matmul) and allocates a fresh array for each; this records one node and
works in place. Forward, for one (batch, head) slice, with scale c = 1/sqrt(d_k):

    S = c Q K^T (+ float mask)      masked entries -> -inf          (Tq, Tk)
    P = softmax_rows(S)             fully masked rows -> 0          (Tq, Tk)
    O = P V                                                         (Tq, dv)

Backward, given dO (and dP_extra when the caller also differentiates the returned weights):

    dV = P^T dO                     O = P V  is linear in V
    dP = dO V^T (+ dP_extra)        O = P V  is linear in P
    dS = P * (dP - rowsum(dP * P))  the softmax Jacobian diag(p) - p p^T applied to each row of dP
    dQ = c dS K                     S = c Q K^T  is linear in Q
    dK = c dS^T Q                   ... and in K

Masked entries have P = 0, so dS = 0 there and no gradient reaches a masked key through the
scores. With dropout, O = (P * M / (1 - p)) V for the keep-mask M drawn in the forward, so
dV = (P * M / (1 - p))^T dO and dP = (dO V^T) * M / (1 - p); dS is unchanged.

A `Function` has exactly one output, and the weights P are part of the contract, so forward
returns `[O | P]` concatenated along the last axis and `fused_attention` splits it. That has a
bonus: `backward` reads P back from its own output, a tensor of the graph, so with
`create_graph=True` the backward is itself differentiable (P's dependence on Q and K is this
node's own VJP). That version is written with Tensor ops; when nothing records the backward
(the usual case) the same lines run on the raw arrays, in place.
"""
import numpy as np

import minitensor as mt
from minitensor.autograd import Function


def _sum_to(g, shape):
    """Sum `g` over the batch dims that were broadcast, down to `shape` (the input's shape)."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return g.sum(dim=dims, keepdim=True).reshape(shape)


def _np_sum_to(g, shape):
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=dims, keepdims=True).reshape(shape)


def _row_max(s):
    """max over the last axis. numpy's reduction along a short contiguous axis is slow (about 3x
    slower than this at Tk = 12), so short rows take the elementwise maximum of their columns."""
    if s.shape[-1] > 64:
        return s.max(axis=-1, keepdims=True)
    m = s[..., 0].copy()
    for j in range(1, s.shape[-1]):
        np.maximum(m, s[..., j], out=m)
    return m[..., None]


def _row_sum(s):
    """sum over the last axis; einsum is several times faster than .sum(-1) on short rows."""
    return np.einsum("...j->...", s)[..., None]


def _softmax_rows_(s):
    """Softmax along the last axis, in place; every row here has at least one finite entry."""
    s -= _row_max(s)
    np.exp(s, out=s)
    s /= _row_sum(s)
    return s


class FusedScaledDotProductAttention(Function):
    r"""y = [O | P] with P = softmax(c Q K^T, masked), O = dropout(P) V   (see the module docstring)

    Arguments: query (..., Tq, d), key (..., Tk, d), value (..., Tk, dv) as Tensors of one dtype;
    then the constants `mask` (a `PreparedMask`), `keep` (bool dropout keep-mask or None), `scale`
    c and `factor` = 1 / (1 - dropout_p).
    VJP: dV = (P*M*factor)^T dO;  dP = (dO V^T) * M * factor + dP_extra;
         dS = P * (dP - rowsum(dP * P));  dQ = c dS K;  dK = c dS^T Q"""

    @staticmethod
    def forward(ctx, query, key, value, mask, keep, scale, factor):
        q, k, v = query.data, key.data, value.data
        s = q @ np.swapaxes(k, -1, -2)                                       # (..., Tq, Tk)
        s *= scale
        if mask.bias is not None:
            s += mask.bias.data
        if mask.allowed is not None:
            # -inf so masked keys get exactly 0 weight (overwriting, so a NaN there is gone too);
            # a fully masked row gets 0 logits instead (a finite softmax, zeroed below): no 0/0.
            fill = np.where(mask.row_any, -np.inf, 0.0) if mask.empty_rows else -np.inf
            np.copyto(s, fill, where=mask.masked, casting="unsafe")
        p = _softmax_rows_(s)                                                # (..., Tq, Tk)
        if mask.empty_rows:
            np.copyto(p, 0, where=~mask.row_any)
        dv = v.shape[-1]
        y = np.empty(np.broadcast_shapes(p.shape[:-1], v.shape[:-2] + (1,)) + (dv + p.shape[-1],), dtype=p.dtype)
        p_used = p if keep is None else np.where(keep, p * factor, 0).astype(p.dtype, copy=False)
        np.matmul(p_used, v, out=y[..., :dv])                               # O = P V   (..., Tq, dv)
        if mask.empty_rows:  # 0 @ V is NaN if V holds NaN: overwrite, don't multiply
            np.copyto(y[..., :dv], 0, where=~mask.row_any)
        y[..., dv:] = p
        return y                                                             # (..., Tq, dv + Tk)

    @staticmethod
    def backward(ctx, g):
        if not mt.is_grad_enabled():
            return _backward_numpy(ctx, g)  # no create_graph: the same lines on raw arrays
        query, key, value, mask, keep, scale, factor = ctx.inputs
        dv = value.shape[-1]
        p = ctx.output[..., dv:]                     # (..., Tq, Tk)  the weights, from the graph
        g_out, g_p = g[..., :dv], g[..., dv:]        # (..., Tq, dv), (..., Tq, Tk)
        p_used = p if keep is None else mt.where(keep, p * factor, 0.0)
        d_query = d_key = d_value = None
        if ctx.needs_input_grad[2]:
            d_value = _sum_to(p_used.mT @ g_out, value.shape)               # dV = P^T dO
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            d_p = g_out @ value.mT                                           # dP = dO V^T
            if keep is not None:
                d_p = mt.where(keep, d_p * factor, 0.0)                      # through the dropout
            d_p = d_p + g_p
            if mask.allowed is not None:
                # P is 0 there already; selecting also drops a NaN that a masked value put in dP
                d_p = mt.where(mask.allowed, d_p, 0.0)
            d_s = p * (d_p - (d_p * p).sum(dim=-1, keepdim=True))            # softmax VJP per row
            if ctx.needs_input_grad[0]:
                d_query = _sum_to((d_s @ key) * scale, query.shape)          # dQ = c dS K
            if ctx.needs_input_grad[1]:
                d_key = _sum_to((d_s.mT @ query) * scale, key.shape)         # dK = c dS^T Q
        return d_query, d_key, d_value, None, None, None, None


def _backward_numpy(ctx, g):
    """`backward` line for line on the raw arrays, in place where it can: used whenever the
    backward pass is not recorded, i.e. without create_graph."""
    query, key, value, mask, keep, scale, factor = ctx.inputs
    q, k, v = query.data, key.data, value.data
    dv = v.shape[-1]
    p = ctx.output.data[..., dv:]
    g_out, g_p = g.data[..., :dv], g.data[..., dv:]
    d_query = d_key = d_value = None
    if ctx.needs_input_grad[2]:
        p_used = p if keep is None else np.where(keep, p * factor, 0).astype(p.dtype, copy=False)
        d_value = _np_sum_to(np.swapaxes(p_used, -1, -2) @ g_out, v.shape)          # dV = P^T dO
    if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
        d_p = g_out @ np.swapaxes(v, -1, -2)                                         # dP = dO V^T
        if keep is not None:
            d_p *= factor
            np.copyto(d_p, 0, where=~keep)
        d_p += g_p
        if mask.allowed is not None:
            np.copyto(d_p, 0, where=mask.masked)
        d_p -= np.einsum("...j,...j->...", d_p, p)[..., None]                         # dP - rowsum(dP * P)
        d_s = np.multiply(d_p, p, out=d_p)                                           # dS
        if ctx.needs_input_grad[0]:
            d_query = d_s @ k                                                        # dQ = c dS K
            d_query *= scale
            d_query = _np_sum_to(d_query, q.shape)
        if ctx.needs_input_grad[1]:
            d_key = np.swapaxes(d_s, -1, -2) @ q                                     # dK = c dS^T Q
            d_key *= scale
            d_key = _np_sum_to(d_key, k.shape)
    wrap = lambda a: None if a is None else mt.from_numpy(np.asarray(a, dtype=q.dtype))  # noqa: E731
    return wrap(d_query), wrap(d_key), wrap(d_value), None, None, None, None


def fused_attention(query, key, value, mask, keep, scale, factor):
    """Run the fused node and split its `[O | P]` output into (output, weights)."""
    y = FusedScaledDotProductAttention.apply(query, key, value, mask, keep, scale, factor)
    dv = value.shape[-1]
    return y[..., :dv], y[..., dv:]
