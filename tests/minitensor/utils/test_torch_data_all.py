"""default_collate, default_convert, samplers and DataLoader options against torch.utils.data."""
import collections

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitensor as mt  # noqa: E402
from minitensor.utils import data as ours  # noqa: E402

theirs = torch.utils.data
pytestmark = pytest.mark.slow

P = collections.namedtuple("P", "a b")
BATCHES = [[1, 2.5], [True, 2], [2, True], [True, False], [1.5, 2], [1, 2], [np.float32(1), np.float32(2)],
           [np.int32(1), np.int32(2)], [np.bool_(True), np.bool_(False)], [np.array(1.5), np.array(2.0)],
           [np.float64(1), 2], [np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)], ["a", "b"], [b"a", b"b"],
           [{"x": 1, "y": 2.0}, {"x": 3, "y": 4.0}], [(1, 2.0), (3, 4.0)], [P(1, [2, 3]), P(4, [5, 6])],
           [collections.OrderedDict(k=1), collections.OrderedDict(k=2)]]


def as_numpy(x):
    if isinstance(x, (mt.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).replace("torch.", "").replace("minitensor.", ""), x.numpy().tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: as_numpy(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [as_numpy(v) for v in x])
    return x


@pytest.mark.parametrize("batch", BATCHES, ids=[repr(b)[:40] for b in BATCHES])
def test_default_collate_equals_pytorchs(batch):
    assert as_numpy(ours.default_collate(batch)) == as_numpy(theirs.default_collate(batch))


@pytest.mark.parametrize("data", [[np.zeros(2), 1, (np.ones(1, np.float32), "a")], np.float32(2), np.array(["a"]),
                                  {"k": np.arange(3)}, "text"])
def test_default_convert_equals_pytorchs(data):
    assert as_numpy(ours.default_convert(data)) == as_numpy(theirs.default_convert(data))


def test_ragged_samples_raise_the_same_error():
    batch = [np.zeros(3), np.zeros(2)]
    with pytest.raises(RuntimeError) as a:
        ours.default_collate(batch)
    with pytest.raises(RuntimeError) as b:
        theirs.default_collate(batch)
    assert "but got [3] at entry 0 and [2] at entry 1" in str(a.value) and str(b.value) in str(a.value)


@pytest.mark.parametrize("make", [
    lambda d, ds: d.SequentialSampler(ds),
    lambda d, ds: d.BatchSampler(d.SequentialSampler(ds), 4, False),
    lambda d, ds: d.BatchSampler(range(len(ds)), 4, True),
])
def test_deterministic_samplers_equal_pytorchs(make):
    ds = list(range(11))
    assert list(make(ours, ds)) == list(make(theirs, ds)) and len(make(ours, ds)) == len(make(theirs, ds))


@pytest.mark.parametrize("make", [
    lambda d, ds: d.RandomSampler(ds),
    lambda d, ds: d.RandomSampler(ds, num_samples=25),
    lambda d, ds: d.RandomSampler(ds, replacement=True, num_samples=70),
    lambda d, ds: d.SubsetRandomSampler([1, 4, 9]),
    lambda d, ds: d.WeightedRandomSampler([0.0, 1.0, 2.0], 9),
    lambda d, ds: d.WeightedRandomSampler([1.0, 1.0, 2.0], 3, replacement=False),
])
def test_random_samplers_draw_what_pytorchs_draw(make):
    """Same length, same multiset where it is fixed (the order itself is minitensor's own stream)."""
    ds = list(range(11))
    a, b = list(make(ours, ds)), list(make(theirs, ds))
    assert len(a) == len(b) == len(make(ours, ds))
    assert set(a) <= set(range(11)) and all(isinstance(i, int) for i in a)
    if not getattr(make(theirs, ds), "replacement", False):
        assert sorted(a) == sorted(b) or isinstance(make(theirs, ds), theirs.RandomSampler) and len(a) > 11


@pytest.mark.parametrize("kw", [dict(batch_size=None), dict(batch_size=3, drop_last=True),
                                dict(batch_sampler=[[0, 5], [2]]), dict(batch_size=4, sampler=[3, 1, 2, 0, 9])])
def test_loader_options_equal_pytorchs(kw):
    ds = [(np.arange(2) + i, i, float(i)) for i in range(10)]
    a = [as_numpy(b) for b in ours.DataLoader(ds, **kw)]
    b = [as_numpy(b) for b in theirs.DataLoader(ds, **kw)]
    assert a == b and len(ours.DataLoader(ds, **kw)) == len(theirs.DataLoader(ds, **kw))


def test_iterable_dataset_and_concat_equal_pytorchs():
    def build(d):
        class Stream(d.IterableDataset):
            def __iter__(self):
                return iter(range(7))
        return d.DataLoader(d.ChainDataset([Stream(), Stream()]), batch_size=4)

    assert [as_numpy(b) for b in build(ours)] == [as_numpy(b) for b in build(theirs)]
    cat_a = ours.ConcatDataset([list(range(3)), list(range(10, 12))])
    cat_b = theirs.ConcatDataset([list(range(3)), list(range(10, 12))])
    assert [cat_a[i] for i in range(-5, 5)] == [cat_b[i] for i in range(-5, 5)]
    assert cat_a.cumulative_sizes == cat_b.cumulative_sizes
    assert ours.get_worker_info() is theirs.get_worker_info() is None
