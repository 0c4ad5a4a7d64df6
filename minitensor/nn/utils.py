"""Gradient utilities: clipping by global norm."""
import math

import numpy as np

from ..tensor import Tensor


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients together so their joint norm is at most `max_norm`; return the norm before.

    The scale is max_norm / (total_norm + 1e-6), applied only when it is below 1 (as PyTorch).
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return Tensor._make(np.asarray(0.0, dtype=np.float32))
    norm_type = float(norm_type)
    if math.isinf(norm_type):
        total = max(float(np.abs(g.data).max()) for g in grads)
    else:
        total = float(sum(float(np.sum(np.abs(g.data.astype(np.float64)) ** norm_type)) for g in grads) ** (1.0 / norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is non-finite ({total})")
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.data *= np.asarray(coef, dtype=g.dtype)
            g._version += 1
    return Tensor._make(np.asarray(total, dtype=grads[0].dtype))


def clip_grad_value_(parameters, clip_value, foreach=None):
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for p in params:
        if p.grad is not None:
            np.clip(p.grad.data, -clip_value, clip_value, out=p.grad.data)


def parameters_to_vector(parameters):
    from ..ops.shape import cat

    return cat([p.reshape(-1) for p in parameters])
