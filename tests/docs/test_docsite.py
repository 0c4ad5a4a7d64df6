"""The documentation site: mkdocs.yml, its hook and griffe extension, and the strict build.

The pieces that need no mkdocs (how docstrings become Markdown, how links are rewritten, that the
nav lists every guide) run everywhere. The builds run where the docs extra is installed
(`pip install -e '.[docs]'`) and skip otherwise; CI builds the site with scripts/build_docs.py.
"""
import glob
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

def test_formula_lines_become_text_blocks_and_keep_their_characters():
    doc = ("Probabilities along `dim`.\n\nforward:  out_i = e^{x_i} / \\sum_j e^{x_j}\n"
           "backward: gx = out * (g - (g * out).sum(dim, keepdim=True))\n\nMore prose.")
    md = plain.to_markdown(doc)
    [(_, lang, body)] = _fences(md)
    assert lang == "text"
    assert body.splitlines() == ["forward:  out_i = e^{x_i} / \\sum_j e^{x_j}",
                                 "backward: gx = out * (g - (g * out).sum(dim, keepdim=True))"]
    assert md.startswith("Probabilities along `dim`.") and md.endswith("More prose.")


def test_function_docstrings_written_as_equations_are_formulas():
    md = plain.to_markdown("out = a + b\nVJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(g, b.shape)")
    assert _fences(md) == [("```", "text",
                            "out = a + b\nVJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(g, b.shape)")]
    # an indented continuation belongs to the formula above it
    md = plain.to_markdown("VJP: gx = rstd * (gxhat - mean(gxhat)\n     - xhat * mean(gxhat * xhat))\nThen prose.")
    assert _fences(md)[0][2].splitlines()[1].startswith("     - xhat")
    assert md.endswith("Then prose.")


def test_every_op_docstring_marked_with_formulas_renders_them_as_code():
    """The ops' Function classes state their forward and VJP: each becomes a code block with
    the VJP line in it, nothing of it left to Markdown's emphasis."""
    import minitensor.ops  # noqa: F401  (registers the ops)
    from minitensor.autograd.function import Function

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    checked = 0
    for op in subclasses(Function):
        doc = (op.__doc__ or "").strip()
        if "VJP:" not in doc or not op.__module__.startswith("minitensor.ops"):
            continue
        doc = __import__("inspect").cleandoc(doc)
        blocks = "\n".join(body for _, lang, body in _fences(plain.to_markdown(doc)) if lang == "text")
        vjp = next(line for line in doc.splitlines() if "VJP:" in line).strip()
        assert vjp in blocks, (op.__name__, plain.to_markdown(doc))
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
    assert {"mkdocs", "mkdocs-material", "mkdocstrings", "mkdocstrings-python"} <= set(pins), pins


# ---- the builds (docs extra) ----------------------------------------------------------------------

def _need_docs_extra():
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
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


def test_api_reference_shows_formulas_as_code(site):
    ops = (site / "api" / "ops" / "index.html").read_text(encoding="utf-8")
    assert 'id="minitensor.ops.softmax.Softmax"' in ops
    # the softmax VJP, whole, inside a code block (pygments splits it into spans: compare the text)
    blocks = [re.sub(r"<[^>]+>", "", b) for b in re.findall(r"<pre.*?</pre>", ops, re.S)]
    assert any("VJP: gx = out * (g - \\sum_j g_j out_j)" in b for b in blocks)
    assert "<em> (1 - lr" not in (site / "api" / "optim" / "index.html").read_text(encoding="utf-8")
    tensor = (site / "api" / "tensor" / "index.html").read_text(encoding="utf-8")
    assert 'id="minitensor.tensor.Tensor.softmax"' in tensor  # a method attached at import
    assert "__weakref__" not in tensor


def _small_copy(tmp_path):
    """The guides and README with mkdocs.yml minus the API reference: a build of a few seconds."""
    tmp_path.mkdir()
    for name in ("README.md", "scripts", "examples", "notebooks"):
        src = os.path.join(ROOT, name)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, tmp_path / name)
    shutil.copytree(os.path.join(ROOT, "docs"), tmp_path / "docs", ignore=shutil.ignore_patterns("api"))
    config = re.sub(r"\n  - API reference:\n(?:      .*\n)+", "\n", MKDOCS_YML)
    config = re.sub(r"\n  - mkdocstrings:\n(?:      .*\n)+", "\n", config)
    config = config.replace("watch: [README.md, minitensor, attention, scripts]", "watch: [README.md]")
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
