# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 7 of 9: a whole attention block by hand, forward and backward
#
# Single-head self-attention with its four projections, for x (..., T, D). The weights are stored
# as nn.Linear stores them, y = x W^T (no biases):
#
#     q = x Wq^T,   k = x Wk^T,   v = x Wv^T        (..., T, H)     Wq, Wk, Wv: (H, D)
#     S = q k^T / sqrt(H)                           (..., T, T)
#     S = where(allowed, S, -inf)                   only when causal: query i sees keys j <= i
#     P = softmax(S, dim=-1)                        (..., T, T)
#     a = P v                                       (..., T, H)
#     out = a Wo^T                                  (..., T, D)     Wo: (D, H)
#
# Your task, both halves:
# - `forward(ctx, x, w_q, w_k, w_v, w_o, causal)` computes out (on the numpy arrays given to you;
#   nothing inside forward is recorded) and keeps on ctx what backward needs
#   (`ctx.save_for_backward(...)` for Tensors, plain attributes for anything else);
# - `backward(ctx, g)` gets g = dL/dout and returns (dx, dWq, dWk, dWv, dWo, None for `causal`).
# The grader compares your output and each gradient with what minitensor's autograd computes
# through the same six lines, composed from its ops.
#
# Run the cells from the top: the one under **Your code** saves itself as
# `my_exercises/attention_block.py`, the one under **Grade it** grades that file: your output and
# every gradient are compared with what minitensor's autograd computes through the same steps.
# Change the code, run both again. The same file can be graded in a terminal with `attention-grade
# attention_block my_exercises/attention_block.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("attention_block")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/attention_block.py
import math

import numpy as np

from minitensor import from_numpy
from minitensor.autograd import Function


class SingleHeadAttention(Function):
    @staticmethod
    def forward(ctx, x, w_q, w_k, w_v, w_o, causal):
        X, Wq, Wk, Wv, Wo = (t.detach().numpy() for t in (x, w_q, w_k, w_v, w_o))
        raise NotImplementedError(
            "single-head attention with projections, forward and backward is yours to write. Hint "
            "1: forward: the six lines of the docstring, on numpy arrays (np.swapaxes(k, -1, -2) is"
            " k^T). Backward: go back through them one at a time, last first; each is a matmul or "
            "the softmax. (next hint: attention-grade --hint 2 attention_block)"
        )

    @staticmethod
    def backward(ctx, g):
        x, w_q, w_k, w_v, w_o, causal = ctx.inputs
        raise NotImplementedError(
            "single-head attention with projections, forward and backward is yours to write. Hint "
            "1: forward: the six lines of the docstring, on numpy arrays (np.swapaxes(k, -1, -2) is"
            " k^T). Backward: go back through them one at a time, last first; each is a matmul or "
            "the softmax. (next hint: attention-grade --hint 2 attention_block)"
        )


def attention_block(x, w_q, w_k, w_v, w_o, causal=False):
    """Single-head self-attention with projections: softmax(q k^T / sqrt(H)) v Wo^T, q = x Wq^T ..."""
    return SingleHeadAttention.apply(x, w_q, w_k, w_v, w_o, causal)


# %% [markdown]
# ## Grade it
#
# 4 points in 4 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/attention_block.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# forward: the six lines of the docstring, on numpy arrays (np.swapaxes(k, -1, -2) is k^T).
# Backward: go back through them one at a time, last first; each is a matmul or the softmax.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# a weight is used by every row of every batch: its gradient sums over them, e.g. dWo = g^T a with
# g and a flattened to (rows, features). x feeds q, k and v: its gradient is the sum of three.
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# da = g Wo; dWo = g^T a; dP = da v^T; dv = P^T da; dS = P * (dP - rowsum(dP * P)); dq = scale dS
# k; dk = scale dS^T q; dx = dq Wq + dk Wk + dv Wv; dWq = dq^T x (same for k, v).
#
# </details>
