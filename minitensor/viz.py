r"""Pictures of the autograd graph: Graphviz DOT text (no dependency), rendered when Graphviz is installed.

    from minitensor.viz import to_dot, render
    dot = to_dot(loss)          # DOT text; in Jupyter, `dot` alone draws the graph (if Graphviz is installed)
    render(loss, "graph.svg")   # needs the `graphviz` Python package or the `dot` program

The picture follows the forward pass, from the leaves (boxes) through the ops (ellipses) to the
output (double ellipse). Each op is labelled with its node name and its output's shape; each edge
with the argument position it feeds. After `backward()`, leaves show the norm of their `.grad`,
and so do intermediate results that asked for it with `.retain_grad()`. Only what autograd
records is drawn: tensors that don't require grad (data, masks) are not part of the graph.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from .autograd.explain import _norm, _small, _value_lines, tensor_names
from .tensor import Tensor


class Dot(str):
    """DOT source text (a `str`) that Jupyter draws inline when Graphviz is available."""

    def _repr_svg_(self):
        try:
            return _run_graphviz(str(self), "svg").decode("utf-8")
        except (RuntimeError, OSError):
            return None  # IPython then falls back to showing the text


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


def to_dot(tensor: Tensor, names: Any = None, rankdir: str = "LR", show_values: bool = False) -> Dot:
    """The graph that produced `tensor`, as Graphviz DOT text (a `Dot`, which is a `str`).

    `names`: mapping name -> tensor (e.g. `dict(model.named_parameters())`) to label leaves and
    results; by default the caller's local variables (and the parameters of the modules among
    them) are used. `rankdir`: 'LR' or 'TB'. `show_values`: write the numbers of small tensors
    (data and, once backward has run, .grad) into their boxes, as micrograd draws scalars; an
    intermediate result shows them while it is alive (a named variable, say; `retain_grad()` for
    its .grad).
    """
    return _to_dot(tensor, tensor_names(names), rankdir, show_values)


def _to_dot(tensor, label, rankdir, show_values=False):
    ids = {}

    def node_id(obj):
        if id(obj) not in ids:
            ids[id(obj)] = f"n{len(ids)}"
        return ids[id(obj)]

    lines = ["digraph minitensor {", f"  rankdir={rankdir};",
             '  node [fontname="Helvetica", fontsize=10];', '  edge [fontname="Helvetica", fontsize=9];']
    root_node = tensor.grad_fn
    if root_node is None:
        name = label.get(id(tensor), "")
        lines.append(f"  {node_id(tensor)} [label={_quote((name + chr(10) if name else '') + str(tuple(tensor.shape)) + _grad_line(tensor, show_values))}, "
                     "shape=box, style=filled, fillcolor=lightblue];")
        lines.append("}")
        return Dot("\n".join(lines) + "\n")

    # Each node's output: the root's is `tensor`; any other is alive only while something holds it
    # (a name in the caller's scope, say), so its shape comes from the edge of the node that used it.
    shape_of = {root_node: tuple(tensor.shape)}
    stack, seen, leaves_done = [root_node], {root_node}, set()
    while stack:
        node = stack.pop()
        out = tensor if node is root_node else node._out()
        name = label.get(id(out), "") if out is not None else ""
        text = node.name() + (f"\n{name}" if name else "") + f"\n{shape_of[node]}" + _grad_line(out, show_values)
        style = "shape=doubleoctagon" if node is root_node else "shape=ellipse"
        lines.append(f"  {node_id(node)} [label={_quote(text)}, {style}];")
        for i, child, shape, _ in node.edges:
            if isinstance(child, Tensor):  # a leaf
                if id(child) not in leaves_done:
                    leaves_done.add(id(child))
                    leaf_text = label.get(id(child), "leaf") + f"\n{tuple(shape)}" + _grad_line(child, show_values)
                    lines.append(f"  {node_id(child)} [label={_quote(leaf_text)}, shape=box, style=filled, "
                                 "fillcolor=lightblue];")
            else:
                shape_of.setdefault(child, tuple(shape))
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
            lines.append(f"  {node_id(child)} -> {node_id(node)} [label={_quote(i)}];")
    lines.append("}")
    return Dot("\n".join(lines) + "\n")


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
           rankdir: str = "LR", show_values: bool = False) -> str | os.PathLike[str]:
    """Draw the graph of `tensor` to `path` (format from the suffix: .svg, .png, .pdf; .dot writes the text).

    Returns `path`. Needs Graphviz for every format but `.dot`.
    """
    fmt = format or os.path.splitext(str(path))[1].lstrip(".").lower() or "svg"
    source = _to_dot(tensor, tensor_names(names), rankdir, show_values)
    data = source.encode("utf-8") if fmt in ("dot", "gv") else _run_graphviz(source, fmt)
    with open(path, "wb") as f:
        f.write(data)
    return path
