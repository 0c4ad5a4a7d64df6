"""Every ```python block in README.md and docs/*.md runs, unless it says it is an excerpt.

The convention (it renders on GitHub, which reads only the first word of a fence's info string,
and in the mkdocs site, where the title is shown above the block):

    ```python                                         runs, in order, in its file's namespace
    ```python title="excerpt from attention/fused.py" is shown, never run

Blocks of one file run in order in one namespace, so a document can build on its earlier blocks;
they run with a temporary folder as the working directory, and the random state, grad mode and
default dtype are restored afterwards. A block that needs an optional package that is not
installed (PyTorch, matplotlib, Graphviz, tqdm) is skipped when its ImportError names that
package, and so is a later block of the same file that fails with NameError after such a skip.
"""
import os
import re
import shlex

import pytest

import minitensor as mt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = {"python", "py", "python3"}
OPTIONAL = ("torch", "matplotlib", "graphviz", "tqdm")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def documents():
    """README.md and every docs/**/*.md, as paths relative to the repository."""
    found = ["README.md"]
    for folder, _, files in sorted(os.walk(os.path.join(ROOT, "docs"))):
        found += sorted(os.path.relpath(os.path.join(folder, f), ROOT) for f in files if f.endswith(".md"))
    return found


def fenced_blocks(text):
    """(line number, language, attributes, code) of each fenced block of a Markdown text.

    A fence closes at a line of the same character, at least as long, with nothing after it, as
    CommonMark says; the code is dedented by the opening fence's indentation (blocks in lists)."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        start, indent, fence = i, len(m["indent"]), m["fence"]
        words = shlex.split(m["info"].strip()) if m["info"].strip() else []
        language = words[0].lower() if words else ""
        attrs = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        body, i = [], i + 1
        while i < len(lines) and not re.fullmatch(rf"[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i].lstrip())
            i += 1
        blocks.append((start + 1, language, attrs, "\n".join(body) + "\n"))
        i += 1
    return blocks


def is_excerpt(attrs):
    return attrs.get("title", "").lower().startswith("excerpt")


def python_blocks(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return [(line, attrs, code) for line, lang, attrs, code in fenced_blocks(f.read()) if lang in PYTHON]


CASES = [(path, n) for path in documents() for n, (_, attrs, _) in enumerate(python_blocks(path))
         if not is_excerpt(attrs)]
_runs = {}  # path -> {"namespace": dict, "done": {block index: None | skip reason}}


def _missing_optional(err):
    """The optional package an ImportError is about, if that package is really absent."""
    text = f"{getattr(err, 'name', '') or ''} {err}"
    for name in OPTIONAL:
        if re.search(rf"\b{name}\b", text):
            try:
                __import__(name)
            except ImportError:
                return name
    return None


def _run_block(path, n, tmp_path_factory):
    """Run block n of `path` once, after its earlier runnable blocks; its skip reason or None."""
    state = _runs.setdefault(path, {"namespace": {"__name__": "__doc_block__"}, "done": {}})
    blocks = python_blocks(path)
    for k in range(n + 1):
        if k in state["done"] or is_excerpt(blocks[k][1]):
            continue
        line, _, code = blocks[k]
        skipped = [r for r in state["done"].values() if r]
        cwd, rng, grad, dtype = os.getcwd(), mt.get_rng_state(), mt.is_grad_enabled(), mt.get_default_dtype()
        os.chdir(tmp_path_factory.mktemp("block"))
        os.environ.setdefault("MPLBACKEND", "Agg")  # a block that draws must not open a window
        try:
            # compiled under the document's own name and line numbers, so a traceback shows the doc
            exec(compile("\n" * line + code, os.path.join(ROOT, path), "exec"), state["namespace"])
            state["done"][k] = None
        except ImportError as err:
            missing = _missing_optional(err)
            if missing is None:
                state["done"][k] = f"failed: {err!r}"
                raise
            state["done"][k] = f"block at {path}:{line} needs {missing}, which is not installed"
        except NameError:
            if not skipped:
                state["done"][k] = "failed"
                raise
            state["done"][k] = f"uses a name from a skipped block ({skipped[0]})"
        except BaseException as err:
            state["done"][k] = f"failed: {err!r}"
            raise
        finally:
            os.chdir(cwd)
            mt.set_rng_state(rng)
            mt.set_grad_enabled(grad)
            mt.set_default_dtype(dtype)
    return state["done"][n]


@pytest.mark.parametrize("path,n", CASES, ids=[f"{p}#{n}" for p, n in CASES])
def test_python_block_runs(path, n, tmp_path_factory):
    reason = _run_block(path, n, tmp_path_factory)
    if reason:
        pytest.skip(reason)


def test_every_document_is_seen():
    """The walk finds README and the guides; a block parser that found nothing would pass vacuously."""
    docs = documents()
    assert "README.md" in docs and os.path.join("docs", "attention.md") in docs
    assert any(path == "README.md" for path, _ in CASES)


def test_fences_are_parsed_as_commonmark():
    text = ("a\n```python\nx = 1\n```\n\n  ```python title=\"excerpt from f.py\"\n  y = 2\n  ```\n"
            "````markdown\n```python\nnot = a block of its own\n```\n````\n~~~py\nz = 3\n~~~\n")
    blocks = fenced_blocks(text)
    assert [(b[1], b[3]) for b in blocks] == [
        ("python", "x = 1\n"), ("python", "y = 2\n"),
        ("markdown", "```python\nnot = a block of its own\n```\n"), ("py", "z = 3\n")]
    assert is_excerpt(blocks[1][2]) and not is_excerpt(blocks[0][2])


def test_a_failing_block_fails(tmp_path, tmp_path_factory, monkeypatch):
    """The runner is no formality: a block that raises fails, and a NameError without a skipped
    block before it is a failure, not a skip."""
    doc = tmp_path / "doc.md"
    doc.write_text("```python\nx = 1\n```\n\n```python\nprint(undefined_name)\n```\n"
                   "```python title=\"excerpt from nowhere\"\nthis is not python\n```\n")
    monkeypatch.setitem(globals(), "ROOT", str(tmp_path))
    _runs.pop("doc.md", None)
    assert _run_block("doc.md", 0, tmp_path_factory) is None
    with pytest.raises(NameError):
        _run_block("doc.md", 1, tmp_path_factory)
    _runs.pop("doc.md", None)


def test_a_block_needing_a_missing_package_skips(tmp_path, tmp_path_factory, monkeypatch):
    doc = tmp_path / "doc.md"
    doc.write_text("```python\nimport graphviz\nimport matplotlib\nimport tqdm\nimport torch\nx = 1\n```\n\n"
                   "```python\nprint(x)\n```\n")
    monkeypatch.setitem(globals(), "ROOT", str(tmp_path))
    monkeypatch.setitem(__import__("sys").modules, "graphviz", None)  # importing it raises ImportError
    _runs.pop("doc.md", None)
    assert "needs graphviz" in _run_block("doc.md", 0, tmp_path_factory)
    assert "skipped block" in _run_block("doc.md", 1, tmp_path_factory)
    _runs.pop("doc.md", None)
