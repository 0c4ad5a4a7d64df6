"""Whole objects in checkpoints (`save(model, f)`), the allow-list that `load(weights_only=True)` keeps,
and hostile pickles: refused by name, and nothing in them runs."""
import io
import os
import pickle

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import serialization as S
from minitensor.serialization import CheckpointError, WeightsOnlyError


class Net(nn.Module):  # a user's class: not allowed until allow-listed
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(4, 2)
        self.head = nn.Linear(2, 4)
        self.head.weight = self.emb.weight  # tied
        self.register_buffer("steps", mt.tensor(3))
        self.meta = {"sizes": (1, 2.5), "tags": {"a"}, "dtype": mt.float64}

    def forward(self, i):
        return self.head(self.emb(i))


class Boom:
    """Unpickling this runs os.system: it writes the marker file if a loader executes it."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(autouse=True)
def _no_leftover_safe_globals():
    yield
    S.clear_safe_globals()


def saved(obj):
    buf = io.BytesIO()
    mt.save(obj, buf)
    buf.seek(0)
    return buf


def test_a_user_module_needs_allow_listing_and_then_round_trips():
    net = Net()
    buf = saved(net)
    with pytest.raises(WeightsOnlyError, match=r"Unsupported global: GLOBAL .*Net .*add_safe_globals") as err:
        mt.load(buf)
    assert isinstance(err.value, pickle.UnpicklingError) and isinstance(err.value, CheckpointError)
    buf.seek(0)
    with S.safe_globals([Net]):
        assert S.get_safe_globals() == [Net]
        back = mt.load(buf)
    assert S.get_safe_globals() == []  # the block's entries are gone after it
    i = mt.tensor([0, 3])
    assert np.array_equal(back(i).numpy(force=True), net(i).numpy(force=True))
    assert back.head.weight is back.emb.weight and isinstance(back.emb.weight, nn.Parameter)
    assert back.meta == net.meta and back.steps.item() == 3
    buf.seek(0)
    # the tensors are plain members, under the model's state-dict names
    assert {"emb.weight", "head.bias", "steps"} <= set(np.load(buf).files)


def test_minitensor_modules_and_optimizers_load_without_listing():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.LayerNorm(2))
    opt = mt.optim.Adam(seq.parameters(), lr=0.1)
    seq(mt.ones(1, 2)).sum().backward()
    opt.step()
    back = mt.load(saved({"model": seq, "optim": opt, "epoch": 2}))
    assert repr(back["model"]) == repr(seq) and back["epoch"] == 2
    assert back["optim"].param_groups[0]["params"][0] is back["model"][0].weight  # one tensor, as saved


def test_add_safe_globals_and_pairs():
    S.add_safe_globals([(Net, f"{Net.__module__}.Net")])
    assert isinstance(mt.load(saved(Net())), Net)
    S.clear_safe_globals()
    assert S.get_safe_globals() == []
    with pytest.raises(TypeError, match="add_safe_globals"):
        S.add_safe_globals(Net)
    with pytest.raises(TypeError, match="safe_globals"):
        S.safe_globals([3])


@pytest.mark.parametrize("where", ["raw pickle", "inside a checkpoint"])
def test_a_hostile_pickle_is_refused_and_nothing_runs(tmp_path, where):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    if where == "raw pickle":
        path.write_bytes(pickle.dumps({"w": Boom(marker)}, protocol=2))
    else:
        mt.save({"w": mt.ones(1), "x": Boom(marker)}, path)
    with pytest.raises(WeightsOnlyError, match=r"Unsupported global: GLOBAL (posix|nt|os)\.system") as err:
        mt.load(path)
    assert "evil.pt" in str(err.value) and "weights_only" in str(err.value)
    assert not marker.exists()


def test_a_pickle_naming_an_unimported_module_imports_nothing(tmp_path):
    # GLOBAL minitensor.not_a_module.X: the name is refused before any import is tried
    data = b"\x80\x02cminitensor.not_a_module\nX\nq\x00)\x81q\x01."
    with pytest.raises(WeightsOnlyError, match="minitensor.not_a_module.X"):
        mt.load(io.BytesIO(data))
    assert "minitensor.not_a_module" not in __import__("sys").modules
    for name in ("minitensor.save", "minitensor.nn.functional.relu", "minitensor.tensor.Tensor"):
        module, _, attr = name.rpartition(".")
        with pytest.raises(WeightsOnlyError):  # functions (save writes files!) and non-module classes
            mt.load(io.BytesIO(b"\x80\x02c" + module.encode() + b"\n" + attr.encode() + b"\nq\x00."))


def test_weights_only_false_loads_anything():
    buf = io.BytesIO(pickle.dumps({"a": np.float64(1.5), "b": Net}))
    assert mt.load(buf, weights_only=False)["b"] is Net
    assert isinstance(mt.load(saved(Net()), weights_only=False), Net)
    with pytest.raises(RuntimeError, match="pickle_module"):
        mt.load(saved({"w": mt.ones(1)}), pickle_module=pickle, weights_only=True)


def test_unpicklable_objects_are_refused_before_writing(tmp_path):
    path = tmp_path / "m.pt"
    net = nn.Linear(1, 1)
    net.register_forward_hook(lambda *a: None)  # a lambda can't be pickled
    with pytest.raises(TypeError, match="can't be pickled.*state_dict"):
        mt.save(net, path)
    assert os.listdir(tmp_path) == []


def test_torch_onnx_stands_in():
    from minitensor import onnx

    assert onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="onnx.export is not available"):
        onnx.export(nn.Linear(1, 1), (mt.ones(1),), "m.onnx")


def test_tensorboard_summary_writer(tmp_path):
    pytest.importorskip("tensorboard")
    from minitensor.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("loss", mt.tensor(0.5), 1)
    assert any(n.startswith("events.out.tfevents") for n in os.listdir(tmp_path))
