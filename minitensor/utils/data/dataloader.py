"""The DataLoader, with PyTorch's name and options (`torch.utils.data.dataloader`).

A DataLoader walks a sampler's indices (in order, or shuffled), groups them `batch_size` at a time
(a `BatchSampler`) and merges each group's samples with `collate_fn` (`default_collate`). With
`batch_size=None` each sample is returned alone, through `default_convert`. An `IterableDataset`
is streamed in its own order and chunked.

Everything runs in the calling process. `num_workers`, `worker_init_fn`, `pin_memory`, `timeout`,
`prefetch_factor`, `persistent_workers`, `multiprocessing_context` and `in_order` are accepted and
change nothing: the batches are the same ones, in the same order, as with `num_workers=0`;
`worker_init_fn` is never called (there are no worker processes) and `get_worker_info()` is None,
as in PyTorch's main process.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from ...random import Generator
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


def get_worker_info() -> None:
    """None: data loading always runs in this process (PyTorch returns None in its main process too)."""
    return None


class DataLoader:
    """Batches of a dataset: `for x, y in DataLoader(ds, batch_size=32, shuffle=True): ...`.

    Each pass (epoch) shuffles anew when `shuffle=True` (a `RandomSampler` drawing from `generator`, or
    from the global generator that `minitensor.manual_seed` seeds). `len(loader)` is the number of
    batches; `drop_last=True` leaves out a last batch smaller than `batch_size`. `sampler` (an iterable
    of indices) replaces the order; `batch_sampler` (an iterable of index lists) replaces batch_size,
    shuffle, sampler and drop_last. `collate_fn` replaces `default_collate`.
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable[int] | None = None,
                 batch_sampler: Sampler | Iterable[list[int]] | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                                       or batch_size < 1):
            raise ValueError(f"DataLoader: batch_size should be a positive integer or None, got {batch_size!r}")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers should be a non-negative integer, got {num_workers!r}")
        if timeout < 0:
            raise ValueError("DataLoader: timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor option could only be specified in multiprocessing "
                             "(num_workers > 0)")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
        if isinstance(dataset, IterableDataset):
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            if sampler is not None and shuffle:
                raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
            if batch_sampler is not None:
                if batch_size != 1 or shuffle or sampler is not None or drop_last:
                    raise ValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                                     "shuffle, sampler, and drop_last")
                batch_size, drop_last = None, False
            elif batch_size is None and drop_last:
                raise ValueError("DataLoader: batch_size=None option disables auto-batching and is mutually "
                                 "exclusive with drop_last")
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
            if batch_size is not None and batch_sampler is None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.pin_memory, self.timeout, self.prefetch_factor = pin_memory, timeout, prefetch_factor
        self.persistent_workers, self.in_order = persistent_workers, in_order
        self.multiprocessing_context, self.pin_memory_device = multiprocessing_context, pin_memory_device
        if collate_fn is None:
            batched = self._auto_collation or (isinstance(dataset, IterableDataset) and batch_size is not None)
            collate_fn = default_collate if batched else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self.dataset, IterableDataset):
            yield from self._iter_stream()
        elif self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])
        else:
            for i in self.sampler:  # type: ignore[union-attr]
                yield self.collate_fn(self.dataset[i])

    def _iter_stream(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]


__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
