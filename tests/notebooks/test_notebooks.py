"""notebooks/: every percent-format notebook runs top to bottom in a fresh kernel, and shows what it
promises (pictures, the grader's report); the exercise notebooks are what their generator writes.

Executing needs the `notebooks` extra (jupytext, nbclient, ipykernel, matplotlib); without it those
tests skip. scripts/run_notebooks.py runs them: the kernel is this interpreter, importing this
checkout, in a folder outside it, so nothing a notebook writes lands in the repository. Each
lesson runs once: the docs site's build shows the same run.
"""
import glob
import importlib.util
import os
import pathlib
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOKS_DIR = os.path.join(ROOT, "notebooks")
HEADER = "# ---\n# jupyter:\n"  # how a jupytext text notebook with metadata begins


def _is_notebook(path):
    with open(path, encoding="utf-8") as f:
        return f.read(len(HEADER)) == HEADER and "format_name: percent" in f.read(2000)


NOTEBOOKS = sorted(p for p in glob.glob(os.path.join(NOTEBOOKS_DIR, "**", "*.py"), recursive=True) if _is_notebook(p))
IDS = [os.path.relpath(p, NOTEBOOKS_DIR) for p in NOTEBOOKS]
EXERCISE_NOTEBOOKS = [p for p in NOTEBOOKS if os.path.basename(os.path.dirname(p)) == "exercises"]

