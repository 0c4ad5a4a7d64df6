r"""numpy twins of the backwards of ops a user's composed model runs at every step (issue 33): tanh
(a GELU written out with `tanh`) and softmax (attention composed by hand), registered by `plug_in`.

The ops' own backwards (`Tanh` in minitensor/ops/unary.py, `Softmax` in minitensor/ops/softmax.py)
are written in Tensor ops, so that `create_graph=True` can record them: three ops each, three
nodes' bookkeeping and three fresh arrays per call. When nothing records the backward (every
training step), these compute the same formula on the arrays, in one buffer, and give the same
numbers bit for bit (the same products and sums in the same order; only which array holds them
changes). tests/minitensor/fast/test_kernels.py proves each equal to its op's own backward.
"""
import numpy as np

from .._fperr import quietly


@quietly("over", "invalid")  # g inf or NaN: NaN and inf, silently as the op's own backward
def tanh_backward(ctx, g):
    """Tanh's VJP gx = g * (1 - out^2), in one buffer."""
    out = ctx.output._array  # (`ctx.output`: refuses an output changed in place, as the op's backward does)
    if out.dtype == np.float16 or out.ndim == 0:  # half is computed in float32, and 0-d gives numpy scalars,
        return type(ctx).backward(ctx, g)         # not buffers: the op's own backward
    gx = out * out
    np.subtract(1, gx, out=gx)
    gx *= g._array
    return gx


@quietly("over", "invalid")
def softmax_backward(ctx, g):
    """Softmax's VJP gx = out * (g - \\sum_j g_j out_j) along `dim`, in one buffer."""
    _, dim = ctx.inputs
    out = ctx.output._array
    if out.dtype == np.float16 or out.ndim == 0:
        return type(ctx).backward(ctx, g)
    gx = g._array * out
    total = gx.sum(axis=dim, keepdims=True)
    np.subtract(g._array, total, out=gx)
    gx *= out
    return gx, None
