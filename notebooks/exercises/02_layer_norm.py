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
# # Exercise 2 of 9: the backward of layer normalisation
#
# Forward (done for you), over the last dim of size D, per row:
#
#     mu = mean(x),   var = mean((x - mu)^2),   rstd = 1 / sqrt(var + eps)
#     xhat = (x - mu) * rstd,                   out = xhat * weight + bias
#
# Your task: `backward(ctx, g)` gets g = dL/dout and returns one gradient per argument of
# `forward`: (dL/dx, dL/dweight, dL/dbias, None for eps). weight and bias have shape (D,) and are
# used by every row: their gradient is a sum over all the other dims.
#
# Run the cells from the top: the one under **Your code** saves itself as
# `my_exercises/layer_norm.py`, the one under **Grade it** grades that file: your gradient of
# every input is compared with central finite differences (float64, the output weighted by a
# random upstream gradient). Change the code, run both again. The same file can be graded in a
# terminal with `attention-grade layer_norm my_exercises/layer_norm.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("layer_norm")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/layer_norm.py
import numpy as np

from minitensor import from_numpy
from minitensor.autograd import Function


class LayerNorm(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        a = x.detach().numpy()  # forward computes on the numpy arrays
        mu = a.mean(axis=-1, keepdims=True)
        d = a - mu
        rstd = 1.0 / np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps)
        xhat = d * rstd
        ctx.save_for_backward(from_numpy(xhat), from_numpy(rstd))
        return xhat * weight.detach().numpy() + bias.detach().numpy()

    @staticmethod
    def backward(ctx, g):
        xhat, rstd = ctx.saved_tensors  # Tensors, shapes (..., D) and (..., 1)
        x, weight, bias, eps = ctx.inputs
        raise NotImplementedError(
            "the backward of layer norm is yours to write. Hint 1: out = xhat * weight + bias, so "
            "the gradient of xhat is g times weight; start from there. weight and bias are used by "
            "every row: their gradients are sums over all rows. (next hint: attention-grade --hint "
            "2 layer_norm)"
        )


def layer_norm(x, weight, bias, eps=1e-5):
    """Layer norm over the last dim of `x`, with a learnable scale `weight` and shift `bias` of shape (D,)."""
    return LayerNorm.apply(x, weight, bias, eps)


# %% [markdown]
# ## Grade it
#
# 3 points in 3 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/layer_norm.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# out = xhat * weight + bias, so the gradient of xhat is g times weight; start from there. weight
# and bias are used by every row: their gradients are sums over all rows.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# mu and rstd depend on every element of the row, so dx has three terms: the direct one, one
# through the mean and one through the variance. For weight and bias, reshape(-1, D).sum(dim=0)
# sums over any number of leading dims.
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# dx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)) with means over dim=-1,
# keepdim=True; dweight = sum of g * xhat over rows; dbias = sum of g over rows.
#
# </details>
