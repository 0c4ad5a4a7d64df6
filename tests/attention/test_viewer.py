"""attention_viewer_html: one self-contained page (no network, no server) holding every weight.

The page is parsed with html.parser and its JSON compared with the input; where node is installed
its script runs against a minimal DOM (tests/attention/viewer_dom_stub.js) and the menus are
picked as a user would; where headless Chromium is installed the page is loaded there too.
"""
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

import attention
import minitensor as mt
from attention.viewer import attention_viewer_html

STUB = os.path.join(os.path.dirname(__file__), "viewer_dom_stub.js")


class Page(HTMLParser):
    """What a browser would load: every tag with its attributes, and each script's text."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.scripts, self._in_script = [], [], None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append([dict(attrs), ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None

    def handle_data(self, data):
        if self._in_script is not None:
            self.scripts[-1][1] += data

    def ids(self):
        return {a["id"]: tag for tag, a in self.tags if "id" in a}

    def data(self):
        (blob,) = [text for attrs, text in self.scripts if attrs.get("id") == "attention-data"]
        return json.loads(blob)


def weights(shape, seed=0):
    w = np.random.default_rng(seed).random(shape)
    return w / w.sum(axis=-1, keepdims=True)


def as_array(nested):
    return np.array([[[[np.nan if v is None else v for v in row] for row in head] for head in layer]
                     for layer in nested], dtype=np.float64)


def test_the_page_parses_and_holds_every_weight_and_token():
    w = weights((2, 3, 5, 5))
    tokens = ["the", "cat", "sat", "on", "mats"]
    page = Page(attention_viewer_html(w, tokens))
    ids = page.ids()
    assert ids["layer"] == ids["head"] == ids["query"] == "select"
    assert ids["grid"] == "table" and ids["lines"] == "canvas"
    data = page.data()
    assert (data["layers"], data["heads"], data["queries"], data["keys"]) == (2, 3, tokens, tokens)
    np.testing.assert_allclose(as_array(data["weights"]), w, rtol=1e-6, atol=1e-9)
    assert data["signed"] is False and (data["vmin"], data["vmax"]) == (0.0, 1.0)


def test_the_page_needs_nothing_from_outside():
    text = attention_viewer_html(weights((1, 2, 3, 3)), list("abc"), title="a title")
    assert "http" not in text.lower() and not re.search(r"[a-z]+://", text, re.I)  # no URL of any scheme
    page = Page(text)
    for tag, attrs in page.tags:  # no file, font, stylesheet or script fetched
        assert not {"src", "href"} & set(attrs), (tag, attrs)
        assert tag not in ("link", "iframe", "img", "object", "embed")
    assert "@import" not in text and "url(" not in text
    assert [attrs.get("type") for attrs, _ in page.scripts] == ["application/json", None]


def test_tokens_that_look_like_markup_cannot_break_the_page():
    tokens = ["</script>", "<!--", "a & b", '"q"']
    text = attention_viewer_html(weights((4, 4)), tokens, title="<b>x</b>")
    page = Page(text)
    assert len(page.scripts) == 2 and page.data()["queries"] == tokens
    assert "<b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt;" in text


@pytest.mark.parametrize("make", [
    lambda w: mt.tensor(w, requires_grad=True),        # a Tensor that requires grad
    lambda w: [layer for layer in w],                  # DecoderLM.attention_maps: one (H, T, T) per layer
    lambda w: [mt.tensor(layer) for layer in w],
])
def test_tensors_and_per_layer_lists_are_accepted(make):
    w = weights((2, 2, 3, 3))
    np.testing.assert_allclose(as_array(Page(attention_viewer_html(make(w), list("xyz"))).data()["weights"]), w,
                               rtol=1e-6)


@pytest.mark.parametrize("shape, expect", [((3, 4), (1, 1, 3, 4)), ((2, 3, 4), (1, 2, 3, 4))])
def test_fewer_dims_are_one_layer_and_one_head(shape, expect):
    data = Page(attention_viewer_html(weights(shape), list("abc"), key_tokens=list("wxyz"))).data()
    assert as_array(data["weights"]).shape == expect and data["keys"] == list("wxyz")


def test_signed_values_get_a_scale_symmetric_about_zero_and_nan_becomes_null():
    g = np.array([[[[-0.5, 0.25], [0.1, np.nan]]]])
    data = Page(attention_viewer_html(g, ["p", "q"])).data()
    assert data["signed"] is True and (data["vmin"], data["vmax"]) == (-0.5, 0.5)
    assert data["weights"][0][0][1] == [0.1, None]


def test_path_writes_the_page_it_returns(tmp_path):
    path = tmp_path / "viewer.html"
    text = attention_viewer_html(weights((2, 2)), ["a", "b"], path=str(path))
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("args, match", [
    ((np.zeros(3), ["a"]), r"attention_viewer_html: expected numbers of shape .* got shape \(3,\)"),
    ((np.zeros((2, 2, 2, 2, 2)), ["a", "b"]), r"got shape \(2, 2, 2, 2, 2\)"),
    ((np.zeros((3, 3)), ["a", "b"]), r"attention_viewer_html: 3 queries but 2 labels: \['a', 'b'\]"),
    ((np.zeros((2, 3)), ["a", "b"], None, ["k"]), "attention_viewer_html: 3 keys but 1 labels"),
])
def test_bad_input_is_refused_naming_the_function_and_the_shapes(args, match):
    with pytest.raises(ValueError, match=match):
        attention_viewer_html(*args)


def test_keys_without_their_tokens_are_numbered():
    assert Page(attention_viewer_html(weights((2, 3)), ["a", "b"])).data()["keys"] == ["0", "1", "2"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_script_fills_the_menus_and_redraws_when_the_user_picks(tmp_path):
    w = weights((2, 3, 4, 4), seed=1)
    w[1, 1, 2, [0, 3]] = 0.0  # query 2 of layer 1 head 1 looks at keys 1 and 2 only
    w[1, 1, 2, 1:3] = [0.25, 0.75]
    tokens = ["a", "b", "c", "d"]
    path = tmp_path / "v.html"
    attention_viewer_html(w, tokens, path=str(path))
    done = subprocess.run(["node", STUB, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)

    first = seen["initial"]
    assert first["layer"] == ["layer 0", "layer 1"]
    assert first["head"] == ["head 0", "head 1", "head 2", "mean of the heads"]
    assert first["query"] == ["every query", "0: a", "1: b", "2: c", "3: d"]
    assert first["rows"] == 5 and first["header"] == [""] + tokens and first["selected"] == -2
    shown = np.array([[float(c.rsplit(": ", 1)[1]) for c in row] for row in first["cells"]])
    np.testing.assert_allclose(shown, w[0, 0], rtol=1e-6)
    assert first["lines"] == 16  # every query to every key

    picked = seen["picked"]  # layer 1, head 1, query 2
    shown = np.array([[float(c.rsplit(": ", 1)[1]) for c in row] for row in picked["cells"]])
    np.testing.assert_allclose(shown, w[1, 1], rtol=1e-6)
    assert picked["selected"] == 2 and picked["lines"] == 2  # its two non-zero weights

    assert seen["clicked"]["selected"] == 0 and seen["clicked"]["lines"] == 4
    mean = np.array([[float(c.rsplit(": ", 1)[1]) for c in row] for row in seen["mean"]["cells"]])
    np.testing.assert_allclose(mean, w[1].mean(axis=0), rtol=1e-6)


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="headless Chromium is not installed")
def test_chromium_runs_the_page_and_a_picked_query_is_selected(tmp_path):
    text = attention_viewer_html(weights((1, 2, 3, 3)), ["x", "y", "z"])
    # as a user would: pick query 1 in its menu; the script marks its row of the grid
    pick = ('<script>var q = document.getElementById("query"); q.value = "1";'
            'q.dispatchEvent(new Event("change"));</script></body>')
    path = tmp_path / "v.html"
    path.write_text(text.replace("</body>", pick), encoding="utf-8")
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    dom = Page(done.stdout)
    assert sum(1 for tag, a in dom.tags if tag == "td" and a.get("class") == "cell") == 9
    rows = [a for tag, a in dom.tags if tag == "tr"]
    assert [a.get("class") for a in rows] == [None, None, "selected", None]


def test_exported_from_attention():
    assert attention.attention_viewer_html is attention_viewer_html
