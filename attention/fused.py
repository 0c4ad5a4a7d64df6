r"""Scaled dot-product attention with a hand-derived backward: the whole way from Q, K, V to the
output in one node.

The composed path (`attention.functional`) records a node for each of scale, mask, softmax, the
fixes for fully masked rows and the product with V, and allocates a fresh array for each. Here
two `Function`s share one forward. For one (batch, head) slice, with scale c = 1/sqrt(d_k):

    S = c Q K^T (+ float mask)      masked entries -> -inf          (Tq, Tk)
    P = softmax_rows(S)             fully masked rows -> 0          (Tq, Tk)    FusedAttentionWeights
    O = P V                                                         (Tq, dv)    FusedAttention

`FusedAttentionWeights` computes P, in place, and returns it: the weights the caller gets.
`FusedAttention` returns O = P V, reusing that P (it computes P itself when not given one), and
its backward is the whole chain from dO back to Q, K and V:

    dV = P^T dO
    dP = dO V^T
    dS = P * (dP - rowsum(dP * P))  the softmax Jacobian diag(p) - p p^T applied to each row of dP
    dQ = c dS K                     S = c Q K^T  is linear in Q
    dK = c dS^T Q                   ... and in K

So a backward through the output is one node, not a matmul's and then the weights'. The weights
keep a node of their own: a loss that reads them directly (an attention-entropy penalty, a
supervised alignment) gets its gradient through `FusedAttentionWeights`' backward, the last
three lines above from the dP that reaches them. Both nodes send gradients to Q and K, and the
engine adds them: L(O(Q, K, V), P(Q, K)) differentiated along both of its paths.

Masked entries have P = 0, so dS = 0 there and no gradient reaches a masked key through the
scores. Dropout acts between P and the product with V, so with dropout `scaled_dot_product_attention`
uses the weights node, a dropout node and a matmul instead of `FusedAttention`.

Each backward is written once, with Tensor ops, so with `create_graph=True` it is itself
recorded and differentiable. The speed layer `attention.fast` registers numpy twins of both (the
same lines on the raw arrays, in place where the array is the node's own) as their
`fast_backward`, which the engine runs instead when nothing records the backward.

Each `Function`'s docstring states only its math, which `minitensor.autograd.explain` prints for
the learner; what its arguments are and how it computes is in its `forward`'s docstring and in
comments.
"""

import numpy as np

import minitensor as mt
from minitensor.autograd import Function


def _row_sum(s):
    """sum over the last axis; einsum is several times faster than .sum(-1) on short rows."""
    return np.einsum("...j->...", s)[..., None]


def _scores(q, k, mask, scale):
    """S = c Q K^T (+ the float mask), a fresh array; the smaller of Q (Tq, d) and S (Tq, Tk) is scaled."""
    k_len, d = k.shape[-2:]
    if k_len > d:
        s = (q * scale) @ k.swapaxes(-1, -2)                                  # (..., Tq, Tk)
    else:
        s = q @ k.swapaxes(-1, -2)                                            # (..., Tq, Tk)
        s *= scale
    if mask.bias is not None:
        s += mask.bias.numpy(force=True)
    return s


def _softmax_rows_(s):
    """Softmax along the last axis, in place (the row max subtracted first, so exp never overflows);
    every row here has at least one finite entry. A row of only -inf stays -inf instead of -inf - (-inf) = NaN."""
    m = s.max(axis=-1, keepdims=True) if s.size else np.zeros(s.shape[:-1] + (1,), s.dtype)
    m[~np.isfinite(m)] = 0
    s -= m
    np.exp(s, out=s)
    s /= _row_sum(s)
    return s


def attention_weights(q, k, mask, scale):
    """P = softmax(c Q K^T + bias) from the arrays q (..., Tq, d) and k (..., Tk, d), masked
    entries 0 and fully masked rows all 0: a fresh array (..., Tq, Tk)."""
    s = _scores(q, k, mask, scale)                                            # (..., Tq, Tk)
    if mask.allowed is not None:
        # -inf by overwriting, so a NaN there (from a NaN key) is gone too; a row with no key to see
        # gets 0 logits instead (a finite softmax, zeroed below): no 0/0.
        fill = -np.inf if mask.row_any is None else np.where(mask.row_any, -np.inf, 0.0)
        np.copyto(s, fill, where=~mask.allowed, casting="unsafe")
    p = _softmax_rows_(s)                                                     # (..., Tq, Tk)
    if mask.row_any is not None:
        np.copyto(p, 0, where=~mask.row_any)
    return p


