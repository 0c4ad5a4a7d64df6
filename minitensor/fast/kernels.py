r"""numpy twins of the backwards of ops a user's composed model runs at every step (issue 33): tanh
(a GELU written out with `tanh`) and softmax (attention composed by hand), registered by `plug_in`.

The ops' own backwards (`Tanh` in minitensor/ops/unary.py, `Softmax` in minitensor/ops/softmax.py)
are written in Tensor ops, so that `create_graph=True` can record them: three ops each, three
nodes' bookkeeping and three fresh arrays per call. When nothing records the backward (every
training step), these compute the same formula on the arrays, in one buffer, and give the same
numbers bit for bit (the same products and sums in the same order; only which array holds them
changes), but where softmax runs along a short last dim: there it sums its rows as `rows @ ones`
(numpy's reductions along a short last axis cost 4-8x that), forward (`softmax_forward`, also its row
max over a transposed copy) and backward, so its last bits may differ from the op's own.
tests/minitensor/fast/test_kernels.py proves each equal to its op's own: bit for bit, or within 4 ulp.
"""
import numpy as np

from .._fperr import quietly
from ..ops._util import finite_part
from ..ops.softmax import Softmax

_PLAIN = (np.dtype(np.float32), np.dtype(np.float64))


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


_SHORT_ROWS = 64  # a last dim up to this long: numpy's reductions along it cost more than a copy and BLAS


@quietly("over", "invalid", "divide")  # as the op's own forward: a row of only -inf is 0/0 = NaN
def softmax_forward(ctx, x, dim):
    """Softmax's forward along a short last dim, its two row reductions done fast: the row max over a
    transposed copy (the same maxima: a max doesn't depend on the order), the row sums as `rows @ ones`
    (one BLAS call; it rounds in another order than `.sum`, so the last bit may differ)."""
    a = x._array
    if (a.ndim == 0 or a.size == 0 or dim % a.ndim != a.ndim - 1 or not 1 < a.shape[-1] <= _SHORT_ROWS
            or a.dtype not in _PLAIN):
        return Softmax.forward(ctx, x, dim)
    n = a.shape[-1]
    rows = a.reshape(-1, n)
    m = finite_part(np.ascontiguousarray(rows.T).max(axis=0), keep_posinf=True)
    e = np.subtract(rows, m[:, None])
    np.exp(e, out=e)
    e /= (e @ np.ones(n, e.dtype))[:, None]
    return e.reshape(a.shape)


@quietly("over", "invalid")
def softmax_backward(ctx, g):
    """Softmax's VJP gx = out * (g - \\sum_j g_j out_j) along `dim`, in one buffer."""
    _, dim = ctx.inputs
    out = ctx.output._array
    if out.dtype == np.float16 or out.ndim == 0:
        return type(ctx).backward(ctx, g)
    gx = g._array * out
    n = out.shape[-1]
    if (dim % out.ndim == out.ndim - 1 and gx.size and n <= _SHORT_ROWS and out.dtype in _PLAIN
            and gx.flags.c_contiguous):
        total = (gx.reshape(-1, n) @ np.ones(n, gx.dtype)).reshape(out.shape[:-1] + (1,))  # (see softmax_forward)
    else:
        total = gx.sum(axis=dim, keepdims=True)
    np.subtract(g._array, total, out=gx)
    gx *= out
    return gx, None
