"""Math on the documentation site, rendered when the site is built: no script, nothing fetched.

Two sources of math:

- LaTeX written as such: `$...$` and `$$...$$` in the notebooks' Markdown cells, and `\\(...\\)`,
  `\\[...\\]` (or `$...$`) in the guides, which pymdownx.arithmatex (generic mode) marks with
  `<span class="arithmatex">` / `<div class="arithmatex">`;
- the plain-text formulas of the docstrings (`VJP: gx = g * (1 - out^2)`), written for `help()`:
  `formula_latex` turns one such line into LaTeX pieces (each `;`-separated equation its own
  piece, so a long line wraps between them, and a trailing parenthesised remark kept as prose).

`render_math(html)` replaces both kinds of marked LaTeX in a page's HTML by MathML (with the
`latex2mathml` package), which browsers draw natively (Chromium since 109, Firefox, Safari):
a formula reads the same offline, and its text stays searchable and selectable. A formula
latex2mathml cannot read is left as its LaTeX source in a `<code>` element, and counted in
`render_math.failed`, never dropped.
"""
import html as htmllib
import re

try:
    from latex2mathml.converter import convert as _convert
except ImportError:  # the docs extra brings it; the pure-text tests below need only formula_latex
    _convert = None

# ---- docstring formulas -> LaTeX ------------------------------------------------------------------

_GREEK = {name: "\\" + name for name in (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau upsilon phi "
    "chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega").split()}
