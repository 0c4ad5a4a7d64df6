"""Write notebooks/exercises/NN_<exercise>.py, one notebook per exercise of attention.course.

    python notebooks/make_exercise_notebooks.py           # write them again
    python notebooks/make_exercise_notebooks.py --check   # exit 1 if one is out of date

Each notebook is made from the course itself, so it says what `attention-grade` says: the math
is the docstring of the student's file, the code cell is that file as `attention-grade --release`
writes it, and the hints are the grader's. Change an exercise in attention/course, then run this;
tests/notebooks/test_notebooks.py fails while a notebook is out of date.
"""
import ast
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the checkout's package, also when it is not installed

from attention.course.exercises import EXERCISES  # noqa: E402
from attention.course.release import released_text  # noqa: E402

OUT = os.path.join(HERE, "exercises")

HEADER = """\
# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---
"""

CHECKED = {
    "backward": "your gradient of every input is compared with central finite differences (float64, "
                "the output weighted by a random upstream gradient)",
    "function": "your output and every gradient are compared with what minitensor's autograd computes "
                "through the same steps",
    "order": "the graph's backward is run in your order and compared with the real engine's",
    "steps": "each step alone, given random upstream gradients, is compared with autograd's VJP of the same "
             "line, then your `train` is compared with the same training done with autograd",
}


def check_cells(exercise, path):
    """The cells a learner runs between writing and grading: for the backprop ninja, the table of
    each of their gradients against autograd's, and a training run on their backward alone."""
    if exercise.kind != "steps":
        return []
    return [
        markdown("## Check each gradient against autograd\n\n" + para(
            "Run this after each step you write: one row a variable, your gradient against autograd's (`exact`: "
            "bit for bit, `approx`: within the grader's tolerance, and the largest difference). Each row uses "
            "your own earlier gradients, so the first wrong row is the one to fix.")),
        f"# %%\nfrom attention.course.ninja import compare_by_hand, train_by_hand\n\n"
        f"compare_by_hand(\"{path}\")\n",
        markdown("## Train with your backward alone\n\n" + para(
            "Once `train` is written: SGD from the same start with your gradients and with autograd's, the "
            "loss before each step side by side. No `.backward()` anywhere: autograd is off while yours runs.")),
        f"# %%\ntrain_by_hand(\"{path}\")\n",
    ]


def file_name(number, name):
    return f"{number:02d}_{name}.py"


def para(text):
    """A paragraph of markdown wrapped to the project's line length (markdown joins the lines again)."""
    return textwrap.fill(text, 96, break_long_words=False, break_on_hyphens=False)


def markdown(text):
    """`text` as the lines of a markdown cell."""
    return "# %% [markdown]\n" + "".join(f"# {line}".rstrip() + "\n" for line in text.strip("\n").split("\n"))


def split_docstring(source):
    """(the module docstring's title, its body without the 'Grade it:' line, the code after it)."""
    module = ast.parse(source)
    doc = ast.get_docstring(module, clean=True)
    lines = source.split("\n")
    code = "\n".join(lines[module.body[0].end_lineno:]).strip("\n") + "\n"
    title, _, body = doc.partition("\n")
    body = "\n".join(line for line in body.split("\n") if not line.startswith("Grade it:"))
    return title.removeprefix("Exercise: ").rstrip("."), body.strip("\n"), code


def notebook(number, exercise):
    name = exercise.name
    title, math, code = split_docstring(released_text(name))
    path = f"my_exercises/{name}.py"
    hints = "\n\n".join(f"<details><summary>Hint {k}</summary>\n\n{para(hint)}\n\n</details>"
                        for k, hint in enumerate(exercise.hints, 1))
    cells = [
        markdown(f"# Exercise {number} of {len(EXERCISES)}: {title}\n\n{math}\n\n" + para(
            f"Run the cells from the top: the one under **Your code** saves itself as `{path}`, the one "
            f"under **Grade it** grades that file: {CHECKED[exercise.kind]}. Change the code, run both "
            f"again. The same file can be graded in a terminal with `attention-grade {name} {path}`.")),
        "# %%\nimport os\n\nfrom attention.course.exercises import find\nfrom attention.course.grade import "
        f"grade_exercise, report\n\nexercise = find(\"{name}\")\nos.makedirs(\"my_exercises\", exist_ok=True)\n",
        markdown("## Your code\n\n" + para(
            "Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on "
            "the first line saves the cell to the file instead of running it.)")),
        f"# %%\n# %%writefile {path}\n{code}",
        *check_cells(exercise, path),
        markdown(f"## Grade it\n\n{exercise.max_score} points in {len(exercise.cases)} cases. A fresh copy "
                 "of this notebook reports \"not implemented yet\"."),
        f"# %%\nresult = grade_exercise(exercise, \"{path}\")\nprint(\"\\n\".join(report(result)))\n",
        markdown(f"## Hints\n\nOpen one at a time: the third all but gives the answer.\n\n{hints}"),
    ]
    return HEADER + "\n" + "\n\n".join(cells)


def notebooks():
    """{file name: text} of every exercise notebook."""
    return {file_name(k, name): notebook(k, e) for k, (name, e) in enumerate(EXERCISES.items(), 1)}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    check = argv == ["--check"]
    if argv and not check:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    stale = []
    for name, text in notebooks().items():
        path = os.path.join(OUT, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(path)
            if not check:
                os.makedirs(OUT, exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    for path in stale:
        print(f"{'out of date' if check else 'wrote'}: {os.path.relpath(path)}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
