r"""numpy twins of the backwards of the ops that run at every step of a transformer.

Each op's own backward (in `minitensor/nn/functional.py` and `minitensor/ops/unary.py`) is
written with Tensor ops, so that it can be recorded (`create_graph=True`) and read beside its
formula. When nothing records the backward (every training step), the op calls its twin here:
the same formula on numpy arrays, with fewer passes over the data and no Tensor per step. Each
returns plain arrays (the engine wraps them), one per forward argument, None where there is none.
tests/minitensor/fast/test_vjps.py proves each twin equal to its op's own backward.
"""
import math

import numpy as np

from .._fperr import quiet, quietly


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
