"""The data-loading behaviours tutorials lean on, one check each against PyTorch: the module paths, a lazy
RandomSampler, batch_size=None, collate_fn, num_workers (in-process here), default_collate's dtype rules
and its error for ragged samples."""
import itertools
import time

import numpy as np
import pytest

import minitensor as mt
import minitensor.utils.data as mdata

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")
import torch.utils.data as tdata  # noqa: E402

from minitensor.run import torch_module  # noqa: E402


def plain(x):
    """A batch as nested Python values and dtype names, comparable across the libraries."""
    if hasattr(x, "numpy"):
        return (str(x.dtype).split(".")[-1], np.asarray(x.detach().numpy()).tolist())
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [plain(v) for v in x]
    return x


@pytest.mark.parametrize("path, name", [("torch.utils.data.dataloader", "DataLoader"),
                                        ("torch.utils.data.dataset", "TensorDataset"),
                                        ("torch.utils.data.sampler", "RandomSampler"),
                                        ("torch.utils.data._utils.collate", "default_collate")])
def test_module_paths(path, name):
    ours = getattr(torch_module(path), name)
    assert ours is getattr(mdata, name) and callable(getattr(__import__(path, fromlist=[name]), name))


@pytest.mark.parametrize("replacement", [True, False])
def test_random_sampler_is_lazy(replacement):
    start = time.perf_counter()
    s = mdata.RandomSampler(range(5), replacement=replacement, num_samples=10**10)
    first = list(itertools.islice(iter(s), 12))
    assert len(s) == len(tdata.RandomSampler(range(5), replacement=replacement, num_samples=10**10)) == 10**10
    assert all(0 <= i < 5 for i in first) and time.perf_counter() - start < 0.5
    if not replacement:
        assert sorted(first[:5]) == list(range(5))  # each pass is a permutation


COLLATE = [
    ("ints then float", [1, 2.5]),
    ("floats", [1.0, 2.0]),
    ("bools then ints", [True, 2]),
    ("bools", [True, False]),
    ("bytes", [b"a", b"b"]),
    ("strings", ["a", "b"]),
    ("numpy int32", [np.int32(1), np.int32(2)]),
    ("dicts", [{"x": 1, "y": "a"}, {"x": 2, "y": "b"}]),
    ("pairs", [(1, 2.0), (3, 4.0)]),
]


@pytest.mark.parametrize("name, batch", COLLATE, ids=[c[0] for c in COLLATE])
def test_default_collate_dtype_rules(name, batch):
    assert plain(mdata.default_collate(batch)) == plain(tdata.default_collate(batch))


def test_ragged_samples_error_names_the_shapes():
    with pytest.raises(RuntimeError, match=r"equal size.*\[2\] at entry 0 and \[3\] at entry 1") as ours:
        mdata.default_collate([mt.ones(2), mt.ones(3)])
    with pytest.raises(RuntimeError) as theirs:
        tdata.default_collate([torch.ones(2), torch.ones(3)])
    assert "[2] at entry 0 and [3] at entry 1" in str(theirs.value) and "collate_fn" in str(ours.value)


def _loaders(lib, data, **kw):
    x = lib.arange(12.0).reshape(6, 2)
    ds = data.TensorDataset(x, lib.arange(6))
    return [plain(b) for b in data.DataLoader(ds, **kw)]


@pytest.mark.parametrize("kw", [dict(batch_size=None), dict(batch_size=4), dict(batch_size=4, drop_last=True),
                                dict(batch_size=2, collate_fn=lambda b: len(b)),
                                dict(batch_size=3, num_workers=2, worker_init_fn=lambda i: None)],
                         ids=["batch_size=None", "batch_size=4", "drop_last", "collate_fn", "num_workers"])
def test_loader_options_give_torchs_batches(kw):
    # num_workers: minitensor loads in-process (documented), the batches and their order are PyTorch's
    # (PyTorch's own run with num_workers=0: the same batches, without a second of starting processes)
    theirs = {k: v for k, v in kw.items() if k not in ("num_workers", "worker_init_fn")}
    assert _loaders(mt, mdata, **kw) == _loaders(torch, tdata, **theirs)
