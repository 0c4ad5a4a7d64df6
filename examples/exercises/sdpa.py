r"""Exercise 3 — the backward of scaled dot-product attention.

Forward (done for you), for queries q (..., Tq, d), keys k (..., Tk, d), values v (..., Tk, dv)
and an optional bool mask (Tq, Tk) that is True where attention is allowed:

    S = q @ k^T / sqrt(d)            scores                   (..., Tq, Tk)
    S = where(mask, S, -inf)         masked keys get weight 0
    P = softmax(S, dim=-1)           attention weights        (..., Tq, Tk)
    out = P @ v                                                (..., Tq, dv)

Your task: `backward(ctx, g)` gets g = dL/dout and returns (dL/dq, dL/dk, dL/dv, None for the
mask). Go back one line at a time: through `P @ v`, through the softmax, through the scale and
through `q @ k^T`. `.mT` transposes the last two dims of a Tensor.

Grade it:   python -m examples.exercises.grade sdpa examples/exercises/sdpa.py
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
        raise NotImplementedError(
            "attention backward is yours to write. Hint: out = P @ v gives dv = P^T @ g and dP = g @ v^T; "
            "the softmax gives dS = P * (dP - rowsum(dP * P)); S = scale * q @ k^T gives "
            "dq = scale * dS @ k and dk = scale * dS^T @ q. Masked entries need no special case: P is 0 there."
        )


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q @ k^T / sqrt(d), masked) @ v."""
    return ScaledDotProductAttention.apply(q, k, v, mask)
