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
# # Exercise 1 of 9: the backward of softmax
#
# Forward (done for you), along the last dim, with m = max_j x_j subtracted so nothing overflows:
#
#     p_i = e^{x_i - m} / \sum_j e^{x_j - m}
#
# Your task: `backward(ctx, g)` gets g = dL/dp (same shape as p) and must return dL/dx.
#
# Run the cells from the top: the one under **Your code** saves itself as
# `my_exercises/softmax.py`, the one under **Grade it** grades that file: your gradient of every
# input is compared with central finite differences (float64, the output weighted by a random
# upstream gradient). Change the code, run both again. The same file can be graded in a terminal
# with `attention-grade softmax my_exercises/softmax.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("softmax")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/softmax.py
import numpy as np

from minitensor.autograd import Function


class Softmax(Function):
    @staticmethod
    def forward(ctx, x):
        a = x.detach().numpy()  # forward computes on the numpy array
        z = a - a.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    @staticmethod
    def backward(ctx, g):
        p = ctx.output  # the forward result, a Tensor (so are g and everything you compute from them)
        raise NotImplementedError(
            "the backward of softmax is yours to write. Hint 1: every output p_i of a row depends "
            "on every input x_j of that row, so dL/dx_j is a sum over the row: dL/dx_j = sum_i g_i "
            "dp_i/dx_j. (next hint: attention-grade --hint 2 softmax)"
        )


def softmax(x):
    """Softmax over the last dim of `x`."""
    return Softmax.apply(x)


# %% [markdown]
# ## Grade it
#
# 5 points in 5 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/softmax.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# every output p_i of a row depends on every input x_j of that row, so dL/dx_j is a sum over the
# row: dL/dx_j = sum_i g_i dp_i/dx_j.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# the Jacobian is dp_i/dx_j = p_i (delta_ij - p_j). Apply its transpose to g without building it:
# you need p, g and one sum along dim=-1 (keepdim=True).
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# dx = p * (g - sum(g * p, dim=-1, keepdim=True)).
#
# </details>
