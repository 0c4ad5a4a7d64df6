"""`Distribution`: the base class every distribution derives from (PyTorch's `torch.distributions.Distribution`).

A distribution has a `batch_shape` (independent distributions side by side, one per parameter
entry) and an `event_shape` (the shape of one draw: () for Normal, (k,) for OneHotCategorical).
`sample(sample_shape)` has shape `sample_shape + batch_shape + event_shape`, `log_prob(value)` one
entry per event: `value`'s shape without the event dims.

Validation: with `validate_args` on (the default, as in PyTorch; `set_default_validate_args(False)`
turns it off for every new distribution), construction checks each parameter against
`arg_constraints` and `log_prob` checks its value against `support`, raising ValueError.
"""
from __future__ import annotations

import warnings
from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .utils import as_size, lazy_property

__all__ = ["Distribution"]


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Whether distributions made from now on check their arguments (True by default)."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args expects True or False, got {value!r}")
        Distribution._validate_args = bool(value)

    def __init__(self, batch_shape: Any = Size(), event_shape: Any = Size(), validate_args: bool | None = None) -> None:
        self._batch_shape = as_size(batch_shape)
        self._event_shape = as_size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{type(self)} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.")
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # the parameter not given (probs when logits were): derived from the checked one
            value = getattr(self, param)
            if not constraint.check(value).all():
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                    f"distribution {self!r} to satisfy the constraint {constraint!r}, "
                    f"but found invalid values:\n{value}")

    # ---- shapes ------------------------------------------------------------------------------
    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = Size()) -> Size:
        return Size(tuple(as_size(sample_shape)) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> Distribution:
        """The same distribution with its batch dims broadcast to `batch_shape` (parameters expanded, not copied)."""
        batch_shape = as_size(batch_shape)
        new = _instance if _instance is not None else type(self).__new__(type(self))
        for name, value in self.__dict__.items():
            if isinstance(value, Tensor) and value.ndim >= len(self._batch_shape) and name not in ("_batch_shape",):
                trailing = tuple(value.shape[len(self._batch_shape):])
                value = value.expand(tuple(batch_shape) + trailing)
            new.__dict__.setdefault(name, value)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    # ---- what subclasses define ----------------------------------------------------------------
    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        raise NotImplementedError

    @property
    def support(self) -> Any:
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """A draw of shape `sample_shape + batch_shape + event_shape`, from minitensor's global generator
        (repeatable under `minitensor.manual_seed`; not PyTorch's random stream), without gradient."""
        with minitensor.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """A reparameterised draw: a differentiable function of the parameters and of parameter-free noise."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    # ---- validation ------------------------------------------------------------------------------
    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.ndim - len(self._event_shape)
        if tuple(value.shape[event_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {value.shape} vs "
                             f"{self._event_shape}.")
        actual, expected = tuple(value.shape), tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {Size(actual)} vs "
                                 f"{Size(expected)}.")
        support = self.support
        if not support.check(value).all():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def __repr__(self) -> str:
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        shown = [f"{k}: {_short(self.__dict__[k])}" for k in names]
        return f"{type(self).__name__}({', '.join(shown)})"


def _short(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.item() if value.numel() == 1 else value.shape
    return value
