r"""`explain(loss)`: the backward pass, one node at a time, with the formula that each step applies.

    report = explain(loss, names={"W_query": w_query})
    print(report)            # a text table; in Jupyter, `report` alone shows an HTML table
    report.rows[0].op        # structured data: one `Step` per node, in the order backward ran it

The backward pass runs for real (the same engine, the same VJPs), but in capture mode: no `.grad`
is written, and the graph is retained, so `loss.backward()` still works afterwards. Each row says
what the node received (`g`, the gradient with respect to its output), what it sent to each
input, the VJP formula it used (read from the op's docstring, where the op states its math), and
where broadcasting was undone: an input smaller than the output of an elementwise op received
the *sum* of the gradient over the broadcast dims (the adjoint of copying is summing).
Hooks registered with `register_hook` run, as in any backward pass.

`explain(loss, values=True)` also shows the numbers of small tensors (up to `VALUES_UP_TO`
elements): each node's output value, the gradient it received and the gradients it sent, and
each leaf's gradient. Call `explain` before `backward()` (or after `backward(retain_graph=True)`):
backward frees what the nodes saved, so a graph it ran through can't be replayed; the error then
says so. The gradients backward stored are in the leaves' `.grad`, and `to_dot(loss,
show_values=True)` draws them after backward too.
"""
from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ..tensor import Tensor, broadcast_dims
from .api import root_gradients
from .engine import run_backward
from .formulas import split_formulas


@dataclass
class InputInfo:
    """One argument of a node that receives a gradient."""

    index: int  #: position among the op's forward arguments
    shape: tuple[int, ...]
    source: str  #: where the input came from: '#3 MatmulBackward', 'leaf W_query', 'leaf (4, 3)'
    grad_norm: float | None = None  #: 2-norm of the gradient sent to this input (None: none was sent)
    summed_dims: tuple[int, ...] = ()  #: dims of the op's output that were summed to fit this input's shape
    grad: np.ndarray | None = field(repr=False, default=None)  #: the gradient sent (with values=True, small tensors)

    def to_dict(self) -> dict[str, Any]:
        return dict(index=self.index, shape=self.shape, source=self.source, grad_norm=self.grad_norm,
                    summed_dims=self.summed_dims)


@dataclass
class Step:
    """One node of the backward pass."""

    step: int  #: 1 for the first node backward runs
    op: str  #: node name, e.g. 'MulBackward'
    output_shape: tuple[int, ...]
    output_name: str  #: the name of the node's output in `names` (or the caller's variables), else ''

    grad_norm: float  #: 2-norm of g, the gradient the node received for its output
    forward: str  #: the forward formula from the op's docstring
    vjp: str  #: the VJP formula from the op's docstring
    inputs: list[InputInfo] = field(default_factory=list)  #: one InputInfo per input that needs a gradient
    output_value: np.ndarray | None = field(repr=False, default=None)  #: with values=True, small tensors
    grad: np.ndarray | None = field(repr=False, default=None)  #: g itself, with values=True, small tensors

    @property
    def input_shapes(self) -> list[tuple[int, ...]]:
        return [i.shape for i in self.inputs]

    @property
    def grad_norms_out(self) -> list[float | None]:
        return [i.grad_norm for i in self.inputs]

    @property
    def broadcast_notes(self) -> list[str]:
        """One sentence per input whose gradient was summed over broadcast dims."""
        return [
            f"input {i.index} has shape {i.shape}: its gradient is g summed over dim"
            f"{'s' if len(i.summed_dims) > 1 else ''} {', '.join(map(str, i.summed_dims))} of {self.output_shape}"
            for i in self.inputs if i.summed_dims
        ]

    def to_dict(self) -> dict[str, Any]:
        return dict(step=self.step, op=self.op, output_shape=self.output_shape, output_name=self.output_name,
                    grad_norm=self.grad_norm,
                    forward=self.forward, vjp=self.vjp, inputs=[i.to_dict() for i in self.inputs],
                    broadcast=self.broadcast_notes)


