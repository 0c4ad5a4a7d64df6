r"""numpy twins of the ops that run at every step of a transformer, registered onto them by `plug_in`.

Each op's own forward and backward (`LayerNorm`, `Linear` in minitensor/nn/functional.py, `Gelu` in
minitensor/ops/unary.py) are the plain math, the backward in Tensor ops so that it can be
recorded (`create_graph=True`). Here are faster equals: a backward's twin `*_backward(ctx, g)`
runs the same formula on numpy arrays, with fewer passes over the data and no Tensor per step,
when nothing records the backward (every training step); it returns plain arrays (the engine wraps
them), one per forward argument, None where there is none. A forward's twin `*_forward(ctx, ...)`
computes the op's output and keeps on ctx what the backward twin reads (GELU's factor Phi(x),
LayerNorm's xhat and rstd), so that it isn't computed twice.
tests/minitensor/fast/test_vjps.py proves each twin equal to its op's own.
"""
import math

import numpy as np

from .. import _dtype
from .._fperr import quiet, quietly
from ..nn.functional import LayerNorm
from ..ops.unary import Gelu, gelu_cdf


def ones_vector(n, dtype):
    """A vector of n ones: `rows @ ones` sums short rows in one BLAS call, much faster than `.sum(-1)`."""
    return np.ones(n, dtype=dtype)


@quietly("over", "invalid")  # inf * 0 in the products: NaN, silently as in PyTorch
def linear_vjp(g, x, w, needs, has_bias):
    """gx = g W, gW = g2^T x2, gb = column sums of g2, with g2 and x2 the rows of g and x."""
    rows = math.prod(x.shape[:-1])  # written out: a -1 can't be inferred when a dim is 0
    g2 = g.reshape(rows, w.shape[0])
    gx = (g2 @ w).reshape(x.shape) if needs[0] else None
    gw = g2.T @ x.reshape(rows, w.shape[1]) if needs[1] else None
    gb = ones_vector(g2.shape[0], g2.dtype) @ g2 if has_bias and needs[2] else None
    return gx, gw, gb


@quietly("over", "invalid")  # a row holding inf or NaN: NaN, silently as in PyTorch
def layer_norm_vjp(g, xhat, rstd, x_shape, norm_shape, w, has_bias, needs):
    """LayerNorm's VJP on the (M, D) rows of the forward's xhat and rstd (M,):
    gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)), gxhat = g * w."""
    M, D = xhat.shape
    g = g.astype(xhat.dtype, copy=False).reshape(M, D)
    ones = ones_vector(D, xhat.dtype)
    gw = gb = None
    if w is not None:
        w = w.reshape(-1).astype(xhat.dtype, copy=False)
        g_xhat = g * xhat
        if needs[2]:
            gw = ones_vector(M, g.dtype) @ g_xhat  # sum over rows
        mean_gxhat_xhat = (g_xhat @ w) / D  # mean(gxhat * xhat), as gxhat = g * w
        gxhat = g * w
    else:
        mean_gxhat_xhat = ((g * xhat) @ ones) / D
        gxhat = g
    if has_bias and needs[3]:
        gb = ones_vector(M, g.dtype) @ g
    mean_gxhat = (gxhat @ ones) / D
    gx = xhat * mean_gxhat_xhat[:, None]
    np.subtract(gxhat, gx, out=gx)
    gx -= mean_gxhat[:, None]
    gx *= rstd[:, None]
    return (gx.reshape(x_shape), None, None if gw is None else gw.reshape(norm_shape),
            None if gb is None else gb.reshape(norm_shape), None)


def _gelu_vjp(x, approximate, step, g):
    """g * d gelu / dx from the forward's step = sigmoid(2u) (tanh) or Phi(x) (none), no transcendental call
    for tanh: g * (s + x s (1 - s) 2k (1 + 3c x^2)); for none: g * (Phi(x) + x phi(x))."""
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        slope = _square(x)
        slope *= 2 * k * 3 * 0.044715
        slope += 2 * k
        slope *= x
        one_minus = np.subtract(1, step, dtype=step.dtype)
        one_minus *= step
        slope *= one_minus
    else:
        slope = _square(x)
        slope *= -0.5
        np.exp(slope, out=slope)
        slope *= x
        slope *= 1 / math.sqrt(2 * math.pi)
    slope += step
    slope *= g
    return slope, None


