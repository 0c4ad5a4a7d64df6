"""Hostile submissions (issue 31): none of them gets a score it did not earn, or stops the grading.

Each file below attacks the grader from the student's side: it patches the grader's checking
functions, forges messages on the channel to the grader, prints megabytes, loops, exits, writes
outside its scratch folder, starts processes, signals the grader, hogs memory. The verdicts are
reached in the grader's process from values, so each gets the score its values earn.
"""
import csv
import json
import os

import pytest

from attention.course import channel, check, grade as grader, release as rel
from attention.course.exercises import EXERCISES

SOFTMAX = rel.source_text("softmax")
SOLUTION_LINE = "        return p * (g - (g * p).sum(dim=-1, keepdim=True))"

FORGED_VERDICT = '''
import attention.course.check as check
import attention.course.grade as grade

def _always_pass(*args, **kwargs):
    return "pass", []

# the grader's checking functions, as this process sees them, replaced by ones that always pass
check.check_case = check.judge_case = grade.judge_case = _always_pass
check.gradient_pair = lambda *a, **k: []

def softmax(x):
    return x
'''

FORGED_MESSAGES = '''
import gc
import multiprocessing.connection as mc

def _forge():
    for o in gc.get_objects():
        if isinstance(o, mc.Connection) and not o.closed and o.writable:
            try:
                o.send(("case", 999, "pass", []))                   # a pickle
                o.send_bytes(b'{"t": "loaded", "case": null, "printed": "", "dropped": 0, "record": null}')
                o.send_bytes(b"\\x00" * 10)                          # and garbage
            except OSError:
                pass

_forge()

def softmax(x):
    _forge()
    return x
'''


def _write(folder, name, text):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def _softmax_with(folder, body, name="softmax.py"):
    assert SOLUTION_LINE in SOFTMAX
    return _write(folder, name, SOFTMAX.replace(SOLUTION_LINE, body))


def test_a_submission_that_patches_the_grader_gets_the_score_of_its_values(tmp_path):
    result = grader.grade_exercise(EXERCISES["softmax"], _write(tmp_path, "softmax.py", FORGED_VERDICT))
    assert result.score == 0 and [c.status for c in result.cases] == ["fail"] * 5
    assert "WRONG FORWARD" in result.cases[0].lines[0]


@pytest.mark.slow  # five children, each forging
def test_forged_messages_on_the_channel_score_0_and_the_grading_goes_on(tmp_path):
    result = grader.grade_exercise(EXERCISES["softmax"], _write(tmp_path, "softmax.py", FORGED_MESSAGES))
    assert result.score == 0 and {c.status for c in result.cases} == {"malformed"}
    first = result.cases[0].lines[0]
    assert "MALFORMED: the process running your code sent the grader a message it cannot use" in first
    assert "this case scores 0" in first


@pytest.mark.parametrize("record, reason", [
    ({"error": None, "type": "Tensor", "values": {"shape": [5], "f8": "AAAA"}}, "holds 3 bytes"),
    ({"error": None, "type": "Tensor", "values": {"shape": [10 ** 9], "f8": ""}}, "a whole number from 0 to"),
    ({"error": None, "type": "Tensor", "values": [1, 2, 3]}, "should have the keys ['f8', 'shape']"),
    ({"error": None, "type": "Tensor", "values": None, "extra": 1}, "should have the keys"),
    ({"error": {"lines": ["x" * 5000], "not_implemented": False, "message": ""}, "type": None, "values": None},
     "at most 400 characters"),
    ({"error": {"lines": [], "not_implemented": "yes", "message": ""}, "type": None, "values": None},
     "true or false"),
    ("pass", "should have the keys"),
])
def test_every_record_that_is_not_exactly_what_was_asked_is_malformed(record, reason):
    exercise = EXERCISES["softmax"]
    with pytest.raises(channel.Malformed, match=reason.replace("[", r"\[").replace("]", r"\]")):
        check.judge_case(exercise, exercise.cases[0], 0, "student_x", lambda kind, payload: record)


def test_a_forged_gradient_of_the_wrong_shape_or_a_lie_about_the_node_gains_nothing():
    exercise = EXERCISES["softmax"]
    good = check.check_case(exercise, _reference_module(), "softmax.py", exercise.cases[1], 1)
    assert good == ("pass", [])
    calls = {"forward": None}

    def call(kind, payload):
        if kind == "forward":  # the right values, so the gradients are asked for
            calls["forward"] = check.run_forward(_reference_module(), "softmax.py", "softmax",
                                                 check.from_arguments(payload))
            return channel.decode(channel.encode(calls["forward"]))
        return channel.decode(channel.encode({"probe_error": None, "node": ["SoftmaxBackward", "student_x"],
                                              "grad_error": None, "grads": [channel.np.zeros((3, 4))]}))

    status, lines = check.judge_case(exercise, exercise.cases[1], 1, "student_x", call)
    assert status == "fail" and "WRONG GRADIENT" in lines[0]


