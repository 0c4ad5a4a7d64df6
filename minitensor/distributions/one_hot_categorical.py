"""OneHotCategorical(probs | logits): a Categorical whose draws are one-hot vectors of length K."""
from __future__ import annotations

from typing import Any, cast

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _one_hot(index: Tensor, num_classes: int, dtype: Any) -> Tensor:
    return (index.unsqueeze(-1) == minitensor.arange(num_classes)).to(dtype)


class OneHotCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(self._categorical.batch_shape, param.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> OneHotCategorical:
        new = type(self).__new__(type(self))
        new._categorical = cast(Categorical, self._categorical.expand(batch_shape))
        Distribution.__init__(new, new._categorical.batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return _one_hot(probs.argmax(-1), probs.shape[-1], probs.dtype)

    @property
    def variance(self) -> Tensor:
        probs = self._categorical.probs
        return probs * (1 - probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        probs = self._categorical.probs
        return _one_hot(self._categorical.sample(sample_shape), probs.shape[-1], probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._event_shape[0]
        values = minitensor.eye(n, dtype=self._param.dtype).reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}: {v}" for k, v in _params(self._categorical).items())
        return f"{type(self).__name__}({shown})"


def _params(cat: Categorical) -> dict[str, Any]:
    return {k: (cat.__dict__[k].item() if cat.__dict__[k].numel() == 1 else cat.__dict__[k].shape)
            for k in ("probs", "logits") if k in cat.__dict__}


class OneHotCategoricalStraightThrough(OneHotCategorical):
    r"""OneHotCategorical with the straight-through gradient estimator (Bengio et al. 2013): `rsample` returns
    the one-hot draw s as s + (p - p.detach()), whose value is s and whose gradient in the probs p is the
    identity, a biased but often useful estimate."""
    has_rsample = True

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
