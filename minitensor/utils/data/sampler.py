"""Samplers with PyTorch's names (`torch.utils.data.sampler`): the order in which a DataLoader visits a dataset.

A sampler is an iterable of indices (or, for `BatchSampler`, of lists of indices) with a `len`. Random
ones draw lazily from `generator` (a `minitensor.Generator`), or, without one, from a fresh stream
seeded by one draw of the global generator that `minitensor.manual_seed` seeds, as PyTorch's do.
minitensor's random streams are not PyTorch's bits: the same seed gives a different (equally
random) order than in PyTorch.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence, Sized

import numpy as np

from ...random import Generator, _gen


class Sampler:
    """Base class of samplers: subclasses define `__iter__` (and usually `__len__`)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass  # (PyTorch still accepts, and ignores, a data_source here)

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__ (a Sampler subclass)")


def _stream(generator):
    """The numpy Generator a random sampler draws one pass from: `generator`'s own, or a fresh one seeded
    from the global generator (so other draws made during the pass do not change the order)."""
    if generator is not None:
        return _gen(generator)
    return np.random.default_rng(int(_gen(None).integers(0, 2 ** 63 - 1)))


def _permutation(n, generator):
    from ...factories import randperm

    if generator is not None:
        return randperm(n, generator=generator).tolist()
    return _stream(None).permutation(n).tolist()


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices into data_source: a fresh permutation each pass (`num_samples` past len(data_source)
    chains several permutations), or with `replacement=True` independent uniform draws. Indices are
    drawn lazily, a permutation or 32 draws at a time, so `num_samples=10**10` costs no memory up front.
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source, self.replacement, self._num_samples, self.generator = (
            data_source, replacement, num_samples, generator)
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            rng = _stream(self.generator)
            for _ in range(self.num_samples // 32):
                yield from rng.integers(0, n, size=32).tolist()
            yield from rng.integers(0, n, size=self.num_samples % 32).tolist()
            return
        generator = self.generator
        if generator is None:  # one private stream for the whole pass
            generator = Generator()
            generator._rng = _stream(None)
        for _ in range(self.num_samples // n):
            yield from _permutation(n, generator)
        yield from _permutation(n, generator)[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order each pass."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in _permutation(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices in range(len(weights)), index i drawn with probability weights[i] / sum(weights)
    (weights need not sum to 1); without replacement each index is drawn at most once."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights._array if hasattr(weights, "_array") else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("WeightedRandomSampler: weights must be finite, non-negative and not all zero")
        if not replacement and num_samples > int((w > 0).sum()):
            raise RuntimeError(
                f"WeightedRandomSampler: cannot draw {num_samples} samples without replacement from "
                f"{int((w > 0).sum())} non-zero weights"
            )
        from ...factories import tensor

        self.weights = tensor(w)
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        from ...ops.selection import multinomial

        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group another sampler's indices into lists of `batch_size` (the last one shorter unless drop_last)."""

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]
