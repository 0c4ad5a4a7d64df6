"""Lazy modules (PyTorch's torch.nn.modules.lazy): parameters whose shape waits for the first input.

An `UninitializedParameter` holds no values yet; a module built with `LazyModuleMixin` infers the
missing sizes from its first input (`initialize_parameters`), `materialize`s its parameters, runs
`reset_parameters`, then becomes its ordinary class (`cls_to_become`, e.g. LazyConv2d -> Conv2d).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import as_dtype, get_default_dtype
from ..tensor import Tensor
from .parameter import Parameter


def _dtype_or_default(dtype):
    return as_dtype(dtype) if dtype is not None else get_default_dtype()


def _no_shape():
    raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. Call `forward` to "
                       "initialize the parameters before accessing their attributes.")


class UninitializedParameter(Parameter):
    """A Parameter without values: `materialize(shape)` gives it an (uninitialised) array of that shape
    and turns it into a plain Parameter."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(np.empty((0,), dtype=_dtype_or_default(dtype)), requires_grad)

    @property
    def shape(self) -> Any:
        _no_shape()

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        dt = as_dtype(dtype) if dtype is not None else self._array.dtype
        self._array = np.empty(tuple(shape), dtype=dt)
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


class UninitializedBuffer(Tensor):
    """A buffer without values, materialized like UninitializedParameter (it becomes a plain Tensor)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        super().__init__(np.empty((0,), dtype=_dtype_or_default(dtype)))
        if requires_grad:
            self.requires_grad_(True)

    @property
    def shape(self) -> Any:
        _no_shape()

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        dt = as_dtype(dtype) if dtype is not None else self._array.dtype
        self._array = np.empty(tuple(shape), dtype=dt)
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"


def is_lazy(t: Any) -> bool:
    return isinstance(t, (UninitializedParameter, UninitializedBuffer))


def _infer_parameters(module, args):
    """The forward pre-hook: size the parameters from the first input, then drop the hook and become
    the ordinary class."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Put first among a Module's bases; the class defines `initialize_parameters(*inputs)`."""

    cls_to_become: type[Any] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)  # type: ignore[attr-defined]

    def has_uninitialized_params(self) -> bool:
        stores = list(self._parameters.values()) + list(self._buffers.values())  # type: ignore[attr-defined]
        return any(is_lazy(t) for t in stores)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")
