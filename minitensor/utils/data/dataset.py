"""Datasets with PyTorch's names (`torch.utils.data.dataset`).

A map-style dataset is anything with `len(ds)` and `ds[i]`; an `IterableDataset` is a stream the
DataLoader iterates. `random_split` splits a dataset into random non-overlapping `Subset`s.
"""
from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Protocol, Sequence

from ...factories import randperm
from ...random import Generator, default_generator
from ...tensor import Tensor

if TYPE_CHECKING:
    class SizedDataset(Protocol):
        """What a DataLoader or random_split takes (for type checkers): `len(ds)` and `ds[i]`."""

        def __len__(self) -> int: ...
        def __getitem__(self, index: int, /) -> Any: ...


class Dataset:
    """The base of map-style datasets: subclasses define `__getitem__(i)` and `__len__()`."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__ (a Dataset subclass)")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """The base of stream datasets: subclasses define `__iter__()`. A DataLoader batches the stream in
    order (no sampler, no shuffle). Everything runs in this process: `get_worker_info()` is None, so
    a dataset that splits its stream by worker sees the single-process case."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__ (an IterableDataset subclass)")

    def __add__(self, other: Dataset) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is `(t[i] for t in tensors)`; the tensors share their first dimension."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset: give at least one tensor")
        sizes = [t.shape[0] if t.dim() else None for t in tensors]
        if None in sizes or len(set(sizes)) != 1:
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise ValueError(f"TensorDataset: the tensors must have the same first dimension, got shapes {shapes}")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Sample i gathers sample i of each dataset: a tuple (positional datasets) or a dict (keyword ones)."""

    def __init__(self, *args: SizedDataset, **kwargs: SizedDataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or ``dict``- (via ``kwargs``) like input/"
                             "output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        lengths = [len(d) for d in parts]
        if len(set(lengths)) != 1:
            raise ValueError(f"StackDataset: size mismatch between datasets, lengths {lengths}")
        self._length = lengths[0]
        self.datasets: Any = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """The datasets one after another: index i past the first dataset's end goes on into the next."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise ValueError(f"ConcatDataset does not support IterableDataset (datasets[{i}]): use ChainDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index = len(self) + index
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Stream datasets one after another (lazily)."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: SizedDataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: int) -> Any:
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: SizedDataset, lengths: Sequence[float],
                 generator: Generator | None = default_generator) -> list[Subset]:
    """Split `dataset` into non-overlapping `Subset`s of the given lengths, in a random order.

    `lengths` are sizes summing to len(dataset), or fractions summing to 1: each part gets
    floor(fraction * len), and the leftover samples go one each to the first parts (as PyTorch's).
    The order comes from `generator` or the global generator; it is not PyTorch's order for the same seed.
    """
    n = len(dataset)
    lengths = list(lengths)
    if lengths and math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, frac in enumerate(lengths):
            if not 0 <= frac <= 1:
                raise ValueError(f"random_split: fraction at index {i} is {frac}, not between 0 and 1")
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {lengths} sum to {sum(lengths)}, but the dataset has {n} samples")
    order = randperm(n, generator=generator).tolist()
    parts, start = [], 0
    length: Any  # (whole sizes by now)
    for length in lengths:
        parts.append(Subset(dataset, order[start:start + length]))
        start += length
    return parts


__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset", "Subset", "TensorDataset",
           "random_split"]