@dataclass
class LeafGrad:
    """The total gradient a leaf would get in `.grad` (summed over every path into it)."""

    name: str
    shape: tuple[int, ...]
    grad_norm: float
    tensor: object = field(repr=False, default=None)
    grad: np.ndarray | None = field(repr=False, default=None)


class Explanation:
    """What `explain` returns: `rows` (a list of `Step`) and `leaves` (a list of `LeafGrad`)."""

    def __init__(self, rows: list[Step], leaves: list[LeafGrad], root_shape: tuple[int, ...],
                 values: bool = False) -> None:
        self.rows, self.leaves, self.root_shape, self.values = rows, leaves, root_shape, values

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.rows)

    def __getitem__(self, i: int) -> Step:
        return self.rows[i]

    def to_records(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]

    def __str__(self) -> str:
        lines = [f"backward from an output of shape {self.root_shape}: {len(self.rows)} nodes, in the order "
                 "backward runs them (g = gradient of the loss w.r.t. the node's output)"]
        for r in self.rows:
            lines.append("")
            named = f" '{r.output_name}'" if r.output_name else ""
            lines.append(f"#{r.step} {r.op}   output{named} {r.output_shape}   |g| = {_num(r.grad_norm)}")
            lines.append(f"   forward: {_one_line(r.forward)}")
            lines.append(f"   VJP:     {_one_line(r.vjp)}")
            lines += _value_lines("   output = ", r.output_value) + _value_lines("   g      = ", r.grad)
            for i in r.inputs:
                lines.append(f"   -> input {i.index} {i.shape} from {i.source}:  |grad| = {_num(i.grad_norm)}")
                lines += _value_lines("      grad = ", i.grad)
            for note in r.broadcast_notes:
                lines.append(f"   broadcast: {note}")
        if self.leaves:
            lines.append("")
            lines.append("leaf gradients (what .backward() would add to .grad):")
            width = max(len(lf.name) for lf in self.leaves)
            for lf in self.leaves:
                lines.append(f"   {lf.name:<{width}}  {str(lf.shape):<10} |grad| = {_num(lf.grad_norm)}")
                if self.values:
                    lines += _value_lines(" " * (width + 5) + "grad = ", _small(lf.grad))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self):
        e = html.escape
        head = ("<tr><th>#</th><th>op</th><th>output</th><th>|g|</th><th>VJP</th>"
                "<th>inputs: shape, source, |grad|</th><th>broadcast</th></tr>")
        body = []
        for r in self.rows:
            ins = "<br>".join(f"{i.index}: {e(str(i.shape))} from {e(i.source)}, "
                              f"{_num(i.grad_norm)}{_html_value(i.grad)}"
                              for i in r.inputs)
            body.append(
                f"<tr><td>{r.step}</td><td><code>{e(r.op)}</code></td>"
                f"<td>{e(r.output_name)} {e(str(r.output_shape))}{_html_value(r.output_value)}</td>"
                f"<td>{_num(r.grad_norm)}{_html_value(r.grad)}</td><td><code>{e(_one_line(r.vjp))}</code></td><td>{ins}</td>"
                f"<td>{'<br>'.join(e(n) for n in r.broadcast_notes)}</td></tr>"
            )
        leaves = "".join(
            f"<tr><td><code>{e(lf.name)}</code></td><td>{e(str(lf.shape))}</td><td>{_num(lf.grad_norm)}"
            f"{_html_value(_small(lf.grad)) if self.values else ''}</td></tr>"
            for lf in self.leaves
        )
        return (
            f"<p>backward from an output of shape {e(str(self.root_shape))}: {len(self.rows)} nodes</p>"
            f"<table>{head}{''.join(body)}</table>"
            f"<p>leaf gradients</p><table><tr><th>leaf</th><th>shape</th><th>|grad|</th></tr>{leaves}</table>"
        )


