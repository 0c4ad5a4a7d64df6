"""minitensor.utils.data: datasets, the DataLoader, default_collate and random_split, against torch.utils.data."""
import collections

import numpy as np
import pytest

import minitensor as mt
from minitensor.utils.data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def as_numpy(x):
    """A batch's structure with every tensor as a numpy array, from either library."""
    if isinstance(x, dict):
        return {k: as_numpy(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(as_numpy(v) for v in x) if not hasattr(x, "_fields") else type(x)(*map(as_numpy, x))
    return x.numpy() if hasattr(x, "numpy") else x


def assert_same_batch(ours, theirs):
    """Same nesting (container types, keys), same dtypes, same values."""
    ours, theirs = as_numpy(ours), as_numpy(theirs)
    assert type(ours) is type(theirs), (ours, theirs)
    if isinstance(ours, dict):
        assert list(ours) == list(theirs)
        for k in ours:
            assert_same_batch(ours[k], theirs[k])
    elif isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same_batch(a, b)
    elif isinstance(ours, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape and np.array_equal(ours, theirs)
    else:
        assert ours == theirs


Point = collections.namedtuple("Point", "x y")


def samples(lib):
    """Samples of every kind default_collate handles, built with `lib`'s own tensors."""
    rs = np.random.RandomState(0)
    out = []
    for i in range(5):
        out.append({
            "tensor": lib.tensor(rs.normal(size=(2, 3)).astype(np.float32)),
            "int_tensor": lib.tensor([i, i + 1]),
            "array": rs.normal(size=3),                      # float64 array
            "array32": rs.normal(size=(1, 2)).astype(np.float32),
            "np_scalar": np.float32(i / 3), "np_int": np.int32(i),
            "float": i / 7, "int": i, "bool": i % 2 == 0, "str": f"s{i}",
            "pair": (i, float(i)), "list": [i, i * 2], "point": Point(i, i / 2),
        })
    return out


def test_default_collate_matches_torch(torch):
    from torch.utils.data import default_collate as torch_collate
    for key in samples(mt)[0]:
        assert_same_batch(default_collate([s[key] for s in samples(mt)]),
                          torch_collate([s[key] for s in samples(torch)]))
    assert_same_batch(default_collate(samples(mt)), torch_collate(samples(torch)))


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="object"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="dtype <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


@pytest.mark.parametrize("n, batch_size, drop_last",
                         [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (2, 5, True)])
def test_unshuffled_batches_and_len_match_torch(torch, n, batch_size, drop_last):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    y = np.arange(n) % 3
    ours = DataLoader(TensorDataset(mt.tensor(x), mt.tensor(y)), batch_size=batch_size, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                         batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    ours_batches, theirs_batches = list(ours), list(theirs)
    assert len(ours_batches) == len(theirs_batches) == len(ours)
    for a, b in zip(ours_batches, theirs_batches):
        assert_same_batch(a, b)


def test_a_plain_dataset_subclass_and_num_workers(torch):
    class Squares(Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            return {"x": np.full(2, i, dtype=np.int64), "y": i * i}

    for workers in (0, 2):  # batches are made in this process either way
        assert_same_batch(list(DataLoader(Squares(), batch_size=3, num_workers=workers)),
                          list(torch.utils.data.DataLoader(Squares(), batch_size=3)))


def test_shuffle_is_a_fresh_permutation_each_epoch_from_the_seeded_generator():
    ds = TensorDataset(mt.arange(20))
    loader = DataLoader(ds, batch_size=6, shuffle=True)
    mt.manual_seed(3)
    first, second = [mt.cat([b[0] for b in loader]).tolist() for _ in range(2)]
    assert sorted(first) == sorted(second) == list(range(20)) and first != second
    mt.manual_seed(3)
    assert mt.cat([b[0] for b in loader]).tolist() == first
    g = mt.Generator().manual_seed(5)
    own = [b[0].tolist() for b in DataLoader(ds, batch_size=6, shuffle=True, generator=g)]
    assert sum(own, []) == mt.randperm(20, generator=mt.Generator().manual_seed(5)).tolist()


def test_sampler_collate_fn_and_errors():
    ds = list(range(10))
    assert list(DataLoader(ds, batch_size=4, sampler=[9, 0, 5], collate_fn=list)) == [[9, 0, 5]]
    assert len(DataLoader(ds, batch_size=2, sampler=[1, 2, 3])) == 2
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler"):
        DataLoader(ds, batch_size=2, batch_sampler=[[0, 1]])


def test_tensor_dataset_and_subset():
    ds = TensorDataset(mt.arange(6.0).view(3, 2), mt.tensor([7, 8, 9]))
    x, y = ds[1]
    assert len(ds) == 3 and x.tolist() == [2.0, 3.0] and y.item() == 8
    assert Subset(ds, [2, 0])[0][1].item() == 9 and len(Subset(ds, [2, 0])) == 2
    with pytest.raises(ValueError, match=r"\(3, 2\), \(4,\)"):
        TensorDataset(mt.zeros(3, 2), mt.zeros(4))
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]


@pytest.mark.parametrize("n, lengths",
                         [(10, [3, 7]), (10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (7, [0.1, 0.2, 0.7]), (5, [5, 0])])
def test_random_split_lengths_match_torch(torch, n, lengths):
    ours = random_split(range(n), lengths, generator=mt.Generator().manual_seed(0))
    theirs = torch.utils.data.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(n))  # a partition of the dataset


def test_random_split_errors_and_generator():
    with pytest.raises(ValueError, match="sum to 6"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="not between 0 and 1"):
        random_split(range(10), [1.5, -0.5])
    a = [list(s) for s in random_split(range(10), [5, 5], generator=mt.Generator().manual_seed(1))]
    b = [list(s) for s in random_split(range(10), [5, 5], generator=mt.Generator().manual_seed(1))]
    assert a == b
