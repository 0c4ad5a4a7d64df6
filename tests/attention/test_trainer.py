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
from attention.chars import CharsTask
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
    assert data["prompt_len"] == trainer.make_task(Config(**TINY)).prompt_len  # where the answer begins


def test_same_seed_same_losses_bit_for_bit(tmp_path):
    a = run(tmp_path, "a", steps=6, pictures=False, stop_when_perfect=False)
    b = run(tmp_path, "b", steps=6, pictures=False, stop_when_perfect=False)
    la = trainer.mt.load(str(tmp_path / "a" / "checkpoint.npz"))["losses"].numpy(force=True)
    lb = trainer.mt.load(str(tmp_path / "b" / "checkpoint.npz"))["losses"].numpy(force=True)
    assert a["steps"] == b["steps"] == 6
    np.testing.assert_array_equal(la, lb)
    run(tmp_path, "c", steps=6, pictures=False, stop_when_perfect=False, seed=1)
    lc = trainer.mt.load(str(tmp_path / "c" / "checkpoint.npz"))["losses"].numpy(force=True)
    assert not np.array_equal(la, lc)  # the seed matters, so the equality above means something


@pytest.mark.slow  # trains the default model to 100%
@pytest.mark.parametrize("task, dropout", [("sort", 0.0), ("reverse", 0.1)])
def test_replayed_steps_train_exactly_as_eager_ones(tmp_path, task, dropout):
    """The trainer's default replays each step (minitensor.fast.Replay); --no-replay runs them
    eagerly: the same losses and the same weights, bit for bit."""
    kw = dict(task=task, dropout=dropout, steps=8, pictures=False, stop_when_perfect=False)
    run(tmp_path, "replayed", **kw)
    run(tmp_path, "eager", replay=False, **kw)
    a, b = (trainer.mt.load(str(tmp_path / name / "checkpoint.npz")) for name in ("replayed", "eager"))
    np.testing.assert_array_equal(a["losses"].numpy(force=True), b["losses"].numpy(force=True))
    for key, value in a["model"].items():
        np.testing.assert_array_equal(value.numpy(force=True), b["model"][key].numpy(force=True))


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


@pytest.mark.slow  # a full training run
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
    assert (cfg.layers, cfg.heads, cfg.d_model, cfg.lr, cfg.beta1, cfg.beta2, cfg.weight_decay, cfg.clip,
            cfg.batch) == (3, 3, 48, 5e-4, 0.9, 0.95, 0.1, 1.0, 64)
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


@pytest.fixture(scope="module")
def _good_checkpoint_bytes(tmp_path_factory):
    """A 5-step run's checkpoint, trained once for the module's many malformed-checkpoint cases."""
    folder = tmp_path_factory.mktemp("good")
    run(folder, "a", steps=5, pictures=False)
    return (folder / "a" / "checkpoint.npz").read_bytes()


@pytest.fixture
def _good_checkpoint(tmp_path, _good_checkpoint_bytes):
    """A fresh copy of that checkpoint in this test's own `a` folder, to damage as it likes."""
    (tmp_path / "a").mkdir()
    path = tmp_path / "a" / "checkpoint.npz"
    path.write_bytes(_good_checkpoint_bytes)
    return path


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
def test_resume_from_a_malformed_checkpoint_prints_error_and_exits_2(tmp_path, capsys, name, _good_checkpoint):
    path = _good_checkpoint
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
def test_load_checkpoint_that_fails_changes_nothing(tmp_path, name, _good_checkpoint):
    path = _good_checkpoint
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


def _help_entry(option):
    options = trainer.parser().format_help().split("options:", 1)[1]
    return " ".join(options.split(f"\n  {option}", 1)[1].split("\n  --", 1)[0].split())


