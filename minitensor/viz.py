r"""Pictures of the autograd graph: Graphviz DOT text (no dependency), rendered when Graphviz is installed.

    from minitensor.viz import to_dot, to_svg, render
    dot = to_dot(loss)          # DOT text; in Jupyter, `dot` alone draws the graph
    svg = to_svg(loss)          # an SVG picture drawn in Python: no Graphviz needed
    render(loss, "graph.svg")   # Graphviz's picture when it is installed, else to_svg's

The picture follows the forward pass, from the leaves (boxes) at the top through the ops
(ellipses) down to the output (double ellipse). Each op is labelled with its node name, the step
of the math it belongs to when one was named (`autograd.step`: attention's `scores = q k^T`,
`scale 1/sqrt(d_k)` with its value, `mask` drawn as a grid ...), and its output's shape; each edge
with the argument position it feeds. After `backward()`, leaves show the norm of their `.grad`,
and so do intermediate results that asked for it with `.retain_grad()`; when every tensor of the
graph is small, the values and gradients themselves (`show_values`). Only what autograd records
is drawn: tensors that don't require grad (data, masks) are not part of the graph.

Without the Graphviz program, `to_svg` lays the same graph out itself: each node in a column (a
row for rankdir='TB') one step before the node that uses it, its longest path to the output
deciding which, and the nodes of each column ordered by the mean position of their neighbours
(the barycenter heuristic), so edges cross less.
"""
from __future__ import annotations

import html
import os
import shutil
import subprocess
from typing import Any

from .autograd.explain import VALUES_UP_TO, _norm, _small, _value_lines, tensor_names
from .autograd.steps import step_name
from .tensor import Tensor

__all__ = ["Dot", "Svg", "render", "to_dot", "to_svg"]


class Dot(str):
    """DOT source text (a `str`) that Jupyter draws inline: by Graphviz when it is installed, else
    as `to_svg` draws it in Python."""

    graph = None  # (statements, rankdir) of the graph, set by `to_dot`

    def _repr_svg_(self):
        try:
            return _run_graphviz(str(self), "svg").decode("utf-8")
        except (RuntimeError, OSError):
            if self.graph is None:  # DOT text made elsewhere: only Graphviz can read it
                return _hint_svg()
            return _svg(*self.graph)


class Svg(str):
    """SVG text (a `str`) that Jupyter draws inline."""

    def _repr_svg_(self):
        return str(self)


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _grad_line(t, show_values=False):
    """The tensor's values and .grad (with show_values, for small tensors), else the norm of .grad."""
    if t is None:
        return ""
    lines = []
    if show_values:
        lines += _value_lines("data ", _small(t))
        if t.grad is not None:
            lines += _value_lines("grad ", _small(t.grad)) or [f"|grad| = {_norm(t.grad):.4g}"]
    elif t.grad is not None:
        lines.append(f"|grad| = {_norm(t.grad):.4g}")
    return "".join("\n" + line for line in lines)


def to_dot(tensor: Tensor, names: Any = None, rankdir: str = "TB", show_values: bool | None = None) -> Dot:
    """The graph that produced `tensor`, as Graphviz DOT text (a `Dot`, which is a `str`).

    `names`: mapping name -> tensor (e.g. `dict(model.named_parameters())`) to label leaves and
    results; by default the caller's local variables (and the parameters of the modules among
    them) are used. `rankdir`: 'TB' (top to bottom, the default) or 'LR'. `show_values`: write the
    numbers of small tensors (data and, once backward has run, .grad) into their boxes, as
    micrograd draws scalars; an intermediate result shows them while it is alive (a named
    variable, say; `retain_grad()` for its .grad). None (the default): show them once backward has
    run, if every tensor of the graph has at most `VALUES_UP_TO` elements.
    """
    return _to_dot(tensor, tensor_names(names), rankdir, show_values)


def _values_by_default(tensor):
    """Whether backward has run into the graph of `tensor` (a leaf has a .grad) and every tensor of it is small."""
    if tensor.numel() > VALUES_UP_TO:
        return False
    if tensor.grad_fn is None:
        return tensor.grad is not None
    stack, seen, grads = [tensor.grad_fn], {tensor.grad_fn}, False
    while stack:
        for _, child, shape, _ in stack.pop().edges:
            n = 1
            for d in shape:
                n *= d
            if n > VALUES_UP_TO:
                return False
            if isinstance(child, Tensor):
                grads = grads or child.grad is not None
            elif child not in seen:
                seen.add(child)
                stack.append(child)
    return grads


