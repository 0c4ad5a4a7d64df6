r"""The hook-based weight reparametrisations of `torch.nn.utils`: weight_norm and spectral_norm.

Each replaces a module's parameter `weight` by other parameters and recomputes `weight` from them in a
forward pre-hook, before every call, so the gradient reaches the new parameters through ordinary ops.

weight_norm (Salimans & Kingma, 2016):   weight = g * v / ||v||,  the norm taken over every dim but `dim`
    (parameters weight_g, the norms of the initial weight, and weight_v, the initial weight).
spectral_norm (Miyato et al., 2018):      weight = W / sigma(W),  sigma the largest singular value of W seen as
    a matrix (dim `dim` as rows), estimated by power iteration on two buffers u and v:
        v <- normalize(W^T u),  u <- normalize(W v)   (n_power_iterations times, in training only, without grad)
        sigma = u . (W v)      (differentiated through W, with u and v held fixed)
"""
from __future__ import annotations

import warnings
from typing import Any, TypeVar

import numpy as np

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..parameter import Parameter

_M = TypeVar("_M")


def _norm_except_dim(v: Tensor, dim: int | None) -> Tensor:
    """||v||_2 over every dim but `dim`, shaped to broadcast against v; over all of v when dim is None."""
    if dim is None:
        return (v * v).sum().sqrt()
    dims = [d for d in range(v.ndim) if d != dim]
    return (v * v).sum(dim=dims, keepdim=True).sqrt() if dims else (v * v).sqrt()


class _WeightNorm:
    def __init__(self, name: str, dim: int | None) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Any) -> Tensor:
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _hook_of(module, kind, name):
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return key, hook
    return None, None


def weight_norm(module: _M, name: str = "weight", dim: int | None = 0) -> _M:
    """Split `module.<name>` into a magnitude `<name>_g` and a direction `<name>_v` (weight = g v / ||v||),
    recomputed before every forward. dim=None takes one norm over the whole tensor. Deprecated in PyTorch
    (in favour of parametrizations.weight_norm), so it warns as PyTorch does."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    m: Any = module
    if _hook_of(m, _WeightNorm, name)[1] is not None:
        raise RuntimeError(f"weight_norm: cannot register two weight_norm hooks on the same parameter {name!r}")
    weight = m._parameters.get(name)
    if weight is None:
        raise AttributeError(f"weight_norm: {type(m).__name__} has no parameter {name!r}")
    if dim is not None and dim < 0:
        dim += weight.ndim
    fn = _WeightNorm(name, dim)
    with no_grad():
        g = _norm_except_dim(weight, dim)
    del m._parameters[name]
    m.register_parameter(name + "_g", Parameter(g._array.copy()))
    m.register_parameter(name + "_v", Parameter(weight._array))
    setattr(m, name, fn.compute_weight(m))
    m.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: _M, name: str = "weight") -> _M:
    """Undo weight_norm: `<name>` is a Parameter again, holding the current g v / ||v||."""
    m: Any = module
    key, fn = _hook_of(m, _WeightNorm, name)
    if fn is None:
        raise ValueError(f"weight_norm of '{name}' not found in {m}")
    with no_grad():
        weight = fn.compute_weight(m)
    del m._forward_pre_hooks[key]
    del m._parameters[name + "_g"], m._parameters[name + "_v"]
    m.__dict__.pop(name, None)
    m.register_parameter(name, Parameter(weight._array))
    return module


def weight_as_matrix(weight: Tensor, dim: int) -> Tensor:
    """W as the matrix spectral norm measures: dim `dim` (moved first) its rows, the other dims flattened."""
    if dim != 0:
        weight = weight.movedim(dim, 0)
    return weight.reshape(weight.shape[0], -1)


def _normalize(a: np.ndarray, eps: float) -> np.ndarray:
    return a / max(float(np.sqrt(np.dot(a, a))), eps)


class _SpectralNorm:
    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: expected n_power_iterations to be positive, got {n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def as_matrix(self, weight: Tensor) -> Tensor:
        return weight_as_matrix(weight, self.dim)

    def compute_weight(self, module: Any, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.as_matrix(weight)
        if do_power_iteration:  # the buffers are updated in place, outside the graph, as PyTorch's out= does
            w = mat._array
            for _ in range(self.n_power_iterations):
                v._array[...] = _normalize(w.T @ u._array, self.eps)
                u._array[...] = _normalize(w @ v._array, self.eps)
            u._bump_version()
            v._bump_version()
        u, v = Tensor._make(u._array.copy()), Tensor._make(v._array.copy())  # fixed: no gradient through them
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module: _M, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> _M:
    """Divide `module.<name>` by its spectral norm before every forward: the parameter becomes `<name>_orig`,
    with buffers `<name>_u` and `<name>_v` for the power iteration (one step per training forward).
    dim defaults to 0, or 1 for a ConvTranspose module (its output channels)."""
    m: Any = module
    if _hook_of(m, _SpectralNorm, name)[1] is not None:
        raise RuntimeError(f"spectral_norm: cannot register two spectral_norm hooks on the same parameter {name!r}")
    weight = m._parameters.get(name)
    if weight is None:
        raise AttributeError(f"spectral_norm: {type(m).__name__} has no parameter {name!r}")
    if dim is None:
        dim = 1 if type(m).__name__.startswith("ConvTranspose") else 0
    fn = _SpectralNorm(name, n_power_iterations, dim, eps)
    h, w = fn.as_matrix(weight).shape
    rng_draws = Tensor._make(np.empty(h + w, dtype=weight.dtype)).normal_()._array  # minitensor's generator
    u, v = _normalize(rng_draws[:h], eps), _normalize(rng_draws[h:], eps)
    del m._parameters[name]
    m.register_parameter(name + "_orig", weight)
    setattr(m, name, weight.detach())
    m.register_buffer(name + "_u", Tensor._make(u))
    m.register_buffer(name + "_v", Tensor._make(v))
    m.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: _M, name: str = "weight") -> _M:
    """Undo spectral_norm: `<name>` is a Parameter again, holding W / sigma with the current u and v."""
    m: Any = module
    key, fn = _hook_of(m, _SpectralNorm, name)
    if fn is None:
        raise ValueError(f"spectral_norm of '{name}' not found in {m}")
    with no_grad():
        weight = fn.compute_weight(m, do_power_iteration=False)
    del m._forward_pre_hooks[key]
    del m._parameters[name + "_orig"], m._buffers[name + "_u"], m._buffers[name + "_v"]
    m.__dict__.pop(name, None)
    m.register_parameter(name, Parameter(weight._array))
    return module


def skip_init(module_cls: Any, *args: Any, **kwargs: Any) -> Any:
    """`module_cls(*args, **kwargs)` whose parameters' values are unspecified (PyTorch builds it on the meta device
    and allocates uninitialised memory). minitensor has no meta device: the module's own initialisation runs, and
    its values are as good as any. Like PyTorch, it needs a module that accepts `device=`."""
    import inspect

    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("skip_init: module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)


def convert_conv2d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """Returns `module` unchanged: minitensor does not model memory formats (every array is C-contiguous),
    so there is no channels_last layout to convert to."""
    return module


def convert_conv3d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """Returns `module` unchanged: minitensor does not model memory formats (see the 2-D version)."""
    return module

