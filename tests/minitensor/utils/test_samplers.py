"""Samplers, the DataLoader's options, datasets and default_collate's dtype rules (no PyTorch needed)."""
import tracemalloc

import numpy as np
import pytest

import minitensor as mt
from minitensor.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    StackDataset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)


def test_module_paths_as_pytorchs():
    from minitensor.utils.data._utils.collate import default_collate as c
    from minitensor.utils.data.dataloader import DataLoader as D
    from minitensor.utils.data.dataset import Dataset  # noqa: F401
    from minitensor.utils.data.sampler import RandomSampler as R
    assert c is default_collate and D is DataLoader and R is RandomSampler


def test_random_sampler_is_lazy():
    tracemalloc.start()
    try:
        it = iter(RandomSampler(range(5), num_samples=10 ** 10))
        first = [next(it) for _ in range(12)]
        it2 = iter(RandomSampler(range(5), replacement=True, num_samples=10 ** 10))
        drawn = [next(it2) for _ in range(40)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    assert sorted(first[:5]) == sorted(first[5:10]) == list(range(5))  # chained permutations
    assert set(drawn) <= set(range(5)) and len(RandomSampler(range(5), num_samples=10 ** 10)) == 10 ** 10


def test_random_samplers_follow_their_generator_and_the_global_seed():
    a = list(RandomSampler(range(50), generator=mt.Generator().manual_seed(1)))
    b = list(RandomSampler(range(50), generator=mt.Generator().manual_seed(1)))
    assert a == b and sorted(a) == list(range(50)) and a != list(range(50))
    mt.manual_seed(4)
    c = list(RandomSampler(range(50)))
    mt.manual_seed(4)
    assert list(RandomSampler(range(50))) == c
    idx = [3, 8, 11, 20]
    assert sorted(SubsetRandomSampler(idx)) == idx and len(SubsetRandomSampler(idx)) == 4
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement"):
        RandomSampler(range(3), replacement=1)


def test_weighted_and_batch_samplers():
    mt.manual_seed(0)
    draws = list(WeightedRandomSampler([0.0, 1.0, 3.0], 4000))
    counts = np.bincount(draws, minlength=3)
    assert counts[0] == 0 and 2.5 < counts[2] / counts[1] < 3.5
    assert sorted(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False)) == [0, 1, 2, 3]
    assert list(BatchSampler(SequentialSampler(range(7)), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(NotImplementedError):
        iter(Sampler())


@pytest.mark.parametrize("batch, dtype", [([1, 2.5], mt.float32), ([True, 2], mt.int64), ([2, True], mt.int64),
                                          ([True, False], mt.bool), ([1.5, 2], mt.float64), ([1, 2], mt.int64),
                                          ([np.float32(1), np.float32(2)], mt.float32),
                                          ([np.int32(1), np.int32(2)], mt.int32)])
def test_default_collate_dtype_rules(batch, dtype):
    assert default_collate(batch).dtype == dtype


def test_default_collate_strings_bytes_and_ragged_samples():
    assert default_collate([b"a", b"b"]) == [b"a", b"b"] and default_collate(["a", "b"]) == ["a", "b"]
    with pytest.raises(RuntimeError, match=r"\[3\] at entry 0 and \[2\] at entry 1"):
        default_collate([np.zeros(3), np.zeros(2)])
    with pytest.raises(RuntimeError, match=r"\[2, 2\] at entry 0 and \[2, 3\] at entry 2"):
        default_collate([mt.zeros(2, 2), mt.zeros(2, 2), mt.zeros(2, 3)])
    with pytest.raises(RuntimeError, match=r"\[3\] at entry 0 and \[1\] at entry 1"):
        list(DataLoader([np.zeros(3), np.zeros(1)], batch_size=2))


def test_default_convert():
    out = default_convert([np.zeros(2), 1, (np.ones(1, np.float32), "a")])
    assert isinstance(out[0], mt.Tensor) and out[1] == 1 and out[2][0].dtype == mt.float32 and out[2][1] == "a"


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_dataloader_options():
    ds = list(range(10))
    assert [b.tolist() for b in DataLoader(ds, batch_sampler=[[1, 2], [9]])] == [[1, 2], [9]]
    assert list(DataLoader(ds, batch_size=None))[:2] == [0, 1] and len(DataLoader(ds, batch_size=None)) == 10
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in DataLoader(ChainDataset([Stream(2), Stream(3)]), batch_size=2)] == [[0, 1], [0, 1],
                                                                                                    [2]]
    calls = []
    loader = DataLoader(ds, batch_size=4, num_workers=3, worker_init_fn=calls.append, prefetch_factor=2,
                        persistent_workers=True)
    assert [b.tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and calls == []
    assert get_worker_info() is None
    g1, g2 = mt.Generator().manual_seed(7), mt.Generator().manual_seed(7)
    assert [b.tolist() for b in DataLoader(ds, 3, shuffle=True, generator=g1)] == \
        [b.tolist() for b in DataLoader(ds, 3, shuffle=True, generator=g2)]
    for bad in (dict(shuffle=True), dict(sampler=[0])):
        with pytest.raises(ValueError, match="IterableDataset"):
            DataLoader(Stream(3), **bad)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], drop_last=True)
    with pytest.raises(ValueError, match="drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(ds, prefetch_factor=2)


def test_concat_stack_datasets_and_fractional_split():
    a, b = TensorDataset(mt.arange(3)), TensorDataset(mt.arange(10, 14))
    cat = a + b
    assert isinstance(cat, ConcatDataset) and len(cat) == 7 and cat[3][0].item() == 10 and cat[-1][0].item() == 13
    st = StackDataset(x=list("abc"), y=[1, 2, 3])
    assert st[1] == {"x": "b", "y": 2} and StackDataset([1, 2], [3, 4])[0] == (1, 3)
    with pytest.raises(ValueError, match="size mismatch"):
        StackDataset([1], [1, 2])
    parts = random_split(range(10), [0.5, 0.3, 0.2], generator=mt.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 3, 2]
