"""`Parameter`: a tensor that a Module registers as learnable when assigned as an attribute."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor, _to_array


class Parameter(Tensor):
    """A leaf tensor with `requires_grad=True` (by default) that `Module.parameters()` finds.

    `Parameter(t)` shares `t`'s memory, as in PyTorch, and is always a leaf, even when `t` was
    computed by ops: it starts a new graph.
    """

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            arr = np.zeros((0,), dtype=np.float32)
        elif isinstance(data, (Tensor, np.ndarray)):
            arr = data._array if isinstance(data, Tensor) else data
        else:
            arr = _to_array(data, None, "Parameter")  # lists of floats get the default dtype
        super().__init__(arr, dtype=arr.dtype)
        self._array = arr  # share memory instead of any copy Tensor() could make
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto: Any) -> tuple[Any, ...]:
        return (Parameter, (self._array, self.requires_grad))


class Buffer(Tensor):
    """A tensor that, assigned as a Module attribute, is registered as a buffer (persistent: in state_dict)."""

    __slots__ = ("persistent",)

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        arr = np.zeros((0,), dtype=np.float32) if data is None else (
            data._array if isinstance(data, Tensor) else np.asarray(data))
        super().__init__(arr, dtype=arr.dtype)
        self._array = arr  # shares the data's memory, as PyTorch's Buffer
        self.persistent = persistent
