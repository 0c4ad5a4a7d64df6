"""Constraints: what values a parameter or a sample may take (PyTorch's `torch.distributions.constraints`).

A constraint's `check(value)` is a bool tensor, one entry per event (`event_dim` rightmost dims are
one event), True where the value is allowed. Distributions list theirs in `arg_constraints` (checked
on construction when validation is on) and `support` (checked by `log_prob`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import minitensor

from ..tensor import Tensor

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval", "is_dependent",
    "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer", "one_hot",
    "positive", "positive_definite", "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex",
    "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """Stands for a constraint that depends on other parameters (Uniform's low and high): not checked."""

    def __init__(self, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, *, is_discrete: bool = False, event_dim: int = 0) -> _Dependent:
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: object) -> bool:
    return isinstance(constraint, (_Dependent, dependent_property))


class dependent_property(property):
    """A property that is also a dependent constraint (a distribution's `support` that depends on its
    parameters); `@dependent_property(is_discrete=..., event_dim=...)` decorates as well as the bare form."""

    def __init__(self, fn: Any = None, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        super().__init__(fn)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return _is_integer(value) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return _is_integer(value) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only at NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Independent(Constraint):
    """`base` with `reinterpreted_batch_ndims` more rightmost dims taken as one event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).flatten(-2).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).flatten(-2).all(-1) & (_diagonal(value) > 0).all(-1)


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value):
        a = value.detach().numpy()
        symmetric = np.isclose(a, np.swapaxes(a, -1, -2), atol=1e-6).all((-2, -1))
        with np.errstate(invalid="ignore"):
            positive = np.linalg.eigvalsh(np.where(np.isfinite(a), a, 0)).min(-1) > 0  # eigvalsh reads one triangle
        return minitensor.tensor(symmetric & positive & np.isfinite(a).all((-2, -1)))


def _is_integer(value):
    return value.remainder(1) == 0


def _diagonal(value: Tensor) -> Tensor:
    n = value.shape[-1]
    return (value * minitensor.eye(n, dtype=value.dtype)).sum(-1)


dependent = _Dependent()
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = _Independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
independent = _Independent


# ---- the constraints the transforms and the later distributions need (issue 29) ----------------------

class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Multinomial(Constraint):
    """Nonnegative integer counts over the last dim that sum to at most `upper_bound`."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower-triangular, positive diagonal, unit-norm rows."""
    event_dim = 2

    def check(self, value):
        tol = float(np.finfo(value.detach().numpy().dtype).eps) * value.shape[-1] * 10
        unit_rows = ((value.square().sum(-1).sqrt() - 1).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return minitensor.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=minitensor.bool)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not bool(square.all()):
            return square
        return (value - value.transpose(-2, -1)).abs().le(1e-6).flatten(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        a = value.detach().numpy()
        return minitensor.tensor(np.linalg.eigvalsh(a).min(-1) >= 0)


class _Cat(Constraint):
    """Each of `cseq` on its slice of `dim` (slices of `lengths`, 1 each by default)."""

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat constraint: {len(self.cseq)} constraints but {len(self.lengths)} lengths")
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return minitensor.cat(checks, self.dim)


class _Stack(Constraint):
    """Each of `cseq` on its index of `dim`."""

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        parts = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return minitensor.stack([c.check(v) for c, v in zip(self.cseq, parts)], self.dim)


less_than = _LessThan
multinomial = _Multinomial
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
cat = _Cat
stack = _Stack