class FusedAttentionWeights(Function):
    r"""out = P = softmax_rows(S),  S = c Q K^T + bias
        (Q (..., Tq, d), K (..., Tk, d), c the scale, bias a float mask or 0);
        P_ij = 0 where query i may not see key j, and a row with no key to see is all 0
    VJP: dS = P * (g - rowsum(g * P))  (g := 0 where masked);  gQ = c dS K;  gK = c dS^T Q
         (gQ and gK summed over the batch dims their input was broadcast along)"""

    @staticmethod
    def forward(ctx, query, key, mask, scale):
        """query, key: Tensors of one dtype; `mask` a `PreparedMask` and `scale` a float, both constants."""
        return attention_weights(query.numpy(force=True), key.numpy(force=True), mask, scale)          # (..., Tq, Tk)

    @staticmethod
    def backward(ctx, g):
        query, key, mask, scale = ctx.inputs
        return (*scores_vjp(g, ctx.output, query, key, mask, scale, ctx.needs_input_grad), None, None)


class FusedAttention(Function):
    r"""out = P V,  P = softmax_rows(c Q K^T + bias)  (Q (..., Tq, d), K (..., Tk, d), V (..., Tk, dv), c the scale,
        bias a float mask or 0);  P_ij = 0 where query i may not see key j, and a row with no key to see is all 0
    VJP: gV = P^T g;  dP = g V^T  (:= 0 where masked);  dS = P * (dP - rowsum(dP * P));  gQ = c dS K;  gK = c dS^T Q
         (gQ, gK and gV summed over the batch dims their input was broadcast along)"""

    @staticmethod
    def forward(ctx, query, key, value, mask, scale, weights):
        """query, key, value: Tensors of one dtype (value's batch dims no wider than the scores');
        `mask` (a `PreparedMask`) and `scale`: constants; `weights`: the output of
        `FusedAttentionWeights` for this query, key, mask and scale, whose P is reused, or None to
        compute P here. It comes as `SharedWeights`, not as a graph input, because this node's
        backward differentiates through P itself."""
        p = None if weights is None else weights.weights_for(query, key)
        if p is None:
            p = attention_weights(query.numpy(force=True), key.numpy(force=True), mask, scale)        # (..., Tq, Tk)
        ctx.save_for_backward(p)                                             # (..., Tq, Tk)
        return p @ value.numpy(force=True)                                                # (..., Tq, dv)

    @staticmethod
    def backward(ctx, g):
        query, key, value, mask, scale, weights = ctx.inputs
        needs = ctx.needs_input_grad
        # P as a tensor (of the graph, under create_graph, so this backward is differentiable too)
        p = weights.tensor if shared_weights(ctx) else FusedAttentionWeights.apply(query, key, mask, scale)
        d_value = (p.mT @ g).sum_to_size(value.shape) if needs[2] else None           # dV = P^T dO
        d_query = d_key = None
        if needs[0] or needs[1]:
            d_query, d_key = scores_vjp(g @ value.mT, p, query, key, mask, scale, needs)   # dP = dO V^T
        return d_query, d_key, d_value, None, None, None


def shared_weights(ctx):
    """Whether FusedAttention's node `ctx` reused the weights node's P; an error if P changed since."""
    query, key, _, _, _, weights = ctx.inputs
    shared = weights is not None and weights.weights_for(query, key) is not None
    if shared and weights.tensor._version != 0:  # the shared P changed under us
        raise RuntimeError(
            f"backward of 'FusedAttentionBackward': the attention weights it shares (shape "
            f"{tuple(weights.tensor.shape)}) were modified by an in-place operation after they were "
            "computed; its backward would be wrong")
    return shared


class SharedWeights:
    """The weights tensor `FusedAttentionWeights` returned for `query` and `key`, handed to
    `FusedAttention` so that it reuses their P. Not a Tensor, so not an input of the graph: the
    weights' node stays on its own path. P is reused only for these very query and key tensors
    (re-run on others, as gradcheck does to check a node alone, the node computes its own), and
    FusedAttention's backward checks that nobody changed P in place since."""

    __slots__ = ("tensor", "query", "key")

    def __init__(self, tensor, query, key):
        self.tensor, self.query, self.key = tensor, query, key

    def weights_for(self, query, key):
        """P as an array if it was made from exactly these tensors, else None."""
        return self.tensor.numpy(force=True) if query is self.query and key is self.key else None


def scores_vjp(d_p, p, query, key, mask, scale, needs):
    """(dQ, dK) from dP with Tensor ops (recorded under create_graph): the softmax VJP, then the scores'."""
    if mask.allowed is not None:
        # P is 0 there already; selecting also drops a NaN that a masked value put in dP
        d_p = mt.where(mask.allowed, d_p, 0.0)
    d_s = p * (d_p - (d_p * p).sum(dim=-1, keepdim=True))                    # softmax VJP per row
    d_query = ((d_s @ key) * scale).sum_to_size(query.shape) if needs[0] else None      # dQ = c dS K
    d_key = ((d_s.mT @ query) * scale).sum_to_size(key.shape) if needs[1] else None     # dK = c dS^T Q
    return d_query, d_key
