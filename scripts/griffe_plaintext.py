"""A griffe extension for the API reference: turn the project's plain-text docstrings into Markdown.

The docstrings are written for `help()`: wrapped plain text, formulas on lines of their own
(`out = a + b`, `VJP: ga = ...`, `forward: ...`, `backward: ...`), `name: description` lists of
arguments, and indented examples. Read as Markdown, the formulas' `*` and `_` would turn into
emphasis and the lines would run together. So before mkdocstrings parses a docstring:

- a formula line (an equation `lhs = ...` or a line starting with a marker such as `forward:`,
  `backward:`, `VJP:`), with the lines indented under it, goes into a ```text block, as it reads
  in `help()`;
- an indented block (after a blank line or a line ending in `:`) and a `>>>` session become code
  blocks (Python when the block parses as Python);
- a paragraph with two or more `name: description` lines becomes a list, one item per name;
- in the remaining prose `*`, `_`, `<`, `[` and a leading `#` or `>` are escaped, so they print as
  written; `code` in backticks stays code, and `*emphasis*` and `**strong**` stay emphasis.

Google-style sections (`Args:`, `Returns:`, ...) pass through untouched for mkdocstrings to parse.
Loaded by mkdocs.yml (`extensions: [scripts/griffe_plaintext.py]`); `to_markdown` is a plain
function, tested in tests/docs/test_docsite.py without mkdocs.
"""
import ast
import html
import inspect
import os
import re
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docmath import formula_latex  # noqa: E402  (beside this file, which mkdocstrings loads by path)

sys.path.pop(0)

try:
    import griffe
except ImportError:  # the tests use to_markdown alone, where griffe (the docs extra) is not installed
    griffe = None

MARKER = re.compile(r"(?:forward|backward|vjp|jvp|double backward|gradients?|grad|jacobian)"
                    r"\s*(?:\([^()\n]*\))?:(?:\s|$)", re.I)
NAME = r"[A-Za-z_][\w^{}'′.\[\]]*(?:\([^()]*\))?"
EQUATION = re.compile(rf"{NAME}(?:\s*,\s*{NAME})*\s*[-+*/@]?=\s")
_ITEM_NAME = r"(?:\*{0,2}[A-Za-z_][\w.]*|`\*{0,2}[A-Za-z_][\w.]*`)"
ITEM = re.compile(rf"(?P<name>{_ITEM_NAME}(?:, {_ITEM_NAME})*):\s+(?P<rest>\S.*)")
SECTION = re.compile(r"(?:Args|Arguments|Parameters|Params|Keyword Args|Other Parameters|Returns?|Raises|Yields|"
                     r"Examples?|Notes?|Warnings?|Attributes|See Also|References):\s*$")


def _indent(line):
    return len(line) - len(line.lstrip())


def is_formula(line, following=None):
    """A line that states a formula: an equation `lhs = rhs` or a marked line (`backward: ...`).
    An equation whose sentence goes on in lower case on the next line is prose that starts with
    one (`fan_in = ..., for a weight of` / `shape (out, in)`), and stays prose."""
    text = line.strip()
    if MARKER.match(text):
        return True
    if not EQUATION.match(text):
        return False
    nxt = (following or "").strip()
    return not (nxt and _indent(following) == _indent(line) and nxt[0].islower()
                and not MARKER.match(nxt) and not EQUATION.match(nxt))


EMPHASIS = re.compile(r"(?<![\w*\\])(\*{1,2})(?=[^\s*])(.+?)(?<=[^\s*])\1(?![\w*])")


def _escape_plain(text):
    text = text.replace("\\", "\\\\").replace("*", r"\*").replace("_", r"\_")
    return text.replace("<", "&lt;").replace("[", r"\[")


def _escape_prose(text):
    """Markdown's special characters in plain text, escaped outside `code` spans, except the
    `*emphasis*` and `**strong**` the docstrings write on purpose (a `*` with a space on one side,
    as in `p * (1 - lr)`, is a product)."""
    parts = re.split(r"(`[^`\n]+`)", text)
    for i in range(0, len(parts), 2):
        pieces, last = [], 0
        for m in EMPHASIS.finditer(parts[i]):
            pieces += [_escape_plain(parts[i][last:m.start()]), m[1], _escape_plain(m[2]), m[1]]
            last = m.end()
        parts[i] = "".join(pieces + [_escape_plain(parts[i][last:])])
    out = "".join(parts)
    return re.sub(r"^(\s*)([#>+]|[-=]{3,}\s*$)", r"\1\\\2", out)


