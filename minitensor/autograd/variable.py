"""`minitensor.autograd.variable`: PyTorch's module of the deprecated `Variable` (now a plain tensor)."""
from __future__ import annotations

import warnings
from typing import Any

from ..tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated, as in PyTorch: tensors do what Variables did. `Variable(t, requires_grad=False)` returns a
    new leaf sharing t's memory and version counter (`t.detach()`) with `requires_grad` set; every tensor is
    an instance of `Variable`. (`volatile` is ignored, with a warning; use `no_grad()`.)"""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with minitensor.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            return Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
