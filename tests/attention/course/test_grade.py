"""attention/course/grade.py: time limits, crashes, a class's CSV, Gradescope's JSON and the command line."""
import configparser
import csv
import importlib
import json
import os
import subprocess
import sys

import pytest

from attention.course import grade as grader, release as rel
from attention.course.exercises import EXERCISES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SOFTMAX = rel.source_text("softmax")
SOLUTION_LINE = "        return p * (g - (g * p).sum(dim=-1, keepdim=True))"


def _softmax_with(folder, backward_body, name="softmax.py"):
    """The softmax solution with its backward's return replaced by `backward_body` (8-space indented)."""
    assert SOLUTION_LINE in SOFTMAX
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(SOFTMAX.replace(SOLUTION_LINE, backward_body))
    return path


# case 1 of softmax is the only 1-D input: these bugs hit it alone
# (printing as it loops, slowly: what it printed before the time limit is shown, clipped)
HANG_ON_1D = ("        import time\n        while p.ndim == 1:\n            print('still in the loop')\n"
              "            time.sleep(0.05)\n" + SOLUTION_LINE)
HANG_ON_LAST = "        while p.shape[-1] == 6:\n            pass\n" + SOLUTION_LINE  # case 5, (2, 6), alone
EXIT_ON_1D = "        import os\n        if p.ndim == 1:\n            os._exit(3)\n" + SOLUTION_LINE


