"""The documentation site: mkdocs.yml, its hook and griffe extension, and the strict build.

The pieces that need no mkdocs (how docstrings become Markdown, how links are rewritten, that the
nav lists every guide) run everywhere. The builds run where the docs extra is installed
(`pip install -e '.[docs]'`) and skip otherwise; CI builds the site with scripts/build_docs.py.
"""
import glob
import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MKDOCS_YML = open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8").read()


def _script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


plain = _script("griffe_plaintext")
hooks = _script("mkdocs_hooks")


def _fences(markdown):
    """(language, body) of each fenced block."""
    return re.findall(r"^(`{3,})(\w*)\n(.*?)\n\1$", markdown, re.M | re.S)


# ---- docstrings to Markdown -----------------------------------------------------------------------

def _formula_paragraphs(markdown):
    """(plain text in title, the LaTeX pieces) of each formula paragraph."""
    return [(html.unescape(title), re.findall(r'<span class="arithmatex">\\\((.*?)\\\)</span>', body))
            for title, body in re.findall(r'<p class="formula" title="([^"]*)">(.*?)</p>', markdown)]


def test_formula_lines_become_math_and_keep_their_text():
    doc = ("Probabilities along `dim`.\n\nforward:  out_i = e^{x_i} / \\sum_j e^{x_j}\n"
           "backward: gx = out * (g - (g * out).sum(dim, keepdim=True))\n\nMore prose.")
    md = plain.to_markdown(doc)
    assert not _fences(md)  # no code block cut off on the right: math, which wraps between equations
    (fwd, fwd_math), (bwd, bwd_math) = _formula_paragraphs(md)
    assert fwd == "forward:  out_i = e^{x_i} / \\sum_j e^{x_j}"  # the plain text, shown on hover
    assert bwd == "backward: gx = out * (g - (g * out).sum(dim, keepdim=True))"
    assert fwd_math == [r"{\text{out}}_{i}=e^{{x}_{i}}/\sum _{j}\,e^{{x}_{j}}"]
    assert bwd_math == [r"g_{x}=\text{out}\cdot (g-(g\cdot \text{out})\text{.}\operatorname{sum}(\text{dim},"
                        r"\text{keepdim}=\text{True}))"]
    assert "<strong>forward:</strong>" in md and "<strong>backward:</strong>" in md
    assert md.startswith("Probabilities along `dim`.") and md.endswith("More prose.")


def test_function_docstrings_written_as_equations_are_formulas():
    md = plain.to_markdown("out = a + b\nVJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(g, b.shape)")
    assert [title for title, _ in _formula_paragraphs(md)] == [
        "out = a + b", "VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(g, b.shape)"]
    assert _formula_paragraphs(md)[1][1] == [r"g_{a}=\operatorname{unbroadcast}(g,a\text{.}\text{shape})",
                                             r"g_{b}=\operatorname{unbroadcast}(g,b\text{.}\text{shape})"]
    # an indented continuation belongs to the formula above it
    md = plain.to_markdown("VJP: gx = rstd * (gxhat - mean(gxhat)\n     - xhat * mean(gxhat * xhat))\nThen prose.")
    [(title, _)] = _formula_paragraphs(md)
    assert title == "VJP: gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))"
    assert md.endswith("Then prose.")


def test_a_formula_keeps_its_remark_as_prose_and_one_it_cannot_read_stays_text():
    md = plain.to_markdown("out = a / b   (true division: integer inputs give the default float dtype)")
    assert md.endswith("</span> (true division: integer inputs give the default float dtype)</p>")
    md = plain.to_markdown("out = \\foo{x}")  # a LaTeX command the translation does not know
    assert _fences(md) == [("```", "text", "out = \\foo{x}")]


def test_every_op_docstring_marked_with_formulas_renders_them_as_math():
    """The ops' Function classes state their forward and VJP: each VJP becomes a formula paragraph
    of math (its plain text kept in the title), and latex2mathml reads every piece."""
    import minitensor.ops  # noqa: F401  (registers the ops)
    from minitensor.autograd.function import Function

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    try:
        import latex2mathml.converter as l2m
    except ImportError:  # (the docs extra brings it: the build converts, this checks the LaTeX alone)
        l2m = None
    checked = 0
    for op in subclasses(Function):
        doc = (op.__doc__ or "").strip()
        if "VJP:" not in doc or not op.__module__.startswith("minitensor.ops"):
            continue
        doc = __import__("inspect").cleandoc(doc)
        formulas = _formula_paragraphs(plain.to_markdown(doc))
        vjp = next(line for line in doc.splitlines() if "VJP:" in line).strip()
        assert any(vjp in " ".join(title.split()) or vjp in title for title, _ in formulas), (op.__name__, vjp)
        for _, pieces in formulas:
            assert pieces
            for piece in pieces if l2m else ():
                assert "<math" in l2m.convert(html.unescape(piece)), (op.__name__, piece)
        checked += 1
    assert checked > 30


