r"""Exercise: the backward of scaled dot-product attention.

Forward (done for you), for queries q (..., Tq, d), keys k (..., Tk, d), values v (..., Tk, dv)
and an optional bool mask (Tq, Tk) that is True where attention is allowed:

    S = q @ k^T / sqrt(d)            scores                   (..., Tq, Tk)
    S = where(mask, S, -inf)         masked keys get weight 0
    P = softmax(S, dim=-1)           attention weights        (..., Tq, Tk)
    out = P @ v                                                (..., Tq, dv)

Your task: `backward(ctx, g)` gets g = dL/dout and returns (dL/dq, dL/dk, dL/dv, None for the
mask). Go back one line at a time: through `P @ v`, through the softmax, through the scale and
through `q @ k^T`. `.mT` transposes the last two dims of a Tensor.

Grade it:   attention-grade sdpa sdpa.py        (more hints: attention-grade --hint 2 sdpa)
"""
import math

import numpy as np

from minitensor import from_numpy
from minitensor.autograd import Function


class ScaledDotProductAttention(Function):
    @staticmethod
    def forward(ctx, q, k, v, mask):
        scale = 1.0 / math.sqrt(q.shape[-1])
        s = (q.detach().numpy() @ np.swapaxes(k.detach().numpy(), -1, -2)) * scale
        if mask is not None:
            s = np.where(mask.detach().numpy(), s, -np.inf)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(from_numpy(p))
        ctx.scale = scale
        return p @ v.detach().numpy()

    @staticmethod
    def backward(ctx, g):
        (p,) = ctx.saved_tensors  # the attention weights P, a Tensor (..., Tq, Tk)
        q, k, v, mask = ctx.inputs
        # BEGIN SOLUTION
        gv = p.mT @ g  # v[j] reaches out[i] with weight P[i, j]
        gp = g @ v.mT
        gs = p * (gp - (gp * p).sum(dim=-1, keepdim=True))  # softmax's Jacobian-vector product
        gs = gs * ctx.scale
        gq = gs @ k
        gk = gs.mT @ q
        return gq, gk, gv, None
        # END SOLUTION


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q @ k^T / sqrt(d), masked) @ v."""
    return ScaledDotProductAttention.apply(q, k, v, mask)
