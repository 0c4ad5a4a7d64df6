"""Issue 32, point 4: the backprop-ninja exercise. Each step is graded alone and a usual slip is
named; partial work scores the steps written; the learner's table and training run say how far
they got; training uses the student's backward only; the release holds the exercise.

The reference passing, the stub failing as not implemented and every wrong answer (0, twice,
transposed, sign flipped) scoring 0 on every case are checked with the other exercises, in
test_exercises.py, test_release.py and test_honest_grades.py. Graded here in this process
(`check_case`, the grader's own two halves joined directly), which gives a child's verdicts.
"""
import importlib.resources
import importlib.util
import itertools
import re
import sys

import numpy as np
import pytest

from attention.course import check, ninja, release as rel
from attention.course.exercises import EXERCISES
from attention.course.grade import main

EXERCISE = EXERCISES["backprop_ninja"]
VARIABLES = [c.variable for c in EXERCISE.cases]
SOURCE = str(importlib.resources.files("attention.course.source") / "backprop_ninja.py")
_loaded = itertools.count()


def _module(text, tmp_path):
    path = tmp_path / f"ninja_{next(_loaded)}.py"
    path.write_text(text, encoding="utf-8")
    name = f"student_ninja_{next(_loaded)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, str(path)


def _grade(module, path, variable):
    n = VARIABLES.index(variable)
    return check.check_case(EXERCISE, module, path, EXERCISE.cases[n], n)


def _edited(old, new, tmp_path):
    text = rel.source_text("backprop_ninja")
    assert old in text, "the solution changed: update this test's edit"
    return _module(text.replace(old, new), tmp_path)


def test_the_cases_are_every_variable_in_backward_order_then_training():
    params = set(ninja.PARAMS)
    outputs = [out for out, _, _ in ninja.LINES if out != "loss"]
    assert VARIABLES[-1] is None and sorted(VARIABLES[:-1]) == sorted(params | set(outputs))
    for k, name in enumerate(VARIABLES[:-1]):  # each step comes after every step whose gradient it reads
        assert all(up == "loss" or VARIABLES.index(up) < k for up in ninja.feeds(name)), name
    assert EXERCISE.max_score == 24


# (the line changed, the bug, the step graded, what the report must say)
SLIPS = [
    ('return d["scaled"] / np.sqrt(c["q"].shape[-1])', 'return d["scaled"]', "scores",
     "i.e. times sqrt(d_k)=1.732 (d_k=3): did you forget the 1/sqrt(d_k) scale?"),
    ('return through_attention + d["h"]', "return through_attention", "x", "the residual's term is missing"),
    ('return through_attention + d["h"]', 'return through_attention + d["proj"]', "x",
     "MissingUpstream: d['proj']: d_x gets the gradients of what x feeds directly, d['q'], d['k'], d['v'], d['h']"),
    ('np.add.at(table, c["tokens"], d["emb"])', 'table[c["tokens"]] += d["emb"]', "wte",
     "only rows looked up more than once are wrong"),
    ('return np.where(c["allowed"], d["masked"], 0.0)', 'return d["masked"]', "scaled",
     "yours is d['masked'] unchanged: where allowed is False"),
    ('return d["loss"] * (probs - onehot) / c["targets"].size', 'return d["loss"] * (probs - onehot)', "logits",
     "i.e. times N=8 (the number of rows): did you forget to divide by N?"),
    ('return d["loss"] * (probs - onehot) / c["targets"].size', 'return (probs - onehot) / c["targets"].size',
     "logits", "divided by the upstream gradient g"),
    ('return _rows(d["logits"]).sum(axis=0)', 'return _rows(d["logits"]).mean(axis=0)', "b_lm",
     "1/8 of the true one everywhere, i.e. times 1/8 (b_lm is used at 8 positions): a mean where the sum belongs?"),
    ('return _rows(d["q"]).T @ _rows(c["x"])', 'return _rows(c["x"]).T @ _rows(d["q"])', "w_q",
     "WRONG SHAPE: d_w_q returned an array of shape (4, 3); w_q has shape (3, 4)"),
    ('return d["x"].sum(axis=0)', 'return d["x"]', "wpe", "'wpe' is broadcast over dims [0] of it"),
    ('return _t(c["probs"]) @ d["att"]', 'return c["probs"] @ d["att"]', "v", "WRONG GRADIENT for d_v"),
    ('return d["logits"] @ p["w_lm"]', 'return str(d["logits"] @ p["w_lm"])', "h",
     "WRONG TYPE: d_h returned a str, not an array of shape (2, 4, 4)"),
    ("            p[name] = p[name] - lr * grads[name]", "            p[name] = p[name] + lr * grads[name]", None,
     "YOUR LOSS DOES NOT FALL"),
    ("            p[name] = p[name] - lr * grads[name]",
     '            p[name] = p[name] - lr * grads[name] * (name != "wpe")', None,
     "the first loss agrees, so a gradient or the update is wrong"),
    ("        losses.append(loss)", "        losses.append(forward(p, tokens, targets)[0])", None,
     "the loss before the first step is already different"),
    ("        losses.append(loss)", "        losses.append(loss)\n    losses = losses[1:]", None,
     "WRONG LOSSES: train returned 7 values for 8 steps"),
]