def _square(x):
    """x * x as a new array, also for 0-d x (where `x * x` is a numpy scalar, which can't be updated in place)."""
    return np.multiply(x, x, out=np.empty_like(x))


# Overflow on the way (x^2, x^3) and inf * 0 at x = -inf make the limits, inf and NaN, as in
# PyTorch, which says nothing: numpy's warnings about them are off.
gelu_vjp = quiet(_gelu_vjp, "over", "invalid")


# ---- the twins as the op's slots call them: (ctx, forward's arguments) and (ctx, g) --------------
def linear_backward(ctx, g):
    x, weight, bias = ctx.inputs
    return linear_vjp(g._array, x._array, weight._array, ctx.needs_input_grad, bias is not None)


@quietly("over", "invalid")  # a row holding inf or NaN is NaN, silently as in PyTorch
def layer_norm_forward(ctx, x, k, weight, bias, eps):
    """LayerNorm's forward on (M, D) rows, the row sums as `rows @ ones` (one BLAS call: on short rows
    much faster than `.sum(-1)`), keeping xhat and rstd for `layer_norm_backward`."""
    xd = x._array
    D = math.prod(xd.shape[xd.ndim - k:])
    rows, ones = xd.reshape(xd.size // D if D else 0, D), ones_vector(D, xd.dtype)  # one row per normalised slice
    mu = rows @ ones
    mu /= D  # sum, then divide, as the op's own forward
    d = rows - mu[:, None]
    var = (d * d) @ ones
    var /= D
    var += float(eps)
    rstd = np.sqrt(var, out=var)
    np.reciprocal(rstd, out=rstd)
    rstd[rstd == 0] = np.nan  # a variance beyond the dtype: a NaN row, as the op's own forward
    d *= rstd[:, None]  # d is xhat from here on
    ctx.xhat, ctx.rstd = d, rstd
    # a new array even without weight and bias: the output must not alias the saved xhat
    out = d * weight._array.reshape(-1).astype(d.dtype, copy=False) if weight is not None else d.copy()
    if bias is not None:
        out += bias._array.reshape(-1).astype(d.dtype, copy=False)
    return out.reshape(xd.shape)


def layer_norm_backward(ctx, g):
    x, k, weight, bias, eps = ctx.inputs
    if not hasattr(ctx, "xhat"):  # its forward ran before the speed layer was plugged in
        return LayerNorm.backward(ctx, g)
    return layer_norm_vjp(g._array, ctx.xhat, ctx.rstd, x._array.shape, x._array.shape[x.ndim - k:],
                          None if weight is None else weight._array, bias is not None, ctx.needs_input_grad)


def gelu_forward(ctx, x, approximate):
    """Gelu's forward, keeping its factor step = gelu_cdf(x) for `gelu_backward` (no second exp or erf)."""
    if _dtype.kind(x._array.dtype) != "f":
        return Gelu.forward(ctx, x, approximate)  # which raises the op's error
    ctx.step = _tanh_step(x._array) if approximate == "tanh" else gelu_cdf(x._array, approximate)
    return _times(x._array, ctx.step)


@quietly("over", "invalid")  # overflow in a^3 and in exp: the limits, silently as in PyTorch
def _tanh_step(a):
    """gelu_cdf(a, "tanh") = 1 / (1 + exp(-2 sqrt(2/pi) (a + 0.044715 a^3))) in one buffer: the same
    products in the same order as the op's own, so the same bits, without its nine fresh arrays
    (310 against 409 us on a (704, 192) float32 array here)."""
    t = np.multiply(0.044715, a, out=np.empty_like(a))
    t *= a
    t *= a                        # 0.044715 a^3
    t += a                        # a + 0.044715 a^3
    t *= math.sqrt(2 / math.pi)   # u
    t *= -2
    np.exp(t, out=t)
    t += 1
    return np.divide(1, t, out=t)


_times = quiet(np.multiply, "over", "invalid")  # inf * 0 at x = -inf: NaN, silently as in PyTorch


def gelu_backward(ctx, g):
    x, approximate = ctx.inputs
    if not hasattr(ctx, "step"):  # its forward ran before the speed layer was plugged in
        return Gelu.backward(ctx, g)
    return gelu_vjp(x._array, approximate, ctx.step, g._array)
