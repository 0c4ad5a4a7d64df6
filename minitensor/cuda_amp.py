"""`torch.cuda.amp` (the runner maps it here): the deprecated CUDA spellings of `torch.amp`'s autocast and
loss scaler, as a PyTorch build without CUDA has them.

There is no GPU, so, as in such a build, each warns that it is deprecated (PyTorch's FutureWarning) and,
when enabled, that CUDA is not available, and then does nothing: `autocast()` changes no dtype and
`GradScaler()` is disabled (`scale(loss)` is `loss`, `step(opt)` is `opt.step()`). Tutorials write
`torch.cuda.amp.autocast(enabled=use_amp)`; with use_amp False only the deprecation is said.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

from . import _dtype
from ._namespace import GradScaler as _GradScaler
from ._runtime import autocast as _autocast

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`torch.cuda.amp.{old}` is deprecated. Please use `torch.amp.{new}` instead.", FutureWarning,
                  stacklevel=3)


class autocast(_autocast):
    """`torch.amp.autocast('cuda', ...)` under its old name: disabled here, as without CUDA."""

    def __init__(self, enabled: bool = True, dtype: Any = _dtype.float16, cache_enabled: bool = True) -> None:
        _deprecated("autocast(args...)", "autocast('cuda', args...)")
        if enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=False, cache_enabled=cache_enabled)
        self.device = "cuda"


class GradScaler(_GradScaler):
    """`torch.amp.GradScaler('cuda', ...)` under its old name: disabled here, as without CUDA."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _deprecated("GradScaler(args...)", "GradScaler('cuda', args...)")
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=False)


def custom_fwd(fwd: Callable[..., Any] | None = None, *, cast_inputs: Any = None) -> Any:
    """Decorator for a custom Function's forward under autocast: autocast never runs here, so `fwd` as it is."""
    _deprecated("custom_fwd(args...)", "custom_fwd(args..., device_type='cuda')")
    if fwd is None:
        return _plain_decorator
    return fwd


def custom_bwd(bwd: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for a custom Function's backward under autocast: `bwd` as it is (autocast never runs here)."""
    _deprecated("custom_bwd(args...)", "custom_bwd(args..., device_type='cuda')")
    return bwd


def _plain_decorator(fwd: Callable[..., Any]) -> Callable[..., Any]:
    return fwd


def amp_definitely_not_available() -> bool:
    """True: there is no CUDA (nor torch_xla) here."""
    return True
