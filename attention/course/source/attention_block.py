r"""Exercise: a whole attention block by hand, forward and backward.

Single-head self-attention with its four projections, for x (..., T, D). The weights are stored
as nn.Linear stores them, y = x W^T (no biases):

    q = x Wq^T,   k = x Wk^T,   v = x Wv^T        (..., T, H)     Wq, Wk, Wv: (H, D)
    S = q k^T / sqrt(H)                           (..., T, T)
    S = where(allowed, S, -inf)                   only when causal: query i sees keys j <= i
    P = softmax(S, dim=-1)                        (..., T, T)
    a = P v                                       (..., T, H)
    out = a Wo^T                                  (..., T, D)     Wo: (D, H)

Your task, both halves:
- `forward(ctx, x, w_q, w_k, w_v, w_o, causal)` computes out (on the numpy arrays given to you;
  nothing inside forward is recorded) and keeps on ctx what backward needs
  (`ctx.save_for_backward(...)` for Tensors, plain attributes for anything else);
- `backward(ctx, g)` gets g = dL/dout and returns (dx, dWq, dWk, dWv, dWo, None for `causal`).
The grader compares your output and each gradient with what minitensor's autograd computes
through the same six lines, composed from its ops.

Grade it:   attention-grade attention_block attention_block.py    (more hints: attention-grade --hint 2 attention_block)
"""
import math

import numpy as np

from minitensor import from_numpy
from minitensor.autograd import Function


class SingleHeadAttention(Function):
    @staticmethod
    def forward(ctx, x, w_q, w_k, w_v, w_o, causal):
        X, Wq, Wk, Wv, Wo = (t.detach().numpy() for t in (x, w_q, w_k, w_v, w_o))
        # BEGIN SOLUTION
        ctx.scale = 1.0 / math.sqrt(Wq.shape[0])
        queries, keys, values = X @ Wq.T, X @ Wk.T, X @ Wv.T
        scores = queries @ np.swapaxes(keys, -1, -2) * ctx.scale
        if causal:
            n_pos = scores.shape[-1]
            scores = np.where(np.tril(np.ones((n_pos, n_pos), dtype=bool)), scores, -np.inf)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        mixed = weights @ values
        ctx.save_for_backward(*(from_numpy(arr) for arr in (queries, keys, values, weights, mixed)))
        return mixed @ Wo.T
        # END SOLUTION

    @staticmethod
    def backward(ctx, g):
        x, w_q, w_k, w_v, w_o, causal = ctx.inputs
        # BEGIN SOLUTION
        q, k, v, p, a = ctx.saved_tensors

        def rows(t):  # (..., n) -> (rows, n): a weight is used by every row of every batch
            return t.reshape(-1, t.shape[-1])

        # out = a Wo^T
        da = g @ w_o
        dw_o = rows(g).mT @ rows(a)
        # a = P v
        dp = da @ v.mT
        dv = p.mT @ da
        # P = softmax(S); masked entries have P = 0, so their dS is 0 with no special case
        ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
        # S = scale q k^T
        dq = (ds @ k) * ctx.scale
        dk = (ds.mT @ q) * ctx.scale
        # q = x Wq^T, k = x Wk^T, v = x Wv^T: x feeds all three, so its gradient is a sum of three
        dx = dq @ w_q + dk @ w_k + dv @ w_v
        dw_q, dw_k, dw_v = (rows(dt).mT @ rows(x) for dt in (dq, dk, dv))
        return dx, dw_q, dw_k, dw_v, dw_o, None
        # END SOLUTION


def attention_block(x, w_q, w_k, w_v, w_o, causal=False):
    """Single-head self-attention with projections: softmax(q k^T / sqrt(H)) v Wo^T, q = x Wq^T ..."""
    return SingleHeadAttention.apply(x, w_q, w_k, w_v, w_o, causal)
