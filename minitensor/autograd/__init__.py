"""Reverse-mode automatic differentiation: the graph, the backward pass, and checking it.

- `Function`: define an op by its forward and its backward (VJP).
- `backward`, `grad`: run the backward pass (into `.grad`, or returned).
- `no_grad`, `enable_grad`, `set_grad_enabled`: switch graph recording.
- `gradcheck`, `gradgradcheck`: compare with finite differences, naming the op that is wrong.
- `detect_anomaly`: stop at the first op that produces NaN/inf, naming your line of code.
- `functional`: Jacobians, Hessians, and their products with vectors (`jacobian`, `hessian`, `vjp`, `jvp` ...).
- `step`, `name_step`: name the steps of your math, for `explain` and the graph pictures.
- `Variable`: PyTorch's old wrapper, now a tensor: `Variable(t, requires_grad=True)`.
- `profiler`: time every op and every VJP (`profile`, `record_function`), as PyTorch's profiler tables them.
- `graph`: `Node`, the type of every `grad_fn`, and `increment_version`.
- `forward_ad`: dual tensors (`make_dual`, `unpack_dual`, `dual_level`), tangents by the double backward trick.
"""
import contextlib
from typing import Any, Iterator

from . import forward_ad, functional, grad_mode, graph, profiler  # noqa: F401  (torch.autograd.graph, .profiler ...)
from .anomaly import AnomalyError
from .api import backward, grad
from .custom import once_differentiable
from .explain import explain
from .function import Function
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .steps import name_step, step  # naming steps for explain() and the pictures (issue 32)
from .switches import NestedIOFunction, enforce_grad_layout_policy, set_detect_anomaly, set_multithreading_enabled
from .variable import Variable


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


# ---- issue 29: the remaining torch.autograd names (switches.py, variable.py) ----------------------------


def variable(*args: Any, **kwargs: Any) -> Any:
    """Removed in PyTorch long ago: raises, as `torch.autograd.variable(...)` does. (The module
    `minitensor.autograd.variable`, like PyTorch's, holds `Variable`.)"""
    raise RuntimeError("minitensor.autograd.variable(...) is deprecated, use minitensor.tensor(...) instead")


variable.Variable = Variable  # type: ignore[attr-defined]  # (the function shadows the module, as in PyTorch)


__all__ = [
    "Function", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "inference_mode", "gradcheck", "gradgradcheck", "GradcheckError", "detect_anomaly",
    "AnomalyError",
    "explain", "functional", "Variable", "once_differentiable",
    "set_detect_anomaly", "set_multithreading_enabled", "enforce_grad_layout_policy", "NestedIOFunction", "variable",
    "step", "name_step",  # not in PyTorch: names for explain() and the pictures
]