def test_prose_is_escaped_but_code_and_emphasis_are_kept():
    md = plain.to_markdown("AdamW: p = p * (1 - lr * weight_decay) where x[i][j] < y and `a*b_c` is code;\n"
                           "the *composed* path and **True means allowed**.")
    assert r"p \* (1 - lr \* weight\_decay)" in md
    assert r"x\[i]\[j] &lt; y" in md and "`a*b_c`" in md
    assert "*composed*" in md and "**True means allowed**" in md


def test_argument_lists_become_lists_and_examples_code():
    doc = ("Attention.\n\nmask: bool (True = may attend)\n    or float, added to the scores.\n"
           "is_causal: hide keys j > i.\n\nFor instance:\n\n    out, w = sdpa(q, k, v)\n    out.sum()\n\n"
           "    (Tq, Tk)     one pattern\n    (B, 1, 1, Tk) padding\n")
    md = plain.to_markdown(doc)
    assert "- `mask`: bool (True = may attend) or float, added to the scores." in md
    assert "- `is_causal`: hide keys j > i." in md
    langs = [lang for _, lang, _ in _fences(md)]
    assert langs == ["python", "text"]


def test_google_sections_pass_through():
    doc = "Summary.\n\nArgs:\n    x: the input\n    dim: the axis\n\nReturns:\n    The sum."
    assert plain.to_markdown(doc) == doc


def test_a_sentence_that_starts_like_an_equation_stays_prose():
    md = plain.to_markdown("fan_in = in_features * receptive field, for a weight of\nshape (out, in).")
    assert not _fences(md)
    assert r"fan\_in = in\_features \* receptive field" in md


# ---- links and nav --------------------------------------------------------------------------------

def test_readme_links_point_at_the_sites_pages():
    outside = {"README.md": "index.md"}
    exists = {"examples/exercises/README.md", "docs/attention.md"}.__contains__
    md = ("[guide](docs/attention.md#masks), [exercises](examples/exercises/README.md), "
          "[gone](docs/missing.md), [web](https://example.org/x.md), `[code](docs/attention.md)`")
    out = hooks.rewrite_links(md, "README.md", "index.md", "docs", outside, exists)
    assert "[guide](attention.md#masks)" in out
    assert "exercises," in out and "examples/exercises" not in out  # text kept, no link to nowhere
    assert "[gone](missing.md)" in out  # a page that is not there: mkdocs --strict reports it
    assert "[web](https://example.org/x.md)" in out and "`[code](docs/attention.md)`" in out
    # and from a guide back to README
    out = hooks.rewrite_links("[home](../README.md)", "docs/x.md", "x.md", "docs", outside, exists)
    assert out == "[home](index.md)"
    out = hooks.rewrite_links("[home](../../README.md)", "docs/api/x.md", "api/x.md", "docs", outside, exists)
    assert out == "[home](../index.md)"


def test_fences_keep_only_the_options_superfences_knows():
    md = '```text check=scores decimals=1\n1 2\n```\n\n```python title="excerpt from a.py"\nx\n```\n````\n'
    assert hooks.drop_fence_options(md) == '```text\n1 2\n```\n\n```python title="excerpt from a.py"\nx\n```\n````\n'


def test_nav_lists_every_guide():
    """strict mode fails a build that leaves a page out of the nav; this says so without mkdocs."""
    nav = MKDOCS_YML.split("\nnav:", 1)[1].split("\nplugins:", 1)[0]
    listed = set(re.findall(r"([\w/.-]+\.md)\s*$", nav, re.M))
    pages = {os.path.relpath(p, os.path.join(ROOT, "docs")).replace(os.sep, "/")
             for p in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True)}
    assert pages - listed == set(), "add these pages to the nav in mkdocs.yml"
    assert listed - pages == {"index.md"}  # README, placed there by the hook


def test_main_modules_run_nothing_when_imported():
    """The API reference imports every module of both packages (to list Tensor's attached
    methods), so a `__main__.py` that trains or parses sys.argv at import would break the build."""
    import ast

    mains = glob.glob(os.path.join(ROOT, "minitensor", "**", "__main__.py"), recursive=True)
    mains += glob.glob(os.path.join(ROOT, "attention", "**", "__main__.py"), recursive=True)
    assert mains
    for path in mains:
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in tree.body:
            runs = isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            assert not runs, f"{path}:{node.lineno} runs at import: put it under if __name__ == '__main__':"