def _step_lines(node):
    """The step of the math `node` belongs to, in brackets, and the lines of its detail (a mask's grid ...)."""
    named = step_name(node)
    if named is None:
        return ""
    first, *rest = named.lines()
    return "".join("\n" + line for line in [f"[{first}]"] + rest)


def _graph(tensor, label, show_values=None):
    """The graph that produced `tensor` as statements in the order they are found, each
    ("node", id, label text, kind) with kind "leaf", "op" or "root", or ("edge", from id, to id, argument)."""
    if show_values is None:
        show_values = _values_by_default(tensor)
    ids = {}

    def node_id(obj):
        if id(obj) not in ids:
            ids[id(obj)] = f"n{len(ids)}"
        return ids[id(obj)]

    root_node = tensor.grad_fn
    if root_node is None:
        name = label.get(id(tensor), "")
        text = (name + "\n" if name else "") + str(tuple(tensor.shape)) + _grad_line(tensor, show_values)
        return [("node", node_id(tensor), text, "leaf")]

    # Each node's output: the root's is `tensor`; any other is alive only while something holds it
    # (a name in the caller's scope, say), so its shape comes from the edge of the node that used it.
    statements = []
    shape_of = {root_node: tuple(tensor.shape)}
    stack, seen, leaves_done = [root_node], {root_node}, set()
    while stack:
        node = stack.pop()
        out = tensor if node is root_node else node._out()
        name = label.get(id(out), "") if out is not None else ""
        text = (node.name() + _step_lines(node) + (f"\n{name}" if name else "") + f"\n{shape_of[node]}"
                + _grad_line(out, show_values))
        statements.append(("node", node_id(node), text, "root" if node is root_node else "op"))
        for i, child, shape, _ in node.edges:
            if isinstance(child, Tensor):  # a leaf
                if id(child) not in leaves_done:
                    leaves_done.add(id(child))
                    leaf_text = label.get(id(child), "leaf") + f"\n{tuple(shape)}" + _grad_line(child, show_values)
                    statements.append(("node", node_id(child), leaf_text, "leaf"))
            else:
                shape_of.setdefault(child, tuple(shape))
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
            statements.append(("edge", node_id(child), node_id(node), i))
    return statements


_DOT_STYLE = {"leaf": "shape=box, style=filled, fillcolor=lightblue", "op": "shape=ellipse",
              "root": "shape=doubleoctagon"}


def _to_dot(tensor, label, rankdir, show_values=None):
    statements = _graph(tensor, label, show_values)
    lines = ["digraph minitensor {", f"  rankdir={rankdir};",
             '  node [fontname="Helvetica", fontsize=10];', '  edge [fontname="Helvetica", fontsize=9];']
    for kind, a, b, c in statements:
        if kind == "node":
            lines.append(f"  {a} [label={_quote(b)}, {_DOT_STYLE[c]}];")
        else:
            lines.append(f"  {a} -> {b} [label={_quote(c)}];")
    lines.append("}")
    dot = Dot("\n".join(lines) + "\n")
    dot.graph = (statements, rankdir)  # what `_repr_svg_` draws when Graphviz is not there
    return dot


