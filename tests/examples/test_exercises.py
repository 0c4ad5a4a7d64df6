"""examples/exercises: the grader passes every solution, stops at stubs, and names a wrong input."""
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXERCISES = os.path.join(ROOT, "examples", "exercises")
NAMES = ("softmax", "layer_norm", "sdpa")


def _grader():
    spec = importlib.util.spec_from_file_location("exercise_grader_under_test", os.path.join(EXERCISES, "grade.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


grader = _grader()


def grade(name, path):
    lines = []
    status = grader.grade(name, str(path), out=lines.append)
    return status, "\n".join(lines)


@pytest.mark.parametrize("name", NAMES)
def test_reference_solutions_pass(name):
    status, out = grade(name, os.path.join(EXERCISES, "solutions", f"{name}.py"))
    assert status == 0, out
    assert "result: PASSED" in out and "FAIL" not in out


@pytest.mark.parametrize("name", NAMES)
def test_unsolved_stubs_fail_clearly_as_not_implemented(name):
    status, out = grade(name, os.path.join(EXERCISES, f"{name}.py"))
    assert status == 1
    assert "NOT IMPLEMENTED" in out and "Hint:" in out and "result: not implemented yet" in out


def _broken(tmp_path, name, old, new):
    with open(os.path.join(EXERCISES, "solutions", f"{name}.py"), encoding="utf-8") as f:
        src = f.read()
    assert old in src, f"the solution changed: update this test's edit of {name}"
    path = tmp_path / f"student_{name}.py"
    path.write_text(src.replace(old, new), encoding="utf-8")
    return path


@pytest.mark.parametrize("name, old, new, wrong_input", [
    ("sdpa", "gk = gs.mT @ q", "gk = gs.mT @ q / ctx.scale", "'k' (argument 1)"),  # the scale cancelled out
    ("sdpa", "gv = p.mT @ g", "gv = p @ g", "'v' (argument 2)"),  # forgot the transpose (square P only)
    ("layer_norm", "gb = g.reshape(-1, d).sum(dim=0)", "gb = g.reshape(-1, d).mean(dim=0)", "'bias' (argument 2)"),
    ("layer_norm", "gx = rstd * (gxhat - gxhat.mean(dim=-1, keepdim=True) - ",
     "gx = rstd * (gxhat - ", "'x' (argument 0)"),
    ("softmax", "return p * (g - (g * p).sum(dim=-1, keepdim=True))", "return p * g", "'x' (argument 0)"),
])
def test_a_wrong_solution_is_pinned_on_the_wrong_input(tmp_path, name, old, new, wrong_input):
    status, out = grade(name, _broken(tmp_path, name, old, new))
    assert status == 1
    assert f"WRONG GRADIENT for input {wrong_input}" in out, out
    assert "analytic" in out and "numeric" in out and "Worst: element" in out  # gradcheck's own report
    assert "result: FAILED" in out


def test_a_changed_forward_and_a_composed_answer_are_refused(tmp_path):
    status, out = grade("softmax", _broken(tmp_path, "softmax", "return e / e.sum(axis=-1, keepdims=True)",
                                           "return e"))
    assert status == 1 and "WRONG FORWARD" in out
    cheat = tmp_path / "cheat.py"
    cheat.write_text("import minitensor.nn.functional as F\n\ndef softmax(x):\n    return F.softmax(x, dim=-1)\n")
    status, out = grade("softmax", cheat)
    assert status == 1 and "NOT YOUR FUNCTION" in out


def test_a_backward_of_the_wrong_shape_or_a_crash_is_reported_with_its_line(tmp_path):
    status, out = grade("layer_norm", _broken(tmp_path, "layer_norm", "return gx, gw, gb, None", "return gx, gw, gb"))
    assert status == 1 and "returned 3 gradients" in out
    status, out = grade("softmax", _broken(tmp_path, "softmax", "return p * (g - (g * p).sum(dim=-1, keepdim=True))",
                                           "return p * undefined_name"))
    assert status == 1 and "NameError" in out and "student_softmax.py\", line" in out


def test_the_command_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    solution = os.path.join("examples", "exercises", "solutions", "sdpa.py")
    done = subprocess.run([sys.executable, "-m", "examples.exercises.grade", "sdpa", solution], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "PASSED" in done.stdout, done.stdout + done.stderr
    done = subprocess.run([sys.executable, os.path.join(EXERCISES, "grade.py"), "softmax",
                           os.path.join(EXERCISES, "softmax.py")], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "NOT IMPLEMENTED" in done.stdout, done.stdout + done.stderr
    assert grader.main(["nonsense", "x.py"]) == 2
    assert grader.main([]) == 2
