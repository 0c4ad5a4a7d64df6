r"""Exercise: the backward of layer normalisation.

Forward (done for you), over the last dim of size D, per row:

    mu = mean(x),   var = mean((x - mu)^2),   rstd = 1 / sqrt(var + eps)
    xhat = (x - mu) * rstd,                   out = xhat * weight + bias

Your task: `backward(ctx, g)` gets g = dL/dout and returns one gradient per argument of
`forward`: (dL/dx, dL/dweight, dL/dbias, None for eps). weight and bias have shape (D,) and are
used by every row: their gradient is a sum over all the other dims.

Grade it:   attention-grade layer_norm layer_norm.py        (more hints: attention-grade --hint 2 layer_norm)
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
        # BEGIN SOLUTION
        n_features = xhat.shape[-1]
        gxhat = g * weight
        # xhat depends on x directly (rstd), through mu (a shift: removes the mean) and through var
        # (a rescale: removes the component along xhat); with var the population variance, mean over D.
        gx = rstd * (gxhat - gxhat.mean(dim=-1, keepdim=True) - xhat * (gxhat * xhat).mean(dim=-1, keepdim=True))
        gw = (g * xhat).reshape(-1, n_features).sum(dim=0)  # weight scales every row: sum over all of them
        gb = g.reshape(-1, n_features).sum(dim=0)
        return gx, gw, gb, None
        # END SOLUTION


def layer_norm(x, weight, bias, eps=1e-5):
    """Layer norm over the last dim of `x`, with a learnable scale `weight` and shift `bias` of shape (D,)."""
    return LayerNorm.apply(x, weight, bias, eps)
