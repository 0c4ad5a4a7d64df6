r"""Transforms: invertible maps y = t(x) between constrained spaces (PyTorch's `torch.distributions.transforms`).

A transform carries its `domain` and `codomain` constraints, whether it is `bijective`, its `sign`
(+1 increasing, -1 decreasing, for monotone maps of reals), its inverse `t.inv` (itself a transform:
`t.inv(t(x)) == x`), and `log_abs_det_jacobian(x, y)` = ln |det ∂y/∂x|, one value per event of the
domain (`domain.event_dim` rightmost dims are one event). TransformedDistribution uses them for the
change of variables  ln p_Y(y) = ln p_X(t⁻¹(y)) - ln |det ∂y/∂x|.

Every map is written with minitensor's ops, so gradients flow through `t(x)`, `t.inv(y)` and the
Jacobian term. With `cache_size=1` a transform remembers its last (x, y) pair, so `t.inv(t(x))`
returns the very x (useful where the inverse is inexact, as at sigmoid's saturated ends).

    transform                 y = t(x)                                ln |det J|
    ExpTransform              eˣ                                      x
    AffineTransform           loc + scale x                           ln |scale|
    PowerTransform            xᵖ  (x > 0)                             ln |p y / x|
    SigmoidTransform          σ(x)                                    -softplus(-x) - softplus(x)
    TanhTransform             tanh x                                  2 (ln 2 - x - softplus(-2x))
    SoftplusTransform         ln(1 + eˣ)                              -softplus(-x)
    AbsTransform              |x|                                     (not bijective)
    SoftmaxTransform          softmax(x)                              (not bijective)
    StickBreakingTransform    ℝⁿ → simplex of n + 1                   Σ (-x' + ln σ(x') + ln y_i)
    LowerCholeskyTransform    strict lower part + exp(diagonal)       (not defined)
    PositiveDefiniteTransform L Lᵀ with L the lower Cholesky map      (not defined)
    CorrCholeskyTransform     ℝ^(n(n-1)/2) → Cholesky factors of correlation matrices
"""
from __future__ import annotations

import math
import numbers
import operator
import weakref
from functools import reduce
from typing import Any, Iterator

import numpy as np

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .utils import broadcast_shape, clamp_probs, finfo, softplus, sum_rightmost

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
    "identity_transform",
]