@pytest.mark.parametrize("old, new, variable, expected", SLIPS, ids=[f"{s[2]}-{i}" for i, s in enumerate(SLIPS)])
def test_a_wrong_step_fails_alone_with_the_message_that_names_it(old, new, variable, expected, tmp_path):
    module, path = _edited(old, new, tmp_path)
    status, lines = _grade(module, path, variable)
    out = "\n".join(lines)
    assert status == "fail" and expected in out, out
    if variable is not None:  # one wrong step costs its own case: the next one, given its upstream, passes
        after = VARIABLES[VARIABLES.index(variable) + 1]
        if after is not None:
            assert _grade(module, path, after)[0] == "pass"


def _partial(tmp_path, written):
    """The released file with the teacher's solution of the steps in `written` only."""
    text, source = rel.released_text("backprop_ninja"), rel.source_text("backprop_ninja")
    for name in written:
        pattern = rf"def d_{name}\(c, p, d\):\n.*?\n\n\n"
        text = re.sub(pattern, re.search(pattern, source, re.S).group(0).replace("\\", "\\\\"), text, count=1,
                      flags=re.S)
    return _module(text, tmp_path)


def test_partial_work_scores_each_step_written_and_the_table_stops_at_the_first_not_written(tmp_path):
    module, path = _partial(tmp_path, VARIABLES[:5])
    statuses = [_grade(module, path, v)[0] for v in VARIABLES[:6]]
    assert statuses == ["pass"] * 5 + ["not implemented"]
    printed = []
    passed = ninja.compare_by_hand(path, out=printed.append)
    assert printed[0].split() == ["variable", "shape", "exact", "approx", "max", "diff"]
    assert passed == dict.fromkeys(VARIABLES[:5], True)
    assert printed[-1].split()[0] == "att" and "d_att is not written yet" in printed[-1]
    assert len(printed) == 7


def test_the_table_shows_every_variable_and_points_at_the_first_wrong_one(tmp_path):
    printed = []
    assert all(ninja.compare_by_hand(SOURCE, out=printed.append).values())
    rows = [line.split() for line in printed[1:]]
    assert [r[0] for r in rows] == VARIABLES[:-1]
    assert all(r[-2] == "yes" and float(r[-1]) < 1e-12 for r in rows)  # (a shape splits in several words)
    module, _ = _edited('return d["scaled"] / np.sqrt(c["q"].shape[-1])', 'return d["scaled"]', tmp_path)
    printed = []
    passed = ninja.compare_by_hand(module, out=printed.append)
    assert not passed["scores"] and all(passed[v] for v in VARIABLES[:VARIABLES.index("scores")])
    assert printed[-1] == "first wrong: d_scores (the rows after it read its gradient, so fix it first)"


def test_training_by_hand_matches_autograds_and_a_stub_says_it_is_not_written(tmp_path):
    printed = []
    yours, autograds = ninja.train_by_hand(SOURCE, steps=4, out=printed.append)
    np.testing.assert_allclose(yours, autograds, rtol=1e-12)
    assert autograds[-1] < autograds[0] and printed[0].split() == ["step", "your", "loss", "autograd's", "diff"]
    module, _ = _module(rel.released_text("backprop_ninja"), tmp_path)
    printed = []
    assert ninja.train_by_hand(module, steps=2, out=printed.append)[0] is None
    assert printed == ["train is not written yet (every backward of a small attention model by hand, then "
                       "training with it is yours to write)"]


def test_the_training_case_runs_with_autograd_off(tmp_path):
    """A `train` whose gradients come from autograd (minitensor's .backward()) is no answer."""
    module, path = _module(rel.source_text("backprop_ninja"), tmp_path)
    module.train = lambda p, tokens, targets, steps, lr: list(ninja.train_reference(p, tokens, targets, steps, lr))
    status, lines = _grade(module, path, None)
    assert status == "fail" and "ERROR in your code in train:" in lines[0], lines


def test_the_release_holds_the_exercise_with_every_step_a_stub(tmp_path, capsys):
    assert main(["--release", str(tmp_path)]) == 0
    text = (tmp_path / "backprop_ninja.py").read_text(encoding="utf-8")
    assert "backprop_ninja.py" in capsys.readouterr().out
    assert text.count("raise NotImplementedError(") == len(VARIABLES)  # a step each, and train
    assert "np.add.at" not in text and "def forward(p, tokens, targets):" in text
