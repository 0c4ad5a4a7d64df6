"""PyTorch's choice of kernel for `scaled_dot_product_attention` (`torch.nn.attention`), in a library with one.

PyTorch has several kernels for attention (math, flash, memory-efficient, cuDNN) and flags saying which
it may use; on the CPU it runs the math kernel or a flash one. minitensor has one path, the composed
math of `nn.attention.attend`, whatever the flags say. The flags are kept as PyTorch keeps them, so that
a tutorial's `with sdpa_kernel(SDPBackend.FLASH_ATTENTION):` runs (on that one path), the
`torch.backends.cuda.*_sdp_enabled()` queries answer as PyTorch's do, and a call allowing only kernels
PyTorch's CPU build lacks (memory-efficient, cuDNN) fails with PyTorch's error.
"""
from __future__ import annotations

import contextlib
import enum
from typing import Any, Iterator


class SDPBackend(enum.Enum):
    """The attention kernels PyTorch can choose from (its enum's names and values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


WARN_FOR_UNFUSED_KERNELS = False  # (PyTorch's switch for a warning about CUDA kernels; nothing here reads it)

# which kernels may run: all of them until a user says otherwise, as PyTorch starts
_enabled: dict[SDPBackend, bool] = {backend: True for backend in SDPBackend if backend is not SDPBackend.ERROR}


def is_enabled(backend: SDPBackend) -> bool:
    return _enabled[backend]


def set_enabled(backend: SDPBackend, enabled: bool) -> None:
    _enabled[backend] = bool(enabled)


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend, set_priority: bool = False) -> Iterator[dict[str, Any]]:
    """Inside: only `backends` may run scaled_dot_product_attention; on exit the flags are as before.
    (`set_priority`, PyTorch's order of preference among them, changes nothing: there is one path.)"""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    chosen = [backends] if isinstance(backends, SDPBackend) else backends
    previous = dict(_enabled)
    for backend in _enabled:
        _enabled[backend] = backend in chosen
    try:
        yield {}
    finally:
        _enabled.update(previous)


def check_a_kernel_may_run() -> None:
    """PyTorch's CPU build computes attention with its math or its flash kernel: with both switched off,
    its error."""
    if not (_enabled[SDPBackend.MATH] or _enabled[SDPBackend.FLASH_ATTENTION]):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
