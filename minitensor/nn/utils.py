"""Gradient utilities: clipping by global norm."""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ..ops.shape import cat
from ..tensor import Tensor

# np.vdot's C function, without the Python dispatcher numpy puts in front of it (~1k of its ~6k
# instructions on a small gradient; clip_grad_norm_ calls it once per parameter)
_vdot = getattr(np.vdot, "_implementation", np.vdot)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale all gradients together so their joint norm is at most `max_norm`; return the norm before.

    The scale is max_norm / (total_norm + 1e-6), applied only when it is below 1 (as PyTorch).
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return Tensor._make(np.asarray(0.0, dtype=np.float32))
    norm_type = float(norm_type)
    if math.isinf(norm_type):
        total = max(float(np.abs(g._array).max()) for g in grads)
    elif norm_type == 2.0 and math.isfinite(total := math.sqrt(sum(float(_vdot(g._array, g._array)) for g in grads))):
        pass  # the usual case: one dot product per gradient, no temporaries (float32 sums may overflow: below)
    else:
        total = float(sum(float(np.sum(np.abs(g._array.astype(np.float64)) ** norm_type)) for g in grads)
                      ** (1.0 / norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is non-finite ({total})")
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1:
        for p in params:
            g = p.grad
            if g is None:
                continue
            if g.grad_fn is None and g._array.flags.writeable:  # scale in place: no copy of every gradient
                g._array *= g._array.dtype.type(coef)
                g._bump_version()
            else:
                _set_grad(p, g._array * np.asarray(coef, dtype=g.dtype))
    return Tensor._make(np.asarray(total, dtype=grads[0].dtype))


def _set_grad(p, values):
    """Write `values` into `p.grad` in place, or give `p` a new `.grad` when the old one belongs to a
    graph (made with create_graph=True) or is a read-only view: neither may be written into."""
    g = p.grad
    if g.grad_fn is None and g._array.flags.writeable:
        g._array[...] = values
        g._bump_version()
    else:
        p.grad = Tensor._make(values)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value] in place."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for p in params:
        if p.grad is not None:
            _set_grad(p, np.clip(p.grad._array, -clip_value, clip_value).astype(p.grad.dtype, copy=False))


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D `vec` into the parameters, in place (no graph)."""
    arr = vec._array if isinstance(vec, Tensor) else np.asarray(vec)
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if arr.ndim != 1 or arr.size != total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of {total} elements, got shape {arr.shape}")
    offset = 0
    for p in params:
        n = p.numel()
        p._array[...] = arr[offset:offset + n].reshape(p.shape)
        p._bump_version()
        offset += n
