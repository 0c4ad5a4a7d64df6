"""Checkpoints written the way PyTorch tutorials write them: torch.save({'model': ..., 'optimizer': ...,
'epoch': ...}, path) and torch.load(path, weights_only=True, map_location='cpu')."""
import os

import numpy as np
import pytest

import minitensor as mt


def make(lib, seed):
    model = lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
    rs = np.random.RandomState(seed)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rs.normal(size=tuple(p.shape)).astype(np.float32)))
    return model, lib.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.99))


def train(lib, model, opt, steps):
    x = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def skeleton(obj):
    """The checkpoint's structure: containers, keys, plain values, and tensors as (dtype, shape)."""
    if isinstance(obj, dict):
        return {k: skeleton(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(skeleton(v) for v in obj)
    if hasattr(obj, "numpy"):
        return ("tensor", str(obj.dtype).split(".")[-1], tuple(obj.shape))
    return obj


@pytest.mark.parametrize("map_location", [None, "cpu", mt.device("cpu")])
def test_tutorial_checkpoint_resumes_training_exactly(tmp_path, map_location):
    model, opt = make(mt, 0)
    train(mt, model, opt, 3)
    path = tmp_path / "checkpoint.pth"
    mt.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}, path)
    assert os.listdir(tmp_path) == ["checkpoint.pth"]  # the name the tutorial chose, no suffix added

    resumed, resumed_opt = make(mt, 1)
    checkpoint = mt.load(path, weights_only=True, map_location=map_location)
    resumed.load_state_dict(checkpoint["model"])
    resumed_opt.load_state_dict(checkpoint["optimizer"])
    assert checkpoint["epoch"] == 3 and checkpoint["optimizer"]["param_groups"][0]["betas"] == (0.8, 0.99)
    assert skeleton(checkpoint["optimizer"]) == skeleton(opt.state_dict())
    assert train(mt, resumed, resumed_opt, 2) == train(mt, model, opt, 2)  # bit for bit


@pytest.mark.slow  # a comparison with PyTorch
def test_checkpoint_structure_matches_torch(tmp_path):
    torch = pytest.importorskip("torch")
    loaded = {}
    for lib in (mt, torch):
        model, opt = make(lib, 0)
        train(lib, model, opt, 2)
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 2, "note": "x"}, path)
        loaded[lib] = lib.load(path, weights_only=True, map_location="cpu")
    ours, theirs = loaded[mt], loaded[torch]
    assert skeleton(ours["model"]) == skeleton(theirs["model"])
    # Adam's `step` is a Python int in minitensor's state, a 0-d tensor in PyTorch's
    assert {i: {k: v for k, v in st.items() if k != "step"} for i, st in skeleton(ours["optimizer"]["state"]).items()} \
        == {i: {k: v for k, v in st.items() if k != "step"} for i, st in skeleton(theirs["optimizer"]["state"]).items()}
    assert [int(st["step"]) for st in ours["optimizer"]["state"].values()] \
        == [int(st["step"]) for st in theirs["optimizer"]["state"].values()]
    assert ours["optimizer"]["param_groups"][0]["params"] == theirs["optimizer"]["param_groups"][0]["params"]
    assert (ours["epoch"], ours["note"]) == (theirs["epoch"], theirs["note"])


@pytest.mark.parametrize("what", ["module", "optimizer", "nested module"])
def test_saving_a_whole_module_round_trips(tmp_path, what):
    # (this test asserted a refusal before whole objects could be saved; they now load back, weights_only)
    model, opt = make(mt, 0)
    train(mt, model, opt, 1)
    obj = {"module": model, "optimizer": opt, "nested module": {"model": model, "epoch": 1}}[what]
    mt.save(obj, tmp_path / "m.pt")
    back = mt.load(tmp_path / "m.pt")
    assert type(back) is type(obj)
    if what == "module":
        x = mt.ones(2, 3)
        assert np.array_equal(back(x).numpy(force=True), model(x).numpy(force=True))
    elif what == "optimizer":
        assert skeleton(back.state_dict()) == skeleton(opt.state_dict())
    else:
        assert back["epoch"] == 1 and [n for n, _ in back["model"].named_parameters()] \
            == [n for n, _ in model.named_parameters()]
