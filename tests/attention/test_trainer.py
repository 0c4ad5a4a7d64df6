"""The toy-model trainer end to end: it finishes, writes what it promises, resumes exactly,
refuses a corrupt checkpoint, is deterministic, and actually learns sort."""
import dataclasses
import os

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
    try:
        import matplotlib  # noqa: F401

        assert os.path.exists(tmp_path / "a" / "attention_maps.png")
        assert os.path.exists(tmp_path / "a" / "loss_curve.png")
    except ImportError:
        assert "layer 0 head 1" in out  # the text heatmaps stand in for the pictures


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
