"""Datasets and the DataLoader, with PyTorch's names (`torch.utils.data`).

A dataset is anything with `len(ds)` and `ds[i]`. A `DataLoader` walks its indices (in order, or
shuffled by minitensor's seeded generator), takes `batch_size` samples at a time and merges them
with `default_collate`, which stacks samples position by position:

    samples (x0, y0), (x1, y1), ...  ->  [stack([x0, x1, ...]), stack([y0, y1, ...])]

Everything runs in the calling process: `num_workers` is accepted and gives the same batches in
the same order as `num_workers=0`.
"""
from __future__ import annotations

import collections.abc
import math
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, Sequence

import numpy as np

from .. import _dtype
from ..factories import from_numpy, randperm, tensor
from ..ops.shape import stack
from ..random import Generator
from ..tensor import Tensor

if TYPE_CHECKING:
    class SizedDataset(Protocol):
        """What a DataLoader or random_split takes (for type checkers): `len(ds)` and `ds[i]`."""

        def __len__(self) -> int: ...
        def __getitem__(self, index: int, /) -> Any: ...

    class Sampler(Protocol):
        """A DataLoader's `sampler=` (for type checkers): the indices in order, and their number."""

        def __iter__(self) -> Iterator[int]: ...
        def __len__(self) -> int: ...


class Dataset:
    """The base of map-style datasets: subclasses define `__getitem__(i)` and `__len__()`."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__ (a Dataset subclass)")


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


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: SizedDataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: SizedDataset, lengths: Sequence[float],
                 generator: Generator | None = None) -> list[Subset]:
    """Split `dataset` into non-overlapping `Subset`s of the given lengths, in a random order.

    `lengths` are sizes summing to len(dataset), or fractions summing to 1: each part gets
    floor(fraction * len), and the leftover samples go one each to the first parts.
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


def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of samples into a batch, position by position (PyTorch's rules):

    Tensors and numpy arrays are stacked along a new first dim; Python floats become a float64
    tensor, ints int64, bools bool; strings stay a list; dicts collate per key; tuples and lists
    collate per position and give a list (a namedtuple stays one).
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, (np.ndarray, np.generic)):
        if elem.dtype.kind not in "biufc":
            raise TypeError(f"default_collate: cannot batch numpy arrays of dtype {elem.dtype}")
        return from_numpy(np.stack(batch))
    if isinstance(elem, bool):
        return tensor(batch, dtype=_dtype.bool_)
    if isinstance(elem, int):
        return tensor(batch, dtype=_dtype.int64)
    if isinstance(elem, float):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, str):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(list(column)) for column in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        return [default_collate(list(column)) for column in zip(*batch)]
    raise TypeError(
        f"default_collate: a batch must hold tensors, numpy arrays, numbers, strings, dicts or lists; "
        f"found {type(elem).__name__}"
    )


class DataLoader:
    """Batches of a dataset: `for x, y in DataLoader(ds, batch_size=32, shuffle=True): ...`.

    Each pass (epoch) shuffles anew when `shuffle=True`, drawing the order from `generator` or the
    global generator that `minitensor.manual_seed` seeds. `len(loader)` is the number of batches;
    `drop_last=True` leaves out a last batch smaller than `batch_size`. `sampler` (an iterable of
    indices) replaces the order. `collate_fn` replaces `default_collate`. `num_workers`,
    `pin_memory` and the other worker options are accepted: batches are always made in this
    process, the same ones in the same order.
    """

    def __init__(self, dataset: SizedDataset, batch_size: int = 1, shuffle: bool = False,
                 sampler: Sampler | None = None, batch_sampler: None = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 generator: Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "") -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size should be a positive integer, got {batch_size!r}")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers should be a non-negative integer, got {num_workers!r}")
        if batch_sampler is not None:
            raise ValueError("DataLoader: batch_sampler is not supported in minitensor; use batch_size and sampler")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler = sampler
        self.num_workers = num_workers
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.drop_last = drop_last
        self.generator = generator

    def _indices(self):
        if self.sampler is not None:
            return list(self.sampler)
        if self.shuffle:
            return randperm(len(self.dataset), generator=self.generator).tolist()
        return range(len(self.dataset))

    def __iter__(self) -> Iterator[Any]:
        indices = self._indices()
        for start in range(0, len(indices), self.batch_size):
            chunk = indices[start:start + self.batch_size]
            if self.drop_last and len(chunk) < self.batch_size:
                return
            yield self.collate_fn([self.dataset[i] for i in chunk])

    def __len__(self) -> int:
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
