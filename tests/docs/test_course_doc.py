"""docs/course.md: its commands parse, its table and its sample reports are what the grader gives."""
import os
import re
import shlex

import pytest

from attention.course import release as rel
from attention.course.exercises import EXERCISES
from attention.course.grade import grade_exercise, parser, report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = open(os.path.join(ROOT, "docs", "course.md"), encoding="utf-8").read()
COMMANDS = [line.split("#")[0].strip() for block in re.findall(r"```bash\n(.*?)```", DOC, re.S)
            for line in block.splitlines()
            if line.startswith("attention-grade") and not re.search(r"\[|\b[A-Z]{2,}\b", line)]  # no synopsis


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_in_the_guide_parses(command):
    args = parser().parse_args(shlex.split(command)[1:])
    if args.exercise and args.exercise != "all":
        assert set(args.exercise.split(",")) <= set(EXERCISES)


def test_the_table_lists_every_exercise_with_its_cases_and_points():
    rows = re.findall(r"^\| `(\w+)` \|.*\| (\d+) \((\d+)\) \|$", DOC, re.M)
    assert rows == [(e.name, str(len(e.cases)), str(e.max_score)) for e in EXERCISES.values()]


def test_the_links_resolve():
    for link in re.findall(r"\]\(([^)#]+)\)", DOC):
        assert os.path.exists(os.path.join(ROOT, "docs", link)), link


def _sample_after(marker):
    block = DOC.split(marker, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return block.splitlines()


def _broken(tmp_path, name, old, new):
    src = rel.source_text(name)
    assert old in src
    path = tmp_path / f"{name}.py"
    path.write_text(src.replace(old, new), encoding="utf-8")
    return str(path)


def test_the_sample_reports_are_what_the_grader_prints(tmp_path):
    path = _broken(tmp_path, "sdpa", "gk = gs.mT @ q", "gk = gs.mT @ q / ctx.scale")
    got = report(grade_exercise(EXERCISES["sdpa"], path))
    sample = _sample_after("as your value next to the")
    assert got[:len(sample)] == [line.replace("/home/me/my_exercises/sdpa.py", path) for line in sample]
    path = _broken(tmp_path, "softmax", "return p * (g - (g * p).sum(dim=-1, keepdim=True))",
                   "return p * undefined_name")
    got = report(grade_exercise(EXERCISES["softmax"], path))
    sample = _sample_after("An error in your code is shown")
    assert got[1:1 + len(sample)] == [line.replace("/home/me/my_exercises/softmax.py", path) for line in sample]