def _run_graphviz(source, fmt):
    """Bytes of `source` rendered as `fmt`, by the graphviz package or else the `dot` program."""
    try:
        import graphviz  # optional: `pip install 'minitensor-attention[viz]'`
    except ImportError:
        graphviz = None
    if graphviz is not None:
        try:
            return graphviz.Source(source).pipe(format=fmt)
        except Exception as e:  # the package is there but the `dot` binary is not
            raise RuntimeError(f"render: graphviz could not run ({e}); install the Graphviz programs") from e
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            "render: Graphviz is not installed. Install the Graphviz programs (e.g. `apt install graphviz`, "
            "`brew install graphviz`) and optionally `pip install graphviz`; or paste the text of to_dot() "
            "into an online Graphviz viewer."
        )
    done = subprocess.run([exe, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"render: dot failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def render(tensor: Tensor, path: str | os.PathLike[str], format: str | None = None, names: Any = None,
           rankdir: str = "TB", show_values: bool | None = None) -> str | os.PathLike[str]:
    """Draw the graph of `tensor` to `path` (format from the suffix: .svg, .png, .pdf; .dot writes the text).

    Returns `path`. Graphviz draws every format when it is installed; without it `.svg` is drawn by
    `to_svg` (in Python) and `.dot` is the text, and other formats raise a RuntimeError saying so.
    """
    fmt = format or os.path.splitext(str(path))[1].lstrip(".").lower() or "svg"
    source = _to_dot(tensor, tensor_names(names), rankdir, show_values)
    if fmt in ("dot", "gv"):
        data = source.encode("utf-8")
    else:
        try:
            data = _run_graphviz(source, fmt)
        except RuntimeError as e:
            if fmt != "svg":
                raise RuntimeError(f"{e} (a .svg needs no Graphviz: render(..., 'graph.svg') or to_svg())") from None
            data = _svg(*source.graph).encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---- the graph as SVG, laid out in Python ---------------------------------------------------------

_CHAR, _LINE = 7.0, 13  # width of a character (with room to spare) and height of a line of 11px monospace text
_GAP_LAYERS, _GAP_NODES, _MARGIN = 56, 16, 12
_GAP_ROWS = 36  # between the rows of a top-to-bottom picture: no labels there to make room for


def to_svg(tensor: Tensor, names: Any = None, rankdir: str = "TB", show_values: bool | None = None) -> Svg:
    """The graph that produced `tensor` as an SVG picture (an `Svg`, which is a `str`), drawn in
    Python: the same nodes, edges and labels as `to_dot`, with no Graphviz needed.

    Leaves are blue boxes, ops ellipses, the output a double ellipse; each edge is labelled with
    the argument position it feeds. Arguments as in `to_dot`; rankdir 'TB' (the default) and 'BT'
    draw the flow down or up, 'LR' and 'RL' across.
    """
    if rankdir not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"to_svg: rankdir must be 'LR', 'RL', 'TB' or 'BT', got {rankdir!r}")
    return _svg(_graph(tensor, tensor_names(names), show_values), rankdir)


def _layers(nodes, edges):
    """Layer of each node, 0 for the output: the longest path from the node to it (the graph's
    nodes all lead to the output), found in one pass over a topological order, without recursion."""
    users = {n: [] for n in nodes}
    inputs_left = {n: 0 for n in nodes}
    for a, b, _ in edges:
        users[a].append(b)
        inputs_left[b] += 1
    order, ready = [], [n for n in nodes if inputs_left[n] == 0]
    while ready:  # Kahn's algorithm: the inputs of every node come before it
        n = ready.pop()
        order.append(n)
        for u in users[n]:
            inputs_left[u] -= 1
            if inputs_left[u] == 0:
                ready.append(u)
    depth = {}
    for n in reversed(order):  # every user of n has its depth already
        depth[n] = 1 + max((depth[u] for u in users[n]), default=-1)
    return depth, users


def _order_layers(nodes, edges, depth, users):
    """The nodes of each layer, ordered by the barycenter heuristic: a few sweeps that sort each
    layer by the mean position of its neighbours in the layer before, so that edges cross less."""
    n_layers = max(depth.values()) + 1
    layers = [[] for _ in range(n_layers)]
    for n in nodes:  # first by the order they were found
        layers[depth[n]].append(n)
    inputs = {n: [] for n in nodes}
    for a, b, _ in edges:
        inputs[b].append(a)
    for sweep in range(4):
        downward = sweep % 2 == 0  # from the output towards the leaves, then back
        span = range(1, n_layers) if downward else range(n_layers - 2, -1, -1)
        for k in span:
            before = layers[k - 1] if downward else layers[k + 1]
            pos = {n: i for i, n in enumerate(before)}
            keyed = []
            for i, n in enumerate(layers[k]):
                near = [pos[m] for m in (users[n] if downward else inputs[n]) if m in pos]
                keyed.append((sum(near) / len(near) if near else i, i, n))
            layers[k] = [n for _, _, n in sorted(keyed)]
    return layers