def _fence(lines, language):
    body = textwrap.dedent("\n".join(lines)).strip("\n")
    longest = max([len(m) for m in re.findall(r"`{3,}", body)] + [2])
    ticks = "`" * (longest + 1)
    return [f"{ticks}{language}", *body.splitlines(), ticks]


def _code_language(lines):
    source = textwrap.dedent("\n".join(lines))
    try:
        ast.parse(source)
    except SyntaxError:
        return "text"
    return "python" if re.search(r"[(=]|\bimport\b", source) else "text"


def _code_blocks(lines):
    """Fenced blocks for an indented region: its chunks (split at blank lines) in one block per
    run of the same language, so a Python example and a table after it are told apart."""
    chunks, current = [], []
    for line in textwrap.dedent("\n".join(lines)).split("\n") + [""]:
        if line.strip():
            current.append(line)
        elif current:
            chunks.append((_code_language(current), current))
            current = []
    out = []
    for k, (language, chunk) in enumerate(chunks):
        if k and chunks[k - 1][0] == language:
            out[-2:-1] = ["", *chunk, out[-2]]  # continue the previous block, after a blank line
            continue
        out.extend(_fence(chunk, language) + [""])
    return out


def _paragraph(lines):
    """A prose paragraph; with two or more `name: description` lines, a list of them."""
    base = min(_indent(line) for line in lines)
    starts = [i for i, line in enumerate(lines) if _indent(line) == base and ITEM.fullmatch(line.strip())]
    out = []
    if len(starts) < 2:
        blocks = [lines]
    else:
        if starts[0]:
            out += [_escape_prose(line.strip()) for line in lines[:starts[0]]] + [""]
        blocks = [lines[a:b] for a, b in zip(starts, starts[1:] + [len(lines)])]
    for block in blocks:
        first = block[0].strip()
        m = ITEM.fullmatch(first) if len(starts) >= 2 else None
        if m:
            names = ", ".join(f"`{n.strip().strip('`')}`" for n in m["name"].split(","))
            text = " ".join([_escape_prose(m["rest"])] + [_escape_prose(line.strip()) for line in block[1:]])
            out.append(f"- {names}: {text}")
        else:
            for line in block:
                if re.match(r"\s*(?:[-*] |\d+\. )", line) and out and out[-1] and not out[-1].startswith(("-", " ")):
                    out.append("")  # a list must not start inside a paragraph
                bullet = re.match(r"(\s*)([-*] |\d+\. )(.*)", line)
                if bullet:
                    out.append(f"{' ' * (_indent(line) - base)}{bullet[2]}{_escape_prose(bullet[3])}")
                else:
                    out.append(f"{' ' * min(_indent(line) - base, 4)}{_escape_prose(line.strip())}")
    return out


def _formula_html(text):
    """One formula (a line and its continuation lines, joined) as an HTML paragraph of math: its
    LaTeX pieces in the `<span class="arithmatex">` that the site's hook turns into MathML, the
    marker (`VJP:`) in bold, remarks as prose, and the plain text in `title` (shown on hover)."""
    label, pieces = formula_latex(text)
    parts = [f"<strong>{html.escape(label)}</strong>"] if label else []
    for kind, piece in pieces:
        if kind == "math":
            parts.append(f'<span class="arithmatex">\\({html.escape(piece, quote=False)}\\)</span>')
        elif kind == "label":
            parts.append(f"<strong>{html.escape(piece)}</strong>")
        else:
            parts.append(html.escape(piece, quote=False))
    body = " ".join(parts).replace(" ;", ";").replace(" ,", ",")
    return f'<p class="formula" title="{html.escape(text)}">{body}</p>'


