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
Hooks registered with `register_hook` run, as in any backward pass. Call `explain` before
`backward()` (or backward with `retain_graph=True`): a freed graph can't be run again.
"""
import html
import sys
from dataclasses import dataclass, field

import numpy as np

from .api import root_gradients
from .engine import run_backward
from ..tensor import Tensor, broadcast_dims


@dataclass
class InputInfo:
    """One argument of a node that receives a gradient."""

    index: int  #: position among the op's forward arguments
    shape: tuple
    source: str  #: where the input came from: '#3 MatmulBackward', 'leaf W_query', 'leaf (4, 3)'
    grad_norm: float = None  #: 2-norm of the gradient sent to this input (None: none was sent)
    summed_dims: tuple = ()  #: dims of the op's output that were summed to fit this input's shape

    def to_dict(self):
        return dict(index=self.index, shape=self.shape, source=self.source, grad_norm=self.grad_norm,
                    summed_dims=self.summed_dims)


@dataclass
class Step:
    """One node of the backward pass."""

    step: int  #: 1 for the first node backward runs
    op: str  #: node name, e.g. 'MulBackward'
    output_shape: tuple
    output_name: str  #: the name of the node's output in `names` (or the caller's variables), else ''

    grad_norm: float  #: 2-norm of g, the gradient the node received for its output
    forward: str  #: the forward formula from the op's docstring
    vjp: str  #: the VJP formula from the op's docstring
    inputs: list = field(default_factory=list)  #: one InputInfo per input that needs a gradient

    @property
    def input_shapes(self):
        return [i.shape for i in self.inputs]

    @property
    def grad_norms_out(self):
        return [i.grad_norm for i in self.inputs]

    @property
    def broadcast_notes(self):
        """One sentence per input whose gradient was summed over broadcast dims."""
        return [
            f"input {i.index} has shape {i.shape}: its gradient is g summed over dim"
            f"{'s' if len(i.summed_dims) > 1 else ''} {', '.join(map(str, i.summed_dims))} of {self.output_shape}"
            for i in self.inputs if i.summed_dims
        ]

    def to_dict(self):
        return dict(step=self.step, op=self.op, output_shape=self.output_shape, output_name=self.output_name,
                    grad_norm=self.grad_norm,
                    forward=self.forward, vjp=self.vjp, inputs=[i.to_dict() for i in self.inputs],
                    broadcast=self.broadcast_notes)


@dataclass
class LeafGrad:
    """The total gradient a leaf would get in `.grad` (summed over every path into it)."""

    name: str
    shape: tuple
    grad_norm: float
    tensor: object = field(repr=False, default=None)
    grad: np.ndarray = field(repr=False, default=None)


class Explanation:
    """What `explain` returns: `rows` (a list of `Step`) and `leaves` (a list of `LeafGrad`)."""

    def __init__(self, rows, leaves, root_shape):
        self.rows, self.leaves, self.root_shape = rows, leaves, root_shape

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def to_records(self):
        return [r.to_dict() for r in self.rows]

    def __str__(self):
        lines = [f"backward from an output of shape {self.root_shape}: {len(self.rows)} nodes, in the order "
                 "backward runs them (g = gradient of the loss w.r.t. the node's output)"]
        for r in self.rows:
            lines.append("")
            named = f" '{r.output_name}'" if r.output_name else ""
            lines.append(f"#{r.step} {r.op}   output{named} {r.output_shape}   |g| = {_num(r.grad_norm)}")
            lines.append(f"   forward: {_one_line(r.forward)}")
            lines.append(f"   VJP:     {_one_line(r.vjp)}")
            for i in r.inputs:
                lines.append(f"   -> input {i.index} {i.shape} from {i.source}:  |grad| = {_num(i.grad_norm)}")
            for note in r.broadcast_notes:
                lines.append(f"   broadcast: {note}")
        if self.leaves:
            lines.append("")
            lines.append("leaf gradients (what .backward() would add to .grad):")
            width = max(len(lf.name) for lf in self.leaves)
            for lf in self.leaves:
                lines.append(f"   {lf.name:<{width}}  {str(lf.shape):<10} |grad| = {_num(lf.grad_norm)}")
        return "\n".join(lines)

    def __repr__(self):
        return str(self)

    def _repr_html_(self):
        e = html.escape
        head = ("<tr><th>#</th><th>op</th><th>output</th><th>|g|</th><th>VJP</th>"
                "<th>inputs: shape, source, |grad|</th><th>broadcast</th></tr>")
        body = []
        for r in self.rows:
            ins = "<br>".join(f"{i.index}: {e(str(i.shape))} from {e(i.source)}, {_num(i.grad_norm)}" for i in r.inputs)
            body.append(
                f"<tr><td>{r.step}</td><td><code>{e(r.op)}</code></td><td>{e(r.output_name)} {e(str(r.output_shape))}</td>"
                f"<td>{_num(r.grad_norm)}</td><td><code>{e(_one_line(r.vjp))}</code></td><td>{ins}</td>"
                f"<td>{'<br>'.join(e(n) for n in r.broadcast_notes)}</td></tr>"
            )
        leaves = "".join(
            f"<tr><td><code>{e(lf.name)}</code></td><td>{e(str(lf.shape))}</td><td>{_num(lf.grad_norm)}</td></tr>"
            for lf in self.leaves
        )
        return (
            f"<p>backward from an output of shape {e(str(self.root_shape))}: {len(self.rows)} nodes</p>"
            f"<table>{head}{''.join(body)}</table>"
            f"<p>leaf gradients</p><table><tr><th>leaf</th><th>shape</th><th>|grad|</th></tr>{leaves}</table>"
        )


def _num(x):
    return "-" if x is None else f"{x:.4g}"


def _one_line(text):
    return " ".join(text.split())


def _norm(t):

    arr = t._array if isinstance(t, Tensor) else t  # a user's VJP may return a plain ndarray
    return float(np.sqrt(np.sum(np.abs(np.asarray(arr, dtype=np.float64)) ** 2)))


def formulas(node):
    """(forward, vjp) formulas from the docstring of the node's op: the text before and after 'VJP:'."""
    doc = type(node).__doc__ or ""
    if "VJP:" not in doc:
        text = _one_line(doc) or "(no docstring)"
        return text, "(the op's docstring states no 'VJP:' formula)"
    before, _, after = doc.partition("VJP:")
    return before.strip().rstrip(";").strip(), after.strip()


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