def _num(x):
    return "-" if x is None else f"{x:.4g}"


VALUES_UP_TO = 64  #: `values=True` shows tensors of at most this many elements (a bigger one shows its norm only)


def _small(t):
    """A copy of the values of `t` (a Tensor or ndarray) if it has at most VALUES_UP_TO elements, else None."""
    arr = t._array if isinstance(t, Tensor) else np.asarray(t)
    return np.array(arr, copy=True) if arr.size <= VALUES_UP_TO else None


def _html_value(arr):
    return "" if arr is None else "<pre>" + html.escape("\n".join(_value_lines("", arr))) + "</pre>"


def _value_lines(prefix, arr):
    """`arr` printed under a label, each further line indented to the label's width ([] if None)."""
    if arr is None:
        return []
    text = np.array2string(arr, precision=4, suppress_small=True, max_line_width=100 - len(prefix))
    pad = " " * len(prefix)
    return [prefix + line if k == 0 else pad + line for k, line in enumerate(text.splitlines())]


def _one_line(text):
    return " ".join(text.split())


def _norm(t):

    arr = t._array if isinstance(t, Tensor) else t  # a user's VJP may return a plain ndarray
    return float(np.sqrt(np.sum(np.abs(np.asarray(arr, dtype=np.float64)) ** 2)))


def formulas(node):
    """(forward, vjp) formulas from the docstring of the node's op: the text before and after 'VJP:'."""
    forward, vjp = split_formulas(type(node).__doc__)
    if vjp is None:
        return _one_line(forward) or "(no docstring)", "(the op's docstring states no 'VJP:' formula)"
    return forward, vjp


def summed_dims(in_shape, out_shape):
    """Dims of `out_shape` that broadcasting `in_shape` up to it created: the dims `unbroadcast` sums over."""

    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    return broadcast_dims(in_shape, out_shape) if len(out_shape) >= len(in_shape) else ()


def _broadcast_of(node, inp_shape, out_shape):
    """The dims an input's gradient was summed over, for ops whose VJP undoes broadcasting."""
    vjp = formulas(node)[1]
    if "unbroadcast" not in vjp or inp_shape == out_shape:
        return ()
    if type(node).__name__ == "Matmul":  # only the batch dims broadcast; the last two are the product's
        if len(inp_shape) < 2 or len(out_shape) < 2:
            return ()
        return summed_dims(inp_shape[:-2], out_shape[:-2])
    try:
        if np.broadcast_shapes(inp_shape, out_shape) != out_shape:
            return ()
    except ValueError:
        return ()
    return summed_dims(inp_shape, out_shape)


def tensor_names(names: Any = None, depth: int = 2) -> dict[int, str]:
    """id(tensor) -> name, from `names` (a mapping or (name, tensor) pairs) or else the caller's variables.

    Learners call `explain(loss)` right where they built the graph, so the variables in scope there
    (`w_query`, `scores`, ...) are the names they know the tensors by; a module among them names its
    parameters after itself (`model.fc1.weight`).
    """

    if names is not None:
        pairs = names.items() if hasattr(names, "items") else names
    else:
        frame = sys._getframe(depth)
        try:
            pairs = list(frame.f_locals.items())
        finally:
            del frame  # a frame held in a local would keep every tensor of the caller alive
    label: dict[int, str] = {}
    for name, t in pairs:
        if name.startswith("_"):
            continue
        if isinstance(t, Tensor):
            label.setdefault(id(t), name)
        elif callable(getattr(t, "named_parameters", None)):  # a module: its parameters as `model.fc1.weight`
            for pname, p in t.named_parameters():
                label.setdefault(id(p), f"{name}.{pname}")
    return label