def test_help_shows_every_default():
    for option, default in (("--task", "sort"), ("--seed", "0"), ("--eval-n", "1000"), ("--temperature", "1.0")):
        assert f"(default: {default})" in _help_entry(option), option
    # a default that depends on the task shows both: the toy tasks' and the character model's
    toy, chars = trainer.TASK_DEFAULTS["toy"], trainer.TASK_DEFAULTS["chars"]
    assert (toy["steps"], toy["batch"], toy["lr"], toy["heads"], toy["eval_every"]) == (2000, 64, 5e-4, 3, 100)
    for key in ("steps", "batch", "lr", "heads", "eval_every", "sample", "layers", "d_model", "schedule"):
        option = "--" + key.replace("_", "-")
        assert f"(default: {toy[key]}; chars: {chars[key]})" in _help_entry(option), option
    assert f"(default: chars: {chars['block_size']})" in _help_entry("--block-size")
    assert "pride_and_prejudice.txt" in _help_entry("--data")


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


# ---- the character model: --task chars ------------------------------------------------------------

# 120 short lines of 8 words from 12: a text the tiny model can start to learn in a few steps
_WORDS = "the cat sat on a mat and dog ran to its log".split()
TEXT = "".join(" ".join(np.random.default_rng(i).choice(_WORDS, size=8)) + ".\n" for i in range(120))
CHARS = dict(task="chars", block_size=16, layers=1, heads=2, d_model=16, batch=8, eval_every=5, eval_n=50,
             checkpoint_every=5, warmup=0, sample=0)


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text(TEXT, encoding="utf-8")
    return str(path)


def run_chars(tmp_path, name, data, **kw):
    return train(Config(**{**CHARS, "data": data, "out": str(tmp_path / name), "pictures": False, **kw}))


def test_config_for_chars_takes_the_character_models_defaults():
    cfg, toy = Config(task="chars"), Config()
    for key, value in trainer.TASK_DEFAULTS["chars"].items():
        assert getattr(cfg, key) == value, key
    for key, value in trainer.TASK_DEFAULTS["toy"].items():
        assert getattr(toy, key) == value, key
    assert Config(task="chars", layers=5).layers == 5  # what is given wins
    assert cfg.out == os.path.join("runs", "chars") and cfg.data == ""


def test_a_chars_run_reports_heldout_loss_and_bits_per_character_and_prints_samples(tmp_path, text_file, capsys):
    result = run_chars(tmp_path, "a", text_file, steps=10, sample=30)
    out = capsys.readouterr().out
    assert result["steps"] == 10  # no early stop: a loss is never "perfect"
    n_heldout = round(0.1 * len(TEXT))
    scored = (n_heldout - 1) // 16 * 16
    assert f"held-out: the last {n_heldout} characters, {scored} of them scored ({scored // 16} windows of 16)" in out
    assert "step 10: held-out loss" in out and "bits per character)" in out
    assert f"held-out loss   {result['heldout_loss']:.4f} nats = {result['heldout_bpc']:.3f} bits per character" in out
    assert result["heldout_bpc"] == pytest.approx(result["heldout_loss"] / np.log(2))
    assert result["heldout_chars"] == scored
    assert "--- sample at step 5 (30 characters) ---" in out and "--- sample after training (30 characters) ---" in out
    text = out.split("--- sample after training (30 characters) ---\n", 1)[1].split("\n---\n", 1)[0]
    assert text == result["sample"] and len(text) == 30 and set(text) <= set(TEXT)
    ck = trainer.mt.load(str(tmp_path / "a" / "checkpoint.npz"))
    assert json.loads(ck["vocab"]) == sorted(set(TEXT))
    assert [e["step"] for e in json.loads(ck["evals"])] == [5, 10]


