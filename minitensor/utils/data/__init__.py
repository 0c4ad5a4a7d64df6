"""Datasets, samplers and the DataLoader, with PyTorch's names and module paths (`torch.utils.data`).

    dataset.py       Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset,
                     Subset, random_split
    sampler.py       Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
                     BatchSampler
    dataloader.py    DataLoader, get_worker_info
    _utils/collate.py  default_collate, default_convert

Everything runs in the calling process (see dataloader.py). Random orders come from minitensor's
generators, seeded by `minitensor.manual_seed` or a `generator=`: reproducible, but not PyTorch's
order for the same seed.
"""
from . import _utils, dataloader, dataset, sampler  # noqa: F401
from ._utils.collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
                      ChainDataset,
                      ConcatDataset,
                      Dataset,
                      IterableDataset,
                      StackDataset,
                      Subset,
                      TensorDataset,
                      random_split,
)
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
