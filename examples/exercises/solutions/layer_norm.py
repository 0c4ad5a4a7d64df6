r"""Reference solution of exercise 2 — the backward of layer normalisation.

Forward (done for you), over the last dim of size D, per row:

    mu = mean(x),   var = mean((x - mu)^2),   rstd = 1 / sqrt(var + eps)
    xhat = (x - mu) * rstd,                   out = xhat * weight + bias

Your task: `backward(ctx, g)` gets g = dL/dout and returns one gradient per argument of
`forward`: (dL/dx, dL/dweight, dL/dbias, None for eps). weight and bias have shape (D,) and are
used by every row: their gradient is a sum over all the other dims.

Solution: dx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)), gxhat = g * weight;
dweight = sum of g * xhat over all rows; dbias = sum of g over all rows.

Grade it:   python -m examples.exercises.grade layer_norm examples/exercises/solutions/layer_norm.py
"""
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
        d = xhat.shape[-1]
        gxhat = g * weight
        # xhat depends on x directly (rstd), through mu (a shift: removes the mean) and through var
        # (a rescale: removes the component along xhat); with var the population variance, mean over D.
        gx = rstd * (gxhat - gxhat.mean(dim=-1, keepdim=True) - xhat * (gxhat * xhat).mean(dim=-1, keepdim=True))
        gw = (g * xhat).reshape(-1, d).sum(dim=0)  # weight scales every row: sum over all of them
        gb = g.reshape(-1, d).sum(dim=0)
        return gx, gw, gb, None


def layer_norm(x, weight, bias, eps=1e-5):
    """Layer norm over the last dim of `x`, with a learnable scale `weight` and shift `bias` of shape (D,)."""
    return LayerNorm.apply(x, weight, bias, eps)
