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
# # Exercise 5 of 9: the backward of GELU, in its tanh approximation (GPT-2's, PyTorch's approximate='tanh')
#
# Forward (done for you), elementwise, with C = sqrt(2 / pi) and A = 0.044715:
#
#     u = C (x + A x^3),    t = tanh(u),    out = 0.5 x (1 + t)
#
# (The exact GELU is x Phi(x), Phi the normal distribution's CDF; this approximation avoids erf.)
#
# Your task: `backward(ctx, g)` gets g = dL/dout and returns dL/dx.
#
# Run the cells from the top: the one under **Your code** saves itself as `my_exercises/gelu.py`,
# the one under **Grade it** grades that file: your gradient of every input is compared with
# central finite differences (float64, the output weighted by a random upstream gradient). Change
# the code, run both again. The same file can be graded in a terminal with `attention-grade gelu
# my_exercises/gelu.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("gelu")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/gelu.py
import math

import numpy as np

from minitensor import from_numpy
from minitensor.autograd import Function

C = math.sqrt(2.0 / math.pi)
A = 0.044715


class Gelu(Function):
    @staticmethod
    def forward(ctx, x):
        a = x.detach().numpy()  # forward computes on the numpy array
        t = np.tanh(C * (a + A * a ** 3))
        ctx.save_for_backward(from_numpy(t))
        return 0.5 * a * (1.0 + t)

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors  # tanh(u), a Tensor of x's shape
        (x,) = ctx.inputs
        raise NotImplementedError(
            "the backward of GELU (tanh approximation) is yours to write. Hint 1: out = 0.5 x (1 + "
            "t) is x times a function of x: the product rule gives two terms. (next hint: "
            "attention-grade --hint 2 gelu)"
        )


def gelu(x):
    """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return Gelu.apply(x)


# %% [markdown]
# ## Grade it
#
# 3 points in 3 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/gelu.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# out = 0.5 x (1 + t) is x times a function of x: the product rule gives two terms.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# t = tanh(u) with u = C (x + A x^3): dt/dx = (1 - t^2) du/dx, and du/dx = C (1 + 3 A x^2).
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# dx = g * (0.5 (1 + t) + 0.5 x (1 - t^2) C (1 + 3 A x^2)).
#
# </details>
