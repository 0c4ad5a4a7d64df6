r"""`torch.signal.windows`: window functions of M points, scipy.signal.windows' conventions.

Each window w[n], n = 0..M-1, is the formula below on N points: N = M for `sym=True` (a symmetric window,
for filter design) and N = M + 1 for `sym=False` (a periodic window, for spectral analysis: the symmetric one
of M + 1 points without its last). M = 0 gives an empty tensor, M = 1 the single value 1 (but see exponential).

    general_cosine(a)   sum_i (-1)^i a_i cos(2 pi i n / (N - 1))
    general_hamming     general_cosine with a = (alpha, 1 - alpha)
    hann, hamming       general_hamming with alpha = 0.5, 0.54
    blackman, nuttall   general_cosine with a = (0.42, 0.5, 0.08), (0.3635819, 0.4891775, 0.1365995, 0.0106411)
    bartlett            1 - |2 n / (N - 1) - 1|
    cosine              sin(pi (n + 1/2) / N)
    gaussian            exp(-(n - (N - 1)/2)^2 / (2 std^2))
    exponential         exp(-|n - center| / tau),   center = (N - 1)/2 unless given (periodic windows only)
    kaiser              I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)

Values are computed in float64 and rounded once to `dtype` (float32 or float64; the default dtype when
None), through the same code as the older `torch.hann_window` & co (`minitensor.factories`), which give the
same windows with `periodic = not sym`. Arguments after M are keyword-only, as in PyTorch.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import _dtype
from .._layout import strided
from ..factories import (
    _finish,
    _window,
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
)
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]

_NUTTALL = (0.3635819, 0.4891775, 0.1365995, 0.0106411)


def _checked_dtype(name: str, M: int, dtype: DTypeLike | None, layout: Any) -> Any:
    """The window's dtype, after PyTorch's common checks (in its order, with its ValueErrors)."""
    d = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if d not in (np.float32, np.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {_dtype.public(d)}")
    return d


def _from_formula(name: str, M: int, sym: bool, d: Any, device: DeviceLike | None, requires_grad: bool,
                  values: Any) -> Tensor:
    return _window(name, M, not sym, d, device, requires_grad, values)


def general_cosine(M: int, *, a: Iterable[float], sym: bool = True, dtype: DTypeLike | None = None,
                   layout: Any = strided, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = sum_i (-1)^i a_i cos(2 pi i n / (N - 1)): a sum of cosines with the coefficients `a`."""
    d = _checked_dtype("general_cosine", M, dtype, layout)
    if M > 1:  # (PyTorch looks at the coefficients only when they are used)
        if not isinstance(a, Iterable):
            raise TypeError("Coefficients must be a list/tuple")
        if not a:
            raise ValueError("Coefficients cannot be empty")
    coefficients = [(-1) ** i * float(c) for i, c in enumerate(a)] if M > 1 else []

    def values(n: np.ndarray, N: int) -> np.ndarray:
        phase = 2 * np.pi * n / (N - 1)
        return sum(c * np.cos(i * phase) for i, c in enumerate(coefficients))

    return _from_formula("general_cosine", M, sym, d, device, requires_grad, values)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: DTypeLike | None = None,
                    layout: Any = strided, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = alpha - (1 - alpha) cos(2 pi n / (N - 1))."""
    d = _checked_dtype("general_cosine", M, dtype, layout)  # (PyTorch reports it as general_cosine's)
    return hamming_window(M, not sym, alpha, 1.0 - alpha, dtype=d, device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: DTypeLike | None = None, layout: Any = strided,
            device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = 0.54 - 0.46 cos(2 pi n / (N - 1))."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: DTypeLike | None = None, layout: Any = strided,
         device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = 0.5 - 0.5 cos(2 pi n / (N - 1))."""
    d = _checked_dtype("general_cosine", M, dtype, layout)
    return hann_window(M, not sym, dtype=d, device=device, requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: DTypeLike | None = None, layout: Any = strided,
             device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    d = _checked_dtype("blackman", M, dtype, layout)
    return blackman_window(M, not sym, dtype=d, device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: DTypeLike | None = None, layout: Any = strided,
            device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """general_cosine with a = (0.3635819, 0.4891775, 0.1365995, 0.0106411) (Nuttall's minimum 4-term window)."""
    return general_cosine(M, a=_NUTTALL, sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: DTypeLike | None = None, layout: Any = strided,
             device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = 1 - |2 n / (N - 1) - 1| (a triangle, zero at both ends when symmetric)."""
    d = _checked_dtype("bartlett", M, dtype, layout)
    return bartlett_window(M, not sym, dtype=d, device=device, requires_grad=requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: DTypeLike | None = None, layout: Any = strided,
           device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta), I0 the modified Bessel function of order 0."""
    d = _checked_dtype("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return kaiser_window(M, not sym, beta, dtype=d, device=device, requires_grad=requires_grad)


def cosine(M: int, *, sym: bool = True, dtype: DTypeLike | None = None, layout: Any = strided,
           device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = sin(pi (n + 1/2) / N) (the sine window)."""
    d = _checked_dtype("cosine", M, dtype, layout)
    return _from_formula("cosine", M, sym, d, device, requires_grad, lambda n, N: np.sin(np.pi * (n + 0.5) / N))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: DTypeLike | None = None, layout: Any = strided,
             device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """w[n] = exp(-(n - (N - 1)/2)^2 / (2 std^2))."""
    d = _checked_dtype("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _from_formula("gaussian", M, sym, d, device, requires_grad,
                         lambda n, N: np.exp(-((n - (N - 1) / 2) ** 2) / (2.0 * std * std)))


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype: DTypeLike | None = None, layout: Any = strided, device: DeviceLike | None = None,
                requires_grad: bool = False) -> Tensor:
    """w[n] = exp(-|n - center| / tau); center defaults to the window's middle, (N - 1)/2, and may be given
    for a periodic window only (sym=False). With a center, w[n] is the formula at n = 0..M-1, even for M = 1."""
    d = _checked_dtype("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if center is None:
        return _from_formula("exponential", M, sym, d, device, requires_grad,
                             lambda n, N: np.exp(-np.abs(n - (N - 1) / 2) / tau))
    w = np.exp(-np.abs(np.arange(M, dtype=np.float64) - float(center)) / tau)
    return _finish(w.astype(d), requires_grad, device, "exponential")