def _reference_module():
    import importlib.util

    import attention.course.source as src
    path = os.path.join(os.path.dirname(src.__file__), "softmax.py")
    spec = importlib.util.spec_from_file_location("student_softmax_ref", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_megabyte_print_per_case_is_clipped_in_the_report_and_the_json(tmp_path):
    path = _softmax_with(tmp_path, "        print('x' * 2_000_000)\n" + SOLUTION_LINE)
    results_json = tmp_path / "results.json"
    assert grader.main(["softmax", path, "--json", str(results_json)]) == 0
    assert os.path.getsize(results_json) < 50_000
    output = json.loads(results_json.read_text())["tests"][0]["output"]
    assert "your code printed:" in output and "more characters not kept" in output


# ---- slower: each runs or kills children ----------------------------------------------------------

HOSTILE_BODIES = {
    "sys_exit_in_case": ("        import sys\n        sys.exit(0)\n", "ERROR in your code:", "SystemExit"),
    "write_outside": ("        open({outside!r}, 'w').write('pwned')\n",
                      "ERROR in your code in the backward:", "only in its scratch folder"),
    "fork": ("        import os\n        os.fork()\n", "ERROR in your code in the backward:",
             "start a process (os.fork)"),
    "subprocess": ("        import subprocess\n        subprocess.run(['true'])\n",
                   "ERROR in your code in the backward:", "run a program"),
    "kill_grader": ("        import os, signal\n        os.kill(os.getppid(), signal.SIGKILL)\n",
                    "ERROR in your code in the backward:", "send a signal"),
    "memory_hog": ("        junk = bytearray(1 << 30)\n", "ERROR in your code in the backward:", "MemoryError"),
}


@pytest.mark.slow  # a child per exercise, several of them killed
@pytest.mark.parametrize("name", sorted(HOSTILE_BODIES))
def test_a_hostile_backward_fails_its_cases_with_a_clear_line_and_changes_nothing_outside(tmp_path, name):
    body, first, detail = HOSTILE_BODIES[name]
    outside = str(tmp_path / "outside.txt")
    path = _softmax_with(tmp_path / "sub", body.format(outside=outside) + SOLUTION_LINE)
    result = grader.grade_exercise(EXERCISES["softmax"], path, timeout=10, memory=256)
    assert result.score == 0 and [c.status for c in result.cases] == ["fail"] * 5, [c.lines for c in result.cases]
    assert result.cases[0].lines[0] == first and detail in "\n".join(result.cases[0].lines)
    assert not os.path.exists(outside)


@pytest.mark.slow
def test_writing_in_the_scratch_folder_is_allowed_and_leaves_nothing_behind(tmp_path):
    path = _softmax_with(tmp_path, "        open('notes.txt', 'a').write('ok')\n" + SOLUTION_LINE)
    result = grader.grade_exercise(EXERCISES["softmax"], path)
    assert result.passed and os.listdir(tmp_path) == ["softmax.py"]  # no __pycache__, no notes.txt


@pytest.mark.slow
@pytest.mark.parametrize("top, status, words", [
    ("import sys\nsys.exit(3)\n", "did not load", "SystemExit: 3"),
    ("import os\nos._exit(3)\n", "did not load", "exited with status 3"),
    ("while True:\n    pass\n", "did not load", "TIMED OUT after 2 s while loading your file"),
])
def test_exits_and_loops_at_import_cost_the_exercise_only(tmp_path, top, status, words):
    result = grader.grade_exercise(EXERCISES["softmax"], _write(tmp_path, "softmax.py", top + SOFTMAX), timeout=2)
    assert [c.status for c in result.cases] == [status] + ["not run"] * 4 and result.score == 0
    assert words in "\n".join(result.cases[0].lines)


@pytest.mark.slow  # grades a class of hostile and honest students
def test_a_class_with_hostile_students_gets_a_complete_csv(tmp_path, capsys):
    subs = tmp_path / "submissions"
    _softmax_with(subs / "ann", SOLUTION_LINE)
    _write(subs / "bea", "softmax.py", FORGED_MESSAGES)
    _write(subs / "cid", "softmax.py", FORGED_VERDICT)
    _softmax_with(subs / "dee", "        print('y' * 2_000_000)\n" + SOLUTION_LINE)
    _softmax_with(subs / "eve", "        import os, signal\n        os.kill(os.getppid(), signal.SIGKILL)\n"
                  + SOLUTION_LINE)
    _softmax_with(subs / "fay", "        while True:\n            pass\n" + SOLUTION_LINE)
    _softmax_with(subs / "gus", SOLUTION_LINE)
    out_csv = tmp_path / "grades.csv"
    assert grader.main(["softmax", "--folder", str(subs), "--csv", str(out_csv), "--timeout", "2"]) == 1
    with open(out_csv, newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert {k: int(r["softmax"]) for k, r in rows.items()} == {
        "ann": 5, "bea": 0, "cid": 0, "dee": 5, "eve": 0, "fay": 0, "gus": 5}
    assert rows["bea"]["notes"] == "softmax: 5 malformed" and rows["fay"]["notes"] == "softmax: 1 timed out"
    assert f"wrote {out_csv}" in capsys.readouterr().out
