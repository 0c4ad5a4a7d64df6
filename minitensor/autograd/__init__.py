"""Reverse-mode automatic differentiation: the graph, the backward pass, and checking it.

- `Function`: define an op by its forward and its backward (VJP).
- `backward`, `grad`: run the backward pass (into `.grad`, or returned).
- `no_grad`, `enable_grad`, `set_grad_enabled`: switch graph recording.
- `gradcheck`, `gradgradcheck`: compare with finite differences, naming the op that is wrong.
- `detect_anomaly`: stop at the first op that produces NaN/inf, naming your line of code.
"""
import contextlib
from typing import Iterator

from . import grad_mode
from .anomaly import AnomalyError
from .api import backward, grad
from .explain import explain
from .function import Function
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck


@contextlib.contextmanager
def detect_anomaly(check_nan: bool = True) -> Iterator[None]:
    """Inside, the first NaN or inf made by an op's forward or backward raises `AnomalyError`.

    The error names the op and the line of your code that created it. It slows every op down
    (each output is scanned), so use it to hunt a NaN, not for training.
    """
    prev = grad_mode.modes.anomaly_enabled
    grad_mode.modes.anomaly_enabled = bool(check_nan)  # for this thread, as grad mode
    try:
        yield
    finally:
        grad_mode.modes.anomaly_enabled = prev


__all__ = [
    "Function", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "inference_mode", "gradcheck", "gradgradcheck", "GradcheckError", "detect_anomaly",
    "AnomalyError",
    "explain",
]
