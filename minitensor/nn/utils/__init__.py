"""`minitensor.nn.utils`: gradient clipping, parameters as one vector, weight and spectral
normalisation, conv/linear + batch-norm fusion; `rnn` holds the packed-sequence tools."""
from __future__ import annotations

import math
import warnings
from typing import Iterable

import numpy as np

from ...ops.shape import cat
from ...tensor import Tensor

# np.vdot's C function, without the Python dispatcher numpy puts in front of it (~1k of its ~6k
# instructions on a small gradient; clip_grad_norm_ calls it once per parameter)
_vdot = getattr(np.vdot, "_implementation", np.vdot)


def _vector_norm(a: np.ndarray, p: float) -> float:
    """||a||_p of the flattened array, with PyTorch's vector_norm rules: p = inf the largest |a_i|, -inf
    the smallest, 0 the number of nonzero entries (a NaN counts: it is not zero), otherwise
    (sum |a_i|^p)^(1/p) in float64 (a float32 sum of squares overflows early). A NaN anywhere gives NaN."""
    if a.size == 0:
        return 0.0 if p >= 0 else math.inf
    if p == math.inf:
        return float(np.max(np.abs(a)))
    if p == -math.inf:
        return float(np.min(np.abs(a)))
    if p == 0:
        return float(np.count_nonzero(a))
    with np.errstate(divide="ignore", over="ignore"):  # |0|^p for p < 0 is inf, whose 1/p-th power is 0
        return float(np.sum(np.abs(a.astype(np.float64)) ** p) ** (1.0 / p))


def get_total_norm(tensors: Tensor | Iterable[Tensor | None], norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The norm of the per-tensor norms: ||(||t_1||_p, ..., ||t_n||_p)||_p (PyTorch's rule).

    For p = 2 and any p > 0 that is the p-norm of all elements together; for p = inf the largest |t|,
    for p = -inf the smallest of the per-tensor minima of |t|, and for p = 0 it counts the tensors that
    hold a nonzero (the 0-"norm" of the per-tensor nonzero counts). A NaN in any tensor makes it NaN.
    """
    present = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    if not present:
        return Tensor._make(np.asarray(0.0, dtype=np.float32))
    arrays = [t._array for t in present]
    norm_type = float(norm_type)
    dtype = np.result_type(*[a.dtype for a in arrays])
    if norm_type == 2.0 and math.isfinite(total := math.sqrt(sum([float(_vdot(a, a)) for a in arrays]))):
        pass  # the usual case: one dot product per tensor, no temporaries (float32 sums may overflow: below)
    else:
        norms = np.array([_vector_norm(a, norm_type) for a in arrays])
        total = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is non-finite "
                           f"({total}), so it cannot be clipped; pass error_if_nonfinite=False to scale the "
                           "gradients by it anyway")
    return Tensor._make(np.asarray(total, dtype=dtype))


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor | float,
                          foreach: bool | None = None) -> None:
    """Scale every gradient by min(1, max_norm / (total_norm + 1e-6)), in place (PyTorch's coefficient).

    A NaN total norm gives a NaN coefficient, which scales every gradient to NaN, as in PyTorch.
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    total = float(total_norm._array if isinstance(total_norm, Tensor) else total_norm)
    coef = float(max_norm) / (total + 1e-6)
    if coef >= 1:  # multiplying by 1 changes nothing
        return
    for p in params:
        g = p.grad
        if g is None:
            continue
        if g.grad_fn is None and g._array.flags.writeable:  # scale in place: no copy of every gradient
            g._array *= g._array.dtype.type(coef)
            g._bump_version()
        else:
            _set_grad(p, g._array * np.asarray(coef, dtype=g.dtype))


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale all gradients together so their joint norm is at most `max_norm`; return the norm before.

    get_total_norm of the gradients, then clip_grads_with_norm_: the scale is max_norm / (total_norm + 1e-6),
    applied only when it is below 1 (as PyTorch).
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    total = get_total_norm([p.grad for p in params], norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated name of clip_grad_norm_ (warns with a FutureWarning, as PyTorch)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


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


# ---- h-nnrest: the reparametrisations, batch-norm fusion, and the packed sequences of `rnn` ----------------------
from . import rnn  # noqa: E402, F401
from ._reparam import (  # noqa: E402, F401
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
    remove_spectral_norm,
    remove_weight_norm,
    skip_init,
    spectral_norm,
    weight_norm,
)

# ---- h-prune: torch.nn.utils.prune (minitensor/nn/utils/prune.py) ---------------------------------------------
# isort: split
from . import prune  # noqa: E402, F401

# ---- h-fusion: torch.nn.utils.fusion and .stateless, as submodules PyTorch's nn.utils imports -----------------
# isort: split
from . import stateless  # noqa: E402, F401
from .fusion import (  # noqa: E402, F401
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
