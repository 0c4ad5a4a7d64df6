"""save/load: bit-exact round trips, atomic writes, and clear errors that leave everything unchanged."""
import io
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
import minitensor.nn as nn
from minitensor.optim import AdamW
from minitensor.serialization import CheckpointError


def model():
    mt.manual_seed(0)
    return nn.Sequential(nn.Embedding(5, 4), nn.LayerNorm(4), nn.Linear(4, 3))


def trained():
    net = model()
    opt = AdamW(net.parameters(), lr=0.01)
    for _ in range(2):
        opt.zero_grad()
        net(mt.tensor([1, 2, 3])).pow(2).sum().backward()
        opt.step()
    return net, opt


def same_bits(a, b):
    a = a.numpy(force=True) if isinstance(a, mt.Tensor) else a
    b = b.numpy(force=True) if isinstance(b, mt.Tensor) else b
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def snapshot(net):
    return {k: v.numpy(force=True).copy() for k, v in net.state_dict().items()}


def assert_unchanged(net, before):
    after = snapshot(net)
    assert after.keys() == before.keys()
    assert all(same_bits(after[k], before[k]) for k in before)


# ---- round trips ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_model_round_trip_is_bit_exact(tmp_path, dtype):
    net = model().to(dtype)
    path = tmp_path / "model.ckpt"
    mt.save(net.state_dict(), path)
    loaded = mt.load(path)
    assert list(loaded) == list(net.state_dict())
    for k, v in net.state_dict().items():
        assert isinstance(loaded[k], mt.Tensor) and same_bits(loaded[k], v), k
    fresh = model().to(dtype)
    nn.init.zeros_(fresh[2].weight)
    fresh.load_state_dict(loaded)
    assert all(same_bits(a, b) for a, b in zip(fresh.parameters(), net.parameters()))
    assert os.listdir(tmp_path) == ["model.ckpt"]  # no suffix added, no temp file left


@pytest.mark.slow  # loads a checkpoint once per bit
@given(hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64, np.int64, np.int32, np.bool_, np.uint8, np.float16]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
))
def test_any_array_round_trips_bit_exactly(arr):
    buf = io.BytesIO()
    mt.save({"x": arr, "t": mt.tensor(arr) if arr.dtype.kind == "f" else arr}, buf)
    buf.seek(0)
    out = mt.load(buf)
    assert same_bits(out["x"], arr) and same_bits(out["t"], arr)  # NaN payloads and -0.0 included


def test_checkpoint_with_model_optimizer_and_plain_values(tmp_path):
    net, opt = trained()
    ckpt = {"model": net.state_dict(), "optim": opt.state_dict(), "step": 100, "loss": 0.125,
            "name": "toy", "done": False, "note": None, "shape": (2, 3), "history": [1.5, float("inf")]}
    path = tmp_path / "ckpt.npz"
    mt.save(ckpt, path)
    out = mt.load(path)
    assert out["step"] == 100 and out["loss"] == 0.125 and out["name"] == "toy" and out["done"] is False
    assert out["note"] is None and out["shape"] == (2, 3) and out["history"] == [1.5, float("inf")]
    assert list(out["optim"]["state"]) == [0, 1, 2, 3, 4]  # int keys stay ints
    assert out["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    net2 = model()
    opt2 = AdamW(net2.parameters(), lr=0.5)
    net2.load_state_dict(out["model"])
    opt2.load_state_dict(out["optim"])
    for p, q in zip(net.parameters(), net2.parameters()):
        assert same_bits(p, q)
        for k in ("exp_avg", "exp_avg_sq"):
            assert same_bits(opt.state[p][k], opt2.state[q][k])
    assert opt2.param_groups[0]["lr"] == 0.01


def test_file_is_a_flat_npz_named_like_the_state_dict(tmp_path):
    net, opt = trained()
    path = tmp_path / "m.npz"
    mt.save(net.state_dict(), path)
    with np.load(path, allow_pickle=False) as z:
        assert [n for n in z.files if not n.startswith("__")] == list(net.state_dict())
    mt.save({"model": net.state_dict(), "optim": opt.state_dict()}, path)
    with np.load(path, allow_pickle=False) as z:
        assert "model.2.weight" in z.files and "optim.state.0.exp_avg" in z.files


def test_dotted_name_collisions_are_kept_apart(tmp_path):
    obj = {"a.b": mt.ones(1), "a": {"b": mt.zeros(1)}, "__minitensor__": mt.full((1,), 2.0)}
    mt.save(obj, tmp_path / "c")
    out = mt.load(tmp_path / "c")
    assert out["a.b"].item() == 1 and out["a"]["b"].item() == 0 and out["__minitensor__"].item() == 2


def test_a_plain_npz_loads_as_a_flat_dict(tmp_path):
    np.savez(tmp_path / "plain.npz", w=np.arange(3.0), b=np.zeros(2, dtype=np.float32))
    out = mt.load(tmp_path / "plain.npz")
    assert set(out) == {"w", "b"} and same_bits(out["w"], np.arange(3.0))


def test_unsupported_values_are_refused_before_writing(tmp_path):
    path = tmp_path / "keep.ckpt"
    mt.save({"w": mt.ones(2)}, path)
    original = path.read_bytes()
    with pytest.raises(TypeError, match="'model.extra'"):  # (a set is pickled, as torch.save does; a lambda can't be)
        mt.save({"model": {"extra": lambda x: x}}, path)
    with pytest.raises(TypeError, match="dtype object"):
        mt.save({"w": np.array([{}], dtype=object)}, path)
    with pytest.raises(TypeError, match="keys must be str or int"):
        mt.save({(1, 2): mt.ones(1)}, path)
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="cycle"):
        mt.save(cyclic, path)
    assert path.read_bytes() == original and os.listdir(tmp_path) == ["keep.ckpt"]


