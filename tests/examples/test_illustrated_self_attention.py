"""attention/walkthrough.py (examples/illustrated_self_attention.py runs it): prints the tutorial's
figures, checks every gradient, fails loudly."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from attention import walkthrough

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "illustrated_self_attention.py")


def _run(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, timeout=60)


def _matrix_after(out, title):
    """The numbers of the matrix printed under the line that starts with `title`."""
    lines = out.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(title))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip().startswith("["):
            break
        rows.append([float(v) for v in line.strip(" []").split()])
    return np.array(rows)


def test_the_script_prints_the_tutorial_figures_and_passes_its_checks():
    done = _run()
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    figures = {
        "keys = x @ w_key": [[0, 1, 1], [4, 4, 0], [2, 3, 1]],
        "queries = x @ w_query": [[1, 0, 2], [2, 2, 2], [2, 1, 3]],
        "values = x @ w_value": [[1, 2, 3], [2, 8, 0], [2, 6, 3]],
        "scores = queries @ keys.T": [[2, 4, 4], [4, 16, 12], [4, 12, 10]],
        "softmax as rounded in the tutorial": [[0, .5, .5], [0, 1, 0], [0, .9, .1]],
        "outputs with the tutorial's rounded softmax": [[2, 7, 1.5], [2, 8, 0], [2, 7.8, 0.3]],
        "softmax(scores, dim=-1), exact": [[0.0634, 0.4683, 0.4683], [0.0, 0.9820, 0.0180], [0.0003, 0.8805, 0.1192]],
    }
    for title, want in figures.items():
        np.testing.assert_allclose(_matrix_after(out, title), want, atol=1e-9, err_msg=title)
    assert "dS = P ⊙ (dP − rowsum(dP ⊙ P))" in out
    for grad in ("d w_query", "d w_key", "d w_value", "d scores", "d softmax", "d values", "d queries", "d keys"):
        assert _matrix_after(out, grad).shape in {(3, 3), (4, 3)}, grad
    assert out.count("   OK") == 9 + 2 * ("Bonus." in out) and "MISMATCH" not in out
    assert "skipped" not in out  # when attention.SelfAttention exists, the tutorial's weights must load
    assert "Why not simply L = sum(outputs)?" in out
    assert "All checks passed" in out


def test_explain_and_dot_options(tmp_path):
    path = tmp_path / "graph.dot"
    done = _run("--explain", "--dot", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "#1 SumBackward   output 'loss' ()" in done.stdout
    assert "SoftmaxBackward   output 'p' (3, 3)" in done.stdout
    text = path.read_text()
    # drawn after backward, a graph this small shows the values and gradients in its boxes (issue 32)
    assert text.startswith("digraph minitensor {") and "w_query\\n(4, 3)\\ndata [[" in text
    w_query_box = next(line for line in text.splitlines() if '"w_query\\n' in line)
    assert "\\ngrad [[" in w_query_box


def test_a_wrong_gradient_makes_the_script_fail(capsys, monkeypatch):
    # A softmax that is off by a little changes the finite differences of every step before it:
    # the checks against the analytic formulas must catch it and the exit status must say so.
    real = walkthrough.np_softmax
    monkeypatch.setattr(walkthrough, "np_softmax", lambda s: real(1.01 * s))
    assert walkthrough.main([]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "FAILED" in out and "finite differences" in out


@pytest.mark.slow  # runs the walkthrough twice in subprocesses
def test_the_installed_command_and_python_m_run_the_same_walkthrough():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "attention.walkthrough"], capture_output=True, text=True,
                          env=env, timeout=60, cwd=os.path.dirname(ROOT))
    assert done.returncode == 0 and done.stdout == _run().stdout


def test_a_dot_path_in_a_missing_folder_is_one_error_line(tmp_path):
    done = _run("--dot", str(tmp_path / "nowhere" / "g.dot"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1].endswith(f"argument --dot: no folder '{tmp_path / 'nowhere'}' "
                                                         f"to write '{tmp_path / 'nowhere' / 'g.dot'}' in")


def test_svg_option_writes_the_graph_picture_with_values(tmp_path, capsys):
    path = tmp_path / "graph.svg"
    assert walkthrough.main(["--svg", str(path)]) == 0
    assert f"graph picture written to {path}" in capsys.readouterr().out
    svg = path.read_text(encoding="utf-8")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    for name in ("w_query", "scores", "loss"):
        assert f">{name}" in svg, name
    assert "grad [[" in svg  # show_values: the gradients after backward are drawn
    width, height = (float(v) for v in re.search(r'width="([\d.]+)" height="([\d.]+)"', svg).groups())
    assert height > width  # laid top to bottom


def test_an_svg_path_in_a_missing_folder_is_one_error_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        walkthrough.main(["--svg", str(tmp_path / "nowhere" / "g.svg")])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f"argument --svg: no folder '{tmp_path / 'nowhere'}' to write '{tmp_path / 'nowhere' / 'g.svg'}' in")