@pytest.mark.slow  # grades in subprocesses
def test_an_endless_loop_in_a_backward_times_out_its_case_and_skips_the_rest_with_one_line(tmp_path):
    # skipping, not running every later case into the same loop: a loop costs one time limit, not five
    result = grader.grade_exercise(EXERCISES["softmax"], _softmax_with(tmp_path, HANG_ON_1D), timeout=2)
    assert [c.status for c in result.cases] == ["timed out"] + ["not run"] * 4
    assert result.score == 0 and result.max_score == 5 and result.summary() == "1 timed out"
    out = "\n".join(grader.report(result))
    assert "TIMED OUT after 2 s (an endless loop?)" in out and "result: FAILED, 0/5 cases pass, 0/5 points" in out
    assert "  cases 2-5: not run: case 1 timed out, so the rest of 'softmax' is skipped" in out.splitlines()
    assert sum("not run" in line for line in out.splitlines()) == 1
    printed = result.cases[0].lines[1:]  # the partial output, first and last lines, under the verdict
    assert printed[0] == "your code printed:" and printed[1] == "  still in the loop" == printed[-1], printed
    assert printed[grader._PRINTED_LINES // 2 + 1].startswith("  ... (") and len(printed) == grader._PRINTED_LINES + 2
    result = grader.grade_exercise(EXERCISES["softmax"], _softmax_with(tmp_path, HANG_ON_LAST), timeout=2)
    assert [c.status for c in result.cases] == ["pass"] * 4 + ["timed out"] and result.score == 4


def test_a_crashing_case_costs_that_case_only(tmp_path):
    result = grader.grade_exercise(EXERCISES["softmax"], _softmax_with(tmp_path, EXIT_ON_1D))
    assert [c.status for c in result.cases] == ["crashed", "pass", "pass", "pass", "pass"]
    assert "exited with status 3" in result.cases[0].lines[0]


def test_a_file_that_does_not_load_fails_every_case_at_its_line(tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text("import numpy as np\n\nx = np.ones(3) @ np.ones(4)\n")
    result = grader.grade_exercise(EXERCISES["softmax"], str(path))
    assert result.score == 0 and [c.status for c in result.cases] == ["did not load"] + ["not run"] * 4
    first = "\n".join(result.cases[0].lines)
    assert "  cases 2-5: not run: your file did not load" in grader.report(result)
    assert "could not load your file" in first and "ValueError" in first
    assert f'File "{path}", line 3, in <module>' in first
    path.write_text("def softmax_typo(x):\n    return x\n")
    result = grader.grade_exercise(EXERCISES["softmax"], str(path))
    assert "defines no function 'softmax'" in result.cases[0].lines[0]


def test_what_the_students_code_prints_is_shown_under_its_case(tmp_path):
    path = _softmax_with(tmp_path, "        print('shape', tuple(p.shape))\n" + SOLUTION_LINE)
    result = grader.grade_exercise(EXERCISES["softmax"], path)
    assert result.passed and result.cases[1].lines == ["your code printed:", "  shape (3, 4)"]


def test_an_error_points_at_the_students_file_and_line_not_the_graders(tmp_path):
    path = _softmax_with(tmp_path, "        q = p * 2\n        return q @ g.mT @ q")
    result = grader.grade_exercise(EXERCISES["softmax"], path)
    out = "\n".join(grader.report(result))
    line = open(path, encoding="utf-8").read().splitlines().index("        return q @ g.mT @ q") + 1
    assert f'File "{path}", line {line}, in backward' in out and "return q @ g.mT @ q" in out
    assert "attention/course" not in out and "minitensor/" not in out and "Traceback" not in out
    assert sum('File "' in line for line in result.cases[0].lines) == 1  # the student's one frame, no other


def _class_folder(tmp_path):
    """alice solves softmax, bob's backward hangs on case 1 (which skips the rest), carol's file loops at import,
    dan's crashes on one case, erin handed in nothing; everyone's gelu is the stub."""
    subs = tmp_path / "submissions"
    _softmax_with(subs / "alice", SOLUTION_LINE)
    _softmax_with(subs / "bob" / "nested", HANG_ON_1D)
    (subs / "carol").mkdir()
    (subs / "carol" / "softmax.py").write_text("while True:\n    pass\n")
    _softmax_with(subs / "dan", EXIT_ON_1D)
    (subs / "erin").mkdir()
    for student in ("alice", "bob", "carol", "dan"):
        rel.release(str(subs / student), ["gelu"])
    return subs


@pytest.mark.slow  # grades a folder of students in subprocesses
def test_grading_a_folder_writes_one_row_per_student_and_no_submission_stops_the_others(tmp_path, capsys):
    subs = _class_folder(tmp_path)
    out_csv = tmp_path / "grades.csv"
    status = grader.main(["softmax,gelu", "--folder", str(subs), "--csv", str(out_csv), "--timeout", "2"])
    assert status == 1
    with open(out_csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["student"] for r in rows] == ["alice", "bob", "carol", "dan", "erin"]
    assert list(rows[0]) == ["student", "softmax", "gelu", "total", "max_score", "notes"]
    scores = {r["student"]: (int(r["softmax"]), int(r["gelu"]), int(r["total"]), int(r["max_score"])) for r in rows}
    assert scores == {"alice": (5, 0, 5, 8), "bob": (0, 0, 0, 8), "carol": (0, 0, 0, 8), "dan": (4, 0, 4, 8),
                      "erin": (0, 0, 0, 8)}
    notes = {r["student"]: r["notes"] for r in rows}
    assert notes["alice"] == "gelu: not implemented"
    assert "softmax: 1 timed out" in notes["bob"] and "softmax: 1 crashed" in notes["dan"]
    assert notes["carol"] == "softmax: did not load; gelu: not implemented"
    assert "softmax: no softmax.py" in notes["erin"]
    printed = capsys.readouterr().out
    assert "alice: 5/8 (softmax 5/5, gelu 0/3 not implemented)" in printed and f"wrote {out_csv}" in printed
    # beside the CSV, one readable feedback file per student: what they would read grading their own files
    feedback = tmp_path / "grades_feedback"
    assert f"wrote 5 feedback files in {feedback}" in printed
    assert sorted(os.listdir(feedback)) == [f"{s}.txt" for s in ("alice", "bob", "carol", "dan", "erin")]
    bob = (feedback / "bob.txt").read_text(encoding="utf-8")
    assert bob.startswith("feedback for bob: 0/8 points\n") and "TIMED OUT after 2 s" in bob
    assert "still in the loop" in bob and "result: not implemented yet" in bob and "hint 1: " in bob
    assert "'softmax': no file softmax.py, 0/5 points" in (feedback / "erin.txt").read_text(encoding="utf-8")


def _check_gradescope_schema(results):
    assert set(results) >= {"score", "max_score", "tests"}
    assert isinstance(results["score"], (int, float)) and isinstance(results["max_score"], (int, float))
    for t in results["tests"]:
        assert set(t) == {"name", "score", "max_score", "output", "visibility"}
        assert isinstance(t["name"], str) and isinstance(t["output"], str)
        assert 0 <= t["score"] <= t["max_score"]
        assert t["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    assert results["score"] == sum(t["score"] for t in results["tests"])
    assert results["max_score"] == sum(t["max_score"] for t in results["tests"])


@pytest.mark.slow  # grades in subprocesses
def test_gradescope_results_json_for_a_submission_folder(tmp_path):
    submission = tmp_path / "submission"
    _softmax_with(submission, HANG_ON_LAST)
    rel.release(str(submission), ["gelu"])
    results_json = tmp_path / "results.json"
    status = grader.main(["softmax,gelu,embedding", str(submission), "--json", str(results_json), "--timeout", "2",
                          "--visibility", "after_due_date", "--hint", "2"])
    assert status == 1
    results = json.loads(results_json.read_text())
    _check_gradescope_schema(results)
    assert (results["score"], results["max_score"]) == (4, 5 + 3 + 6)
    names = [t["name"] for t in results["tests"]]
    assert names[0] == "softmax 1/5: x (5,)" and len(names) == 5 + 3 + 4
    assert {t["visibility"] for t in results["tests"]} == {"after_due_date"}
    fifth = results["tests"][4]
    assert fifth["score"] == 0 and "TIMED OUT" in fifth["output"] and "hint 2: " in fifth["output"]
    assert [t["score"] for t in results["tests"][:4]] == [1, 1, 1, 1]
    assert "no file embedding.py" in results["tests"][-1]["output"]
    assert "softmax: 4/5" in results["output"]


def test_gradescope_results_json_for_one_passing_file(tmp_path):
    results_json = tmp_path / "results.json"
    path = _softmax_with(tmp_path, SOLUTION_LINE, "mine.py")
    assert grader.main(["softmax", path, "--json", str(results_json)]) == 0
    results = json.loads(results_json.read_text())
    _check_gradescope_schema(results)
    assert results["score"] == results["max_score"] == 5 and {t["output"] for t in results["tests"]} == {""}


def test_hints_come_in_tiers(capsys):
    assert grader.main(["--hint", "2", "embedding"]) == 0
    out = capsys.readouterr().out
    hints = EXERCISES["embedding"].hints
    assert f"hint 1: {hints[0]}" in out and f"hint 2: {hints[1]}" in out and hints[2] not in out
    assert "(next hint: attention-grade --hint 3 embedding)" in out
    assert grader.main(["--hint", "3", "embedding"]) == 0
    out = capsys.readouterr().out
    assert f"hint 3: {hints[2]}" in out and "next hint" not in out


def test_list_shows_every_exercise_with_its_points(capsys):
    assert grader.main(["--list"]) == 0
    out = capsys.readouterr().out
    for e in EXERCISES.values():
        assert f"{e.name}: {e.title}; your file defines {e.entry}(" in out and f"{e.max_score} points" in out


@pytest.mark.parametrize("argv, message", [
    (["nonsense", "x.py"], "argument exercise: unknown exercise 'nonsense'; choose from softmax"),
    ([], "the following arguments are required: exercise, path"),
    (["softmax"], "the following arguments are required: exercise, path"),
    (["softmax", "no/such/file.py"], "argument path: no file or folder no/such/file.py"),
    (["all", __file__], "argument path: a file holds one exercise"),
    (["softmax", __file__, "--timeout", "0"], "argument --timeout: must be a number above 0, got 0"),
    (["softmax", __file__, "--timeout", "inf"], "argument --timeout: must be a number above 0, got inf"),
    (["softmax", __file__, "--timeout", "soon"], "argument --timeout: expected a number, got 'soon'"),
    (["softmax", __file__, "--seed", "-1"], "argument --seed: must be at least 0, got -1"),
    (["softmax", __file__, "--memory", "0"], "argument --memory: must be a number above 0, got 0"),
    (["--hint", "4", "softmax"], "argument --hint: hints come in tiers 1 to 3, got 4"),
    (["--csv", "out.csv"], "argument --csv: needs --folder"),
    (["--folder", "no_such_folder"], "argument --folder: no folder no_such_folder"),
    (["--folder", ".", "--json", "r.json"], "argument --json: grades one submission"),
    (["--folder", ".", "softmax", "x.py"], "argument path: not used with --folder"),
    (["--list", "--release", "out"], "argument --release: not allowed with --list"),
    (["--force", "softmax", __file__], "argument --force: only with --release"),
    (["--release", __file__], "is a file, not a folder"),
    (["softmax", __file__, "--json", "no/such/dir/r.json"], "argument --json: no folder"),
    (["softmax", __file__, "--visibility", "secret"], "argument --visibility: invalid choice: 'secret'"),
])
def test_every_bad_argument_is_one_error_line_and_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        grader.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m attention.course: error: ") or ": error: " in last
    assert message in last, err


def test_a_file_where_the_feedback_folder_goes_is_one_error_line(tmp_path, capsys):
    (tmp_path / "grades_feedback").write_text("")
    with pytest.raises(SystemExit) as info:
        grader.main(["--folder", str(tmp_path), "--csv", str(tmp_path / "grades.csv")])
    err = capsys.readouterr().err.strip().splitlines()
    assert info.value.code == 2 and err[-1].endswith(f"{tmp_path / 'grades_feedback'}, where the feedback files go, "
                                                     "is a file")


def test_help_shows_every_default(capsys):
    with pytest.raises(SystemExit) as info:
        grader.main(["--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for text in ("(default: 20)", "(default: 2048)", "(default: 0)", "(default: 1)", "(default: visible)",
                 "(default: none)",
                 "(default with --folder and --release: all)"):
        assert text in out, text


@pytest.mark.slow  # grades in subprocesses
def test_the_command_runs_from_any_folder(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    path = _softmax_with(tmp_path, SOLUTION_LINE, "mine.py")
    done = subprocess.run([sys.executable, "-m", "attention.course", "softmax", "mine.py"], cwd=str(tmp_path),
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "result: PASSED" in done.stdout and path in done.stdout, done.stdout + done.stderr
    done = subprocess.run([sys.executable, "-m", "attention.course", "softmax"], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("usage: python -m attention.course")


def test_the_console_script_calls_main():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    scripts = cfg["options.entry_points"]["console_scripts"].strip().splitlines()
    entry = dict(line.split(" = ") for line in scripts)
    module, _, func = entry["attention-grade"].partition(":")
    assert getattr(importlib.import_module(module), func) is grader.main


@pytest.mark.slow  # grades in subprocesses
def test_spawn_where_fork_is_not_used_grades_the_same(monkeypatch, tmp_path):
    monkeypatch.setattr(grader, "_START_METHOD", "spawn")  # macOS and Windows
    result = grader.grade_exercise(EXERCISES["softmax"], _softmax_with(tmp_path, EXIT_ON_1D))
    assert [c.status for c in result.cases] == ["crashed", "pass", "pass", "pass", "pass"]
