"""Categorical(probs | logits): one of K classes, class k with probability probs[..., k].

Given `probs`, they are normalised to sum to 1 over the last dim and `logits` = ln probs (clamped
to [eps, 1 - eps] first); given `logits`, they are normalised by subtracting their logsumexp and
`probs` = softmax(logits). The one not given is derived on first use.
"""
from __future__ import annotations

from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shape, finfo, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            assert logits is not None
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            param = self.logits
        self._param = param
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1] if param.ndim > 1 else Size(), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> Tensor:
        return minitensor.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return minitensor.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """Class indices (int64) of shape sample_shape + batch_shape, by inverting the CDF at uniform draws of
        minitensor's global generator: repeatable under manual_seed, but not PyTorch's stream of numbers."""
        with minitensor.no_grad():
            shape = self._extended_shape(sample_shape)
            cdf = self.probs.detach().cumsum(-1)
            u = minitensor.rand(tuple(shape) + (1,), dtype=cdf.dtype) * cdf[..., -1:]
            index = (cdf <= u).sum(-1)
            return index.clamp(max=self._num_events - 1).long()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        shape = broadcast_shape(index.shape, self.logits.shape)
        logits = self.logits.expand(shape)
        index = index.expand(tuple(shape[:-1]) + (1,))
        return logits.gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=float(finfo(self.logits.dtype).min))  # -inf logits (probs 0) add 0, not NaN
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = minitensor.arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

