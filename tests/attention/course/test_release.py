"""attention/course/release.py: the students' files hold no solution, import, and raise with hint 1."""
import ast
import importlib.util

import numpy as np
import pytest

from attention.course import release as rel
from attention.course.check import check_case
from attention.course.exercises import EXERCISES
from attention.course.grade import main

NAMES = list(EXERCISES)


def _solution_lines(text):
    """The stripped non-empty lines between the solution markers of a teacher source."""
    lines, inside = [], False
    for line in text.splitlines():
        s = line.strip()
        if s == rel.BEGIN:
            inside = True
        elif s == rel.END:
            inside = False
        elif inside and s:
            lines.append(s)
    assert not inside
    return lines


def _load(path, name):
    spec = importlib.util.spec_from_file_location(f"released_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def handout(tmp_path_factory):
    folder = tmp_path_factory.mktemp("handout")
    rel.release(str(folder))
    return folder


def test_every_exercise_has_a_source_with_a_solution_block():
    for name in NAMES:
        assert _solution_lines(rel.source_text(name)), name


def test_no_line_of_any_solution_appears_in_any_released_file(handout):
    released = {name: (handout / f"{name}.py").read_text(encoding="utf-8") for name in NAMES}
    assert sorted(p.name for p in handout.iterdir()) == sorted(f"{n}.py" for n in NAMES)
    for name in NAMES:
        for line in _solution_lines(rel.source_text(name)):
            for other, text in released.items():
                stripped = [x.strip() for x in text.splitlines()]
                assert line not in stripped, f"{name}'s solution line {line!r} is in the released {other}.py"
                if len(line) >= 12:
                    assert line not in text, f"{name}'s solution line {line!r} is inside the released {other}.py"
        assert rel.BEGIN not in released[name] and rel.END not in released[name]


def test_the_released_file_is_the_source_outside_the_solution_blocks(handout):
    for name in NAMES:
        source = rel.source_text(name).splitlines()
        kept = []
        inside = False
        for line in source:
            if line.strip() == rel.BEGIN:
                inside = True
            elif line.strip() == rel.END:
                inside = False
            elif not inside:
                kept.append(line)
        released = (handout / f"{name}.py").read_text(encoding="utf-8").splitlines()
        it = iter(released)
        assert all(any(line == r for r in it) for line in kept), f"{name}: a line outside the solutions changed"


@pytest.mark.parametrize("name", NAMES)
def test_released_stubs_import_and_raise_not_implemented_with_hint_1(handout, name):
    exercise = EXERCISES[name]
    path = str(handout / f"{name}.py")
    module = _load(path, name)
    assert callable(getattr(module, exercise.entry))
    status, lines = check_case(exercise, module, path, exercise.cases[0], seed=0)
    assert status == "not implemented", lines
    text = "\n".join(lines)
    assert exercise.hints[0] in text and f"attention-grade --hint 2 {name}" in text
    assert exercise.hints[1] not in text  # the next tiers are the grader's to give


def test_the_stub_message_survives_the_line_wrapping(handout):
    for name in NAMES:
        tree = ast.parse((handout / f"{name}.py").read_text(encoding="utf-8"))
        raises = [n for n in ast.walk(tree) if isinstance(n, ast.Raise)]
        assert raises, name
        for r in raises:
            assert r.exc.func.id == "NotImplementedError"
            assert ast.literal_eval(r.exc.args[0]) == EXERCISES[name].stub_message()


SOURCE = '''def f(x):
    y = x + 1
    # BEGIN SOLUTION
    return y * 2
    # END SOLUTION
'''


def test_a_stub_block_replaces_the_default_raise():
    text = SOURCE + ("    # BEGIN STUB\n    # y = y - 1\n    #\n"
                     "    # raise NotImplementedError('write f')\n    # END STUB\n")
    out = rel.strip_solutions(text, "unused")
    assert "return y * 2" not in out and "unused" not in out
    assert "    y = y - 1\n\n    raise NotImplementedError('write f')\n" in out
    namespace = {}
    exec(compile(out, "f.py", "exec"), namespace)
    with pytest.raises(NotImplementedError, match="write f"):
        namespace["f"](np.ones(2))


@pytest.mark.parametrize("text, message", [
    (SOURCE.replace("    # END SOLUTION\n", ""), "line 3: the block it opens has no '# END SOLUTION'"),
    (SOURCE.replace("    # BEGIN SOLUTION\n", ""), "line 4: '# END SOLUTION' without a '# BEGIN SOLUTION'"),
    (SOURCE.replace("    return y * 2\n", "    # BEGIN SOLUTION\n"), "line 4: '# BEGIN SOLUTION' inside the block"),
    ("def f(x):\n    return x\n", "no '# BEGIN SOLUTION' block"),
    (SOURCE + "    # BEGIN STUB\n    y = 0\n    # END STUB\n", "line 7: a stub line must be commented out"),
    (SOURCE.replace("    # BEGIN SOLUTION", "        # BEGIN SOLUTION"), "the released file does not compile"),
])
def test_misplaced_markers_are_refused_with_file_and_line(text, message):
    with pytest.raises(rel.MarkerError, match="teacher.py") as info:
        rel.strip_solutions(text, "hint", "teacher.py")
    assert message in str(info.value)


def test_release_never_overwrites_a_students_file_unless_forced(tmp_path):
    mine = tmp_path / "gelu.py"
    mine.write_text("# my work\n")
    with pytest.raises(FileExistsError, match="gelu.py exists"):
        rel.release(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gelu.py"]  # nothing written at all
    assert mine.read_text() == "# my work\n"
    rel.release(str(tmp_path), ["gelu"], force=True)
    assert "NotImplementedError" in mine.read_text()


def test_the_release_command(tmp_path, capsys):
    assert main(["--release", str(tmp_path / "out"), "softmax,gelu"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["gelu.py", "softmax.py"]
    assert "wrote" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["--release", str(tmp_path / "out"), "gelu"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "error: argument --release:" in err and "gelu.py exists" in err and "--force" in err
    assert main(["--release", str(tmp_path / "out"), "gelu", "--force"]) == 0
