"""torch.autograd's remaining switches and legacy names (issue 29): `set_detect_anomaly`,
`set_multithreading_enabled`, `enforce_grad_layout_policy`, and the legacy `NestedIOFunction`.

Each switch is PyTorch's kind: it takes effect when it is *called* (so `set_detect_anomaly(True)` on its
own line turns anomaly mode on), and used as `with ...:` it puts the previous setting back at the end.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

from . import grad_mode
from .function import Function

_F = TypeVar("_F", bound=Callable[..., Any])


class _Switch:
    """Set on construction, restored by `__exit__`; as a decorator, the setting holds during each call."""

    def _get(self) -> Any:
        raise NotImplementedError

    def _set(self, value: Any) -> None:
        raise NotImplementedError

    def __init__(self, value: Any) -> None:
        self.prev = self._get()
        self.mode = value
        self._set(value)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        self._set(self.prev)

    def clone(self) -> Any:
        """A new switch with the same setting (PyTorch's `clone`)."""
        return self.__class__(self.mode)

    def __call__(self, fn: _F) -> _F:
        self._set(self.prev)  # (as a decorator it is not a statement: only the calls get the setting)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]


class set_detect_anomaly(_Switch):
    """Anomaly detection (see `detect_anomaly`) on or off: `set_detect_anomaly(True)` as a statement, or
    `with set_detect_anomaly(False):` for a block. `check_nan` is accepted as PyTorch's; minitensor's anomaly
    mode always checks for NaN and inf (it has one flag for both)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        super().__init__(bool(mode))

    def _get(self) -> bool:
        return bool(grad_mode.modes.anomaly_enabled)

    def _set(self, value: Any) -> None:
        grad_mode.modes.anomaly_enabled = bool(value)

    def clone(self) -> set_detect_anomaly:
        return set_detect_anomaly(self.mode, self.check_nan)


_multithreading = {"enabled": True}
_grad_layout = {"enforced": True}


class set_multithreading_enabled(_Switch):
    """PyTorch runs the backward of accelerator tensors on per-device threads; minitensor's backward always
    runs on the calling thread, so this flag is recorded (and restored) and changes nothing."""

    def __init__(self, mode: bool) -> None:
        super().__init__(bool(mode))

    def _get(self) -> bool:
        return _multithreading["enabled"]

    def _set(self, value: Any) -> None:
        _multithreading["enabled"] = bool(value)


class enforce_grad_layout_policy(_Switch):
    """PyTorch's switch for making an accumulated `.grad` take its parameter's strides. minitensor's gradients
    are always fresh arrays of the parameter's shape, so there is no layout to enforce: the flag is recorded
    (and restored) and changes nothing."""

    def __init__(self, enable: bool = True) -> None:
        super().__init__(bool(enable))

    def _get(self) -> bool:
        return _grad_layout["enforced"]

    def _set(self, value: Any) -> None:
        _grad_layout["enforced"] = bool(value)


class NestedIOFunction(Function):
    """PyTorch's legacy Function with instance methods `forward_extended` / `backward_extended` over nested
    inputs. It is kept as a name only: instantiating it warns (as PyTorch's does), and using it raises. Write
    a `Function` subclass with static `forward(ctx, ...)` and `backward(ctx, g)` instead.

    VJP: none (a legacy name only: its forward and backward raise, as PyTorch's `*_extended` do)"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # (PyTorch's takes and ignores any)
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself. Instantiating an autograd function will raise "
                      "an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any) -> Any:
        raise RuntimeError("NestedIOFunction is PyTorch's legacy autograd function and minitensor does not run it: "
                           "define a Function subclass with static forward(ctx, ...) and backward(ctx, g), and call "
                           "its .apply(...)")

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        raise NotImplementedError("NestedIOFunction.forward_extended is not implemented (legacy API)")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError("NestedIOFunction.backward_extended is not implemented (legacy API)")

    def forward_extended(self, *input: Any) -> None:
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> None:
        raise NotImplementedError
