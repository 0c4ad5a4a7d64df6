"""`biject_to(constraint)` and `transform_to(constraint)`: a transform from unconstrained reals onto a
constraint's set (PyTorch's `torch.distributions.constraint_registry`).

Optimising a constrained parameter (a positive scale, a simplex of probabilities) is done on an
unconstrained one `u`, the parameter being `transform_to(constraint)(u)`:

    u = minitensor.zeros(3, requires_grad=True)
    probs = transform_to(constraints.simplex)(u)   # always on the simplex, whatever u becomes

`biject_to` gives bijections (so densities can be carried across with log |det J|); `transform_to`
only needs onto maps and may pick cheaper ones (softmax for the simplex, not stick breaking).
`register(constraint, factory)` adds a rule for a constraint object or class.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

from . import constraints, transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint class -> a factory making the transform for one instance of it."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable[[Any], T.Transform]] = {}
        super().__init__()

    def register(self, constraint: Any, factory: Callable[[Any], T.Transform] | None = None) -> Any:
        if factory is None:  # used as a decorator
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: Any) -> T.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint):
    return T.identity_transform


def _independent_bijection(constraint):
    base = biject_to(constraint.base_constraint)
    return T.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


def _independent_transform(constraint):
    base = transform_to(constraint.base_constraint)
    return T.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


def _greater_than(constraint):
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint):
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    lower_is_0 = isinstance(constraint.lower_bound, (int, float)) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, (int, float)) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return T.SigmoidTransform()
    loc, scale = constraint.lower_bound, constraint.upper_bound - constraint.lower_bound
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(loc, scale)])


def _cat(constraint, registry):
    return T.CatTransform([registry(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


def _stack(constraint, registry):
    return T.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)


for registry in (biject_to, transform_to):
    registry.register(constraints._Real, _real)
    registry.register(constraints._LessThan, _less_than)
    registry.register(constraints._Interval, _interval)
    registry.register(constraints._HalfOpenInterval, _interval)
    registry.register(constraints._CorrCholesky, lambda c: T.CorrCholeskyTransform())
    registry.register(constraints._Cat, partial(_cat, registry=registry))
    registry.register(constraints._Stack, partial(_stack, registry=registry))
    # positive and nonnegative (lower bound 0) are exp itself, other lower bounds exp then a shift
    registry.register(constraints._GreaterThan, lambda c: T.ExpTransform() if _is_zero(c.lower_bound)
                      else _greater_than(c))
    registry.register(constraints._GreaterThanEq, lambda c: T.ExpTransform() if _is_zero(c.lower_bound)
                      else _greater_than(c))

biject_to.register(constraints._Independent, _independent_bijection)
transform_to.register(constraints._Independent, _independent_transform)
biject_to.register(constraints._Simplex, lambda c: T.StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: T.SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda c: T.LowerCholeskyTransform())
transform_to.register(constraints._PositiveDefinite, lambda c: T.PositiveDefiniteTransform())
transform_to.register(constraints._PositiveSemidefinite, lambda c: T.PositiveDefiniteTransform())


def _is_zero(bound: Any) -> bool:
    return isinstance(bound, (int, float)) and bound == 0