def test_docs_extra_pins_what_the_build_uses():
    cfg = open(os.path.join(ROOT, "setup.cfg"), encoding="utf-8").read()
    extra = cfg.split("\ndocs =", 1)[1].split("\n[", 1)[0]
    pins = dict(re.findall(r"^\s+([\w.\[\]-]+)==(\S+)", extra, re.M))
    assert {"mkdocs", "mkdocs-material", "mkdocstrings", "mkdocstrings-python", "latex2mathml"} <= set(pins), pins
    assert re.search(r"^\s+ipykernel\b", extra, re.M)  # the build runs the lesson notebooks


def test_notebooks_extra_installs_a_notebook_application_and_nbconvert():
    cfg = open(os.path.join(ROOT, "setup.cfg"), encoding="utf-8").read()
    extra = cfg.split("\nnotebooks =", 1)[1].split("\n[", 1)[0]
    names = set(re.findall(r"^\s+([\w.-]+)", extra, re.M))
    assert {"notebook", "nbconvert", "jupytext", "nbclient", "ipykernel"} <= names, names


# ---- the builds (docs extra) ----------------------------------------------------------------------

def _need_docs_extra():
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "latex2mathml", "ipykernel"):
        pytest.importorskip(module, reason="the docs extra is not installed (pip install -e '.[docs]')")


