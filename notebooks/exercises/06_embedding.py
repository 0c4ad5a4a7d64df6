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
# # Exercise 6 of 9: the backward of an embedding lookup, where an index may repeat
#
# Forward (done for you): for an int64 tensor of indices (any shape) and a table weight (V, D),
# every index picks one row:
#
#     out[..., :] = weight[indices[...], :]            out: indices.shape + (D,)
#
# Your task: `backward(ctx, g)` gets g = dL/dout (shape indices.shape + (D,)) and returns
# (None for the indices, dL/dweight of shape (V, D)). A token that appears twice in a sentence
# looks its row up twice: what does that row's gradient get?
#
# Run the cells from the top: the one under **Your code** saves itself as
# `my_exercises/embedding.py`, the one under **Grade it** grades that file: your gradient of every
# input is compared with central finite differences (float64, the output weighted by a random
# upstream gradient). Change the code, run both again. The same file can be graded in a terminal
# with `attention-grade embedding my_exercises/embedding.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("embedding")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/embedding.py
import numpy as np

from minitensor import from_numpy
from minitensor.autograd import Function


class Embedding(Function):
    @staticmethod
    def forward(ctx, indices, weight):
        return weight.detach().numpy()[indices.numpy()]  # forward computes on the numpy arrays

    @staticmethod
    def backward(ctx, g):
        indices, weight = ctx.inputs  # indices: an int64 Tensor; weight: the (V, D) table
        raise NotImplementedError(
            "the backward of an embedding lookup is yours to write. Hint 1: each output row is a "
            "copy of one row of weight, so that weight row's gradient is the upstream row of g, "
            "added up over every place the row was looked up; rows never looked up get 0. (next "
            "hint: attention-grade --hint 2 embedding)"
        )


def embedding(indices, weight):
    """The rows of `weight` (V, D) at the integer `indices`."""
    return Embedding.apply(indices, weight)


# %% [markdown]
# ## Grade it
#
# 6 points in 4 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/embedding.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# each output row is a copy of one row of weight, so that weight row's gradient is the upstream
# row of g, added up over every place the row was looked up; rows never looked up get 0.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# a row looked up twice gets two gradients: sum them. numpy's table[idx] += rows adds a repeated
# row only once (the write is buffered: the last one wins).
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# table_grad = np.zeros(weight.shape); np.add.at(table_grad, indices.numpy(), g.numpy()); return
# None, from_numpy(table_grad).
#
# </details>
