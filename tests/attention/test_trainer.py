"""The toy-model trainer end to end: it finishes, writes what it promises, resumes exactly,
refuses a corrupt checkpoint, is deterministic, and actually learns sort."""
import dataclasses
import json
import os
import re
import sys

import numpy as np
import pytest

from attention import trainer
from attention.pictures import unicode_heatmap
from attention.trainer import Config, train

TINY = dict(task="sort", layers=1, heads=2, d_model=16, batch=16, eval_every=5, eval_n=50, checkpoint_every=5)


def run(tmp_path, name, capsys=None, **kw):
    cfg = Config(**{**TINY, "out": str(tmp_path / name), **kw})
    return train(cfg)


def test_end_to_end_writes_checkpoint_and_report(tmp_path, capsys):
    result = run(tmp_path, "a", steps=8, pictures=True)
    out = capsys.readouterr().out
    assert result["steps"] == 8
    assert os.path.exists(tmp_path / "a" / "checkpoint.npz")
    assert "== report ==" in out and "held-out exact match" in out and "parameters" in out
    assert 0.0 <= result["heldout_exact_match"] <= 1.0
    assert os.path.exists(tmp_path / "a" / "attention_viewer.html")  # HTML needs no package
    try:
        import matplotlib  # noqa: F401

        assert os.path.exists(tmp_path / "a" / "attention_maps.png")
        assert os.path.exists(tmp_path / "a" / "loss_curve.png")
    except ImportError:
        assert "layer 0 head 1" in out  # the text heatmaps stand in for the pictures


def test_without_matplotlib_the_maps_print_as_text_and_the_viewer_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if matplotlib were not installed
    result = run(tmp_path, "a", steps=3, pictures=True)
    out = capsys.readouterr().out
    viewer = tmp_path / "a" / "attention_viewer.html"
    assert result["files"][1:] == [str(viewer)] and viewer.exists()
    assert "layer 0 head 1" in out and f"open {viewer} in a browser" in out
    assert not (tmp_path / "a" / "attention_maps.png").exists()
    data = json.loads(re.search(r'id="attention-data">(.*?)</script>', viewer.read_text(encoding="utf-8")).group(1))
    assert (data["layers"], data["heads"]) == (1, 2) and data["title"].startswith("sort: prompt")


def test_same_seed_same_losses_bit_for_bit(tmp_path):
    a = run(tmp_path, "a", steps=6, pictures=False, stop_when_perfect=False)
    b = run(tmp_path, "b", steps=6, pictures=False, stop_when_perfect=False)
    la = trainer.mt.load(str(tmp_path / "a" / "checkpoint.npz"))["losses"].numpy(force=True)
    lb = trainer.mt.load(str(tmp_path / "b" / "checkpoint.npz"))["losses"].numpy(force=True)
    assert a["steps"] == b["steps"] == 6
    np.testing.assert_array_equal(la, lb)
    c = run(tmp_path, "c", steps=6, pictures=False, stop_when_perfect=False, seed=1)
    lc = trainer.mt.load(str(tmp_path / "c" / "checkpoint.npz"))["losses"].numpy(force=True)
    assert not np.array_equal(la, lc)  # the seed matters, so the equality above means something


def test_resume_equals_uninterrupted_run(tmp_path):
    kw = dict(pictures=False, stop_when_perfect=False, dropout=0.1)  # dropout: the model's rng must resume too
    run(tmp_path, "full", steps=12, **kw)
    run(tmp_path, "split", steps=7, **kw)
    run(tmp_path, "split", steps=12, resume=True, **kw)
    full = trainer.mt.load(str(tmp_path / "full" / "checkpoint.npz"))
    split = trainer.mt.load(str(tmp_path / "split" / "checkpoint.npz"))
    np.testing.assert_array_equal(full["losses"].numpy(force=True), split["losses"].numpy(force=True))
    for k, v in full["model"].items():
        np.testing.assert_array_equal(v.numpy(force=True), split["model"][k].numpy(force=True), err_msg=k)


