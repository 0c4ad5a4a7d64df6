"""attention/course/check.py: one (yours, true) pair per wrong input, the factor hint, the student's frames."""
import sys

import numpy as np
import pytest

import minitensor as mt
from attention.course.check import AUTOGRAD_TOL, constant_ratio, gradient_pair, student_error

RNG = np.random.default_rng(0)
TRUE = RNG.standard_normal((3, 4))


def test_a_right_gradient_gives_no_lines():
    assert gradient_pair("input 'x'", TRUE + 1e-9, TRUE, "finite differences") == []


def test_a_wrong_gradient_gives_one_pair_at_its_worst_element():
    yours = TRUE.copy()
    yours[1, 2] += 0.5
    yours[0, 0] += 0.1
    lines = gradient_pair("input 'x'", yours, TRUE, "finite differences")
    assert lines[0] == "WRONG GRADIENT for input 'x': 2 of 12 elements are wrong"
    assert lines[1] == f"  worst, element (1, 2): yours {yours[1, 2]:.6g}, finite differences {TRUE[1, 2]:.6g}"
    assert len(lines) == 2  # no factor: the ratio is not the same everywhere


@pytest.mark.parametrize("factor, words", [
    (2.0, "your gradient is 2x the true one everywhere: a term counted twice, or a factor 2 too many?"),
    (0.25, "your gradient is 1/4 of the true one everywhere: a missing or extra factor"),
    (-1.0, "your gradient is the true one with its sign flipped everywhere"),
    (1.7320508, "your gradient is 1.732x the true one everywhere"),
    (0.0, "your gradient is 0 everywhere"),
])
def test_a_constant_ratio_is_named(factor, words):
    lines = gradient_pair("input 'x'", factor * TRUE, TRUE, "finite differences")
    assert len([x for x in lines if "worst" in x]) == 1
    assert any(words in x for x in lines), lines


def test_a_ratio_of_one_over_the_upstream_gradient_means_g_was_left_out():
    lines = gradient_pair("input 'x'", TRUE / -0.8, TRUE, "finite differences", upstream=np.asarray(-0.8))
    assert any("divided by the upstream gradient g (-0.8 here) everywhere: multiply by g" in x for x in lines)


def test_constant_ratio_ignores_elements_whose_true_value_is_zero_but_not_their_error():
    true = np.array([1.0, 0.0, -2.0])
    assert constant_ratio(np.array([3.0, 0.0, -6.0]), true) == pytest.approx(3.0)
    assert constant_ratio(np.array([3.0, 0.5, -6.0]), true) is None  # not 3x "everywhere"
    assert constant_ratio(np.array([3.0, 0.0, -5.0]), true) is None
    assert constant_ratio(np.zeros(3), np.zeros(3)) is None


def test_nan_is_wrong_and_none_is_named():
    yours = TRUE.copy()
    yours[2, 3] = np.nan
    assert "worst, element (2, 3): yours nan" in gradient_pair("input 'x'", yours, TRUE, "autograd")[1]
    assert "returned None for it" in gradient_pair("input 'w'", None, TRUE, "autograd")[0]


def test_the_autograd_tolerance_is_tight():
    assert gradient_pair("x", TRUE * (1 + 1e-4), TRUE, "autograd", tol=AUTOGRAD_TOL)
    assert not gradient_pair("x", TRUE * (1 + 1e-4), TRUE, "finite differences")


def _student_file(tmp_path, text):
    path = tmp_path / "student.py"
    path.write_text(text)
    namespace = {"__name__": "student"}
    exec(compile(text, str(path), "exec"), namespace)
    return str(path), namespace


def test_student_error_shows_only_the_students_frames(tmp_path):
    path, ns = _student_file(tmp_path, "import minitensor as mt\n\ndef f(x):\n    return x @ mt.ones(5, 7)\n")
    try:
        ns["f"](mt.ones(2, 3))
    except RuntimeError as e:
        lines = student_error(e, path)
    assert lines[0].startswith("RuntimeError: ")
    assert lines[1:] == [f'  File "{path}", line 4, in f', "    return x @ mt.ones(5, 7)"]
    assert "minitensor" not in "\n".join(lines[1:]) and "course" not in "\n".join(lines)


def test_a_recursion_is_shown_once_with_its_count(tmp_path):
    path, ns = _student_file(tmp_path, "def walk(n):\n    if n:\n        walk(n - 1)\n    raise ValueError('deep')\n")
    try:
        ns["walk"](50)
    except ValueError as e:
        lines = student_error(e, path)
    assert f'  File "{path}", line 3, in walk (and 49 more times: a recursion)' in lines
    assert len(lines) < 8
    try:
        ns["walk"](sys.getrecursionlimit() + 10)
    except RecursionError as e:
        lines = student_error(e, path)
    assert "use an explicit stack" in lines[-1]


def test_an_error_raised_after_the_students_code_returned_points_at_their_function(tmp_path):
    path, ns = _student_file(tmp_path, "x = 1\n\n\ndef backward(ctx, g):\n    return g\n")
    try:
        raise RuntimeError("backward of 'F' returned 1 gradients, but forward took 2 arguments")
    except RuntimeError as e:
        lines = student_error(e, path, ns["backward"])
    assert lines[-1] == f'  File "{path}", line 4, in backward (raised after it returned: check what it returns)'


def test_a_syntax_error_names_the_students_line(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n    pass\n")
    try:
        compile(path.read_text(), str(path), "exec")
    except SyntaxError as e:
        lines = student_error(e, str(path))
    assert lines[0].startswith("SyntaxError") and lines[1] == f'  File "{path}", line 1'