# ---- atomic writes --------------------------------------------------------------------------------
@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_a_crash_in_the_middle_of_a_save_leaves_the_previous_file(tmp_path, monkeypatch, exc):
    path = tmp_path / "model.ckpt"
    old = model()
    mt.save(old.state_dict(), path)
    original = path.read_bytes()

    real_write = np.lib.format.write_array
    calls = []

    def write_then_crash(fp, array, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:  # some members are already written: the temp file is half done
            raise exc
        return real_write(fp, array, *args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", write_then_crash)
    new = model()
    nn.init.ones_(new[2].weight)
    with pytest.raises(type(exc)):
        mt.save(new.state_dict(), path)
    monkeypatch.undo()
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["model.ckpt"]  # the temp file was removed
    loaded = mt.load(path)
    assert same_bits(loaded["2.weight"], old[2].weight)


def test_save_goes_through_a_temp_file_and_os_replace(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append((os.path.dirname(src), os.path.basename(dst), os.path.exists(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    path = tmp_path / "m.ckpt"
    mt.save({"w": mt.ones(1)}, path)
    mt.save({"w": mt.zeros(1)}, path)
    assert seen == [(str(tmp_path), "m.ckpt", False), (str(tmp_path), "m.ckpt", True)]
    assert mt.load(path)["w"].item() == 0


# ---- bad files ----------------------------------------------------------------------------------
class _Trap:
    """Unpickling this creates a marker file: proof that a loader ran code from the file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickled_and_object_array_files_are_refused_without_running_code(tmp_path):
    marker = tmp_path / "pwned"
    net = model()
    before = snapshot(net)
    obj_npz = tmp_path / "object.npz"
    np.savez(obj_npz, **{"2.weight": np.array([_Trap(str(marker))], dtype=object)})
    with pytest.raises(CheckpointError, match="object.npz"):
        mt.load(obj_npz)
    raw_pickle = tmp_path / "model.pkl"
    raw_pickle.write_bytes(pickle.dumps({"2.weight": _Trap(str(marker))}))
    with pytest.raises(CheckpointError, match="model.pkl"):
        mt.load(raw_pickle)
    assert not marker.exists()
    assert_unchanged(net, before)


@pytest.mark.parametrize("cut", [0, 10, 0.5, -1, -30])
def test_truncated_files_raise_a_clear_error(tmp_path, cut):
    path = tmp_path / "model.ckpt"
    mt.save(model().state_dict(), path)
    data = path.read_bytes()
    n = int(len(data) * cut) if isinstance(cut, float) else (cut if cut >= 0 else len(data) + cut)
    path.write_bytes(data[:n])
    with pytest.raises(CheckpointError, match="model.ckpt") as err:
        mt.load(path)
    assert isinstance(err.value, RuntimeError)


def test_corrupted_bytes_are_detected(tmp_path):
    path = tmp_path / "model.ckpt"
    mt.save(model().state_dict(), path)
    data = bytearray(path.read_bytes())
    start = data.index(b"\x93NUMPY", 200)  # inside the second member: flip some of its payload
    data[start + 140:start + 144] = b"\xff\xff\xff\xff"
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="model.ckpt"):
        mt.load(path)


def test_missing_file_and_npy_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        mt.load(tmp_path / "nope.ckpt")
    np.save(tmp_path / "a.npy", np.zeros(2))
    with pytest.raises(CheckpointError, match="single .npy array"):
        mt.load(tmp_path / "a.npy")


def test_inconsistent_metadata_is_an_error(tmp_path):
    path = tmp_path / "m.ckpt"
    mt.save({"w": mt.ones(1)}, path)
    with np.load(path) as z:
        members = {k: z[k] for k in z.files}
    members["stray"] = np.zeros(1)
    np.savez(path, **members)
    os.replace(str(path) + ".npz", path)
    with pytest.raises(CheckpointError, match="stray"):
        mt.load(path)
    del members["stray"], members["w"]
    np.savez(path, **members)
    os.replace(str(path) + ".npz", path)
    with pytest.raises(CheckpointError, match="'w' is missing"):
        mt.load(path)


def test_a_shape_mismatched_checkpoint_changes_nothing(tmp_path):
    path = tmp_path / "small.ckpt"
    mt.save(nn.Sequential(nn.Embedding(5, 4), nn.LayerNorm(4), nn.Linear(4, 2)).state_dict(), path)
    net = model()
    before = snapshot(net)
    with pytest.raises(RuntimeError, match=r"size mismatch for 2.weight.*\n.*size mismatch for 2.bias"):
        net.load_state_dict(mt.load(path))
    assert_unchanged(net, before)


# ---- every corruption is a CheckpointError; killed saves leave nothing behind for good -----------
@pytest.mark.slow  # loads a checkpoint once per bit
def test_every_flipped_bit_loads_the_same_data_or_raises_checkpoint_error(tmp_path):
    # zip headers included: a flipped bit there made zipfile ask for an unknown compression method
    # (NotImplementedError) or a password (RuntimeError)
    path = tmp_path / "small.ckpt"
    state = {"w": mt.arange(6).reshape(2, 3).float(), "step": 3, "config": {"layers": [1, 2]}}
    mt.save(state, path)
    data = path.read_bytes()
    for i in range(len(data)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            path.write_bytes(bytes(flipped))
            try:
                loaded = mt.load(path)
            except CheckpointError as e:
                assert "small.ckpt" in str(e)
                continue
            assert loaded["step"] == 3 and loaded["config"] == {"layers": [1, 2]}, (i, bit)
            assert same_bits(loaded["w"], state["w"]), (i, bit)


def test_a_member_that_is_not_npy_is_a_checkpoint_error(tmp_path):
    import zipfile

    path = tmp_path / "odd.npz"
    with zipfile.ZipFile(path, "w") as zf:
        with zf.open("w.npy", "w") as member:
            np.lib.format.write_array(member, np.zeros(2))
        zf.writestr("notes.txt", b"not an array")
    with pytest.raises(CheckpointError, match=r"odd\.npz.*'notes\.txt'.*not a \.npy"):
        mt.load(path)


def _temp_name(target, tag):
    return f".{target}.{tag}.tmp"


def test_a_save_removes_the_stale_temporaries_of_its_target_only(tmp_path):
    path = tmp_path / "model.ckpt"
    old = time.time() - 60
    stale = [_temp_name("model.ckpt", "abc_1234"), _temp_name("model.ckpt", "zz9z9z9z")]
    kept = [
        _temp_name("other.ckpt", "abc_1234"),  # another target's
        _temp_name("model.ckpt", "abc"),  # not the temp pattern (too short)
        ".model.ckpt.abc_1234.tmp.bak",
        "model.ckpt.abc_1234.tmp",  # no leading dot
        _temp_name("model.ckptX", "abc_1234"),
    ]
    for name in stale + kept:
        (tmp_path / name).write_bytes(b"half a checkpoint")
        os.utime(tmp_path / name, (old, old))
    (tmp_path / _temp_name("model.ckpt", "dir_0000")).mkdir()  # a folder of that name is not ours
    os.utime(tmp_path / _temp_name("model.ckpt", "dir_0000"), (old, old))
    fresh = tmp_path / _temp_name("model.ckpt", "fresh_00")  # a save still running elsewhere
    fresh.write_bytes(b"being written")
    os.utime(fresh, (time.time() + 60, time.time() + 60))
    mt.save({"w": mt.ones(2)}, path)
    left = sorted(os.listdir(tmp_path))
    assert left == sorted(kept + ["model.ckpt", _temp_name("model.ckpt", "dir_0000"), fresh.name])
    assert mt.load(path)["w"].tolist() == [1.0, 1.0]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs kill -9")
def test_a_save_killed_mid_write_leaves_a_temp_file_the_next_save_removes(tmp_path):
    path = tmp_path / "model.ckpt"
    mt.save({"w": mt.zeros(3)}, path)
    script = (
        "import os, signal, numpy as np, minitensor as mt\n"
        "real = np.lib.format.write_array\n"
        "calls = []\n"
        "def write(*a, **k):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 2:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(*a, **k)\n"
        "np.lib.format.write_array = write\n"
        f"mt.save({{'w': mt.ones(3), 'v': mt.ones(2)}}, {str(path)!r})\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, "-c", script], env=env)
    assert result.returncode == -signal.SIGKILL
    temps = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(temps) == 1 and temps[0].startswith(".model.ckpt.")
    assert mt.load(path)["w"].tolist() == [0.0, 0.0, 0.0]  # the previous checkpoint is intact
    mt.save({"w": mt.full((3,), 2.0)}, path)
    assert os.listdir(tmp_path) == ["model.ckpt"]
    assert mt.load(path)["w"].tolist() == [2.0, 2.0, 2.0]


# ---- hostile files: a forged header, deep metadata, a big-endian array (issue 31) ------------------
def _npz_with_member(path, name, header, payload=b""):
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        with zf.open(name, "w") as member:
            np.lib.format.write_array_header_1_0(member, header)
            member.write(payload)


@pytest.mark.parametrize("shape", [(2 ** 40,), (2 ** 20, 2 ** 20), (3,)])
def test_a_header_claiming_more_than_its_member_holds_is_a_checkpoint_error(tmp_path, shape):
    path = tmp_path / "forged.npz"
    _npz_with_member(path, "w.npy", {"descr": "<f8", "fortran_order": False, "shape": shape}, b"\0" * 16)
    with pytest.raises(CheckpointError, match=r"forged\.npz.*'w'.*claims shape .* holds only 16 bytes"):
        mt.load(path)


def test_metadata_nested_too_deeply_is_a_checkpoint_error(tmp_path):
    path = tmp_path / "deep.ckpt"
    depth = 100_000
    root = '{"t": "list", "items": [' * depth + "]}" * depth
    meta = '{"format": "minitensor.checkpoint", "version": 1, "root": ' + root + "}"
    np.savez(path, __minitensor__=np.frombuffer(meta.encode(), dtype=np.uint8))
    os.replace(str(path) + ".npz", path)
    with pytest.raises(CheckpointError, match=r"deep\.ckpt.*nested too deeply"):
        mt.load(path)


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i8", ">c16"])
def test_a_big_endian_array_loads_in_native_order_with_its_numbers(tmp_path, dtype):
    values = (np.arange(6).reshape(2, 3) - 2.5 if dtype[1] in "fc" else np.arange(6).reshape(2, 3) - 2).astype(dtype)
    path = tmp_path / "big.npz"
    np.savez(path, w=values)
    loaded = mt.load(path)["w"]
    assert loaded.dtype == np.dtype(dtype).newbyteorder("=") and loaded.numpy().dtype.isnative
    np.testing.assert_array_equal(loaded.numpy(), values)
    assert str(loaded.dtype) in ("minitensor.float64", "minitensor.float32", "minitensor.int64",
                                 "minitensor.complex128")
