"""Reverse-mode automatic differentiation: the graph, the backward pass, and checking it.

- `Function`: define an op by its forward and its backward (VJP).
- `backward`, `grad`: run the backward pass (into `.grad`, or returned).
- `no_grad`, `enable_grad`, `set_grad_enabled`: switch graph recording.
- `gradcheck`, `gradgradcheck`: compare with finite differences, naming the op that is wrong.
- `detect_anomaly`: stop at the first op that produces NaN/inf, naming your line of code.
"""
import contextlib

from .function import Function, registry
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .engine import backward, grad
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .explain import explain
from .. import _anomaly
from .._anomaly import AnomalyError


@contextlib.contextmanager
def detect_anomaly(check_nan=True):
    """Inside, the first NaN or inf made by an op's forward or backward raises `AnomalyError`.

    The error names the op and the line of your code that created it. It slows every op down
    (each output is scanned), so use it to hunt a NaN, not for training.
    """
    prev = _anomaly.enabled
    _anomaly.enabled = bool(check_nan)
    try:
        yield
    finally:
        _anomaly.enabled = prev


__all__ = [
    "Function", "registry", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "detect_anomaly", "AnomalyError",
]