def _formulas(lines):
    """Formula lines as math (each with the deeper-indented lines under it); a formula the LaTeX
    translation cannot read stays a text block, as it reads in help()."""
    groups = []
    for line in lines:
        if groups and _indent(line) > _indent(groups[-1][0]):
            groups[-1].append(line)
        else:
            groups.append([line])
    out = []
    for group in groups:
        try:
            out.append(_formula_html(" ".join(line.strip() for line in group)))
        except ValueError:
            out.extend(["", *_fence(group, "text"), ""])
    return out


def to_markdown(doc):
    """The Markdown for a plain-text docstring (already dedented, as griffe gives it)."""
    lines = doc.expandtabs().splitlines()
    out, para, i = [], [], 0

    def flush():
        if para:
            out.extend(_paragraph(para))
            out.append("")
            para.clear()

    def take_indented(start, deeper_than):
        end = start
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > deeper_than):
            end += 1
        while end > start and not lines[end - 1].strip():
            end -= 1
        return end

    while i < len(lines):
        line = lines[i]
        text = line.strip()
        if not text:
            flush()
            i += 1
        elif text.startswith(("```", "~~~")):  # already Markdown: copied up to its closing fence
            flush()
            fence = re.match(r"[`~]{3,}", text)[0]
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                j += 1
            out.extend(lines[i:j + 1] + [""])
            i = j + 1
        elif SECTION.fullmatch(text) and not para:  # a Google-style section, for mkdocstrings
            j = take_indented(i + 1, _indent(line))
            out.extend(lines[i:j] + [""])
            i = j
        elif text.startswith(">>>"):
            flush()
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            out.extend(_fence(lines[i:j], "pycon") + [""])
            i = j
        elif _indent(line) >= 4 and (not para or (para[-1].rstrip().endswith(":")
                                                   and _indent(line) >= _indent(para[-1]) + 4)):
            j = take_indented(i, _indent(line) - 1)  # an example or a table, laid out by hand
            flush()
            out.extend(_code_blocks(lines[i:j]))
            i = j
        elif (is_formula(line, lines[i + 1] if i + 1 < len(lines) else None)
              and not (para and _indent(line) > _indent(para[0]))):
            flush()
            j = i + 1
            while j < len(lines) and lines[j].strip() and (_indent(lines[j]) > _indent(line) or is_formula(lines[j])):
                j += 1
            out.extend(_formulas(lines[i:j]) + [""])
            i = j
        else:
            para.append(line)
            i += 1
    flush()
    return "\n".join(out).strip("\n")


if griffe is not None:
    class PlainTextDocstrings(griffe.Extension):
        """Rewrites each docstring with `to_markdown` as griffe creates the object."""

        def on_package(self, *, pkg, **kwargs):
            """What the reference lists: a module's own objects (or its `__all__`), without the
            names it imports (inspection, unlike reading the source, does not mark them), and no
            __dunder__ members (__weakref__, __add__, ...: Python's protocols, documented by Python)."""
            stack = [pkg]
            while stack:
                obj = stack.pop()
                for name, member in obj.members.items():
                    dunder = name.startswith("__") and name.endswith("__")
                    if member.is_alias:  # its target is handled where it is defined
                        imported = obj.is_module and not (obj.exports and name in obj.exports)
                        if (dunder or imported) and not member.inherited:
                            member.public = False
                    elif dunder and not member.is_module:
                        member.public = False
                    elif member.is_module or member.is_class:
                        stack.append(member)

        def on_instance(self, *, node, obj, **kwargs):
            if obj.docstring is None:
                return
            value = getattr(node, "obj", None)
            if obj.is_attribute and value is not None and obj.docstring.value == inspect.getdoc(type(value)):
                obj.docstring = None  # inspection gave a plain value (a flag) its type's docstring
                return
            text = obj.docstring.value
            if obj.is_module:
                # A module's docstring is not indented in its file, so its raw text keeps the layout
                # that cleaning (dedenting every line after the first) would flatten: an indented
                # example right under the first line.
                raw = getattr(getattr(node, "obj", None), "__doc__", None) or (
                    ast.get_docstring(node, clean=False) if isinstance(node, ast.Module) else None)
                text = raw.expandtabs().strip("\n") if raw else text
            obj.docstring.value = to_markdown(text)
