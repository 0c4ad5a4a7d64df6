"""Marks on the pictures that help a reader: where the prompt ends and the answer begins (maps and
viewer), upright short column labels, and a loss curve with a title and its held-out evaluations.

The matplotlib parts skip without it; the viewer's parts read the page (and run it in headless
Chromium where that is installed)."""
import io
import json
import os
import re
import subprocess

import numpy as np
import pytest

from attention import pictures
from attention.heatmaps import show_heatmaps
from attention.viewer import attention_viewer_html

CHROMIUM = "/usr/bin/chromium"


def weights(shape, seed=0):
    w = np.random.default_rng(seed).random(shape)
    return w / w.sum(axis=-1, keepdims=True)


def _data(page):
    return json.loads(re.search(r'id="attention-data">(.*?)</script>', page, re.S).group(1))


@pytest.fixture
def mpl():
    return pytest.importorskip("matplotlib")


def _rules(ax):
    """(horizontal, vertical) positions of the straight rules drawn across a heatmap panel."""
    rows = {float(line.get_ydata()[0]) for line in ax.lines if len(set(line.get_ydata())) == 1
            and list(line.get_xdata()) == [0, 1]}
    cols = {float(line.get_xdata()[0]) for line in ax.lines if len(set(line.get_xdata())) == 1
            and list(line.get_ydata()) == [0, 1]}
    return rows, cols


def test_the_maps_mark_where_the_answer_begins_in_every_panel(mpl):
    fig = show_heatmaps(weights((2, 5, 5)), list("abcde"), list("abcde"), prompt_len=3)
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 2 and all(_rules(ax) == ({2.5}, {2.5}) for ax in panels)
    assert all(not ax.lines for ax in show_heatmaps(weights((2, 5, 5))).axes)  # no prompt: no rule


@pytest.mark.parametrize("labels, turned", [(list("ab↵·e"), 0), (["10", "11", "12", "13", "14"], 0),
                                            (["the", "cat", "sat", "on", "mat"], 90)])
def test_short_column_labels_stay_upright(mpl, labels, turned):
    ax = [a for a in show_heatmaps(weights((5, 5)), labels, labels).axes if a.images][0]
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {turned}


@pytest.mark.parametrize("bad", [0, 6, -1, 2.5, True, "2"])
def test_a_prompt_length_outside_the_tokens_is_refused(bad):
    with pytest.raises(ValueError, match=r"attention_viewer_html: prompt_len must be an integer from 1 to 5"):
        attention_viewer_html(weights((5, 5)), list("abcde"), prompt_len=bad)
    with pytest.raises(ValueError, match=r"show_heatmaps: prompt_len must be an integer from 1 to 5"):
        show_heatmaps(weights((5, 5)), prompt_len=bad)


def test_the_viewer_holds_the_prompt_length_and_says_what_the_dashed_lines_mean():
    page = attention_viewer_html(weights((1, 2, 4, 4)), list("abcd"), prompt_len=2)
    assert _data(page)["prompt_len"] == 2 and 'id="legend"' in page
    assert _data(attention_viewer_html(weights((4, 4)), list("abcd")))["prompt_len"] is None
    assert "th.key.vertical" in page  # turned only when a key's label is long (the script decides)


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="headless Chromium is not installed")
@pytest.mark.slow  # a browser start, about a second
def test_chromium_draws_the_divider_and_keeps_single_characters_upright(tmp_path):
    path = tmp_path / "v.html"
    attention_viewer_html(weights((1, 2, 4, 4)), list("ab↵d"), path=str(path), prompt_len=2)
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    dom = done.stdout
    assert re.findall(r'<th class="(key[^"]*)"', dom) == ["key", "key", "key answer-start", "key"]
    assert len(re.findall(r'<tr class="answer-start">', dom)) == 1
    assert len(re.findall(r'<td class="cell answer-start"', dom)) == 4
    assert "Dashed lines: the prompt (first 2 tokens)" in dom


def test_the_loss_curve_has_a_title_and_marks_each_exact_match_evaluation(mpl):
    evals = [{"step": 5, "distinct": 0.5, "draws": 0.25}, {"step": 10, "distinct": 1.0, "draws": 0.75}]
    fig = pictures.loss_curve([3.0, 2.0, 1.5, 1.2, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5], evals, "sort")
    ax = fig.axes[0]
    assert ax.get_title() == "sort: training loss, 2 held-out evaluations"
    marks = [line for line in ax.lines if list(line.get_ydata()) == [0, 1]]
    assert [float(line.get_xdata()[0]) for line in marks] == [5.0, 10.0]
    right = fig.axes[1]  # the exact-match scores on a percent axis
    np.testing.assert_allclose(right.lines[0].get_ydata(), [25.0, 75.0])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["training loss", "held-out exact match (%)"]


def test_the_loss_curve_of_a_text_puts_the_heldout_loss_on_the_loss_axis(mpl):
    evals = [{"step": 2, "loss": 2.5, "bpc": 3.6}, {"step": 4, "loss": 2.0, "bpc": 2.9}]
    fig = pictures.loss_curve([3.0, 2.8, 2.4, 2.1], evals, "chars")
    (ax,) = fig.axes
    heldout = [line for line in ax.lines if line.get_label() == "held-out loss"]
    np.testing.assert_allclose(heldout[0].get_ydata(), [2.5, 2.0])
    assert ax.get_title() == "chars: training loss, 2 held-out evaluations"


def test_saved_pictures_carry_the_divider_and_the_marks(tmp_path, monkeypatch):
    seen = {}

    class Drawn:  # stands in for the Figures: what _save passes on is the point, not the drawing
        def savefig(self, path, **kw):
            open(path, "wb").close()

    monkeypatch.setattr(pictures, "show_heatmaps", lambda *a, **k: seen.setdefault("maps", k) and Drawn())
    monkeypatch.setattr(pictures, "loss_curve", lambda *a: seen.setdefault("curve", a) and Drawn())
    evals = [{"step": 1, "distinct": 0.0, "draws": 0.0}]
    files = pictures._save(weights((1, 1, 4, 4)), list("abcd"), "t", [1.0, 0.5], str(tmp_path), io.StringIO(),
                           prompt_len=3, evals=evals, name="sort")
    assert [os.path.basename(f) for f in files] == ["attention_maps.png", "loss_curve.png", "attention_viewer.html"]
    assert seen["maps"]["prompt_len"] == 3 and seen["curve"] == ([1.0, 0.5], evals, "sort")
    assert _data((tmp_path / "attention_viewer.html").read_text(encoding="utf-8"))["prompt_len"] == 3