def _svg(statements, rankdir="LR"):
    """Lay out and draw the statements of `_graph`: each layer a column (rankdir 'LR', the output on
    the right) or a row ('TB', the output at the bottom)."""
    text = {a: b.split("\n") for kind, a, b, _ in statements if kind == "node"}
    shape = {a: c for kind, a, _, c in statements if kind == "node"}
    edges = [(a, b, c) for kind, a, b, c in statements if kind == "edge"]
    nodes = list(text)
    size = {}
    for n, lines in text.items():
        w, h = max(len(line) for line in lines) * _CHAR + 16, len(lines) * _LINE + 10
        if shape[n] != "leaf":  # an ellipse around the text needs room at its corners
            w, h = w * 1.15 + 10, h * 1.3 + 6
        size[n] = (w, h)
    depth, users = _layers(nodes, edges)
    layers = _order_layers(nodes, edges, depth, users)
    forward = rankdir not in ("RL", "BT")  # the flow runs towards larger coordinates
    if forward:
        layers = layers[::-1]  # the leaves first, the output last
    across = rankdir not in ("TB", "BT")
    # (along, across) coordinates: along the direction of the flow, and across it
    thick = [max((size[n][0] if across else size[n][1]) for n in layer) for layer in layers]
    spans = [sum((size[n][1] if across else size[n][0]) + _GAP_NODES for n in layer) - _GAP_NODES for layer in layers]
    widest = max(spans)
    centre, along = {}, _MARGIN
    gap = _GAP_LAYERS if across else _GAP_ROWS
    for layer, t, span in zip(layers, thick, spans):
        pos = _MARGIN + (widest - span) / 2
        for n in layer:
            extent = size[n][1] if across else size[n][0]
            centre[n] = (along + t / 2, pos + extent / 2) if across else (pos + extent / 2, along + t / 2)
            pos += extent + _GAP_NODES
        along += t + gap
    width, height = (along - gap + _MARGIN, widest + 2 * _MARGIN)
    if not across:
        width, height = height, width
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="11">',
           '<defs><marker id="minitensor-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>']
    for a, b, arg in edges:
        (x0, y0), (x1, y1) = _port(centre[a], size[a], across, 1 if forward else -1), \
            _port(centre[b], size[b], across, -1 if forward else 1)
        lx, ly = x0 + 0.75 * (x1 - x0), y0 + 0.75 * (y1 - y0)  # the argument's number near the op it feeds
        lx, ly = (lx, ly - 3) if across else (lx + 6, ly + 3)  # beside the line, not on it
        out.append(f'<g class="edge" data-from="{a}" data-to="{b}">'
                   f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="#444" '
                   f'marker-end="url(#minitensor-arrow)"/><text x="{lx:.1f}" y="{ly:.1f}" font-size="9" '
                   f'fill="#a33" text-anchor="middle">{arg}</text></g>')
    for n in nodes:
        (cx, cy), (w, h) = centre[n], size[n]
        if shape[n] == "leaf":
            body = (f'<rect x="{cx - w / 2:.1f}" y="{cy - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" '
                    'fill="lightblue" stroke="#333"/>')
        else:
            body = (f'<ellipse cx="{cx:.1f}" cy="{cy:.1f}" rx="{w / 2:.1f}" ry="{h / 2:.1f}" fill="white" '
                    'stroke="#333"/>')
            if shape[n] == "root":
                body += (f'<ellipse cx="{cx:.1f}" cy="{cy:.1f}" rx="{w / 2 - 4:.1f}" ry="{h / 2 - 4:.1f}" fill="none" '
                         'stroke="#333"/>')
        top = cy - (len(text[n]) - 1) * _LINE / 2 + 4
        if any(line.startswith(("data ", "grad ", " ")) for line in text[n]):  # values: the lines of an
            # array line up only when they start at one x
            x, anchor = cx - max(len(line) for line in text[n]) * _CHAR / 2, "start"
        else:
            x, anchor = cx, "middle"
        lines = "".join(f'<tspan x="{x:.1f}" y="{top + k * _LINE:.1f}">{html.escape(line)}</tspan>'
                        for k, line in enumerate(text[n]))
        out.append(f'<g class="node {shape[n]}" id="{n}">{body}'
                   f'<text text-anchor="{anchor}" xml:space="preserve">{lines}</text></g>')
    out.append("</svg>")
    return Svg("\n".join(out) + "\n")


def _port(centre, size, across, sign):
    """The middle of a node's side towards larger (sign 1) or smaller (-1) coordinates along the flow."""
    (cx, cy), (w, h) = centre, size
    return (cx + sign * w / 2, cy) if across else (cx, cy + sign * h / 2)


def _hint_svg():
    """A one-line picture saying what draws DOT text that was not made by `to_dot`."""
    msg = "Graphviz is not installed: apt install graphviz (or brew install graphviz); or use minitensor.viz.to_svg"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{len(msg) * 7 + 20}" height="30">'
            f'<text x="10" y="20" font-family="monospace" font-size="12">{html.escape(msg)}</text></svg>')