def _mkdocs(cwd, out, config="mkdocs.yml"):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", config, "-d", str(out)],
                          cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The real site, built once with scripts/build_docs.py's command."""
    _need_docs_extra()
    out = tmp_path_factory.mktemp("site")
    done = _mkdocs(ROOT, out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_site_builds_strict_with_readme_as_home(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "A first look at the autograd" in home
    assert 'href="attention/' in home and 'href="docs/attention.md' not in home
    for page in ("attention", "backprop_through_attention", "performance", "pytorch_compatibility",
                 "pytorch_interop", "api/tensor", "api/ops", "api/attention"):
        html = (site / page / "index.html").read_text(encoding="utf-8")
        assert not re.search(r"<p>\s*(```|~~~)", html), f"{page}: a fence printed as text"


def test_api_reference_shows_formulas_as_math(site):
    ops = (site / "api" / "ops" / "index.html").read_text(encoding="utf-8")
    assert 'id="minitensor.ops.softmax.Softmax"' in ops
    softmax = ops.split('id="minitensor.ops.softmax.Softmax"', 1)[1].split('<div class="doc doc-children">', 1)[0]
    [vjp] = [body for title, body in re.findall(r'<p class="formula" title="([^"]*)">(.*?)</p>', softmax, re.S)
             if "VJP: gx = out * (g - \\sum_j g_j out_j)" in html.unescape(title)]
    assert "<math" in vjp and "<msub>" in vjp and "arithmatex" not in vjp  # typeset, as MathML
    assert "math-source" not in ops  # no formula left as LaTeX source
    assert "<em> (1 - lr" not in (site / "api" / "optim" / "index.html").read_text(encoding="utf-8")
    tensor = (site / "api" / "tensor" / "index.html").read_text(encoding="utf-8")
    assert 'id="minitensor.tensor.Tensor.softmax"' in tensor  # a method attached at import
    assert "__weakref__" not in tensor


def test_lesson_notebooks_show_their_outputs_pictures_and_math(site):
    """The lessons ran when the site was built: their pages hold the cells' outputs and pictures,
    and their $...$ math as MathML; nothing is loaded from another host."""
    pages = {name: (site / "notebooks" / name / "index.html").read_text(encoding="utf-8")
             for name in ("01_illustrated_self_attention", "02_backprop_through_attention", "03_train_a_toy_model")}
    for name, page in pages.items():
        assert len(re.findall(r'class="[^"]*\bjp-OutputArea-output\b', page)) >= 3, f"{name}: no output"
        assert not NOT_RUN.search(page), f"{name}: a cell that did not run"
        assert re.search(r'<img[^>]+src="data:image/png;base64,', page) or "<svg" in page, f"{name}: no picture"
        assert not re.search(r'<script[^>]+src="(?:https?://|[^"]*mathjax|")', page, re.I), name
    backprop = pages["02_backprop_through_attention"]
    assert backprop.count("<math") >= 10 and 'display="block"' in backprop
    assert "$$" not in backprop and "\\frac{" not in backprop  # no LaTeX left as text
    assert "SoftmaxBackward" in backprop  # explain()'s report, printed by the notebook
    # the exercises are shown as handed out: their stubs are for the student to write
    exercise = (site / "notebooks" / "exercises" / "01_softmax" / "index.html").read_text(encoding="utf-8")
    assert NOT_RUN.search(exercise) and "writefile" in exercise
    assert not re.search(r'class="[^"]*\bjp-OutputArea-output\b', exercise)


NOT_RUN = re.compile(r"In(?:\s|&nbsp;|\xa0)*\[(?:\s|&nbsp;|\xa0)*\]")  # the prompt of a cell never run


def test_screenshots_of_the_built_site_read(site, tmp_path):
    """scripts/screenshot_site.py in headless Chromium (skipped without it): each picture is a
    page with something on it, not a blank or an error page."""
    shots = _script("screenshot_site")
    browser = shots.chromium()
    if browser is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    # two pictures (a browser start costs seconds): the notebook page, outputs and math on it, and
    # the multi-head attention's graph with its steps named
    names = ["notebook_outputs_and_math.png", "mha_graph.png"]
    paths = shots.take(str(site), str(tmp_path), browser, names=set(names))
    assert [os.path.basename(p) for p in paths] == names
    for path in paths:
        data = open(path, "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 60_000, (path, len(data))  # a blank page is ~10 kB
    graph = (site / "mha_graph.svg").read_text(encoding="utf-8")
    for label in ("[w_q]", "[w_k]", "[w_v]", "[w_o]", "[split heads]", "[merge heads]", "[scale 1/sqrt(d_k)]",
                  "[mask]", "[softmax]", "[weights @ v]", "w_q.weight", "grad "):
        assert html.escape(label, quote=False) in graph, label


def _small_copy(tmp_path):
    """The guides and README with mkdocs.yml minus the API reference and the notebooks: a build of a few seconds."""
    tmp_path.mkdir()
    for name in ("README.md", "scripts", "examples", "notebooks"):
        src = os.path.join(ROOT, name)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, tmp_path / name)
    shutil.copytree(os.path.join(ROOT, "docs"), tmp_path / "docs", ignore=shutil.ignore_patterns("api"))
    config = re.sub(r"\n  - API reference:\n(?:      .*\n)+", "\n", MKDOCS_YML)
    config = re.sub(r"\n  - mkdocstrings:\n(?:      .*\n)+", "\n", config)
    config = config.replace("watch: [README.md, minitensor, attention, scripts]", "watch: [README.md]")
    # no notebook pages: converting a dozen notebooks made each of this copy's builds 16 s instead of 3
    # (the full build of test_site_builds_strict_with_readme_as_home checks the notebooks' links)
    config = re.sub(r"\n  - mkdocs-jupyter:\n(?:      .*\n)+", "\n", config)
    config = re.sub(r"executed_notebooks: .*", "executed_notebooks: \"\"", config)
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    return tmp_path


def test_broken_links_and_pages_outside_the_nav_fail_the_build(tmp_path):
    _need_docs_extra()
    root = _small_copy(tmp_path / "repo")
    done = _mkdocs(root, tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr

    guide = root / "docs" / "attention.md"
    text = guide.read_text(encoding="utf-8")
    for broken, says in [("[x](no_such_page.md)", "no_such_page.md"),
                         ("[x](performance.md#no-such-heading)", "no-such-heading"),
                         ("[x](../no_such_file.py)", "no_such_file.py")]:
        guide.write_text(text + f"\n{broken}\n", encoding="utf-8")
        done = _mkdocs(root, tmp_path / "out")
        assert done.returncode != 0 and says in done.stdout + done.stderr, (broken, done.stderr)
    guide.write_text(text, encoding="utf-8")

    (root / "docs" / "new_guide.md").write_text("# New\n", encoding="utf-8")
    done = _mkdocs(root, tmp_path / "out")
    assert done.returncode != 0 and "new_guide.md" in done.stdout + done.stderr


def test_marked_math_and_a_notebooks_dollars_become_mathml_but_code_keeps_its_dollars():
    pytest.importorskip("latex2mathml", reason="the docs extra is not installed (pip install -e '.[docs]')")
    math = _script("docmath")
    page = ('<p>size $d_k$ and</p><p>$$S = \\frac{Q K^\\top}{\\sqrt{d_k}}$$</p><pre>cost = $5 and $6</pre>'
            '<span class="arithmatex">\\(g_a\\)</span><div class="arithmatex">\\[x^2\\]</div>')
    out = math.render_math(page, dollars=True)
    assert out.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">') == 2
    assert out.count('display="block"') == 2 and "<mfrac>" in out and "<msqrt>" in out
    assert "<pre>cost = $5 and $6</pre>" in out and "arithmatex" not in out and not math.render_math.failed
    assert math.render_math("<p>$x$</p>") == "<p>$x$</p>"  # a guide's dollars are prose unless marked
    bad = math.render_math('<span class="arithmatex">\\(x^\\)</span>')
    assert 'class="math-source"' in bad and math.render_math.failed  # the hook turns it into a warning