_GREEK["eps"] = "\\varepsilon"
_KNOWN_COMMANDS = {  # LaTeX the docstrings write, which latex2mathml reads
    "sum", "prod", "frac", "sqrt", "log", "ln", "exp", "sin", "cos", "tan", "tanh", "max", "min", "cdot",
    "partial", "odot", "top", "int", "nabla", "circ", "lfloor", "rfloor", "lceil", "rceil",
    "operatorname", "mathrm", "text", "infty", "le", "leq", "ge", "geq", "ne",
    "neq", "approx", "to", "pm", "mp", "times", "quad", "qquad", "big", "Big", "left", "right", "ldots",
    "cdots", *[g.lstrip("\\") for g in _GREEK.values()]}
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<command>\\[A-Za-z]+)
  | (?P<code>`[^`]*`)
  | (?P<string>(?<![\w'])'[\w .,+-]*')
  | (?P<name>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*)
  | (?P<number>\d+(?:\.\d+)?(?:e-?\d+)?)
  | (?P<op>\*\*|==|!=|<=|>=|->|\+-|-\+|\.\.\.|[-+*/@=<>|,.;:!?'()\[\]{}^_~%#&$"\\])
""", re.X)
_OPS = {"*": r"\cdot ", "**": "^", "==": "=", "!=": r"\neq ", "<=": r"\leq ", ">=": r"\geq ", "->": r"\to ",
        "+-": r"\pm ", "-+": r"\mp ", "...": r"\ldots ", "@": r"\mathbin{@}", "~": r"\sim ", "%": r"\%",
        "#": r"\#", "&": r"\&", "$": r"\$", '"': r"\text{''}", "\\": r"\backslash "}
_FUNCTION_WORDS = {"sqrt"}  # sqrt(...) becomes a radical


def _text(s):
    """Characters in a \\text{...}: the few that LaTeX reads in text mode, escaped."""
    return re.sub(r"([_%#&${}])", r"\\\1", s)


def _word(name, calls):
    """A multi-letter name: a function (followed by a parenthesis) upright as an operator name,
    other words (`shape`, `dim`, `where`) as text; `x_i` and `logp_i` with their subscripts."""
    if name in _GREEK:
        return _GREEK[name]
    if re.fullmatch(r"g[A-Za-z]", name):  # the gradient of x, as the docstrings name it: gx, gA
        return f"g_{{{name[1]}}}"
    base, _, sub = name.partition("_")
    if sub and "_" not in sub and len(base) <= 4 and len(sub) <= 3:
        head = _word(base, False) if len(base) > 1 else base
        return f"{{{head}}}_{{{_word(sub, False) if len(sub) > 1 else sub}}}"  # (braced: gx_i is g_x, then _i)
    if len(name) == 1:
        return name
    return rf"\operatorname{{{_text(name)}}}" if calls else rf"\text{{{_text(name)}}}"


def _close(tokens, i):
    """The index of the parenthesis closing the one at tokens[i] (or None)."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j] == ("op", "("):
            depth += 1
        elif tokens[j] == ("op", ")"):
            depth -= 1
            if depth == 0:
                return j
    return None


def _wordlike(tok):
    return tok is not None and (tok[0] in ("name", "number", "string", "code") or tok == ("op", ")"))


def _latex(tokens):
    out, i = [], 0
    while i < len(tokens):
        kind, text = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if kind == "space":
            before = tokens[i - 1] if i else None
            if _wordlike(before) and _wordlike(nxt):
                # two words (or a word and a number) side by side: prose, or a product such as `g w`
                long_word = any(t[0] in ("name", "string", "code") and len(t[1]) > 1 for t in (before, nxt))
                out.append(r"\ " if long_word else r"\,")
            i += 1
            continue
        if kind == "command":
            if text[1:] not in _KNOWN_COMMANDS:
                raise ValueError(f"an unknown LaTeX command {text}")
            out.append(text + " ")
        elif kind == "code":
            out.append(rf"\texttt{{{_text(text[1:-1])}}}")
        elif kind == "string":
            out.append(rf"\text{{{_text(text)}}}")
        elif kind == "number":
            out.append(text)
        elif kind == "name":
            calls = nxt == ("op", "(")
            if text in _FUNCTION_WORDS and calls and _close(tokens, i + 1) is not None:
                end = _close(tokens, i + 1)
                out.append(r"\sqrt{" + _latex(tokens[i + 2:end]) + "}")
                i = end + 1
                continue
            out.append(_word(text, calls))
        elif text in ("^", "**", "_"):  # a superscript (or subscript) of the next operand, in braces
            j = i + 1
            while j < len(tokens) and tokens[j][0] == "space":
                j += 1
            sign = ""
            if j < len(tokens) and tokens[j] in (("op", "-"), ("op", "+")):
                sign, j = tokens[j][1], j + 1
            mark = "_" if text == "_" else "^"
            if j < len(tokens) and tokens[j] == ("op", "{"):
                out.append(mark + sign)
                i = j
                continue
            if j < len(tokens) and tokens[j] == ("op", "(") and _close(tokens, j) is not None:
                end = _close(tokens, j)
                out.append(f"{mark}{{{sign}{_latex(tokens[j + 1:end])}}}")
                i = end + 1
                continue
            if j < len(tokens):
                out.append(f"{mark}{{{sign}{_latex(tokens[j:j + 1])}}}")
                i = j + 1
                continue
            out.append(rf"\text{{{text}}}")
        elif text == "." and i and _wordlike(tokens[i - 1]) and nxt is not None and nxt[0] == "name":
            out.append(r"\text{.}")  # an attribute (a.shape): no operator's spacing around the dot
        else:
            out.append(_OPS.get(text, text))
        i += 1
    return "".join(out)


def _tokens(text):
    tokens, at = [], 0
    for m in _TOKEN.finditer(text):
        if m.start() != at:
            raise ValueError(f"cannot read {text[at:m.start()]!r}")
        tokens.append((m.lastgroup, m.group()))
        at = m.end()
    if at != len(text):
        raise ValueError(f"cannot read {text[at:]!r}")
    return tokens


def to_latex(text):
    """One piece of a plain-text formula as LaTeX (ValueError for what it cannot read)."""
    latex = _latex(_tokens(text.strip()))
    depth = 0
    for c in re.sub(r"\\[{}]", "", latex):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            break
    if depth:
        raise ValueError("unbalanced braces")
    return latex


_LABEL = re.compile(r"(?P<label>(?:forward|backward|vjp|jvp|double backward|gradients?|grad|jacobian)"
                    r"\s*(?:\([^()\n]*\))?:)\s*", re.I)


def _split_top(text, sep):
    """`text` split at `sep` outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        depth += (c in "([{") - (c in ")]}")
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    return parts + [text[start:]]


def _remark(text):
    """(formula, remark): a parenthesised remark at the end of a piece, after two or more spaces
    or holding a sentence (`(the 2-norm)`, `(a step function: its slope is 0 ...)`), is prose."""
    m = re.search(r"(?:\s{2,}|\s(?=\((?:[^()]*\b[a-z]{3,}\b){2}))(\((?:[^()]|\([^()]*\))*\)[.,;]?)\s*$", text)
    if m and m.start() > 0:
        return text[:m.start()], m.group(1)
    return text, ""


def formula_latex(line):
    """A plain-text formula line as (label, pieces): `label` the marker (`VJP:`) or '', and each
    piece (kind, text) with kind 'math' (LaTeX) or 'text' (a prose remark, or a joining `;`).
    Raises ValueError for a line it cannot read (the caller keeps it as text)."""
    text = line.strip()
    label = ""
    m = _LABEL.match(text)
    if m:
        label, text = m["label"], text[m.end():]
    pieces = []
    segments = [s for s in _split_top(text, ";") if s.strip()]
    for k, segment in enumerate(segments):
        # a marked formula after a `;` (`out = tan x;   VJP: gx = ...`) keeps its label as text
        inner = _LABEL.match(segment.strip())
        if inner:
            pieces.append(("label", inner["label"]))
            segment = segment.strip()[inner.end():]
        formula, remark = _remark(segment.rstrip())
        for n, part in enumerate(p for p in _split_top(formula, ",  ") if p.strip()):
            if n:
                pieces.append(("text", ","))
            pieces.append(("math", to_latex(part)))
        if remark:
            pieces.append(("text", remark))
        if k < len(segments) - 1:
            pieces.append(("text", ";"))
    if not any(kind == "math" for kind, _ in pieces):
        raise ValueError("no formula in the line")
    return label, pieces


# ---- marked LaTeX in HTML -> MathML ---------------------------------------------------------------

_ARITHMATEX = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<body>.*?)</(?P=tag)>', re.S)
_DOLLARS = re.compile(r"(?<![\\$])\$\$(?P<display>.+?)\$\$|(?<![\\$\w])\$(?P<inline>[^$\n]+?)\$(?!\w)", re.S)


def mathml(latex, display=False):
    """MathML for `latex` (block or inline)."""
    if _convert is None:
        raise ImportError("latex2mathml is not installed: pip install -e '.[docs]'")
    return _convert(latex.strip(), display="block" if display else "inline")


def _render(latex, display, failed):
    try:
        return mathml(htmllib.unescape(latex), display)
    except ImportError:
        raise
    except Exception:  # noqa: BLE001 (any parse failure of latex2mathml: keep the source visible)
        failed.append(latex)
        return f'<code class="math-source">{latex}</code>'


def render_math(html, dollars=False):
    """`html` with arithmatex's marked math (and, with `dollars`, `$...$` and `$$...$$` outside
    <pre> and <code>, as the notebooks write it) replaced by MathML. Returns the new HTML; the
    LaTeX it could not read is listed in `render_math.failed`."""
    failed = render_math.failed = []

    def marked(m):
        body = m["body"].strip()
        display = m["tag"] == "div"
        for left, right in (("\\[", "\\]"), ("\\(", "\\)"), ("$$", "$$"), ("$", "$")):
            if body.startswith(left) and body.endswith(right):
                body = body[len(left):len(body) - len(right)]
                break
        return _render(body, display, failed)

    html = _ARITHMATEX.sub(marked, html)
    if dollars:
        parts = re.split(r"(<pre.*?</pre>|<code.*?</code>|<script.*?</script>|<style.*?</style>)", html, flags=re.S)
        for i in range(0, len(parts), 2):
            parts[i] = _DOLLARS.sub(
                lambda m: _render(m["display"], True, failed) if m["display"] is not None
                else _render(m["inline"], False, failed), parts[i])
        html = "".join(parts)
    return html


render_math.failed = []
