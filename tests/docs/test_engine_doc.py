r"""docs/engine.md runs as written: each ```python block, in order, in one namespace, prints exactly the
```text output block that follows it.

To (re)write the output blocks after changing the document:  python tests/docs/test_engine_doc.py --update
"""
import contextlib
import io
import os
import re
import sys

import pytest

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "engine.md")
# a node prints as PyTorch's, with its memory address, which changes from run to run
_ADDRESS = re.compile(r" object at 0x[0-9a-f]+")
BLOCK = re.compile(r"```python\n(?P<code>.*?)```\n(?:\n```text output\n(?P<out>.*?)```\n)?", re.S)


def run_blocks(text):
    """[(match, printed text)] for every python block of the document, run in order in one namespace."""
    namespace, results = {"__name__": "engine_doc"}, []
    for match in BLOCK.finditer(text):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(match["code"], DOC, "exec"), namespace)  # noqa: S102 (the document's own code)
        results.append((match, _ADDRESS.sub(" object at 0x...", printed.getvalue())))
    return results


def _blocks():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    return text, run_blocks(text)


@pytest.fixture(scope="module")
def results():
    """The document's blocks, run once for all the tests of this module."""
    return _blocks()[1]


def test_every_printing_block_is_followed_by_its_output(results):
    assert len(results) >= 8
    for match, printed in results:
        if printed:
            assert match["out"] is not None, f"block without an output block after it:\n{match['code']}"


@pytest.mark.parametrize("index", range(16))
def test_the_printed_output_is_the_documented_one(results, index):
    if index >= len(results):
        pytest.skip("fewer blocks")
    match, printed = results[index]
    if match["out"] is None:
        assert printed == ""
    else:
        assert printed.rstrip() == match["out"].rstrip(), f"block {index}:\n{match['code']}"


def _update():
    text, results = _blocks()
    for match, printed in reversed(results):
        if match["out"] is not None:
            start, end = match.span("out")
            text = text[:start] + printed.rstrip() + "\n" + text[end:]
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__" and "--update" in sys.argv:
    _update()
