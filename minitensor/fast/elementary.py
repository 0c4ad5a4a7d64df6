r"""numpy twins of the elementary ops' backwards (add, multiply, power, sum, matmul, reshape ...),
registered onto them by `plug_in` (issue 33: a learner's step on tiny tensors).

Each op's own backward (minitensor/ops/) is written in Tensor ops, so that `create_graph=True` can
record it: `Matmul`'s is ten of them (unsqueeze, transpose, matmul, unbroadcast, reshape ...), each
a call of `Function.apply` with its wrapper's checks. On tiny tensors that bookkeeping, not the
arithmetic, is the step's time. When nothing records the backward (every training step), these
twins run the same numpy calls on the arrays, in the same order, so the gradients are the same bit
for bit; `test_speed_layer_twins_give_the_ops_own_gradients_bit_for_bit` in tests/minitensor/test_ops.py
proves it for every op-table row of a twinned op.

A twin covers the common case only: float32 or float64 operands of one dtype, a Python number as
the other operand. Anything else (half precision, which PyTorch computes in float32; mixed dtypes,
whose promotion is the wrapper's business; a tensor exponent; 1-d matmul operands) goes to the op's
own backward, `type(ctx).backward(ctx, g)`.
"""
import math

import numpy as np

from ..autograd.function import call_forward
from ..nn.functional import CrossEntropy
from ..ops._util import unbroadcast
from ..ops.arithmetic import _power
from ..ops.reduce import _count, _keep  # (the ops' own: which dims were summed, how many elements)
from ..ops.softmax import Softmax

_PLAIN = (np.dtype(np.float32), np.dtype(np.float64))  # the dtypes the twins compute in
_NUMBER = (int, float)


def _same_float(g, *arrays):
    """Whether `g` and every array are float32 or float64, all of one dtype."""
    d = g.dtype
    return d in _PLAIN and all(a.dtype == d for a in arrays)


def _other(x, g):
    """A binary op's operand as the twin reads it: a tensor's array (when in g's dtype), a Python
    int or float as it is (numpy keeps g's dtype with it, as PyTorch's wrapper does); None otherwise."""
    if type(x) in _NUMBER:
        return x
    a = getattr(x, "_array", None)
    return a if a is not None and a.dtype == g.dtype else None


# ---- arithmetic ---------------------------------------------------------------------------------

def add_backward(ctx, g):
    """Add's VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(g, b.shape)."""
    if g._array.dtype not in _PLAIN:
        return type(ctx).backward(ctx, g)
    (a, b), g = ctx.inputs, g._array
    need_a, need_b = ctx.needs_input_grad
    return (unbroadcast(g, a._array.shape) if need_a else None, unbroadcast(g, b._array.shape) if need_b else None)


def sub_backward(ctx, g):
    """Sub's VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(-g, b.shape)."""
    if g._array.dtype not in _PLAIN:
        return type(ctx).backward(ctx, g)
    (a, b), g = ctx.inputs, g._array
    need_a, need_b = ctx.needs_input_grad
    return (unbroadcast(g, a._array.shape) if need_a else None,
            unbroadcast(np.negative(g), b._array.shape) if need_b else None)


def mul_backward(ctx, g):
    """Mul's VJP: ga = unbroadcast(g * b, a.shape);  gb = unbroadcast(g * a, b.shape)."""
    operands = _operands(ctx, g)
    if operands is None:
        return type(ctx).backward(ctx, g)
    x, y, g = operands
    need_a, need_b = ctx.needs_input_grad
    return (unbroadcast(np.multiply(g, y), np.shape(x)) if need_a else None,
            unbroadcast(np.multiply(g, x), np.shape(y)) if need_b else None)


def div_backward(ctx, g):
    """Div's VJP: ga = unbroadcast(g / b, a.shape);  gb = unbroadcast(-g * (a / b / b), b.shape)."""
    operands = _operands(ctx, g)
    if operands is None:
        return type(ctx).backward(ctx, g)
    x, y, g = operands
    need_a, need_b = ctx.needs_input_grad
    return (unbroadcast(np.true_divide(g, y), np.shape(x)) if need_a else None,
            unbroadcast(np.multiply(np.negative(g), np.true_divide(np.true_divide(x, y), y)), np.shape(y))
            if need_b else None)


def _operands(ctx, g):
    """(a, b, g) of a binary op as its twin reads them (see `_other`), or None where the op's own
    backward must run (g not float32/float64, or an operand of another dtype)."""
    g = g._array
    x, y = (_other(t, g) for t in ctx.inputs)
    return None if x is None or y is None or g.dtype not in _PLAIN else (x, y, g)


