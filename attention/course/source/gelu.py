r"""Exercise: the backward of GELU, in its tanh approximation (GPT-2's, PyTorch's approximate='tanh').

Forward (done for you), elementwise, with C = sqrt(2 / pi) and A = 0.044715:

    u = C (x + A x^3),    t = tanh(u),    out = 0.5 x (1 + t)

(The exact GELU is x Phi(x), Phi the normal distribution's CDF; this approximation avoids erf.)

Your task: `backward(ctx, g)` gets g = dL/dout and returns dL/dx.

Grade it:   attention-grade gelu gelu.py        (more hints: attention-grade --hint 2 gelu)
"""
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
        # BEGIN SOLUTION
        du_dx = C * (1.0 + 3.0 * A * x * x)
        # product rule on 0.5 x (1 + t); chain rule through t = tanh(u): dt/dx = (1 - t^2) du/dx
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du_dx)
        # END SOLUTION


def gelu(x):
    """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return Gelu.apply(x)
