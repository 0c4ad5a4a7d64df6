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
# # Exercise 3 of 9: the backward of scaled dot-product attention
#
# Forward (done for you), for queries q (..., Tq, d), keys k (..., Tk, d), values v (..., Tk, dv)
# and an optional bool mask (Tq, Tk) that is True where attention is allowed:
#
#     S = q @ k^T / sqrt(d)            scores                   (..., Tq, Tk)
#     S = where(mask, S, -inf)         masked keys get weight 0
#     P = softmax(S, dim=-1)           attention weights        (..., Tq, Tk)
#     out = P @ v                                                (..., Tq, dv)
#
# Your task: `backward(ctx, g)` gets g = dL/dout and returns (dL/dq, dL/dk, dL/dv, None for the
# mask). Go back one line at a time: through `P @ v`, through the softmax, through the scale and
# through `q @ k^T`. `.mT` transposes the last two dims of a Tensor.
#
# Run the cells from the top: the one under **Your code** saves itself as `my_exercises/sdpa.py`,
# the one under **Grade it** grades that file: your gradient of every input is compared with
# central finite differences (float64, the output weighted by a random upstream gradient). Change
# the code, run both again. The same file can be graded in a terminal with `attention-grade sdpa
# my_exercises/sdpa.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("sdpa")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/sdpa.py
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
            "the backward of scaled dot-product attention is yours to write. Hint 1: go back one "
            "line of the forward at a time, last first: out = P @ v, then the softmax, then the "
            "scale, then S = q @ k^T. (next hint: attention-grade --hint 2 sdpa)"
        )


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q @ k^T / sqrt(d), masked) @ v."""
    return ScaledDotProductAttention.apply(q, k, v, mask)


# %% [markdown]
# ## Grade it
#
# 4 points in 4 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/sdpa.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# go back one line of the forward at a time, last first: out = P @ v, then the softmax, then the
# scale, then S = q @ k^T.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# a matmul C = A @ B gives dA = dC @ B^T and dB = A^T @ dC (.mT transposes the last two dims); the
# softmax's backward is the one of the softmax exercise. Masked entries need no special case: P is
# 0 there.
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# dv = P^T @ g; dP = g @ v^T; dS = P * (dP - rowsum(dP * P)); dq = scale * dS @ k; dk = scale *
# dS^T @ q.
#
# </details>
