"""docs/pictures.md: every Python snippet runs (in a scratch directory); those that draw with
matplotlib skip where it is not installed, and the printed help text is what help() prints."""
import contextlib
import io
import os
import re

import pytest

import minitensor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = open(os.path.join(ROOT, "docs", "pictures.md"), encoding="utf-8").read()
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC, re.S)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_python_snippets_run(snippet, tmp_path, monkeypatch):
    if "show_heatmaps" in snippet:
        pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(snippet, "docs/pictures.md", "exec"), {})


def test_the_help_text_shown_is_softmaxs():
    shown = re.search(r"```text\n(.*?)```", DOC, re.S).group(1)
    assert shown.strip() in minitensor.softmax.__doc__


def test_there_are_snippets():
    assert len(SNIPPETS) >= 6
