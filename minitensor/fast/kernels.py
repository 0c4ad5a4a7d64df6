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
from .elementary import _PLAIN  # (the dtypes the twins compute in)
from .vjps import ones_vector


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


def _short_last_rows(a, dim):
    """Whether softmax along `dim` of the array `a` runs along short rows the twins reduce fast: the last
    dim, 2 to `_SHORT_ROWS` long, of a non-empty float32/float64 array."""
    return a.ndim > 0 and a.size > 0 and dim % a.ndim == a.ndim - 1 and 1 < a.shape[-1] <= _SHORT_ROWS \
        and a.dtype in _PLAIN


@quietly("over", "invalid", "divide")  # as the op's own forward: a row of only -inf is 0/0 = NaN
def softmax_forward(ctx, x, dim):
    """Softmax's forward along a short last dim, its two row reductions done fast: the row max over a
    transposed copy (the same maxima: a max doesn't depend on the order), the row sums as `rows @ ones`
    (one BLAS call; it rounds in another order than `.sum`, so the last bit may differ)."""
    a = x._array
    if not _short_last_rows(a, dim):
        return Softmax.forward(ctx, x, dim)
    n = a.shape[-1]
    rows = a.reshape(-1, n)
    m = finite_part(np.ascontiguousarray(rows.T).max(axis=0), keep_posinf=True)
    e = np.subtract(rows, m[:, None])
    np.exp(e, out=e)
    e /= (e @ ones_vector(n, e.dtype))[:, None]
    return e.reshape(a.shape)


@quietly("over", "invalid")
def softmax_backward(ctx, g):
    """Softmax's VJP gx = out * (g - \\sum_j g_j out_j) along `dim`, in one buffer."""
    _, dim = ctx.inputs
    out = ctx.output._array
    if out.dtype == np.float16 or out.ndim == 0:
        return type(ctx).backward(ctx, g)
    gx = g._array * out
    if _short_last_rows(gx, dim) and gx.flags.c_contiguous:  # (see softmax_forward)
        n = gx.shape[-1]
        total = (gx.reshape(-1, n) @ ones_vector(n, gx.dtype)).reshape(gx.shape[:-1] + (1,))
    else:
        total = gx.sum(axis=dim, keepdims=True)
    np.subtract(g._array, total, out=gx)
    gx *= out
    return gx, None