def explain(output: Tensor, gradient: Tensor | None = None, names: Any = None, values: bool = False) -> Explanation:
    """Run backward from `output` without touching any `.grad`, and report every node it visits.

    `gradient`: as for `.backward()` (needed when `output` is not a scalar).
    `names`: optional mapping name -> tensor (e.g. `dict(model.named_parameters())`) to label
    leaves and intermediate results; by default the caller's local variables (and the parameters of
    the modules among them) are used.
    `values`: also keep and print the numbers of tensors of at most `VALUES_UP_TO` elements.
    """

    if not isinstance(output, Tensor):
        raise TypeError(f"explain: expected a Tensor, got {type(output).__name__}")
    if not output.requires_grad:
        raise RuntimeError("explain: the output does not require grad, so there is no backward pass to explain")
    _check_not_freed(output)
    label = tensor_names(names)
    keep = _small if values else (lambda t: None)
    visited: list[tuple[Any, ...]] = []
    leaves: dict[int, Tensor] = {}

    def visit(node, g, grads):  # called before the node's inputs are released
        visited.append((node, _norm(g), tuple(g.shape), keep(g), [
            (i, child, node.inputs[i], None if grads[i] is None else _norm(grads[i]),
             None if grads[i] is None else keep(grads[i])) for i, child, _, _ in node.edges
        ]))
        for _, child, _, _ in node.edges:
            if isinstance(child, Tensor):
                leaves.setdefault(id(child), child)

    if output.grad_fn is None:
        leaves[id(output)] = output
    captured = run_backward(root_gradients([output], [gradient]), retain_graph=True, create_graph=False, capture=[],
                            visit=visit, fill_retained=False)
    step_of = {node: k + 1 for k, (node, *_rest) in enumerate(visited)}
    # The tensor each node produced: `output` for the root, else the input of the node that used it
    # (a node keeps only a weak reference to its output).
    produced = {output.grad_fn: output}
    for _node, _g, _shape, _gv, edges in visited:
        produced.update((child, t) for _, child, t, _, _ in edges if not isinstance(child, Tensor))
    rows = []
    for k, (node, g_norm, out_shape, g_value, edges) in enumerate(visited):
        fwd, vjp = formulas(node)
        ins = []
        for i, child, t, gn, grad_value in edges:
            shape = tuple(t.shape)
            if isinstance(child, Tensor):
                source = f"leaf '{label[id(t)]}'" if id(t) in label else "leaf (unnamed)"
            else:
                source = f"#{step_of[child]} {child.name()}" if child in step_of else child.name()
                if id(t) in label:
                    source += f" '{label[id(t)]}'"
            ins.append(InputInfo(i, shape, source, gn, _broadcast_of(node, shape, out_shape) if gn is not None else (),
                                 grad_value))
        out = produced.get(node)
        out_name = label.get(id(out), "") if out is not None else ""
        rows.append(Step(k + 1, node.name(), out_shape, out_name, g_norm, fwd, vjp, ins,
                         keep(out) if out is not None else None, g_value))
    leaf_rows = []
    for key, t in leaves.items():
        g = captured.get(key)
        if g is None:
            continue
        leaf_rows.append(LeafGrad(label.get(key, "(unnamed)"), tuple(t.shape), _norm(g), t,
                                  np.array(g._array, copy=True)))
    return Explanation(rows, leaf_rows, tuple(output.shape), values)


def _check_not_freed(output):
    """Refuse, saying what to do, a graph that a backward without retain_graph already ran through."""
    stack, seen = [output.grad_fn] if output.grad_fn is not None else [], set()
    while stack:
        node = stack.pop()
        if node.inputs is None:
            raise RuntimeError(
                f"explain: backward() already ran through this graph (at '{node.name()}') and freed what its "
                "nodes saved, so it can't be replayed. Call explain(loss) before loss.backward(), or run "
                "loss.backward(retain_graph=True). The gradients that backward stored are in each leaf's "
                ".grad; minitensor.viz.to_dot(loss, show_values=True) draws them."
            )
        for _, child, _, _ in node.edges:
            if not isinstance(child, Tensor) and child not in seen:
                seen.add(child)
                stack.append(child)