def pow_backward(ctx, g):
    """Pow's VJP for a float tensor to a Python power b != 0: ga = g * (b * a^(b-1)), a^(b-1) computed as
    the op computes a power (`_power`: multiplied out for small integers, in float64 for a float32 base
    and an exponent float32 would change)."""
    a, b = ctx.inputs
    if type(b) not in _NUMBER or b == 0 or not _same_float(g._array, a._array):
        return type(ctx).backward(ctx, g)
    slope = np.multiply(b, _power(a, b - 1))
    return np.multiply(g._array, slope), None


def neg_backward(ctx, g):
    """Neg's VJP: gx = -g."""
    return np.negative(g._array) if g._array.dtype in _PLAIN else type(ctx).backward(ctx, g)


# ---- reductions and shapes ----------------------------------------------------------------------

def sum_backward(ctx, g):
    """Sum's VJP: gx = g, with size 1 at each summed dim, broadcast to x's shape."""
    x, dims, keepdim = ctx.inputs
    if g._array.dtype not in _PLAIN:
        return type(ctx).backward(ctx, g)
    shape = x._array.shape
    return np.broadcast_to(_keep(g._array, shape, dims, keepdim), shape), None, None


def mean_backward(ctx, g):
    """Mean's VJP: gx = g broadcast to x's shape, times 1/n."""
    x, dims, keepdim = ctx.inputs
    if g._array.dtype not in _PLAIN:
        return type(ctx).backward(ctx, g)
    shape = x._array.shape
    scale = 1.0 / max(_count(shape, dims), 1)
    return np.multiply(np.broadcast_to(_keep(g._array, shape, dims, keepdim), shape), scale), None, None


def reshape_backward(ctx, g):
    """Reshape's VJP: gx = g reshaped to x's shape."""
    return g._array.reshape(ctx.inputs[0]._array.shape), None


def permute_backward(ctx, g):
    """Permute's VJP: gx = g with the inverse permutation."""
    dims = ctx.inputs[1]
    return g._array.transpose(tuple(sorted(range(len(dims)), key=dims.__getitem__))), None


def expand_backward(ctx, g):
    """Expand's VJP: gx = unbroadcast(g, x.shape)."""
    if g._array.dtype not in _PLAIN:
        return type(ctx).backward(ctx, g)
    return unbroadcast(g._array, ctx.inputs[0]._array.shape), None


# ---- matrix products ----------------------------------------------------------------------------

def matmul_backward(ctx, g):
    """Matmul's VJP for operands of 2 dims or more: ga = unbroadcast(g @ b^T, a.shape);
    gb = unbroadcast(a^T @ g, b.shape), or for a 2-d b under a batch of rows, one GEMM over all rows."""
    a, b = ctx.inputs
    x, y = a._array, b._array
    if x.ndim < 2 or y.ndim < 2 or not _same_float(g._array, x, y):
        return type(ctx).backward(ctx, g)
    g = g._array
    need_a, need_b = ctx.needs_input_grad
    ga = gb = None
    if need_a:
        ga = unbroadcast(np.matmul(g, np.swapaxes(y, -1, -2)), x.shape)
    if need_b:
        if y.ndim == 2 and x.ndim > 2:
            rows = math.prod(x.shape[:-1])
            gb = np.matmul(x.reshape(rows, x.shape[-1]).T, g.reshape(rows, g.shape[-1]))
        else:
            gb = unbroadcast(np.matmul(np.swapaxes(x, -1, -2), g), y.shape)
    return ga, gb



# ---- the loss -----------------------------------------------------------------------------------

def cross_entropy_backward(ctx, g):
    """CrossEntropy's VJP gx = r g (a p - q), with p = softmax(x) by the forward `softmax(x, dim=1)` runs
    (`call_forward`, as `Function.apply` does; for a float32/float64 x its wrapper only checks)."""
    x, reduction = ctx.inputs[0], ctx.inputs[4]
    if not _same_float(g._array, x._array):
        return type(ctx).backward(ctx, g)
    a, q, r = CrossEntropy.vjp_terms(ctx)
    p = call_forward(Softmax, Softmax(), (x, 1))
    ap = p if a is None else np.multiply(p, a)
    rg = np.multiply(g._array.reshape(x._array.shape[0], 1) if reduction == "none" else g._array, r)
    return np.multiply(rg, np.subtract(ap, q)), None, None, None, None, None