def test_corrupt_checkpoint_is_a_clear_error_and_no_fresh_start(tmp_path, capsys):
    run(tmp_path, "a", steps=5, pictures=False)
    path = tmp_path / "a" / "checkpoint.npz"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # a truncated file, as a crash mid-copy would leave
    code = trainer.main(["--out", str(tmp_path / "a"), "--resume", "--steps", "10", "--layers", "1", "--heads", "2",
                         "--d-model", "16", "--batch", "16", "--no-pictures"])
    err = capsys.readouterr().err
    assert code != 0
    assert "checkpoint" in err.lower() and str(path) in err
    assert path.read_bytes() == data[: len(data) // 2]  # untouched: not overwritten by a fresh run


def test_resume_without_checkpoint_refuses(tmp_path, capsys):
    code = trainer.main(["--out", str(tmp_path / "none"), "--resume", "--no-pictures"])
    assert code != 0 and "no checkpoint" in capsys.readouterr().err


def test_resume_with_other_architecture_refuses(tmp_path, capsys):
    run(tmp_path, "a", steps=5, pictures=False)
    code = trainer.main(["--out", str(tmp_path / "a"), "--resume", "--layers", "2", "--heads", "2", "--d-model", "16"])
    assert code != 0 and "--layers" in capsys.readouterr().err


def test_default_model_learns_sort(tmp_path):
    """The README default (3 layers, 3 heads, 48 dims, AdamW 5e-4) on sort, kept short for CI."""
    cfg = dataclasses.replace(Config(), out=str(tmp_path / "sort"), steps=150, eval_every=150, pictures=False)
    result = train(cfg)
    assert result["heldout_distinct_exact_match"] >= 0.9, result


def test_unicode_heatmap_shades_follow_weights():
    w = np.array([[1.0, 0.0], [0.5, 0.5]])
    text = unicode_heatmap(w, ["a", "b"]).splitlines()
    assert text[1].endswith("██  ") and text[2].count("▒") == 4


def test_parse_args_defaults_are_mingpt_sort_demo():
    cfg = trainer.parse_args([])
    assert (cfg.layers, cfg.heads, cfg.d_model, cfg.lr, cfg.beta1, cfg.beta2, cfg.weight_decay, cfg.clip, cfg.batch) == \
        (3, 3, 48, 5e-4, 0.9, 0.95, 0.1, 1.0, 64)
    assert cfg.out == os.path.join("runs", "sort")


@pytest.mark.parametrize("task", ["reverse", "copy", "add"])
def test_other_tasks_train_a_few_steps(tmp_path, task):
    result = run(tmp_path, task, task=task, steps=3, pictures=False)
    assert result["steps"] == 3 and np.isfinite(result["final_loss"])


def test_a_training_step_runs_the_fused_attention(monkeypatch, node_names):
    """The trainer is a speed user: its model asks for the fused path, one node per layer."""
    cfg = Config(**{**TINY, "layers": 2})
    task, model, optimizer, scheduler = trainer.build(cfg)
    seen = []
    cross_entropy = trainer.F.cross_entropy

    def spy(logits, target, *args, **kwargs):
        seen.append(node_names(logits))
        return cross_entropy(logits, target, *args, **kwargs)

    monkeypatch.setattr(trainer.F, "cross_entropy", spy)
    x, y = task.batch(cfg.batch, np.random.default_rng(0))
    trainer.train_step(model, optimizer, scheduler, x, y, cfg.clip)
    (names,) = seen
    assert names.count("FusedAttentionBackward") == 2                # one per layer
    assert "SoftmaxBackward" not in names and "MatmulBackward" not in names


# ---- a malformed checkpoint: `error: ...`, exit 2, and nothing changed ------------------------------

TINY_ARGS = ["--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "16", "--no-pictures", "--steps", "10"]


def _good_checkpoint(tmp_path):
    run(tmp_path, "a", steps=5, pictures=False)
    return tmp_path / "a" / "checkpoint.npz"


def _rewrite(path, change):
    ck = trainer.mt.load(str(path))
    trainer.mt.save(change(ck), str(path))


def _without(key):
    return lambda ck: {k: v for k, v in ck.items() if k != key}


def _with(key, value):
    return lambda ck: {**ck, key: value(ck) if callable(value) else value}


def _flip(offset, bit):
    def flip(path):
        data = bytearray(path.read_bytes())
        data[offset] ^= 1 << bit
        path.write_bytes(bytes(data))
    return flip


MALFORMED = {
    "bare_state_dict": lambda ck: ck["model"],
    "missing_config": _without("config"),
    "missing_optimizer": _without("optimizer"),
    "config_not_json": _with("config", "{layers: 1"),
    "config_not_a_dict": _with("config", "[1, 2]"),
    "scheduler_not_json": _with("scheduler", "???"),
    "wrong_weight_shape": _with("model", lambda ck: {**ck["model"], "head.weight": trainer.mt.zeros(3, 3)}),
    "wrong_optimizer_state": _with("optimizer", lambda ck: {**ck["optimizer"], "param_groups": []}),
    "bad_data_rng_state": _with("data_rng", '{"bit_generator": "PCG64", "state": {"state": "x", "inc": 1}}'),
    "bad_model_rng_state": _with("model_rng", '{"bit_generator": "MT19937"}'),
    "step_not_a_number": _with("step", "many"),
    "evals_not_records": _with("evals", "[1, 2]"),
}
FLIPS = {  # bits in the zip's headers
    "flipped_bit_in_first_local_header": _flip(1, 0),
    "flipped_bit_in_central_directory": _flip(-60, 0),
}


def _flip_in_last_central_header(offset, bit):
    """Flip a bit of a field of the zip's last central directory header (PK 01 02)."""
    def flip(path):
        data = bytearray(path.read_bytes())
        data[data.rindex(b"PK\x01\x02") + offset] ^= 1 << bit
        path.write_bytes(bytes(data))
    return flip


FLIPS["flipped_bit_in_compression_method"] = _flip_in_last_central_header(10, 3)
FLIPS["flipped_bit_in_version_needed"] = _flip_in_last_central_header(6, 6)  # zipfile: NotImplementedError
FLIPS["flipped_bit_in_encryption_flag"] = _flip_in_last_central_header(8, 0)  # zipfile: RuntimeError


@pytest.mark.parametrize("name", list(MALFORMED) + list(FLIPS))
def test_resume_from_a_malformed_checkpoint_prints_error_and_exits_2(tmp_path, capsys, name):
    path = _good_checkpoint(tmp_path)
    if name in MALFORMED:
        _rewrite(path, MALFORMED[name])
    else:
        FLIPS[name](path)
    bad = path.read_bytes()
    capsys.readouterr()
    code = trainer.main(["--out", str(tmp_path / "a"), "--resume", *TINY_ARGS])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and str(path) in err and "Traceback" not in err
    assert path.read_bytes() == bad  # no fresh run wrote over it


def _state(model, optimizer, data_rng):
    params = [p.numpy(force=True).copy() for p in model.parameters()]
    opt = {i: {k: (v.numpy(force=True).copy() if hasattr(v, "numpy") else v) for k, v in st.items()}
           for i, st in enumerate(optimizer.state.values())}
    groups = [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]
    return params, opt, groups, data_rng.bit_generator.state, trainer.mt.get_rng_state()


def _assert_same_state(a, b):
    for x, y in zip(a[0], b[0]):
        np.testing.assert_array_equal(x, y)
    assert a[1].keys() == b[1].keys()
    for i in a[1]:
        for k in a[1][i]:
            np.testing.assert_array_equal(a[1][i][k], b[1][i][k])
    assert a[2:] == b[2:]


@pytest.mark.parametrize("name", ["missing_optimizer", "wrong_optimizer_state", "bad_model_rng_state",
                                  "wrong_weight_shape", "evals_not_records"])
def test_load_checkpoint_that_fails_changes_nothing(tmp_path, name):
    path = _good_checkpoint(tmp_path)
    _rewrite(path, MALFORMED[name])
    cfg = Config(**{**TINY, "out": str(tmp_path / "b"), "seed": 3})
    task, model, optimizer, scheduler = trainer.build(cfg)
    data_rng = np.random.default_rng(3)
    x, y = task.batch(4, data_rng)
    trainer.train_step(model, optimizer, scheduler, x, y, cfg.clip)  # some optimizer state to protect
    before, lr_before = _state(model, optimizer, data_rng), scheduler.state_dict()
    with pytest.raises(trainer.CheckpointError, match="checkpoint.npz"):
        trainer.load_checkpoint(str(path), cfg, model, optimizer, scheduler, data_rng)
    _assert_same_state(before, _state(model, optimizer, data_rng))
    assert scheduler.state_dict() == lr_before


# ---- the command line ---------------------------------------------------------------------------

def test_config_and_command_line_default_to_the_same_folder():
    assert Config().out == os.path.join("runs", "sort") == trainer.parse_args([]).out
    assert Config(task="add").out == os.path.join("runs", "add") == trainer.parse_args(["--task", "add"]).out


@pytest.mark.parametrize("args, message", [
    (["--steps", "0"], "argument --steps: must be at least 1, got 0"),
    (["--batch", "0"], "argument --batch: must be at least 1, got 0"),
    (["--heads", "5"], "argument --heads: 5 heads don't divide --d-model 48"),
    (["--heads", "0"], "argument --heads: must be at least 1, got 0"),
    (["--lr", "-1"], "argument --lr: must be at least 0.0, got -1.0"),
    (["--dropout", "1"], "argument --dropout: must be below 1, got 1.0"),
    (["--threads", "two"], "argument --threads: expected an integer, got 'two'"),
    (["--eval-every", "0"], "argument --eval-every: must be at least 1, got 0"),
])
def test_a_bad_value_is_one_error_line_and_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as stop:
        trainer.parse_args(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("error: " + message), err


def test_help_shows_every_default():
    text = trainer.parser().format_help()
    for option, default in (("--task", "sort"), ("--steps", "2000"), ("--batch", "64"), ("--lr", "0.0005"),
                            ("--heads", "3"), ("--eval-every", "100")):
        options = text.split("options:", 1)[1]
        entry = options.split(f"\n  {option}", 1)[1].split("\n  --", 1)[0]
        assert f"(default: {default})" in " ".join(entry.split()), option


def test_the_report_after_resume_counts_this_runs_steps_and_time(tmp_path, capsys):
    run(tmp_path, "r", steps=5, pictures=False)
    capsys.readouterr()
    result = run(tmp_path, "r", steps=10, pictures=False, resume=True)
    out = capsys.readouterr().out
    assert "steps           10 (5 in this run, resumed at step 5)" in out
    rate = float(out.split("wall time")[1].split("(")[1].split(" steps/s")[0])
    assert rate == pytest.approx(5 / result["wall_time"], rel=0.05, abs=0.1)


class _Terminal:
    """A stream that says it is a terminal, keeping what was written."""

    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_the_progress_bar_ends_full_when_training_stops_early(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tqdm", None)  # the plain bar
    screen = _Terminal()
    bar = trainer.Progress(2000, 0, screen)
    for step in range(1, 301):
        bar.update(step, 0.5)
    bar.close(300)
    last = screen.text.rstrip("\n").split("\r")[-1]
    assert "[" + "#" * 30 + "] step 300/300" in last, last
