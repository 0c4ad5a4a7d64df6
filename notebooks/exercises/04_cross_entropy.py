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
# # Exercise 4 of 9: the backward of cross-entropy from logits
#
# Forward (done for you), for logits x (N, C) and int64 class indices t (N,), the mean over the
# batch, with m_i = max_c x_{i,c} subtracted so nothing overflows:
#
#     logp_{i,c} = x_{i,c} - m_i - log \sum_{c'} e^{x_{i,c'} - m_i}
#     L = -(1/N) \sum_i logp_{i, t_i}
#
# Your task: `backward(ctx, g)` gets g = dL/dout, a 0-d Tensor (the loss is one number, but g is not
# always 1: a loss can be scaled or summed with others after this op), and returns
# (dL/dx, None for the targets, which are integers and have no gradient).
#
# Run the cells from the top: the one under **Your code** saves itself as
# `my_exercises/cross_entropy.py`, the one under **Grade it** grades that file: your gradient of
# every input is compared with central finite differences (float64, the output weighted by a
# random upstream gradient). Change the code, run both again. The same file can be graded in a
# terminal with `attention-grade cross_entropy my_exercises/cross_entropy.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("cross_entropy")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/cross_entropy.py
import numpy as np

from minitensor import from_numpy
from minitensor.autograd import Function


class CrossEntropy(Function):
    @staticmethod
    def forward(ctx, x, targets):
        logits = x.detach().numpy()  # forward computes on the numpy arrays
        t = targets.numpy()
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        ctx.save_for_backward(from_numpy(np.exp(logp)))  # the softmax p, rows of probabilities
        return -logp[np.arange(len(t)), t].mean()

    @staticmethod
    def backward(ctx, g):
        (p,) = ctx.saved_tensors  # softmax(x), a Tensor (N, C)
        x, targets = ctx.inputs  # targets: an int64 Tensor (N,)
        raise NotImplementedError(
            "the backward of cross-entropy is yours to write. Hint 1: take one row first: L_i = "
            "-x_{i,t_i} + log sum_c e^{x_{i,c}}. The loss is the mean of N such rows, and backward "
            "gets an upstream g that is not always 1. (next hint: attention-grade --hint 2 "
            "cross_entropy)"
        )


def cross_entropy(x, targets):
    """Mean cross-entropy of logits `x` (N, C) against class indices `targets` (N,)."""
    return CrossEntropy.apply(x, targets)


# %% [markdown]
# ## Grade it
#
# 4 points in 4 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/cross_entropy.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# take one row first: L_i = -x_{i,t_i} + log sum_c e^{x_{i,c}}. The loss is the mean of N such
# rows, and backward gets an upstream g that is not always 1.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# d/dx_{i,c} of log sum_c' e^{x_{i,c'}} is the softmax p_{i,c} (the forward saved p); d/dx_{i,c}
# of x_{i,t_i} is 1 at c = t_i and 0 elsewhere.
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# dx = g * (p - onehot(t)) / N, with onehot(t) an (N, C) array of zeros with a 1 at [i, t_i];
# return (dx, None).
#
# </details>