class Transform:
    """The base class: subclasses define `_call` (forward), `_inverse` and `log_abs_det_jacobian`, and set
    `domain`, `codomain`, `bijective` (and `sign` for monotone maps of reals)."""
    bijective = False
    domain: Any = constraints.real
    codomain: Any = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y: tuple[Any, Any] = (None, None)
        self._inv: Any = None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform: `t.inv(t(x)) == x`; kept weakly so `t.inv.inv is t`."""
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self) -> int:
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """t⁻¹, sharing t's cache: its log |det J| at (y, x) is minus t's at (x, y)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform  # a strong reference: the inverse keeps its forward alive

    @property
    def inv(self) -> Transform:
        return self._inv

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self) -> int:
        return self._inv.sign

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self._inv.with_cache(cache_size).inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts[-1](... parts[1](parts[0](x))): log |det J| is the sum of the parts', each summed over the event
    dims it adds to the composite's event."""

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):  # the event the composite's output needs, carried back to its input
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        return constraints.independent(domain, event_dim - domain.event_dim) if event_dim > domain.event_dim \
            else domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        return constraints.independent(codomain, event_dim - codomain.event_dim) \
            if event_dim > codomain.event_dim else codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> int:
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return minitensor.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return reduce(operator.add, terms)

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """`base_transform` with `reinterpreted_batch_ndims` more rightmost dims taken as one event: log |det J|
    is summed over them."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """The event reshaped from `in_shape` to `out_shape` (same number of elements): log |det J| = 0."""
    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = Size(tuple(in_shape)), Size(tuple(out_shape))
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape, cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return minitensor.zeros(batch, dtype=x.dtype)

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)

    @staticmethod
    def _swap(shape, old, new):
        shape = tuple(shape)
        cut = len(shape) - len(old)
        if cut < 0 or shape[cut:] != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[max(cut, 0):]} but got {tuple(old)}")
        return shape[:cut] + tuple(new)


class ExpTransform(Transform):
    r"""y = eˣ;   x = ln y;   ln |det J| = x."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    r"""y = x^exponent on x > 0;   x = y^(1/exponent);   ln |det J| = ln |exponent y / x|."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Tensor | float, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = exponent if isinstance(exponent, Tensor) else minitensor.tensor(float(exponent))

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return tuple(broadcast_shape(tuple(shape), tuple(self.exponent.shape)))

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    r"""y = σ(x) (kept within [eps, 1 - eps]);   x = ln y - ln(1 - y);   ln |det J| = -softplus(-x) - softplus(x)."""
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return clamp_probs(x.sigmoid())

    def _inverse(self, y):
        y = y.clamp(min=float(finfo(y.dtype).tiny), max=1 - float(finfo(y.dtype).eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class SoftplusTransform(Transform):
    r"""y = ln(1 + eˣ);   x = ln(e^y - 1) = y + ln(1 - e^-y);   ln |det J| = -softplus(-x)."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class TanhTransform(Transform):
    r"""y = tanh x;   x = atanh y;   ln |det J| = ln(1 - tanh² x) = 2 (ln 2 - x - softplus(-2x)) (stable form)."""
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()  # y = ±1 gives ±inf, as PyTorch's (cache_size=1 avoids the round trip)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    r"""y = |x|; its "inverse" takes y back to itself (the nonnegative branch). Not bijective."""
    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    r"""y = loc + scale x (over `event_dim` rightmost dims as one event);   x = (y - loc) / scale;
    ln |det J| = ln |scale|, summed over the event dims."""
    bijective = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                    self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                    self._event_dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        return all(bool((a == b).all()) if isinstance(a, Tensor) or isinstance(b, Tensor) else a == b
                   for a, b in ((self.loc, other.loc), (self.scale, other.scale)))

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = minitensor.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = result.reshape(tuple(result.shape[:result.dim() - self._event_dim]) + (-1,)).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        shapes = [tuple(shape)] + [tuple(p.shape) for p in (self.loc, self.scale) if isinstance(p, Tensor)]
        return tuple(broadcast_shape(*shapes))

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    r"""y = softmax(x) over the last dim; its "inverse" is ln y, one of the x that map to y (softmax forgets a
    constant shift, so it is not bijective and has no log |det J|)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


def _pad_last(x: Tensor, before: float | None, after: float | None) -> Tensor:
    """x with a constant entry added before and/or after its last dim."""
    one = minitensor.ones(tuple(x.shape[:-1]) + (1,), dtype=x.dtype)
    parts = ([one * before] if before is not None else []) + [x] + ([one * after] if after is not None else [])
    return minitensor.cat(parts, -1)


class StickBreakingTransform(Transform):
    r"""ℝⁿ → the simplex in ℝⁿ⁺¹ by stick breaking: z_i = σ(x_i - ln(n + 1 - i)) is the share of what is left
    of the stick taken at step i, y_i = z_i Π_{j<i} (1 - z_j), and the last entry is what remains.
    ln |det J| = Σ_i (-x'_i + ln σ(x'_i) + ln y_i), x'_i = x_i - ln(n + 1 - i) (the offset makes x = 0 map
    to the simplex's centre)."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    @staticmethod
    def _offset(n: int, like: Tensor) -> Tensor:
        return (n + 1 - minitensor.arange(1, n + 1, dtype=like.dtype)).log()

    def _call(self, x):
        z = (x - self._offset(x.shape[-1], x)).sigmoid()
        z_cumprod = (1 - z).cumprod(-1)
        return _pad_last(z, None, 1.0) * _pad_last(z_cumprod, 1.0, None)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        sf = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - sf.log() + self._offset(y_crop.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x.shape[-1], x)
        return (-x - softplus(-x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    r"""An unconstrained square matrix → a lower-triangular one with a positive diagonal: the strict lower
    part kept, the diagonal exponentiated. Its log |det J| is not defined (as in PyTorch)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    r"""An unconstrained square matrix → a positive-definite one: L Lᵀ with L its LowerCholeskyTransform image;
    the inverse takes the Cholesky factor and undoes the lower Cholesky map."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.transpose(-2, -1)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(minitensor.linalg.cholesky(y))


def _tril_index(n: int, diag: int) -> Any:
    """Flat (row-major) positions of the entries of an n×n matrix on or below diagonal `diag`."""
    rows, cols = np.tril_indices(n, diag)
    return minitensor.tensor(rows * n + cols)


def _vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The n×n matrix whose entries on or below diagonal `diag` are `vec`'s (row by row), zeros elsewhere."""
    m = vec.shape[-1]
    # m entries on or below `diag` of an n×n matrix: m = n (n + 1) / 2 + diag n - diag (diag + 1) / 2 (diag ≤ 0), for n
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > 1e-6:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the lower triangular part "
                         "of a square D x D matrix.")
    n = int(round(n))
    where = np.zeros(n * n, dtype=np.int64)  # 0 points at the zero padded in front of vec
    where[_tril_index(n, diag).numpy()] = np.arange(1, m + 1)
    padded = _pad_last(vec, 0.0, None)
    return padded.index_select(-1, minitensor.tensor(where)).reshape(tuple(vec.shape[:-1]) + (n, n))


def _tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    n = mat.shape[-1]
    return mat.flatten(-2).index_select(-1, _tril_index(n, diag))


class CorrCholeskyTransform(Transform):
    r"""ℝ^(n(n-1)/2) → the lower Cholesky factors of n×n correlation matrices. The vector fills the strict lower
    triangle row by row after tanh (partial correlations r in (-1, 1)); each row is then completed by stick
    breaking on the squared norm: y_ij = r_ij √(1 - Σ_{k<j} y_ik²) and y_ii = √(1 - Σ_{k<i} y_ik²), so every
    row has unit norm. ln |det J| = ½ Σ ln(1 - Σ_{k<j} y_ik²) over the strict lower part (the stick breaking)
    + Σ ln(1 - tanh² x) (the tanh)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        eps = float(finfo(x.dtype).eps)
        r = _vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        z1m_cumprod_sqrt = (1 - r.square()).sqrt().cumprod(-1)
        n = r.shape[-1]
        r = r + minitensor.eye(n, dtype=r.dtype)
        return r * _pad_last(z1m_cumprod_sqrt[..., :-1], 1.0, None)

    def _inverse(self, y):
        y_cumsum = 1 - y.square().cumsum(-1)
        y_cumsum_shifted = _pad_last(y_cumsum[..., :-1], 1.0, None)
        y_vec = _tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = _tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        return (y_vec / y_cumsum_vec.sqrt()).atanh()

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - y.square().cumsum(-1)
        stick_breaking_logdet = 0.5 * _tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        m = shape[-1]
        n = round((0.25 + 2 * m) ** 0.5 + 0.5)
        if n * (n - 1) // 2 != m:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return tuple(shape[:-1]) + (n, n)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return tuple(shape[:-2]) + (n * (n - 1) // 2,)


class CatTransform(Transform):
    """`tseq[i]` applied to the i-th slice (of `lengths[i]`, 1 by default) along `dim`, results concatenated."""

    def __init__(self, tseq: list[Transform], dim: int = 0, lengths: list[int] | None = None,
                 cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("CatTransform: every entry of tseq must be a Transform")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"CatTransform: {len(self.transforms)} transforms but {len(self.lengths)} lengths")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths,
                                                                        cache_size)

    def _slices(self, x: Tensor) -> Iterator[tuple[Transform, Tensor]]:
        if not -x.dim() <= self.dim < x.dim() or x.shape[self.dim] != self.length:
            raise ValueError(f"CatTransform: expected size {self.length} along dim {self.dim}, got shape "
                             f"{tuple(x.shape)}")
        start = 0
        for t, length in zip(self.transforms, self.lengths):
            yield t, x.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return minitensor.cat([t(xs) for t, xs in self._slices(x)], self.dim)

    def _inverse(self, y):
        return minitensor.cat([t.inv(ys) for t, ys in self._slices(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        ys = dict(enumerate(s for _, s in self._slices(y)))
        parts = []
        for i, (t, xs) in enumerate(self._slices(x)):
            ladj = t.log_abs_det_jacobian(xs, ys[i])
            if t.event_dim < self.event_dim:
                ladj = sum_rightmost(ladj, self.event_dim - t.event_dim)
            parts.append(ladj)
        dim = self.dim if self.dim < 0 else self.dim - x.dim()
        dim = dim + self.event_dim  # the concatenated dim inside the event is summed, outside it kept
        return minitensor.cat(parts, dim) if dim < 0 else sum(p for p in parts)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """`tseq[i]` applied to index i along `dim`, results stacked."""

    def __init__(self, tseq: list[Transform], dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("StackTransform: every entry of tseq must be a Transform")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, x: Tensor) -> list[Tensor]:
        if not -x.dim() <= self.dim < x.dim() or x.shape[self.dim] != len(self.transforms):
            raise ValueError(f"StackTransform: expected size {len(self.transforms)} along dim {self.dim}, got shape "
                             f"{tuple(x.shape)}")
        return [x.select(self.dim, i) for i in range(x.shape[self.dim])]

    def _call(self, x):
        return minitensor.stack([t(xs) for t, xs in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return minitensor.stack([t.inv(ys) for t, ys in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return minitensor.stack([t.log_abs_det_jacobian(xs, ys) for t, xs, ys in
                                 zip(self.transforms, self._slices(x), self._slices(y))], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    r"""y = F(x), the CDF of `distribution` (a univariate, continuous one): maps its support onto [0, 1];
    x = F⁻¹(y) (its icdf);   ln |det J| = ln p(x) (the density is the CDF's derivative)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else CumulativeDistributionTransform(self.distribution,
                                                                                           cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