def tensor_names(names=None, depth=2):
    """id(tensor) -> name, from `names` (a mapping or (name, tensor) pairs) or else the caller's variables.

    Learners call `explain(loss)` right where they built the graph, so the variables in scope there
    (`w_query`, `scores`, ...) are the names they know the tensors by.
    """

    if names is not None:
        pairs = names.items() if hasattr(names, "items") else names
    else:
        frame = sys._getframe(depth)
        try:
            pairs = list(frame.f_locals.items())
        finally:
            del frame  # a frame held in a local would keep every tensor of the caller alive
    label = {}
    for name, t in pairs:
        if isinstance(t, Tensor) and not name.startswith("_"):
            label.setdefault(id(t), name)
    return label


def explain(output, gradient=None, names=None):
    """Run backward from `output` without touching any `.grad`, and report every node it visits.

    `gradient`: as for `.backward()` (needed when `output` is not a scalar).
    `names`: optional mapping name -> tensor (e.g. `dict(model.named_parameters())`) to label
    leaves and intermediate results; by default the caller's local variables are used.
    """

    if not isinstance(output, Tensor):
        raise TypeError(f"explain: expected a Tensor, got {type(output).__name__}")
    if not output.requires_grad:
        raise RuntimeError("explain: the output does not require grad, so there is no backward pass to explain")
    label = tensor_names(names)
    visited, leaves = [], {}

    def visit(node, g, grads):  # called before the node's inputs are released
        visited.append((node, _norm(g), tuple(g.shape), [
            (i, child, node.inputs[i], None if grads[i] is None else _norm(grads[i])) for i, child, _, _ in node.edges
        ]))
        for _, child, _, _ in node.edges:
            if isinstance(child, Tensor):
                leaves.setdefault(id(child), child)

    if output.grad_fn is None:
        leaves[id(output)] = output
    captured = run_backward(root_gradients([output], [gradient]), retain_graph=True, create_graph=False, capture=[], visit=visit)
    step_of = {node: k + 1 for k, (node, *_rest) in enumerate(visited)}
    # The tensor each node produced: `output` for the root, else the input of the node that used it
    # (a node keeps only a weak reference to its output).
    produced = {output.grad_fn: output}
    for _node, _g, _shape, edges in visited:
        produced.update((child, t) for _, child, t, _ in edges if not isinstance(child, Tensor))
    rows = []
    for k, (node, g_norm, out_shape, edges) in enumerate(visited):
        fwd, vjp = formulas(node)
        ins = []
        for i, child, t, gn in edges:
            shape = tuple(t.shape)
            if isinstance(child, Tensor):
                source = f"leaf '{label[id(t)]}'" if id(t) in label else "leaf (unnamed)"
            else:
                source = f"#{step_of[child]} {child.name()}" if child in step_of else child.name()
                if id(t) in label:
                    source += f" '{label[id(t)]}'"
            ins.append(InputInfo(i, shape, source, gn, _broadcast_of(node, shape, out_shape) if gn is not None else ()))
        out_name = label.get(id(produced[node]), "") if node in produced else ""
        rows.append(Step(k + 1, node.name(), out_shape, out_name, g_norm, fwd, vjp, ins))
    leaf_rows = []
    for key, t in leaves.items():
        g = captured.get(key)
        if g is None:
            continue
        leaf_rows.append(LeafGrad(label.get(key, "(unnamed)"), tuple(t.shape), _norm(g), t,
                                  np.array(g._array, copy=True)))
    return Explanation(rows, leaf_rows, tuple(output.shape))