def _generator():
    spec = importlib.util.spec_from_file_location("make_exercise_notebooks",
                                                  os.path.join(NOTEBOOKS_DIR, "make_exercise_notebooks.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- no extra needed -------------------------------------------------------------------------------

def test_the_notebooks_are_there_as_text_only():
    names = {os.path.relpath(p, NOTEBOOKS_DIR) for p in NOTEBOOKS}
    assert {"01_illustrated_self_attention.py", "02_backprop_through_attention.py",
            "03_train_a_toy_model.py"} <= names
    assert len(EXERCISE_NOTEBOOKS) == 9
    tracked = subprocess.run(["git", "ls-files", "notebooks"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode == 0:  # (a source tree without git: nothing to ask)
        assert not [f for f in tracked.stdout.split() if f.endswith(".ipynb")]


def test_exercise_notebooks_are_up_to_date_with_the_course():
    """One per exercise, each what make_exercise_notebooks.py writes from the course's release and
    hints: a changed stub or hint fails here until the notebooks are written again."""
    from attention.course.exercises import EXERCISES

    gen = _generator()
    want = gen.notebooks()
    assert [name for name in want] == [gen.file_name(i, n) for i, n in enumerate(EXERCISES, 1)]
    for name, text in want.items():
        path = os.path.join(NOTEBOOKS_DIR, "exercises", name)
        assert os.path.exists(path), f"{path} is missing: run python notebooks/make_exercise_notebooks.py"
        with open(path, encoding="utf-8") as f:
            assert f.read() == text, f"{path} is out of date: run python notebooks/make_exercise_notebooks.py"
    stale = {os.path.basename(p) for p in EXERCISE_NOTEBOOKS} - set(want)
    assert not stale, f"notebooks of no exercise: {sorted(stale)}"


def test_an_exercise_notebook_holds_the_released_stub_and_every_hint():
    from attention.course.exercises import EXERCISES
    from attention.course.release import released_text

    gen = _generator()
    for i, (name, exercise) in enumerate(EXERCISES.items(), 1):
        text = gen.notebooks()[gen.file_name(i, name)]
        code = released_text(name).split('"""\n', 1)[1]  # the student's file after its docstring
        assert f"# %%writefile my_exercises/{name}.py\n" + code.strip() + "\n" in text
        assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
        for hint in exercise.hints:
            assert hint.replace("\n", " ") in text.replace("\n# ", " ")


def test_notebook_02_draws_its_graphs_after_backward():
    """Issue 32: the graph drawn before backward() showed no gradient. Each `to_svg` cell of notebook
    02 comes after a cell that ran backward on the loss it draws (read from the text: no extra needed)."""
    with open(os.path.join(NOTEBOOKS_DIR, "02_backprop_through_attention.py"), encoding="utf-8") as f:
        cells = [cell for cell in f.read().split("\n# %%") if not cell.startswith(" [markdown]")]  # code only
    drawn = [i for i, cell in enumerate(cells) if "to_svg(loss" in cell]
    assert len(drawn) >= 2
    for i in drawn:
        last = [k for k, cell in enumerate(cells[:i + 1]) if "loss = " in cell][-1]  # where the loss was made
        assert any("loss.backward()" in cell for cell in cells[last:i + 1]), f"drawn before backward:{cells[i]}"


# ---- jupytext reads them as written ----------------------------------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_jupytext_writes_each_back_unchanged(path):
    """Read as a notebook and written back, a file is the same text (but for the version stamp
    jupytext adds): each cell is where the file says, and saving from Jupyter rewrites nothing."""
    jupytext = pytest.importorskip("jupytext")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    nb = jupytext.reads(text, fmt="py:percent")
    again = "".join(line for line in jupytext.writes(nb, fmt="py:percent").splitlines(keepends=True)
                    if not line.startswith("#       jupytext_version:"))
    assert again == text
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")  # a title first


# ---- executed (the `notebooks` extra) ---------------------------------------------------------------

def _runner():
    """scripts/run_notebooks.py, which runs a notebook in a kernel of this interpreter and keeps each
    lesson's run for the docs site too (skips without the `notebooks` extra)."""
    for module in ("jupytext", "nbclient", "ipykernel", "matplotlib"):
        pytest.importorskip(module)
    spec = importlib.util.spec_from_file_location("run_notebooks", os.path.join(ROOT, "scripts", "run_notebooks.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def execute(path, tmp_path, edit=None):
    """Run the percent file at `path` as a notebook in `tmp_path`; return the executed notebook.
    `edit(nb)` may change the notebook before it runs."""
    return _runner().execute(path, tmp_path / "run", edit=edit)


def lesson_run(path):
    """(the executed notebook, its working folder): a lesson is run once, and the docs site's build
    shows that same run (scripts/run_notebooks.py keeps it, keyed on everything it depends on)."""
    runner = _runner()  # (first: it skips without the extra)
    import nbformat

    done, folder = runner.executed(path)
    return nbformat.read(done, as_version=4), folder


def outputs(nb, kind=None):
    """Every output of every code cell, or only those with the MIME type `kind`."""
    found = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    return [o for o in found if kind is None or kind in o.get("data", {})]


def text_of(nb):
    parts = []
    for o in outputs(nb):
        if o.get("output_type") == "stream":
            parts.append(o["text"])
        elif "text/plain" in o.get("data", {}):
            parts.append(o["data"]["text/plain"])
    return "".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_runs_top_to_bottom(path, tmp_path):
    if path in EXERCISE_NOTEBOOKS:
        nb, folder = execute(path, tmp_path), tmp_path / "run"
    else:
        nb, folder = lesson_run(path)
    errors = [o for o in outputs(nb) if o.get("output_type") == "error"]
    assert not errors, errors
    name = os.path.relpath(path, NOTEBOOKS_DIR)
    text = text_of(nb)
    if path in EXERCISE_NOTEBOOKS:  # as a fresh student gets it: the grader reports, nothing raises
        exercise = os.path.basename(path)[3:-3]
        assert f"grading '{exercise}'" in text and "result: not implemented yet" in text
        if exercise == "backprop_ninja":  # its table and its training run say how far the student got
            assert "d_logits is not written yet" in text and "train is not written yet" in text
    elif name.startswith("01_"):
        assert len(outputs(nb, "image/png")) >= 3  # heatmaps of P, dP and dS
        assert text.count("OK") >= 9 and "MISMATCH" not in text
    elif name.startswith("02_"):
        svgs = [o["data"]["image/svg+xml"] for o in outputs(nb, "image/svg+xml")]
        assert svgs  # the graph, drawn inline ...
        assert all("grad " in svg for svg in svgs)  # ... after backward, with the gradients' values
        assert any("[softmax]" in svg for svg in svgs) and any("[split heads]" in svg for svg in svgs)
        assert outputs(nb, "text/html")  # explain's table
        assert len(outputs(nb, "image/png")) >= 3
    elif name.startswith("03_"):
        # the loss plot is displayed while the cell runs (and updated in place), not at its end
        training = next(c for c in nb.cells if c.cell_type == "code" and "train_step(" in c.source)
        assert [o for o in training.outputs if o.output_type == "display_data" and "image/png" in o.data]
        assert len(outputs(nb, "image/png")) >= 2  # ... and the attention maps
        viewer = pathlib.Path(folder) / "runs" / "notebook" / "attention_viewer.html"
        assert viewer.exists() and [o for o in outputs(nb, "text/html") if "<iframe srcdoc=" in o.data["text/html"]]
        assert "held-out exact match: " in text
    else:
        pytest.fail(f"{name}: a notebook this test does not know; say what it must show")


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=[os.path.basename(p) for p in EXERCISE_NOTEBOOKS])
def test_an_exercise_notebook_grades_what_the_student_wrote(path, tmp_path):
    """With the teacher's solution in the student's cell, the grading cell reports a pass; so the
    cell grades that code, not a fixed file."""
    from attention.course.release import source_text

    exercise = os.path.basename(path)[3:-3]

    def solve(nb):
        cells = [c for c in nb.cells if c.source.startswith("%%writefile")]
        assert len(cells) == 1
        cells[0].source = cells[0].source.split("\n", 1)[0] + "\n" + source_text(exercise)

    text = text_of(execute(path, tmp_path, edit=solve))
    assert "result: PASSED" in text, text