def test_a_chars_run_draws_a_line_of_heldout_text_labelled_by_its_characters(tmp_path, text_file, capsys,
                                                                              monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # the text heatmaps, readable in the output
    result = run_chars(tmp_path, "p", text_file, steps=5, pictures=True)
    out = capsys.readouterr().out
    viewer = tmp_path / "p" / "attention_viewer.html"
    assert result["files"][1:] == [str(viewer)] and "layer 0 head 1" in out
    data = json.loads(re.search(r'id="attention-data">(.*?)</script>', viewer.read_text(encoding="utf-8")).group(1))
    labels = data["queries"]
    text = "".join(labels).replace("·", " ").replace("↵", "\n")  # the glyphs back to the characters
    assert len(labels) == 16 and data["title"] == f"chars: {text!r}"
    assert "\n" + text in TEXT[int(0.85 * len(TEXT)):]  # held-out text, from the beginning of a line
    assert " ".join(labels[:4]) in out  # the text heatmaps carry the same labels


def test_the_heldout_loss_is_the_mean_cross_entropy_of_every_scored_character(tmp_path, text_file):
    cfg = Config(**{**CHARS, "data": text_file, "out": str(tmp_path / "x")})
    task, model, _, _ = trainer.build(cfg)
    record = trainer.HeldoutLoss(task, cfg.eval_n)(model, 0)
    x, y = task.heldout_windows()
    with trainer.mt.no_grad():
        logits = model.eval()(trainer.mt.from_numpy(x)).numpy(force=True).astype(np.float64)  # (m, T, vocab)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    want = -np.take_along_axis(logp, y[..., None], -1).mean()
    assert record["loss"] == pytest.approx(want, rel=1e-5)
    assert record["bpc"] == pytest.approx(want / np.log(2), rel=1e-5)


def test_samples_change_nothing_in_the_run_and_repeat_with_the_seed(tmp_path, text_file):
    quiet = run_chars(tmp_path, "quiet", text_file, steps=10, dropout=0.1)
    loud = run_chars(tmp_path, "loud", text_file, steps=10, dropout=0.1, sample=25)
    again = run_chars(tmp_path, "again", text_file, steps=10, dropout=0.1, sample=25)
    other = run_chars(tmp_path, "other", text_file, steps=10, dropout=0.1, sample=25, seed=1)
    losses = [trainer.mt.load(str(tmp_path / n / "checkpoint.npz"))["losses"].numpy(force=True)
              for n in ("quiet", "loud")]
    np.testing.assert_array_equal(*losses)
    assert quiet["heldout_loss"] == loud["heldout_loss"]
    assert loud["sample"] == again["sample"] != other["sample"]


def test_chars_resume_equals_the_uninterrupted_run(tmp_path, text_file):
    kw = dict(dropout=0.1, sample=20, schedule="constant")  # (a cosine schedule's shape depends on --steps)
    full = run_chars(tmp_path, "full", text_file, steps=12, **kw)
    run_chars(tmp_path, "split", text_file, steps=7, **kw)
    split = run_chars(tmp_path, "split", text_file, steps=12, resume=True, **kw)
    a = trainer.mt.load(str(tmp_path / "full" / "checkpoint.npz"))
    b = trainer.mt.load(str(tmp_path / "split" / "checkpoint.npz"))
    np.testing.assert_array_equal(a["losses"].numpy(force=True), b["losses"].numpy(force=True))
    for k, v in a["model"].items():
        np.testing.assert_array_equal(v.numpy(force=True), b["model"][k].numpy(force=True), err_msg=k)
    assert json.loads(a["evals"])[-1] == json.loads(b["evals"])[-1] and a["vocab"] == b["vocab"]
    assert full["sample"] == split["sample"] and full["heldout_loss"] == split["heldout_loss"]


def test_resuming_on_a_text_with_other_characters_or_another_block_size_is_refused(tmp_path, text_file, capsys):
    run_chars(tmp_path, "a", text_file, steps=5)
    other = tmp_path / "other.txt"
    other.write_text(TEXT.upper(), encoding="utf-8")
    base = ["--task", "chars", "--out", str(tmp_path / "a"), "--resume", "--steps", "8", "--layers", "1",
            "--heads", "2", "--d-model", "16", "--batch", "8", "--no-pictures"]
    assert trainer.main(base + ["--data", str(other), "--block-size", "16"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "other characters" in err and err.count("\n") == 1
    assert trainer.main(base + ["--data", text_file, "--block-size", "8"]) == 2
    assert "--block-size 16, but this run asks for 8" in capsys.readouterr().err
    ck = trainer.mt.load(str(tmp_path / "a" / "checkpoint.npz"))
    assert int(ck["step"]) == 5  # untouched


def test_a_chars_checkpoint_without_its_vocabulary_is_refused(tmp_path, text_file, capsys):
    run_chars(tmp_path, "a", text_file, steps=5)
    _rewrite(tmp_path / "a" / "checkpoint.npz", _without("vocab"))
    with pytest.raises(trainer.CheckpointError, match="missing vocab"):
        run_chars(tmp_path, "a", text_file, steps=8, resume=True)


def test_the_chars_pictures_label_the_characters(tmp_path, text_file, capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # the text heatmaps
    run_chars(tmp_path, "p", text_file, steps=2, pictures=True)
    out = capsys.readouterr().out
    heldout = CharsTask(TEXT, block_size=16).decode(CharsTask(TEXT, block_size=16).heldout_ids)
    start = heldout.index("\n") + 1  # the first whole line of the held-out text
    labels = "".join(f"{'·' if c == ' ' else '↵' if c == chr(10) else c:>2}" for c in heldout[start:start + 16])
    assert "\nlayer 0 head 1\n    " + labels + "\n" in out


# ---- the command line for chars -----------------------------------------------------------------

TINY_CHARS = ["--task", "chars", "--block-size", "16", "--layers", "1", "--heads", "2", "--d-model", "16",
              "--batch", "8", "--eval-every", "5", "--no-pictures"]


def _cli_error(args, capsys):
    with pytest.raises(SystemExit) as stop:
        trainer.parse_args(args)
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and lines[-1].startswith("usage: ") is False
    return lines[-1]


def test_bad_data_files_are_one_error_line_and_exit_2(tmp_path, capsys):
    missing, empty, latin, short = (tmp_path / n for n in ("missing.txt", "empty.txt", "latin.txt", "short.txt"))
    empty.write_bytes(b"")
    latin.write_bytes("naïve text".encode("latin-1"))
    short.write_text("too short", encoding="utf-8")
    for path, message in ((missing, "cannot read {p}: No such file or directory"), (empty, "{p} is empty"),
                          (latin, "{p} is not UTF-8 text (byte 2: invalid"),
                          (short, "{p} has 9 characters; block_size 16 needs at least 34")):
        line = _cli_error(["--task", "chars", "--data", str(path), "--block-size", "16"], capsys)
        assert ("error: argument --data: " + message.format(p=path)) in line, line


@pytest.mark.parametrize("args, message", [
    (["--data", "x.txt"], "argument --data: only for --task chars (the sort task has no text to read or write)"),
    (["--task", "add", "--sample", "10"], "argument --sample: only for --task chars (the add task has no text"),
    (["--block-size", "32"], "argument --block-size: only for --task chars"),
    (["--prompt", "x"], "argument --prompt: only for --task chars"),
    (["--task", "chars", "--prompt", "¿Qué?"], "argument --prompt: '¿Qué?' has characters the model never saw: 'Q¿é'"),
    (["--task", "chars", "--prompt", ""], "argument --prompt: needs at least one character to continue"),
    (["--task", "chars", "--top-k", "0"], "argument --top-k: must be at least 1, got 0"),
    (["--task", "chars", "--temperature", "-1"], "argument --temperature: must be at least 0.0, got -1.0"),
    (["--task", "chars", "--sample", "-5"], "argument --sample: must be at least 0, got -5"),
    (["--task", "chars", "--heads", "3"], "argument --heads: 3 heads don't divide --d-model 64"),
])
def test_chars_options_with_bad_values_are_one_error_line(args, message, capsys):
    assert ("error: " + message) in _cli_error(args, capsys)


def test_generate_only_prints_the_text_the_run_ended_with(tmp_path, text_file, capsys):
    out = str(tmp_path / "g")
    assert trainer.main(TINY_CHARS + ["--data", text_file, "--out", out, "--steps", "6", "--sample", "40"]) == 0
    after = capsys.readouterr().out.split("--- sample after training (40 characters) ---\n", 1)[1]
    trained = after.split("\n---", 1)[0]
    os.remove(text_file)  # the checkpoint alone is enough: architecture and vocabulary are in it
    assert trainer.main(["--generate-only", "--out", out, "--sample", "40"]) == 0
    assert capsys.readouterr().out == "\n" + trained + "\n"  # the prompt (a newline), then the same 40 characters
    assert trainer.main(["--generate-only", "--out", out, "--sample", "40", "--seed", "3", "--prompt", "the ",
                         "--temperature", "0.5", "--top-k", "3"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("the ") and len(text) == 4 + 40 + 1 and text[4:-1] != trained


def test_generate_only_refuses_a_missing_or_toy_checkpoint_and_unknown_prompt_characters(tmp_path, text_file, capsys):
    assert trainer.main(["--generate-only", "--out", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.startswith("error: --generate-only: no checkpoint at ")
    run(tmp_path, "sort", steps=2, pictures=False)
    assert trainer.main(["--generate-only", "--out", str(tmp_path / "sort")]) == 2
    err = capsys.readouterr().err
    assert "holds a model of the 'sort' task" in err and err.count("\n") == 1
    run_chars(tmp_path, "c", text_file, steps=2)
    assert trainer.main(["--generate-only", "--out", str(tmp_path / "c"), "--prompt", "THE"]) == 2
    assert "characters the model never saw: 'EHT'" in capsys.readouterr().err


# ---- --generate-only with a hostile checkpoint: refused before anything is built (issue 31) --------
def _forged_chars_checkpoint(folder, **config):
    """A checkpoint --generate-only reads (config, vocab, model), its config overridden by `config`."""
    import minitensor as mt
    from attention.lm import DecoderLM

    os.makedirs(folder, exist_ok=True)
    chars = ["\n", "a", "b"]
    model = DecoderLM(len(chars), 4, n_layer=1, n_head=2, d_model=4)
    saved = {"task": "chars", "block_size": 4, "layers": 1, "heads": 2, "d_model": 4, **config}
    mt.save({"model": model.state_dict(), "config": json.dumps(saved), "vocab": json.dumps(chars)},
            os.path.join(folder, "checkpoint.npz"))


@pytest.mark.parametrize("config, message", [
    (dict(block_size=2 ** 40), "its config has block_size=1099511627776; --generate-only builds models with "
                               "block_size from 1 to 65536"),
    (dict(layers=10 ** 7), "its config has layers=10000000; --generate-only builds models with layers from 1 to 512"),
    (dict(d_model="4"), "its config has d_model='4'"),
    (dict(heads=True), "its config has heads=True"),
    (dict(heads=3), "heads=3, which don't divide d_model=4"),
    (dict(layers=2), "its config says layers=2, its weights hold 1 blocks"),
    (dict(block_size=8), "weight 'pos_emb.weight' is of shape (4, 4), but its config (block_size=8, layers=1, "
                         "d_model=4, 3 characters) makes it of shape (8, 4)"),
    (dict(d_model=8, heads=2), "weight 'blocks.0.attn.w_k.bias' is of shape (4,)"),
])
def test_generate_only_refuses_a_hostile_config_before_building_anything(tmp_path, capsys, monkeypatch, config,
                                                                         message):
    from attention import trainer_checkpoint

    def never(*args, **kwargs):
        raise AssertionError("a model was built from a config that was not checked")

    monkeypatch.setattr(trainer_checkpoint, "DecoderLM", never)
    _forged_chars_checkpoint(tmp_path / "bad", **config)
    assert trainer.main(["--generate-only", "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "checkpoint.npz: " in err and message in err and err.count("\n") == 1, err


def test_generate_only_reads_a_checked_forged_checkpoint_that_is_consistent(tmp_path, capsys):
    _forged_chars_checkpoint(tmp_path / "ok")
    assert trainer.main(["--generate-only", "--out", str(tmp_path / "ok"), "--sample", "5"]) == 0
    assert len(capsys.readouterr().out) == 1 + 5 + 1


@pytest.mark.parametrize("vocab, block, layers, d_model", [(3, 4, 1, 4), (7, 5, 3, 8)])
def test_the_shapes_checked_are_those_of_a_built_model(vocab, block, layers, d_model):
    from attention.lm import DecoderLM
    from attention.trainer_checkpoint import chars_model_shapes

    built = {k: tuple(v.shape) for k, v in DecoderLM(vocab, block, n_layer=layers, n_head=2, d_model=d_model)
             .state_dict().items()}
    assert chars_model_shapes(vocab, block, layers, d_model) == built


# ---- issue 32: a trainer that catches divergence --------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--lr", "50"], "argument --lr: must be at most 1.0 (AdamW moves every weight by about lr a step), got 50.0"),
    (["--lr", "inf"], "argument --lr: must be a finite number, got inf"),
    (["--lr", "nan"], "argument --lr: must be a finite number, got nan"),
    (["--weight-decay", "nan"], "argument --weight-decay: must be a finite number, got nan"),
    (["--weight-decay", "20", "--lr", "0.1"], "argument --weight-decay: lr * weight decay must be below 1"),
    (["--clip", "nan"], "argument --clip: must be a finite number, got nan"),
    (["--clip", "inf"], "argument --clip: must be a finite number, got inf"),
    (["--dropout", "nan"], "argument --dropout: must be a finite number, got nan"),
    (["--task", "chars", "--temperature", "inf"], "argument --temperature: must be a finite number, got inf"),
    (["--out", __file__], f"argument --out: {__file__} is a file, not a folder"),
    (["--no-such-option"], "unrecognized arguments: --no-such-option"),
])
def test_a_bad_value_is_exactly_one_error_line_without_the_usage(args, message, capsys):
    with pytest.raises(SystemExit) as stop:
        trainer.parse_args(args)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "usage:" not in err, err
    assert err.rstrip("\n").endswith("error: " + message) or ("error: " + message) in err, err


def test_help_still_shows_the_usage(capsys):
    with pytest.raises(SystemExit) as stop:
        trainer.parse_args(["--help"])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("usage: ")


def _checkpoint(path):
    import minitensor as mt

    return mt.load(str(path))


def test_a_non_finite_loss_stops_the_run_naming_the_step_and_keeps_the_last_finite_checkpoint(tmp_path, capsys):
    # lr 1e4 (the command line refuses it; the API does not): step 2's loss is huge, step 3's is nan
    with pytest.raises(trainer.TrainingDiverged) as info:
        run(tmp_path, "d", steps=10, lr=1e4, checkpoint_every=1, pictures=False)
    message = str(info.value)
    step = int(re.search(r"at step (\d+): training diverged", message).group(1))
    saved = int(re.search(r"checkpoint.npz at step (\d+), is kept", message).group(1))
    assert "Try a lower --lr (this run's is 10000)" in message and saved == step - 1 >= 1, message
    ck = _checkpoint(tmp_path / "d" / "checkpoint.npz")
    assert int(ck["step"]) == saved and np.isfinite(ck["losses"].numpy()).all()
    assert all(np.isfinite(w.numpy(force=True)).all() for w in ck["model"].values())
    assert "loss nan" not in capsys.readouterr().out


def test_weights_made_non_finite_by_an_update_are_never_saved(tmp_path, monkeypatch):
    real_step = trainer.train_step

    def step_that_breaks_a_weight(model, *args):
        loss = real_step(model, *args)
        if len(calls) == 1:  # the second update leaves a nan weight behind a finite loss
            next(iter(model.parameters())).data.fill_(float("nan"))
        calls.append(loss)
        return loss

    calls = []
    monkeypatch.setattr(trainer, "train_step", step_that_breaks_a_weight)
    with pytest.raises(trainer.TrainingDiverged, match=r"a weight is no longer a finite number after the update at "
                                                       r"step 2: .*/checkpoint.npz at step 1, is kept"):
        run(tmp_path, "w", steps=4, checkpoint_every=1, pictures=False)
    assert int(_checkpoint(tmp_path / "w" / "checkpoint.npz")["step"]) == 1


def test_a_run_that_diverges_before_any_checkpoint_leaves_no_folder_and_exits_1(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(trainer, "restart_for_blas_threads", lambda argv: None)
    monkeypatch.setattr(trainer, "parse_args", lambda argv: Config(**{**TINY, "out": str(tmp_path / "nan"),
                                                                      "lr": 1e8, "steps": 4, "pictures": False}))
    assert trainer.main([]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the loss is nan at step 2: training diverged") and err.count("\n") == 1, err
    assert "no checkpoint was written" in err and not os.path.exists(tmp_path / "nan")


def test_a_failed_resume_leaves_no_empty_folder(tmp_path, capsys):
    assert trainer.main(["--resume", "--out", str(tmp_path / "none"), "--no-pictures"]) == 2
    assert capsys.readouterr().err.startswith("error: --resume: no checkpoint at ")
    assert not os.path.exists(tmp_path / "none")


def test_resuming_a_finished_run_says_so_and_trains_nothing(tmp_path, capsys):
    run(tmp_path, "f", steps=5, pictures=False, stop_when_perfect=False)
    before = (tmp_path / "f" / "checkpoint.npz").read_bytes()
    capsys.readouterr()
    assert trainer.main(["--resume", "--out", str(tmp_path / "f"), "--layers", "1", "--heads", "2", "--d-model", "16",
                         "--batch", "16", "--eval-every", "5", "--eval-n", "50", "--steps", "5", "--no-pictures",
                         "--no-early-stop"]) == 0
    out = capsys.readouterr().out
    assert f"nothing to train: the run in {tmp_path / 'f'} finished at step 5 (it ran all 5 --steps); raise " \
           "--steps to train it further" in out
    assert "== report ==" in out and not re.search(r"^step \d", out, re.M), out
    assert (tmp_path / "f" / "checkpoint.npz").read_bytes() == before  # nothing rewritten


def test_the_eta_counts_the_real_steps_and_the_evaluations_left(monkeypatch):
    import io
    import types

    from attention import trainer_report

    clock = types.SimpleNamespace(now=0.0)
    monkeypatch.setattr(trainer_report, "time", types.SimpleNamespace(perf_counter=lambda: clock.now))
    out = io.StringIO()
    bar = trainer.Progress(300, 0, out, every=1, eval_every=100)  # --steps 300: the ETA counts 300 steps
    clock.now = 1.0
    bar.update(10, 0.5)  # 0.1 s a step; no evaluation timed yet
    assert out.getvalue().splitlines()[-1] == "step 10/300  loss 0.5000  10.0 steps/s  ETA 29s + evaluations"
    for step in range(11, 101):
        clock.now += 0.1
        bar.update(step, 0.5)
    clock.now += 4.0
    bar.evaluated(4.0)  # the evaluation at step 100 took 4 s: two more are due, at 200 and 300
    clock.now += 0.1
    bar.update(101, 0.5)
    assert bar.eta(101) == "28s"  # 199 steps of 0.1 s, and 2 evaluations of 4 s
    assert trainer.Progress(301, 0, io.StringIO(), eval_every=100)._evals_left(101) == 3  # and one at the end
    # a toy task stops once it is perfect: its ETA is an upper bound, and says so
    early = trainer.Progress(2000, 0, io.StringIO(), eval_every=100, may_stop_early=True)
    clock.now += 1.0
    early.update(10, 0.5)
    assert early.eta(10).startswith("at most ")
