r"""`gradient` (issue 29, h-names29): a sampled function's derivative along each dim, by finite differences.

Inside, second-order central differences; at the two ends one-sided differences of order `edge_order`.
With a uniform step h:

    interior      f'_i = (f_{i+1} - f_{i-1}) / 2h
    edge_order 1  f'_0 = (f_1 - f_0) / h                    f'_{n-1} = (f_{n-1} - f_{n-2}) / h
    edge_order 2  f'_0 = (-3 f_0 + 4 f_1 - f_2) / 2h        f'_{n-1} = (3 f_{n-1} - 4 f_{n-2} + f_{n-3}) / 2h

With coordinates x (a tensor per dim), the steps h_l = x_i - x_{i-1}, h_r = x_{i+1} - x_i differ, and the
weights of the three samples are those of the parabola through them (the same formulas numpy uses):

    f'_i = -h_r / (h_l (h_l + h_r)) f_{i-1} + (h_r - h_l) / (h_l h_r) f_i + h_l / (h_r (h_l + h_r)) f_{i+1}

Every formula is slices, products and sums of the input (and of the coordinates): the gradient of the
result comes from those ops.
"""
from __future__ import annotations

from numbers import Number
from typing import Any, Sequence

from .. import _dtype
from ..tensor import Tensor, _wrap_dim
from .shape import cat, narrow
from .unary import _to_float


def gradient(input: Tensor, *, spacing: Any = None, dim: int | Sequence[int] | None = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of the sampled `input` along each of `dim` (all dims by default), one tensor per dim.

    spacing: a number (the same step on every dim), a sequence of numbers (one step per dim) or a sequence
    of 1-d tensors (each dim's sample coordinates).

    forward: out_i = (f_{i+1} - f_{i-1}) / 2h inside, one-sided differences of order edge_order at the ends
    VJP:     that of the slices, products and sums it is made of (each g_i spread back to f_{i-1}, f_i, f_{i+1}
             with the same weights)
    """
    op = "torch.gradient"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.dtype == _dtype.bool_:  # (its differences are subtractions, which PyTorch refuses for bools)
        raise RuntimeError(f"{op}: subtraction of bool tensors is not supported; convert the input first")
    if not isinstance(edge_order, int) or isinstance(edge_order, bool):
        raise TypeError(f"{op}: edge_order must be an int, got {type(edge_order).__name__}")
    dims = _dims(input, dim)
    steps = _steps(spacing, len(dims), dim is None, input.ndim)
    if edge_order not in (1, 2):
        raise RuntimeError(f"{op} only supports edge_order=1 and edge_order=2, got {edge_order}")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(f"{op} expected each dimension size to be at least edge_order+1, got size "
                               f"{input.shape[d]} on dim {d} with edge_order={edge_order}")
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor) and h.shape[0] != input.shape[d]:
            raise RuntimeError(f"{op}: the coordinates of dim {d} hold {h.shape[0]} values for its {input.shape[d]} "
                               "samples")
    f = _to_float(input)
    return tuple(_along(f, d, h, edge_order) if isinstance(h, Tensor) else _along_uniform(f, d, h, edge_order)
                 for d, h in zip(dims, steps))


def _along_uniform(f: Tensor, d: int, h: float, edge_order: int) -> Tensor:
    n = f.shape[d]
    s = lambda start, length=1: narrow(f, d, start, length)  # noqa: E731
    inner = (s(2, n - 2) - s(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first, last = (s(1) - s(0)) / h, (s(n - 1) - s(n - 2)) / h
    else:
        first = (-1.5 * s(0) + 2 * s(1) - 0.5 * s(2)) / h
        last = (0.5 * s(n - 3) - 2 * s(n - 2) + 1.5 * s(n - 1)) / h
    return cat([first, inner, last], d)


def _along(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    n = f.shape[d]
    shape = [1] * f.ndim
    shape[d] = -1
    dx = (x[1:] - x[:-1]).reshape(shape)  # dx_i = x_{i+1} - x_i, placed along dim d
    s = lambda start, length=1: narrow(f, d, start, length)  # noqa: E731
    t = lambda start, length=1: narrow(dx, d, start, length)  # noqa: E731
    hl, hr = t(0, n - 2), t(1, n - 2)
    inner = (-hr / (hl * (hl + hr)) * s(0, n - 2) + (hr - hl) / (hl * hr) * s(1, n - 2)
             + hl / (hr * (hl + hr)) * s(2, n - 2))
    if edge_order == 1:
        first, last = (s(1) - s(0)) / t(0), (s(n - 1) - s(n - 2)) / t(n - 2)
    else:
        a, b = t(0), t(1)
        first = (-(2 * a + b) / (a * (a + b)) * s(0) + (a + b) / (a * b) * s(1) - a / (b * (a + b)) * s(2))
        a, b = t(n - 3), t(n - 2)
        last = (b / (a * (a + b)) * s(n - 3) - (a + b) / (a * b) * s(n - 2) + (2 * b + a) / (b * (a + b)) * s(n - 1))
    return cat([first, inner, last], d)


# ---- arguments -------------------------------------------------------------------------------------------

def _dims(input: Tensor, dim: Any) -> list[int]:
    if dim is None:
        return list(range(input.ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = [_wrap_dim(d, input.ndim, "torch.gradient") for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"torch.gradient: dim {dims} appears multiple times in the list of dims")
    return wrapped


def _steps(spacing: Any, count: int, all_dims: bool, ndim: int) -> list[Any]:
    """One step per dim: a float (uniform samples) or a 1-d tensor of coordinates."""
    if spacing is None:
        return [1.0] * count
    if isinstance(spacing, Tensor):
        raise TypeError("torch.gradient: spacing must be a number, a sequence of numbers or a sequence of 1-d "
                        "tensors, got a Tensor (wrap it in a list: spacing=[t])")
    if isinstance(spacing, Number) and not isinstance(spacing, bool):
        return [float(spacing)] * count  # type: ignore[arg-type]
    steps = list(spacing)
    if len(steps) != count:
        given = f"'self.dim() = {ndim}', since dim argument was not given" if all_dims else f"len(dim) = {count}"
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                           f"equal to {given}, but got a list of length {len(steps)}")
    out: list[Tensor | float] = []
    for h in steps:
        if isinstance(h, Tensor):
            if h.ndim != 1:
                raise RuntimeError(f"torch.gradient expected each tensor of spacing to be 1-d, got shape "
                                   f"{tuple(h.shape)}")
            out.append(h if _dtype.kind(h._array.dtype) == "f" else _to_float(h))
        else:
            out.append(float(h))
    return out
